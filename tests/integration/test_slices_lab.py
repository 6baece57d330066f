# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A run split over two controllers: two concurrent ansible-playbook processes, one per half of a 4-host lab.

Both share one run id and one history (as AWX job slices of one workflow job
would, or operators running ``--limit`` halves). The ring crosses the halves
(h2-h3 and h4-h1), so those pairs need both slices at once; the slices meet
in the history's ``slices`` directory, plan the same ring, run their own
hosts' sides and publish their own share.

Fast tier: one scenario (``two_slices``) that the first two tests read: the
one-click play (discovery, RDMA and TCP over a ring) in two slices, with a
host of the second half slowed; both its links are named however the slices
split them, each slice's report covers the whole run, and
``playbooks/report.yml`` then renders the whole run from the shared history.
Full tier (``pytest.mark.full``): a slice that never comes, a split run
without a shared run id, and the collective check in two slices: one mpirun
over every host of both, launched by the first slice while every host holds
the CPU governor, the same records in both slices.

The lab's perftest and nccl-tests are the EMULATORS under tests/lab/emulators
(real TCP between the lab hosts); ansible-playbook, SSH, iperf3, Open MPI's
mpirun, the governor files' switching and the meeting files are real.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json
import os
import shutil
import time

import pytest

import oneclick_helpers as oc
from test_collective_governor_lab import OWN, collective_vars, seen_by_ranks, seen_dir
from test_oneclick_lab import task_results
from lab_checks import HEALTHY_VERDICTS, MEASURED_VERDICTS, assert_nothing_left, history_env, read_history, \
    slow_rate

pytestmark = [pytest.mark.lab, pytest.mark.slow]

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(scope="module")
def lab(lab_factory):
    return lab_factory("slice4", hosts=4, rails=1)


def ring(hosts):
    return sorted(tuple(sorted((hosts[i], hosts[(i + 1) % len(hosts)]))) for i in range(len(hosts)))


class Slices(object):
    def __init__(self, lab, run_id, halves, slow, history, runs, report):
        self.lab, self.run_id, self.halves, self.slow = lab, run_id, halves, slow
        self.history, self.runs, self.report = history, runs, report


@pytest.fixture(scope="module")
def two_slices(lab, tmp_path_factory):
    """The one-click play in two slices at once, a host of the second half slowed; then the report of the whole
    run from the shared history."""
    tmp = tmp_path_factory.mktemp("slices")
    hosts = lab.hosts
    halves = [hosts[:2], hosts[2:]]
    slow = hosts[3]
    run_id = "oneclick-slices-%d" % os.getpid()
    history = tmp / "history"
    extra = {"commcheck_slices": 2, "commcheck_run_id": run_id, "commcheck_slice_wait": 900,
             "commcheck_checks": ["discover", "rdma", "tcp"], "commcheck_rdma_metrics": ["bw"],
             "commcheck_rdma_gpudirect": False}
    lab.heal()
    lab.slow(slow, rate=slow_rate(lab))
    try:
        began = time.monotonic()
        started = [oc.start_oneclick(lab, tmp, extra, limit=",".join(half), name="slice%d" % num, history=history)
                   for num, half in enumerate(halves)]
        runs = [oc.finish(proc, hist, report, began, timeout=1200) for proc, hist, report in started]
    finally:
        lab.heal()
    assert_nothing_left(lab)
    # one report of the whole run, from the shared history
    report = lab.ansible_playbook(os.path.join(REPO, "playbooks", "report.yml"),
                                  extra_vars={"commcheck_report_from_history": run_id,
                                              "commcheck_history_dir": str(history),
                                              "commcheck_report_dir": str(tmp / "reports"),
                                              "commcheck_report_publish_regressions": False})
    return Slices(lab, run_id, halves, slow, history, runs, (report, tmp / "reports" / run_id / "results.json"))


