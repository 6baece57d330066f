# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""parse_perftest: real perftest outputs (tests/fixtures/corpus) and perftest's own print formats."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os
import shutil
import subprocess
import sys

import pytest
import yaml

from ansible_collections.clusterops.commcheck.plugins.filter import parse_perftest as filter_plugin
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_perftest import (
    PERFTEST_ERRORS,
    classify_perftest_error,
    parse_perftest,
)
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.perftest_errors import ERROR_CODES as _ERROR_CODES
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.text import MIB_PER_SEC_TO_GBPS

CORPUS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures", "corpus")
MIB = MIB_PER_SEC_TO_GBPS
POW2 = [2 ** n for n in range(1, 24)]


def corpus(name):
    with open(os.path.join(CORPUS, name), encoding="utf-8") as handle:
        return handle.read()


def parse(name):
    return parse_perftest(corpus(name))


def row(result, size):
    matches = [r for r in result["rows"] if r["bytes"] == size]
    assert len(matches) == 1, matches
    return matches[0]


def codes(result):
    return [entry["code"] for entry in result["errors"]]


def test_mib_factor_is_binary_megabytes_to_decimal_gigabits():
    assert MIB == pytest.approx(0.008388608)


# --------------------------------------------------------------------------
# perftest_bw corpus
# --------------------------------------------------------------------------

def test_bw_cuda_client_rdma_cm_mr_failure():
    r = parse("perftest_bw/err_couldnt_allocate_mr_cuda_client_rdma_cm.txt")
    assert (r["test"], r["metric"], r["side"], r["ok"]) == ("write", "bw", "client", False)
    assert r["rows"] == []
    assert codes(r) == ["mr_alloc_failed", "resources_failed", "connect_failed", "crashed"]
    mr = r["errors"][0]
    assert mr["message"] == "Couldn't allocate MR"
    assert mr["evidence"] == ["Couldn't allocate MR", "failed to create mr", "Failed to create MR"]
    assert mr["cause"] == PERFTEST_ERRORS["mr_alloc_failed"][0]
    assert "memlock" in mr["cause"] and "IPC_LOCK" in mr["fix"]
    assert r["gpu_memory"] == "cuda"
    assert "nvidia-peermem" in mr["detail"]
    assert r["errors"][1]["evidence"] == ["Failed to initialize RDMA contexts.", "ERRNO: Bad address."]
    assert "Failed to connect RDMA CM events." in r["errors"][2]["evidence"]
    assert r["errors"][3]["message"] == "Segmentation fault (core dumped)"
    assert "--use_cuda=0" in r["command"]


def test_bw_cuda_server_mr_failure():
    r = parse("perftest_bw/err_couldnt_allocate_mr_cuda_server.txt")
    assert (r["test"], r["metric"], r["side"], r["ok"]) == ("write", "bw", "server", False)
    assert codes(r) == ["mr_alloc_failed", "resources_failed"]
    assert r["errors"][1]["message"] == "Couldn't create IB resources"
    assert r["gpu_memory"] == "cuda"
    assert r["rows"] == [] and r["warnings"] == []


def test_bw_siw_iwarp_old_header_mr_failure():
    r = parse("perftest_bw/err_couldnt_allocate_mr_siw_iwarp.txt")
    assert (r["test"], r["metric"], r["bidirectional"]) == ("send", "bw", False)
    s = r["settings"]
    assert s["device"] == "siw_ens33"
    assert s["transport_type"] == "IW"
    assert s["connection_type"] == "RC"
    assert (s["qps"], s["mtu"], s["link_type"], s["gid_index"]) == (1, 1024, "Ethernet", 0)
    assert s["rdma_cm"] is False
    assert (s["tx_depth"], s["cq_moderation"], s["max_inline_data"]) == (128, 100, 0)
    assert s["dual_port"] is False and s["using_srq"] is False
    assert s["data_ex_method"] == "Ethernet"
    assert codes(r) == ["mr_alloc_failed", "crashed"]
    assert r["errors"][0]["detail"] is None       # host memory: no GPUDirect advice
    assert r["gpu_memory"] is None


def test_bw_socket_connect_failure():
    r = parse("perftest_bw/err_couldnt_connect_socket.txt")
    assert codes(r) == ["connect_failed"]
    entry = r["errors"][0]
    assert entry["message"] == "Couldn't connect to 192.168.125.211:18515"
    assert entry["evidence"][1].startswith("Unable to open file descriptor for socket connection")
    assert "18515" in entry["cause"]
    assert (r["side"], r["test"], r["metric"]) == ("client", "write", "bw")
    assert r["command"] == "# ib_write_bw -d rocep133s0f0 192.168.125.211"


def test_bw_port_down():
    r = parse("perftest_bw/err_port_state_down.txt")
    assert codes(r) == ["port_down", "link_layer_failed", "device_open_failed"]
    assert r["errors"][0]["message"] == "Port number 1 state is Down"
    assert "subnet manager" in r["errors"][0]["cause"]
    assert r["warnings"] == ["WARNING: BW peak won't be measured in this run."]
    assert r["peak_measured"] is False
    assert r["ok"] is False and r["rows"] == []


def test_bw_no_device_in_container():
    r = parse("perftest_bw/err_unable_to_find_device_k8s.txt")
    assert codes(r) == ["no_device"]
    assert r["errors"][0]["message"] == "Did not detect devices"
    assert r["errors"][0]["evidence"] == ["Did not detect devices", "If device exists, check if driver is up",
                                          "Unable to find the Infiniband/RoCE device"]
    assert r["ok"] is False


def test_bw_atomic_fetch_and_add():
    r = parse("perftest_bw/ib_atomic_bw_a_mlx4.txt")
    assert (r["test"], r["metric"], r["atomic_type"], r["verb"]) == ("atomic", "bw", "FETCH_AND_ADD", "Atomic")
    assert r["banner"] == "Atomic FETCH_AND_ADD BW Test"
    assert r["bw_unit"] == "MB/sec"
    assert len(r["rows"]) == 1
    only = r["rows"][0]
    assert (only["bytes"], only["iterations"]) == (8, 20000)
    assert only["bw_peak_gbps"] == pytest.approx(18.79 * MIB, abs=1e-6)
    assert only["bw_avg_gbps"] == pytest.approx(0.156615, abs=1e-6)    # 18.67 MiB/s
    assert only["msg_rate_mpps"] == pytest.approx(2.446776)
    assert r["settings"]["outstand_reads"] == 16
    assert r["remote_addresses"] == [{"lid": "0x0a", "qpn": "0x2aa34", "psn": "0xe2ab25"}]
    assert r["warnings"] == ["Conflicting CPU frequency values detected: 2300.000000 != 2394.296000. "
                             "CPU Frequency is not max."]
    assert r["ok"] is True and r["side"] == "client"


