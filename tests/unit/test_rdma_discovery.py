# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""RDMA discovery: GID selection, sysfs trees -> devices/ports/GIDs, findings, cross-checks."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json
import os
import sys

import pytest

from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery import rdma_discovery as rd
from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery import gather
from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery import gid
from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery import topology
from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery import host_facts
from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery import report
from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery import sysfs_values
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_ibdev2netdev import parse_ibdev2netdev
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_ibstat import parse_ibstat
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_ibv_devinfo import parse_ibv_devinfo_full
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_show_gids import parse_show_gids
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands.runner import HostTransport
from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery.sysfs_snapshot import snapshot_from_fs
from ansible_collections.clusterops.commcheck.plugins.filter.commcheck_select_gid import commcheck_select_gid

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.dirname(HERE)
LAB = os.path.join(TESTS, "lab")
SYSFS_FIXTURES = os.path.join(TESTS, "fixtures", "sysfs")
TOOLS = os.path.join(TESTS, "fixtures", "corpus", "rdma_tools")
if LAB not in sys.path:
    sys.path.insert(0, LAB)

import sysfs_tree  # noqa: E402  pylint: disable=wrong-import-position

HEALTHY_HOST = {"memlock": {"soft": "unlimited", "hard": "unlimited"}, "perftest": "/usr/bin/ib_write_bw",
                "in_container": False}


def _read(*parts):
    with open(os.path.join(*parts)) as handle:
        return handle.read()


def _facts(tmp_path, devices, host=None, name="sys", **kwargs):
    root = str(tmp_path / name)
    build = dict((k, kwargs.pop(k)) for k in ("cpus", "modules", "net", "gpus", "unused_gid_style") if k in kwargs)
    sysfs_tree.build_sysfs(root, devices, **build)
    merged = dict(HEALTHY_HOST, sysfs_root=root)
    merged.update(host or {})
    return rd.discover(snapshot_from_fs(root), merged, **kwargs)


def _port(facts, device, port=1):
    dev = next(d for d in facts["devices"] if d["name"] == device)
    return next(p for p in dev["ports"] if p["port"] == port)


def _codes(facts, device=None, port=None):
    return sorted(f["code"] for f in facts["findings"]
                  if (device is None or f["device"] == device) and (port is None or f["port"] == port))


def _gid(index, ip, gid_type="RoCE v2", netdev="eth0"):
    return {"index": index, "gid": "::ffff:%s" % ip if "." in ip else ip, "type": gid_type, "netdev": netdev}


# --- GID selection as a pure function -----------------------------------------

LL = "fe80::e42:a1ff:fe40:29a0"


class TestSelectGid(object):
    def test_roce_v2_ipv4_at_a_non_zero_index(self):
        gids = [_gid(0, LL, "IB/RoCE v1"), _gid(1, LL), _gid(6, "10.1.0.5", "IB/RoCE v1"), _gid(7, "10.1.0.5")]
        sel = gid.select_gid(gids, "Ethernet", netdev="eth0")
        assert sel["gid_index"] == 7 and sel["candidates"] == [7]

    def test_v1_only_or_ipv6_only_gives_none(self):
        assert gid.select_gid([_gid(2, "10.0.0.1", "IB/RoCE v1")], "Ethernet")["gid_index"] is None
        assert gid.select_gid([_gid(0, LL, "IB/RoCE v1"), _gid(1, LL), _gid(3, "fd00::5")],
                              "Ethernet")["gid_index"] is None
        assert gid.select_gid([], "Ethernet")["gid_index"] is None

    def test_several_addresses_subnet_chooses(self):
        gids = [_gid(3, "10.0.0.2"), _gid(5, "192.168.7.2"), _gid(9, "172.16.4.2")]
        assert gid.select_gid(gids, "Ethernet", netdev="eth0")["gid_index"] == 3
        assert gid.select_gid(gids, "Ethernet", subnet="192.168.0.0/16")["gid_index"] == 5
        assert gid.select_gid(gids, "Ethernet", subnet="172.16.4.0/24")["gid_index"] == 9
        none = gid.select_gid(gids, "Ethernet", subnet="10.9.0.0/16")
        assert none["gid_index"] is None and "10.9.0.0/16" in none["reason"]

    def test_netdev_addresses_primary_first(self):
        gids = [_gid(3, "10.0.0.2"), _gid(5, "10.0.0.9")]
        sel = gid.select_gid(gids, "Ethernet", netdev="eth0", addresses=["10.0.0.9/24", "10.0.0.2/24"])
        assert sel["gid_index"] == 5 and sel["candidates"] == [3, 5]
        # addresses the GID table does not have do not empty the choice
        assert gid.select_gid(gids, "Ethernet", addresses=["10.7.7.7/24"])["gid_index"] == 3

    def test_own_netdev_before_vlan_unless_subnet(self):
        gids = [_gid(3, "10.0.0.2", netdev="ens1f0"), _gid(5, "10.100.0.2", netdev="ens1f0.100")]
        assert gid.select_gid(gids, "Ethernet", netdev="ens1f0")["gid_index"] == 3
        assert gid.select_gid(gids, "Ethernet", netdev="ens1f0", subnet="10.100.0.0/24")["gid_index"] == 5

    def test_infiniband_needs_none_unless_asked(self):
        gids = [{"index": 0, "gid": "fe80::b83f:d203:a:1", "type": "IB/RoCE v1", "netdev": None}]
        assert gid.select_gid(gids, "InfiniBand")["gid_index"] is None
        assert gid.select_gid(gids, "InfiniBand", ib_gid_index=0)["gid_index"] == 0
        assert gid.select_gid(gids, "InfiniBand", ib_gid_index=3)["gid_index"] is None

    def test_tool_spellings_are_accepted(self):
        gids = [{"index": "4", "gid": "0000:0000:0000:0000:0000:ffff:0a00:0001", "type": "v2"}]
        assert gid.select_gid(gids, "Ethernet")["gid_index"] == 4

    def test_filter_wraps_the_pure_function(self):
        port = {"link_layer": "Ethernet", "netdev": "eth0",
                "gids": [_gid(1, LL), _gid(3, "10.0.0.2"), _gid(5, "192.168.7.2")]}
        assert commcheck_select_gid(port) == 3
        assert commcheck_select_gid(port, subnet="192.168.7.0/24") == 5
        assert commcheck_select_gid(port["gids"], link_layer="InfiniBand") is None
        from ansible.errors import AnsibleFilterError
        with pytest.raises(AnsibleFilterError):
            commcheck_select_gid(port, subnet="not-a-net")
        with pytest.raises(AnsibleFilterError):
            commcheck_select_gid(port, subnet="fd00::/64")
        with pytest.raises(AnsibleFilterError):
            commcheck_select_gid("mlx5_0")


# --- small parsers ----------------------------------------------------------------

@pytest.mark.parametrize("text,state", [("4: ACTIVE", "ACTIVE"), ("1: DOWN", "DOWN"), ("2: INIT", "INIT"),
                                        ("3: ARMED", "ARMED"), ("4", "ACTIVE"), ("", None), (None, None)])
def test_parse_state(text, state):
    assert sysfs_values.parse_state(text) == state


@pytest.mark.parametrize("text,phys", [("5: LinkUp", "LinkUp"), ("2: Polling", "Polling"),
                                       ("3: Disabled", "Disabled"), ("7: Phy Test", "Phy Test"),
                                       ("9: <unknown>", None), ("2", "Polling")])
def test_parse_phys_state(text, phys):
    assert sysfs_values.parse_phys_state(text) == phys


@pytest.mark.parametrize("text,rate", [("100 Gb/sec (4X EDR)", 100), ("2.5 Gb/sec (1X)", 2.5),
                                       ("400 Gb/sec (4X NDR)", 400), ("53.125 Gb/sec (1X HDR)", 53.125),
                                       ("bogus", None), (None, None)])
def test_parse_rate(text, rate):
    assert sysfs_values.parse_rate(text) == rate


