# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Seventh sweep of real tool outputs from public issues and docs (tests/fixtures/real, sources in each
SOURCES.md): the values an operator reads from them.  Misread before: perftest 26.x's parameter negotiation
("Failed to query device capabilities" on a ConnectX-3, "Failed to negotiate parameters", "<option> mismatch:
local=..., remote=...") was an unknown error or a mere warning; iperf3 errors printed without "error -" ("iperf3:
the client has unexpectedly closed the connection") and its "parameter error - ..." were not read at all (the
result said only that no JSON was there), and "unexpectedly closed" in the JSON was unknown; NCCL's failed
ibv_modify_qp to RTR with 110 (Connection timed out) between two valid RoCE v2 GIDs sent the operator to
NCCL_IB_GID_INDEX instead of to reachability between the NICs (rails, routes); an InfiniBand port DOWN while its
physical link is up (an SR-IOV VF in a pod) got cable advice, and perftest's port_down named no VF.  Read right
already, and now pinned: perftest's extra "BW min[Gb/sec]" column, ibstat behind libibumad's ibwarn debug lines,
`rdma link` of InfiniBand PF/VF ports at lid 65535 next to a RoCE port, and show_gids of pods whose GID table
starts at index 4 or 6."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.clusterops.commcheck.plugins.filter.commcheck_select_gid import FilterModule
from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery import rdma_discovery as rd
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_ibdev2netdev import (
    parse_ibdev2netdev_full,
)
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_ibstat import parse_ibstat_full
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_iperf3 import parse_iperf3
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_nccl_tests import parse_nccl_tests
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_perftest import parse_perftest
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_rdma_link import (
    parse_rdma_link_full,
)
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_show_gids import (
    parse_show_gids_full,
)
from real_outputs import codes as _codes, error_of as _error, real

HEALTHY_HOST = {"memlock": {"soft": "unlimited", "hard": "unlimited"}, "perftest": "/usr/bin/ib_write_bw",
                "in_container": False}
SELECT_GID = FilterModule().filters()["commcheck_select_gid"]


# --- perftest -----------------------------------------------------------------------------------------

def test_perftest_negotiation_on_a_connectx3_names_the_device_query_and_the_negotiation():
    result = parse_perftest(real("perftest", "err_mlx4_cx3_query_device_capabilities_negotiate.txt"))
    assert _codes(result) == ["device_query_failed", "negotiation_failed"]
    query = _error(result, "device_query_failed")
    assert query["evidence"] == ["Failed to query device capabilities"]
    assert "ConnectX-3" in query["cause"] and "#401" in query["fix"]
    assert _error(result, "negotiation_failed")["evidence"] == ["Failed to negotiate parameters"]
    assert (result["test"], result["metric"], result["ok"]) == ("write", "lat", False)


def test_perftest_bw_min_column_is_kept_apart_from_the_average():
    result = parse_perftest(real("perftest", "ib_write_bw_report_min_bw_column_gbits_roce.txt"))
    assert result["columns"][-1] == "BW min[Gb/sec]"
    assert result["rows"] == [{"bytes": 65536, "iterations": 5000, "bw_peak_gbps": 368.67, "bw_avg_gbps": 368.48,
                               "msg_rate_mpps": 0.702829, "bw_min_gb_sec": 0.0}]
    assert (result["settings"]["link_type"], result["settings"]["gid_index"]) == ("Ethernet", 3)
    assert result["ok"] is True and result["errors"] == [] and result["warnings"] == []


def test_perftest_port_down_of_a_vf_in_a_pod_names_the_vf():
    text = real("perftest", "err_port_down_sriov_vf_pod_after_ibdev2netdev_down.txt")
    result = parse_perftest(text)
    assert _codes(result) == ["port_down", "link_layer_failed", "device_open_failed"]
    down = _error(result, "port_down")
    assert down["evidence"] == ["root@sample-pod2-5d9957776c-jkvml:/#  Port number 1 state is Down"]
    assert "SR-IOV VF" in down["cause"] and "vf <N> state auto" in down["fix"]
    assert result["command"] == "root@sample-pod2-5d9957776c-jkvml:/# ib_write_bw -a -d mlx5_18 &"
    netdevs = parse_ibdev2netdev_full(text)["devices"]
    assert [(d["device"], d["port"], d["netdev"], d["state"]) for d in netdevs] == [("mlx5_18", 1, "net1", "Down")]


# --- iperf3 --------------------------------------------------------------------------------------------

def test_iperf3_server_line_without_error_prefix_is_a_closed_control_connection():
    result = parse_iperf3(real("iperf3", "iperf3_server_text_client_unexpectedly_closed.txt"))
    assert [(e["code"], e["message"]) for e in result["errors"]] == [
        ("control_closed", "iperf3: the client has unexpectedly closed the connection")]
    assert result["ok"] is False


def test_iperf3_parameter_error_is_a_rejected_option():
    result = parse_iperf3(real("iperf3", "iperf3_text_parameter_error_usage.txt"))
    assert [(e["code"], e["message"]) for e in result["errors"]] == [
        ("bad_option", "iperf3: parameter error - must either be a client (-c) or server (-s)")]


# --- NCCL ----------------------------------------------------------------------------------------------

