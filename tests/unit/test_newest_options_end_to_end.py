# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The newest options, hostile values end to end (issue 35: what passes the up-front check cannot fail later for
the same reason): commcheck_retest_rounds, commcheck_rdma_oversubscription, commcheck_discover_topology_tools,
commcheck_rdma_pattern's topology patterns and commcheck_topology.

Each value is either refused by the up-front check (``role_options.check_values``, what validate_options runs),
naming the variable, or accepted and then honoured by the code that takes it (the pair engine, the rdma_facts
action and the module's own argument type)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import copy

import pytest

from ansible.module_utils.common.validation import check_type_bool

from ansible_collections.clusterops.commcheck.plugins.action import rdma_facts as facts_action
from ansible_collections.clusterops.commcheck.plugins.module_utils.planning import families
from ansible_collections.clusterops.commcheck.plugins.plugin_utils import pair_engine as engine
from ansible_collections.clusterops.commcheck.plugins.plugin_utils import role_options as ro
from ansible_collections.clusterops.commcheck.plugins.plugin_utils.oneclick_user_values import load_specs

from fault_lab import Fabric
from test_leaf_schedule import fleet_with_topology, spine_fabric
from test_pair_engine import RDMA, SHARED, by_host, fleet_of, reader

ALL = ro.merge_specs(load_specs(ro.ROLES), ro.ROLES)
LEAF = {"leaf": "leaf1", "port": "swp1"}

# one case per behaviour: (variable, value, what the problem says)
REFUSED = [
    ("commcheck_retest_rounds", -1, "must be between 0 and 20"),
    ("commcheck_retest_rounds", 1000, "must be between 0 and 20"),
    ("commcheck_retest_rounds", True, "is not an integer"),
    ("commcheck_retest_rounds", 2.5, "is not an integer"),
    ("commcheck_retest_rounds", None, "null is not allowed"),
    ("commcheck_rdma_oversubscription", 0, "must be between 1 and 64"),
    ("commcheck_rdma_oversubscription", -2, "must be between 1 and 64"),
    ("commcheck_rdma_oversubscription", 0.5, "must be between 1 and 64"),
    ("commcheck_rdma_oversubscription", float("nan"), "must be a finite number"),
    ("commcheck_rdma_oversubscription", "inf", "must be a finite number"),
    ("commcheck_rdma_oversubscription", "1:3", "is not a number"),
    ("commcheck_rdma_oversubscription", True, "is not a number"),
    ("commcheck_discover_topology_tools", "auto", "is not a boolean"),
    ("commcheck_discover_topology_tools", 2, "is not a boolean"),
    ("commcheck_discover_topology_tools", "--x", "is not a boolean"),
    ("commcheck_rdma_pattern", "--x", "is not one of mesh, ring, pairs, star, leaf_ring, spine"),
    ("commcheck_topology", {0: {"leaf": "--x", "port": "swp1"}}, "is not a switch or port name"),
    ("commcheck_topology", {0: {"leaf": "leaf1", "port": "-p"}}, "is not a switch or port name"),
    ("commcheck_topology", {0: {"leaf": "a\nb", "port": "p"}}, "is not a switch or port name"),
    ("commcheck_topology", {0: {"leaf": "x" * 10000, "port": "p"}}, "is not a switch or port name"),
    ("commcheck_topology", {0: {"leaf": "l\u202e", "port": "p"}}, "is not a switch or port name"),
    ("commcheck_topology", {0: {"leaf": ["l"], "port": "p"}}, "is not a name (text)"),
    ("commcheck_topology", {0: {"leaf": "", "port": "p"}}, "leaf is required"),
    ("commcheck_topology", {0: dict(LEAF, other=1)}, "unknown key(s) other"),
    ("commcheck_topology", {"--x": LEAF}, "is neither a rail number (0 to 1023) nor an RDMA device name"),
    ("commcheck_topology", {"/dev/x": LEAF}, "is neither a rail number (0 to 1023) nor an RDMA device name"),
    ("commcheck_topology", {-1: LEAF}, "rail -1 is out of range"),
    ("commcheck_topology", {True: LEAF}, "True is neither a rail number nor an RDMA device name"),
    ("commcheck_topology", {0: "leaf1"}, "must be a dict with leaf (and port)"),
    ("commcheck_topology", "leaf1", "is not a dict"),
]


def problems(name, value):
    return ro.check_values(ALL, {name: value}, known_hosts=("n1", "n2"))


@pytest.mark.parametrize("name, value, says", REFUSED, ids=lambda v: repr(v)[:40])
def test_a_hostile_value_is_refused_up_front_naming_the_variable(name, value, says):
    found = problems(name, value)
    assert len(found) == 1 and found[0].startswith(name) and says in found[0], found


# ---------------------------------------------------------------- accepted, and then honoured

@pytest.mark.parametrize("over, expected", [("2", 2.0), (2, 2.0), ("1.5", 1.5), (64, 64.0)])
def test_an_oversubscription_the_check_accepts_is_what_spine_judges_against(over, expected):
    assert problems("commcheck_rdma_oversubscription", over) == []
    fabric = spine_fabric()
    row = families.family("rdma")
    opts = reader(SHARED, RDMA, commcheck_rdma_pattern="spine", commcheck_rdma_oversubscription=over)
    run = engine.plan(row, opts, fleet_with_topology(fabric), 40, forks=50)
    first = engine.first_pass(row, opts, run, by_host(fabric.sides(run["rounds"], "first")), {})
    # the pairs across leaves (the load round); those within a leaf, after it, expect the full rate
    bw = [r for r in first["records"]
          if r["kind"] == "rdma_bw" and r["params"]["leaves"][0] != r["params"]["leaves"][1]]
    assert run["oversubscription"] == expected and bw
    assert all(r["params"]["oversubscription"] == expected for r in bw)
    assert all(r["metrics"]["expected_gbps"] == pytest.approx(fabric.rate / expected, abs=0.01) for r in bw)


@pytest.mark.parametrize("rounds, designed", [(0, False), ("0", False), (1, True), ("2", True), (20, True)])
def test_retest_rounds_the_check_accepts_bound_the_designed_passes(rounds, designed):
    assert problems("commcheck_retest_rounds", rounds) == []
    fabric = Fabric(6, 2, pattern="ring").slow(0.3, "h2").slow(0.3, "h4").slow(0.3, "h6")
    row = families.family("rdma")
    opts = reader(SHARED, RDMA, commcheck_rdma_pattern="ring", commcheck_retest_rounds=rounds)
    fleet = fleet_of(fabric)
    run = engine.plan(row, opts, fleet, 30, forks=50)
    first = engine.first_pass(row, opts, run, by_host(fabric.sides(run["rounds"], "first")), {})
    last = engine.retests(row, opts, first, fleet, run, forks=50)
    again = engine.retest_again(row, opts, first, fleet, run, last, fabric.sides(last["rounds"], "retest"), 50)
    assert bool(again["rounds"]) is designed and again["retest_pass"] == (2 if designed else 1)


def _topology(fabric, variant):
    topology = copy.deepcopy(fabric.topology)
    for per_rail in topology.values():
        for rail, where in list(per_rail.items()):
            if variant == "numbers":
                where.update(leaf=int(where["leaf"][-1]) + 10 * rail, port=7)
            elif variant == "text_rails":
                per_rail[str(rail)] = per_rail.pop(rail)
            elif variant == "spaces_slashes":
                where.update(leaf="spine pod/" + where["leaf"], port="Ethernet 1/1")
    return topology


@pytest.mark.parametrize("variant, leaf", [("numbers", "11"), ("text_rails", "leaf1-1"),
                                           ("spaces_slashes", "spine pod/leaf1-1")])
def test_a_topology_the_check_accepts_is_planned_by_leaf_ring_as_text(variant, leaf):
    fabric = Fabric(n=6, rails=2).racked(3)
    topology = _topology(fabric, variant)
    assert all(problems("commcheck_topology", value) == [] for value in topology.values())
    fleet = fleet_with_topology(fabric)
    fleet["facts"]["topology"] = topology
    row = families.family("rdma")
    opts = reader(SHARED, RDMA, commcheck_rdma_pattern="leaf_ring")
    run = engine.plan(row, opts, fleet, 40, forks=50)
    first = engine.first_pass(row, opts, run, by_host(fabric.sides(run["rounds"], "first")), {})
    assert first["summary"]["verdict"] == "pass"
    leaves = set(name for r in first["records"] for name in r["params"]["leaves"])
    assert leaf in leaves and all(isinstance(name, str) for name in leaves)
    # every host meets one behind its own leaf and the leaves meet: both kinds of pair ran
    assert set(r["params"]["leaves"][0] == r["params"]["leaves"][1] for r in first["records"]) == set([True, False])


@pytest.mark.parametrize("value, expected", [(True, True), ("yes", True), (1, True), ("false", False), (0, False),
                                             (None, None)])
def test_topology_tools_the_check_accepts_reach_the_module_as_its_boolean(value, expected):
    assert problems("commcheck_discover_topology_tools", value) == []
    args = facts_action.role_args({}, {"commcheck_discover_topology_tools": value}.get)
    if expected is None:
        assert "topology_tools" not in args        # the module's own default: auto
    else:
        assert check_type_bool(args["topology_tools"]) is expected
