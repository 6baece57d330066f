# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The leaf of an InfiniBand port from iblinkinfo / ibnetdiscover scans (discovery.ib_topology, pure) and the scans
discovery runs for the ports smpquery did not place (discovery.ib_fabric_scan), on real outputs."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os
import sys

from ansible_collections.clusterops.commcheck.plugins.module_utils.commands.runner import HostTransport
from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery import ib_fabric_scan
from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery import ib_topology
from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery import rdma_discovery as rd
from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery import topology
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_iblinkinfo import parse_iblinkinfo
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_ibnetdiscover import (
    parse_ibnetdiscover,
)

from real_outputs import real

LAB = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lab")
if LAB not in sys.path:
    sys.path.insert(0, LAB)

import sysfs_tree  # noqa: E402  pylint: disable=wrong-import-position

HDR = real("iblinkinfo", "iblinkinfo_hdr_quantum_sharp_notes.txt")
GREP = real("iblinkinfo", "iblinkinfo_edr_sb7700_grep_up.txt")
QDR = real("ibnetdiscover", "ibnetdiscover_qdr_infiniscale_notes.txt")
PORTS_HDR = real("ibnetdiscover", "ibnetdiscover_p_hdr_infiniband_exporter.txt")
SIM = real("ibnetdiscover", "ibnetdiscover_sdr_ibsim_book.txt")


def _device(name, node_guid, port_guid, port=1):
    """A device as discovery's parse_devices gives it: its node GUID, the port's GID 0 from its port GUID."""
    return {"name": name, "node_guid": node_guid,
            "ports": [{"port": port, "link_layer": "InfiniBand", "phys_state": "LinkUp",
                       "gids": [{"index": 0, "gid": "fe80:0000:0000:0000:" + port_guid}]}]}


CU02 = _device("mlx5_0", "b8ce:f603:0002:5b90", "b8ce:f603:0002:5b90")
# ip-211's mlx4_0: node GUID ...3e1e, port 1's GUID ...3e1f (mlx4 numbers them apart)
IP211 = _device("mlx4_0", "0002:c903:0029:3e1e", "0002:c903:0029:3e1f")


def test_port_guids_are_the_gid0_interface_id_the_node_guid_and_ibstat_port_guid():
    ibstat = [{"name": "mlx4_0", "node_guid": "0x0002c90300293e1e",
               "ports": [{"port": 1, "port_guid": "0x0002c90300293e1f"}, {"port": 2, "port_guid": "0x0002c90300293e20"}]}]
    device = dict(IP211, ports=[{"port": 2, "gids": []}])
    assert ib_topology.port_guids(device, device["ports"][0], ibstat) == {"0x0002c90300293e1e", "0x0002c90300293e20"}
    assert ib_topology.port_guids(IP211, IP211["ports"][0]) == {"0x0002c90300293e1e", "0x0002c90300293e1f"}


def test_iblinkinfo_names_the_switch_and_port_a_host_port_is_cabled_to():
    # the Quantum switch keeps its factory name, which every Quantum shares: its GUID (from its own lines) is the leaf
    guids = ib_topology.port_guids(CU02, CU02["ports"][0])
    assert ib_topology.iblinkinfo_leaf(parse_iblinkinfo(HDR), 1, guids) == {
        "leaf": "0x0c42a103008982a4", "port": "39", "source": "iblinkinfo"}
    # another port number of the same adapter is not that line
    assert ib_topology.iblinkinfo_leaf(parse_iblinkinfo(HDR), 2, guids) is None
    # n01 in a grepped output: its ibstat port GUID 0xec0d9a03003d677a (the note's ibstat)
    assert ib_topology.iblinkinfo_leaf(parse_iblinkinfo(GREP), 1, {"0xec0d9a03003d677a"}) == {
        "leaf": "MF0;SB7700:MSB7700/U1", "port": "18", "source": "iblinkinfo"}


