# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The TCP check's topology (planning/tcp_topology.py): the leaf of each host's TCP path, the topology patterns
``leaf_ring`` / ``spine`` planned by it through the shared pair engine, and localization naming a leaf's uplinks
for TCP.

The fixtures put the TCP address on RDMA rail 1, whose leaves are named apart from rail 0's (``leaf1-*`` vs
``leaf0-*``): a TCP path placed by rail number 0, or by the wrong device, would plan and name ``leaf0-*``."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import pytest

from ansible_collections.clusterops.commcheck.plugins.module_utils.planning import families
from ansible_collections.clusterops.commcheck.plugins.module_utils.planning import tcp_topology as tt
from ansible_collections.clusterops.commcheck.plugins.module_utils.planning.schedule import ScheduleError
from ansible_collections.clusterops.commcheck.plugins.plugin_utils import pair_engine as engine

from fault_lab import Fabric
from test_pair_engine import SHARED, TCP, by_host, reader

TCP_RAIL = 1     # the RDMA rail whose netdev holds each host's TCP address


def tcp_fleet(fabric, topology=None):
    """The tcp_perf role's fleet facts: each host's address (on RDMA rail ``TCP_RAIL``), discovery's facts, the
    inventory's topology (``racked(.., key="device")``'s, by device name)."""
    rails = dict((h, [{"rail": 0, "address": "10.0.%d.%d" % (TCP_RAIL, i + 10)}]) for i, h in enumerate(fabric.hosts))
    return {"hosts": list(fabric.hosts), "unreachable": [], "own": list(fabric.hosts), "slices": 1,
            "facts": {"rails": rails, "rdma": fabric.rdma_facts(),
                      "topology": fabric.topology if topology is None else topology}}


def test_the_tcp_path_is_the_leaf_of_its_tcp_entry_else_of_the_device_holding_its_address():
    facts = Fabric(n=2, rails=2).rdma_facts()
    rails = {"h1": [{"rail": 0, "address": "10.0.1.10"}], "h2": [{"rail": 0, "address": "10.0.1.11"}]}
    topology = {
        "h1": {0: {"leaf": "r0-a", "port": None, "source": "inventory"},
               "mlx5_1": {"leaf": "r1-a", "port": "p1", "source": "lldp"},
               "tcp": {"leaf": "front-a", "port": None, "source": "inventory"}},
        "h2": {0: {"leaf": "r0-a", "port": None, "source": "inventory"},
               "mlx5_0": {"leaf": "r0-b", "port": None, "source": "lldp"},
               "mlx5_1": {"leaf": "r1-b", "port": "p2", "source": "lldp"}}}
    assert tt.path_topology(topology, facts, rails) == {
        "h1": {0: {"leaf": "front-a", "port": None, "source": "inventory"}},
        "h2": {0: {"leaf": "r1-b", "port": "p2", "source": "lldp"}}}


@pytest.mark.parametrize("topology, rails", [
    # a rail number never places the TCP path: its address may be on any network
    ({"h1": {0: {"leaf": "r0-a"}, 1: {"leaf": "r1-a"}}}, {"h1": [{"rail": 0, "address": "10.0.1.10"}]}),
    # an address no RDMA port holds (a front-end network)
    ({"h1": {"mlx5_1": {"leaf": "r1-a"}}}, {"h1": [{"rail": 0, "address": "192.0.2.10"}]}),
    ({"h1": {"mlx5_1": {"leaf": "r1-a"}}}, {}),
])
def test_a_tcp_path_no_entry_places_has_no_leaf(topology, rails):
    assert tt.path_topology(topology, Fabric(n=1, rails=2).rdma_facts(), rails) == {"h1": {}}


def test_a_port_s_addresses_come_from_ipv4_and_ipv4_cidr():
    facts = {"devices": [{"name": "mlx5_3", "ports": [{"ipv4": ["10.9.0.1"], "ipv4_cidr": ["10.9.0.2/24"]}]}]}
    assert tt.device_of_address(facts, "10.9.0.1") == "mlx5_3"
    assert tt.device_of_address(facts, "10.9.0.2") == "mlx5_3"
    assert tt.device_of_address(facts, "10.9.0.3") is None
    assert tt.device_of_address(None, "10.9.0.1") is None