def test_nccl_modify_qp_rtr_timeout_between_valid_gids_points_at_reachability_not_the_gid_index():
    result = parse_nccl_tests(real("nccl_tests", "nccl_warn_modify_qp_rtr_110_timed_out_ipv4_gids.txt"))
    assert _codes(result) == ["ib_setup_failed", "no_table"]
    error = _error(result, "ib_setup_failed")
    assert error["message"].startswith("Call to ibv_modify_qp failed with 110 Connection timed out")
    assert "NCCL_CROSS_NIC=0" in error["hint"] and "NCCL_IB_GID_INDEX" not in error["hint"]


# --- ibstat, rdma link, discovery --------------------------------------------------------------------

def _ports(cas):
    return [(ca["name"], p["port"], p["state"], p.get("phys_state"), p.get("rate"), p.get("link_layer"))
            for ca in cas for p in ca["ports"]]


def test_ib_vf_down_with_its_physical_link_up_gets_vf_advice_not_cable_advice():
    ibstat = parse_ibstat_full(real("ibstat", "ibstat_ib_vf_in_pod_down_linkup.txt"))
    assert _ports(ibstat["cas"]) == [("mlx5_7", 1, "Down", "LinkUp", 200, "InfiniBand")]
    assert ibstat["cas"][0]["ports"][0]["base_lid"] == 65535 and ibstat["errors"] == []
    base = "class/infiniband/mlx5_7/ports/1/"
    snapshot = {base + "state": "1: DOWN", base + "phys_state": "5: LinkUp", base + "link_layer": "InfiniBand"}
    facts = rd.discover(snapshot, dict(HEALTHY_HOST), tools={"ibstat": ibstat["cas"]})
    down = [f for f in facts["findings"] if f["code"] == "port_down"]
    assert len(down) == 1 and "physical state LinkUp" in down[0]["message"]
    assert "cable and peer port are fine" in down[0]["fix"] and "GUID" in down[0]["fix"]
    assert "virt_enabled" in down[0]["fix"]


def test_ibstat_behind_libibumad_debug_lines():
    ibstat = parse_ibstat_full(real("ibstat", "ibstat_mlx4_after_ibwarn_umad_debug_lines.txt"))
    assert _ports(ibstat["cas"]) == [("mlx4_0", 1, "Down", "Disabled", 10, "InfiniBand"),
                                     ("mlx4_0", 2, "Active", "LinkUp", 56, None)]
    assert ibstat["cas"][0]["ca_type"] == "MT4099" and ibstat["errors"] == []
    assert all(w.startswith("ibwarn: [168988] umad_") for w in ibstat["warnings"])


def test_rdma_link_of_ib_ports_next_to_a_roce_port():
    links = parse_rdma_link_full(real("rdma_link", "rdma_link_ib_pf_vfs_down_lid_65535_and_roce_netdev.txt"))["links"]
    assert [(lk["device"], lk["state"], lk.get("lid"), lk["netdev"]) for lk in links] == [
        ("mlx5_0", "ACTIVE", 3, None), ("mlx5_1", "DOWN", 65535, None), ("mlx5_2", "ACTIVE", 35, None),
        ("mlx5_3", "DOWN", 65535, None), ("mlx5_4", "ACTIVE", None, "enp97s0f0"), ("mlx5_5", "DOWN", 65535, None),
        ("mlx5_6", "ACTIVE", 4, None), ("mlx5_7", "DOWN", 65535, None), ("mlx5_8", "ACTIVE", 36, None)]
    assert {lk["physical_state"] for lk in links if lk["state"] == "DOWN"} == {"DISABLED"}


# --- show_gids of pods -----------------------------------------------------------------------------------

def _gid_rows(name):
    return [(g["device"], g["gid_index"], g["ipv4"], g["version"], g["netdev"])
            for g in parse_show_gids_full(real("show_gids", name))["gids"]]


def test_show_gids_of_a_pod_whose_table_starts_at_index_6():
    name = "show_gids_pod_sparse_table_from_index_6.txt"
    assert _gid_rows(name) == [("mlx5_0", 6, "11.0.4.1", "v1", "net1"), ("mlx5_0", 7, "11.0.4.1", "v2", "net1"),
                               ("mlx5_0", 8, None, "v1", "net1"), ("mlx5_0", 9, None, "v2", "net1")]
    gids = [dict(g, index=g["gid_index"]) for g in parse_show_gids_full(real("show_gids", name))["gids"]]
    assert SELECT_GID(gids, netdev="net1") == 7


def test_show_gids_of_macvlan_pods_link_local_first_from_index_4():
    name = "show_gids_pod_macvlan_sparse_from_index_4_tabs.txt"
    rows = _gid_rows(name)
    assert rows[:4] == [("mlx5_0", 4, None, "v1", "net1"), ("mlx5_0", 5, None, "v2", "net1"),
                        ("mlx5_0", 6, "10.152.0.12", "v1", "net1"), ("mlx5_0", 7, "10.152.0.12", "v2", "net1")]
    assert [r[0] for r in rows] == ["mlx5_0"] * 4 + ["mlx5_1"] * 4 + ["mlx5_2"]
    gids = [dict(g, index=g["gid_index"]) for g in parse_show_gids_full(real("show_gids", name))["gids"]
            if g["device"] == "mlx5_1"]
    assert SELECT_GID(gids, netdev="net2") == 7