def test_ibnetdiscover_names_the_switch_by_node_or_port_guid_and_strips_the_blanks_of_its_name():
    # Infiniscale-IV's factory name gives way to the switch's GUID; a named switch keeps its name
    assert ib_topology.ibnetdiscover_leaf(parse_ibnetdiscover(QDR), 1, {"0x0002c90300293e1f"}) == {
        "leaf": "0x0002c9020046c588", "port": "1", "source": "ibnetdiscover"}
    assert ib_topology.ibnetdiscover_leaf(parse_ibnetdiscover(QDR), 1, {"0x0002c90300293e1e"})["port"] == "1"
    assert ib_topology.ibnetdiscover_leaf(parse_ibnetdiscover(PORTS_HDR), 1, {"0xb83fd20300da1138"}) == {
        "leaf": "5FB0405-leaf-IB01", "port": "79", "source": "ibnetdiscover"}
    assert ib_topology.ibnetdiscover_leaf(parse_ibnetdiscover(QDR), 1, {"0x0000000000000001"}) is None


def test_a_port_cabled_to_another_adapter_has_no_leaf_hand_made():
    # hand-made: two hosts cabled back to back, in the ports report's form
    text = ("CA     1  1 0x0002c90300000001 4x EDR - CA     2  1 0x0002c90300000002 ( 'h1 mlx5_0' - 'h2 mlx5_0' )\n")
    assert ib_topology.ibnetdiscover_leaf(parse_ibnetdiscover(text), 1, {"0x0002c90300000001"}) is None
    peer = {"type": "CA", "lid": 2, "port": 1, "description": "h2 mlx5_0"}
    assert ib_topology.iblinkinfo_leaf({"ports": [{"node": {"type": "CA", "port_guid": "0x1"}, "port": 1,
                                                   "peer": peer}]}, 1, {"0x1"}) is None


def test_a_named_switch_keeps_its_name_and_a_factory_name_without_a_guid_is_kept_hand_made():
    # hand-made -l line (iblinkinfo.8's --line form): the peer's GUID is printed, its name is an operator's
    line = ('0xf452140300f55051 "              ib-test-7 mlx4_0"     37    1[  ] ==( 4X       14.0625 Gbps Active/'
            '  LinkUp)==>  0xf45214030067c630      5   16[  ] "MF0;switch-e1be74:SX6036/U1" ( )')
    assert ib_topology.iblinkinfo_leaf(parse_iblinkinfo(line), 1, {"0xf452140300f55051"}) == {
        "leaf": "MF0;switch-e1be74:SX6036/U1", "port": "16", "source": "iblinkinfo"}
    unnamed = line.replace("0xf45214030067c630 ", "").replace("MF0;switch-e1be74:SX6036/U1", "SwitchX -  Mellanox Technologies")
    assert ib_topology.iblinkinfo_leaf(parse_iblinkinfo(unnamed), 1, {"0xf452140300f55051"})["leaf"] == (
        "SwitchX -  Mellanox Technologies")


def test_a_switch_name_that_is_no_label_gives_its_guid():
    # hand-made: the ibsim switch renamed to a flag
    text = SIM.replace('"Switch1"', '"-rf /"')
    assert ib_topology.ibnetdiscover_leaf(parse_ibnetdiscover(text), 2, {"0x0000000000100005"}) == {
        "leaf": "0x0000000000200000", "port": "2", "source": "ibnetdiscover"}


