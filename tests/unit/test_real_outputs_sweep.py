# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Real tool outputs from public issues and docs (tests/fixtures/real, sources in each SOURCES.md):
the exact values their text shows.  Some were misread before (Ray/SkyPilot line prefixes, RCCL's
'RCCL version : x' line, perftest notes taken for errors and option rejections taken for nothing)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os

import pytest

from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_ibstat import (
    parse_ibstat_full,
    parse_ibstatus_full,
)
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_nccl_tests import parse_nccl_tests
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_perftest import (
    classify_perftest_error,
    parse_perftest,
)
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_rdma_link import parse_rdma_link_full
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_show_gids import parse_show_gids_full
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.text import clean_lines
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.tool_versions import nccl_version
from real_outputs import REAL, real


def test_every_real_fixture_has_a_source_line():
    for tool in sorted(os.listdir(REAL)):
        folder = os.path.join(REAL, tool)
        with open(os.path.join(folder, "SOURCES.md"), encoding="utf-8") as handle:
            sources = handle.read()
        for name in os.listdir(folder):
            if name != "SOURCES.md":
                assert "| %s |" % name in sources, (tool, name)


# --- launcher prefixes ---------------------------------------------------------------------------

def test_skypilot_ray_worker_prefix_is_stripped_from_perftest_output():
    # Before: no banner, no header, no row: the whole run read as empty.
    result = parse_perftest(real("perftest", "ib_send_bw_skypilot_ray_worker_prefix_ndr.txt"))
    assert (result["test"], result["metric"], result["side"], result["ok"]) == ("send", "bw", "client", True)
    assert result["banner"] == "Send BW Test"
    assert result["settings"]["device"] == "mlx5_0"
    assert result["settings"]["link_type"] == "IB"
    assert result["settings"]["mtu"] == 4096
    assert result["bw_unit"] == "Gb/sec"
    assert result["rows"] == [{"bytes": 65536, "iterations": 1000, "bw_peak_gbps": 361.82,
                               "bw_avg_gbps": 361.67, "msg_rate_mpps": 0.689839}]
    assert result["local_addresses"] == [{"lid": "0x1334", "qpn": "0x0131", "psn": "0xcdddde"}]
    assert result["remote_addresses"] == [{"lid": "0x132f", "qpn": "0x0131", "psn": "0x90f79b"}]
    assert result["errors"] == [] and result["warnings"] == []


@pytest.mark.parametrize("line, expected", [
    ("(worker1, rank=1, pid=33870, ip=192.168.0.15)  #bytes", " #bytes"),
    ("(task, pid=7059) Do we have GPUs?", "Do we have GPUs?"),
    ("(setup pid=8665) Reading package lists...", "Reading package lists..."),
    ("(pid=4321) x", "x"),
    ("(RayWorkerWrapper pid=927, ip=10.0.0.2) y", "y"),
    # vLLM on Ray nests two prefixes
    ("(EngineCore_DP0 pid=742) (RayWorkerWrapper pid=927) corona:927:927 [0] NCCL INFO RCCL version : 2.26.6",
     "corona:927:927 [0] NCCL INFO RCCL version : 2.26.6"),
    ("(setup pid=33870, ip=192.168.0.15) ", ""),
    # not a launcher prefix
    ("(1) first item", "(1) first item"),
    ("(pid 12) x", "(pid 12) x"),
    ("(note: pid=12 is gone) x", "(note: pid=12 is gone) x"),
])
def test_ray_prefixes(line, expected):
    assert clean_lines(line) == [expected]


# --- perftest ------------------------------------------------------------------------------------

