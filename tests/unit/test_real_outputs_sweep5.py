# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fifth sweep of real tool outputs from public issues and docs (tests/fixtures/real, sources in each
SOURCES.md): the values an operator reads from them.  Misread before: a perftest server and client started
in one terminal (``ib_send_bw ... &`` twice, a loopback self-test) whose two result rows ended up on one line
(the row was dropped without a word); perftest lines behind a ``[rank N]`` launcher label (nothing was read);
and NCCL's messages of ranks that disagree on what they exchange (``NET/IB : ... collective mismatch error``,
``Message truncated : received 256 bytes instead of 4``, ``Mismatched collective detected``,
``socketFinalizeAccept: wrong type 4 != 3``), read as an RDMA set-up failure, a bootstrap network failure or
nothing at all, so the advice sent the operator to cables, GIDs and firewalls instead of to the nodes whose
NCCL version, test arguments or NCCL_* settings differ.  Read right already, and now pinned: EFA's SRD
ib_send_bw in MiB/sec and an EFA client's rdma_cm ADDR_ERROR, ibv_devinfo of an Intel E810 (irdma,
``-v``) and of a HiSilicon HNS RoCE device after their ``rdma link`` lines, ``ibdev2netdev -v`` of VFs without
VPD next to a padded product name, and iperf3 3.0.11's JSON of an unroutable server."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_ibdev2netdev import (
    parse_ibdev2netdev_full,
)
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_ibv_devinfo import (
    parse_ibv_devinfo_full,
)
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_iperf3 import parse_iperf3
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_nccl_tests import (
    NCCL_TESTS_ERRORS,
    parse_nccl_tests,
)
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_perftest import parse_perftest
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_rdma_link import (
    parse_rdma_link_full,
)
from real_outputs import codes as _codes, error_of as _error, real

MIB_TO_GBPS = 2 ** 20 * 8 / 1e9


def _bw(result):
    return [(row["bytes"], row["iterations"], row["bw_peak_gbps"], row["bw_avg_gbps"], row["msg_rate_mpps"])
            for row in result["rows"]]


# --- perftest: two processes in one terminal ------------------------------------------------------

def test_perftest_server_and_client_rows_glued_on_one_line_are_both_read():
    result = parse_perftest(real("perftest", "ib_send_bw_ud_hns_server_and_client_one_terminal_glued_rows.txt"))
    assert (result["test"], result["metric"], result["bw_unit"]) == ("send", "bw", "MB/sec")
    settings = result["settings"]
    assert (settings["device"], settings["connection_type"], settings["mtu"], settings["gid_index"]) == (
        "roceo1", "UD", 1024, 3)
    # "1024 1000 0.00 7876.21 8.065242 1024 1000 8138.01 7630.57 7.813706": the server's row, then the client's
    assert _bw(result) == [
        (1024, 1000, None, round(7876.21 * MIB_TO_GBPS, 6), 8.065242),
        (1024, 1000, round(8138.01 * MIB_TO_GBPS, 6), round(7630.57 * MIB_TO_GBPS, 6), 7.813706)]
    assert any("one line" in warning for warning in result["warnings"])
    assert result["errors"] == [] and result["ok"] is True


def test_perftest_server_and_client_rows_on_their_own_lines_in_one_terminal():
    result = parse_perftest(real("perftest", "ib_send_bw_rc_hns_server_and_client_one_terminal.txt"))
    assert (result["settings"]["connection_type"], result["settings"]["link_type"]) == ("RC", "Ethernet")
    assert _bw(result) == [
        (65536, 1000, None, round(22724.01 * MIB_TO_GBPS, 6), 0.363584),
        (65536, 1000, round(22727.48 * MIB_TO_GBPS, 6), round(22651.04 * MIB_TO_GBPS, 6), 0.362417)]
    assert not any("one line" in warning for warning in result["warnings"])
    assert result["errors"] == [] and result["ok"] is True


# --- perftest: launcher labels, EFA -----------------------------------------------------------------