def test_bw_read_cpu_warning_in_the_middle_of_the_table():
    r = parse("perftest_bw/ib_read_bw_a_mlx4_cpufreq_mid_table.txt")
    assert (r["test"], r["metric"]) == ("read", "bw")
    assert [x["bytes"] for x in r["rows"]] == POW2
    assert all(x["iterations"] == 20000 for x in r["rows"])
    assert row(r, 1048576)["bw_avg_gbps"] == pytest.approx(3666.65 * MIB, abs=1e-6)
    after = row(r, 2097152)
    assert after["bw_peak_gbps"] == pytest.approx(3667.22 * MIB, abs=1e-6)
    assert after["bw_avg_gbps"] == pytest.approx(30.761864, abs=1e-5)     # 3667.10 MiB/s
    assert after["msg_rate_mpps"] == pytest.approx(0.001834)
    assert len(r["warnings"]) == 1 and "2398.515000 != 1223.359000" in r["warnings"][0]
    local = r["local_addresses"][0]
    assert (local["out"], local["rkey"], local["vaddr"]) == ("0x10", "0xb8011b4f", "0x007fdda5d4c000")
    assert r["settings"]["mtu"] == 2048 and r["settings"]["device"] == "mlx4_0"


def test_bw_read_fdr_host():
    r = parse("perftest_bw/ib_read_bw_a_mlx4_fdr_mb_host.txt")
    assert len(r["rows"]) == 23
    x = row(r, 256)
    assert x["bw_peak_gbps"] == pytest.approx(1555.00 * MIB, abs=1e-6)
    assert x["bw_avg_gbps"] == pytest.approx(1542.79 * MIB, abs=1e-6)
    assert x["msg_rate_mpps"] == pytest.approx(6.319275)
    assert row(r, 8388608)["bw_avg_gbps"] == pytest.approx(3666.17 * MIB, abs=1e-6)
    assert r["remote_addresses"][0]["qpn"] == "0x2aa41"
    assert "teaker-10" in r["command"]


def test_bw_read_ndr_report_gbits_kept_as_is():
    r = parse("perftest_bw/ib_read_bw_ndr_gbits_cpufreq_warn.txt")
    assert r["bw_unit"] == "Gb/sec"
    assert r["rows"] == [{"bytes": 65536, "iterations": 1000, "bw_peak_gbps": 328.64, "bw_avg_gbps": 328.61,
                          "msg_rate_mpps": 0.626777}]
    s = r["settings"]
    assert (s["device"], s["mtu"], s["link_type"], s["gid_index"], s["qps"]) == ("mlx5_0", 4096, "IB", None, 1)
    assert (s["cq_moderation"], s["cqe_poll_batch"], s["outstand_reads"]) == (1, 16, 16)
    assert s["pcie_relax_order"] is True and s["ibv_wr_api"] is True
    assert s["lock_free"] is False and s["using_enhanced_reorder"] is False
    assert s["rdma_cm"] is False
    assert r["local_addresses"][0]["lid"] == "0x01" and r["remote_addresses"][0]["lid"] == "0x02"


def test_bw_send_misaligned_msgrate():
    r = parse("perftest_bw/ib_send_bw_a_mlx4_fdr_mb.txt")
    assert (r["test"], r["metric"]) == ("send", "bw")
    assert [x["bytes"] for x in r["rows"]] == POW2
    last = row(r, 8388608)
    assert last["bw_peak_gbps"] == pytest.approx(3662.23 * MIB, abs=1e-6)
    assert last["bw_avg_gbps"] == pytest.approx(3661.76 * MIB, abs=1e-6)
    assert last["msg_rate_mpps"] == pytest.approx(0.000458)
    assert row(r, 2)["msg_rate_mpps"] == pytest.approx(5.189724)
    assert r["settings"]["max_inline_data"] == 0
    assert r["warnings"] == []


def test_bw_send_duration_roce_peak_not_measured():
    r = parse("perftest_bw/ib_send_bw_rc_duration_roce_mb.txt")
    s = r["settings"]
    assert (s["link_type"], s["gid_index"], s["mtu"], s["cq_moderation"]) == ("Ethernet", 3, 1024, 1)
    assert r["peak_measured"] is False
    assert r["rows"] == [{"bytes": 65536, "iterations": 1051999, "bw_peak_gbps": None,
                          "bw_avg_gbps": pytest.approx(10958.41 * MIB, abs=1e-6),
                          "msg_rate_mpps": 0.175335}]
    assert r["rows"][0]["bw_avg_gbps"] == pytest.approx(91.925806, abs=1e-6)
    assert r["local_addresses"][0]["gid_ipv4"] == "192.168.200.52"
    assert r["remote_addresses"][0]["gid_ipv4"] == "192.168.200.53"
    assert r["local_addresses"][0]["lid"] == "0000"
    assert "WARNING: BW peak won't be measured in this run." in r["warnings"]
    assert r["ok"] is True


def test_bw_write_fdr():
    r = parse("perftest_bw/ib_write_bw_a_mlx4_fdr_mb.txt")
    assert (r["test"], r["metric"], r["verb"]) == ("write", "bw", "RDMA_Write")
    assert len(r["rows"]) == 23
    x = row(r, 65536)
    assert (x["bw_peak_gbps"], x["bw_avg_gbps"]) == (pytest.approx(3660.91 * MIB, abs=1e-6),
                                                     pytest.approx(3636.20 * MIB, abs=1e-6))
    assert row(r, 4)["bw_peak_gbps"] == pytest.approx(30.52 * MIB, abs=1e-6)
    assert r["local_addresses"][0]["rkey"] == "0x10011b4e"


