# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""RDMA tool parsers on the real outputs in tests/fixtures/corpus/rdma_tools.

Every corpus file is parsed here and the values asserted were read from the
files themselves (device counts, states, rates, GIDs, MTUs, GUIDs ...).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json
import os
import subprocess
import sys

import pytest

from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_ibdev2netdev import (
    parse_ibdev2netdev,
    parse_ibdev2netdev_full,
)
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_ibstat import (
    parse_ibstat,
    parse_ibstat_errors,
    parse_ibstat_full,
    parse_ibstatus,
    parse_ibstatus_full,
)
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_ibv_devinfo import (
    parse_ibv_devices,
    parse_ibv_devices_full,
    parse_ibv_devinfo,
    parse_ibv_devinfo_errors,
    parse_ibv_devinfo_full,
)
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_rdma_link import (
    parse_rdma_link,
    parse_rdma_link_full,
    parse_rdma_system,
)
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_show_gids import (
    parse_show_gids,
    parse_show_gids_full,
)

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CORPUS = os.path.join(REPO, "tests", "fixtures", "corpus", "rdma_tools")


def corpus(name):
    with open(os.path.join(CORPUS, name), "rb") as handle:
        return handle.read().decode("utf-8")


def test_every_corpus_file_has_a_test():
    """A new corpus file must get its own test below (its name appears in this file)."""
    with open(os.path.abspath(__file__), encoding="utf-8") as handle:
        source = handle.read()
    missing = [name for name in sorted(os.listdir(CORPUS)) if '"%s"' % name not in source]
    assert not missing, missing


# ---- ibdev2netdev -------------------------------------------------------------

def test_ibdev2netdev_10port_ib_two_down():
    devices = parse_ibdev2netdev(corpus("ibdev2netdev_10port_ib_two_down.txt"))
    assert [d["device"] for d in devices] == ["mlx5_%d" % i for i in range(10)]
    assert [d["netdev"] for d in devices] == ["ib%d" % i for i in range(10)]
    assert {d["port"] for d in devices} == {1}
    assert [d["device"] for d in devices if d["state"] == "Down"] == ["mlx5_4", "mlx5_5"]
    assert sum(d["state"] == "Up" for d in devices) == 8
    assert all(d["pci"] is None and d["fw"] is None for d in devices)  # not -v


def test_ibdev2netdev_mixed_eth_ib():
    devices = parse_ibdev2netdev(corpus("ibdev2netdev_mixed_eth_ib.txt"))
    assert [(d["device"], d["netdev"], d["state"]) for d in devices] == [
        ("mlx5_0", "ens4f0", "Down"),
        ("mlx5_1", "ens4f1", "Up"),
        ("mlx5_2", "ens6", "Up"),
        ("mlx5_3", "ens14f0", "Up"),
        ("mlx5_4", "ens14f1", "Down"),
        ("mlx5_5", "ib0", "Up"),
    ]


def test_ibdev2netdev_roce_one_down_ignores_prompt():
    result = parse_ibdev2netdev_full(corpus("ibdev2netdev_roce_one_down.txt"))
    assert result["errors"] == []
    assert [(d["device"], d["port"], d["netdev"], d["state"]) for d in result["devices"]] == [
        ("mlx5_0", 1, "eth01", "Up"),
        ("mlx5_1", 1, "eth02", "Down"),
        ("mlx5_2", 1, "eth03", "Up"),
        ("mlx5_3", 1, "eth04", "Up"),
    ]


def test_ibdev2netdev_single_vf_down_in_pod():
    devices = parse_ibdev2netdev(corpus("ibdev2netdev_single_vf_down_pod.txt"))
    assert len(devices) == 1
    assert devices[0]["device"] == "mlx5_3"
    assert devices[0]["netdev"] == "net1"
    assert devices[0]["state"] == "Down"


def test_ibdev2netdev_verbose_cx4():
    devices = parse_ibdev2netdev(corpus("ibdev2netdev_v_cx4_two_ports.txt"))
    assert len(devices) == 2
    first, second = devices
    assert first["pci"] == "0004:01:00.0" and second["pci"] == "0005:01:00.0"
    assert first["device"] == "mlx5_0" and second["device"] == "mlx5_1"
    assert first["hca_type"] == second["hca_type"] == "MT4115"
    assert first["part_id"] == "MT1738K12272" and second["part_id"] == "MT1738K12253"
    assert first["product"] == "CX413A - ConnectX-4 QSFP28"
    assert first["description"] == "ConnectX-4"
    assert first["fw"] == second["fw"] == "12.22.1002"
    assert first["port"] == 1 and first["port_state"] == "ACTIVE"
    assert first["netdev"] == "enP4p1s0" and second["netdev"] == "enP5p1s0"
    assert first["state"] == second["state"] == "Up"


def test_ibdev2netdev_verbose_padding_and_na():
    # The script pads the IB state with printf %-6s and prints NA for missing sysfs files.
    text = ("0000:3b:00.1 mlx5_1 (MT4115 - NA         )  fw 12.28.2006 port 1 (DOWN  ) ==> ens1f1 (Down)\n"
            "0000:af:00.0 mlx5_2 (MT4123 - MT2032X1) CX653105A - ConnectX-6 VPI adapter card fw 20.31.1014"
            " port 1 (ACTIVE) ==> ib0 (NA)\n")
    first, second = parse_ibdev2netdev(text)
    assert first["port_state"] == "DOWN" and first["part_id"] is None and first["state"] == "Down"
    assert first["product"] is None and first["description"] is None
    assert second["description"] == "ConnectX-6 VPI" and second["state"] is None
    assert second["netdev"] == "ib0"