@pytest.mark.parametrize("pattern", ["leaf_ring", "spine"])
def test_tcp_plans_the_topology_patterns_from_its_path_s_leaf(pattern):
    fabric = Fabric(n=6, rails=2).racked(2, key="device")
    row = families.family("tcp")
    run = engine.plan(row, reader(SHARED, TCP, commcheck_tcp_pattern=pattern), tcp_fleet(fabric), 45, forks=50)
    assert run["pattern"] == pattern
    leaves = [tuple(job["leaves"]) for job in run["jobs"]]
    assert leaves and all(leaf.startswith("leaf1-") for pair in leaves for leaf in pair), leaves
    crossing = set(frozenset(pair) for pair in leaves if pair[0] != pair[1])
    if pattern == "leaf_ring":
        # every host with a host of its own leaf, and each two of the three leaves once through the spine
        assert set(pair for pair in leaves if pair[0] == pair[1]) == set(
            [("leaf1-1", "leaf1-1"), ("leaf1-2", "leaf1-2"), ("leaf1-3", "leaf1-3")])
        assert crossing == set([frozenset(("leaf1-1", "leaf1-2")), frozenset(("leaf1-1", "leaf1-3")),
                                frozenset(("leaf1-2", "leaf1-3"))])
    else:
        # the load round across leaves, then each leaf's hosts with each other
        assert set(job["round"] for job in run["jobs"] if job["leaves"][0] != job["leaves"][1]) == set([0])
        assert len(crossing) >= 2
        assert min(job["round"] for job in run["jobs"] if job["leaves"][0] == job["leaves"][1]) > 0


def test_tcp_with_a_topology_pattern_names_the_hosts_whose_path_has_no_leaf_before_any_test():
    fabric = Fabric(n=4, rails=2).racked(2, key="device")
    # h3's leaves by rail number only: they say nothing of the network its TCP address is on
    topology = dict(fabric.topology, h3={0: {"leaf": "leaf0-2"}, 1: {"leaf": "leaf1-2"}})
    with pytest.raises(ScheduleError, match=r"h3"):
        engine.plan(families.family("tcp"), reader(SHARED, TCP, commcheck_tcp_pattern="leaf_ring"),
                    tcp_fleet(fabric, topology), 45, forks=50)


def test_the_rdma_family_keeps_its_topology_per_rail():
    fabric = Fabric(n=4, rails=2).racked(2, key="device")
    topology = engine.fleet_topology(tcp_fleet(fabric), families.family("rdma"))
    assert topology["h1"] == {"mlx5_0": {"leaf": "leaf0-1", "port": "Eth1/1", "source": "inventory"},
                              "mlx5_1": {"leaf": "leaf1-1", "port": "Eth1/1", "source": "inventory"}}


def test_a_slow_uplink_on_the_tcp_network_is_named_that_leaf_s_uplink():
    # 8 hosts, 4 leaves: the uplink's 12 pairs are under half of the mesh's 28 (no link rate is known, TCP is
    # judged against the fleet's median)
    fabric = Fabric(n=8, rails=2).racked(2, key="device")
    fabric.slow_between(0.3, fabric.hosts[2:4], fabric.hosts[:2] + fabric.hosts[4:], TCP_RAIL)
    row = families.family("tcp")
    opts = reader(SHARED, TCP)
    fleet = tcp_fleet(fabric)
    run = engine.plan(row, opts, fleet, 45, forks=50)
    first = engine.first_pass(row, opts, run, by_host(fabric.tcp_sides(run["rounds"], "first", TCP_RAIL)), {})
    retests = engine.retests(row, opts, first, fleet, run, forks=50)
    topology = engine.path_topology(row, engine.topo.check_hosts(fabric.topology), fleet["facts"]["rdma"],
                                    fleet["facts"]["rails"])
    judged = engine.judge(row, opts, first, retests, fabric.tcp_sides(retests["rounds"], "retest", TCP_RAIL), [], [],
                          [], topology, {})
    components = [(c["component"], c["host"], (c.get("switch") or {}).get("leaves"))
                  for c in judged["localized"]["components"]]
    assert components == [("uplink", "*", ["leaf1-2"])], components
    # the TCP check's localization record keeps the path's leaves (rail 0 of its own numbering)
    [localization] = [r for r in judged["publish"] if r["kind"] == "localization"]
    assert localization["params"]["check"] == "tcp_perf"
    assert localization["params"]["topology"]["h3"] == {"0": {"leaf": "leaf1-2", "port": "Eth1/1",
                                                              "source": "inventory"}}


def test_the_tcp_path_s_leaf_is_not_read_as_an_rdma_rail_s_in_the_leaf_table_and_culprits():
    from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts.culprit_leaves import (
        leaves_of_records, with_leaves)
    rdma = {"kind": "localization", "host": "*", "params": {"check": "rdma_perf", "topology": {
        "h1": {"0": {"leaf": "leaf0-1", "port": "p1", "source": "lldp"}}}}}
    tcp = {"kind": "localization", "host": "*", "params": {"check": "tcp_perf", "topology": {
        "h1": {"0": {"leaf": "front-1", "port": None, "source": "inventory"}}}}}
    assert leaves_of_records([tcp, rdma]) == {("h1", 0): {"leaf": "leaf0-1", "port": "p1", "source": "lldp"}}
    assert leaves_of_records([tcp]) == {}
    [culprit] = with_leaves([{"component": "nic", "host": "h1", "rail": 0}], [tcp, rdma])
    assert culprit["switches"] == [{"leaf": "leaf0-1", "port": "p1", "source": "lldp", "rail": 0}]