def test_bw_write_bidirectional_rst_indented():
    r = parse("perftest_bw/ib_write_bw_bidir_all_sizes_roce_rocm_doc.txt")
    assert (r["test"], r["metric"], r["bidirectional"]) == ("write", "bw", True)
    assert r["banner"] == "RDMA_Write Bidirectional BW Test"
    assert [x["bytes"] for x in r["rows"]] == POW2
    assert r["rows"][0] == {"bytes": 2, "iterations": 5000, "bw_peak_gbps": 0.142947, "bw_avg_gbps": 0.012281,
                            "msg_rate_mpps": 0.767588}
    assert row(r, 8388608)["bw_avg_gbps"] == 204.59
    s = r["settings"]
    assert (s["device"], s["gid_index"], s["link_type"], s["mtu"]) == ("<RDMA-NIC-2>", 3, "Ethernet", 4096)
    assert s["ibv_wr_api"] is False
    assert r["remote_addresses"][0]["gid_ipv4"] == "1.1.101.35"


def test_bw_write_bidir_newest_server_four_qps():
    r = parse("perftest_bw/ib_write_bw_bidir_q4_a_ionic_server_newest.txt")
    assert (r["side"], r["bidirectional"], r["test"], r["ok"]) == ("server", True, "write", True)
    s = r["settings"]
    assert (s["device"], s["qps"], s["gid_index"], s["mtu"], s["link_type"]) == ("ionic_1", 4, 1, 4096, "Ethernet")
    assert s["cpu_freq_mhz"] == 3295
    assert s["lock_free"] is False and s["using_ddp"] is False and s["cqe_poll_batch"] == 16
    assert len(r["local_addresses"]) == 4 and len(r["remote_addresses"]) == 4
    assert [a["qpn"] for a in r["local_addresses"]] == ["0x0002", "0x0800", "0x0003", "0x0801"]
    assert r["local_addresses"][0]["gid_ip"] == "fd93:16d3:59b6:150:dfed:8229:ed96:c5c4"
    assert r["local_addresses"][0]["gid_ipv4"] is None
    assert r["remote_addresses"][3]["psn"] == "0x253140"
    assert len(r["rows"]) == 23
    assert row(r, 16384) == {"bytes": 16384, "iterations": 20000, "bw_peak_gbps": 753.98, "bw_avg_gbps": 736.52,
                             "msg_rate_mpps": 5.619239}
    assert row(r, 2)["bw_peak_gbps"] == 0.158676
    assert r["connected_at"] == "Wed Apr 15 04:36:50 2026"
    assert r["completed_at"] == "Wed Apr 15 04:36:58 2026"
    assert r["total_run_time_s"] == 10.951
    assert r["warnings"] == ["Using sampled CPU speed 3295 MHz over reported speed 5008 MHz"]


def test_bw_write_ndr_report_gbits():
    r = parse("perftest_bw/ib_write_bw_ndr_gbits_cpufreq_warn.txt")
    assert r["rows"] == [{"bytes": 65536, "iterations": 5000, "bw_peak_gbps": 392.38, "bw_avg_gbps": 392.34,
                          "msg_rate_mpps": 0.748336}]
    assert r["settings"]["cqe_poll_batch"] == "Dynamic"
    assert r["settings"]["max_inline_data"] == 0
    assert len(r["warnings"]) == 1


def test_bw_server_waiting_banner_only():
    r = parse("perftest_bw/ib_write_bw_server_waiting_only.txt")
    assert (r["side"], r["test"], r["metric"], r["ok"]) == ("server", "write", "bw", False)
    assert r["rows"] == [] and r["errors"] == []
    assert r["command"] == "ib_write_bw -d rocep1s0f0 --report_gbits -q 4 -R --force-link IB"
    assert any("no client connected" in w for w in r["warnings"])


# --------------------------------------------------------------------------
# perftest_lat corpus
# --------------------------------------------------------------------------

def test_lat_atomic():
    r = parse("perftest_lat/ib_atomic_lat_a_mlx4.txt")
    assert (r["test"], r["metric"], r["atomic_type"]) == ("atomic", "lat", "FETCH_AND_ADD")
    assert r["rows"] == [{"bytes": 8, "iterations": 20000, "t_min_us": 2.27, "t_max_us": 14.36,
                          "t_typical_us": 2.34, "t_avg_us": 2.37, "t_stdev_us": 0.31, "p99_us": 2.56,
                          "p99_9_us": 10.2, "tps": None}]
    assert len(r["warnings"]) == 2
    assert r["settings"]["tx_depth"] == 1 and r["time_unit"] == "usec"


def test_lat_read_all_sizes():
    r = parse("perftest_lat/ib_read_lat_a_mlx4_fdr.txt")
    assert (r["test"], r["metric"]) == ("read", "lat")
    assert [x["bytes"] for x in r["rows"]] == POW2
    assert row(r, 32)["t_max_us"] == 61.18
    assert row(r, 8388608) == {"bytes": 8388608, "iterations": 20000, "t_min_us": 2177.92, "t_max_us": 2240.08,
                               "t_typical_us": 2184.09, "t_avg_us": 2184.33, "t_stdev_us": 2.24,
                               "p99_us": 2192.22, "p99_9_us": 2202.42, "tps": None}
    assert r["settings"]["outstand_reads"] == 16
    assert r["local_addresses"][0]["rkey"] == "0x18011b4d"


def test_lat_read_roce_pod_indented_gid12():
    r = parse("perftest_lat/ib_read_lat_roce_pod_macvlan_gid12.txt")
    s = r["settings"]
    assert (s["link_type"], s["gid_index"], s["mtu"], s["device"]) == ("Ethernet", 12, 1024, "mlx5_0")
    assert r["rows"] == [{"bytes": 2, "iterations": 1000, "t_min_us": 6.88, "t_max_us": 16.81,
                          "t_typical_us": 7.04, "t_avg_us": 7.06, "t_stdev_us": 0.31, "p99_us": 7.38,
                          "p99_9_us": 16.81, "tps": None}]
    assert r["local_addresses"][0]["gid_ipv4"] == "172.81.0.119"
    assert r["remote_addresses"][0]["gid_ipv4"] == "172.81.0.120"
    assert r["local_addresses"][0]["gid_ip"] == "::ffff:ac51:77"
    assert len(r["warnings"]) == 2


def test_lat_read_server_prints_no_table():
    r = parse("perftest_lat/ib_read_lat_server_mlx4_fdr.txt")
    assert (r["side"], r["test"], r["metric"], r["ok"]) == ("server", "read", "lat", False)
    assert r["rows"] == [] and r["errors"] == []
    s = r["settings"]
    assert (s["device"], s["mtu"], s["outstand_reads"], s["link_type"]) == ("mlx4_0", 2048, 16, "IB")
    assert s["pcie_relax_order"] is True and s["ibv_wr_api"] is False
    assert r["local_addresses"][0]["lid"] == "0x04"
    assert r["remote_addresses"][0]["qpn"] == "0x0215"