def test_ibdev2netdev_launcher_prefix_and_errors():
    text = "[1,0]<stdout>:mlx5_0 port 1 ==> ens1f0 (Up)\nbash: ibdev2netdev: command not found\n"
    result = parse_ibdev2netdev_full(text)
    assert [d["device"] for d in result["devices"]] == ["mlx5_0"]
    assert [e["code"] for e in result["errors"]] == ["not_installed"]
    assert result["errors"][0]["fix"]


# ---- ibstat -----------------------------------------------------------------------

def _port(ca):
    assert len(ca["ports"]) == 1
    return ca["ports"][0]


def test_ibstat_12ca_roce_some_down_polling():
    cas = parse_ibstat(corpus("ibstat_12ca_roce_some_down_polling.txt"))
    names = [ca["name"] for ca in cas]
    assert len(cas) == 12
    assert names[:3] == ["mlx5_0", "mlx5_1", "mlx5_10"]  # lexical order kept
    by_name = {ca["name"]: ca for ca in cas}
    assert all(_port(ca)["link_layer"] == "Ethernet" for ca in cas)
    p11 = _port(by_name["mlx5_11"])
    assert (p11["state"], p11["phys_state"], p11["rate"]) == ("Down", "Polling", 40)
    p5 = _port(by_name["mlx5_5"])
    assert (p5["state"], p5["phys_state"], p5["rate"]) == ("Down", "Disabled", 40)
    assert sorted(n for n, ca in by_name.items() if _port(ca)["state"] != "Active") == ["mlx5_11", "mlx5_5"]
    assert by_name["mlx5_0"]["ca_type"] == "MT4129" and _port(by_name["mlx5_0"])["rate"] == 400
    assert by_name["mlx5_1"]["ca_type"] == "MT4125" and _port(by_name["mlx5_1"])["rate"] == 100
    assert by_name["mlx5_2"]["sys_image_guid"] == "0xb83fd203002a1a1c"
    assert _port(by_name["mlx5_0"])["port_guid"] == "0xa288c2fffeadeab8"
    assert by_name["mlx5_0"]["fw_version"] == "28.39.1002"


def test_ibstat_2ca_cx6dx_spaces():
    cas = parse_ibstat(corpus("ibstat_2ca_cx6dx_ethernet.txt"))
    assert [ca["name"] for ca in cas] == ["mlx5_0", "mlx5_1"]
    for ca in cas:
        assert ca["ca_type"] == "MT4125" and ca["num_ports"] == 1
        assert ca["fw_version"] == "22.32.2004" and ca["hw_version"] == "0"
        port = _port(ca)
        assert port["port"] == 1 and port["rate"] == 100 and port["link_layer"] == "Ethernet"
        assert port["state"] == "Active" and port["phys_state"] == "LinkUp"
        assert (port["base_lid"], port["lmc"], port["sm_lid"]) == (0, 0, 0)
        assert port["capability_mask"] == "0x00010000"
    assert cas[1]["node_guid"] == "0x0c42a103001dd12b"
    assert cas[1]["sys_image_guid"] == "0x0c42a103001dd12a"


def test_ibstat_a100_all_active_mixed_link_layers():
    cas = parse_ibstat(corpus("ibstat_a100_all_active.txt"))
    assert [ca["name"] for ca in cas] == ["mlx5_%d" % i for i in range(9)]
    assert all(_port(ca)["state"] == "Active" and _port(ca)["rate"] == 200 for ca in cas)
    assert _port(cas[0])["link_layer"] == "Ethernet"
    assert all(_port(ca)["link_layer"] == "InfiniBand" for ca in cas[1:])
    assert _port(cas[1])["base_lid"] == 1369 and _port(cas[1])["sm_lid"] == 83
    assert _port(cas[8])["base_lid"] == 1396
    assert _port(cas[1])["capability_mask"] == "0xa651ec48"
    assert cas[0]["fw_version"] == "22.35.2302" and cas[1]["fw_version"] == "28.37.1014"


def test_ibstat_ibpanic_after_partial_output():
    text = corpus("ibstat_a100_ibpanic_after_partial.txt")
    full = parse_ibstat_full(text)
    assert [ca["name"] for ca in full["cas"]] == ["mlx5_%d" % i for i in range(8)]
    assert all(_port(ca)["rate"] == 200 and _port(ca)["sm_lid"] == 1 for ca in full["cas"])
    assert _port(full["cas"][0])["base_lid"] == 13247 and _port(full["cas"][7])["base_lid"] == 13305
    assert [e["code"] for e in full["errors"]] == ["stat_failed"]
    assert full["errors"][0]["device"] == "mlx5_8"
    assert "No such file or directory" in full["errors"][0]["message"]
    assert parse_ibstat(text) == full["cas"]  # the list contract holds
    assert parse_ibstat_errors(text) == full["errors"]


