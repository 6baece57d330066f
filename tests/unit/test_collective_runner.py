# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The collective runner's bisection rounds against a fake transport: the runs of a round are in flight
together (proved with a barrier, not with timing), each with its own work files, in plan order."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os
import threading

import pytest

from ansible_collections.clusterops.commcheck.plugins.modules.collective import ARGUMENT_SPEC
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import collective_runner as cr
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import collective_spec
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands.runner import CommandError

CORPUS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures", "corpus")
FAST = os.path.join(CORPUS, "nccl_tests", "all_reduce_perf_2node_16gpu_h100_mpirun.txt")    # ~339 GB/s
SLOW = os.path.join(CORPUS, "nccl_tests", "all_reduce_perf_2pod_l40s_reducing_maxbytes.txt")  # ~8 GB/s
# Generous: only reached when the runs that should be in flight together are made one after another.
BARRIER_TIMEOUT_S = 120


def read(path):
    with open(path) as handle:
        return handle.read()


class FakeTransport(object):
    """Answers mpirun with a slow or a fast nccl-tests output by the hosts in -H; records what overlapped.

    ``together``: host sets whose runs must be in flight at the same time; each such run waits on a
    barrier of 2 before it answers, so serial runs break the barrier and the test fails.
    """

    name = "host"
    remote = False

    def __init__(self, slow_hosts, together=(), fail_hosts=()):
        self.slow_hosts = set(slow_hosts)
        self.together = [frozenset(s) for s in together]
        self.fail_hosts = set(fail_hosts)
        self.barrier = threading.Barrier(2, timeout=BARRIER_TIMEOUT_S)
        self.lock = threading.Lock()
        self.in_flight = set()
        self.seen_with = {}   # host set -> host sets in flight when it started or while it ran
        self.argvs = []

    def hosts_of(self, argv):
        return frozenset(item.split(":")[0] for item in argv[argv.index("-H") + 1].split(","))

    def run(self, argv, timeout, capture=None):  # pylint: disable=unused-argument
        hosts = self.hosts_of(argv)
        with self.lock:
            self.argvs.append(list(argv))
            self.seen_with[hosts] = set(self.in_flight)
            for other in self.in_flight:
                self.seen_with[other].add(hosts)
            self.in_flight.add(hosts)
        try:
            if hosts in self.together:
                self.barrier.wait()
            if hosts & self.fail_hosts:
                raise CommandError("cannot start mpirun")
            text = read(SLOW if hosts & self.slow_hosts else FAST)
            return {"cmd": argv, "rc": 0, "stdout": text, "stderr": "", "timed_out": False, "duration_s": 1.0}
        finally:
            with self.lock:
                self.in_flight.discard(hosts)

    def read_file(self, path, default=None):
        return default


def make_runner(transport, tmp_path, hosts=("n1", "n2", "n3", "n4"), **overrides):
    params = dict((key, spec.get("default")) for key, spec in ARGUMENT_SPEC.items())
    params.update(library="nccl", hosts=list(hosts), gpus_per_node=8, gpus_per_process=8, min_bytes="8",
                  max_bytes="8G", expected_busbw_gbs=300.0, bisect=True, binary_dir="/opt/nccl-tests/bin")
    params.update(overrides)
    spec = collective_spec.validate(params)
    runner = cr.CollectiveRunner(params, transport, spec)
    runner.workdir = str(tmp_path)
    runner.json_file = True    # every run names a JSON file: its name shows the run's round and index
    return runner


def pool_result(runner):
    result = collective_spec.initial_result(runner.spec, runner.params, "host")
    warnings = []
    cr.pool_run(runner, result, warnings.append)
    return result


def json_name(argv):
    return os.path.basename(argv[argv.index("-J") + 1])