def test_lat_send_all_sizes():
    r = parse("perftest_lat/ib_send_lat_a_mlx4_fdr.txt")
    assert (r["test"], r["metric"]) == ("send", "lat")
    assert len(r["rows"]) == 23
    big = row(r, 8388608)
    assert (big["t_stdev_us"], big["p99_9_us"], big["t_max_us"]) == (65.03, 3761.26, 4189.77)
    assert row(r, 2)["t_typical_us"] == 1.07
    assert r["settings"]["max_inline_data"] == 236


def test_lat_send_ndr_tabs_in_row():
    r = parse("perftest_lat/ib_send_lat_ndr_cpufreq_warn.txt")
    assert r["rows"] == [{"bytes": 2, "iterations": 1000, "t_min_us": 1.24, "t_max_us": 5.19,
                          "t_typical_us": 1.27, "t_avg_us": 1.27, "t_stdev_us": 0.0, "p99_us": 1.37,
                          "p99_9_us": 5.19, "tps": None}]
    assert r["settings"]["mtu"] == 4096 and r["settings"]["max_inline_data"] == 236
    assert len(r["warnings"]) == 2


def test_lat_write_all_sizes():
    r = parse("perftest_lat/ib_write_lat_a_mlx4_fdr.txt")
    assert (r["test"], r["metric"], r["verb"]) == ("write", "lat", "RDMA_Write")
    assert [x["bytes"] for x in r["rows"]] == POW2
    assert row(r, 4096)["t_max_us"] == 49.03
    assert row(r, 8388608)["t_typical_us"] == 2302.01
    assert r["settings"]["max_inline_data"] == 220


def test_every_corpus_file_has_a_test():
    """Each corpus file is asserted above: fail when a new one is added without a test."""
    here = open(os.path.abspath(__file__), encoding="utf-8").read()
    for folder in ("perftest_bw", "perftest_lat"):
        for name in os.listdir(os.path.join(CORPUS, folder)):
            assert '"%s/%s"' % (folder, name) in here, name


# --------------------------------------------------------------------------
# Formats perftest prints that the corpus does not show (from perftest_parameters.h/.c printf formats)
# --------------------------------------------------------------------------

HEADER = """---------------------------------------------------------------------------------------
                    RDMA_Write Latency Test
 Dual-port       : OFF\t\tDevice         : mlx5_1
 Number of qps   : 1\t\tTransport type : IB
 Connection type : RC\t\tUsing SRQ      : OFF
 TX depth        : 1
 Mtu             : 4096[B]
 Link type       : Ethernet
 GID index       : 3
 Max inline data : 220[B]
 rdma_cm QPs\t : ON
 Data ex. method : rdma_cm \tTOS    : 106
---------------------------------------------------------------------------------------
"""


def test_lat_duration_mode_only_avg_and_tps():
    text = HEADER + (" #bytes        #iterations       t_avg[usec]    tps average\n"
                     " 2             4588212            1.09           916521.28\n")
    r = parse_perftest(text)
    assert r["duration_mode"] is True
    assert r["rows"] == [{"bytes": 2, "iterations": 4588212, "t_avg_us": 1.09, "tps": 916521.28,
                          "t_min_us": None, "t_max_us": None, "t_typical_us": None, "t_stdev_us": None,
                          "p99_us": None, "p99_9_us": None}]
    assert any("duration mode" in w for w in r["warnings"])
    s = r["settings"]
    assert s["rdma_cm"] is True and s["data_ex_method"] == "rdma_cm" and s["tos"] == 106
    assert s["gid_index"] == 3 and s["link_type"] == "Ethernet"


def test_lat_old_format_with_three_time_columns():
    text = HEADER + (" #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]\n"
                     " 2       1000          0.77           3.84         0.80   \n")
    r = parse_perftest(text)
    assert r["rows"] == [{"bytes": 2, "iterations": 1000, "t_min_us": 0.77, "t_max_us": 3.84, "t_typical_us": 0.8,
                          "t_avg_us": None, "t_stdev_us": None, "p99_us": None, "p99_9_us": None, "tps": None}]


def test_columns_are_mapped_by_name_not_position():
    text = HEADER.replace("Latency", "BW") + (
        " #bytes     #iterations    BW average[Gb/sec]    MsgRate[Mpps]    BW peak[Gb/sec]\n"
        " 65536      5000             97.50                0.185963          98.10\n")
    r = parse_perftest(text)
    assert r["rows"] == [{"bytes": 65536, "iterations": 5000, "bw_avg_gbps": 97.5, "msg_rate_mpps": 0.185963,
                          "bw_peak_gbps": 98.1}]


def test_mib_per_sec_header_is_converted():
    text = HEADER.replace("Latency", "BW") + (
        " #bytes     #iterations    BW peak[MiB/sec]    BW average[MiB/sec]   MsgRate[Mpps]\n"
        " 65536      5000             11030.78            11030.45\t\t     0.176487\n")
    r = parse_perftest(text)
    assert r["bw_unit"] == "MiB/sec"
    assert r["rows"][0]["bw_avg_gbps"] == pytest.approx(11030.45 * 1048576 * 8 / 1e9, abs=1e-6)
    assert r["rows"][0]["bw_avg_gbps"] == pytest.approx(92.530, abs=1e-3)


def test_dual_port_qos_and_cpu_util_columns():
    per_port = (" #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]   BW Port1[Gb/sec]"
                "   MsgRate Port1[Mpps]   BW Port2[Gb/sec]   MsgRate Port2[Mpps]    CPU_Util[%]\n"
                " 65536      20000      0.00               190.21\t\t   0.362796        95.10            0.181398"
                "              95.11            0.181412\t    12.50\n")
    r = parse_perftest(HEADER.replace("Latency", "BW") + per_port)
    assert r["rows"] == [{"bytes": 65536, "iterations": 20000, "bw_peak_gbps": None, "bw_avg_gbps": 190.21,
                          "msg_rate_mpps": 0.362796, "bw_port1_gbps": 95.1, "msg_rate_port1_mpps": 0.181398,
                          "bw_port2_gbps": 95.11, "msg_rate_port2_mpps": 0.181412, "cpu_util_pct": 12.5}]
    qos = (" #bytes    #sl      #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]\n"
           " 65536      3           5000           11000.00            10900.00                  0.174400\n")
    r = parse_perftest(HEADER.replace("Latency", "BW") + qos)
    assert r["rows"][0]["sl"] == 3 and r["rows"][0]["iterations"] == 5000
    assert r["rows"][0]["bw_avg_gbps"] == pytest.approx(10900.00 * MIB, abs=1e-6)