def test_two_slices_share_one_run_and_one_report(two_slices):
    lab, hosts, halves, slow, run_id = two_slices.lab, two_slices.lab.hosts, two_slices.halves, two_slices.slow, \
        two_slices.run_id
    for half, run in zip(halves, two_slices.runs):
        assert run.rc == 0, (half, run.tail())
        # every slice judged the whole ring: one pair per host, the slowed host's two links bad
        assert "RDMA fail: %d results" % len(hosts) in run.stdout, run.stdout[-3000:]
        assert "bad nodes ['%s']" % slow in run.stdout or "bad links" in run.stdout

    lines = read_history(two_slices.history)
    assert {r["run_id"] for r in lines} == {run_id}
    bw = [r for r in lines if r["kind"] == "rdma_bw"]
    # each pair once in the shared history, crossing pairs included, published by the slice of its server
    assert sorted(tuple(sorted((r["host"], r["peer"]))) for r in bw) == ring(hosts)
    for rec in bw:
        owner = 0 if rec["host"] in halves[0] else 1
        assert rec["host"] in halves[owner]
        assert rec["verdict"] in MEASURED_VERDICTS
        if slow in (rec["host"], rec["peer"]):
            assert rec["verdict"] in ("fail", "flaky") and rec["metrics"]["bw_gbps"] < 0.5 * lab.rate_gbps, rec
        else:
            assert rec["verdict"] in HEALTHY_VERDICTS, rec
    crossing = [r for r in bw if (r["host"] in halves[0]) != (r["peer"] in halves[0])]
    assert len(crossing) == 2 and all(r["metrics"]["bw_gbps"] > 0 for r in crossing), crossing
    named = [r for r in lines if r["kind"] == "finding" and slow in (r["host"], r.get("peer"))
             and r["verdict"] in ("fail", "flaky")]
    assert named, [(r["kind"], r["host"], r["params"].get("finding")) for r in lines if r["kind"] == "finding"]
    assert len([r for r in lines if r["kind"] == "summary"]) == 2
    # the slices met in the history's slices directory: one post per slice at each point
    posts = os.path.join(str(two_slices.history), "slices", run_id)
    for step in ("rdma-perf-rails", "rdma-perf-sides", "rdma-perf-retests"):
        assert len(os.listdir(os.path.join(posts, step))) == 2, step

    # one report of the whole run, from the shared history
    proc, results = two_slices.report
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    with open(str(results)) as handle:
        report = json.load(handle)
    pairs = [r for r in report["records"] if r["kind"] == "rdma_bw"]
    assert sorted(tuple(sorted((r["host"], r["peer"]))) for r in pairs) == ring(hosts)
    assert report["summary"]["verdict"] == "fail"


def test_the_one_click_play_in_two_slices_reports_the_whole_run_in_each(two_slices):
    """Each slice's own report covers every pair of the run, its own and the other slice's."""
    hosts, run_id = two_slices.lab.hosts, two_slices.run_id
    for run in two_slices.runs:
        assert run.rc == 0, run.tail()
        with open(os.path.join(run.report_dir, run_id, "results.json")) as handle:
            results = json.load(handle)
        for kind in ("rdma_bw", "tcp_bw"):
            pairs = [r for r in results["records"] if r["kind"] == kind]
            assert sorted(tuple(sorted((r["host"], r["peer"]))) for r in pairs) == ring(hosts), kind
        assert results["run_id"] == run_id
    lines = read_history(two_slices.history)
    assert {r["run_id"] for r in lines} == {run_id}
    assert len([r for r in lines if r["kind"] == "tcp_bw"]) == len(hosts)
    assert not oc.wait_no_test_processes(two_slices.lab, timeout=10)


@pytest.mark.full
def test_a_slice_that_never_comes_fails_the_other_with_a_reason(lab, tmp_path):
    """Told there are two slices, one controller alone waits commcheck_slice_wait, then fails saying why."""
    proc = lab.ansible_playbook("playbooks/rdma.yml", limit=lab.hosts[:2], env=history_env(tmp_path / "history"),
                                extra_vars={"commcheck_slices": 2, "commcheck_run_id": "alone-%d" % os.getpid(),
                                            "commcheck_slice_wait": 3, "commcheck_rdma_metrics": ["bw"],
                                            "commcheck_rdma_duration": 1, "commcheck_rdma_gpudirect": False})
    assert proc.returncode != 0
    assert "only 1 of 2 slices reached step rdma-perf-rails" in proc.stdout, proc.stdout[-3000:]
    assert_nothing_left(lab)