def test_ibstat_h100_ndr_spaces_and_bond():
    cas = parse_ibstat(corpus("ibstat_h100_ndr_all_active_spaces.txt"))
    assert [ca["name"] for ca in cas] == ["mlx5_0", "mlx5_1", "mlx5_4", "mlx5_5", "mlx5_6", "mlx5_7",
                                          "mlx5_8", "mlx5_9", "mlx5_bond_0"]
    ib = [ca for ca in cas if _port(ca)["link_layer"] == "InfiniBand"]
    assert len(ib) == 8 and all(_port(ca)["rate"] == 400 and ca["ca_type"] == "MT4129" for ca in ib)
    assert [_port(ca)["base_lid"] for ca in ib] == [128, 534, 972, 1775, 1494, 717, 774, 2015]
    bond = cas[-1]
    assert _port(bond)["link_layer"] == "Ethernet" and _port(bond)["rate"] == 200


def test_ibstat_h100_some_down():
    cas = parse_ibstat(corpus("ibstat_h100_some_down.txt"))
    assert len(cas) == 12
    down = [ca["name"] for ca in cas if _port(ca)["state"] == "Down"]
    assert down == ["mlx5_2", "mlx5_7", "mlx5_8"]
    assert all(_port(ca)["phys_state"] == "Disabled" and _port(ca)["rate"] == 40 for ca in cas if ca["name"] in down)
    by_name = {ca["name"]: ca for ca in cas}
    assert _port(by_name["mlx5_0"])["base_lid"] == 75 and _port(by_name["mlx5_0"])["sm_lid"] == 334
    assert _port(by_name["mlx5_1"])["link_layer"] == "Ethernet" and _port(by_name["mlx5_1"])["rate"] == 100


def test_ibstat_ibpanic_only():
    text = corpus("ibstat_ibpanic_mlx5_an0.txt")
    full = parse_ibstat_full(text)
    assert full["cas"] == []
    assert len(full["errors"]) == 1
    error = full["errors"][0]
    assert error["code"] == "stat_failed" and error["device"] == "mlx5_an0"
    assert error["cause"] and error["fix"]


def test_ibstatus_a100_hdr():
    text = corpus("ibstatus_a100_hdr_all_active.txt")
    cas = parse_ibstatus(text)
    assert [ca["name"] for ca in cas] == ["mlx5_%d" % i for i in range(9)]
    ports = [_port(ca) for ca in cas]
    assert all(p["state"] == "Active" and p["state_num"] == 4 for p in ports)
    assert all(p["phys_state"] == "LinkUp" and p["phys_state_num"] == 5 for p in ports)
    assert [p["rate"] for p in ports] == [200] * 8 + [40]
    assert ports[0]["width"] == "4X" and ports[0]["speed"] == "HDR"
    assert ports[8]["speed"] == "QDR" and ports[8]["link_layer"] == "Ethernet"
    assert ports[0]["base_lid"] == 0x33bf and ports[0]["sm_lid"] == 1
    assert ports[0]["default_gid"] == "fe80:0000:0000:0000:0015:5dff:fd34:11eb"
    assert ports[8]["default_gid"] is None  # printed as "unknown"
    assert ports[8]["base_lid"] == 0
    # parse_ibstat reads ibstatus text too, with the same shape.
    full = parse_ibstat_full(text)
    assert full["source"] == "ibstatus" and full["cas"] == cas
    assert parse_ibstatus_full(text)["errors"] == []


def test_ibstat_single_port_mode_and_fdr10():
    # "ibstat mlx4_0 1": CA header with a colon, unindented port block (ibstat.c port_dump alone=1).
    text = ("CA: 'mlx4_0'\nPort 1:\nState: Initializing\nPhysical state: LinkUp\nRate: 40 (FDR10)\n"
            "Base lid: 0\nLMC: 0\nSM lid: 0\nCapability mask: 0x02514868\nPort GUID: 0x0002c903000e0b72\n"
            "Link layer: InfiniBand\n")
    (ca,) = parse_ibstat(text)
    port = _port(ca)
    assert ca["name"] == "mlx4_0" and port["state"] == "Initializing"
    assert port["rate"] == 40 and port["rate_note"] == "FDR10"
    assert parse_ibstat("CA 'qib0'\n\tPort 1:\n\t\tRate: 2.5\n")[0]["ports"][0]["rate"] == 2.5


def test_ibstat_and_ibstatus_without_devices():
    # Printed by infiniband-diags 44.0 (Debian 12) on the build machine, which has no RDMA device.
    errors = parse_ibstat_errors("ibpanic: [18999] main: 'mlx5_0' IB device can't be found: Success\n")
    assert [e["code"] for e in errors] == ["device_not_found"]
    status = parse_ibstatus_full("Fatal error:  No devices\n")
    assert status["cas"] == [] and [e["code"] for e in status["errors"]] == ["no_device"]
    assert parse_ibstat_full("") == {"cas": [], "errors": [], "warnings": [], "source": "ibstat"}


def test_ibstat_umad_panic_and_warning():
    full = parse_ibstat_full("ibwarn: [42] umad_init: can't open UMAD dir\nibpanic: [42] main: can't init UMAD library\n")
    assert [e["code"] for e in full["errors"]] == ["umad_init_failed"]
    assert full["warnings"] and full["cas"] == []


# ---- ibv_devinfo / ibv_devices --------------------------------------------------------