def test_ib_send_bw_all_sizes_report_gbit_six_decimals():
    result = parse_perftest(real("perftest", "ib_send_bw_a_report_gbit_roce_cx4lx_6decimals.txt"))
    assert (result["test"], result["metric"], result["side"], result["ok"]) == ("send", "bw", "client", True)
    assert result["bw_unit"] == "Gb/sec"
    assert result["settings"]["mtu"] == 1024 and result["settings"]["gid_index"] == 3
    assert result["settings"]["link_type"] == "Ethernet"
    rows = result["rows"]
    assert [row["bytes"] for row in rows] == [2 ** n for n in range(1, 24)]
    assert rows[0] == {"bytes": 2, "iterations": 1000, "bw_peak_gbps": 0.029629, "bw_avg_gbps": 0.028911,
                       "msg_rate_mpps": 1.806916}
    assert rows[1]["bw_avg_gbps"] == 0.05653
    assert rows[10] == {"bytes": 2048, "iterations": 1000, "bw_peak_gbps": 23.41, "bw_avg_gbps": 22.54,
                        "msg_rate_mpps": 1.375834}
    assert rows[-1] == {"bytes": 8388608, "iterations": 1000, "bw_peak_gbps": 23.15, "bw_avg_gbps": 23.15,
                        "msg_rate_mpps": 0.000345}
    assert result["local_addresses"][0]["gid_ipv4"] == "192.168.23.1"
    assert result["remote_addresses"][0]["gid_ipv4"] == "192.168.23.2"
    assert result["warnings"] == []


def test_ib_read_lat_with_cpu_frequency_warning_between_header_and_row():
    result = parse_perftest(real("perftest", "ib_read_lat_client_mlx4_cpufreq_after_header.txt"))
    assert (result["test"], result["metric"], result["side"], result["ok"]) == ("read", "lat", "client", True)
    assert result["rows"] == [{"bytes": 2, "iterations": 1000, "t_min_us": 1.76, "t_max_us": 6.12,
                               "t_typical_us": 1.79, "t_avg_us": 1.8, "t_stdev_us": 0.06, "p99_us": 1.88,
                               "p99_9_us": 6.12, "tps": None}]
    assert result["settings"]["outstand_reads"] == 16
    assert result["warnings"] == [
        "Conflicting CPU frequency values detected: 2400.000000 != 1873.463000. CPU Frequency is not max."]


def test_post_list_duration_run_peak_not_measured():
    result = parse_perftest(real("perftest", "ib_write_bw_post_list_duration_8b_gbits.txt"))
    assert result["banner"] == "RDMA_Write Post List BW Test"
    assert (result["test"], result["metric"], result["ok"]) == ("write", "bw", True)
    assert result["settings"]["post_list"] == 128 and result["settings"]["cq_moderation"] == 128
    assert result["settings"]["pcie_relax_order"] == "Unsupported"
    assert result["rows"] == [{"bytes": 8, "iterations": 224958464, "bw_peak_gbps": None, "bw_avg_gbps": 0.48,
                               "msg_rate_mpps": 7.498617}]
    assert result["peak_measured"] is False


def test_cuda_inline_note_is_no_error():
    # Before: "Perftest doesn't supports CUDA tests with inline messages: inline size set to 0" was an
    # invalid_option error, though perftest sets the inline size to 0 and goes on (here: the server waits).
    result = parse_perftest(real("perftest", "ib_write_bw_cuda_inline_note_server_waiting.txt"))
    assert result["errors"] == []
    assert result["side"] == "server"
    assert result["gpu_memory"] == "cuda"
    assert result["warnings"][0] == ("Perftest doesn't supports CUDA tests with inline messages: "
                                     "inline size set to 0")
    assert result["ok"] is False


def test_cuda_dmabuf_without_cuda():
    result = parse_perftest(real("perftest", "err_cuda_dmabuf_without_cuda_option_order.txt"))
    assert [(entry["code"], entry["evidence"]) for entry in result["errors"]] == [
        ("gpu_init_failed", ["CUDA DMA-BUF cannot be used without CUDA"]),
        ("invalid_option", ["Parser function exited with Error"]),
    ]
    assert (result["test"], result["metric"], result["ok"]) == ("write", "bw", False)


def test_write_lat_with_cuda_rejected():
    # Before: no error at all (perftest exits after this one line).
    result = parse_perftest(real("perftest", "err_write_lat_cuda_read_send_only.txt"))
    assert [(entry["code"], entry["evidence"]) for entry in result["errors"]] == [
        ("invalid_option", ["Perftest supports CUDA latency tests with read/send verbs only"])]
    assert (result["test"], result["metric"], result["gpu_memory"], result["ok"]) == ("write", "lat", "cuda", False)


