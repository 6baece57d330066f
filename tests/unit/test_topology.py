# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The commcheck_topology variable: read into one shape, refused with a message naming the variable and the entry
(discovery.topology)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import pytest

from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery import topology as topo


def test_rail_numbers_digit_texts_and_device_names_are_keys_and_entries_say_their_source():
    assert topo.check_topology({0: {"leaf": "leaf-r0-07", "port": "Ethernet1/12"}, "1": {"leaf": "leaf r1 07"},
                                "mlx5_2": {"leaf": "MF0;leaf-ib:MQM8700/U1", "port": 17}}) == {
        0: {"leaf": "leaf-r0-07", "port": "Ethernet1/12", "source": "inventory"},
        1: {"leaf": "leaf r1 07", "port": None, "source": "inventory"},
        "mlx5_2": {"leaf": "MF0;leaf-ib:MQM8700/U1", "port": "17", "source": "inventory"}}


def test_an_empty_topology_is_none():
    assert topo.check_topology({}) == {} and topo.check_topology(None) == {}


@pytest.mark.parametrize("value,message", [
    (["leaf-1"], "commcheck_topology: must be a dict of rail number or RDMA device"),
    ({"-mlx5_0": {"leaf": "a"}}, "commcheck_topology: '-mlx5_0' is neither a rail number"),
    ({True: {"leaf": "a"}}, "is neither a rail number nor an RDMA device name"),
    ({4096: {"leaf": "a"}}, "commcheck_topology: rail 4096 is out of range"),
    ({0: {"leaf": "a"}, "0": {"leaf": "b"}}, "commcheck_topology.0: rail 0 is given twice"),
    ({0: "leaf-1"}, "commcheck_topology.0: must be a dict with leaf"),
    ({0: {"port": "Eth1/1"}}, "commcheck_topology.0: leaf is required"),
    ({0: {"leaf": "a", "spine": "s1"}}, "commcheck_topology.0: unknown key(s) spine"),
    ({0: {"leaf": "a", "source": "lldp"}}, "unknown key(s) source"),
    ({0: {"leaf": "--config=/etc/passwd"}}, "commcheck_topology.0.leaf: '--config=/etc/passwd' is not a switch"),
    ({0: {"leaf": "/etc/leaf"}}, "commcheck_topology.0.leaf: '/etc/leaf' is not"),
    ({0: {"leaf": "leaf/../../etc"}}, "no '..'"),
    ({0: {"leaf": "~root"}}, "is not a switch or port name"),
    ({0: {"leaf": "leaf-1", "port": "Eth1/1\x1b[2J"}}, "commcheck_topology.0.port:"),
    ({0: {"leaf": "leaf-1\u202e"}}, "commcheck_topology.0.leaf:"),
    ({0: {"leaf": ["leaf-1"]}}, "commcheck_topology.0.leaf: ['leaf-1'] is not a name"),
    ({0: {"leaf": "x" * 129}}, "at most 128"),
])
def test_a_bad_topology_is_refused_naming_the_entry(value, message):
    with pytest.raises(topo.TopologyError) as err:
        topo.check_topology(value)
    assert message in str(err.value)


def test_a_fleets_topology_names_the_host_and_takes_discoverys_sources():
    assert topo.check_hosts({"h1": {"mlx5_0": {"leaf": "sw1", "port": "Ethernet4", "source": "lldp"}}}) == {
        "h1": {"mlx5_0": {"leaf": "sw1", "port": "Ethernet4", "source": "lldp"}}}
    with pytest.raises(topo.TopologyError, match=r"topology of h2\.0\.source: 'guess' is not one of inventory"):
        topo.check_hosts({"h2": {0: {"leaf": "sw1", "source": "guess"}}})
    with pytest.raises(topo.TopologyError, match="must be a dict of host"):
        topo.check_hosts(["h1"])