def test_parse_ints_gids_and_types():
    assert sysfs_values.parse_int("0x1a") == 26 and sysfs_values.parse_int("12") == 12 and sysfs_values.parse_int("-1") == -1
    assert sysfs_values.parse_int("N/A (no PMA)") is None
    assert gid.normalize_gid("::ffff:10.0.0.1") == "0000:0000:0000:0000:0000:ffff:0a00:0001"
    assert gid.normalize_gid("Invalid argument") is None
    assert gid.gid_ipv4("0000:0000:0000:0000:0000:ffff:c0a8:0105") == "192.168.1.5"
    assert gid.gid_ipv4("fe80:0000:0000:0000:0e42:a1ff:fe40:29a0") is None
    assert gid.normalize_gid_type("RoCE v2") == "RoCE v2" and gid.normalize_gid_type("IB/RoCE v1") == "IB/RoCE v1"
    assert gid.normalize_gid_type("Invalid argument") is None


def test_parse_memlock_and_ip_and_netns():
    limits = ("Limit                     Soft Limit           Hard Limit           Units\n"
              "Max locked memory         65536                65536                bytes\n")
    assert host_facts.parse_memlock(limits) == {"soft": 65536, "hard": 65536}
    assert host_facts.parse_memlock("Max locked memory         unlimited            unlimited            bytes") == {
        "soft": "unlimited", "hard": "unlimited"}
    assert host_facts.parse_memlock("") is None
    js = json.dumps([{"ifname": "eth0", "addr_info": [
        {"family": "inet", "local": "10.0.0.9", "prefixlen": 24, "secondary": True},
        {"family": "inet", "local": "10.0.0.2", "prefixlen": 24}]}, {"ifname": "lo", "addr_info": []}])
    assert host_facts.parse_ip_addr(js) == {"eth0": ["10.0.0.2/24", "10.0.0.9/24"], "lo": []}
    text = ("2: eth0    inet 10.0.0.9/24 brd 10.0.0.255 scope global secondary eth0\\       valid_lft forever\n"
            "2: eth0    inet 10.0.0.2/24 brd 10.0.0.255 scope global eth0\\       valid_lft forever\n"
            "5: net1@if9    inet 192.168.5.3/24 scope global net1\n")
    assert host_facts.parse_ip_addr(text) == {"eth0": ["10.0.0.2/24", "10.0.0.9/24"], "net1": ["192.168.5.3/24"]}
    assert host_facts.parse_ip_addr("Object \"addr\" is unknown") is None
    assert host_facts.parse_netns_mode("Y") == "shared" and host_facts.parse_netns_mode("N") == "exclusive"
    assert host_facts.parse_netns_mode("netns exclusive copy-on-fork on") == "exclusive"


# --- trees -> devices, ports, GIDs, findings ------------------------------------

def test_roce_ipv4_gids_at_non_zero_indexes_and_unused_slots(tmp_path):
    gids = [{"index": 0, "gid": LL, "type": "IB/RoCE v1"}, {"index": 1, "gid": LL, "type": "RoCE v2"},
            {"index": 4, "gid": "10.20.0.7", "type": "IB/RoCE v1"}, {"index": 5, "gid": "10.20.0.7"}]
    for style in ("unreadable", "einval_text", "missing"):
        facts = _facts(tmp_path, [{"name": "mlx5_0", "hca_type": "MT4125", "fw_ver": "22.39.1002",
                                   "board_id": "MT_0000000359", "node_guid": "b83f:d203:002a:1a1c",
                                   "ports": [{"netdev": "ens6f0np0", "gids": gids, "gid_tbl_len": 255,
                                              "rate_gbps": 100}]}],
                       name=style, net={"ens6f0np0": {"mtu": 9000}}, unused_gid_style=style)
        dev = facts["devices"][0]
        assert (dev["name"], dev["hca_type"], dev["fw_ver"], dev["board_id"], dev["node_guid"]) == (
            "mlx5_0", "MT4125", "22.39.1002", "MT_0000000359", "b83f:d203:002a:1a1c")
        port = _port(facts, "mlx5_0")
        assert [g["index"] for g in port["gids"]] == [0, 1, 4, 5]       # 251 unused slots skipped
        assert port["gids"][3] == {"index": 5, "gid": "0000:0000:0000:0000:0000:ffff:0a14:0007",
                                   "type": "RoCE v2", "netdev": "ens6f0np0", "ipv4": "10.20.0.7"}
        assert port["gids"][0]["ipv4"] is None
        assert (port["state"], port["phys_state"], port["link_layer"], port["rate_gbps"]) == (
            "ACTIVE", "LinkUp", "Ethernet", 100)
        assert (port["lid"], port["sm_lid"], port["netdev"], port["gid_index"]) == (0, 0, "ens6f0np0", 5)
        assert port["ipv4"] == ["10.20.0.7"]
        assert facts["gid_index"] == {"mlx5_0/1": 5}
        assert facts["findings"] == []


def test_bond_device(tmp_path):
    facts = _facts(tmp_path, [{"name": "mlx5_bond_0", "hca_type": "MT41692",
                               "ports": [{"netdev": "bond0", "ipv4": "10.96.83.26", "rate_gbps": 200}]}],
                   net={"bond0": {"slaves": ["ens3f0np0", "ens3f1np1"], "mtu": 9000}})
    dev = facts["devices"][0]
    assert dev["bond"]["netdev"] == "bond0" and dev["bond"]["slaves"] == ["ens3f0np0", "ens3f1np1"]
    port = _port(facts, "mlx5_bond_0")
    assert port["netdev"] == "bond0" and port["gid_index"] == 3
    assert _codes(facts) == ["bond_device"]


def test_bond_without_gid_table_falls_back_to_the_pci_netdev_master(tmp_path):
    root = str(tmp_path / "sys")
    sysfs_tree.build_sysfs(root, [{"name": "mlx5_bond_0", "ports": [{"netdev": "bond0", "gids": []}]}],
                           net={"bond0": {"slaves": ["ens3f0np0", "ens3f1np1"]}})
    facts = rd.discover(snapshot_from_fs(root), dict(HEALTHY_HOST))
    port = _port(facts, "mlx5_bond_0")
    assert port["netdev"] == "bond0" and port["netdev_source"] == "bond"
    assert "no_roce_v2_gid" in _codes(facts)


def test_bond_slave_down_is_reported(tmp_path):
    facts = _facts(tmp_path, [{"name": "mlx5_bond_0", "ports": [{"netdev": "bond0", "ipv4": "10.0.0.3"}]}],
                   net={"bond0": {"slaves": ["ens3f0np0", "ens3f1np1"], "mtu": 9000},
                        "ens3f1np1": {"operstate": "down"}})
    assert _codes(facts) == ["bond_device", "bond_slave_down"]


def test_infiniband_ports(tmp_path):
    facts = _facts(tmp_path, [
        {"name": "mlx5_0", "hca_type": "MT4129", "ports": [
            {"link_layer": "InfiniBand", "netdev": "ib0", "lid": 0x1a, "sm_lid": 1, "rate_gbps": 400}]},
        {"name": "mlx4_0", "hca_type": "MT4099", "ports": [
            {"port": 1, "link_layer": "InfiniBand", "netdev": "ib1", "lid": 7, "sm_lid": 1, "rate_gbps": 40},
            {"port": 2, "link_layer": "InfiniBand", "netdev": "ib2", "lid": 8, "sm_lid": 1, "rate_gbps": 40}]},
    ])
    port = _port(facts, "mlx5_0")
    assert (port["lid"], port["sm_lid"], port["netdev"], port["gid_index"], port["link_layer"]) == (
        26, 1, "ib0", None, "InfiniBand")
    assert len(port["gids"]) == 1 and port["gids"][0]["type"] == "IB/RoCE v1"
    assert port["gids"][0]["gid"].startswith("fe80:0000:0000:0000:")
    assert _port(facts, "mlx4_0", 1)["netdev"] == "ib1" and _port(facts, "mlx4_0", 2)["netdev"] == "ib2"
    assert facts["findings"] == []
    assert facts["gid_index"] == {"mlx4_0/1": None, "mlx4_0/2": None, "mlx5_0/1": None}
    facts = _facts(tmp_path, [{"name": "mlx5_0", "ports": [{"link_layer": "InfiniBand", "lid": 3, "sm_lid": 1}]}],
                   name="asked", ib_gid_index=0)
    assert _port(facts, "mlx5_0")["gid_index"] == 0


