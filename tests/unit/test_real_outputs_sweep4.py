# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fourth sweep of real tool outputs from public issues and vendor docs (tests/fixtures/real, sources in each
SOURCES.md): the values an operator reads from them.  Misread before: perftest's completion errors
("Completion with error at client / Failed status 4: wr_id 0 syndrom 0x51", also printed on one line, after an
MLNX_OFED CQE hex dump, or with the ibv_wc_status_str() text of newer perftest) kept neither the work-completion
status nor the syndrome, so a local protection error of GPU memory (status 4: GPUDirect RDMA registration) got
the same link and PFC advice as a transport retry timeout (status 12).  Read right already, and now pinned:
HCCL's ``retcode: 7`` of every rank with its ``init_hcclComm`` stage, MPICH's ``gethostbyname failed`` stack
under hccl_test, an hccl-vm 64-byte row, perftest rdma_cm exchange and RTS failures (with the old
``socket/rdam_cm`` spelling), and MPICH Hydra's BAD TERMINATION block of a segfault."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_hccl_test import parse_hccl_test
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_nccl_tests import parse_nccl_tests
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_perftest import parse_perftest
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.perftest_result import (
    completion_status,
)
from real_outputs import codes as _codes, error_of as _error, real


# --- hccl_test ------------------------------------------------------------------------------------

def test_hccl_retcode_7_of_every_rank_in_init_hcclcomm():
    result = parse_hccl_test(real("hccl_test", "hccl_test_retcode7_init_hcclcomm_four_ranks.txt"))
    assert result["header"] == {"min_bytes": 8192, "max_bytes": 2147483648, "iters": 20, "warmup_iters": 5}
    assert _codes(result) == ["hccl_e_unavail", "no_table"]
    unavail = _error(result, "hccl_e_unavail")
    assert unavail["count"] == 4 and unavail["stages"] == ["init_hcclComm"]
    assert "leftover" in unavail["cause"] and "pkill" in unavail["fix"]
    assert result["rows"] == [] and result["completed"] is False and result["ok"] is False


def test_hccl_mpich_gethostbyname_failure_names_the_host():
    result = parse_hccl_test(real("hccl_test", "mpich_gethostbyname_failed_mpi_init.txt"))
    assert _codes(result) == ["hostname_unresolvable", "no_table"]
    assert "HW-AI-LC-1-1" in _error(result, "hostname_unresolvable")["message"]
    assert "/etc/hosts" in _error(result, "hostname_unresolvable")["fix"]
    assert result["ok"] is False


def test_hccl_vm_64_byte_row_with_five_decimals():
    result = parse_hccl_test(real("hccl_test", "reduce_scatter_test_vm_runner_64b_one_row.txt"))
    assert [(r["bytes"], r["avg_time_us"], r["algbw_gbs"], r["check"]) for r in result["rows"]] == [
        (64, 1000.0, 0.00006, "success")]
    assert result["header"]["time_column"] == "aveg_time"
    assert result["errors"] == [] and result["ok"] is True


# --- perftest: completion errors ------------------------------------------------------------------

def test_perftest_completion_status_4_is_gpu_memory_registration_not_the_link():
    result = parse_perftest(real("perftest", "err_completion_status4_syndrom51_cuda.txt"))
    assert _codes(result) == ["completion_error"]
    error = _error(result, "completion_error")
    assert (error["wc_status"], error["vendor_err"], error["side"]) == (4, "0x51", "client")
    assert "IBV_WC_LOC_PROT_ERR" in error["detail"] and "nvidia-peermem" in error["detail"]
    assert "retry" not in error["detail"]
    assert result["rows"] == [] and result["ok"] is False


def test_perftest_completion_status_after_an_ofed_cqe_hex_dump():
    result = parse_perftest(real("perftest", "err_completion_status4_cqe_hex_dump_cuda.txt"))
    assert _codes(result) == ["completion_error"]
    error = _error(result, "completion_error")
    assert (error["wc_status"], error["vendor_err"], error["side"]) == (4, "0x51", "client")
    assert "Failed status 4: wr_id 0 syndrom 0x51" in error["evidence"]
    assert result["rows"] == []


def test_perftest_completion_status_12_on_one_line():
    result = parse_perftest(real("perftest", "err_completion_status12_one_line_siw.txt"))
    assert _codes(result) == ["completion_error"]
    error = _error(result, "completion_error")
    assert (error["wc_status"], error["vendor_err"], error["side"]) == (12, "0x81", "client")
    assert "IBV_WC_RETRY_EXC_ERR" in error["detail"] and "PFC" in error["detail"]


def test_perftest_completion_status_by_number_or_by_its_verbs_text():
    assert completion_status(" Failed status 13: wr_id 0 syndrom 0x82") == 13
    assert completion_status(" Failed status 12 (transport retry counter exceeded): wr_id 0") == 12
    assert completion_status(" Failed status: transport retry counter exceeded: wr_id 0 syndrom 0x81") == 12
    assert completion_status(" Failed status local protection error wr_id 0 syndrom 0x51") == 4
    assert completion_status(" Failed status: something new: wr_id 0") is None
    assert completion_status("Completion with error at client") is None


# --- perftest: rdma_cm / exchange failures ---------------------------------------------------------

def test_perftest_rdma_cm_server_exchange_failure():
    result = parse_perftest(real("perftest", "err_rdma_cm_server_ethernet_read_keys.txt"))
    assert _codes(result) == ["exchange_failed"]
    assert len(_error(result, "exchange_failed")["evidence"]) == 3


def test_perftest_rdma_cm_client_qp_to_rts():
    result = parse_perftest(real("perftest", "err_rdma_cm_client_modify_qp_rts.txt"))
    assert _codes(result) == ["qp_connect_failed"]
    assert "Unable to Connect the HCA's through the link" in _error(result, "qp_connect_failed")["evidence"]


def test_perftest_old_read_bw_server_exchange_failure_after_the_table_header():
    result = parse_perftest(real("perftest", "ib_read_bw_server_mlx4_ethernet_read_keys_rdam_cm.txt"))
    assert (result["test"], result["metric"], result["side"], result["bw_unit"]) == ("read", "bw", "server", "MB/sec")
    settings = result["settings"]
    assert (settings["device"], settings["qps"], settings["mtu"], settings["link_type"]) == ("mlx4_0", 1, 2048, "IB")
    assert settings["outstand_reads"] == 128 and settings["rdma_cm"] is False
    assert result["remote_addresses"][0]["lid"] == "0x0e"
    assert _codes(result) == ["exchange_failed"]
    assert " Unable to read to socket/rdam_cm".strip() in _error(result, "exchange_failed")["evidence"]
    assert result["rows"] == [] and result["ok"] is False


# --- mpirun (MPICH Hydra) -------------------------------------------------------------------------

def test_mpich_hydra_bad_termination_of_a_segfault():
    result = parse_nccl_tests(real("nccl_tests", "mpich_bad_termination_segfault_exit_11.txt"))
    assert _codes(result) == ["segfault", "rank_failed", "no_table"]
    assert "signal 11" in _error(result, "segfault")["message"]
    assert result["rows"] == [] and result["ok"] is False
