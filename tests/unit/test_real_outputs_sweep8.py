# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Eighth sweep of real tool outputs, the collective side (tests/fixtures/real, sources in each SOURCES.md): what an
operator reads from them.  Misread before: nccl-tests before 2019 printed "NCCL failure common.cu:921 'unhandled
system error'" (no "Test ") and NCCL 2.2 logged "host:pid:tid [0] file:line WARN ..." without the word NCCL: both
were left as warnings, the run had no error but no_table; rccl-tests' "Test HIP failure ... 'hipErrorInvalidDevice'"
was a warning; RCCL's "hipIpcGetMemHandle failed : invalid argument" was NCCL's argument check (nccl_invalid_argument,
an error no choice of hosts avoids, so a P2P failure on one node stopped the bisection); "Duplicate GPU detected"
was a warning; the rccl-tests header "# nThreads: 1 nGpus: 4 nRanks: 1 ..." was not read; the --output_file JSON of
rccl-tests from late 2024 to mid 2025 (one object per line) was invalid JSON; Slurm's "*** STEP ... CANCELLED AT
... DUE TO TIME LIMIT ***" and its PMIx plugin's start-up "collective timeout" were warnings; HCCL's "Cluster
Exception Location[IP/ID]:[ip/id] ... ExceptionType:[Heartbeat Lost Occurred]" (the rank it blames) was a warning,
and CANN's "EI0002: ... The wait execution of the Notify register times out." was not read (it says "times out").
Read right already, and now pinned: HCCL's EI0006 socket timeout with its LINK_ERROR_INFO table."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_hccl_test import parse_hccl_test
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_nccl_tests import (
    parse_nccl_tests, parse_nccl_tests_json)
from ansible_collections.clusterops.commcheck.plugins.module_utils.planning.collective_plan import (
    global_error, judge_run, named_hosts)
from real_outputs import codes as _codes, error_of as _error, real


def _nccl(name):
    return parse_nccl_tests(real("nccl_tests", name))


def _hccl(name):
    return parse_hccl_test(real("hccl_test", name))


# --- nccl-tests and NCCL before 2019 -----------------------------------------------------------------

def test_nccl_failure_without_test_prefix_is_the_cuda_failure_it_names():
    result = _nccl("nccl_tests_2018_nccl_failure_without_test_prefix_res_column.txt")
    assert _codes(result) == ["nccl_cuda_failure", "no_table"]
    assert _error(result, "nccl_cuda_failure")["message"] == "NCCL failure all_reduce.cu:95 'unhandled cuda error'"
    assert (result["test"], result["nranks"], result["header"]["ngpus"]) == ("all_reduce_perf", 8, 8)
    assert result["warnings"] == []


def test_bare_nccl_failure_after_the_run_header_is_a_system_error():
    result = _nccl("nccl_tests_2018_header_then_nccl_failure_unhandled_system_error.txt")
    assert _codes(result) == ["nccl_system_error", "no_table"]
    assert (result["header"]["nthread"], result["header"]["ngpus"], result["header"]["max_bytes"]) == (1, 8, 134217728)


def test_warn_records_without_the_library_word_are_read_as_nccl_records():
    result = _nccl("nccl22_warn_lines_without_nccl_word_socket_creation_failed.txt")
    assert _codes(result) == ["nccl_bootstrap_failed", "no_table"]
    error = _error(result, "nccl_bootstrap_failed")
    assert error["message"] == "Socket creation failed : Address family not supported by protocol"
    assert error["hosts"] == ["e66aa18dc444"]
    # libibverbs missing only means no IB: a warning, as in newer NCCL's form
    assert result["warnings"] == ["NCCL WARN Failed to open libibverbs.so[.1]"]


def test_warn_then_bare_failure_gives_both_errors():
    result = _nccl("nccl_warn_net_connection_closed_then_nccl_failure_without_test_prefix.txt")
    assert _codes(result) == ["nccl_bootstrap_failed", "nccl_system_error", "no_table"]
    assert _error(result, "nccl_bootstrap_failed")["hosts"] == ["server1"]
    assert not any("NCCL failure" in w for w in result["warnings"])


