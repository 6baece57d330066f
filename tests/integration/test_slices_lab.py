# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A run split over two controllers: two concurrent ansible-playbook processes, one per half of an 8-host lab.

Both share one run id and one history (as AWX job slices of one workflow job
would, or operators running ``--limit`` halves). The ring crosses the halves
(h4-h5 and h8-h1), so those pairs need both slices at once; the slices meet
in the history's ``slices`` directory, plan the same ring, run their own
hosts' sides and publish their own share. ``playbooks/report.yml`` then
renders the whole run from the shared history. A host of the second half is
slowed, and both its links are named however the slices split them.
The lab's perftest is the EMULATOR under tests/lab/emulators (real TCP
between the lab hosts); ansible-playbook, SSH and the meeting files are real.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json
import os
import threading
import time

import pytest

from lab_checks import LAB_MIN_FRACTION, assert_nothing_left, history_env, read_history, slow_rate

pytestmark = [pytest.mark.lab, pytest.mark.slow]

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(scope="module")
def lab8(lab_factory):
    return lab_factory("slice8", hosts=8, rails=1)


def run_slices(lab, playbook, halves, extra_vars, env):
    """Both slices at once; [(limit, CompletedProcess)] in the order of halves."""
    results = [None] * len(halves)

    def one(num, limit):
        results[num] = lab.ansible_playbook(playbook, extra_vars=extra_vars, limit=limit, env=env, timeout=1200)
    threads = [threading.Thread(target=one, args=(num, half)) for num, half in enumerate(halves)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return list(zip(halves, results))


def ring(hosts):
    return sorted(tuple(sorted((hosts[i], hosts[(i + 1) % len(hosts)]))) for i in range(len(hosts)))


def test_two_slices_share_one_run_and_one_report(lab8, tmp_path):
    hosts = lab8.hosts
    halves = [hosts[:4], hosts[4:]]
    slow = hosts[5]
    run_id = "slices-%d" % os.getpid()
    history = tmp_path / "history"
    env = history_env(history)
    lab8.heal()
    lab8.slow(slow, rate=slow_rate(lab8))
    try:
        results = run_slices(lab8, "playbooks/rdma.yml", halves, {
            "commcheck_slices": 2, "commcheck_run_id": run_id, "commcheck_slice_wait": 900,
            "commcheck_rdma_pattern": "ring", "commcheck_rdma_metrics": ["bw"], "commcheck_rdma_duration": 2,
            "commcheck_min_fraction": LAB_MIN_FRACTION, "commcheck_rdma_gpudirect": False}, env)
    finally:
        lab8.heal()
    for half, proc in results:
        assert proc.returncode == 0, (half, proc.stdout[-4000:] + proc.stderr[-3000:])
        # every slice judged the whole ring: 8 pairs, the slowed host's two links bad
        assert "RDMA fail: 8 results" in proc.stdout, proc.stdout[-3000:]
        assert "bad nodes ['%s']" % slow in proc.stdout or "bad links" in proc.stdout

    lines = read_history(history)
    assert {r["run_id"] for r in lines} == {run_id}
    bw = [r for r in lines if r["kind"] == "rdma_bw"]
    # each pair once in the shared history, crossing pairs included, published by the slice of its server
    assert sorted(tuple(sorted((r["host"], r["peer"]))) for r in bw) == ring(hosts)
    for rec in bw:
        owner = 0 if rec["host"] in halves[0] else 1
        assert rec["host"] in halves[owner]
        assert rec["verdict"] in ("pass", "warn", "fail", "flaky")
        if slow in (rec["host"], rec["peer"]):
            assert rec["verdict"] in ("fail", "flaky") and rec["metrics"]["bw_gbps"] < 0.5 * lab8.rate_gbps, rec
    crossing = [r for r in bw if (r["host"] in halves[0]) != (r["peer"] in halves[0])]
    assert len(crossing) == 2 and all(r["metrics"]["bw_gbps"] > 0 for r in crossing), crossing
    named = [r for r in lines if r["kind"] == "finding" and slow in (r["host"], r.get("peer"))
             and r["verdict"] in ("fail", "flaky")]
    assert named, [(r["kind"], r["host"], r["params"].get("finding")) for r in lines if r["kind"] == "finding"]
    assert len([r for r in lines if r["kind"] == "summary"]) == 2
    # the slices met in the history's slices directory: one post per slice at each point
    posts = os.path.join(str(history), "slices", run_id)
    for step in ("rdma-perf-rails", "rdma-perf-sides", "rdma-perf-retests"):
        assert len(os.listdir(os.path.join(posts, step))) == 2, step
    assert_nothing_left(lab8)

    # one report of the whole run, from the shared history
    proc = lab8.ansible_playbook(os.path.join(REPO, "playbooks", "report.yml"),
                                 extra_vars={"commcheck_report_from_history": run_id,
                                             "commcheck_history_dir": str(history),
                                             "commcheck_report_dir": str(tmp_path / "reports"),
                                             "commcheck_report_publish_regressions": False})
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    with open(str(tmp_path / "reports" / run_id / "results.json")) as handle:
        report = json.load(handle)
    pairs = [r for r in report["records"] if r["kind"] == "rdma_bw"]
    assert sorted(tuple(sorted((r["host"], r["peer"]))) for r in pairs) == ring(hosts)
    assert report["summary"]["verdict"] == "fail"


def test_a_slice_that_never_comes_fails_the_other_with_a_reason(lab8, tmp_path):
    """Told there are two slices, one controller alone waits commcheck_slice_wait, then fails saying why."""
    proc = lab8.ansible_playbook("playbooks/rdma.yml", limit=lab8.hosts[:4], env=history_env(tmp_path / "history"),
                                 extra_vars={"commcheck_slices": 2, "commcheck_run_id": "alone-%d" % os.getpid(),
                                             "commcheck_slice_wait": 3, "commcheck_rdma_metrics": ["bw"],
                                             "commcheck_rdma_duration": 1, "commcheck_rdma_gpudirect": False})
    assert proc.returncode != 0
    assert "only 1 of 2 slices reached step rdma-perf-rails" in proc.stdout, proc.stdout[-3000:]
    assert_nothing_left(lab8)


def test_a_split_run_without_a_shared_run_id_is_refused_before_anything_runs(lab8, tmp_path):
    proc = lab8.ansible_playbook("playbooks/rdma.yml", limit=lab8.hosts[:4], env=history_env(tmp_path / "history"),
                                 extra_vars={"commcheck_slices": 2, "commcheck_rdma_metrics": ["bw"],
                                             "commcheck_rdma_gpudirect": False})
    assert proc.returncode != 0
    assert "needs one run id for all of them" in proc.stdout, proc.stdout[-3000:]
    assert not (tmp_path / "history" / "slices").exists()


def test_the_one_click_play_in_two_slices_reports_the_whole_run_in_each(lab8, tmp_path):
    """The one-click play (discovery, RDMA and TCP over a ring) in two slices; each slice's report covers all."""
    import oneclick_helpers as oc  # pylint: disable=import-outside-toplevel
    hosts = lab8.hosts
    run_id = "oneclick-slices-%d" % os.getpid()
    history = tmp_path / "history"
    extra = {"commcheck_slices": 2, "commcheck_run_id": run_id, "commcheck_checks": ["discover", "rdma", "tcp"],
             "commcheck_rdma_metrics": ["bw"], "commcheck_rdma_gpudirect": False}
    lab8.heal()
    began = time.monotonic()
    started = [oc.start_oneclick(lab8, tmp_path, extra, limit=",".join(half), name="slice%d" % num, history=history)
               for num, half in enumerate((hosts[:4], hosts[4:]))]
    runs = [oc.finish(proc, hist, report, began, timeout=1200) for proc, hist, report in started]
    for run in runs:
        assert run.rc == 0, run.tail()
        with open(os.path.join(run.report_dir, run_id, "results.json")) as handle:
            results = json.load(handle)
        for kind in ("rdma_bw", "tcp_bw"):
            pairs = [r for r in results["records"] if r["kind"] == kind]
            assert sorted(tuple(sorted((r["host"], r["peer"]))) for r in pairs) == ring(hosts), kind
        assert results["run_id"] == run_id
    lines = read_history(history)
    assert {r["run_id"] for r in lines} == {run_id}
    assert len([r for r in lines if r["kind"] == "tcp_bw"]) == len(hosts)
    assert not oc.wait_no_test_processes(lab8, timeout=10)