def test_precedence_smpquery_over_iblinkinfo_over_ibnetdiscover():
    devices = [CU02, IP211]
    scans = {"iblinkinfo": {"mlx5_0": [dict(parse_iblinkinfo(HDR), port=1)]},
             "ibnetdiscover": {"mlx4_0": [dict(parse_ibnetdiscover(QDR), port=1)],
                               "mlx5_0": [dict(parse_ibnetdiscover(QDR), port=1)]}}
    assert ib_topology.discovered(scans, devices) == {
        "mlx5_0": {"leaf": "0x0c42a103008982a4", "port": "39", "source": "iblinkinfo"},
        "mlx4_0": {"leaf": "0x0002c9020046c588", "port": "1", "source": "ibnetdiscover"}}
    answer = {"is_switch": True, "node": {"guid": "0x1", "local_port": 9}, "description": "ib-leaf-9", "port": 1}
    both = dict(scans, smpquery={"mlx4_0": [answer]})
    assert ib_topology.discovered(both, devices)["mlx4_0"] == {"leaf": "ib-leaf-9", "port": "9", "source": "smpquery"}
    # the new sources are sources a host's topology may say (the pair check reads discovery's through them)
    assert topology.check_hosts({"h1": ib_topology.discovered(scans, devices)})["h1"]["mlx5_0"]["source"] == (
        "iblinkinfo")


class _Fabric(object):
    """A transport whose iblinkinfo / ibnetdiscover print real outputs; each run costs ``cost`` on a shared clock."""

    def __init__(self, outputs, tools=("iblinkinfo", "ibnetdiscover"), cost=1.0):
        self.outputs, self.tools, self.cost = outputs, tools, cost
        self.argvs = []
        self.now = 0.0

    def clock(self):
        return self.now

    def which(self, name):
        return "/usr/sbin/" + name if name in self.tools else None

    def run(self, argv, *_args, **_kwargs):
        self.argvs.append(list(argv))
        self.now += self.cost
        tool = argv[0].rsplit("/", 1)[-1]
        return {"rc": 0, "stdout": self.outputs.get(tool, ""), "stderr": "", "timed_out": False}


def test_scans_ask_only_the_ports_smpquery_did_not_place_and_ibnetdiscover_only_those_iblinkinfo_did_not():
    other = _device("mlx5_1", "0002:c903:0029:3e1e", "0002:c903:0029:3e1f")
    placed_already = _device("mlx5_2", "0002:c903:0000:0009", "0002:c903:0000:0009")
    # iblinkinfo knows cu02 (mlx5_0), not the QDR host (mlx5_1): ibnetdiscover runs for mlx5_1 alone
    transport = _Fabric({"iblinkinfo": HDR, "ibnetdiscover": QDR})
    summaries, answers = ib_fabric_scan.scan_fabric(transport, [CU02, other, placed_already], {"mlx5_2": {}},
                                                    clock=transport.clock)
    assert transport.argvs == [
        ["/usr/sbin/iblinkinfo", "-C", "mlx5_0", "-P", "1", "-D", "0", "-l"],
        ["/usr/sbin/iblinkinfo", "-C", "mlx5_1", "-P", "1", "-D", "0", "-l"],
        ["/usr/sbin/ibnetdiscover", "-p", "-C", "mlx5_1", "-P", "1"]]
    assert summaries == {
        "iblinkinfo": {"ran": True, "ports": 2, "placed": 1, "unplaced": 1, "unasked": 0, "scans": 2},
        "ibnetdiscover": {"ran": True, "ports": 1, "placed": 1, "unplaced": 0, "unasked": 0, "scans": 1}}
    assert ib_topology.discovered(answers, [CU02, other, placed_already]) == {
        "mlx5_0": {"leaf": "0x0c42a103008982a4", "port": "39", "source": "iblinkinfo"},
        "mlx5_1": {"leaf": "0x0002c9020046c588", "port": "1", "source": "ibnetdiscover"}}


def test_one_fabric_scan_serves_every_local_port_it_shows():
    hosts = [_device("mlx4_0", "0002:c903:0029:3e1e", "0002:c903:0029:3e1f"),
             _device("mlx4_1", "0002:c903:0029:3eba", "0002:c903:0029:3ebb")]
    transport = _Fabric({"ibnetdiscover": QDR}, tools=("ibnetdiscover",))
    summaries, answers = ib_fabric_scan.scan_fabric(transport, hosts, clock=transport.clock)
    assert len(transport.argvs) == 1 and summaries["ibnetdiscover"]["scans"] == 1
    assert summaries["iblinkinfo"] == {"ran": False, "reason": "not installed"}
    assert ib_topology.discovered(answers, hosts)["mlx4_1"] == {
        "leaf": "0x0002c9020046c588", "port": "14", "source": "ibnetdiscover"}


