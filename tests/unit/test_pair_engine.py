# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The pair-check engine (plugin_utils/pair_engine.py) over the family table (planning/families.py).

The rules the roles kept in Jinja before (the step timeout, the task bound, the controller's wait, the module
options every host gets, the outcome line) and a family added from the table alone, run plan -> first pass ->
retests -> judge with sides from the synthetic fabric (fault_lab).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import pytest

from ansible_collections.clusterops.commcheck.plugins.module_utils.planning import families
from ansible_collections.clusterops.commcheck.plugins.module_utils.planning.task_bound import task_timeout
from ansible_collections.clusterops.commcheck.plugins.plugin_utils import pair_engine as engine

from fault_lab import Fabric

# the rdma_perf / tcp_perf defaults that matter here, and the shared ones
SHARED = {"commcheck_min_fraction": 0.9, "commcheck_fleet_min_fraction": 0.5, "commcheck_outlier_z": 3.5,
          "commcheck_outlier_min_rel": 0.2, "commcheck_retest_repeats": 1, "commcheck_retest_partners": True,
          "commcheck_retest_verdicts": ["fail", "error"], "commcheck_retest_max": 200, "commcheck_retest_per_host": 3,
          "commcheck_efficiency": {}, "commcheck_thresholds_history": False, "commcheck_history_runs": 5,
          "commcheck_history_threshold": 0.2, "commcheck_counter_trend_runs": 0, "commcheck_expected_gbps": 0,
          "commcheck_roce_preflight": True, "commcheck_cpu_governor": "", "commcheck_gpu_select": "auto",
          "commcheck_numa_pin": "auto"}
RDMA = {"commcheck_rdma_hosts": [], "commcheck_rdma_pattern": "mesh", "commcheck_rdma_pairs": [],
        "commcheck_rdma_center": "", "commcheck_rdma_strategy": "pipelined", "commcheck_rdma_background": "auto",
        "commcheck_rdma_base_port": 18515, "commcheck_rdma_timeout": 0, "commcheck_rdma_duration": 5,
        "commcheck_rdma_iterations": 0, "commcheck_rdma_lat_iterations": 0, "commcheck_rdma_size": 0,
        "commcheck_rdma_all_sizes": False, "commcheck_rdma_qps": 0, "commcheck_rdma_bidirectional": False,
        "commcheck_rdma_rdma_cm": False, "commcheck_rdma_mtu": 0, "commcheck_rdma_use_cuda": -1,
        "commcheck_rdma_extra_args": [], "commcheck_rdma_connect_retries": 30, "commcheck_rdma_counters": "yes",
        "commcheck_rdma_ops": ["write"], "commcheck_rdma_metrics": ["bw"], "commcheck_rdma_rail_numbers": [],
        "commcheck_rdma_subnet": "", "commcheck_rdma_gpudirect": "off"}
TCP = {"commcheck_tcp_hosts": [], "commcheck_tcp_pattern": "mesh", "commcheck_tcp_pairs": [], "commcheck_tcp_center": "",
       "commcheck_tcp_strategy": "pipelined", "commcheck_tcp_background": "auto", "commcheck_tcp_base_port": 5201,
       "commcheck_tcp_timeout": 0, "commcheck_tcp_duration": 10, "commcheck_tcp_omit": 2, "commcheck_tcp_parallel": 1,
       "commcheck_tcp_reverse": False, "commcheck_tcp_bidirectional": False, "commcheck_tcp_extra_args": [],
       "commcheck_tcp_connect_retries": 30, "commcheck_tcp_expected_gbps": 0}


def reader(*layers, **given):
    values = {}
    for layer in layers + (given,):
        values.update(layer)
    return values.get


def test_every_family_of_the_table_is_whole():
    assert sorted(families.FAMILIES) == ["rdma", "rdma_gpu", "tcp"]
    for name in families.FAMILIES:
        assert families.family(name)["name"] == name


def test_a_row_that_lacks_a_key_or_names_an_unknown_rule_is_refused_naming_it():
    table = {"half": {"check": "half_perf"}}
    with pytest.raises(families.FamilyError, match="family half lacks label, options"):
        families.family("half", table)
    bad = dict(families.FAMILIES["tcp"], module_args=(("duration", "commcheck_tcp_duration", "doubled"),))
    with pytest.raises(families.FamilyError, match="module option duration has no rule 'doubled'"):
        families.family("bad", {"bad": bad})
    with pytest.raises(families.FamilyError, match="family must be one of"):
        families.family("nope")


