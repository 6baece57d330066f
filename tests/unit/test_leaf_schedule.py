# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The topology patterns (planning/leaf_schedule.py): leaf_ring's coverage and bound, spine's load round, the
leaves of each host's rails, the refusal of hosts without a leaf, and spine's expectation over the
oversubscription through the pair engine."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import itertools

import pytest

from ansible_collections.clusterops.commcheck.plugins.module_utils.planning import families
from ansible_collections.clusterops.commcheck.plugins.module_utils.planning import leaf_schedule as ls
from ansible_collections.clusterops.commcheck.plugins.module_utils.planning.schedule import ScheduleError, plan_rounds
from ansible_collections.clusterops.commcheck.plugins.plugin_utils import pair_engine as engine

from fault_lab import Fabric
from test_pair_engine import RDMA, SHARED, by_host, reader


def groups_of(sizes):
    """Leaf groups of the given sizes, hosts named after their leaf (l3h2: the second host of leaf 3)."""
    return [["l%dh%d" % (g, i) for i in range(size)] for g, size in enumerate(sizes)]


def leaf_of(groups):
    return dict((host, num) for num, group in enumerate(groups) for host in group)


def assert_matchings(rounds):
    for rnd in rounds:
        hosts = [h for pair in rnd for h in pair[:2]]
        assert len(hosts) == len(set(hosts)), rnd
        assert all(pair[0] != pair[1] for pair in rnd)


SIZES = [[2, 2], [3, 3], [1, 4], [5, 1, 2], [2, 2, 2, 2], [3, 1, 4, 1, 5], [4] * 6, [1] * 7, [2, 3] * 4,
         [3] * 9 + [2], [1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4], [2] * 16, [1] * 16, [4, 1] * 8]


@pytest.mark.parametrize("sizes", SIZES, ids=lambda s: "-".join(map(str, s)))
def test_leaf_ring_tests_every_downlink_and_every_leaf_pair_in_at_most_two_plus_leaves_rounds(sizes):
    groups = groups_of(sizes)
    leaf = leaf_of(groups)
    rounds = ls.leaf_ring_rounds(groups)
    assert_matchings(rounds)
    assert len(rounds) <= 2 + len(groups)
    pairs = [tuple(pair) for rnd in rounds for pair in rnd]
    for group in groups:
        if len(group) >= 2:
            for host in group:
                assert any(host in pair and leaf[pair[0]] == leaf[pair[1]] for pair in pairs), host
    crossed = set(frozenset((leaf[a], leaf[b])) for a, b in pairs if leaf[a] != leaf[b])
    assert crossed == set(frozenset(p) for p in itertools.combinations(range(len(groups)), 2))


def test_leaf_ring_of_one_leaf_pairs_its_hosts_among_themselves_and_a_lone_host_with_nobody():
    assert ls.leaf_ring_rounds(groups_of([4])) == [[["l0h0", "l0h1"], ["l0h2", "l0h3"]]]
    assert ls.leaf_ring_rounds(groups_of([3])) == [[["l0h0", "l0h1"]], [["l0h2", "l0h0"]]]
    assert ls.leaf_ring_rounds(groups_of([1])) == []


def test_leaf_ring_of_two_leaves_runs_in_two_rounds_the_cross_pair_on_hosts_free_in_the_first():
    rounds = ls.leaf_ring_rounds(groups_of([2, 2]))
    assert rounds == [[["l0h0", "l0h1"], ["l1h0", "l1h1"]], [["l1h0", "l0h0"]]]
    # 3 + 3: the cross pair takes the odd hosts out, free in round 1; they meet their own leaf in round 2
    rounds = ls.leaf_ring_rounds(groups_of([3, 3]))
    assert rounds == [[["l0h0", "l0h1"], ["l1h0", "l1h1"], ["l1h2", "l0h2"]], [["l0h2", "l0h0"], ["l1h2", "l1h0"]]]


@pytest.mark.parametrize("sizes", [[2, 2], [3, 3], [2, 3, 1], [4, 4, 4, 4], [5, 3], [1, 1, 1], [3] * 16, [6, 2, 2]],
                         ids=lambda s: "-".join(map(str, s)))