# Lines perftest prints before exit(1) when options do not go together (perftest_parameters.c and
# perftest_communication.c / perftest_resources.c of linux-rdma/perftest 00b55b6, plus older spellings).
@pytest.mark.parametrize("line", [
    " UD connection only possible in SEND verb",
    " UC connection not possible in READ/ATOMIC verbs",
    " XRC not detected in libibverbs",
    "Perftest supports CUDA latency tests with read/send verbs only",
    "Perftest supports MLU latency tests with read/send verbs only",
    " Dual-port mode only supports BW tests.",
    " Post list is supported in BW tests only",
    " run_infinitely exists only in BW tests for now.",
    " Using SRQ only avavilible in SEND / SEND_IMM tests.",
    " Inline feature not available on READ/Atomic verbs",
    " Events feature not available on WRITE verb",
    " Latency gap feature is only for latency tests",
    " Write_with_imm can only be used with write_lat and write_bw tests",
    "--data_validation is incompatible with -a (run all sizes)",
    "--data_validation requires RC connection type",
    "--tph_mem requires --cpu_id to be specified",
    " DMABUF must be enabled in order to use Data Direct",
    " Multicast feature works on unidirectional traffic only",
    " report per port feature work only with Duration and Dualport",
    " Duplicated argument: -d",
    "CPU 99 out of range. System has 64 cores (0-63).",
    "NUMA node 9 does not exist (available: 0-1)",
    " Please provide source_ip and/or dest_ip when using UDP",
    " Must specify a rate limit when using Packet Pacing.",
    " You are not running the atomic_lat/bw test!",
    " Only 16 Service levels",
    " SW Rate limiter cann't be executed on non-BW, ATOMIC or bidirectional SEND / SEND_IMM tests",
    " Raw Ethernet tests do not support -a / --all flag.",
    " OOO unsupported by HCA on RC QP",
    " Payload size should be greater than 0",
])
def test_option_rejections_are_invalid_option(line):
    assert classify_perftest_error(line) == "invalid_option"


@pytest.mark.parametrize("line, code", [
    ("Problem in resolving basic address and port", "connect_failed"),
    ("unexpected CM event 8", "connect_failed"),
    ("bad event waiting for connect request 2", "connect_failed"),
    ("Validation plugin not properly loaded", "gpu_init_failed"),
    ("support for CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE is missing", "gpu_init_failed"),
])
def test_other_fatal_lines(line, code):
    assert classify_perftest_error(line) == code


# Notes perftest prints when it adjusts a setting and goes on: no error.
@pytest.mark.parametrize("line", [
    "Perftest doesn't supports CUDA tests with inline messages: inline size set to 0",
    "Perftest doesn't supports device memory tests with inline messages: inline size set to 0",
    " CQ moderation can't be grater than rx depth.",
    " Changing CQ moderation to min( rx depth , tx depth) = 64.",
    " new post send flow is not supported, falling back to ibv_post_send",
    "mac_fwd should run in duplex mode only. changing to duplex mode.",
    " out_reads is greater than remote max_qp_rd_atom, using remote max_qp_rd_atom",
])
def test_adjustment_notes_are_no_error(line):
    assert classify_perftest_error(line) is None


def test_adjustment_note_next_to_a_result_keeps_it_ok():
    text = real("perftest", "ib_send_bw_a_report_gbit_roce_cx4lx_6decimals.txt")
    text = text.replace("---\n                    Send BW Test",
                        "---\n CQ moderation can't be grater than rx depth.\n"
                        " Changing CQ moderation to min( rx depth , tx depth) = 128.\n"
                        "                    Send BW Test", 1)
    result = parse_perftest(text)
    assert result["ok"] is True and result["errors"] == []
    assert len(result["rows"]) == 23
    assert "CQ moderation can't be grater than rx depth." in result["warnings"]


# --- rccl-tests ----------------------------------------------------------------------------------