def test_ibv_devinfo_4dev_roce_port_down():
    devices = parse_ibv_devinfo(corpus("ibv_devinfo_4dev_roce_port_down.txt"))
    assert [d["hca_id"] for d in devices] == ["mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"]
    for device in devices:
        assert device["transport"] == "InfiniBand" and device["vendor_id"] == "0x02c9"
        assert device["vendor_part_id"] == 4117 and device["phys_port_cnt"] == 1
        assert device["board_id"] == "MT_2420110034" and device["hw_ver"] == "0x0"
        (port,) = device["ports"]
        assert port["port"] == 1 and port["max_mtu"] == 4096 and port["active_mtu"] == 1024
        assert port["link_layer"] == "Ethernet"
        assert (port["sm_lid"], port["port_lid"], port["port_lmc"]) == (0, 0, 0)
    assert [d["ports"][0]["state"] for d in devices] == ["PORT_ACTIVE", "PORT_DOWN", "PORT_ACTIVE", "PORT_ACTIVE"]
    assert devices[1]["ports"][0]["state_num"] == 1
    assert devices[0]["node_guid"] == "0c42:a103:0040:29a0"
    assert devices[3]["sys_image_guid"] == "0c42:a103:0075:3272"
    assert [d["fw_ver"] for d in devices] == ["14.28.2006", "14.28.2006", "14.32.1010", "14.32.1010"]


def test_ibv_devinfo_no_devices_driver_warning():
    text = corpus("ibv_devinfo_no_ib_devices_driver_warning.txt")
    assert parse_ibv_devinfo(text) == []
    full = parse_ibv_devinfo_full(text)
    assert [w["code"] for w in full["warnings"]] == ["provider_missing", "provider_missing"]
    assert "uverbs1" in full["warnings"][0]["message"]
    codes = [e["code"] for e in parse_ibv_devinfo_errors(text)]
    assert codes == ["provider_missing", "provider_missing", "no_device"]


def test_ibv_devinfo_no_devices_no_config_dir():
    text = corpus("ibv_devinfo_no_ib_devices_no_config_dir.txt")
    assert parse_ibv_devinfo(text) == []
    errors = parse_ibv_devinfo_errors(text)
    assert [e["code"] for e in errors] == ["config_missing", "no_device"]
    assert "/etc/libibverbs.d" in errors[0]["message"]
    assert "ibverbs-providers" in errors[0]["fix"]


def test_ibv_devinfo_rxe_without_link_layer():
    (device,) = parse_ibv_devinfo(corpus("ibv_devinfo_rxe0_no_link_layer.txt"))
    assert device["hca_id"] == "rxe0" and device["fw_ver"] == "0.0.0"
    assert device["node_guid"] == "428d:5cff:fe35:bb12"
    assert device["sys_image_guid"] == "0000:0000:0000:0000"
    assert device["vendor_id"] == "0x0000" and device["vendor_part_id"] == 0
    assert device["board_id"] is None
    (port,) = device["ports"]
    assert port["state"] == "PORT_ACTIVE" and port["active_mtu"] == 1024 and port["max_mtu"] == 4096
    assert port["link_layer"] is None


def test_ibv_devinfo_verbose_mlnx_ofed4():
    (device,) = parse_ibv_devinfo(corpus("ibv_devinfo_v_mlnx_ofed4_exp_cx4lx_roce.txt"))
    assert device["hca_id"] == "mlx5_3" and device["fw_ver"] == "14.27.1016"
    assert device["board_id"] == "MT_2420110004" and device["max_qp"] == 262144
    assert device["device_cap_flags"] == "0xa5721c36"
    assert "MANAGED_FLOW_STEERING" in device["device_cap_flags_list"]
    assert device["device_cap_flags_list"][-1] == "Unknown flags: 0x84400000"
    assert device["general_odp_caps"] == ["ODP_SUPPORT", "ODP_SUPPORT_IMPLICIT"]
    assert device["uc_odp_caps"] == ["NO SUPPORT"]
    assert device["atomic_cap"] == "ATOMIC_HCA" and device["atomic_cap_num"] == 1
    (port,) = device["ports"]
    assert port["state"] == "PORT_ACTIVE" and port["active_mtu"] == 1024 and port["link_layer"] == "Ethernet"
    assert port["gid_tbl_len"] == 256
    assert port["active_width"] == "1X" and port["active_speed"] == "10.0 Gbps"
    assert port["active_speed_gbps"] == 10.0
    assert port["phys_state"] == "LINK_UP" and port["phys_state_num"] == 5
    assert [g["index"] for g in port["gids"]] == [0, 1, 2, 3]
    assert port["gids"][0]["gid"] == "fe80:0000:0000:0000:0ac0:ebff:fe3b:353c"
    assert port["gids"][3]["ipv4"] == "192.168.242.56"  # 0xc0a8f238
    assert port["gids"][3]["version"] is None  # this libibverbs prints no RoCE type