def test_spine_loads_every_uplink_at_once_and_tests_every_host_across(sizes):
    groups = groups_of(sizes)
    leaf = leaf_of(groups)
    rounds = ls.spine_rounds(groups)
    assert_matchings(rounds)
    # the rounds across leaves, then (as leaf_ring's first) each leaf's hosts with each other
    within = ls.within_rounds(groups)
    across = rounds[:len(rounds) - len(within)]
    assert rounds[len(across):] == within
    assert all(leaf[a] != leaf[b] for rnd in across for a, b in rnd)
    assert all(leaf[a] == leaf[b] for rnd in within for a, b in rnd)
    assert set(h for group in groups if len(group) >= 2 for h in group) == set(
        h for rnd in within for pair in rnd for h in pair)
    n, largest = sum(sizes), max(sizes)
    # the load round is a maximum matching across leaves
    assert len(rounds[0]) == min(n // 2, n - largest)
    assert set(h for rnd in across for pair in rnd for h in pair) == set(leaf)
    # server and client alternate, so the spine carries traffic both ways
    servers = [leaf[a] for a, _b in rounds[0]]
    assert len(set(servers)) > 1 or len(rounds[0]) == 1


def test_spine_with_a_large_leaf_leaves_its_surplus_for_later_rounds_with_the_other_hosts():
    rounds = ls.spine_rounds(groups_of([5, 2]))
    assert [sorted(sum(rnd, [])) for rnd in rounds] == [
        ["l0h0", "l0h1", "l1h0", "l1h1"], ["l0h2", "l0h3", "l1h0", "l1h1"], ["l0h4", "l1h0"],
        # within each leaf: a perfect matching, then the odd host out with the first
        ["l0h0", "l0h1", "l0h2", "l0h3", "l1h0", "l1h1"], ["l0h0", "l0h4"]]


def test_spine_needs_two_leaves():
    with pytest.raises(ScheduleError, match="two leaves at least, got one leaf"):
        ls.spine_rounds(groups_of([4]))


def rails_of(hosts, rails=2):
    return dict((h, [{"rail": k, "device": "mlx5_%d" % k, "rate_gbps": 100} for k in range(rails)]) for h in hosts)


def test_host_leaves_resolve_device_names_and_keep_only_the_tested_rails():
    topology = {"a": {0: {"leaf": "L0-1"}, "mlx5_1": {"leaf": "L1-1"}},
                "b": {"0": {"leaf": "L0-2"}},
                "c": {}}
    leaves = ls.host_leaves(topology, rails_of(["a", "b", "c"]))
    assert leaves == {"a": {0: "L0-1", 1: "L1-1"}, "b": {0: "L0-2", 1: None}, "c": {0: None, 1: None}}
    assert ls.host_leaves(topology, rails_of(["a", "b"]), rail_numbers=[0]) == {"a": {0: "L0-1"}, "b": {0: "L0-2"}}


def test_hosts_are_grouped_by_their_leaves_on_every_rail_and_those_without_are_named():
    leaves = {"a": {0: "x", 1: "y"}, "b": {0: "x", 1: "y"}, "c": {0: "x", 1: "z"}, "d": {0: "x", 1: None},
              "e": {}}
    leaves["f"] = {0: None, 1: None}
    groups, missing = ls.leaf_groups(["a", "b", "c", "d", "e", "f"], leaves)
    # e tests no rail (no active port): a group of its own, its pairs skipped as in every pattern
    assert groups == [["a", "b"], ["c"], ["e"]]
    assert ls.missing_text(missing) == "d (rail 1), f (rail 0, 1)"
    with pytest.raises(ScheduleError, match=r"pattern leaf_ring needs .* none known for d \(rail 1\), f \(rail 0, 1\): "
                                            r"give each host's leaf"):
        ls.schedule(["a", "b", "c", "d", "e", "f"], "leaf_ring", leaves=leaves)
    assert ls.schedule(["a", "b", "c", "e"], "spine", leaves=leaves) == [[["a", "c"], ["e", "b"]], [["a", "b"]]]
    # the other patterns are schedule.py's, without leaves
    assert ls.schedule(["a", "b"], "mesh") == [[["b", "a"]]]
    with pytest.raises(ScheduleError, match="pattern must be one of"):
        ls.schedule(["a", "b"], "torus")


def plans_of(rounds, hosts, merge=False):
    return plan_rounds(rounds, rails_of(hosts), [["write", "bw"]], merge=merge)


@pytest.mark.parametrize("merge", [False, True])
def test_spine_expects_cross_leaf_pairs_at_the_rate_over_the_oversubscription(merge):
    leaves = {"a": {0: "x", 1: "x"}, "b": {0: "x", 1: "x"}, "c": {0: "y", 1: "x"}, "d": {0: "y", 1: "y"}}
    plans = plans_of([[["a", "c"], ["b", "d"]]], list(leaves), merge)
    ls.mark_leaves(plans, leaves, 4)
    jobs = dict(((j["server"], j["client"], j["rail"]), j) for p in plans for j in p["jobs"])
    assert jobs[("a", "c", 0)]["expected_gbps"] == 25.0 and jobs[("a", "c", 0)]["oversubscription"] == 4.0
    # a-c share leaf x on rail 1: alone, not oversubscribed
    assert jobs[("a", "c", 1)]["expected_gbps"] == 100 and "oversubscription" not in jobs[("a", "c", 1)]
    assert jobs[("a", "c", 1)]["leaves"] == ["x", "x"] and jobs[("b", "d", 1)]["leaves"] == ["x", "y"]
    sides = dict(((h, s["role"], s["rail"]), s) for p in plans for h, ss in p["sides"].items() for s in ss)
    assert sides[("c", "client", 0)]["expected_gbps"] == 25.0 and sides[("a", "server", 0)]["expected_gbps"] == 25.0
    assert sides[("c", "client", 1)]["expected_gbps"] == 100
    # the given rate replaces the link rate, over the oversubscription across leaves
    plans = ls.mark_leaves(plans_of([[["a", "c"]]], list(leaves)), leaves, 2, expected_gbps=80)
    assert [j["expected_gbps"] for j in plans[0]["jobs"]] == [40.0, 80]
    # leaf_ring: leaves only, the expectation as it was
    plans = ls.mark_leaves(plans_of([[["a", "d"]]], list(leaves)), leaves)
    assert [(j["leaves"], j["expected_gbps"], "oversubscription" in j) for j in plans[0]["jobs"]] == [
        (["x", "y"], 100, False), (["x", "y"], 100, False)]
    with pytest.raises(ScheduleError, match="oversubscription must be 1 to 64"):
        ls.mark_leaves(plans, leaves, 0.5)


def spine_fabric():
    fabric = Fabric(n=6, rails=2).racked(3)
    # under the spine's load every cross-leaf path gets half the rate: a 2:1 fabric
    for rail in range(2):
        fabric.slow_between(0.5, fabric.hosts[:3], fabric.hosts[3:], rail)
    return fabric


def fleet_with_topology(fabric):
    return {"hosts": list(fabric.hosts), "unreachable": [], "own": list(fabric.hosts), "slices": 1,
            "facts": {"rails": fabric.host_rails(), "rdma": fabric.rdma_facts(), "topology": fabric.topology}}


@pytest.mark.parametrize("over, verdict", [(2, "pass"), (1, "fail")])
def test_the_engine_judges_spine_pairs_against_the_oversubscription_the_user_states(over, verdict):
    fabric = spine_fabric()
    row = families.family("rdma")
    opts = reader(SHARED, RDMA, commcheck_rdma_pattern="spine", commcheck_rdma_oversubscription=over)
    run = engine.plan(row, opts, fleet_with_topology(fabric), 40, forks=50)
    assert run["pattern"] == "spine" and run["oversubscription"] == over
    # one load round across the two leaves, then two within each (three hosts a leaf: a pair, the odd one out)
    assert [sorted(set(job["round"] for job in run["jobs"] if (job["leaves"][0] != job["leaves"][1]) == cross))
            for cross in (True, False)] == [[0], [1, 2]]
    first = engine.first_pass(row, opts, run, by_host(fabric.sides(run["rounds"], "first")), {})
    records = [r for r in first["records"] if r["kind"] == "rdma_bw"]
    bw = [r for r in records if r["params"]["leaves"][0] != r["params"]["leaves"][1]]
    assert len(bw) == 6 and all(r["params"]["oversubscription"] == over for r in bw)
    assert set(r["verdict"] for r in bw) == set([verdict])
    assert all(r["metrics"]["expected_gbps"] == fabric.rate / over for r in bw)
    # within a leaf: no oversubscription, the full rate expected, and they pass
    within = [r for r in records if r not in bw]
    assert len(within) == 8 and not any("oversubscription" in r["params"] for r in within)
    assert set((r["verdict"], r["metrics"]["expected_gbps"]) for r in within) == set([("pass", fabric.rate)])


@pytest.mark.parametrize("load", [0.5, 1.0])
def test_a_spine_run_names_the_uplinks_of_the_leaf_whose_hosts_pass_with_each_other_and_fail_across(load):
    """Three leaves of two hosts, 4:1 stated; what leaves leaf 2 on rail 1 runs at a tenth of the rate. The load
    round sends one way a pair, so each uplink carries half its leaf's hosts: 2 x rate / 4 a pair on a 4:1 fabric
    (``load`` 0.5), the full rate where the uplinks are wider than stated (1.0). Either way twice the expectation
    or more: compared with the pairs within a leaf, which ran alone at the full rate, by the fraction of its rate
    each delivers, every one of those would be a low outlier; they are a population of their own."""
    fabric = Fabric(n=6, rails=2).racked(2)
    hosts = fabric.hosts
    for rail in range(2):
        for num, first_leaf in enumerate([hosts[0:2], hosts[2:4]]):
            for second_leaf in [hosts[2:4], hosts[4:6]][num:]:
                fabric.slow_between(load, first_leaf, second_leaf, rail, phase="first")
    fabric.slow_between(0.1, hosts[2:4], hosts[:2] + hosts[4:], 1)
    row = families.family("rdma")
    opts = reader(SHARED, RDMA, commcheck_rdma_pattern="spine", commcheck_rdma_oversubscription=4)
    fleet = fleet_with_topology(fabric)
    run = engine.plan(row, opts, fleet, 40, forks=50)
    first = engine.first_pass(row, opts, run, by_host(fabric.sides(run["rounds"], "first")), {})
    failed = sorted((r["host"], r["peer"], r["params"]["rail"]) for r in first["records"] if r["verdict"] == "fail")
    assert failed == [("h1", "h4", 1), ("h3", "h6", 1)]
    retests = engine.retests(row, opts, first, fleet, run, forks=50)
    judged = engine.judge(row, opts, first, retests, fabric.sides(retests["rounds"], "retest"), [], [], [],
                          fabric.topology, {})
    summary = judged["localized"]["summary"]
    assert summary["most_likely"] == "uplinks of leaf switch leaf1-2 (rail 1)", summary
    assert summary["hosts"] == [] and summary["rails"] == [] and summary["links"] == [], summary


def test_the_engine_plans_leaf_ring_from_the_inventory_topology_and_refuses_hosts_without_one():
    fabric = Fabric(n=6, rails=2).racked(3)
    row = families.family("rdma")
    opts = reader(SHARED, RDMA, commcheck_rdma_pattern="leaf_ring")
    fleet = fleet_with_topology(fabric)
    run = engine.plan(row, opts, fleet, 40, forks=50)
    first = engine.first_pass(row, opts, run, by_host(fabric.sides(run["rounds"], "first")), {})
    kinds = set((r["params"]["leaves"][0] == r["params"]["leaves"][1]) for r in first["records"])
    assert kinds == set([True, False]) and first["summary"]["verdict"] == "pass"
    assert not any("oversubscription" in r["params"] for r in first["records"])
    # discovery's leaves serve where the inventory gives none; a host with neither is named before any test
    fleet["facts"]["topology"] = dict(fabric.topology, h2={}, h5={})
    fleet["facts"]["rdma"]["h2"]["topology"] = {"mlx5_0": {"leaf": "leaf0-1", "source": "lldp"},
                                                "mlx5_1": {"leaf": "leaf1-1", "source": "lldp"}}
    with pytest.raises(ScheduleError, match=r"none known for h5 \(rail 0, 1\)"):
        engine.plan(row, opts, fleet, 40, forks=50)
    fleet["facts"]["rdma"]["h5"]["topology"] = {"mlx5_0": {"leaf": "leaf0-2", "source": "lldp"},
                                                "mlx5_1": {"leaf": "leaf1-2", "source": "lldp"}}
    assert engine.plan(row, opts, fleet, 40, forks=50)["jobs"] == run["jobs"]


@pytest.mark.parametrize("phase, verdict, culprit", [
    ("first", "flaky", "flaky link h1 - h4 (rail 0)"),
    (None, "fail", "uplinks between leaf switches leaf0-1 and leaf0-2 (rail 0)")])
def test_a_spine_pair_slow_only_under_load_is_flaky_and_one_slow_alone_too_is_the_uplinks(phase, verdict, culprit):
    """The retest runs a failing spine pair alone, against the full rate."""
    fabric = Fabric(n=6, rails=2).racked(3)
    for rail in range(2):
        fabric.slow_between(0.5, fabric.hosts[:3], fabric.hosts[3:], rail, phase=phase)
    row = families.family("rdma")
    opts = reader(SHARED, RDMA, commcheck_rdma_pattern="spine", commcheck_rdma_oversubscription=1)
    fleet = fleet_with_topology(fabric)
    run = engine.plan(row, opts, fleet, 40, forks=50)
    first = engine.first_pass(row, opts, run, by_host(fabric.sides(run["rounds"], "first")), {})
    retests = engine.retests(row, opts, first, fleet, run, forks=50)
    judged = engine.judge(row, opts, first, retests, fabric.sides(retests["rounds"], "retest"), [], [], [],
                          fabric.topology, {})
    assert judged["verdict"] == verdict
    assert judged["localized"]["summary"]["most_likely"] == culprit


def test_a_host_without_an_active_port_does_not_stop_leaf_ring_its_pairs_are_skipped_naming_why():
    fabric = Fabric(n=6, rails=2).racked(3)
    fabric.missing.update([("h6", 0), ("h6", 1)])
    row = families.family("rdma")
    run = engine.plan(row, reader(SHARED, RDMA, commcheck_rdma_pattern="leaf_ring"), fleet_with_topology(fabric), 40,
                      forks=50)
    skipped = run["skipped_pairs"]
    assert skipped and all("h6" in (s["server"], s["client"]) and "no active RDMA port on h6" in s["reason"]
                           for s in skipped)
    assert not any("h6" in (job["server"], job["client"]) for job in run["jobs"])
