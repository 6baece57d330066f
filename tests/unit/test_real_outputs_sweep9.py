# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Ninth sweep of real tool outputs, the least covered discovery variants, perftest and iperf3 JSON
(tests/fixtures/real, sources in each SOURCES.md): what an operator reads from them.

Misread before: ``ibv_devinfo -v`` printed capability sections (``tso_caps:``, ``rss_caps:``,
``packet_pacing_caps:``, ``cq moderation caps:``) whose fields, one indent deeper, were flattened into the device,
so the three ``supported_qp`` lists of a ConnectX-6 Dx merged into one; a statement at a key's own indent after a
flag list ("tag matching not supported", "completion_timestamp_mask not supported", "core clock not supported")
was read as one more flag of that list.  perftest's latency row whose t_stdev and 99% percentile ran together
("2465.901216.65", a value wider than its printf field) was dropped: the run had a table header, no row, no error
and no warning.  iperf3 listed the ``--omit`` warm-up intervals among the measured ones, and a receiver that
counted 0 bytes of what was sent gave received_gbps 0.0 with no word of why.
Read right already, and now pinned: Broadcom bnxt_re names (``bnxt_re0``, udev ``roceo1``) in ``rdma link`` and
``ibstat`` (a multi-word CA type, ``Rate: 2.5``), udev and PCI-domain names (``ibp23s0``, ``roceP2p1s0f0``),
``ibstatus`` of RoCE ports, ConnectX-7 InfiniBand PORT_DOWN at lid 65535, tab-indented mixed RoCE/IB devices,
perftest's ``CPU_Util[%]`` column, and a ``show_gids`` whose link-local GIDs were redacted by hand.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_ibdev2netdev import (
    parse_ibdev2netdev_full)
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_ibstat import (
    parse_ibstat_full, parse_ibstatus_full)
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_ibv_devinfo import (
    parse_ibv_devinfo_full)
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_iperf3 import parse_iperf3
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_perftest import parse_perftest
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_rdma_link import (
    parse_rdma_link_full)
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_show_gids import (
    parse_show_gids_full)
from real_outputs import real


def _ports(result):
    """(device, port, state, link_layer, port_lid) of every ibv_devinfo port."""
    return [(d["hca_id"], p["port"], p["state"], p["link_layer"], p["port_lid"])
            for d in result["devices"] for p in d["ports"]]


# --- ibv_devinfo ---------------------------------------------------------------------------------------

def test_tab_indented_devinfo_with_roce_ports_and_an_ib_port():
    result = parse_ibv_devinfo_full(real("ibv_devinfo", "ibv_devinfo_tabs_cx6dx_roce_one_down_and_cx6_ib_lid7.txt"))
    assert (result["errors"], result["warnings"]) == ([], [])
    assert _ports(result) == [("mlx5_0", 1, "PORT_ACTIVE", "Ethernet", 0), ("mlx5_1", 1, "PORT_DOWN", "Ethernet", 0),
                              ("mlx5_2", 1, "PORT_ACTIVE", "InfiniBand", 7)]
    assert [d["vendor_part_id"] for d in result["devices"]] == [4125, 4125, 4123]
    assert result["devices"][2]["ports"][0]["sm_lid"] == 9
    assert result["devices"][0]["ports"][0]["active_mtu"] == 1024


def test_cx7_ib_port_down_keeps_lid_65535_after_the_prompt():
    result = parse_ibv_devinfo_full(real("ibv_devinfo", "ibv_devinfo_cx7_ib_port_down_lid_65535_prompt.txt"))
    assert (result["errors"], result["warnings"]) == ([], [])
    assert _ports(result) == [("mlx5_0", 1, "PORT_DOWN", "InfiniBand", 65535)]
    assert (result["devices"][0]["fw_ver"], result["devices"][0]["board_id"]) == ("28.39.2048", "MT_0000000838")