def test_report_cycles_histogram():
    text = HEADER + ("#, cycles\n1, 2301\n2, 2290\n"
                     " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    "
                     "t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] \n"
                     " 2       1000          2280.00        9000.00      2300.00     \t2310.00     \t30.00\t\t2500.00"
                     " \t\t8000.00\n")
    r = parse_perftest(text)
    assert r["time_unit"] == "cycles"
    only = r["rows"][0]
    assert only["t_typical_us"] is None and only["t_typical_cycles"] == 2300.0
    assert len(r["rows"]) == 1       # the "1, 2301" histogram lines are no rows
    assert any("cycles" in w for w in r["warnings"])


def test_rdma_cm_server_waiting():
    text = HEADER.replace("RDMA_Write Latency", "RDMA_Read BW").replace(
        "---------------------------------------------------------------------------------------\n", "", 1)
    text = HEADER.splitlines()[0] + "\n" + text.rstrip("-\n") + (
        "\n---------------------------------------------------------------------------------------\n"
        " Waiting for client rdma_cm QP to connect\n"
        " Please run the same command with the IB/RoCE interface IP\n")
    r = parse_perftest(text)
    assert (r["side"], r["test"], r["metric"]) == ("server", "read", "bw")
    assert r["settings"]["rdma_cm"] is True
    assert r["errors"] == []


def test_zero_peak_with_an_average_means_peak_not_measured():
    # ib_atomic_bw -D 300 prints "0.00" as peak, sometimes without the WARNING line.
    text = HEADER.replace("RDMA_Write Latency", "Atomic FETCH_AND_ADD BW") + (
        " #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]\n"
        " 8          210853400        0.00               10.72  \t\t   1.405510\n")
    r = parse_perftest(text)
    assert r["rows"] == [{"bytes": 8, "iterations": 210853400, "bw_peak_gbps": None,
                          "bw_avg_gbps": pytest.approx(10.72 * MIB, abs=1e-6), "msg_rate_mpps": 1.40551}]
    assert r["peak_measured"] is False and r["atomic_type"] == "FETCH_AND_ADD"


def test_latency_server_without_waiting_banner_is_still_the_server():
    text = "\n".join(line for line in corpus("perftest_lat/ib_read_lat_server_mlx4_fdr.txt").splitlines()
                     if "aiting" not in line)
    r = parse_perftest(text)
    assert r["side"] == "server" and r["errors"] == [] and r["rows"] == []


def test_tps_average_column_anywhere_and_repeated_header():
    header = " #bytes        #iterations       tps average    t_avg[usec]\n"
    r = parse_perftest(HEADER + header + header + " 2             100            2000.50        1.25\n")
    assert r["columns"] == ["#bytes", "#iterations", "tps average", "t_avg[usec]"]
    assert r["rows"][0]["tps"] == 2000.5 and r["rows"][0]["t_avg_us"] == 1.25
    assert len(r["rows"]) == 1


def test_many_warnings_are_capped():
    text = "\n".join("Conflicting CPU frequency values detected: %d.0 != 1.0. CPU Frequency is not max." % i
                     for i in range(1000))
    r = parse_perftest(text)
    assert len(r["warnings"]) == 201
    assert r["warnings"][-1] == "800 more warning line(s) not listed"


def test_launcher_prefixes_crlf_bytes_and_lists():
    text = corpus("perftest_bw/ib_write_bw_ndr_gbits_cpufreq_warn.txt")
    expected = parse_perftest(text)["rows"]
    tagged = "\n".join("[1,0]<stdout>:" + line for line in text.splitlines())
    assert parse_perftest(tagged)["rows"] == expected
    labelled = "\n".join("0: " + line for line in text.splitlines())
    assert parse_perftest(labelled)["rows"] == expected
    assert parse_perftest(text.replace("\n", "\r\n"))["rows"] == expected
    assert parse_perftest(text.encode("utf-8"))["rows"] == expected
    assert parse_perftest(text.splitlines())["rows"] == expected


def test_cpu_warning_glued_to_a_row():
    text = corpus("perftest_bw/ib_write_bw_ndr_gbits_cpufreq_warn.txt")
    lines = text.splitlines()
    at = [i for i, line in enumerate(lines) if line.startswith("Conflicting")][0]
    glued = lines[:at] + [lines[at + 1] + lines[at]] + lines[at + 2:]
    r = parse_perftest("\n".join(glued))
    assert r["rows"][0]["bw_avg_gbps"] == 392.34
    assert r["warnings"] == [lines[at]]


@pytest.mark.parametrize("value", [None, "", 42, b"\xff\xfe\x00garbage", ["a", None, b"b"], "\x00\x00", "-" * 100])
def test_odd_input_never_raises(value):
    r = parse_perftest(value)
    assert r["rows"] == [] and r["ok"] is False
    assert isinstance(r["settings"], dict) and r["settings"]["gid_index"] is None


def test_truncated_output_keeps_complete_rows():
    text = corpus("perftest_lat/ib_write_lat_a_mlx4_fdr.txt")
    cut = text[:text.index(" 1048576 20000")]
    r = parse_perftest(cut)
    assert [x["bytes"] for x in r["rows"]] == POW2[:19]
    assert r["ok"] is True


def test_usage_text_is_one_invalid_option():
    text = (" Invalid Command or flag.\n Please check command line and run again.\n\nUsage:\n"
            "  ib_write_bw            start a server and wait for connection\n"
            "  -a, --all  Run sizes from 2 till 2^23\n"
            "  -u, --qp-timeout=<timeout>  QP timeout, timeout value is 4 usec * 2 ^(timeout), default 14\n"
            "        Note (1): pps not supported with HW limit.\n"
            "ib_write_bw: unrecognized option '--bogus'\n")
    r = parse_perftest(text)
    assert codes(r) == ["invalid_option"]
    assert "ib_write_bw: unrecognized option '--bogus'" in r["errors"][0]["evidence"]
    assert (r["test"], r["metric"]) == ("write", "bw")