def test_rccl_version_block_and_ranks_without_group():
    # Before: nccl_version null ("RCCL version : 2.22.3-HEAD:7d8d67c" has a colon) and the
    # rccl-tests version line ignored.
    result = parse_nccl_tests(real("nccl_tests", "rccl_all_reduce_2node_16rank_mi300x_rccl_version_block.txt"))
    assert result["nccl_version"] == "2.22.3-HEAD:7d8d67c"
    assert result["header"]["library"] == "RCCL"
    assert result["version"] == "develop:448c4c7"
    assert result["header"]["tests"] == "rccl-tests"
    assert result["nranks"] == 16 and result["hosts"] == ["gpu-53", "gpu-56"]
    rank8 = [rank for rank in result["ranks"] if rank["rank"] == 8][0]
    assert rank8 == {"rank": 8, "group": None, "pid": 366643, "host": "gpu-56", "device": 0,
                     "bus_id": "0000:05:00.0", "name": "AMD Instinct MI300X"}
    assert len(result["rows"]) == 32
    last = result["rows"][-1]
    assert (last["bytes"], last["count"], last["type"], last["redop"], last["root"]) == (
        17179869184, 4294967296, "float", "sum", -1)
    assert last["out_of_place"] == {"time_us": 90115.0, "algbw_gbs": 190.64, "busbw_gbs": 357.46, "wrong": 0}
    assert last["in_place"] == {"time_us": 90127.0, "algbw_gbs": 190.62, "busbw_gbs": 357.41, "wrong": 0}
    assert result["avg_busbw_gbs"] == 92.3318
    assert result["max_busbw_gbs"] == 357.46
    assert result["out_of_bounds"] == 0 and result["ok"] is True
    assert result["warnings"] == [] and result["errors"] == []


def test_rccl_two_node_r9700():
    result = parse_nccl_tests(real("nccl_tests", "rccl_all_reduce_2node_r9700_mpirun.txt"))
    assert result["test"] == "all_reduce_perf" and result["collective"] == "all_reduce"
    assert result["version"] == "develop:33cc4df"
    assert result["nccl_version"] is None
    assert result["hosts"] == ["corona", "bootes"]
    assert len(result["rows"]) == 25
    assert result["rows"][0]["out_of_place"] == {"time_us": 47.35, "algbw_gbs": 0.0, "busbw_gbs": 0.0, "wrong": 0}
    row_8m = [row for row in result["rows"] if row["bytes"] == 8388608][0]
    assert row_8m["in_place"] == {"time_us": 1149.4, "algbw_gbs": 7.3, "busbw_gbs": 7.3, "wrong": 0}
    assert result["rows"][-1]["out_of_place"]["time_us"] == 12463.0
    assert result["avg_busbw_gbs"] == 3.51213
    assert result["completed"] is True and result["ok"] is True


def test_rccl_alltoall_in_place_wrong_not_available():
    result = parse_nccl_tests(real("nccl_tests", "rccl_alltoall_mi355x_inplace_wrong_na.txt"))
    assert result["test"] == "alltoall_perf" and result["version"] == "HEAD:e1b8a3a"
    assert result["nranks"] == 8 and result["header"]["ngpus"] == 8
    assert [row["bytes"] for row in result["rows"]] == [8589934592, 17179869184]
    first = result["rows"][0]
    assert first["redop"] == "none"
    assert first["out_of_place"] == {"time_us": 20837.0, "algbw_gbs": 412.23, "busbw_gbs": 360.71, "wrong": 0}
    assert first["in_place"] == {"time_us": 20817.0, "algbw_gbs": 412.64, "busbw_gbs": 361.06, "wrong": None}
    assert result["avg_busbw_gbs"] == 236.187 and result["ok"] is True


@pytest.mark.parametrize("text, expected", [
    ("RCCL version : 2.22.3-HEAD:7d8d67c", "2.22.3-HEAD:7d8d67c"),
    ("corona:927:927 [0] NCCL INFO RCCL version : 2.26.6-HEAD:f224e2c", "2.26.6-HEAD:f224e2c"),
    ("RCCL version : 2.22.3-HEAD:7d8d67c+", "2.22.3-HEAD:7d8d67c+"),
    ("node:1:1 [0] NCCL INFO NCCL version 2.18.3+cuda12.2", "2.18.3+cuda12.2"),
])
def test_nccl_version_reads_rccl_spelling(text, expected):
    assert nccl_version(text) == expected
    assert parse_nccl_tests(text)["nccl_version"] == expected


# --- ibstat / ibstatus / show_gids / rdma link --------------------------------------------------