def test_capability_sections_keep_their_own_fields():
    result = parse_ibv_devinfo_full(real(
        "ibv_devinfo", "ibv_devinfo_vv_bond_cx6dx_2x_50g_mixed_gid_notation_tag_matching.txt"))
    assert (result["errors"], result["warnings"]) == ([], [])
    device = result["devices"][0]
    assert device["hca_id"] == "mlx5_bond_0"
    # each section's supported_qp is its own, not one list of three
    assert device["tso_caps"] == {"max_tso": "262144", "supported_qp": ["SUPPORT_RAW_PACKET"]}
    assert device["rss_caps"]["supported_qp"] == ["SUPPORT_RAW_PACKET"]
    assert device["rss_caps"]["rx_hash_fields_mask"] == "0x800000FF"
    assert device["packet_pacing_caps"] == {"qp_rate_limit_min": "1kbps", "qp_rate_limit_max": "100000000kbps",
                                            "supported_qp": ["SUPPORT_RAW_PACKET"]}
    assert device["cq_moderation_caps"] == {"max_cq_count": "65535", "max_cq_period": "4095 us"}
    assert "supported_qp" not in device and "max_tso" not in device
    # "tag matching not supported" is a statement, no flag of the list before it
    assert not any("tag matching" in str(value) for value in device.values())
    # the flag lists before the sections are untouched
    assert device["device_cap_flags_ex_list"] == ["RAW_SCATTER_FCS", "PCI_WRITE_END_PADDING",
                                                  "Unknown flags: 0x3000004100000000"]
    assert device["raw_packet_caps"][-1] == "Delay drop"
    assert (device["num_comp_vectors"], device["hca_core_clock"]) == ("63", "1000000kHZ")


def test_ports_of_a_vv_dump_read_both_gid_notations():
    device = parse_ibv_devinfo_full(real(
        "ibv_devinfo", "ibv_devinfo_vv_bond_cx6dx_2x_50g_mixed_gid_notation_tag_matching.txt"))["devices"][0]
    port = device["ports"][0]
    assert (port["state"], port["link_layer"], port["active_width"], port["active_speed_gbps"],
            port["phys_state"]) == ("PORT_ACTIVE", "Ethernet", "2X", 50.0, "LINK_UP")
    assert [(g["index"], g["version"], g["ipv4"]) for g in port["gids"]] == [
        (0, "v1", None), (1, "v2", None), (2, "v1", "27.105.179.3"), (3, "v2", "27.105.179.3")]
    assert (port["max_vl_num"], port["max_vl_num_num"]) == ("invalid value", 0)


def test_statements_after_a_flag_list_are_no_flags():
    result = parse_ibv_devinfo_full(real("ibv_devinfo", "ibv_devinfo_v_rxe_statements_after_flag_lists.txt"))
    assert (result["errors"], result["warnings"]) == ([], [])
    device = result["devices"][0]
    assert device["xrc_odp_caps"] == ["NO SUPPORT"]
    assert device["rc_odp_caps"][-1] == "Unknown flags: 0xC0"
    assert device["device_cap_flags_ex_list"] == ["Unknown flags: 0x1C000000000"]
    assert device["packet_pacing_caps"] == {"qp_rate_limit_min": "0kbps", "qp_rate_limit_max": "0kbps"}
    assert device["num_comp_vectors"] == "2"
    port = device["ports"][0]
    assert [(g["gid"], g["version"], g["ipv4"]) for g in port["gids"]] == [
        ("fe80::a00:27ff:fe58:ef89", "v2", None), ("::ffff:10.0.0.1", "v2", "10.0.0.1"),
        ("fe80::dedb:4745:a22:4f86", "v2", None)]
    assert (port["active_width"], port["active_speed_gbps"], port["gid_tbl_len"]) == ("1X", 2.5, 1024)


def test_flat_pastes_keep_their_flags():
    """A paste that lost its indentation cannot tell statements from flags: flags, as before."""
    text = "hca_id: mlx5_0\ndevice_cap_flags: 0x1\nBAD_PKEY_CNTR\nXRC\nmax_sge: 30\n"
    device = parse_ibv_devinfo_full(text)["devices"][0]
    assert device["device_cap_flags_list"] == ["BAD_PKEY_CNTR", "XRC"]
    assert device["max_sge"] == 30


# --- rdma link / ibstat / ibstatus / ibdev2netdev / show_gids -------------------------------------------

def _links(result):
    return [(link["device"], link["port"], link["state"], link["physical_state"], link["netdev"])
            for link in result["links"]]