def test_ports_down_polling_disabled_init(tmp_path):
    facts = _facts(tmp_path, [
        {"name": "mlx5_0", "ports": [{"link_layer": "InfiniBand", "state": "DOWN", "phys_state": "Polling",
                                      "rate_gbps": 40}]},
        {"name": "mlx5_1", "ports": [{"netdev": "eth1", "ipv4": "10.0.1.2", "state": "DOWN",
                                      "phys_state": "Disabled", "rate_gbps": 40}]},
        {"name": "mlx5_2", "ports": [{"link_layer": "InfiniBand", "state": "INIT", "phys_state": "LinkUp",
                                      "lid": 0, "sm_lid": 0}]},
        {"name": "mlx5_3", "ports": [{"link_layer": "InfiniBand", "state": "ARMED", "lid": 4, "sm_lid": 1}]},
    ], net={"eth1": {"mtu": 9000}})
    assert _port(facts, "mlx5_0")["state"] == "DOWN" and _port(facts, "mlx5_0")["phys_state"] == "Polling"
    assert _codes(facts, "mlx5_0") == ["phys_state_polling", "port_down"]
    assert _codes(facts, "mlx5_1") == ["port_down"]
    assert "ip link set eth1 up" in next(f["fix"] for f in facts["findings"] if f["device"] == "mlx5_1")
    assert _port(facts, "mlx5_1")["gid_index"] == 3          # a down port still has its GID
    assert _codes(facts, "mlx5_2") == ["port_not_active"]
    assert "subnet manager" in next(f["message"] for f in facts["findings"] if f["device"] == "mlx5_2")
    assert _codes(facts, "mlx5_3") == ["port_not_active"]
    assert all(f["severity"] == "error" for f in facts["findings"])
    assert facts["summary"] == {"devices": 4, "ports": 4, "active_ports": 0, "errors": 5, "warnings": 0,
                                "infos": 0, "worst": "error"}


def test_roce_without_ipv4(tmp_path):
    facts = _facts(tmp_path, [{"name": "mlx5_0", "ports": [{"netdev": "eth0", "ipv6": ["fd00::5"]}]},
                              {"name": "mlx5_1", "ports": [{"netdev": "eth1", "state": "DOWN"}]}],
                   net={"eth0": {"mtu": 9000}, "eth1": {"mtu": 9000}})
    f0 = [f for f in facts["findings"] if f["device"] == "mlx5_0"]
    assert [(f["code"], f["severity"]) for f in f0] == [("no_roce_v2_gid", "error")]
    assert ("no_roce_v2_gid", "warning") in [(f["code"], f["severity"]) for f in facts["findings"]
                                             if f["device"] == "mlx5_1"]


def test_subnet_choice_between_addresses(tmp_path):
    devices = [{"name": "mlx5_0", "ports": [{"netdev": "eth0", "ipv4": ["10.0.0.2/24", "192.168.50.2/24"]}]}]
    facts = _facts(tmp_path, devices, net={"eth0": {"mtu": 9000}})
    assert _port(facts, "mlx5_0")["gid_index"] == 3
    assert _codes(facts) == ["multiple_roce_v2_gids"]
    facts = _facts(tmp_path, devices, name="s2", net={"eth0": {"mtu": 9000}}, subnet="192.168.50.0/24")
    assert _port(facts, "mlx5_0")["gid_index"] == 5 and facts["findings"] == []
    facts = _facts(tmp_path, devices, name="s3", net={"eth0": {"mtu": 9000}}, subnet="172.16.0.0/12")
    assert _port(facts, "mlx5_0")["gid_index"] is None
    assert _codes(facts) == ["no_roce_v2_gid"] and "172.16.0.0/12" in facts["findings"][0]["message"]
    # addresses from `ip` choose the primary one
    facts = _facts(tmp_path, devices, name="s4", net={"eth0": {"mtu": 9000}},
                   addresses={"eth0": ["192.168.50.2/24", "10.0.0.2/24"]})
    assert _port(facts, "mlx5_0")["gid_index"] == 5


def test_gid_address_mismatch_with_ip(tmp_path):
    facts = _facts(tmp_path, [{"name": "mlx5_0", "ports": [{"netdev": "eth0", "ipv4": "10.0.0.2"}]}],
                   net={"eth0": {"mtu": 9000}}, addresses={"eth0": ["10.9.9.9/24"]})
    assert _port(facts, "mlx5_0")["gid_index"] == 3
    assert _codes(facts) == ["gid_address_mismatch"]


def test_rates(tmp_path):
    devices = [{"name": "mlx5_%d" % i, "hca_type": "MT4129",
                "ports": [{"link_layer": "InfiniBand", "lid": i + 1, "sm_lid": 1, "rate_gbps": rate}]}
               for i, rate in enumerate([400, 400, 200, 400])]
    devices.append({"name": "mlx5_9", "hca_type": "MT4129", "ports": [
        {"link_layer": "InfiniBand", "state": "DOWN", "phys_state": "Polling", "rate_gbps": 40}]})
    facts = _facts(tmp_path, devices, expected_rate_gbps=400)
    assert [(f["code"], f["device"]) for f in facts["findings"] if f["code"].startswith("rate")] == [
        ("rate_below_expected", "mlx5_2")]
    facts = _facts(tmp_path, devices, name="noexp")
    assert [(f["code"], f["device"]) for f in facts["findings"] if f["code"].startswith("rate")] == [
        ("rate_inconsistent", "mlx5_2")]


def test_no_rdma_devices(tmp_path):
    root = tmp_path / "sys"
    (root / "class" / "net" / "eth0").mkdir(parents=True)
    facts = rd.discover(snapshot_from_fs(str(root)), dict(HEALTHY_HOST, sysfs_root=str(root)))
    assert facts["devices"] == [] and facts["gid_index"] == {}
    assert [(f["severity"], f["code"]) for f in facts["findings"]] == [("error", "no_rdma_devices")]
    assert rd.discover({}, dict(HEALTHY_HOST))["findings"][0]["code"] == "no_rdma_devices"
    # exclusive netns mode and nothing here: that is why
    facts = rd.discover({"module/ib_core/parameters/netns_mode": "N"}, dict(HEALTHY_HOST, in_container=True))
    assert _codes(facts) == ["no_rdma_devices", "rdma_netns_exclusive"]


def test_netns_exclusive_only_when_it_matters(tmp_path):
    devices = [{"name": "mlx5_0", "ports": [{"link_layer": "InfiniBand", "lid": 1, "sm_lid": 1}]}]
    mods = {"ib_core": {"netns_mode": "N"}}
    assert _facts(tmp_path, devices, modules=mods)["findings"] == []
    facts = _facts(tmp_path, devices, name="pod", modules=mods, host={"in_container": True})
    assert [(f["severity"], f["code"]) for f in facts["findings"]] == [("info", "rdma_netns_exclusive")]
    facts = _facts(tmp_path, devices, name="rdmatool", host={"in_container": True, "netns_mode": "exclusive"})
    assert _codes(facts) == ["rdma_netns_exclusive"]


