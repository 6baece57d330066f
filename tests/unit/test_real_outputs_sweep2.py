# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Second sweep of real tool outputs from public issues, docs and repositories (tests/fixtures/real,
sources in each SOURCES.md): the values an operator reads from them.  Misread before: older
nccl-tests tables whose header names a redop (or root) column that the rows leave blank (every row
was dropped, so a finished run read as 'no result rows'); a RoCE perftest connect failure whose
output shows all-zero GIDs now says so in the error's detail."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import pytest

from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_hccl_test import parse_hccl_test
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_ibdev2netdev import (
    parse_ibdev2netdev_full,
)
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_iperf3 import parse_iperf3
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_nccl_tests import parse_nccl_tests
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_perftest import parse_perftest
from real_outputs import real


# --- nccl-tests: older tables with blank lead columns --------------------------------------------

def test_old_alltoall_with_blank_redop_keeps_every_row():
    # Before: 0 rows, error no_table and ok False although the run finished (Avg bus bandwidth 58.6481).
    result = parse_nccl_tests(real("nccl_tests", "nccl_alltoall_old_blank_redop_error_col_superbench.txt"))
    assert result["header"]["validation"] == 0 and result["header"]["ngpus"] == 8
    assert result["header"]["wrong_column"] == "error"
    assert result["nranks"] == 8
    assert len(result["rows"]) == 34
    first = result["rows"][0]
    assert (first["bytes"], first["count"], first["type"], first["redop"], first["root"]) == (0, 0, "float", None, None)
    assert first["out_of_place"] == {"time_us": 1.63, "algbw_gbs": 0.0, "busbw_gbs": 0.0, "wrong": None}
    row_1g = [row for row in result["rows"] if row["bytes"] == 1073741824][0]
    assert row_1g["count"] == 33554432
    assert row_1g["out_of_place"] == {"time_us": 4335.5, "algbw_gbs": 247.66, "busbw_gbs": 216.71, "wrong": None}
    assert row_1g["in_place"] == {"time_us": 4274.2, "algbw_gbs": 251.22, "busbw_gbs": 219.81, "wrong": None}
    last = result["rows"][-1]
    assert last["bytes"] == 8589934592
    assert last["in_place"] == {"time_us": 33234.0, "algbw_gbs": 258.47, "busbw_gbs": 226.16, "wrong": None}
    assert not any(row["partial"] for row in result["rows"])
    assert result["avg_busbw_gbs"] == 58.6481
    assert result["max_busbw_gbs"] == 226.16
    assert result["out_of_bounds"] == 0
    assert result["errors"] == [] and result["warnings"] == []
    assert result["ok"] is True


def test_old_broadcast_with_root_and_no_redop():
    result = parse_nccl_tests(real("nccl_tests", "nccl_broadcast_old_root_no_redop_superbench.txt"))
    assert result["header"]["columns"]["lead"] == ["bytes", "count", "type", "root"]
    assert len(result["rows"]) == 34
    row_1g = [row for row in result["rows"] if row["bytes"] == 1073741824][0]
    assert (row_1g["count"], row_1g["redop"], row_1g["root"]) == (268435456, None, 0)
    assert row_1g["out_of_place"] == {"time_us": 4769.2, "algbw_gbs": 225.14, "busbw_gbs": 225.14, "wrong": None}
    assert row_1g["in_place"] == {"time_us": 4697.5, "algbw_gbs": 228.58, "busbw_gbs": 228.58, "wrong": None}
    assert result["avg_busbw_gbs"] == 64.8653
    assert result["errors"] == [] and result["ok"] is True


_OLD_HEADER = (
    "#       size         count    type   redop    root"
    "     time   algbw   busbw  error     time   algbw   busbw  error\n"
    "#        (B)    (elements)                             (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)\n")


@pytest.mark.parametrize("row, redop, root, time_us", [
    # both lead columns blank, the time a fraction
    ("     4194304       1048576   float    100.7   41.64   36.43    N/A    99.56   42.13   36.86    N/A",
     None, None, 100.7),
    # redop blank, root printed
    ("     4194304       1048576   float       0    100.7   41.64   36.43    N/A    99.56   42.13   36.86    N/A",
     None, 0, 100.7),
    # both printed (the ordinary layout)
    ("     4194304       1048576   float     sum       0"
     "    100.7   41.64   36.43    N/A    99.56   42.13   36.86    N/A",
     "sum", 0, 100.7),
])
def test_blank_lead_columns_under_a_header_that_names_them(row, redop, root, time_us):
    result = parse_nccl_tests(_OLD_HEADER + row + "\n")
    assert len(result["rows"]) == 1
    parsed = result["rows"][0]
    assert (parsed["bytes"], parsed["count"], parsed["redop"], parsed["root"]) == (4194304, 1048576, redop, root)
    assert parsed["out_of_place"] == {"time_us": time_us, "algbw_gbs": 41.64, "busbw_gbs": 36.43, "wrong": None}
    assert parsed["in_place"]["busbw_gbs"] == 36.86
    assert parsed["partial"] is False


