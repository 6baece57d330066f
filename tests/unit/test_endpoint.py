# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The typed endpoint record and what gid_index auto resolves to."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import pytest

from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import perftest_cmd as pc
from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery import endpoint
from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery.endpoint import (
    Endpoint, resolve_gid_index)
from ansible_collections.clusterops.commcheck.plugins.module_utils.options.option_rules import OptionError


def test_endpoint_fields_are_typed():
    end = Endpoint(host="node-a", device="mlx5_0", port="2", gid_index=3.0, address="10.0.0.1", rail=1, numa_node=0)
    assert end == ("node-a", "mlx5_0", 2, 3, "10.0.0.1", 1, 0)
    assert isinstance(end.gid_index, int) and isinstance(end.port, int)
    assert Endpoint() == (None, None, 1, None, None, None, None)


@pytest.mark.parametrize("field, value", [
    ("device", "-x"), ("device", "mlx5;0"), ("port", 0), ("port", 256), ("gid_index", 256), ("gid_index", True),
    ("gid_index", "auto"), ("address", "-1"), ("rail", 1024), ("numa_node", -2), ("host", "a\nb"),
])
def test_endpoint_refuses_bad_fields(field, value):
    with pytest.raises(OptionError, match=field if field != "port" else "ib_port"):
        Endpoint(**{field: value})


def test_endpoint_from_a_round_plan_side():
    side = {"role": "client", "peer": "node-a", "rail": 1, "device": "mlx5_1", "ib_port": 1, "gid_index": 3,
            "server": "10.0.1.11", "tcp_port": 18516}
    assert Endpoint.from_side(side, host="node-b") == ("node-b", "mlx5_1", 1, 3, None, 1, None)
    assert Endpoint.from_side({"gid_index": "auto"}).gid_index is None


def test_argv_takes_device_port_and_gid_from_the_endpoint():
    end = Endpoint(device="mlx5_3", port=1, gid_index=5)
    argv = pc.build_argv({"role": "server", "device": "mlx5_0", "gid_index": "auto"}, endpoint=end)
    assert argv[:7] == ["ib_write_bw", "-d", "mlx5_3", "-i", "1", "-x", "5"]
    assert pc.endpoint_args(Endpoint()) == ["-i", "1"]


def test_resolve_gid_index_facts_then_sysfs_then_default():
    facts = {"devices": [{"name": "mlx5_0", "ports": [{"port": 1, "link_layer": "Ethernet", "gid_index": 4}]}]}
    side = {"device": "mlx5_0", "ib_port": 1, "gid_index": "auto"}
    assert resolve_gid_index(side, facts, lambda path, default: default, "/sys") == (4, None)
    assert resolve_gid_index(dict(side, gid_index=7), None, None, "/sys") == (7, None)
    index, warning = resolve_gid_index(side, None, lambda path, default: default, "/s")
    assert index is None and "unknown to the facts and to /s" in warning
    index, warning = resolve_gid_index(dict(side, device=None), None, None, "/sys")
    assert index is None and "without a device" in warning
    bad = {"devices": [{"name": "mlx5_0", "ports": [{"port": 1, "link_layer": "Ethernet", "gid_index": 300}]}]}
    with pytest.raises(OptionError, match="rdma_facts gid_index of mlx5_0 port 1"):
        resolve_gid_index(side, bad, None, "/sys")


def test_endpoint_from_a_side_takes_each_of_its_fields():
    side = {"device": "mlx5_3", "ib_port": 2, "gid_index": 7, "bind": "10.0.3.12", "rail": 1, "role": "server"}
    assert Endpoint.from_side(side, host="node-c", numa_node=1) == ("node-c", "mlx5_3", 2, 7, "10.0.3.12", 1, 1)


# --- gid_index: auto from the commcheck_rdma fact -------------------------------------

def _roce(index, ipv4, netdev="ens1f0"):
    return {"index": index, "gid": "::ffff:%s" % ipv4, "type": "RoCE v2", "netdev": netdev}


def test_the_facts_port_is_found_by_its_number_one_without_a_number_is_port_1():
    facts = {"devices": [{"name": "mlx5_0", "ports": [{"port": "eth"}, {"port": 2, "gid_index": 9},
                                                      {"gid_index": 5}]}]}
    assert endpoint.gid_index_from_facts(facts, "mlx5_0", 2) == (True, 9)
    assert endpoint.gid_index_from_facts(facts, "mlx5_0", 1) == (True, 5)