def test_host_findings(tmp_path):
    devices = [{"name": "mlx5_0", "ports": [{"link_layer": "InfiniBand", "lid": 1, "sm_lid": 1}]}]
    facts = _facts(tmp_path, devices, cpus=["performance", "powersave", "powersave", "ondemand"],
                   gpus=8, host={"memlock": {"soft": 65536, "hard": 65536}, "perftest": None})
    by_code = dict((f["code"], f) for f in facts["findings"])
    assert sorted(by_code) == ["cpu_governor_not_performance", "gpudirect_module_missing", "memlock_limited",
                               "perftest_missing"]
    assert "3 of 4 CPUs" in by_code["cpu_governor_not_performance"]["message"]
    assert "64 KiB" in by_code["memlock_limited"]["message"]
    assert "Couldn't allocate MR" in by_code["memlock_limited"]["message"]
    assert all(f["severity"] == "warning" for f in facts["findings"])
    assert facts["host"]["cpu_governors"] == {"performance": 1, "powersave": 2, "ondemand": 1}
    assert len(facts["host"]["gpus"]["pci"]) == 8
    # healthy: unlimited memlock, performance, peermem loaded, perftest there
    facts = _facts(tmp_path, devices, name="ok", cpus=4, gpus=8, modules={"nvidia": {}, "nvidia_peermem": {}})
    assert facts["findings"] == [] and facts["host"]["gpudirect_module"] == "nvidia_peermem"
    # a large but finite memlock is only info
    facts = _facts(tmp_path, devices, name="big", host={"memlock": {"soft": 64 << 30, "hard": 64 << 30}})
    assert [(f["severity"], f["code"]) for f in facts["findings"]] == [("info", "memlock_limited")]
    # GPUs seen by the driver only (no PCI data), e.g. /proc/driver/nvidia in a pod
    facts = _facts(tmp_path, devices, name="drv", host={"gpus": {"evidence": ["/proc/driver/nvidia"]}})
    assert _codes(facts) == ["gpudirect_module_missing"]


def test_netdev_down_and_small_mtu(tmp_path):
    facts = _facts(tmp_path, [{"name": "mlx5_0", "ports": [{"netdev": "eth0", "ipv4": "10.0.0.2"}]}],
                   net={"eth0": {"operstate": "down", "mtu": 1500}})
    assert _codes(facts) == ["netdev_down", "roce_mtu_small"]
    assert "1024" in next(f["message"] for f in facts["findings"] if f["code"] == "roce_mtu_small")


def test_error_counters_are_info(tmp_path):
    facts = _facts(tmp_path, [{"name": "mlx5_0", "ports": [{"link_layer": "InfiniBand", "lid": 1, "sm_lid": 1,
                                                            "counters": {"symbol_error": 12, "link_downed": 3}}]}])
    assert [(f["severity"], f["code"]) for f in facts["findings"]] == [("info", "port_error_counters")]
    assert _port(facts, "mlx5_0")["counters"]["symbol_error"] == 12


def test_mixed_roce_and_ib_some_down(tmp_path):
    """The kind of tree the issue's acceptance check uses."""
    facts = _facts(tmp_path, [
        {"name": "mlx5_0", "ports": [{"link_layer": "InfiniBand", "netdev": "ib0", "lid": 5, "sm_lid": 1,
                                      "rate_gbps": 200}]},
        {"name": "mlx5_1", "ports": [{"link_layer": "InfiniBand", "netdev": "ib1", "state": "DOWN",
                                      "phys_state": "Polling", "rate_gbps": 40}]},
        {"name": "mlx5_2", "ports": [{"netdev": "ens2f0np0", "ipv4": "10.1.2.3/24", "rate_gbps": 100}]},
        {"name": "mlx5_3", "ports": [{"netdev": "ens2f1np1", "ipv4": "10.1.3.3/24", "state": "DOWN",
                                      "phys_state": "Disabled", "rate_gbps": 100}]},
    ], net={"ens2f0np0": {"mtu": 9000}, "ens2f1np1": {"mtu": 9000, "operstate": "down"}})
    rows = [(d["name"], p["state"], p["phys_state"], p["link_layer"], p["rate_gbps"], p["netdev"], p["gid_index"])
            for d in facts["devices"] for p in d["ports"]]
    assert rows == [
        ("mlx5_0", "ACTIVE", "LinkUp", "InfiniBand", 200, "ib0", None),
        ("mlx5_1", "DOWN", "Polling", "InfiniBand", 40, "ib1", None),
        ("mlx5_2", "ACTIVE", "LinkUp", "Ethernet", 100, "ens2f0np0", 3),
        ("mlx5_3", "DOWN", "Disabled", "Ethernet", 100, "ens2f1np1", 3),
    ]
    assert [(f["severity"], f["code"], f["device"], f["port"]) for f in facts["findings"]] == [
        ("error", "phys_state_polling", "mlx5_1", 1),
        ("error", "port_down", "mlx5_1", 1),
        ("error", "port_down", "mlx5_3", 1),
    ]


# --- real layouts from the corpus ---------------------------------------------------

def test_procfs_ttar_tree(tmp_path):
    root = str(tmp_path / "sys")
    sysfs_tree.extract_ttar(_read(SYSFS_FIXTURES, "procfs_fixtures_class_infiniband.ttar.txt"), root)
    facts = rd.discover(snapshot_from_fs(root), dict(HEALTHY_HOST))
    assert [d["name"] for d in facts["devices"]] == ["hfi1_0", "mlx4_0", "mlx5_0"]
    hfi = facts["devices"][0]
    assert hfi["board_id"].startswith("HPE 100Gb 1-port OP101") and hfi["fw_ver"] == "1.27.0"
    assert hfi["hca_type"] is None
    assert [(p["port"], p["state"], p["rate_gbps"], p["link_layer"]) for p in facts["devices"][1]["ports"]] == [
        (1, "ACTIVE", 40, "InfiniBand"), (2, "ACTIVE", 40, "InfiniBand")]
    mlx5 = facts["devices"][2]
    assert (mlx5["hca_type"], mlx5["fw_ver"], mlx5["node_guid"]) == ("MT4118", "14.28.2006", "0a7f:bc12:45ef:d23b")
    assert mlx5["ports"][0]["rate_gbps"] == 25
    assert mlx5["ports"][0]["counters"]["link_downed"] == 0
    # like-for-like rates: hfi1 and mlx4/mlx5 differ in type, so no rate finding
    assert facts["findings"] == []


def test_h100_tree(tmp_path):
    root = str(tmp_path / "sys")
    sysfs_tree.build_from_head_dump(_read(SYSFS_FIXTURES, "gpud_sys_class_infiniband_h100_attrs.txt"), root)
    facts = rd.discover(snapshot_from_fs(root), dict(HEALTHY_HOST), expected_rate_gbps=400)
    names = [d["name"] for d in facts["devices"]]
    assert names == ["mlx5_0", "mlx5_1", "mlx5_4", "mlx5_5", "mlx5_6", "mlx5_7", "mlx5_8", "mlx5_9",
                     "mlx5_bond_0"]
    ib = [p for d in facts["devices"][:8] for p in d["ports"]]
    assert {(p["state"], p["phys_state"], p["link_layer"], p["rate_gbps"]) for p in ib} == {
        ("ACTIVE", "LinkUp", "InfiniBand", 400)}
    bond = facts["devices"][8]
    assert (bond["hca_type"], bond["fw_ver"], bond["ports"][0]["rate_gbps"]) == ("MT41692", "32.38.3056", 200)
    # the fixture has no GID tables: the RoCE bond port has no GID to test with, and is slower than asked
    assert _codes(facts, "mlx5_bond_0") == ["no_netdev", "no_roce_v2_gid", "rate_below_expected"]
    assert _codes(facts, "mlx5_0") == []


# --- cross-check with real tool outputs of one CX4-Lx host -------------------------

def _cx4lx_tree(tmp_path, down="mlx5_1"):
    """The host whose show_gids / ibdev2netdev / ibv_devinfo outputs are in the corpus."""
    gids = parse_show_gids(_read(TOOLS, "show_gids_4dev_cx4lx_12gids.txt"))
    devices = []
    for num in range(4):
        name = "mlx5_%d" % num
        netdev = "eth0%d" % (num + 1)
        mine = [{"index": g["gid_index"], "gid": g["gid"], "netdev": g["netdev"],
                 "type": "RoCE v2" if g["version"] == "v2" else "IB/RoCE v1"} for g in gids if g["device"] == name]
        devices.append({"name": name, "hca_type": "MT4117", "fw_ver": "14.28.2006" if num < 2 else "14.32.1010",
                        "ports": [{"netdev": netdev, "gids": mine, "rate_gbps": 25,
                                   "state": "DOWN" if name == down else "ACTIVE"}]})
    root = str(tmp_path / "cx4lx")
    sysfs_tree.build_sysfs(root, devices, net=dict(("eth0%d" % n, {"mtu": 1500}) for n in range(1, 5)))
    return snapshot_from_fs(root)