# --- ibdev2netdev ---------------------------------------------------------------------------------

def _links(result):
    return [(d["device"], d["port"], d["netdev"], d["state"]) for d in result["devices"]]


def test_ibdev2netdev_plain_ports_down_and_bonds_up_after_a_prompt():
    result = parse_ibdev2netdev_full(real("ibdev2netdev", "ibdev2netdev_eth_down_and_bonds_up_prompt.txt"))
    assert _links(result) == [
        ("mlx5_4", 1, "eth4", "Down"), ("mlx5_5", 1, "eth5", "Down"),
        ("mlx5_bond_0", 1, "bond0", "Up"), ("mlx5_bond_1", 1, "bond1", "Up")]
    assert result["errors"] == []


def test_ibdev2netdev_huawei_and_mellanox_bonds():
    result = parse_ibdev2netdev_full(real("ibdev2netdev", "ibdev2netdev_huawei_hrn3_bond_and_mlx5_bond.txt"))
    assert _links(result) == [("hrn3_bond_0", 1, "bond0", "Up"), ("mlx5_bond_0", 1, "bond1", "Up")]
    assert result["errors"] == []


# --- iperf3 ----------------------------------------------------------------------------------------

def test_iperf3_json_stream_server_busy_after_a_prompt():
    result = parse_iperf3(real("iperf3", "iperf3_json_stream_server_busy.txt"))
    assert result["ok"] is False
    assert [(e["code"], e["message"]) for e in result["errors"]] == [
        ("server_busy", "the server is busy running a test. try again later")]


def test_iperf3_text_error_between_other_tools_lines():
    result = parse_iperf3(real("iperf3", "iperf3_text_control_reset_between_ping_lines.txt"))
    assert result["ok"] is False
    assert [e["code"] for e in result["errors"]] == ["control_closed"]
    assert "Connection reset by peer" in result["errors"][0]["message"]


# --- hccl_test ------------------------------------------------------------------------------------

def test_hccl_all_reduce_one_row_with_check_result():
    result = parse_hccl_test(real("hccl_test", "all_reduce_test_vm_runner_2mb_one_row.txt"))
    assert result["header"]["time_column"] == "aveg_time"
    assert result["rows"] == [{"bytes": 2097152, "avg_time_us": 1000.0, "algbw_gbs": 2.09715,
                               "check": "success", "check_result": "success"}]
    assert result["checks_failed"] == 0 and result["errors"] == []
    assert result["ok"] is True


# --- perftest -------------------------------------------------------------------------------------

def test_perftest_roce_connect_failure_names_the_all_zero_gids():
    # Before: detail None; the output itself shows why the QP did not reach RTR (both GIDs are zeros).
    result = parse_perftest(real("perftest", "err_modify_qp_rtr_zero_gid_roce_pod.txt"))
    assert result["ok"] is False and result["rows"] == []
    assert result["settings"]["link_type"] == "Ethernet" and result["settings"]["gid_index"] == 0
    assert result["settings"]["device"] == "mlx5_2" and result["settings"]["mtu"] == 1024
    assert [e["code"] for e in result["errors"]] == ["qp_connect_failed"]
    error = result["errors"][0]
    assert error["evidence"] == ["Failed to modify QP 59 to RTR", "Unable to Connect the HCA's through the link"]
    assert "all-zero GID" in error["detail"] and "local and remote" in error["detail"]
    assert "GID index 0" in error["detail"]


_IB_CONNECT_FAILURE = (
    " Link type       : IB\n"
    " local address: LID 0x02 QPN 0x0032 PSN 0x5f2841 RKey 0x002440 VAddr 0x007f2e5f64b000\n"
    " GID: 00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00\n"
    "Failed to modify QP 59 to RTR\n")


def test_zero_gid_on_infiniband_is_no_cause():
    result = parse_perftest(" RDMA_Write BW Test\n" + _IB_CONNECT_FAILURE)
    assert [e["code"] for e in result["errors"]] == ["qp_connect_failed"]
    assert result["errors"][0]["detail"] is None


def test_zero_gid_on_one_side_of_a_roce_link():
    text = " RDMA_Write BW Test\n" + _IB_CONNECT_FAILURE.replace("Link type       : IB", "Link type       : Ethernet")
    text = text.replace("Failed", " remote address: LID 0000 QPN 0x003c PSN 0x65b096 RKey 0x014d0c VAddr 0x007f\n"
                        " GID: 00:00:00:00:00:00:00:00:00:00:ff:ff:0a:00:00:02\nFailed")
    error = parse_perftest(text)["errors"][0]
    assert "for the local side" in error["detail"]