@pytest.mark.full
def test_a_split_run_without_a_shared_run_id_is_refused_before_anything_runs(lab, tmp_path):
    proc = lab.ansible_playbook("playbooks/rdma.yml", limit=lab.hosts[:2], env=history_env(tmp_path / "history"),
                                extra_vars={"commcheck_slices": 2, "commcheck_rdma_metrics": ["bw"],
                                            "commcheck_rdma_gpudirect": False})
    assert proc.returncode != 0
    assert "needs one run id for all of them" in proc.stdout, proc.stdout[-3000:]
    assert not (tmp_path / "history" / "slices").exists()


RUNS_TASK = "Run the collectives of the pool or of each pair from its first host"


@pytest.mark.full
@pytest.mark.skipif(oc.mpi_missing() is not None, reason=oc.mpi_missing() or "")
def test_two_slices_run_one_collective_over_every_host(lab, tmp_path):
    """The collective check alone in two slices: after they meet, the first slice launches one mpirun over the
    hosts of both (the other holds its hosts' governors and waits for its results); both build the same records,
    each publishes its share, so the history holds the pool run once."""
    hosts, halves = lab.hosts, [lab.hosts[:2], lab.hosts[2:]]
    own = dict(zip(hosts, OWN.values()))
    for host in hosts:
        oc.set_governors(lab, own[host], hosts=[host])
        os.makedirs(seen_dir(lab, host), exist_ok=True)
    run_id = "collective-slices-%d" % os.getpid()
    history = tmp_path / "history"
    extra = dict(collective_vars(lab), commcheck_slices=2, commcheck_run_id=run_id, commcheck_slice_wait=900)
    try:
        began = time.monotonic()
        started = [oc.start_oneclick(lab, tmp_path, extra, limit=",".join(half), name="coll%d" % num,
                                     history=history) for num, half in enumerate(halves)]
        runs = [oc.finish(proc, hist, report, began, timeout=1200) for proc, hist, report in started]
        seen = seen_by_ranks(lab)
        after = dict((host, oc.governors(lab, host)) for host in hosts)
    finally:
        for host in hosts:
            shutil.rmtree(seen_dir(lab, host), ignore_errors=True)
        oc.set_governors(lab, oc.GOVERNORS)
    for run in runs:
        assert run.rc == 0, run.tail()
    # one slice ran the pool's mpirun, the other skipped the task
    words = sorted(sorted(task_results(run.output, RUNS_TASK)) for run in runs)
    assert words in ([["changed"], ["skipping"]], [["ok"], ["skipping"]]), words
    # its ranks ran on every host of both slices, each at performance; each host back at its own after
    assert sorted(seen) == sorted(hosts), seen
    assert all(governors == ["performance"] * 4 for notes in seen.values() for governors in notes), seen
    assert after == own
    # the pool run is in the history once, with every host and their governor state
    pool = [r for r in read_history(history) if r["kind"] == "collective"]
    assert len(pool) == 1 and pool[0]["params"]["hosts"] == hosts and pool[0]["verdict"] == "pass", pool
    assert pool[0]["params"]["cpu_governor"] == {"governor": "performance", "held": hosts, "unmanaged": [],
                                                 "not_held": []}
    # both slices' reports (of the whole run, from the shared history) hold the same collective records
    reports = []
    for run in runs:
        with open(os.path.join(run.report_dir, run_id, "results.json")) as handle:
            reports.append([(r["host"], r["params"]["hosts"], r["verdict"], r["metrics"].get("busbw_gbs"))
                            for r in json.load(handle)["records"] if r["kind"] == "collective"])
    assert reports[0] == reports[1] and len(reports[0]) == 1, reports
    posts = os.path.join(str(history), "slices", run_id)
    for step in ("collective-hosts", "collective-held", "collective-results"):
        assert len(os.listdir(os.path.join(posts, step))) == 2, step
    assert not oc.wait_no_test_processes(lab, timeout=120)