def test_ibv_devinfo_newer_gid_type_suffix():
    text = ("hca_id:\tmlx5_0\n\ttransport:\t\t\tInfiniBand (0)\n\tphys_port_cnt:\t\t\t1\n\t\tport:\t1\n"
            "\t\t\tstate:\t\t\tPORT_ACTIVE (4)\n\t\t\tactive_mtu:\t\t4096 (5)\n"
            "\t\t\tGID[  0]:\t\tfe80:0000:0000:0000:0ac0:ebff:fe3b:353c, RoCE v1\n"
            "\t\t\tGID[  3]:\t\t::ffff:192.168.1.5, RoCE v2\n")
    (device,) = parse_ibv_devinfo(text)
    gids = device["ports"][0]["gids"]
    assert [(g["index"], g["version"], g["ipv4"]) for g in gids] == [(0, "v1", None), (3, "v2", "192.168.1.5")]
    assert device["ports"][0]["active_mtu"] == 4096


def test_two_port_device_in_ibv_devinfo_and_ibstat():
    # Layout as printed by devinfo.c / ibstat.c for a dual-port ConnectX-3 (values made up, format real).
    devinfo = ("hca_id:\tmlx4_0\n\ttransport:\t\t\tInfiniBand (0)\n\tphys_port_cnt:\t\t\t2\n"
               "\t\tport:\t1\n\t\t\tstate:\t\t\tPORT_ACTIVE (4)\n\t\t\tmax_mtu:\t\t4096 (5)\n"
               "\t\t\tactive_mtu:\t\t2048 (4)\n\t\t\tport_lid:\t\t3\n\t\t\tlink_layer:\t\tInfiniBand\n\n"
               "\t\tport:\t2\n\t\t\tstate:\t\t\tPORT_DOWN (1)\n\t\t\tmax_mtu:\t\t4096 (5)\n"
               "\t\t\tactive_mtu:\t\t1024 (3)\n\t\t\tport_lid:\t\t0\n\t\t\tlink_layer:\t\tEthernet\n\n")
    (device,) = parse_ibv_devinfo(devinfo)
    assert device["phys_port_cnt"] == 2
    assert [(p["port"], p["state"], p["active_mtu"], p["port_lid"], p["link_layer"]) for p in device["ports"]] == [
        (1, "PORT_ACTIVE", 2048, 3, "InfiniBand"), (2, "PORT_DOWN", 1024, 0, "Ethernet")]
    ibstat = ("CA 'mlx4_0'\n\tCA type: MT4099\n\tNumber of ports: 2\n\tPort 1:\n\t\tState: Active\n\t\tRate: 56\n"
              "\tPort 2:\n\t\tState: Down\n\t\tPhysical state: Polling\n\t\tRate: 10\n")
    (ca,) = parse_ibstat(ibstat)
    assert ca["num_ports"] == 2
    assert [(p["port"], p["state"], p["rate"]) for p in ca["ports"]] == [(1, "Active", 56), (2, "Down", 10)]


def test_ibv_devinfo_this_machine_error():
    # What ibv_devinfo prints on the build machine (ENVIRONMENT.md): no RDMA in the kernel.
    text = "Failed to get IB devices list: Function not implemented\n"
    assert parse_ibv_devinfo(text) == []
    assert [e["code"] for e in parse_ibv_devinfo_errors(text)] == ["no_rdma_support"]


def test_ibv_devices_4dev():
    devices = parse_ibv_devices(corpus("ibv_devices_4dev.txt"))
    assert devices == [
        {"device": "mlx5_0", "node_guid": "0c42a103004029a0"},
        {"device": "mlx5_1", "node_guid": "0c42a103004029a1"},
        {"device": "mlx5_2", "node_guid": "0c42a10300753272"},
        {"device": "mlx5_3", "node_guid": "0c42a10300753273"},
    ]


def test_ibv_devices_mlx4_and_irdma():
    result = parse_ibv_devices_full(corpus("ibv_devices_mlx4_and_irdma.txt"))
    assert result["errors"] == []
    assert [(d["device"], d["node_guid"]) for d in result["devices"]] == [
        ("mlx4_0", "0002c90300b382a0"),
        ("irdma0", "ae1f6bfffeec331c"),
        ("irdma1", "ae1f6bfffeec331d"),
    ]


def test_ibv_devinfo_list_form():
    assert parse_ibv_devices("2 HCAs found:\n\tmlx5_0\n\tmlx5_1\n\n") == [
        {"device": "mlx5_0", "node_guid": None}, {"device": "mlx5_1", "node_guid": None}]


# ---- rdma link / rdma system ---------------------------------------------------------

def test_rdma_link_new_and_old_formats():
    text = corpus("rdma_link_new_and_old_iproute2_formats.txt")
    links = parse_rdma_link(text)
    assert [(l["device"], l["port"], l["netdev"], l["index"]) for l in links] == [
        ("mlx5_0", 1, "ens6f0np0", None),
        ("mlx5_1", 1, "ens6f1np1", None),
        ("mlx5_0", 1, None, 0),
        ("mlx5_1", 1, None, 1),
        ("mlx5_3", 1, "eth0", 7),
        ("mlx5_5", 1, "eth0", 10),
    ]
    assert all(l["state"] == "ACTIVE" and l["physical_state"] == "LINK_UP" for l in links)
    assert parse_rdma_link_full(text)["errors"] == []