def test_perftest_lines_behind_a_rank_label_are_read():
    result = parse_perftest(real("perftest", "ib_send_lat_modal_rank_prefix_two_ranks.txt"))
    assert result["metric"] == "lat" and result["time_unit"] == "usec"
    assert [(r["bytes"], r["iterations"], r["t_min_us"], r["t_max_us"], r["t_typical_us"], r["t_avg_us"],
             r["t_stdev_us"], r["p99_us"], r["p99_9_us"]) for r in result["rows"]] == [
        (2, 1000, 12.12, 18.39, 14.24, 14.32, 0.62, 16.14, 18.39),
        (2, 1000, 12.11, 18.86, 14.23, 14.32, 0.65, 16.18, 18.86)]
    assert result["errors"] == [] and result["ok"] is True


def test_perftest_efa_srd_send_bw_in_mib_per_second():
    result = parse_perftest(real("perftest", "ib_send_bw_efa_srd_a_mib_transport_unknown.txt"))
    settings = result["settings"]
    assert (settings["device"], settings["transport_type"], settings["connection_type"]) == (
        "rdmap47s0", "Unknown", "SRD")
    assert (settings["cqe_poll_batch"], settings["lock_free"], settings["using_ddp"]) == (16, False, False)
    assert result["bw_unit"] == "MiB/sec" and len(result["rows"]) == 13
    assert _bw(result)[-1] == (8192, 1000, round(10987.64 * MIB_TO_GBPS, 6), round(8909.75 * MIB_TO_GBPS, 6),
                               1.140448)
    assert result["local_addresses"][0]["qpn"] == "000000"
    assert result["local_addresses"][0]["gid_ip"] == "fe80::104c:74ff:fe46:e1ab"
    assert result["errors"] == [] and result["warnings"] == [] and result["ok"] is True


def test_perftest_rdma_cm_address_error_on_an_efa_client():
    result = parse_perftest(real("perftest", "err_rdma_cm_addr_error_efa_client.txt"))
    assert (result["test"], result["metric"], result["side"]) == ("send", "bw", "client")
    assert result["command"] == "$ ib_send_bw -d rdmap47s0 -x 0 -F -R 172.31.94.37"
    assert _codes(result) == ["connect_failed"]
    assert _error(result, "connect_failed")["evidence"] == [
        "Received 10 times ADDR_ERROR", "Unable to perform rdma_client function",
        "Unable to init the socket connection"]
    assert result["rows"] == [] and result["ok"] is False


# --- nccl: ranks that disagree ----------------------------------------------------------------------

def _mismatch(name):
    result = parse_nccl_tests(real("nccl_tests", name))
    assert _codes(result) == ["nccl_rank_mismatch", "no_table"]
    error = _error(result, "nccl_rank_mismatch")
    assert error["cause"] == NCCL_TESTS_ERRORS["nccl_rank_mismatch"][0]
    assert "NCCL version" in error["fix"] and "NCCL_" in error["fix"]
    assert result["ok"] is False
    return result, error


def test_nccl_net_ib_collective_mismatch_is_a_rank_mismatch_not_an_rdma_setup_failure():
    _result, error = _mismatch("nccl_warn_net_ib_collective_mismatch_pdsh_prefix.txt")
    assert "local size 496640 remote size 65536" in error["message"]
    assert error["hosts"] == ["so-ucloud-10-10-23-10"]


def test_nccl_bootstrap_message_truncated_is_a_rank_mismatch_not_a_network_failure():
    _result, error = _mismatch("nccl_warn_bootstrap_message_truncated_srun_label.txt")
    assert error["message"] == "Message truncated : received 256 bytes instead of 4"
    assert error["hosts"] == ["compute-st-p4de24xlarge-2"]


def test_nccl_mismatched_collective_detected_is_an_error_of_every_rank_that_saw_it():
    result, error = _mismatch("nccl_warn_mismatched_collective_detected_nccl24.txt")
    assert error["count"] == 4 and "rank 11" in error["message"]
    assert error["hosts"] == ["node-8x-v100-nvlink-1"]
    assert not any("Mismatched collective" in warning for warning in result["warnings"])


def test_nccl_socket_of_the_wrong_type_is_nodes_on_different_networks():
    result, error = _mismatch("nccl_warn_socket_finalize_accept_wrong_type_socket_vs_ib.txt")
    assert error["message"] == "socketFinalizeAccept: wrong type 4 != 3"
    assert result["transport"] == "Socket" and result["channel_transports"] == ["NET/Socket", "P2P"]