def test_command_not_found():
    r = parse_perftest("bash: ib_read_lat: command not found\n")
    assert codes(r) == ["not_installed"]
    assert (r["test"], r["metric"]) == ("read", "lat")


# --------------------------------------------------------------------------
# Error catalog and classifier
# --------------------------------------------------------------------------

@pytest.mark.parametrize("line, code", [
    (" Did not detect devices ", "no_device"),
    ("No IB devices found", "no_device"),
    ("IB device mlx5_9 not found", "device_not_found"),
    (" Port number 1 state is Init", "port_down"),
    (" Couldn't set the link layer", "link_layer_failed"),
    (" Couldn't get context for the device", "device_open_failed"),
    ("Couldn't allocate MR", "mr_alloc_failed"),
    ("Couldn't allocate MR with error=95", "mr_alloc_failed"),
    ("OFED stack does not support DMA-BUF", "mr_alloc_failed"),
    ("Couldn't create CQ", "resources_failed"),
    (" Unable to create QP.", "resources_failed"),
    ("Requested QP size might be too big. Try reducing TX depth and/or inline size.", "resources_failed"),
    (" Unable to Connect the HCA's through the link", "qp_connect_failed"),
    ("Failed to modify QP 0 to RTR", "qp_connect_failed"),
    (" Found Incompatibility issue with GID types.", "gid_invalid"),
    ("Couldn't connect to 10.0.0.1:18515", "connect_failed"),
    ("Unable to init the socket connection", "connect_failed"),
    ("Received 10 times ADDR_ERROR - aborting", "connect_failed"),
    ("Failed to connect RDMA CM client, tried 10 times.", "connect_failed"),
    ("Couldn't listen to port 18515", "listen_failed"),
    ("Failed to exchange data between server and clients", "exchange_failed"),
    ("ethernet_read_keys: Couldn't read remote address", "exchange_failed"),
    (" Unable to read to socket/rdma_cm", "exchange_failed"),
    ("Completion with error at client", "completion_error"),
    ("Failed status 12: wr_id 0 syndrom 0x81", "completion_error"),
    ("Poll send CQ error status=12 qp 0", "completion_error"),
    ("Error: BW result is below bw limit", "below_limit"),
    ("Can't produce a report", "cpu_freq_failed"),
    ("Did not get Message for 120 Seconds, exiting..", "timeout"),
    ("Current implementation is not compatible with versions older than 5.70", "version_mismatch"),
    ("cuInit(0) returned 100", "gpu_init_failed"),
    ("Couldn't initialize ROCm device", "gpu_init_failed"),
    ("Failed to allocate hugepages. Please configure hugepages", "hugepages_failed"),
    (" Invalid MTU - 3000 ", "mtu_invalid"),
    (" Gid index should be between 0 and 64", "invalid_option"),
    ("Duration mode currently doesn't support running on all sizes.", "invalid_option"),
    (" size mismatch: local=65536, remote=8", "negotiation_failed"),
    (" connection_type mismatch: local=RC, remote=UD", "negotiation_failed"),
    (" Failed to negotiate parameters", "negotiation_failed"),
    ("Failed to query device capabilities, ret=95", "device_query_failed"),
    ("Segmentation fault (core dumped)", "crashed"),
    ("bash: ib_write_bw: command not found", "not_installed"),
    ("Something went wrong: error 7", "unknown"),
    ("Conflicting CPU frequency values detected: 2300.000000 != 2394.296000. CPU Frequency is not max.", None),
    (" Requested mtu is higher than active mtu ", None),
    (" Unable to validata PKey Index, changing to 0", None),
    (" Mtu             : 4096[B]", None),
    (" 65536      5000             392.38             392.34 \t\t     0.748336", None),
    ("", None),
])
def test_classify_perftest_error(line, code):
    assert classify_perftest_error(line) == code


def test_catalog_is_complete_and_one_line():
    for code in _ERROR_CODES:
        assert code in PERFTEST_ERRORS
    for code in ("no_device", "port_down", "mr_alloc_failed", "connect_failed", "exchange_failed",
                 "resources_failed", "unknown"):
        assert code in PERFTEST_ERRORS
    for code, (cause, fix) in PERFTEST_ERRORS.items():
        assert cause.strip() and fix.strip() and "\n" not in cause + fix, code
    cause, fix = PERFTEST_ERRORS["mr_alloc_failed"]
    assert "ulimit -l" in cause and "LimitMEMLOCK=infinity" in fix


# --------------------------------------------------------------------------
# Filter plugin
# --------------------------------------------------------------------------

def test_filter_plugin_exposes_the_parser_and_valid_docs():
    filters = filter_plugin.FilterModule().filters()
    assert set(filters) == {"parse_perftest"}
    r = filters["parse_perftest"](corpus("perftest_lat/ib_write_lat_a_mlx4_fdr.txt"))
    assert len(r["rows"]) == 23
    doc = yaml.safe_load(filter_plugin.DOCUMENTATION)
    assert doc["name"] == "parse_perftest" and doc["version_added"] == "1.0.0"
    assert set(doc["options"]) == {"_input"}
    returned = yaml.safe_load(filter_plugin.RETURN)["_value"]["contains"]
    for key in ("test", "metric", "bidirectional", "side", "settings", "rows", "errors", "warnings", "ok",
                "local_addresses", "remote_addresses"):
        assert key in returned
    assert yaml.safe_load(filter_plugin.EXAMPLES)


# --------------------------------------------------------------------------
# The real perftest binaries (Debian package) where installed: no device here
# --------------------------------------------------------------------------

def _run(argv):
    proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=30, check=False,
                          env=dict(os.environ, LC_ALL="C"))
    return proc.returncode, proc.stdout.decode("utf-8", "replace"), proc.stderr.decode("utf-8", "replace")


@pytest.mark.skipif(not shutil.which("ib_write_bw"), reason="perftest is not installed (apt install perftest)")
@pytest.mark.parametrize("argv, code", [
    (["ib_write_bw", "-d", "mlx5_0", "--report_gbits", "10.0.0.1"], "no_device"),
    (["ib_read_lat", "-F"], "no_device"),
    (["ib_send_bw", "--bogus-flag"], "invalid_option"),
    (["ib_write_bw", "-a", "-D", "5"], "invalid_option"),
    (["ib_atomic_bw", "-x", "100"], "invalid_option"),
])
def test_real_perftest_binaries(argv, code):
    rc, out, err = _run(argv)
    if os.path.isdir("/sys/class/infiniband") and os.listdir("/sys/class/infiniband") and code == "no_device":
        pytest.skip("this host has RDMA devices")
    assert rc != 0
    for text in (out + "\n" + err, err + "\n" + out):
        r = parse_perftest(text)
        assert codes(r)[0] == code, (text, r["errors"])
        assert r["ok"] is False and r["rows"] == []