def _tools():
    return {
        "ibdev2netdev": parse_ibdev2netdev(_read(TOOLS, "ibdev2netdev_roce_one_down.txt")),
        "ibv_devinfo": parse_ibv_devinfo_full(_read(TOOLS, "ibv_devinfo_4dev_roce_port_down.txt"))["devices"],
        "show_gids": parse_show_gids(_read(TOOLS, "show_gids_4dev_cx4lx_12gids.txt")),
    }


def test_cross_check_agrees_with_the_real_tools(tmp_path):
    facts = rd.discover(_cx4lx_tree(tmp_path), dict(HEALTHY_HOST), tools=_tools())
    assert "tool_mismatch" not in _codes(facts)
    assert [p["gid_index"] for d in facts["devices"] for p in d["ports"]] == [3, None, 3, None]
    assert _port(facts, "mlx5_0")["active_mtu"] == 1024
    errors = [(f["code"], f["device"]) for f in facts["findings"] if f["severity"] == "error"]
    # mlx5_1 is down; mlx5_3 is ACTIVE with only link-local GIDs (no IPv4)
    assert errors == [("port_down", "mlx5_1"), ("no_roce_v2_gid", "mlx5_3")]


def test_cross_check_reports_disagreement(tmp_path):
    facts = rd.discover(_cx4lx_tree(tmp_path, down="mlx5_2"), dict(HEALTHY_HOST), tools=_tools())
    mismatches = [(f["device"], f["message"]) for f in facts["findings"] if f["code"] == "tool_mismatch"]
    assert {pair[0] for pair in mismatches} == {"mlx5_1", "mlx5_2"}
    assert any("ibv_devinfo says mlx5_2/1 state is PORT_DOWN; sysfs says ACTIVE" in m
               or "ibv_devinfo says mlx5_1/1 state is PORT_DOWN; sysfs says ACTIVE" in m for m in dict(mismatches).values())
    # show_gids lists a GID our table lacks
    tools = _tools()
    tools["show_gids"] = tools["show_gids"] + [{"device": "mlx5_3", "port": 1, "gid_index": 2,
                                                "gid": "::ffff:10.0.0.3", "ipv4": "10.0.0.3", "version": "v2",
                                                "netdev": "eth04"}]
    facts = rd.discover(_cx4lx_tree(tmp_path), dict(HEALTHY_HOST), tools=tools)
    assert [f["device"] for f in facts["findings"] if f["code"] == "tool_mismatch"] == ["mlx5_3"]


def test_cross_check_ibstat_states(tmp_path):
    cas = parse_ibstat(_read(TOOLS, "ibstat_12ca_roce_some_down_polling.txt"))
    devices = []
    for ca in cas:
        port = ca["ports"][0]
        devices.append({"name": ca["name"], "hca_type": ca["ca_type"], "ports": [{
            "netdev": "eth_" + ca["name"], "ipv4": "10.0.%d.2" % len(devices), "rate_gbps": port["rate"],
            "state": port["state"].upper(), "phys_state": port["phys_state"]}]})
    root = str(tmp_path / "sys")
    sysfs_tree.build_sysfs(root, devices)
    facts = rd.discover(snapshot_from_fs(root), dict(HEALTHY_HOST), tools={"ibstat": cas})
    assert "tool_mismatch" not in _codes(facts)
    assert _codes(facts, "mlx5_11") == ["phys_state_polling", "port_down"]
    assert _codes(facts, "mlx5_5") == ["port_down"]
    cas[0]["ports"][0]["rate"] = 200
    facts = rd.discover(snapshot_from_fs(root), dict(HEALTHY_HOST), tools={"ibstat": cas})
    assert [f["device"] for f in facts["findings"] if f["code"] == "tool_mismatch"] == ["mlx5_0"]


def test_verbs_cannot_see_the_devices(tmp_path):
    empty = parse_ibv_devinfo_full(_read(TOOLS, "ibv_devinfo_no_ib_devices_no_config_dir.txt"))["devices"]
    facts = rd.discover(_cx4lx_tree(tmp_path), dict(HEALTHY_HOST), tools={"ibv_devinfo": empty})
    assert [f["severity"] for f in facts["findings"] if f["code"] == "verbs_devices_missing"] == ["error"]
    # no devices anywhere: consistent, nothing to say about verbs
    facts = rd.discover({}, dict(HEALTHY_HOST), tools={"ibv_devinfo": []})
    assert _codes(facts) == ["no_rdma_devices"]


# --- table and records ---------------------------------------------------------

def test_table_and_records(tmp_path):
    facts = _facts(tmp_path, [
        {"name": "mlx5_0", "ports": [{"netdev": "ens1f0np0", "ipv4": "10.0.0.2", "rate_gbps": 400}]},
        {"name": "mlx5_1", "ports": [{"link_layer": "InfiniBand", "state": "DOWN", "phys_state": "Polling",
                                      "netdev": "ib0", "rate_gbps": 40}]}],
        net={"ens1f0np0": {"mtu": 9000}})
    empty = rd.discover({}, dict(HEALTHY_HOST))
    lines = report.discovery_table({"node2": facts, "node10": empty, "node1": facts})
    assert lines[0].split() == ["HOST", "DEVICE", "PORT", "STATE", "PHYS", "RATE", "LINK", "NETDEV", "GID"]
    assert lines[1].split() == ["node1", "mlx5_0", "1", "ACTIVE", "LinkUp", "400G", "Ethernet", "ens1f0np0", "3"]
    assert lines[2].split() == ["node1", "mlx5_1", "1", "DOWN", "Polling", "40G", "InfiniBand", "ib0", "-"]
    assert lines[5].split() == ["node10", "(no", "RDMA", "devices)"]
    assert "Findings: 5 error(s), 0 warning(s), 0 info" in lines
    assert lines[-1].startswith("ERROR   node10 no_rdma_devices: ")
    assert any(line.startswith("ERROR   node1 mlx5_1/1 port_down: mlx5_1 port 1 is DOWN") for line in lines)
    assert len(report.discovery_table(facts, findings=False)) == 3
    assert len(report.discovery_table({"n": facts}, min_severity="error")) == 3 + 2 + 2
    with pytest.raises(ValueError, match="min_severity must be one of"):
        report.discovery_table({"n": facts}, min_severity="loud")
    with pytest.raises(ValueError, match="expected a dict"):
        report.discovery_table(["n"])

    records = report.discovery_records("node1", facts)
    assert records[0]["kind"] == "discover" and records[0]["verdict"] == "fail"
    assert records[0]["metrics"]["ports_detail"][0]["gid_index"] == 3
    assert [(r["kind"], r["params"]["code"], r["verdict"]) for r in records[1:]] == [
        ("finding", "phys_state_polling", "fail"), ("finding", "port_down", "fail")]
    assert all(r["host"] == "node1" and r["peer"] is None for r in records)
    from ansible_collections.clusterops.commcheck.plugins.module_utils.records.history import normalize_records
    normalized = normalize_records(records)[0]
    assert len(normalized) == 3


# --- collect() through a transport ----------------------------------------------

class _Recorder(HostTransport):
    """The host transport, recording every argv it runs."""

    def __init__(self):
        HostTransport.__init__(self)
        self.argvs = []

    def run(self, argv, timeout, env=None, cwd=None, capture=None):
        self.argvs.append(list(argv))
        return HostTransport.run(self, argv, timeout, env=env, cwd=cwd, capture=capture)


