# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A host slowed in a 4-host lab with a history behind it, checked through ansible_runner.run() by the
service of docs/examples/commcheck_service.py; and the snippet of docs/ansible-runner.md run as written.

Full tier (the whole file, for ``make test``'s 15 minutes: ansible_runner.run() itself is in the fast tier's
test_history_callback.py): one scenario (``slowed_after_healthy_runs``), read by the tests below:

1. one healthy run of the one-click play (discovery, RDMA bandwidth over a ring, the report) with the
   history callback on, as run ``week-3``; two copies of its records and summary are written into the
   history before it as runs ``week-1`` and ``week-2`` (the report's baseline needs 3 earlier passing
   runs, commcheck_baseline_min_runs: writing records is what the history would hold after three such
   runs, without running the check three times);
2. a host shaped to a fiftieth of the link rate, and the one-click play (discovery, RDMA, the NCCL
   collective through real mpirun, the report) run by the service through ansible-runner as run
   ``svc-lab-1``: its RDMA check names the host, the collective's pool run fails and bisection names the
   same host, and the report shows the host's two ring links as regressions against the three runs;
3. the report of the latest run rendered again from the history files alone.

The lab's perftest and nccl-tests are EMULATORS (tests/lab/emulators: real TCP between the lab hosts, MPI
through real Open MPI); ansible-runner, ansible-playbook and SSH are real.

And the doc snippet against a 2-host lab.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import datetime
import json
import os
import re
import subprocess
import sys

import pytest

from ansible_collections.clusterops.commcheck.plugins.module_utils.records import history
from lab_checks import LAB_MIN_FRACTION, assert_nothing_left, history_env, read_history, slow_rate

pytestmark = pytest.mark.full

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VENV_BIN = os.path.dirname(sys.executable)
DOC = os.path.join(REPO, "docs", "ansible-runner.md")
EXAMPLES = os.path.join(REPO, "docs", "examples")
COLLECTIONS = os.path.join(REPO, ".build", "collections")
ONE_CLICK = "playbooks/commcheck.yml"
HEALTHY = ["week-1", "week-2", "week-3"]
SLOWED = "svc-lab-1"
CHECK_VARS = {
    "commcheck_pattern": "ring", "commcheck_rdma_metrics": ["bw"], "commcheck_rdma_duration": 1,
    "commcheck_cpu_governor": "",
    # the run's own pass line sits far below the lab's healthy links (lab_checks.LAB_MIN_FRACTION); the
    # comparison with the history is what the regressions come from
    "commcheck_min_fraction": LAB_MIN_FRACTION,
    # one 1 MiB size keeps a collective run at a few seconds, also with the host at a fiftieth of the rate
    "commcheck_collective_min_bytes": "1M", "commcheck_collective_max_bytes": "1M",
}


class Scenario(object):
    def __init__(self, lab, slow, tmp, result, runner_stdout):
        self.lab, self.slow, self.tmp = lab, slow, tmp
        self.result = result                  # what the service returned for the slowed run
        self.runner_stdout = runner_stdout    # that run's output, as ansible-runner kept it

    def results(self, run_id, reports="reports"):
        with open(str(self.tmp / reports / run_id / "results.json")) as handle:
            return json.load(handle)

    def records(self, run_id):
        return [r for r in read_history(self.tmp / "history") if r["run_id"] == run_id and r["kind"] != "summary"]


def copy_run(history_dir, run_id, to_run_id, hours_before):
    """Write the records and summary of run_id into the history again as the run to_run_id, that many hours
    before it."""
    lines = [r for r in read_history(history_dir) if r["run_id"] == run_id]
    when = history.parse_time(min(r["time"] for r in lines)) - datetime.timedelta(hours=hours_before)
    history.append_records(str(history_dir), lines, to_run_id, when=when, fsync=False)