# --- rccl-tests and RCCL ---------------------------------------------------------------------------------

def test_rccl_tests_header_with_colons_and_nranks_is_read():
    result = _nccl("rccl_tests_old_header_nthreads_colon_nranks_internal_error.txt")
    header = result["header"]
    assert (header["nthread"], header["ngpus"], header["nranks"]) == (1, 4, 1)
    assert (header["min_bytes"], header["max_bytes"], header["warmup_iters"], header["iters"]) == (8, 134217728, 5, 20)
    assert result["nranks"] == 4 and result["hosts"] == ["sharbox-ultra"]
    assert _codes(result) == ["nccl_internal_error", "no_table"]


def test_test_hip_failure_is_a_gpu_runtime_failure_with_container_device_advice():
    result = _nccl("rccl_tests_test_hip_failure_hiperrorinvaliddevice.txt")
    assert _codes(result) == ["nccl_cuda_failure", "no_table"]
    error = _error(result, "nccl_cuda_failure")
    assert error["message"] == "Test HIP failure common.cu:1129 'hipErrorInvalidDevice'"
    assert "/dev/kfd" in error["hint"] and "/dev/dri" in error["hint"]


def test_hip_ipc_handle_failure_is_a_p2p_runtime_failure_that_leaves_bisection_open():
    result = _nccl("rccl_warn_hipipcgetmemhandle_invalid_argument_r9700_p2p.txt")
    assert _codes(result) == ["nccl_cuda_failure", "no_table"]
    error = _error(result, "nccl_cuda_failure")
    assert error["message"] == "hipIpcGetMemHandle failed : invalid argument" and error["count"] == 3
    assert error["hosts"] == ["R9700-Workstation-SH"] and "NCCL_P2P_DISABLE=1" in error["hint"]
    judgement = judge_run("nccl", "all_reduce", 4, 1, False, result)
    assert judgement["verdict"] == "error" and judgement["fix"] == error["hint"]
    # NCCL's argument check would be the same on any hosts; a GPU's P2P failure is not
    assert global_error(judgement) is False


def test_hip_ipc_failure_of_rccl_unit_tests_after_the_iommu_warnings():
    result = _nccl("rccl_warn_missing_iommu_then_hipipcgetmemhandle_invalid_argument_unit_tests.txt")
    assert _codes(result) == ["nccl_cuda_failure", "no_table"]
    assert (result["nccl_version"], result["header"]["library"]) == ("2.18.3+hip5.5", "RCCL")
    assert [w.split(" from ")[0] for w in result["warnings"]] == [
        'NCCL WARN Missing "amd_iommu=on"', 'NCCL WARN Missing "iommu=pt"',
        'NCCL WARN Missing "HSA_FORCE_FINE_GRAIN_PCIE=1"']


def test_rccl_tests_json_fragments_one_object_per_line_are_results():
    text = real("nccl_tests", "rccl_tests_output_file_json_fragments_one_object_per_line.txt")
    for result in (parse_nccl_tests(text), parse_nccl_tests_json(text)):
        assert result["format"] == "json" and result["errors"] == [] and result["ok"] is True
        assert (result["collective"], result["header"]["gpus"]) == ("all_reduce", 4)
        assert [(r["bytes"], r["redop"], r["out_of_place"]["busbw_gbs"], (r["in_place"] or {}).get("busbw_gbs"))
                for r in result["rows"]] == [(1024, "sum", 0.08006609623048194, 0.07719504564609389),
                                             (2048, "sum", 0.1581332859757086, 0.15162732845677732),
                                             (4096, "sum", 0.30779018768488575, None)]
        assert result["rows"][0]["out_of_place"]["wrong"] == 0


# --- NCCL WARN --------------------------------------------------------------------------------------------