def _ports(result):
    return [(ca["name"], port["port"], port["state"], port["phys_state"], port["rate"], port["link_layer"])
            for ca in result["cas"] for port in ca["ports"]]


def test_ibstat_mlx4_two_ports():
    result = parse_ibstat_full(real("ibstat", "ibstat_mlx4_two_ports_port1_polling.txt"))
    assert _ports(result) == [("mlx4_0", 1, "Down", "Polling", 10, "InfiniBand"),
                              ("mlx4_0", 2, "Active", "LinkUp", 56, "InfiniBand")]
    ca = result["cas"][0]
    assert (ca["ca_type"], ca["num_ports"], ca["fw_version"]) == ("MT4099", 2, "2.42.5000")
    assert [port["base_lid"] for port in ca["ports"]] == [0, 5]
    assert ca["ports"][1]["port_guid"] == "0x0002c90300b382a2"
    assert result["errors"] == []


def test_ibstat_roce_and_ib_port_down():
    result = parse_ibstat_full(real("ibstat", "ibstat_cx4_roce_and_ib_down.txt"))
    assert _ports(result) == [("mlx5_0", 1, "Active", "LinkUp", 100, "Ethernet"),
                              ("mlx5_1", 1, "Down", "Disabled", 10, "InfiniBand")]
    assert [ca["fw_version"] for ca in result["cas"]] == ["12.28.1002", "12.28.1002"]
    assert result["cas"][1]["ports"][0]["sm_lid"] == 1


def test_ibstatus_roce_one_port_disabled():
    result = parse_ibstatus_full(real("ibstatus", "ibstatus_roce_cx4lx_one_disabled.txt"))
    assert _ports(result) == [("mlx5_0", 1, "Active", "LinkUp", 25, "Ethernet"),
                              ("mlx5_1", 1, "Down", "Disabled", 40, "Ethernet")]
    ports = [ca["ports"][0] for ca in result["cas"]]
    assert [(p["width"], p["speed"]) for p in ports] == [("1X", "EDR"), ("4X", "QDR")]
    assert ports[1]["default_gid"] == "fe80:0000:0000:0000:bac7:d5ff:fe7f:cc06"
    assert [(p["state_num"], p["phys_state_num"]) for p in ports] == [(4, 5), (1, 3)]


def test_show_gids_ib_port_without_netdev():
    result = parse_show_gids_full(real("show_gids", "show_gids_ib_port_no_netdev_spaces.txt"))
    assert [(g["device"], g["port"], g["gid_index"], g["version"], g["netdev"], g["ipv4"])
            for g in result["gids"]] == [("mlx5_0", 1, 0, "v1", "ens11f0", None),
                                         ("mlx5_0", 1, 1, "v2", "ens11f0", None),
                                         ("mlx5_1", 1, 0, "v1", None, None)]
    assert result["gids"][2]["gid"] == "fe80:0000:0000:0000:248a:0703:00b1:bc05"
    assert result["n_gids_found"] == 3 and result["errors"] == []


def test_rdma_link_new_format_ports_down():
    result = parse_rdma_link_full(real("rdma_link", "rdma_link_new_format_down_disabled.txt"))
    links = [(link["device"], link["port"], link["state"], link["physical_state"], link["netdev"])
             for link in result["links"]]
    assert links == [
        ("mlx5_0", 1, "DOWN", "DISABLED", "ens7f0np0"), ("mlx5_1", 1, "ACTIVE", "LINK_UP", "ens7f1np1"),
        ("mlx5_2", 1, "DOWN", "DISABLED", "ens10f0np0"), ("mlx5_3", 1, "ACTIVE", "LINK_UP", "ens10f1np1")]


def test_rdma_link_old_format_with_index():
    result = parse_rdma_link_full(real("rdma_link", "rdma_link_old_format_bond_idx.txt"))
    links = [(link["index"], link["device"], link["port"], link["state"], link["netdev"]) for link in result["links"]]
    assert links == [
        (8, "mlx5_bond_0", 1, "ACTIVE", "reth0"), (9, "mlx5_bond_1", 1, "ACTIVE", "reth2"),
        (10, "mlx5_bond_2", 1, "ACTIVE", "reth4"), (11, "mlx5_bond_3", 1, "ACTIVE", "reth6")]
    assert result["errors"] == []