def test_filter_in_a_real_ansible_run(tmp_path):
    """The filter as Ansible templating loads it (FQCN through ANSIBLE_COLLECTIONS_PATH)."""
    ansible = os.path.join(os.path.dirname(sys.executable), "ansible")
    if not os.path.exists(ansible):
        pytest.skip("ansible is not installed next to this Python")
    fixture = os.path.join(CORPUS, "perftest_bw", "ib_send_bw_rc_duration_roce_mb.txt")
    expr = "{{ (lookup('file', '%s') | clusterops.commcheck.parse_perftest).rows[0].bw_avg_gbps }}" % fixture
    env = dict(os.environ, ANSIBLE_NOCOLOR="1", ANSIBLE_LOCAL_TEMP=str(tmp_path), ANSIBLE_HOME=str(tmp_path))
    proc = subprocess.run([ansible, "localhost", "-c", "local", "-i", "localhost,", "-m", "ansible.builtin.debug",
                           "-a", "msg=" + expr], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                          timeout=120, check=False)
    out = proc.stdout.decode("utf-8", "replace")
    assert proc.returncode == 0, out + proc.stderr.decode("utf-8", "replace")
    assert '"msg": "91.925806"' in out or '"msg": 91.925806' in out, out


def test_option_mismatch_of_perftest_negotiation_is_one_error_with_its_line():
    r = parse_perftest(" size mismatch: local=65536, remote=8\n Failed to negotiate parameters\n")
    assert codes(r) == ["negotiation_failed"]
    assert r["errors"][0]["evidence"] == ["size mismatch: local=65536, remote=8", "Failed to negotiate parameters"]
    assert r["warnings"] == []


def test_device_query_of_an_optional_feature_does_not_fail_a_finished_run():
    table = (" #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n"
             " 65536      5000             92.10              92.05              0.175572\n")
    r = parse_perftest("Failed to query device capabilities, ret=95\n" + table)
    assert r["ok"] is True and r["errors"] == []
    assert r["warnings"] == ["Failed to query device capabilities, ret=95"]


# --- the header and the table's units, read whole ----------------------------------------------------

LAT_HEADER = (
    " RDMA_Write Latency Test\n Dual-port       : OFF          Device         : mlx5_1\n"
    " Number of qps   : 1            Transport type : IB\n Connection type : RC           Using SRQ      : OFF\n"
    " Mtu             : 4096[B]\n Link type       : Etherent\n GID index       : 5\n Max inline data : 220[B]\n"
    " rdma_cm QPs     : OFF\n Data ex. method : rdma_cm\n")


def test_the_header_is_read_typed_with_perftests_spellings():
    connected = LAT_HEADER + " local address: LID 0000 QPN 0x0100 PSN 0x1\n remote address: LID 0000 QPN 0x0200 PSN 0x2\n"
    result = parse_perftest(connected)
    assert result["settings"] == {
        "dual_port": False, "device": "mlx5_1", "number_of_qps": 1, "transport_type": "IB", "connection_type": "RC",
        "using_srq": False, "mtu": 4096, "link_type": "Ethernet", "gid_index": 5, "max_inline_data": 220,
        "rdma_cm_qps": False, "data_ex_method": "rdma_cm", "qps": 1, "rdma_cm": True}
    # connected (the peer's address printed) and no table: the server of a latency test
    assert (result["test"], result["metric"], result["side"], result["ok"]) == ("write", "lat", "server", False)
    assert result["warnings"] == [] and result["errors"] == []
    infiniband = parse_perftest(LAT_HEADER.replace("Etherent", "InfiniBand").replace(": rdma_cm", ": Ethernet"))
    assert (infiniband["settings"]["link_type"], infiniband["settings"]["rdma_cm"]) == ("IB", False)


def test_latency_in_nanoseconds_and_milliseconds_is_given_in_microseconds():
    table = (" #bytes #iterations    t_min[nsec]    t_max[nsec]  t_typical[nsec]    t_avg[nsec]    t_stdev[nsec]   "
             "99% percentile[nsec]   99.9% percentile[nsec]\n 2 1000 1500 9000 1600 1700.5 100 2000 8000\n")
    result = parse_perftest(LAT_HEADER + table)
    assert result["rows"] == [{"bytes": 2, "iterations": 1000, "t_min_us": 1.5, "t_max_us": 9.0, "t_typical_us": 1.6,
                               "t_avg_us": 1.7005, "t_stdev_us": 0.1, "p99_us": 2.0, "p99_9_us": 8.0, "tps": None}]
    assert (result["time_unit"], result["side"], result["ok"]) == ("nsec", "client", True)
    by_time = parse_perftest(" #bytes        #iterations       t_avg[msec]    tps average\n 2 1000 0.0015 657894.74\n")
    assert by_time["rows"][0]["t_avg_us"] == 1.5 and by_time["rows"][0]["tps"] == 657894.74
    assert by_time["duration_mode"] is True and by_time["metric"] == "lat"
    assert by_time["warnings"] == [
        "duration mode (-D): perftest reports only t_avg and tps, the other latency values are null"]


BW_HEADER = " RDMA_Write BW Test\n Link type       : Ethernet\n GID index       : 3\n"
BW_TABLE = " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n"


def _read(text):
    result = parse_perftest(text)
    return result["rows"], result["warnings"], result["errors"], result["side"], result["ok"]