def test_collect_on_a_tree_runs_no_tools_by_default(tmp_path):
    root = str(tmp_path / "sys")
    sysfs_tree.build_sysfs(root, [{"name": "mlx5_0", "ports": [{"netdev": "eth0", "ipv4": "10.0.0.2"}]}])
    transport = _Recorder()
    facts = rd.collect(transport, sysfs_root=root)
    # no tool runs; only the host's network namespace is read (the machine identity, inventory_checks)
    assert [argv[1:] for argv in transport.argvs] in ([], [["/proc/self/ns/net"]]), transport.argvs
    assert facts["sources"]["addresses"] == "gids" and facts["sources"]["sysfs"] == "fs"
    assert _port(facts, "mlx5_0")["gid_index"] == 3
    assert facts["host"]["memlock"] is not None
    transport = _Recorder()
    facts = rd.collect(transport, sysfs_root=root, tools=True, address_source="ip")
    ran = [argv[0].rsplit("/", 1)[-1] for argv in transport.argvs]
    assert all(isinstance(a, list) for a in transport.argvs)
    if transport.which("ip"):
        assert "ip" in ran
        assert facts["sources"]["addresses"] in ("ip", "gids")


def test_collect_on_this_machine():
    facts = rd.collect(HostTransport(), sysfs_root="/sys")
    assert isinstance(facts["devices"], list)
    if not os.path.isdir("/sys/class/infiniband") or not os.listdir("/sys/class/infiniband"):
        assert "no_rdma_devices" in _codes(facts)


# --- trees laid out differently from the builder's ---------------------------------

def _write(root, rel, text):
    path = os.path.join(root, rel)
    if not os.path.isdir(os.path.dirname(path)):
        os.makedirs(os.path.dirname(path))
    with open(path, "w") as handle:
        handle.write(text)


def test_hand_written_flat_tree_without_symlinks(tmp_path):
    """Plain directories, no device links, no gid_attrs for IB, counters missing: still right."""
    root = str(tmp_path / "sys")
    ib = "class/infiniband/mlx5_4/"
    _write(root, ib + "hca_type", "MT4123\n")
    _write(root, ib + "ports/1/state", "4: ACTIVE\n")
    _write(root, ib + "ports/1/phys_state", "5: LinkUp\n")
    _write(root, ib + "ports/1/rate", "200 Gb/sec (4X HDR)\n")
    _write(root, ib + "ports/1/link_layer", "InfiniBand\n")
    _write(root, ib + "ports/1/lid", "0x2f\n")
    _write(root, ib + "ports/1/sm_lid", "0x1\n")
    _write(root, ib + "ports/1/gids/0", "fe80:0000:0000:0000:b83f:d203:00a1:b2c4\n")
    _write(root, ib + "ports/1/gids/1", "0000:0000:0000:0000:0000:0000:0000:0000\n")
    roce = "class/infiniband/rocep59s0f0/"
    _write(root, roce + "ports/1/state", "1: DOWN\n")
    _write(root, roce + "ports/1/phys_state", "3: Disabled\n")
    _write(root, roce + "ports/1/rate", "25 Gb/sec (1X EDR)\n")
    _write(root, roce + "ports/1/link_layer", "Ethernet\n")
    _write(root, roce + "ports/1/gids/0", "fe80:0000:0000:0000:0e42:a1ff:fe5e:9c82\n")
    _write(root, roce + "ports/1/gid_attrs/types/0", "IB/RoCE v1\n")
    _write(root, roce + "ports/1/gid_attrs/ndevs/0", "ens59f0\n")
    _write(root, roce + "ports/1/gids/3", "0000:0000:0000:0000:0000:ffff:0a0a:0a0b\n")
    _write(root, roce + "ports/1/gid_attrs/types/3", "RoCE v2\n")
    _write(root, roce + "ports/1/gid_attrs/ndevs/3", "ens59f0\n")
    _write(root, roce + "ports/1/gids/2", "0000:0000:0000:0000:0000:ffff:0a0a:0a0b\n")
    _write(root, roce + "ports/1/gid_attrs/types/2", "Invalid argument\n")   # stale slot
    os.makedirs(os.path.join(root, "class/infiniband/mlx5_9"))                 # a device with nothing readable
    facts = rd.discover(snapshot_from_fs(root), dict(HEALTHY_HOST))
    assert [d["name"] for d in facts["devices"]] == ["mlx5_4", "mlx5_9", "rocep59s0f0"]
    ibp = _port(facts, "mlx5_4")
    assert (ibp["lid"], ibp["sm_lid"], ibp["rate_gbps"], ibp["gid_index"], len(ibp["gids"])) == (47, 1, 200, None, 1)
    rp = _port(facts, "rocep59s0f0")
    assert (rp["netdev"], rp["gid_index"], [g["index"] for g in rp["gids"]]) == ("ens59f0", 3, [0, 3])
    assert facts["devices"][1]["ports"] == []
    assert [(f["code"], f["device"]) for f in facts["findings"]] == [("port_down", "rocep59s0f0")]


def test_netdev_from_class_net_device_link_and_ipoib_children(tmp_path):
    root = str(tmp_path / "sys")
    sysfs_tree.build_sysfs(root, [
        {"name": "mlx5_0", "ports": [{"link_layer": "InfiniBand", "netdev": "ib0", "lid": 2, "sm_lid": 1}],
         "netdevs": ["ib0.8001"]},
        {"name": "mlx4_0", "ports": [
            {"port": 1, "link_layer": "InfiniBand", "netdev": "ib1", "lid": 3, "sm_lid": 1},
            {"port": 2, "link_layer": "InfiniBand", "netdev": "ib2", "lid": 4, "sm_lid": 1}]},
    ], net={"ib1": {"dev_port": 0, "dev_id": "0x0"}, "ib2": {"dev_port": 0, "dev_id": "0x1"}})
    facts = rd.discover(snapshot_from_fs(root), dict(HEALTHY_HOST))
    assert _port(facts, "mlx5_0")["netdev"] == "ib0"                    # parent over its pkey child
    assert _port(facts, "mlx4_0", 1)["netdev"] == "ib1"                 # old kernels: dev_id tells ports apart
    assert _port(facts, "mlx4_0", 2)["netdev"] == "ib2"
    # without <dev>/device/net, class/net/<n>/device pointing at the same PCI function is used
    import shutil  # pylint: disable=import-outside-toplevel
    shutil.rmtree(os.path.join(root, "class/infiniband/mlx5_0/device/net/ib0.8001"))
    snap = snapshot_from_fs(root)
    snap = dict((k, v) for k, v in snap.items() if "/device/net/" not in k)
    facts = rd.discover(snap, dict(HEALTHY_HOST))
    assert _port(facts, "mlx5_0")["netdev"] == "ib0"


# --- the pieces: gather (through a scripted transport), gid, findings ------------

class _Scripted(object):
    """A transport whose binaries and command results are given; records every call."""

    remote = False
    name = "scripted"

    def __init__(self, bins=(), results=None, files=None):
        self.bins = set(bins)
        self.results = results or {}
        self.files = files or {}
        self.calls = []

    def which(self, name):
        self.calls.append(("which", name))
        return "/usr/bin/" + name if name in self.bins else None

    def read_file(self, path):
        self.calls.append(("read", path))
        return self.files.get(path)

    def run(self, argv, timeout, capture=None):  # pylint: disable=unused-argument
        self.calls.append(("run", tuple(argv)))
        tool = argv[0].rsplit("/", 1)[-1]
        res = self.results.get(tuple(argv[1:]) if tool == "ip" else tool)
        if isinstance(res, Exception):
            raise res
        return dict(res or {"rc": 0, "stdout": "", "stderr": "", "timed_out": False})


def test_gather_run_tools_keeps_an_empty_ibv_devinfo_and_drops_other_empty_listings():
    transport = _Scripted(bins=("ibv_devinfo", "ibstat", "show_gids"), results={
        "ibv_devinfo": {"rc": 255, "stdout": "", "stderr": "Failed to get IB devices list", "timed_out": False},
        "ibstat": {"rc": 0, "stdout": "", "stderr": "", "timed_out": False},
        "show_gids": OSError("no such file")})
    results, parsed = gather.run_tools(transport)
    assert parsed == {"ibv_devinfo": []}
    assert results["ibdev2netdev"] == {"ran": False, "reason": "not installed"}
    assert results["ibv_devinfo"]["ran"] and results["ibv_devinfo"]["rc"] == 255
    assert results["show_gids"]["rc"] is None
    assert results["show_gids"]["ran"] is False and "no such file" in results["show_gids"]["reason"]
    assert all(isinstance(call[1], tuple) for call in transport.calls if call[0] == "run")