def test_an_infiniband_port_takes_the_facts_gid_index_and_else_none_whatever_its_gids():
    # discovery chooses an InfiniBand GID only when ib_gid_index asks for one; auto must say the same
    ib_port = {"port": 1, "link_layer": "InfiniBand", "gids": [_roce(3, "10.0.0.1", None)]}
    facts = {"devices": [{"name": "mlx5_0", "ports": [dict(ib_port, gid_index=0)]},
                         {"name": "mlx5_1", "ports": [dict(ib_port, gid_index=None)]}]}
    assert endpoint.gid_index_from_facts(facts, "mlx5_0", 1) == (True, 0)
    assert endpoint.gid_index_from_facts(facts, "mlx5_1", 1) == (True, None)


def test_a_fact_without_a_gid_index_chooses_from_its_gids_as_discovery_does():
    # show_gids-style entries (gid_index), a VLAN's GID at the lowest index, the primary address's GID last
    gids = [dict(_roce(3, "192.168.100.5", "ens1f0.100")), _roce(5, "10.0.0.9"), _roce(7, "10.0.0.5")]
    gids = [dict((("gid_index" if k == "index" else k), v) for k, v in g.items()) for g in gids]
    port = {"port": 1, "link_layer": "Ethernet", "netdev": "ens1f0", "gids": gids,
            "addresses": ["10.0.0.5/24", "10.0.0.9/24"]}
    assert endpoint.gid_index_from_facts({"devices": [{"name": "mlx5_0", "ports": [port]}]}, "mlx5_0", 1) == \
        (True, 7)


def test_a_bad_gid_index_in_the_facts_is_named_in_the_error():
    bad = {"devices": [{"name": "mlx5_0", "ports": [{"port": 1, "link_layer": "Ethernet", "gid_index": 300}]}]}
    with pytest.raises(OptionError) as err:
        endpoint.gid_index_from_facts(bad, "mlx5_0", 1)
    assert str(err.value) == "rdma_facts gid_index of mlx5_0 port 1 300 must be between 0 and 255"


def test_port_gid_index_takes_the_primary_address_then_the_subnet():
    gids = [_roce(3, "10.0.0.9"), _roce(5, "10.1.0.5"), _roce(7, "10.0.0.5")]
    assert endpoint.port_gid_index(gids) == 3
    assert endpoint.port_gid_index(gids, addresses=["10.0.0.5/24", "10.0.0.9/24"]) == 7
    assert endpoint.port_gid_index(gids, addresses=["10.0.0.5/24"], subnet="10.1.0.0/16") == 5


# --- gid_index: auto from sysfs --------------------------------------------------------

class Sysfs(object):
    """A port's sysfs files as a dict, read through ``read(path, default)`` like a transport; counts reads."""

    def __init__(self, root="/s", device="mlx5_0", link_layer="Ethernet", table=32):
        self.base = "%s/class/infiniband/%s/ports/1" % (root.rstrip("/"), device)
        self.files = {self.base + "/link_layer": link_layer + "\n"}
        for index in range(table):
            self.files["%s/gids/%d" % (self.base, index)] = "0000:0000:0000:0000:0000:0000:0000:0000\n"
        self.reads = []

    def gid(self, index, gid, kind="RoCE v2", netdev="ens1f0"):
        self.files["%s/gids/%d" % (self.base, index)] = gid + "\n"
        self.files["%s/gid_attrs/types/%d" % (self.base, index)] = kind + "\n"
        if netdev:
            self.files["%s/gid_attrs/ndevs/%d" % (self.base, index)] = netdev + "\n"
        return self

    def ipv4(self, index, ipv4, netdev="ens1f0"):
        mapped = "0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x" % tuple(int(o) for o in ipv4.split("."))
        return self.gid(index, mapped, "IB/RoCE v1", netdev).gid(index + 1, mapped, "RoCE v2", netdev)

    def link_local(self, index, netdev="ens1f0"):
        return self.gid(index, "fe80:0000:0000:0000:0e42:a1ff:fe00:0001", "IB/RoCE v1", netdev)

    def read(self, path, default=None):
        self.reads.append(path)
        return self.files.get(path, default)


def test_sysfs_entries_are_the_gids_in_use_with_their_type_and_netdev():
    port = Sysfs().link_local(0).gid(2, "fe80:0000:0000:0000:0e42:a1ff:fe00:0002", "RoCE v2", None)
    port.files[port.base + "/gids/4"] = "fe80:0000:0000:0000:0e42:a1ff:fe00:0004\n"    # no type, no ndev file
    assert endpoint.sysfs_gid_entries(port.read, port.base) == [
        {"index": 0, "gid": "fe80:0000:0000:0000:0e42:a1ff:fe00:0001", "type": "IB/RoCE v1", "netdev": "ens1f0"},
        {"index": 2, "gid": "fe80:0000:0000:0000:0e42:a1ff:fe00:0002", "type": "RoCE v2", "netdev": None},
        {"index": 4, "gid": "fe80:0000:0000:0000:0e42:a1ff:fe00:0004", "type": "", "netdev": None}]