def test_the_deadline_leaves_ports_unasked_and_absent_tools_are_no_error():
    hosts = [_device("mlx5_%d" % n, "0002:c903:0000:%04x" % n, "0002:c903:0000:%04x" % n) for n in range(4)]
    transport = _Fabric({"iblinkinfo": HDR}, tools=("iblinkinfo",), cost=25.0)
    summaries, answers = ib_fabric_scan.scan_fabric(transport, hosts, budget=60, clock=transport.clock)
    assert summaries["iblinkinfo"] == {"ran": True, "ports": 4, "placed": 0, "unplaced": 3, "unasked": 1, "scans": 3}
    assert sorted(answers["iblinkinfo"]) == ["mlx5_0", "mlx5_1", "mlx5_2"]
    none = _Fabric({}, tools=())
    assert ib_fabric_scan.scan_fabric(none, hosts, clock=none.clock) == (
        {"iblinkinfo": {"ran": False, "reason": "not installed"},
         "ibnetdiscover": {"ran": False, "reason": "not installed"}}, {})
    assert none.argvs == []
    down = [dict(CU02, ports=[dict(CU02["ports"][0], phys_state="Polling")])]
    assert ib_fabric_scan.scan_fabric(transport, down, clock=transport.clock)[0]["iblinkinfo"] == {
        "ran": False, "reason": "no InfiniBand port left to place"}


class _IbHost(HostTransport):
    """The host transport with an iblinkinfo that prints the real HDR output (no smpquery, no ibnetdiscover)."""

    def __init__(self):
        HostTransport.__init__(self)
        self.argvs = []

    def which(self, name):
        if name == "iblinkinfo":
            return "/opt/ib/iblinkinfo"
        if name in ("smpquery", "ibnetdiscover"):
            return None
        return HostTransport.which(self, name)

    def run(self, argv, timeout, env=None, cwd=None, capture=None):
        if argv[0] != "/opt/ib/iblinkinfo":
            return HostTransport.run(self, argv, timeout, env=env, cwd=cwd, capture=capture)
        self.argvs.append(list(argv))
        return {"rc": 0, "stdout": HDR, "stderr": "", "timed_out": False}


def test_collect_records_the_iblinkinfo_leaf_of_the_port_whose_guid_the_scan_shows(tmp_path):
    root = str(tmp_path / "sys")
    sysfs_tree.build_sysfs(root, [
        {"name": "mlx5_0", "node_guid": "b8ce:f603:0002:5b90",
         "ports": [{"netdev": "ib0", "link_layer": "InfiniBand", "port_guid": "b8ce:f603:0002:5b90",
                    "ipv4": "10.0.0.2"}]},
        {"name": "mlx5_1", "ports": [{"netdev": "ib1", "link_layer": "InfiniBand", "ipv4": "10.0.1.2"}]}])
    transport = _IbHost()
    facts = rd.collect(transport, sysfs_root=root, tools=True, address_source="gids")
    assert [argv[2] for argv in transport.argvs] == ["mlx5_0", "mlx5_1"]
    assert facts["topology"] == {"mlx5_0": {"leaf": "0x0c42a103008982a4", "port": "39",
                                            "source": "iblinkinfo"}}
    assert facts["sources"]["tools"]["iblinkinfo"] == {"ran": True, "ports": 2, "placed": 1, "unplaced": 1,
                                                       "unasked": 0, "scans": 2}
    assert facts["sources"]["tools"]["ibnetdiscover"] == {"ran": False, "reason": "not installed"}