def test_rdma_system_from_the_same_file():
    text = corpus("rdma_link_new_and_old_iproute2_formats.txt")
    # Two "rdma system" outputs in the file: shared (host) then exclusive (pod); the last wins.
    system = parse_rdma_system(text)
    assert system["netns_mode"] == "exclusive" and system["copy_on_fork"] is True
    first_snippet = text.split("~# rdma link")[1]
    assert parse_rdma_system(first_snippet)["netns_mode"] == "shared"
    newer = parse_rdma_system("netns shared privileged-qkey off copy-on-fork off\n")
    assert newer == {"netns_mode": "shared", "privileged_qkey": False, "copy_on_fork": False, "errors": []}
    assert parse_rdma_system('{"netns":"exclusive","copy-on-fork":true}')["netns_mode"] == "exclusive"


def test_rdma_link_old_format_ib_and_roce():
    links = parse_rdma_link(corpus("rdma_link_old_format_ib_and_roce.txt"))
    assert [(l["index"], l["device"]) for l in links] == [
        (0, "mlx5_0"), (2, "mlx5_2"), (4, "mlx5_4"), (5, "mlx5_5"), (7, "mlx5_3"), (16, "mlx5_1")]
    assert [l["device"] for l in links if l["state"] == "DOWN"] == ["mlx5_0", "mlx5_4"]
    assert all(l["physical_state"] == "DISABLED" for l in links if l["state"] == "DOWN")
    assert all(l["netdev"] is None for l in links)
    ib = links[3]
    assert ib["subnet_prefix"] == "fe80:0000:0000:0000"
    assert (ib["lid"], ib["sm_lid"], ib["lmc"]) == (12, 4, 0)
    assert ib["state"] == "ACTIVE" and ib["physical_state"] == "LINK_UP"


def test_rdma_link_details_json_and_errors():
    text = ("link mlx5_0/1 subnet_prefix fe80:0000:0000:0000 lid 7 sm_lid 1 lmc 0 state ACTIVE "
            "physical_state LINK_UP netdev ib0 netdev_index 5 \n    caps: <SM, CM, IP_BASED_GIDS>\n")
    (link,) = parse_rdma_link(text)
    assert link["netdev_index"] == 5 and link["caps"] == ["SM", "CM", "IP_BASED_GIDS"]
    old_json = '[{"ifindex":3,"ifname":"mlx5_3/1","state":"ACTIVE","physical_state":"LINK_UP"}]'
    new_json = '[{"ifindex":0,"ifname":"mlx5_0","port":1,"state":"DOWN","physical_state":"DISABLED",' \
               '"netdev":"ens1f0","netdev_index":4}]'
    assert parse_rdma_link(old_json)[0]["device"] == "mlx5_3" and parse_rdma_link(old_json)[0]["port"] == 1
    assert parse_rdma_link(new_json)[0]["netdev"] == "ens1f0" and parse_rdma_link(new_json)[0]["index"] == 0
    assert [e["code"] for e in parse_rdma_link_full("Error: Wrong device name\n")["errors"]] == ["no_device"]


# ---- show_gids / hiroce3 gids ------------------------------------------------------

def test_show_gids_4dev_12gids():
    result = parse_show_gids_full(corpus("show_gids_4dev_cx4lx_12gids.txt"))
    gids = result["gids"]
    assert len(gids) == 12 and result["n_gids_found"] == 12 and result["warnings"] == []
    assert [(g["device"], g["gid_index"]) for g in gids[:4]] == [("mlx5_0", i) for i in range(4)]
    assert gids[3] == {
        "device": "mlx5_0", "port": 1, "gid_index": 3,
        "gid": "0000:0000:0000:0000:0000:ffff:0a6c:a424", "ipv4": "10.108.164.36",
        "version": "v2", "netdev": "eth01", "type": "v2",
    }
    with_ipv4 = [(g["device"], g["gid_index"], g["ipv4"]) for g in gids if g["ipv4"]]
    assert with_ipv4 == [("mlx5_0", 2, "10.108.164.36"), ("mlx5_0", 3, "10.108.164.36"),
                         ("mlx5_2", 2, "192.20.28.1"), ("mlx5_2", 3, "192.20.28.1")]
    # The down port (mlx5_1) and the IPv6-only port (mlx5_3) only have link-local v1/v2 entries.
    for device in ("mlx5_1", "mlx5_3"):
        rows = [g for g in gids if g["device"] == device]
        assert [g["version"] for g in rows] == ["v1", "v2"]
        assert all(g["gid"].startswith("fe80:") and g["ipv4"] is None for g in rows)
    assert {g["device"]: g["netdev"] for g in gids} == {
        "mlx5_0": "eth01", "mlx5_1": "eth02", "mlx5_2": "eth03", "mlx5_3": "eth04"}


def test_show_gids_empty_in_pod():
    result = parse_show_gids_full(corpus("show_gids_empty_in_pod.txt"))
    assert result["gids"] == [] and result["n_gids_found"] == 0
    assert result["errors"] == [] and result["warnings"] == []


def test_show_gids_bond_4gids():
    gids = parse_show_gids(corpus("show_gids_mlx5_bond_0_4gids.txt"))
    assert [(g["device"], g["port"], g["gid_index"], g["version"], g["netdev"]) for g in gids] == [
        ("mlx5_bond_0", 1, 0, "v1", "bond0"),
        ("mlx5_bond_0", 1, 1, "v2", "bond0"),
        ("mlx5_bond_0", 1, 2, "v1", "bond0"),
        ("mlx5_bond_0", 1, 3, "v2", "bond0"),
    ]
    assert gids[3]["ipv4"] == "10.96.83.26" and gids[0]["ipv4"] is None
    assert gids[0]["gid"] == "fe80:0000:0000:0000:0e42:a1ff:fead:479a"