def test_sysfs_gids_are_read_past_gaps_up_to_gid_holes_max_empty_slots_in_a_row():
    # addresses removed and added again leave gaps: 20 empty slots, a pod's macvlan GIDs, 32 more, the port's
    # own address; the table ends after GID_HOLES_MAX empty slots in a row past the last GID
    gap = endpoint.GID_HOLES_MAX
    port = Sysfs(table=200).link_local(0).ipv4(22, "192.168.7.3", "macvlan0").ipv4(24 + gap, "10.0.0.5")
    assert endpoint.gid_index_from_sysfs(port.read, "/s", "mlx5_0", 1) == (True, 25 + gap)
    gids_read = [p for p in port.reads if "/gids/" in p]
    assert gids_read[-1].endswith("/gids/%d" % (25 + gap + gap + 1))


def test_a_gid_beyond_perftests_range_is_not_taken():
    port = Sysfs(table=258).gid(256, "0000:0000:0000:0000:0000:ffff:0a00:0005")      # -x takes 0..255
    assert endpoint.gid_index_from_sysfs(port.read, "/s", "mlx5_0", 1) == (True, None)
    assert endpoint.sysfs_gid_entries(port.read, port.base) == []
    assert endpoint.gid_index_from_sysfs(Sysfs(table=8).ipv4(4, "10.0.0.5").read, "/s", "mlx5_0", 1, limit=4) == \
        (True, None)


def test_the_sysfs_root_may_end_with_slashes_or_be_slash():
    port = Sysfs(root="/node-X").link_local(0).ipv4(2, "10.0.0.5")
    assert endpoint.gid_index_from_sysfs(port.read, "/node-X//", "mlx5_0", 1) == (True, 3)
    top = Sysfs(root="").link_local(0).ipv4(2, "10.0.0.5")
    assert endpoint.gid_index_from_sysfs(top.read, "/", "mlx5_0", 1) == (True, 3)


def test_an_infiniband_port_reads_no_gid_table():
    # over kubectl every read is an exec: an InfiniBand port needs no GID index, so its table is not read
    port = Sysfs(link_layer="InfiniBand").link_local(0, None)
    assert endpoint.gid_index_from_sysfs(port.read, "/s", "mlx5_0", 1) == (True, None)
    assert port.reads == [port.base + "/link_layer"]


def test_an_ethernet_port_without_gids_keeps_perftests_default():
    assert endpoint.gid_index_from_sysfs(Sysfs().read, "/s", "mlx5_0", 1) == (True, None)


def test_the_ports_own_netdev_is_the_one_of_gid_0():
    # GID 0 is the port's own link-local GID: its netdev's address wins over a VLAN's at a lower index ...
    own = Sysfs().link_local(0).ipv4(2, "192.168.100.5", "ens1f0.100").ipv4(4, "10.0.0.5")
    assert endpoint.gid_index_from_sysfs(own.read, "/s", "mlx5_0", 1) == (True, 5)
    # ... whatever GID 1 is; and without a GID 0 no netdev is taken for the port's own: the lowest index
    no_v2 = Sysfs().link_local(0).ipv4(2, "192.168.100.5", "ens1f0.100").ipv4(4, "10.0.0.5")
    no_v2.files[no_v2.base + "/gids/1"] = "0000:0000:0000:0000:0000:0000:0000:0000\n"
    assert endpoint.gid_index_from_sysfs(no_v2.read, "/s", "mlx5_0", 1) == (True, 5)
    vlan_first = Sysfs().link_local(1, "ens1f0.100").ipv4(2, "10.0.0.5").ipv4(4, "192.168.100.5", "ens1f0.100")
    assert endpoint.gid_index_from_sysfs(vlan_first.read, "/s", "mlx5_0", 1) == (True, 3)


def test_resolve_reads_the_sides_device_in_sysfs_when_the_facts_do_not_know_it():
    port = Sysfs(device="mlx5_2").link_local(0).ipv4(4, "10.0.0.5")
    side = {"device": "mlx5_2", "ib_port": 1, "gid_index": "auto"}
    assert resolve_gid_index(side, {"devices": []}, port.read, "/s") == (5, None)


def test_resolve_warns_in_words_when_nothing_knows_the_port():
    side = {"device": "mlx5_0", "ib_port": 1, "gid_index": "auto"}
    assert resolve_gid_index(side, None, Sysfs(device="mlx5_9").read, "/s") == (
        None, "gid_index=auto: port mlx5_0/1 is unknown to the facts and to /s; left to perftest's default")
    assert resolve_gid_index(dict(side, device=None), None, None, "/s") == (
        None, "gid_index=auto without a device: left to perftest's default")