def test_rdma_link_of_broadcom_bnxt_re_ports():
    result = parse_rdma_link_full(real("rdma_link", "rdma_link_bnxt_re_active_and_down_disabled_trailing_space.txt"))
    assert result["errors"] == []
    assert _links(result) == [("bnxt_re0", 1, "ACTIVE", "LINK_UP", "enp194s0f0np0"),
                              ("bnxt_re1", 1, "DOWN", "DISABLED", "enp194s0f1np1")]


def test_rdma_link_of_an_ib_udev_name_beside_broadcom_roce_ports():
    result = parse_rdma_link_full(real("rdma_link", "rdma_link_ib_udev_name_and_bnxt_re_roceo_prompt.txt"))
    assert result["errors"] == []
    assert _links(result) == [("ibp23s0", 1, "ACTIVE", "LINK_UP", None),
                              ("roceo1", 1, "ACTIVE", "LINK_UP", "eno1np0"),
                              ("roceo2", 1, "DOWN", "DISABLED", "eno2np1")]
    ib = result["links"][0]
    assert (ib["lid"], ib["sm_lid"], ib["lmc"], ib["subnet_prefix"]) == (2, 2, 0, "fe80:0000:0000:0000")


def test_rdma_link_and_ibdev2netdev_keep_pci_domain_names_as_printed():
    links = parse_rdma_link_full(real("rdma_link", "rdma_link_gb10_rocep_uppercase_domain_names_prompt.txt"))
    assert links["errors"] == []
    assert _links(links) == [("rocep1s0f0", 1, "ACTIVE", "LINK_UP", "enp1s0f0np0"),
                             ("rocep1s0f1", 1, "DOWN", "DISABLED", "enp1s0f1np1"),
                             ("roceP2p1s0f0", 1, "ACTIVE", "LINK_UP", "enP2p1s0f0np0"),
                             ("roceP2p1s0f1", 1, "DOWN", "DISABLED", "enP2p1s0f1np1")]
    mapping = parse_ibdev2netdev_full(real("ibdev2netdev", "ibdev2netdev_gb10_rocep_uppercase_domain_names_prompt.txt"))
    assert mapping["errors"] == []
    assert [(d["device"], d["port"], d["netdev"], d["state"]) for d in mapping["devices"]] == [
        ("rocep1s0f0", 1, "enp1s0f0np0", "Up"), ("rocep1s0f1", 1, "enp1s0f1np1", "Down"),
        ("roceP2p1s0f0", 1, "enP2p1s0f0np0", "Up"), ("roceP2p1s0f1", 1, "enP2p1s0f1np1", "Down")]


def test_ibstat_of_a_cx7_ib_ca_and_broadcom_roce_cas():
    result = parse_ibstat_full(real("ibstat", "ibstat_cx7_ib_udev_name_and_bnxt_re_roce_rate_2_5_disabled.txt"))
    assert (result["errors"], result["warnings"]) == ([], [])
    assert [(ca["name"], ca["ca_type"], ca["hw_version"]) for ca in result["cas"]] == [
        ("ibp23s0", "MT4129", "0"),
        ("roceo1", "Broadcom NetXtreme-C/E RoCE Driver HCA", "0x14e4"),
        ("roceo2", "Broadcom NetXtreme-C/E RoCE Driver HCA", "0x14e4")]
    assert [(p["state"], p["phys_state"], p["rate"], p["base_lid"], p["link_layer"])
            for ca in result["cas"] for p in ca["ports"]] == [
        ("Active", "LinkUp", 200, 2, "InfiniBand"), ("Active", "LinkUp", 2.5, 0, "Ethernet"),
        ("Down", "Disabled", 2.5, 0, "Ethernet")]


def test_ibstatus_of_roce_ports_reads_rate_width_and_speed():
    result = parse_ibstatus_full(real("ibstatus", "ibstatus_roce_100g_4x_edr_ethernet_two_devices.txt"))
    assert (result["errors"], result["warnings"]) == ([], [])
    ports = [p for ca in result["cas"] for p in ca["ports"]]
    assert [(p["device"], p["port"], p["state"], p["phys_state"], p["rate"], p["width"], p["speed"],
             p["link_layer"], p["base_lid"]) for p in ports] == [
        ("mlx5_0", 1, "Active", "LinkUp", 100, "4X", "EDR", "Ethernet", 0),
        ("mlx5_1", 1, "Active", "LinkUp", 100, "4X", "EDR", "Ethernet", 0)]
    assert ports[1]["default_gid"] == "fe80:0000:0000:0000:8ae9:a4ff:fe9c:7f1b"