@pytest.mark.parametrize("family, values, hosts, expected", [
    # the timeout variable wins when above 0
    ("rdma", {"commcheck_rdma_timeout": 77}, 4, 77),
    # timed: duration + 30, a second per host when pipelined
    ("rdma", {"commcheck_rdma_duration": 5}, 4, 39),
    ("rdma", {"commcheck_rdma_duration": 5, "commcheck_rdma_strategy": "rounds"}, 4, 35),
    # by count (no duration): 300 s
    ("rdma", {"commcheck_rdma_duration": 0}, 8, 308),
    # TCP: duration + omit + 30
    ("tcp", {"commcheck_tcp_duration": 10, "commcheck_tcp_omit": 2}, 3, 45),
])
def test_the_step_timeout_follows_the_family_rule(family, values, hosts, expected):
    row = families.family(family)
    assert engine.step_timeout(row, reader(SHARED, RDMA, TCP, **values), hosts) == expected


def test_the_module_options_leave_out_what_is_not_set_and_take_the_rest_as_given():
    args = engine.module_args(families.family("rdma"), reader(SHARED, RDMA, commcheck_rdma_qps=4,
                                                              commcheck_rdma_use_cuda=0), 39)
    # 0 means "not set" for the numbers above 0; use_cuda 0 is a GPU index; an empty governor is left out
    assert "size" not in args and "iterations" not in args and "cpu_governor" not in args
    assert (args["qps"], args["use_cuda"], args["duration"], args["timeout"]) == (4, 0, 5, 39)
    assert args["port_counters"] is True and args["fail_on_error"] is False
    gpu = engine.module_args(families.family("rdma_gpu"), reader(SHARED, RDMA, commcheck_rdma_use_cuda=0), 39)
    assert "use_cuda" not in gpu and gpu["gpu_select"] == "given"
    tcp = engine.module_args(families.family("tcp"), reader(SHARED, TCP, commcheck_tcp_parallel=1,
                                                            commcheck_tcp_expected_gbps=9.4), 45)
    assert "parallel" not in tcp and tcp["expected_gbps"] == 9.4 and tcp["omit"] == 2


@pytest.mark.parametrize("family", ["rdma", "rdma_gpu", "tcp"])
def test_every_family_passes_the_pair_module_options_from_the_shared_variables(family):
    values = reader(SHARED, RDMA, TCP, commcheck_min_fraction=0.75, commcheck_cpu_governor="performance",
                    commcheck_rdma_connect_retries=7, commcheck_tcp_connect_retries=9)
    args = engine.module_args(families.family(family), values, 40)
    assert (args["min_fraction"], args["cpu_governor"], args["fail_on_error"]) == (0.75, "performance", False)
    assert args["connect_retries"] == (9 if family == "tcp" else 7)


def test_the_hosts_are_the_check_s_own_else_the_play_s_and_the_lost_ones_are_unreachable():
    row = families.family("tcp")
    chosen = engine.choose_hosts(row, reader(SHARED, TCP, commcheck_tcp_hosts=["b", "c", "x"]), ["a", "b", "c"],
                                 ["a", "b", "c", "x", "y"])
    assert chosen == {"hosts": ["b", "c"], "unreachable": ["x"], "timeout": 45}
    everyone = engine.choose_hosts(row, reader(SHARED, TCP), ["a", "b"], ["a", "b", "y"])
    assert everyone == {"hosts": ["a", "b"], "unreachable": ["y"], "timeout": 45}


def fleet_of(fabric):
    return {"hosts": list(fabric.hosts), "unreachable": [], "own": list(fabric.hosts), "slices": 1,
            "facts": {"rails": fabric.host_rails(), "rdma": fabric.rdma_facts()}}


def by_host(sides):
    out = {}
    for side in sides:
        out.setdefault(side["host"], []).append(side)
    return out


def test_a_plan_runs_in_the_background_for_want_of_forks_and_waits_only_for_the_timed_share():
    fabric = Fabric(n=4, rails=2, ops=("write",), metrics=("bw", "lat"))
    row = families.family("rdma")
    opts = reader(SHARED, RDMA, commcheck_rdma_metrics=["bw", "lat"], commcheck_rdma_lat_iterations=1000)
    run = engine.plan(row, opts, fleet_of(fabric), 39, forks=3, now=100.0)
    # one merged plan: 3 rounds of the mesh x 2 tests
    assert [plan["steps"] for plan in run["rounds"]] == [6]
    assert run["bound"] == task_timeout(6, 39) and run["background"] is True and run["started"] == 100.0
    # latency by count: only the bandwidth half of the steps is timed
    assert run["wait_s"] == 6 * 5 // 2
    assert engine.plan(row, opts, fleet_of(fabric), 39, forks=4)["background"] is False