@pytest.fixture(scope="module")
def slowed_after_healthy_runs(lab_factory, tmp_path_factory):
    pytest.importorskip("ansible_runner")
    if EXAMPLES not in sys.path:
        sys.path.insert(0, EXAMPLES)
    # docs/examples: the service the docs give
    import commcheck_service  # pylint: disable=import-outside-toplevel
    lab = lab_factory("hrun", hosts=4, rails=1)
    lab.heal()
    tmp = tmp_path_factory.mktemp("runner")
    extra = dict(CHECK_VARS, commcheck_report_dir=str(tmp / "reports"))
    # 1. the healthy run, and two copies of it before it
    proc = lab.ansible_playbook(ONE_CLICK, extra_vars=dict(extra, commcheck_checks=["discover", "rdma"]),
                                env=history_env(tmp / "history", {"COMMCHECK_RUN_ID": HEALTHY[-1]}))
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    for num, run_id in enumerate(HEALTHY[:-1]):
        copy_run(tmp / "history", HEALTHY[-1], run_id, len(HEALTHY) - 1 - num)
    # 2. the slowed host, through the service
    slow = lab.hosts[2]
    lab.slow(slow, rate=slow_rate(lab, divisor=50, floor_mbit=10))
    old_path = os.environ.get("PATH", "")
    os.environ["PATH"] = VENV_BIN + os.pathsep + old_path   # ansible-runner looks ansible-playbook up on PATH
    try:
        result = commcheck_service.run_commcheck(
            inventory=lab.inventory, history_dir=str(tmp / "history"), private_data_dir=str(tmp / "runner"),
            run_id=SLOWED, envvars={"ANSIBLE_CONFIG": lab.ansible_cfg, "COMMCHECK_HISTORY_FSYNC": "false"},
            extravars=dict(extra, commcheck_checks=["discover", "rdma", "collective"]))
    finally:
        os.environ["PATH"] = old_path
        lab.heal()
    with open(str(tmp / "runner" / "artifacts" / SLOWED / "stdout")) as handle:
        runner_stdout = handle.read()
    assert_nothing_left(lab, wait=20)
    return Scenario(lab, slow, tmp, result, runner_stdout)


def ring_links(records):
    return sorted(set(tuple(sorted((r["host"], r["peer"]))) for r in records if r["peer"]))


def test_service_runs_the_check_with_ansible_runner_against_the_lab(slowed_after_healthy_runs):
    scenario = slowed_after_healthy_runs
    result, lab, bad = scenario.result, scenario.lab, scenario.slow
    assert result["status"] == "successful", result
    # Ansible's stats, as ansible-runner reports them (the one-click play runs on the hosts only)
    assert sorted(result["stats"]["ok"]) == sorted(lab.hosts)
    assert not result["stats"]["failures"] and not result["stats"]["dark"]
    # the report role's set_stats summary
    summary = result["summary"]
    assert summary["run_id"] == SLOWED
    assert summary["bad_hosts"] == [bad]
    assert summary["counts"]["fail"] >= 2
    assert os.path.isfile(summary["files"]["html"])
    assert summary["files"]["html"].startswith(str(scenario.tmp / "reports" / SLOWED))
    # the history, read back through the collection's API
    # every check's record, and the retests' re-measurements the run's counts leave out (evidence)
    assert result["records"] == summary["total"] + summary["retests"]
    assert result["history_summary"]["run_id"] == SLOWED
    assert result["history_summary"]["stats"]["commcheck_summary"]["bad_hosts"] == [bad]
    assert result["history_problems"] == []
    assert {bad} <= set(f["host"] for f in result["failing"]) | set(f["peer"] for f in result["failing"])
    # the regressions the run published, read back by the service: the slowed host's links
    assert ring_links(result["regressions"]) == ring_links(
        [r for r in scenario.records(SLOWED) if r["kind"] == "rdma_bw" and bad in (r["host"], r["peer"])])


def test_slow_host_is_named_by_bisection(slowed_after_healthy_runs):
    scenario = slowed_after_healthy_runs
    slow = scenario.slow
    records = scenario.records(SLOWED)
    runs = [r for r in records if r["kind"] == "collective"]
    findings = [r for r in records if r["kind"] == "finding" and r["params"].get("check") == "collective"]
    assert runs[0]["params"]["stage"] == "pool" and runs[0]["verdict"] == "fail", runs[0]
    assert "below" in runs[0]["cause"]
    assert [f["host"] for f in findings] == [slow], (findings, [(r["params"]["hosts"], r["verdict"]) for r in runs])
    for run in runs:
        assert (run["verdict"] == "fail") == (slow in run["params"]["hosts"]), run
    sys.stderr.write("\n4-host bisection: %d collective runs (pool included): %s\n" % (
        len(runs), [(r["params"]["hosts"], r["verdict"], r["metrics"]["busbw_gbs"]) for r in runs]))
    assert len(runs) <= 6