def test_the_runs_of_a_round_are_in_flight_together(tmp_path):
    halves = [{"n1", "n2"}, {"n3", "n4"}]
    pairs = [{"n3", "n1"}, {"n4", "n2"}]
    transport = FakeTransport(["n3"], together=halves + pairs)
    result = pool_result(make_runner(transport, tmp_path))
    assert result["bad_nodes"] == ["n3"] and result["bisect"]["conclusion"] == "isolated"
    assert [(r["round"], r["hosts"], r["verdict"]) for r in result["runs"]] == [
        (1, ["n1", "n2", "n3", "n4"], "fail"),
        (2, ["n1", "n2"], "pass"), (2, ["n3", "n4"], "fail"),
        (3, ["n3", "n1"], "fail"), (3, ["n4", "n2"], "pass"),
        (4, ["n1", "n2", "n4"], "pass")]
    assert result["bisect"]["rounds"] == 4 and result["bisect"]["runs"] == 6
    assert "bisection names n3 (6 runs in 4 rounds)" in result["cause"]
    # The barrier let each run of rounds 2 and 3 through only with its partner run in flight.
    for first, second in (halves, pairs):
        assert frozenset(second) in transport.seen_with[frozenset(first)]
    # Runs of different rounds never overlap.
    assert frozenset(halves[0]) not in transport.seen_with[frozenset(pairs[0])]
    # Work files are named by round and index: no two runs share one.
    names = sorted(json_name(argv) for argv in transport.argvs)
    assert names == ["run-1-1.json", "run-2-1.json", "run-2-2.json", "run-3-1.json", "run-3-2.json",
                     "run-4-1.json"]
    assert [json_name(r["cmd"]) for r in result["runs"]] == ["run-1-1.json", "run-2-1.json", "run-2-2.json",
                                                             "run-3-1.json", "run-3-2.json", "run-4-1.json"]


def test_max_runs_counts_runs(tmp_path):
    transport = FakeTransport(["n3"])
    result = pool_result(make_runner(transport, tmp_path, bisect_max_runs=4))
    assert len(result["runs"]) == 3 and len(transport.argvs) == 3   # round 3 (two more runs) would pass 4
    assert result["bisect"]["conclusion"] == "max_runs" and result["bisect"]["rounds"] == 2
    assert result["bad_nodes"] == []


def test_flaky_pool_run_gets_the_flaky_verdict_and_both_runs_as_evidence(tmp_path):
    class OnceSlow(FakeTransport):
        def run(self, argv, timeout, capture=None):
            self.slow_hosts = {"n1"} if not self.argvs else set()
            return FakeTransport.run(self, argv, timeout, capture)

    transport = OnceSlow([])
    result = pool_result(make_runner(transport, tmp_path))
    assert [(r["round"], r["verdict"]) for r in result["runs"]] == [(1, "flaky"), (2, "pass"), (2, "pass"),
                                                                    (3, "pass")]
    assert result["verdict"] == "flaky" and result["bad_nodes"] == []
    assert result["cause"].startswith("failed once, passed on retest (bus bandwidth")
    pool = result["runs"][0]
    assert pool["cause"].startswith("failed once, passed on retest (bus bandwidth")
    assert pool["evidence"] == result["bisect"]["evidence"] + [" ".join(pool["cmd"])]
    assert [line.split(": ")[:3] for line in result["bisect"]["evidence"]] == [
        ["round 1", "n1,n2,n3,n4", "fail (8.14 GB/s)"], ["round 3", "n1,n2,n3,n4", "pass (338.82 GB/s)"]]
    assert pool["cmd"] == transport.argvs[0] and "all_reduce_perf" in pool["evidence"][-1]
    assert result["bisect"]["retest"] == "passed"


def test_an_error_in_one_run_of_a_round_is_raised_after_all_ended(tmp_path):
    transport = FakeTransport(["n3"], together=[{"n1", "n2"}, {"n3", "n4"}], fail_hosts=["n4"])
    runner = make_runner(transport, tmp_path)
    with pytest.raises(CommandError, match="cannot start mpirun"):
        cr.run_round(runner, [["n1", "n2"], ["n3", "n4"]], 2)
    assert not transport.in_flight and len(transport.argvs) == 2