def test_show_gids_pod_net1():
    gids = parse_show_gids(corpus("show_gids_pod_net1_openshift.txt"))
    assert len(gids) == 4 and {g["device"] for g in gids} == {"mlx5_3"} and {g["netdev"] for g in gids} == {"net1"}
    v2_ipv4 = [g for g in gids if g["version"] == "v2" and g["ipv4"]]
    assert [(g["gid_index"], g["ipv4"]) for g in v2_ipv4] == [(3, "192.168.10.2")]
    assert v2_ipv4[0]["gid"] == "0000:0000:0000:0000:0000:ffff:c0a8:0a02"


def test_hiroce3_gids_huawei():
    gids = parse_show_gids(corpus("hiroce3_gids_huawei.txt"))
    assert [(g["device"], g["netdev"], g["port"], g["gid_index"], g["version"], g["ipv4"], g["link"]) for g in gids] == [
        ("hrn3_bond_0", "bond0", 1, 0, "v2", None, "up"),
        ("hrn3_bond_0", "bond0", 1, 1, "v2", "27.105.180.3", "up"),
        ("mlx5_0", "eth02", 1, 0, "v1", None, "down"),
        ("mlx5_0", "eth02", 1, 1, "v2", None, "down"),
        ("mlx5_1", "eth03", 1, 0, "v1", None, "down"),
        ("mlx5_1", "eth03", 1, 1, "v2", None, "down"),
    ]
    assert gids[1]["type"] == "RoCE v2" and gids[1]["gid"] == "0000:0000:0000:0000:0000:ffff:1b69:b403"


def test_show_gids_spaces_ib_port_without_netdev_and_count_mismatch():
    # show_gids rendered with spaces; an IB port has neither IPv4 nor netdev.
    text = ("DEV     PORT    INDEX   GID                                     IPv4            VER     DEV\n"
            "---     ----    -----   ---                                     ------------    ---     ---\n"
            "mlx5_0  1       0       fe80:0000:0000:0000:268a:07ff:feb1:bc04                 v1      ens11f0\n"
            "mlx5_1  1       0       fe80:0000:0000:0000:248a:0703:00b1:bc05                 v1\n"
            "n_gids_found=3\n")
    result = parse_show_gids_full(text)
    assert [(g["device"], g["netdev"]) for g in result["gids"]] == [("mlx5_0", "ens11f0"), ("mlx5_1", None)]
    assert result["warnings"] == ["n_gids_found=3 but 2 GID rows were read"]


def test_show_gids_without_header_uses_show_gids_columns():
    gids = parse_show_gids("mlx5_2\t1\t3\t0000:0000:0000:0000:0000:ffff:c014:1c01\t192.20.28.1  \tv2\teth03\n")
    assert gids[0]["gid_index"] == 3 and gids[0]["ipv4"] == "192.20.28.1" and gids[0]["netdev"] == "eth03"


# ---- the real tools on this machine ---------------------------------------------------

LIVE_TOOLS = [
    (["ibv_devinfo"], parse_ibv_devinfo_full, "devices"),
    (["ibv_devinfo", "-v"], parse_ibv_devinfo_full, "devices"),
    (["ibv_devices"], parse_ibv_devices_full, "devices"),
    (["rdma", "link"], parse_rdma_link_full, "links"),
    (["rdma", "-j", "link"], parse_rdma_link_full, "links"),
    (["ibstat"], parse_ibstat_full, "cas"),
    (["ibstatus"], parse_ibstatus_full, "cas"),
    (["ibdev2netdev", "-v"], parse_ibdev2netdev_full, "devices"),
    (["show_gids"], parse_show_gids_full, "gids"),
]


@pytest.mark.parametrize("argv,parse,key", LIVE_TOOLS, ids=[" ".join(t[0]) for t in LIVE_TOOLS])
def test_real_tool_on_this_machine(argv, parse, key):
    """Whatever the tool prints here (devices, or the error of a machine without RDMA) is read."""
    import shutil
    if shutil.which(argv[0]) is None:
        pytest.skip("%s is not installed here" % argv[0])
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False,
                          env=dict(os.environ, LC_ALL="C"))
    result = parse(proc.stdout + proc.stderr)
    if proc.returncode == 0 and proc.stdout.strip():
        assert result[key], proc.stdout
        assert result["errors"] == []
    elif proc.returncode != 0:
        # No RDMA device on this machine: the failure must be recognised, not ignored.
        assert result[key] == []
        assert result["errors"], proc.stdout + proc.stderr
        assert all(e["code"] not in ("parser_error", "unknown") for e in result["errors"]), result["errors"]


def test_real_ibstat_unknown_device():
    """ibstat on a CA that does not exist (infiniband-diags 44 prints an ibpanic and exits 255)."""
    import shutil
    if shutil.which("ibstat") is None:
        pytest.skip("ibstat (infiniband-diags) is not installed here")
    proc = subprocess.run(["ibstat", "commcheck_no_such_ca0", "1"], capture_output=True, text=True, timeout=60,
                          check=False)
    full = parse_ibstat_full(proc.stdout + proc.stderr)
    assert proc.returncode != 0 and full["cas"] == []
    assert [e["code"] for e in full["errors"]] == ["device_not_found"], proc.stderr