# --- ibv_devinfo / rdma link: Intel irdma and HiSilicon HNS ----------------------------------------

def test_irdma_e810_verbose_devinfo_after_rdma_link_lines():
    text = real("ibv_devinfo", "ibv_devinfo_v_irdma_e810_after_rdma_link.txt")
    links = parse_rdma_link_full(text)
    assert [(link["device"], link["state"], link["physical_state"], link["netdev"]) for link in links["links"]] == [
        ("irdma0", "DOWN", "DISABLED", "enp23s0f0"), ("irdma1", "ACTIVE", "LINK_UP", "enp23s0f1")]
    assert links["errors"] == []
    result = parse_ibv_devinfo_full(text)
    assert [device["hca_id"] for device in result["devices"]] == ["irdma1"]
    device = result["devices"][0]
    assert (device["vendor_id"], device["vendor_part_id"], device["fw_ver"], device["board_id"]) == (
        "0x8086", 5522, "1.54", None)
    assert (device["max_qp"], device["max_cqe"], device["atomic_cap"]) == (65533, 1048574, "ATOMIC_NONE")
    port = device["ports"][0]
    assert (port["state"], port["active_mtu"], port["max_mtu"], port["link_layer"]) == (
        "PORT_ACTIVE", 1024, 4096, "Ethernet")
    assert (port["active_width"], port["active_speed_gbps"], port["phys_state"], port["gid_tbl_len"]) == (
        "4X", 25.0, "LINK_UP", 32)
    assert [(gid["index"], gid["version"], gid["ipv4"]) for gid in port["gids"]] == [
        (0, "v2", None), (1, "v2", "10.22.116.221")]
    assert result["errors"] == [] and result["warnings"] == []


def test_hns_roce_devinfo_after_rdma_link_lines():
    text = real("ibv_devinfo", "ibv_devinfo_hns_roceo1_after_rdma_link.txt")
    links = parse_rdma_link_full(text)
    assert [(link["device"], link["port"], link["state"], link["netdev"]) for link in links["links"]] == [
        ("roceo1", 1, "ACTIVE", "eno1"), ("roceo2", 1, "ACTIVE", "eno2"), ("roceo3", 1, "ACTIVE", "eno3")]
    result = parse_ibv_devinfo_full(text)
    device = result["devices"][0]
    assert (device["hca_id"], device["vendor_id"], device["vendor_part_id"], device["hw_ver"]) == (
        "roceo1", "0x19e5", 41512, "0x130")
    assert [(p["port"], p["state_num"], p["active_mtu"], p["link_layer"]) for p in device["ports"]] == [
        (1, 4, 1024, "Ethernet")]
    assert result["errors"] == []


# --- ibdev2netdev -v, iperf3 ------------------------------------------------------------------------

def test_ibdev2netdev_verbose_vf_without_vpd_and_a_padded_product_name():
    result = parse_ibdev2netdev_full(real("ibdev2netdev", "ibdev2netdev_v_vf_no_vpd_and_socket_direct_padding.txt"))
    devices = {entry["device"]: entry for entry in result["devices"]}
    assert len(result["devices"]) == 8 and result["errors"] == []
    socket_direct = devices["mlx5_5"]
    assert (socket_direct["part_id"], socket_direct["fw"], socket_direct["netdev"], socket_direct["state"]) == (
        "MCX654105A-HCAT", "20.30.1004", "ib0", "Up")
    assert socket_direct["product"].endswith("single-port QSFP56, Socket Direct")
    vf = devices["mlx5_6"]
    assert (vf["pci"], vf["hca_type"], vf["part_id"], vf["product"], vf["fw"], vf["port_state"]) == (
        "0000:4b:00.1", "MT4120", None, None, "16.27.1016", "DOWN")
    assert [devices[name]["port_state"] for name in ("mlx5_0", "mlx5_2", "mlx5_3")] == ["DOWN", "ACTIVE", "ACTIVE"]


def test_iperf3_3011_json_of_an_unroutable_server():
    result = parse_iperf3(real("iperf3", "iperf3_json_3011_no_route_empty_end.txt"))
    assert _codes(result) == ["no_route"]
    assert result["version"] == "iperf 3.0.11"
    assert (result["sent_gbps"], result["received_gbps"]) == (None, None)
    assert result["ok"] is False