def test_gather_run_tools_leaves_out_a_tool_that_timed_out():
    text = open(os.path.join(TOOLS, "ibstat_a100_all_active.txt")).read()
    transport = _Scripted(bins=("ibstat",), results={"ibstat": {"rc": None, "stdout": text, "timed_out": True}})
    results, parsed = gather.run_tools(transport)
    assert parsed == {} and results["ibstat"]["timed_out"] is True


def test_gather_ip_addresses_falls_back_to_one_line_output():
    transport = _Scripted(bins=("ip",), results={
        ("-j", "-4", "addr", "show"): {"rc": 1, "stdout": "", "stderr": "Option -j is unknown"},
        ("-o", "-4", "addr", "show"): {"rc": 0, "stdout": "2: eth0    inet 10.0.0.2/24 scope global eth0"}})
    assert gather.ip_addresses(transport) == {"eth0": ["10.0.0.2/24"]}
    assert gather.ip_addresses(_Scripted()) is None


def test_gather_probe_host_reads_markers_only_until_one_answers(monkeypatch):
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    limits = "Max locked memory  65536  65536  bytes\n"
    transport = _Scripted(bins=("ib_write_bw",), files={"/.dockerenv": "", "/proc/self/limits": limits})
    host = gather.probe_host(transport)
    assert host == {"memlock": {"soft": 65536, "hard": 65536}, "in_container": True,
                    "perftest": "/usr/bin/ib_write_bw", "gpus": {"evidence": [], "found_by": []},
                    "npus": {"evidence": [], "found_by": []}, "pod": False, "cap_eff": None, "ipc_lock": None,
                    "identity": {"machine_id": None, "boot_id": None, "hostname": None, "netns": None}}
    assert ("read", "/run/.containerenv") not in transport.calls
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1")
    assert gather.probe_host(_Scripted())["in_container"] is True


def test_select_gid_prefers_the_netdevs_own_gids_then_the_primary_address():
    gids = [_gid(2, "10.0.0.7", netdev="vlan5"), _gid(3, "10.0.0.2"), _gid(5, "10.0.0.3")]
    assert gid.select_gid(gids, netdev="eth0")["candidates"] == [3, 5]
    assert gid.select_gid(gids, netdev="eth0", addresses=["10.0.0.3/24", "10.0.0.2/24"])["gid_index"] == 5
    assert gid.select_gid(gids, netdev="eth0", addresses=["192.168.0.1/24"])["gid_index"] == 3


def test_fail_on_takes_the_findings_at_or_above_its_severity_and_names_each_code_once():
    from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery.findings import (
        failing_findings, failing_message)
    found = [{"severity": "warning", "code": "cpu_governor_not_performance"},
             {"severity": "error", "code": "port_down"}, {"severity": "info", "code": "bond"},
             {"severity": "error", "code": "port_down"}, "not a finding"]
    assert failing_findings(found, "never") == [] and failing_findings(None, "error") == []
    errors = failing_findings(found, "error")
    assert [f["code"] for f in errors] == ["port_down", "port_down"]
    assert [f["code"] for f in failing_findings(found, "warning")] == [
        "cpu_governor_not_performance", "port_down", "port_down"]
    assert failing_message(errors, "error") == "2 finding(s) at or above 'error': port_down"


def test_gather_runs_lldpctl_where_installed_and_discovery_records_each_rails_leaf():
    from real_outputs import real
    text = real("lldpctl", "lldpctl_json0_gpu_rails_four_sonic_leaves.json")
    absent = gather.run_tools(_Scripted())[0]["lldpctl"]
    assert absent == {"ran": False, "reason": "not installed"}
    transport = _Scripted(bins=("lldpctl",), results={"lldpctl": {"rc": 0, "stdout": text, "timed_out": False}})
    results, parsed = gather.run_tools(transport)
    assert ("run", ("/usr/bin/lldpctl", "-f", "json")) in transport.calls
    assert results["lldpctl"]["entries"] == 5
    devices = [{"name": "mlx5_%d" % k, "ports": [{"port": 1, "netdev": netdev}]}
               for k, netdev in enumerate(("ens108np0", "ens110np0", "ens841np0", "ens842np0", "eno1"))]
    assert topology.from_lldp(parsed["lldpctl"], devices) == {
        "mlx5_0": {"leaf": "LEAF01", "port": "Ethernet184", "source": "lldp"},
        "mlx5_1": {"leaf": "LEAF02", "port": "Ethernet184", "source": "lldp"},
        "mlx5_2": {"leaf": "LEAF03", "port": "Ethernet184", "source": "lldp"},
        "mlx5_3": {"leaf": "LEAF04", "port": "Ethernet184", "source": "lldp"}}


def test_a_neighbour_whose_names_are_no_labels_or_ports_on_two_switches_give_no_leaf():
    neighbors = [{"interface": "eth0", "chassis": "--evil", "port_id": "1"},
                 {"interface": "eth1", "chassis": None, "chassis_id": "aa:bb", "port_id": "aa:bb:cc",
                  "port_id_type": "mac", "port_descr": "swp3"},
                 {"interface": "eth2", "chassis": "leaf-a", "port_id": "1"},
                 {"interface": "eth3", "chassis": "leaf-b", "port_id": "1"}]
    devices = [{"name": "d0", "ports": [{"netdev": "eth0"}]}, {"name": "d1", "ports": [{"netdev": "eth1"}]},
               {"name": "d2", "ports": [{"netdev": "eth2"}, {"netdev": "eth3"}]}]
    assert topology.from_lldp(neighbors, devices) == {"d1": {"leaf": "aa:bb", "port": "swp3", "source": "lldp"}}


def test_discovery_records_the_leaf_of_a_port_lldpd_sees_and_none_without_lldpd(tmp_path):
    devices = [{"name": "mlx5_0", "ports": [{"netdev": "ens841np0", "ipv4": "10.0.0.3"}]},
               {"name": "mlx5_1", "ports": [{"netdev": "ens842np0", "ipv4": "10.0.1.3"}]}]
    neighbors = [{"interface": "ens842np0", "chassis": "LEAF04", "port_id": "Ethernet184", "port_id_type": "local"}]
    assert _facts(tmp_path, devices, name="a", tools={"lldpctl": neighbors})["topology"] == {
        "mlx5_1": {"leaf": "LEAF04", "port": "Ethernet184", "source": "lldp"}}
    assert _facts(tmp_path, devices, name="b")["topology"] == {}


# --- the switch behind each InfiniBand port (smpquery over the directed route 0,<port>) ----------------------

def _smp_outputs():
    from real_outputs import real
    switch = real("smpquery", "smpquery_nodeinfo_switch_ibsim_book.txt")
    return {
        # the ibsim switch's NodeInfo as a directed route out of port 1 reaches it: it came in by its port 17
        ("nodeinfo", "mlx5_0"): switch.replace("LocalPort:.......................0",
                                               "LocalPort:.......................17"),
        # the cheat sheet's line with a switch's name, padded to column 32 as smpquery pads it
        ("nodedesc", "mlx5_0"): real("smpquery", "smpquery_nd_sm_host_cheatsheet.txt").replace(
            "." * 17 + "b1nstcx02 HCA-1", "." * 10 + "MF0;ib-leaf-03:MQM8700"),
        ("nodeinfo", "mlx5_1"): real("smpquery", "smpquery_nodeinfo_failed_ompi_users_18737.txt"),
        ("nodedesc", "mlx5_1"): real("smpquery", "smpquery_nodeinfo_failed_ompi_users_18737.txt"),
    }