@pytest.fixture(name="fake_table")
def fixture_fake_table():
    """A new family from a row alone: RDMA send latency, its own option prefix, thresholds after the retests."""
    row = dict(families.FAMILIES["rdma"], check="ib_send_perf", label="SEND", facts="commcheck_send_perf",
               options="commcheck_send", kinds=("rdma_bw", "rdma_lat"), counters=False, preflight=False,
               gpudirect=None, placement=False,
               module_args=(("duration", "commcheck_send_duration", "positive"), ("fail_on_error", False, "fixed")),
               timeout={"timed": ("commcheck_send_duration",), "margin_s": 10, "fallback_s": 60, "timed_share": None})
    return dict(families.FAMILIES, send=row)


def test_a_family_added_from_the_table_alone_runs_plan_first_retests_and_judge(fake_table):
    row = families.family("send", fake_table)
    values = dict((key.replace("commcheck_rdma_", "commcheck_send_"), value) for key, value in RDMA.items())
    opts = reader(SHARED, values, commcheck_send_ops=["send"], commcheck_send_duration=3)
    fabric = Fabric(n=4, rails=2, ops=("send",), metrics=("bw",)).slow(0.4, host="h3")
    fleet = fleet_of(fabric)
    chosen = engine.choose_hosts(row, opts, fabric.hosts, fabric.hosts)
    assert chosen["timeout"] == 3 + 10 + 4
    run = engine.plan(row, opts, fleet, chosen["timeout"], forks=50)
    assert run["module_args"] == {"duration": 3, "fail_on_error": False, "timeout": 17}
    assert set(job["test"] for job in run["jobs"]) == set(["send"])
    first = engine.first_pass(row, opts, run, by_host(fabric.sides(run["rounds"], "first")), {})
    assert set(r["host"] for r in first["records"] if r["verdict"] == "fail") >= set(["h3"]) or \
        set(r["peer"] for r in first["records"] if r["verdict"] == "fail") >= set(["h3"])
    retests = engine.retests(row, opts, first, fleet, run, forks=50)
    assert retests["message"].endswith("control or cross)") and "h3" in retests["hosts"]
    verdicts = engine.judge(row, opts, first, retests, fabric.sides(retests["rounds"], "retest"), [], [], [], {},
                            {"preflight": run["preflight"]})
    assert verdicts["localized"]["summary"]["hosts"] == ["h3"]
    assert verdicts["verdict"] == "fail"
    assert verdicts["message"].startswith("SEND fail: ") and "bad nodes ['h3']" in verdicts["message"]
    # the records' kinds and check are those of the pair family it is judged as (verdicts.judgement.FAMILIES)
    assert set(r["kind"] for r in verdicts["publish"]) >= set(["rdma_bw", "finding"])
    assert engine.share(verdicts["publish"], fleet) == verdicts["publish"]


def test_tcp_judges_its_first_pass_by_the_fleet_and_keeps_the_findings_localization_does_not_replace():
    fabric = Fabric(n=4, rails=1).slow(0.3, host="h2")
    row = families.family("tcp")
    opts = reader(SHARED, TCP)
    rails = dict((h, [{"rail": 0, "address": "10.0.0.%d" % (i + 10)}]) for i, h in enumerate(fabric.hosts))
    fleet = {"hosts": list(fabric.hosts), "unreachable": [], "own": list(fabric.hosts), "slices": 1,
             "facts": {"rails": rails}}
    run = engine.plan(row, opts, fleet, 45, forks=50)
    first = engine.first_pass(row, opts, run, by_host(fabric.tcp_sides(run["rounds"], "first", 0)), {})
    # no rate known: the fleet threshold fails the slow host's links
    assert first["summary"]["verdict"] == "fail" and "thresholds" in first
    retests = engine.retests(row, opts, first, fleet, run, forks=50)
    # on ports past the first pass's, and iperf3's sides carry no test keys
    first_ports = set(job["tcp_port"] for job in run["jobs"])
    retest_ports = [job["tcp_port"] for plan in retests["rounds"] for job in plan["jobs"]]
    assert retest_ports and min(retest_ports) > max(first_ports)
    assert all("test" not in side for plan in retests["rounds"] for sides in plan["sides"].values() for side in sides)
    verdicts = engine.judge(row, opts, first, retests, fabric.tcp_sides(retests["rounds"], "retest", 0), [], [], [],
                            {}, {})
    assert verdicts["message"].startswith("TCP fail: 6 results pass ")
    assert "bad nodes ['h2']" in verdicts["message"]


def test_the_slice_share_keeps_its_own_hosts_and_the_leader_the_fleetless_records():
    records = [{"host": "a"}, {"host": "b"}, {"host": "run"}]
    fleet = {"slices": 2, "own": ["a"], "hosts": ["a", "b"], "leader": True}
    assert engine.share(records, fleet) == [{"host": "a"}, {"host": "run"}]
    assert engine.share(records, dict(fleet, leader=False)) == [{"host": "a"}]
    assert engine.share(records + ["junk"], {"slices": 1}) == records