def test_show_gids_with_redacted_link_local_rows_keeps_the_routable_ones():
    result = parse_show_gids_full(real("show_gids", "show_gids_gb10_rocep_uppercase_names_redacted_link_local.txt"))
    assert result["errors"] == []
    assert [(g["device"], g["gid_index"], g["version"], g["ipv4"], g["netdev"]) for g in result["gids"]] == [
        ("rocep1s0f0", 2, "v1", "192.168.100.10", "enp1s0f0np0"),
        ("rocep1s0f0", 3, "v2", "192.168.100.10", "enp1s0f0np0"),
        ("roceP2p1s0f0", 2, "v1", "192.168.100.14", "enP2p1s0f0np0"),
        ("roceP2p1s0f0", 3, "v2", "192.168.100.14", "enP2p1s0f0np0")]
    # the unreadable rows are not silently taken for the whole table
    assert result["warnings"] == ["n_gids_found=12 but 4 GID rows were read"]


# --- perftest --------------------------------------------------------------------------------------------

def test_latency_row_with_values_run_together_is_read_apart():
    result = parse_perftest(real("perftest", "ib_send_lat_server_rxe_glued_stdev_and_percentile_server_header.txt"))
    assert result["ok"] is True and result["errors"] == []
    assert (result["test"], result["metric"], result["side"]) == ("send", "lat", "server")
    assert result["settings"]["device"] == "rxe0" and result["settings"]["gid_index"] == 1
    row = result["rows"][0]
    assert (row["bytes"], row["iterations"], row["t_typical_us"], row["t_avg_us"], row["t_stdev_us"],
            row["p99_us"], row["p99_9_us"]) == (2, 1000, 692.41, 928.05, 2465.9, 1216.65, 37330.73)
    assert len(result["warnings"]) == 1 and "run together" in result["warnings"][0]


def test_a_table_header_without_a_readable_row_says_so():
    text = real("perftest", "ib_send_lat_server_rxe_glued_stdev_and_percentile_server_header.txt")
    text = text.replace("2465.901216.65", "2465.90x1216.65")
    result = parse_perftest(text)
    assert result["ok"] is False and result["rows"] == []
    assert "the result table header was printed but no result row was read" in result["warnings"]


def test_bw_row_with_the_cpu_util_column():
    result = parse_perftest(real("perftest", "ib_write_bw_cpu_util_column_gb10_redacted_qpn.txt"))
    assert result["ok"] is True and result["errors"] == []
    assert (result["test"], result["side"], result["settings"]["device"], result["settings"]["gid_index"]) == (
        "write", "client", "roceP2p1s0f0", 3)
    assert result["rows"] == [{"bytes": 65536, "iterations": 1059332, "bw_peak_gbps": None, "bw_avg_gbps": 92.57,
                               "msg_rate_mpps": 0.176557, "cpu_util_pct": 5.07}]
    assert result["remote_addresses"][0]["gid_ipv4"] == "192.168.100.10"


# --- iperf3 ---------------------------------------------------------------------------------------------

def test_omitted_warm_up_intervals_are_not_measured_intervals():
    result = parse_iperf3(real("iperf3", "iperf3_json_39_omit_3_warmup_intervals_restart_clock.txt"))
    assert result["ok"] is True and (result["errors"], result["warnings"]) == ([], [])
    assert (result["version"], result["omit_s"], result["duration_s"]) == ("iperf 3.9", 3.0, 10.0)
    assert (result["sent_gbps"], result["received_gbps"], result["retransmits"]) == (1.823488, 1.82279, 752)
    assert len(result["interval_gbps"]) == 10
    assert result["interval_gbps"][0] == 1.876793   # the first measured interval, not the slow-start one


def test_a_receiver_that_counted_nothing_is_said_so():
    result = parse_iperf3(real("iperf3", "iperf3_json_39_bytes_mode_receiver_zero_bytes.txt"))
    assert result["errors"] == []
    assert (result["sent_bytes"], result["received_bytes"], result["received_gbps"]) == (46464, 0, 0.0)
    assert len(result["warnings"]) == 1
    assert "receiver counted 0 bytes of the 46464 bytes sent" in result["warnings"][0]