@pytest.mark.parametrize("text, rows, warning, side, ok", [
    (BW_TABLE + " 65536      5000             0.00               92.50                0.176\n",
     [{"bytes": 65536, "iterations": 5000, "bw_peak_gbps": None, "bw_avg_gbps": 92.5, "msg_rate_mpps": 0.176}],
     "BW peak was not measured (-N or duration mode): bw_peak_gbps is null", "client", True),
    (BW_TABLE + " 65536      5000             93.00               92.50\n",
     [{"bytes": 65536, "iterations": 5000, "bw_peak_gbps": 93.0, "bw_avg_gbps": 92.5, "msg_rate_mpps": None}],
     "1 result row(s) did not have as many values as the table header has columns", "client", True),
    (BW_TABLE + " 6553x      5000             93.00               92.50  0.1\n", [],
     "the result table header was printed but no result row was read", None, False),
    (BW_TABLE.replace("Gb/sec", "Furlongs/sec") + " 65536      5000             93.00               92.50  0.1\n",
     [{"bytes": 65536, "iterations": 5000, "bw_peak_gbps": None, "bw_avg_gbps": None, "msg_rate_mpps": 0.1}],
     "unknown bandwidth unit Furlongs/sec: bandwidth values are null", "client", True),
    ("Failed to query device capabilities, ret=95\n" + BW_TABLE + " 65536      5000             93.00  92.50  0.1\n",
     [{"bytes": 65536, "iterations": 5000, "bw_peak_gbps": 93.0, "bw_avg_gbps": 92.5, "msg_rate_mpps": 0.1}],
     "Failed to query device capabilities, ret=95", "client", True),
])
def test_what_a_table_lacks_is_one_warning_that_says_so(text, rows, warning, side, ok):
    assert _read(BW_HEADER + text) == (rows, [warning], [], side, ok)


def test_a_server_that_only_waited_says_no_client_connected():
    banner = "\n************************************\n* Waiting for client to connect... *\n************************************\n"
    assert _read(banner) == ([], ["server side: only the waiting banner, no client connected"], [], "server", False)


def test_an_all_zero_gid_on_roce_explains_why_the_qps_did_not_connect():
    text = BW_HEADER + (" local address: LID 0000 QPN 0x003b PSN 0xab3a5e\n GID: " + ":".join(["00"] * 16) + "\n"
                        " remote address: LID 0000 QPN 0x003c PSN 0x65b096\n"
                        " GID: 00:00:00:00:00:00:00:00:00:00:255:255:10:00:00:02\nFailed to modify QP 59 to RTR\n")
    (error,) = parse_perftest(text)["errors"]
    assert (error["code"], error["detail"]) == ("qp_connect_failed", (
        "An all-zero GID was printed for the local side of this Ethernet (RoCE) link: GID index 3 holds no address "
        "on that port (no IP on the RDMA device's netdev, common in pods, or the wrong -x); pass with -x the RoCE v2 "
        "GID index that carries the interface IP (show_gids)"))
    garbled = text.replace(" GID: " + ":".join(["00"] * 16), " GID: X0:X0")
    assert parse_perftest(garbled)["errors"][0]["detail"] is None       # not a GID, so no all-zero one
    both = text.replace("255:255:10:00:00:02", ":".join(["00"] * 6)).replace(" GID index       : 3\n", "")
    assert "for the local and remote side" in parse_perftest(both)["errors"][0]["detail"]
    assert "GID index in use holds no address" in parse_perftest(both)["errors"][0]["detail"]


def test_a_completion_error_keeps_its_status_syndrome_and_side():
    text = BW_HEADER + BW_TABLE + " Completion with error at server\n Failed status 12: wr_id 0 syndrom 0x81\n"
    (error,) = parse_perftest(text)["errors"]
    assert (error["code"], error["wc_status"], error["vendor_err"], error["side"]) == (
        "completion_error", 12, "0x81", "server")
    assert error["evidence"] == ["Completion with error at server", "Failed status 12: wr_id 0 syndrom 0x81"]
    assert error["detail"].startswith("Completion status 12 (IBV_WC_RETRY_EXC_ERR) at the server: ")


def test_columns_perftest_adds_are_named_from_their_header_and_units():
    table = (" #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]  Line  Use[%]  #Flows  "
             "CPU_Util  [x]\n 65536      5000             93.00               92.50                0.176  97.5  3  12.5\n")
    result = parse_perftest(" RDMA_Write BW Test\n" + table)
    assert result["columns"] == ["#bytes", "#iterations", "BW peak[Gb/sec]", "BW average[Gb/sec]", "MsgRate[Mpps]",
                                 "Line Use[%]", "#Flows", "CPU_Util [x]"]
    assert result["rows"] == [{"bytes": 65536, "iterations": 5000, "bw_peak_gbps": 93.0, "bw_avg_gbps": 92.5,
                               "msg_rate_mpps": 0.176, "line_use_pct": 97.5, "num_flows": 3.0, "cpu_util_pct": 12.5}]
    # sizes and iteration counts are integers, whatever else the row holds
    assert [type(result["rows"][0][key]) for key in ("bytes", "iterations", "num_flows")] == [int, int, float]


def test_a_row_is_plain_decimals_an_infinite_or_nan_value_is_null():
    table = (" #bytes #iterations BW peak[Gb/sec] BW average[Gb/sec] MsgRate[Mpps]\n"
             " 1e3 5000 1.0 1.0 0.1\n 2 5000 inf nan -inf\n 4 5000 1_0 1 1\n 8 5000 1.0 1.0 0.1x\n"
             " 16 5000 1.0 1.0 +1\n 32 5000 -Infinity 1.0 1.0\n")
    assert parse_perftest(table)["rows"] == [
        {"bytes": 2, "iterations": 5000, "bw_peak_gbps": None, "bw_avg_gbps": None, "msg_rate_mpps": None},
        {"bytes": 16, "iterations": 5000, "bw_peak_gbps": 1.0, "bw_avg_gbps": 1.0, "msg_rate_mpps": 1.0},
        {"bytes": 32, "iterations": 5000, "bw_peak_gbps": None, "bw_avg_gbps": 1.0, "msg_rate_mpps": 1.0}]


def test_an_error_keeps_twenty_lines_of_evidence_and_a_warning_is_listed_once():
    result = parse_perftest("".join("Failed to modify QP %d to RTR\n" % n for n in range(25)))
    assert [len(e["evidence"]) for e in result["errors"]] == [20]
    assert result["errors"][0]["evidence"][-1] == "Failed to modify QP 19 to RTR"
    cpu = "Conflicting CPU frequency values detected: 2200.000000 != 1040.353000. CPU Frequency is not max.\n"
    assert parse_perftest(cpu + cpu)["warnings"] == [cpu.strip()]


def test_a_completion_status_is_read_by_its_number_or_by_its_words():
    from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.perftest_result import completion_status
    assert completion_status("Failed status 4: wr_id 0 syndrom 0x51") == 4
    assert completion_status("Failed status: transport retry counter exceeded: wr_id 0") == 12
    assert completion_status("Failed status: no such words") is None and completion_status("all good") is None