def test_duplicate_gpu_detected_is_invalid_usage_with_one_rank_per_gpu_advice():
    result = _nccl("nccl_warn_duplicate_gpu_detected_mpirun_tagged_horovod.txt")
    assert _codes(result) == ["nccl_invalid_usage", "no_table"]
    error = _error(result, "nccl_invalid_usage")
    assert error["count"] == 3 and error["hosts"] == ["smc-gpu-03"]
    assert error["message"] == "Duplicate GPU detected : rank 2 and rank 0 both on CUDA device 1000"
    assert "same GPU" in error["hint"] and "one rank per" in error["hint"]
    assert result["warnings"] == []


# --- Slurm ------------------------------------------------------------------------------------------------

def test_step_cancelled_due_to_time_limit_is_an_error_that_names_no_node():
    result = _nccl("srun_time_limit_step_cancelled_tasks_terminated.txt")
    assert _codes(result) == ["job_cancelled", "no_table"]
    error = _error(result, "job_cancelled")
    assert error["message"].endswith("CANCELLED AT 2020-07-03T02:59:56 DUE TO TIME LIMIT ***")
    assert "time limit" in error["hint"] and error["hosts"] == []
    judgement = judge_run("nccl", "all_reduce", 16, 1, False, result)
    assert judgement["verdict"] == "error" and judgement["cause"].startswith("Slurm cancelled the job")
    # the node in "ON nid01934" is where the step started: the bisection, not this line, finds the bad one
    assert named_hosts(judgement, [{"name": "nid01934", "address": "10.0.0.1"}]) == []


def test_labelled_step_and_job_cancellations_are_one_error():
    result = _nccl("srun_labelled_step_and_job_cancelled_due_to_time_limit.txt")
    assert _codes(result) == ["job_cancelled", "no_table"]
    assert _error(result, "job_cancelled")["count"] == 2


def test_pmix_start_up_collective_timeout_is_a_launch_failure():
    result = _nccl("srun_pmix_collective_timeout_pyxis_all_reduce_perf.txt")
    assert _codes(result) == ["mpi_launch_failed", "no_table"]
    error = _error(result, "mpi_launch_failed")
    assert error["message"].endswith("collective timeout seq=0")
    assert "PMIx" in error["hint"] and "pyxis" in error["hint"]
    assert result["test"] == "all_reduce_perf"


# --- HCCL -------------------------------------------------------------------------------------------------

def test_cluster_exception_location_names_the_rank_hccl_blames():
    result = _hccl("hccl_log_cluster_exception_location_heartbeat_lost_all_reduce_test.txt")
    assert _codes(result) == ["hccl_rank_exception", "no_table"]
    error = _error(result, "hccl_rank_exception")
    assert error["hosts"] == ["127.10.0.1"] and "rank 1 on 127.10.0.1 exited" in error["hint"]


def test_ei0002_that_times_out_and_the_rank_behind_it():
    result = _hccl("cann_ei0002_notify_timeout_cluster_exception_location_torch_npu.txt")
    assert _codes(result) == ["hccl_notify_timeout", "hccl_rank_exception", "no_table"]
    assert _error(result, "hccl_notify_timeout")["message"].startswith("EI0002: [PID: 7277]")
    assert _error(result, "hccl_rank_exception")["hosts"] == ["90.90.92.240"]
    judgement = judge_run("hccl", "all_reduce", 16, 1, False, result)
    hosts = [{"name": "npu-a", "address": "90.90.92.240"}, {"name": "npu-b", "address": "90.90.92.241"}]
    assert named_hosts(judgement, hosts) == ["npu-a"]


def test_ei0006_socket_timeout_with_link_error_info_pinned():
    # read right before this sweep: pinned
    result = _hccl("hccl_log_ei0006_wait_socket_timeout_link_error_info_all_reduce_test.txt")
    assert _codes(result) == ["hccl_socket_timeout", "hccl_e_timeout", "no_table"]
    assert _error(result, "hccl_e_timeout")["count"] == 3
