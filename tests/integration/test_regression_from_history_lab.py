# -*- coding: utf-8 -*-
"""Issue 7, done when: healthy lab runs, then a run with one slowed host, shows that host's links
as regressions in the last report, from history alone.

Five real ansible-playbook runs on a 4-host lab (about 150 s): three healthy runs of the RDMA check
(perftest emulator over real TCP between the lab hosts) plus the report, with the history callback on --
the report's default baseline needs 3 earlier passing runs (commcheck_baseline_min_runs, issue 14), so
the second and third healthy runs must not regress against one or two runs; then the same with one
host's link shaped by tc; then the report of the latest run rendered from the history files only.
"""
import json
import os

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PLAYBOOK = os.path.join(REPO, "tests", "integration", "playbooks", "rdma_report.yml")
CHECK_VARS = {"commcheck_rdma_pattern": "ring", "commcheck_rdma_metrics": ["bw"], "commcheck_rdma_duration": 2,
              # the comparison alone must name the slow host: no pass/fail threshold gets in the way
              "commcheck_min_fraction": 0.05}


def _env(tmp_path, run_id):
    return {"ANSIBLE_CALLBACKS_ENABLED": "clusterops.commcheck.commcheck_history",
            "COMMCHECK_HISTORY_DIR": str(tmp_path / "history"), "COMMCHECK_RUN_ID": run_id}


def _results(tmp_path, run_id):
    with open(str(tmp_path / "reports" / run_id / "results.json")) as handle:
        return json.load(handle)


def _links(regressions):
    return sorted(set(tuple(sorted((r["host"], r["peer"]))) for r in regressions if r["peer"]))


@pytest.mark.slow
def test_slowed_host_shows_as_regressions_from_history(lab_factory, tmp_path):
    if not os.path.exists(os.path.join(REPO, "playbooks", "rdma.yml")):
        pytest.fail("playbooks/rdma.yml (role rdma_perf) is missing: this test needs an RDMA check")
    lab = lab_factory("hreg", hosts=4, rails=1)
    hosts = sorted(lab.hosts)
    slow = hosts[2]
    report_dir = str(tmp_path / "reports")
    extra = dict(CHECK_VARS, commcheck_report_dir=report_dir)

    # 1. three healthy runs: too few earlier runs to compare with, so nothing regresses
    healthy = ["week-1", "week-2", "week-3"]
    for run_id in healthy:
        proc = lab.ansible_playbook(PLAYBOOK, extra_vars=extra, env=_env(tmp_path, run_id))
        assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
        results = _results(tmp_path, run_id)
        assert results["regressions"] == [], (run_id, results["regressions"])
        assert results["summary"]["counts"]["pass"] >= 4

    # 2. the same check with one host slowed: its two ring links regress against the 3 healthy runs
    lab.slow(slow, rate="200mbit")
    try:
        proc = lab.ansible_playbook(PLAYBOOK, extra_vars=extra, env=_env(tmp_path, "week-4"))
    finally:
        lab.heal()
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    second = _results(tmp_path, "week-4")
    links = _links(second["regressions"])
    assert links and all(slow in link for link in links), links
    assert len(links) == 2   # a ring: the slow host has two neighbours
    assert second["summary"]["regressed_hosts"] == [slow]
    # counted per check: as many regressions as regressed checks, whatever their metrics
    assert second["summary"]["regressions"] == len(second["regressions"])
    assert len(set(r["check"] for r in second["regressions"])) == len(second["regressions"])
    for reg in second["regressions"]:
        assert reg["baseline_runs"] == healthy and reg["metric"] == "bw_gbps" and reg["change"] < -0.2
    assert "regressed: %s" % slow in proc.stdout   # the summary table at the end of the play
    html = (tmp_path / "reports" / "week-4" / "report.html").read_text()
    assert html.count('stroke="#000000" stroke-width="3"') == 2   # regressed cells marked in the heat map
    md = (tmp_path / "reports" / "week-4" / "report.md").read_text()
    assert "Regressed hosts: %s" % slow in md

    # 3. the latest run's report again, rendered from the history files only (no records passed)
    proc = lab.ansible_playbook(os.path.join(REPO, "playbooks", "report.yml"),
                                extra_vars={"commcheck_report_from_history": "last",
                                            "commcheck_history_dir": str(tmp_path / "history"),
                                            "commcheck_report_dir": str(tmp_path / "from-history"),
                                            "commcheck_report_publish_regressions": False})
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    with open(str(tmp_path / "from-history" / "week-4" / "results.json")) as handle:
        again = json.load(handle)
    assert _links(again["regressions"]) == links
    assert again["summary"]["regressed_hosts"] == [slow]
    # the history holds every run's records and summary, and the slowed run's regression records
    lines = []
    for name in os.listdir(str(tmp_path / "history")):
        with open(os.path.join(str(tmp_path / "history"), name)) as handle:
            lines += [json.loads(line) for line in handle]
    assert [r["run_id"] for r in lines if r["kind"] == "summary"] == healthy + ["week-4"]
    assert sorted(tuple(sorted((r["host"], r["peer"]))) for r in lines if r["kind"] == "regression") == links