class _SmpScripted(_Scripted):
    """_Scripted whose smpquery answers by (operation, device); each run costs ``cost`` on the shared clock."""

    def __init__(self, outputs, cost=0.0, timed_out=()):
        _Scripted.__init__(self, bins=("smpquery",))
        self.outputs = outputs
        self.now = 0.0
        self.cost = cost
        self.timed_out = timed_out
        self.timeouts = []

    def clock(self):
        return self.now

    def run(self, argv, timeout, capture=None):
        self.calls.append(("run", tuple(argv)))
        self.timeouts.append(timeout)
        self.now += self.cost
        key = (argv[6], argv[2])
        return {"rc": 0, "stdout": self.outputs.get(key, ""), "stderr": "", "timed_out": key in self.timed_out}


IB_UP = {"link_layer": "InfiniBand", "phys_state": "LinkUp"}
SMP_DEVICES = [
    {"name": "mlx5_0", "ports": [dict(IB_UP, port=1)]},
    {"name": "mlx5_1", "ports": [dict(IB_UP, port=1)]},
    {"name": "mlx5_2", "ports": [{"port": 1, "link_layer": "Ethernet", "phys_state": "LinkUp"}]},
    {"name": "mlx5_3", "ports": [{"port": 1, "link_layer": "InfiniBand", "phys_state": "Polling"}]},
    {"name": "-C", "ports": [dict(IB_UP, port=1)]},
]


def test_smpquery_asks_each_infiniband_port_with_a_link_and_discovery_names_its_switch():
    transport = _SmpScripted(_smp_outputs())
    summary, answers = gather.query_ib_neighbours(transport, SMP_DEVICES, clock=transport.clock)
    runs = [call[1] for call in transport.calls if call[0] == "run"]
    assert runs == [("/usr/bin/smpquery", "-C", device, "-P", "1", "-D", operation, "0,1")
                    for device in ("mlx5_0", "mlx5_1") for operation in ("nodeinfo", "nodedesc")]
    assert summary == {"ran": True, "ports": 2, "switches": 1, "failed": 1, "unasked": 0}
    assert (answers["mlx5_0"][0]["node"]["guid"], answers["mlx5_1"][0]["errors"][0]["code"]) == (
        "0x0000000000200001", "query_failed")
    assert topology.from_smpquery(answers, SMP_DEVICES) == {
        "mlx5_0": {"leaf": "MF0;ib-leaf-03:MQM8700", "port": "17", "source": "smpquery"}}


def test_smpquery_absent_or_no_infiniband_link_asks_nothing():
    assert gather.query_ib_neighbours(_Scripted(), SMP_DEVICES) == ({"ran": False, "reason": "not installed"}, {})
    transport = _SmpScripted({})
    assert gather.query_ib_neighbours(transport, SMP_DEVICES[2:4]) == (
        {"ran": False, "reason": "no InfiniBand port with a link"}, {})
    assert not [call for call in transport.calls if call[0] == "run"]


def test_smpquery_ports_share_one_deadline_and_a_port_it_leaves_is_unasked():
    devices = [{"name": "mlx5_%d" % k, "ports": [dict(IB_UP, port=1)]} for k in range(3)]
    transport = _SmpScripted(_smp_outputs(), cost=25.0)
    summary, answers = gather.query_ib_neighbours(transport, devices, budget=60, clock=transport.clock)
    # 0 s and 25 s: mlx5_0 whole; 50 s: mlx5_1's nodeinfo gets the 10 s left; 75 s: past the deadline
    assert transport.timeouts == [20, 20, 10]
    assert summary == {"ran": True, "ports": 3, "switches": 1, "failed": 1, "unasked": 1}
    assert answers["mlx5_1"][0]["timed_out"] and "mlx5_2" not in answers


def test_a_timed_out_query_stops_that_port_and_is_recorded():
    transport = _SmpScripted(_smp_outputs(), timed_out={("nodeinfo", "mlx5_0")})
    summary, answers = gather.query_ib_neighbours(transport, SMP_DEVICES[:1], clock=transport.clock)
    assert [call[1][6] for call in transport.calls if call[0] == "run"] == ["nodeinfo"]
    assert answers["mlx5_0"][0]["timed_out"] is True and summary["ports"] == 1


def test_smpquery_leaf_is_the_guid_without_a_usable_description_and_no_leaf_behind_an_adapter():
    switch = {"is_switch": True, "node": {"guid": "0x0002c90200400a18", "local_port": 5}, "description": "-rf /"}
    adapter = {"is_switch": False, "node": {"guid": "0x0002c90300336fe0", "local_port": 1}, "description": "h1 HCA-1"}
    other = {"is_switch": True, "node": {"guid": "0x0002c90200400a19", "local_port": 5}, "description": "leaf-b"}
    devices = [{"name": n, "ports": [{"port": 1}]} for n in ("a", "b", "c")]
    assert topology.from_smpquery({"a": [dict(switch, port=1)], "b": [dict(adapter, port=1)],
                                   "c": [dict(switch, port=1), dict(other, port=2)]}, devices) == {
        "a": {"leaf": "0x0002c90200400a18", "port": "5", "source": "smpquery"}}


def test_discovery_records_infiniband_leaves_beside_lldp_ones_and_lldp_wins_a_device_both_name(tmp_path):
    devices = [{"name": "mlx5_0", "ports": [{"netdev": "ens841np0", "ipv4": "10.0.0.3"}]},
               {"name": "mlx5_1", "ports": [{"netdev": "ens842np0", "ipv4": "10.0.1.3"}]}]
    answer = {"is_switch": True, "node": {"guid": "0x1", "local_port": 9}, "description": "ib-leaf-9", "port": 1}
    neighbors = [{"interface": "ens842np0", "chassis": "LEAF04", "port_id": "Ethernet184", "port_id_type": "local"}]
    smpquery = {"mlx5_0": [answer], "mlx5_1": [answer]}
    facts = _facts(tmp_path, devices, tools={"lldpctl": neighbors, "smpquery": smpquery})
    assert facts["topology"] == {"mlx5_0": {"leaf": "ib-leaf-9", "port": "9", "source": "smpquery"},
                                 "mlx5_1": {"leaf": "LEAF04", "port": "Ethernet184", "source": "lldp"}}


class _SmpHost(_Recorder):
    """The host transport with an smpquery that answers from real outputs (the host has none)."""

    def __init__(self):
        _Recorder.__init__(self)
        self.outputs = _smp_outputs()

    def which(self, name):
        return "/opt/ib/smpquery" if name == "smpquery" else _Recorder.which(self, name)

    def run(self, argv, timeout, env=None, cwd=None, capture=None):
        if argv[0] != "/opt/ib/smpquery":
            return _Recorder.run(self, argv, timeout, env=env, cwd=cwd, capture=capture)
        self.argvs.append(list(argv))
        return {"rc": 0, "stdout": self.outputs.get((argv[6], argv[2]), ""), "stderr": "", "timed_out": False}


def test_collect_with_tools_records_the_switch_of_an_infiniband_port(tmp_path):
    root = str(tmp_path / "sys")
    sysfs_tree.build_sysfs(root, [{"name": "mlx5_0", "ports": [{"netdev": "ib0", "link_layer": "InfiniBand",
                                                                "ipv4": "10.0.0.2"}]},
                                  {"name": "mlx5_1", "ports": [{"netdev": "ib1", "link_layer": "InfiniBand",
                                                                "state": "DOWN", "ipv4": "10.0.1.2"}]}])
    transport = _SmpHost()
    facts = rd.collect(transport, sysfs_root=root, tools=True, address_source="gids")
    assert [argv[2] for argv in transport.argvs if argv[0] == "/opt/ib/smpquery"] == ["mlx5_0", "mlx5_0"]
    assert facts["topology"] == {"mlx5_0": {"leaf": "MF0;ib-leaf-03:MQM8700", "port": "17", "source": "smpquery"}}
    assert facts["sources"]["tools"]["smpquery"] == {"ran": True, "ports": 1, "switches": 1, "failed": 0,
                                                     "unasked": 0}