def test_rdma_system_on_this_machine():
    import shutil
    if shutil.which("rdma") is None:
        pytest.skip("iproute2 rdma is not installed here")
    proc = subprocess.run(["rdma", "system"], capture_output=True, text=True, timeout=60, check=False)
    system = parse_rdma_system(proc.stdout + proc.stderr)
    if proc.returncode == 0:
        assert system["netns_mode"] in ("shared", "exclusive")
    else:
        assert [e["code"] for e in system["errors"]] == ["no_rdma_netlink"]


# ---- filters, through Ansible itself -------------------------------------------------

def test_filter_plugins_direct():
    from ansible_collections.clusterops.commcheck.plugins.filter import parse_ibstat as ibstat_filter
    from ansible_collections.clusterops.commcheck.plugins.filter import parse_ibv_devinfo as devinfo_filter
    from ansible.errors import AnsibleFilterError

    parse = ibstat_filter.FilterModule().filters()["parse_ibstat"]
    text = corpus("ibstat_a100_ibpanic_after_partial.txt")
    assert parse(text) == parse_ibstat(text)
    assert parse(text.encode("utf-8")) == parse_ibstat(text)
    assert parse(text, full=True)["errors"][0]["device"] == "mlx5_8"
    # A registered command result: stdout and stderr are both read.
    devinfo = devinfo_filter.FilterModule().filters()["parse_ibv_devinfo"]
    result = {"stdout": "", "stderr": corpus("ibv_devinfo_no_ib_devices_no_config_dir.txt"), "rc": 255}
    assert [e["code"] for e in devinfo(result, full=True)["errors"]] == ["config_missing", "no_device"]
    with pytest.raises(AnsibleFilterError):
        parse(42)
    with pytest.raises(AnsibleFilterError):
        parse({"rc": 0})


PLAYBOOK = """
- hosts: localhost
  gather_facts: false
  vars:
    corpus: "{{ lookup('ansible.builtin.env', 'CORPUS') }}"
    ibstat: "{{ lookup('ansible.builtin.file', corpus ~ '/ibstat_h100_some_down.txt') }}"
    show_gids: "{{ lookup('ansible.builtin.file', corpus ~ '/show_gids_4dev_cx4lx_12gids.txt') }}"
  tasks:
    - name: Use every filter as the documentation examples do
      ansible.builtin.copy:
        dest: "{{ lookup('ansible.builtin.env', 'OUT') }}"
        mode: "0644"
        content: >-
          {{ {
            'not_active': ibstat | clusterops.commcheck.parse_ibstat | subelements('ports')
                          | rejectattr('1.state', 'equalto', 'Active') | map('first') | map(attribute='name') | list,
            'v2_index': show_gids | clusterops.commcheck.parse_show_gids
                        | selectattr('version', 'equalto', 'v2') | selectattr('ipv4')
                        | items2dict(key_name='device', value_name='gid_index'),
            'down': lookup('ansible.builtin.file', corpus ~ '/ibdev2netdev_10port_ib_two_down.txt')
                    | clusterops.commcheck.parse_ibdev2netdev | selectattr('state', 'equalto', 'Down')
                    | map(attribute='device') | list,
            'mtu': lookup('ansible.builtin.file', corpus ~ '/ibv_devinfo_4dev_roce_port_down.txt')
                   | clusterops.commcheck.parse_ibv_devinfo | subelements('ports') | map('last')
                   | map(attribute='active_mtu') | list,
            'links': lookup('ansible.builtin.file', corpus ~ '/rdma_link_old_format_ib_and_roce.txt')
                     | clusterops.commcheck.parse_rdma_link | rejectattr('state', 'equalto', 'ACTIVE')
                     | map(attribute='device') | list,
            'iperf': (lookup('ansible.builtin.file', corpus ~ '/../../iperf3/tcp_loopback.json')
                      | clusterops.commcheck.parse_iperf3).received_gbps,
          } | to_json }}
"""


@pytest.mark.slow
def test_filters_in_a_playbook(tmp_path):
    playbook = tmp_path / "filters.yml"
    playbook.write_text(PLAYBOOK)
    out = tmp_path / "out.json"
    env = dict(os.environ, CORPUS=CORPUS, OUT=str(out), ANSIBLE_NOCOLOR="1",
               ANSIBLE_LOCALHOST_WARNING="false", ANSIBLE_INVENTORY_UNPARSED_WARNING="false")
    command = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", "localhost,",
               "-c", "local", "-e", "ansible_python_interpreter=" + sys.executable, str(playbook)]
    proc = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads(out.read_text())
    assert data["not_active"] == ["mlx5_2", "mlx5_7", "mlx5_8"]
    assert data["v2_index"] == {"mlx5_0": 3, "mlx5_2": 3}
    assert data["down"] == ["mlx5_4", "mlx5_5"]
    assert data["mtu"] == [1024, 1024, 1024, 1024]
    assert data["links"] == ["mlx5_0", "mlx5_4"]
    assert data["iperf"] == pytest.approx(19.882346)