def test_slowed_host_shows_as_regressions_from_history(slowed_after_healthy_runs):
    """Issue 7: healthy lab runs, then a run with one slowed host, show that host's links as regressions in
    the last report, from history alone."""
    scenario = slowed_after_healthy_runs
    slow, tmp = scenario.slow, scenario.tmp
    # the healthy run: too few earlier runs to compare with (two), so nothing regresses
    healthy = scenario.results(HEALTHY[-1])
    assert healthy["regressions"] == [], healthy["regressions"]
    assert healthy["summary"]["counts"]["pass"] >= 4
    # the slowed run: its two ring links regress against the 3 healthy runs
    second = scenario.results(SLOWED)
    links = ring_links(second["regressions"])
    assert links and all(slow in link for link in links), links
    assert len(links) == 2   # a ring: the slow host has two neighbours
    assert second["summary"]["regressed_hosts"] == [slow]
    # counted per check: as many regressions as regressed checks, whatever their metrics
    assert second["summary"]["regressions"] == len(second["regressions"])
    assert len(set(r["check"] for r in second["regressions"])) == len(second["regressions"])
    for reg in second["regressions"]:
        assert reg["baseline_runs"] == HEALTHY and reg["metric"] == "bw_gbps" and reg["change"] < -0.2
    assert "regressed: %s" % slow in scenario.runner_stdout   # the summary table at the end of the play
    html = (tmp / "reports" / SLOWED / "report.html").read_text()
    assert html.count('stroke="#000000" stroke-width="3"') == 2   # regressed cells marked in the heat map
    md = (tmp / "reports" / SLOWED / "report.md").read_text()
    assert "Regressed hosts: %s" % slow in md

    # the latest run's report again, rendered from the history files only (no records passed)
    proc = scenario.lab.ansible_playbook(os.path.join(REPO, "playbooks", "report.yml"),
                                         extra_vars={"commcheck_report_from_history": "last",
                                                     "commcheck_history_dir": str(tmp / "history"),
                                                     "commcheck_report_dir": str(tmp / "from-history"),
                                                     "commcheck_report_publish_regressions": False})
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    again = scenario.results(SLOWED, reports="from-history")
    assert ring_links(again["regressions"]) == links
    assert again["summary"]["regressed_hosts"] == [slow]
    # the history holds every run's records and summary, and the slowed run's regression records
    lines = read_history(tmp / "history")
    assert [r["run_id"] for r in sorted(lines, key=lambda r: r["time"]) if r["kind"] == "summary"] == \
        HEALTHY + [SLOWED]
    assert ring_links([r for r in lines if r["kind"] == "regression"]) == links


def doc_snippet():
    """The Python block under 'The essentials' in docs/ansible-runner.md, exactly as written."""
    with open(DOC) as handle:
        text = handle.read()
    section = text.split("## The essentials", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"^```python\n(.*?)^```$", section, re.S | re.M)
    assert len(blocks) == 1, "expected one python block under 'The essentials' in %s" % DOC
    return blocks[0]


def test_doc_snippet_is_found_whole():
    code = doc_snippet()
    compile(code, DOC, "exec")   # a syntax error in the doc fails here, before any lab
    assert "os.makedirs(private_data_dir" in code and "sys.path.insert" in code
    assert code.index("sys.path.insert") < code.index("from ansible_collections.clusterops.commcheck")


@pytest.mark.slow
@pytest.mark.full
def test_doc_snippet_runs_as_written_against_the_lab(lab_factory, tmp_path):
    pytest.importorskip("ansible_runner")
    lab = lab_factory("hdoc", hosts=2, rails=1)
    script = tmp_path / "snippet.py"
    script.write_text(doc_snippet())
    state = tmp_path / "state"                     # does not exist: the snippet creates what it needs
    env = dict((k, v) for k, v in os.environ.items()
               if k not in ("PYTHONPATH", "COMMCHECK_RUN_ID", "COMMCHECK_HISTORY_DIR", "JOB_ID", "AWX_JOB_ID"))
    env.update({
        "ANSIBLE_COLLECTIONS_PATH": COLLECTIONS,   # the snippet puts it on sys.path itself
        "COMMCHECK_INVENTORY": lab.inventory,
        "COMMCHECK_STATE_DIR": str(state),
        "ANSIBLE_CONFIG": lab.ansible_cfg,         # ansible-runner passes the service's environment on
        "PATH": VENV_BIN + os.pathsep + env.get("PATH", ""),
    })
    # a fresh interpreter in a directory without the collection: only the snippet's sys.path makes the import work
    proc = subprocess.run([sys.executable, "-I", str(script)], cwd=str(tmp_path), env=env, capture_output=True,
                          text=True, timeout=1500, check=False)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    out = json.loads(proc.stdout)
    assert out["status"] == "successful", out
    assert os.path.isdir(str(state / "runner" / "artifacts" / out["run_id"]))
    assert sorted(out["stats"]["ok"]) == sorted(lab.hosts)
    assert not out["stats"]["failures"] and not out["stats"]["dark"]
    # the report, the history's summary line and the reader agree on the run and its verdict
    assert out["verdict"] in ("pass", "warn", "fail")
    assert out["history"] == {"status": "complete", "verdict": out["verdict"]}
    assert out["records"] > 0
    assert os.path.isfile(out["report"]) and out["report"].startswith(str(state / "reports"))
