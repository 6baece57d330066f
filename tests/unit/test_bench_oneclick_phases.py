# -*- coding: utf-8 -*-
"""benchmarks/bench_oneclick.py: the phase of a task banner, the pair checks' shared task files included."""
import importlib.util
import os

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _bench():
    path = os.path.join(REPO, "benchmarks", "bench_oneclick.py")
    spec = importlib.util.spec_from_file_location("bench_oneclick", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_shared_pair_task_files_count_for_the_check_that_runs_them():
    bench = _bench()
    # (wall at the banner, task, controller CPU at the banner)
    marks = [(0.0, "clusterops.commcheck.discover : Discover", 0.0),
             (1.0, "clusterops.commcheck.commcheck : Decide whether the RDMA check runs", 1.0),
             (2.0, "clusterops.commcheck.pair_perf : Run every round of this host", 3.0),
             (6.0, "clusterops.commcheck.collective : Run the collective", 4.0),
             (7.0, "clusterops.commcheck.commcheck : Decide whether the TCP check runs", 8.0),
             (8.0, "clusterops.commcheck.pair_perf : Run every round of this host", 9.0),
             (11.0, "clusterops.commcheck.report : Write", 10.5)]
    assert bench.phase_times(marks, 12.0) == {"discover": 1.0, "other": 2.0, "rdma": 4.0, "collective": 1.0,
                                              "tcp": 3.0, "report": 1.0}
    assert bench.phase_times(marks, 12.0, column=2) == {"discover": 1.0, "other": 3.0, "rdma": 1.0,
                                                        "collective": 4.0, "tcp": 1.5, "report": 1.5}


def test_the_tcp_role_alone_makes_its_shared_tasks_tcp():
    bench = _bench()
    marks = [(0.0, "clusterops.commcheck.tcp_perf : Note the address of each host of the TCP check", 0.0),
             (1.0, "clusterops.commcheck.pair_perf : Choose the hosts of the check", 0.0),
             (3.0, "clusterops.commcheck.rdma_perf : Choose the rails of this host", 0.0),
             (4.0, "clusterops.commcheck.pair_perf : Choose the hosts of the check", 0.0)]
    assert bench.phase_times(marks, 6.0) == {"tcp": 3.0, "rdma": 3.0, "other": 0.0}
