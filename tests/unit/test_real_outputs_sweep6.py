# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Sixth sweep of real tool outputs from public issues and docs (tests/fixtures/real, sources in each
SOURCES.md): the values an operator reads from them.  Misread before: Slurm's own lines around a collective
test (``srun: error: NODE: task 0: Out Of Memory``, ``... tasks 0-23: Exited with exit code 127``,
``Task launch for ... failed on node X``) were mere warnings, with no host; Open MPI 5's "PRTE has lost
communication with a remote daemon" named no host (the lost daemon's node is on a line of its own) and its
"prterun has exited due to process rank 2 ... on node X exiting improperly" was not read at all; the HCCL
library's own log lines (``[ERROR] HCCL(...) ... hcclRet -> 19``, ``ret[9]``, ``errNo[0x...05000013]``, a port
it could not listen on) carried their HcclResult unread; the newer ``# rccl-tests version ... rccl-headers=``
header left the tests' version unread; an NCCL_ALGO asking for NVLS while every communicator built 0 NVLS
channels went unremarked; ibstat's empty ``CA type:`` became an empty string; and discovery took every port that
is not InfiniBand for RoCE: an AWS EFA port (sysfs ``link_layer`` Unknown) got RoCE GID and netdev errors, and
ibv_devinfo's ``Unspecified`` (or old rdma-core's ``InfiniBand``) for it was reported as a tool mismatch.
Read right already, and now pinned: ibv_devinfo of EFA devices, RCCL's NET/IB over AMD Pensando ionic ports, and
NCCL channels over NET/IB/GDRDMA and P2P/CUMEM."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery import rdma_discovery as rd
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_hccl_test import parse_hccl_test
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_ibstat import parse_ibstat_full
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_ibv_devinfo import (
    parse_ibv_devinfo_full,
)
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_nccl_tests import parse_nccl_tests
from real_outputs import codes as _codes, error_of as _error, real

HEALTHY_HOST = {"memlock": {"soft": "unlimited", "hard": "unlimited"}, "perftest": "/usr/bin/ib_write_bw",
                "in_container": False}


# --- launchers: Open MPI 5 (PRRTE) ------------------------------------------------------------------

def test_prte_lost_daemon_names_the_remote_node_and_the_rank_that_exited():
    result = parse_nccl_tests(real("nccl_tests", "prterun_lost_remote_daemon_rank_exit_improperly.txt"))
    assert _codes(result) == ["mpi_launch_failed", "rank_failed", "no_table"]
    lost = _error(result, "mpi_launch_failed")
    assert lost["message"] == "PRTE has lost communication with a remote daemon."
    assert lost["hosts"] == ["nid003032"]      # the remote daemon's node, not the HNP's (nid002944)
    rank = _error(result, "rank_failed")
    assert "process rank 2 with PID 1705216 on node nid003032 exiting improperly" in rank["message"]
    assert rank["hosts"] == ["nid003032"]
    assert result["ok"] is False


# --- launchers: Slurm -------------------------------------------------------------------------------

def test_srun_task_launch_failure_is_a_launch_failure_on_that_node():
    result = parse_nccl_tests(real("nccl_tests", "srun_task_launch_failed_job_credential_expired.txt"))
    assert _codes(result) == ["mpi_launch_failed", "no_table"]
    error = _error(result, "mpi_launch_failed")
    assert error["count"] == 2 and error["hosts"] == ["compute-0-1"]
    assert error["evidence"][1] == "srun: error: Application launch failed: Job credential expired"
    assert "slurmd" in error["hint"] and "clock" in error["hint"]
    assert not any("Task launch" in warning for warning in result["warnings"])


def test_srun_out_of_memory_task_is_a_killed_process_on_that_node():
    result = parse_nccl_tests(real("nccl_tests", "srun_oom_kill_task_out_of_memory.txt"))
    assert _codes(result) == ["process_killed", "no_table"]
    error = _error(result, "process_killed")
    assert error["count"] == 2 and error["hosts"] == ["NODE"]
    assert error["evidence"] == [
        "slurmstepd: error: Detected 2 oom_kill events in StepId=JOBID.13. Some of the step tasks have been OOM "
        "Killed.", "srun: error: NODE: task 0: Out Of Memory"]
    assert "OOM" in error["cause"] or "out-of-memory" in error["cause"]


def test_srun_tasks_exit_code_127_after_a_missing_library():
    result = parse_nccl_tests(real("nccl_tests", "yhrun_libfftw3_missing_tasks_exit_127.txt"))
    assert _codes(result) == ["shared_lib_missing", "rank_failed", "no_table"]
    assert "libfftw3.so.3" in _error(result, "shared_lib_missing")["hint"]
    rank = _error(result, "rank_failed")
    assert rank["message"] == "yhrun: error: cn10175: tasks 0-23: Exited with exit code 127"
    assert rank["hosts"] == ["cn10175"]
    assert "127" in rank["hint"] and "not found" in rank["hint"]


# --- rccl-tests and NCCL/RCCL transports ------------------------------------------------------------

def test_rccl_tests_version_line_with_rccl_header_codes():
    result = parse_nccl_tests(real("nccl_tests", "rccl_tests_version_rccl_headers_gfx1151_version_block.txt"))
    header = result["header"]
    assert result["version"] == "2.17.9-users/speriaswamy-amd/gfx1151-rccl-tests-enablement:f220897c9b"
    assert (header["tests"], header["library"]) == ("rccl-tests", "RCCL")
    assert (header["nccl_headers_code"], header["nccl_library_code"]) == (22803, 22803)
    assert result["nccl_version"] == "2.28.3-gfx1151-rccl:a188cf2"
    assert (result["test"], header["min_bytes"], header["max_bytes"], header["iters"]) == (
        "all_reduce_perf", 1024, 4294967296, 30)
    assert result["hosts"] == ["stxh-4602-MAPLE"] and result["ranks"][0]["name"] == "Radeon 8050S Graphics"
    assert _codes(result) == ["no_table"] and result["warnings"] == []


def test_rccl_net_ib_over_pensando_ionic_roce_ports():
    result = parse_nccl_tests(real("nccl_tests", "rccl_info_ainic_ionic_roce_net_ib.txt"))
    assert (result["transport"], result["transport_kind"], result["networks"]) == ("IB", "rdma", ["IB"])
    assert result["channel_transports"] == [] and result["warnings"] == []


def test_nccl_channels_over_net_ib_gdrdma_and_p2p_cumem():
    result = parse_nccl_tests(real("nccl_tests", "nccl_info_h20_net_ib_gdrdma_and_p2p_cumem.txt"))
    assert (result["transport"], result["transport_kind"], result["gdr"]) == ("IB", "rdma", True)
    assert result["channel_transports"] == ["NET/IB", "P2P"]
    assert result["nvls_channels"] is None


def test_nvls_asked_for_but_no_nvls_channel_built():
    result = parse_nccl_tests(real("nccl_tests", "nccl_info_h800_nvls_in_nccl_algo_0_nvls_channels.txt"))
    assert result["nvls_channels"] == 0
    assert result["channel_transports"] == ["P2P"]
    nvls = [warning for warning in result["warnings"] if "NVLS" in warning]
    assert len(nvls) == 1 and "0 NVLS channels" in nvls[0] and "NCCL_ALGO" in nvls[0]


# --- HCCL's own log lines (the plog printed to stdout) ------------------------------------------------

def test_hccl_log_return_codes_listen_port_and_socket_timeout():
    result = parse_hccl_test(real("hccl_test", "hccl_plog_listen_port_fail_hcclret19_socket_timeout_ret9.txt"))
    assert _codes(result) == ["hccl_port_in_use", "hccl_e_network", "hccl_socket_timeout", "hccl_e_timeout",
                              "no_table"]
    port = _error(result, "hccl_port_in_use")
    assert "specific port[16666]" in port["message"] and "HCCL_IF_BASE_PORT" in port["fix"]
    assert _error(result, "hccl_e_network")["count"] == 2
    assert _error(result, "hccl_e_timeout")["count"] == 2
    assert "timeout[120]" in _error(result, "hccl_socket_timeout")["message"]
    assert result["warnings"] == []


def test_hccl_log_errno_codes_of_an_rdma_init_failure():
    result = parse_hccl_test(real("hccl_test", "hccl_plog_errno_rdma_init_fail_listen_port.txt"))
    assert _codes(result) == ["hccl_e_network", "hccl_e_tcp_connect", "hccl_port_in_use", "no_table"]
    network = _error(result, "hccl_e_network")
    assert network["count"] == 2 and "rdma init fail" in network["message"]
    assert "ra rdma init failed" in _error(result, "hccl_e_tcp_connect")["message"]
    assert len(result["warnings"]) == 2 and all("HCCP" in warning for warning in result["warnings"])


# --- AWS EFA: ibstat, ibv_devinfo, discovery ---------------------------------------------------------

def test_ibstat_of_an_efa_device_empty_fields_are_none():
    result = parse_ibstat_full(real("ibstat", "ibstat_efa0_unknown_link_layer_empty_ca_type.txt"))
    ca = result["cas"][0]
    assert (ca["name"], ca["ca_type"], ca["fw_version"], ca["hw_version"], ca["num_ports"]) == (
        "efa_0", None, None, None, 1)
    port = ca["ports"][0]
    assert (port["state"], port["phys_state"], port["rate"], port["lmc"], port["link_layer"]) == (
        "Active", "LinkUp", 100, 1, "Unknown")
    assert result["errors"] == [] and result["warnings"] == []


def test_ibv_devinfo_of_an_efa_device_unspecified_transport_and_link_layer():
    result = parse_ibv_devinfo_full(real("ibv_devinfo", "ibv_devinfo_efa_rdmap16s27_unspecified_link_layer.txt"))
    device = result["devices"][0]
    assert (device["hca_id"], device["transport"], device["transport_num"], device["vendor_id"]) == (
        "rdmap16s27", "unspecified", 4, "0x1d0f")
    assert (device["vendor_part_id"], device["hw_ver"], device["board_id"]) == (61344, "0xEFA0", None)
    port = device["ports"][0]
    assert (port["state"], port["active_mtu"], port["port_lmc"], port["link_layer"]) == (
        "PORT_ACTIVE", 4096, 1, "Unspecified")
    assert result["errors"] == []


def _efa_snapshot(name):
    """The sysfs of one EFA port as these sources show it: link_layer 'Unknown' (rdma-core PR #884), state ACTIVE
    and physical state LinkUp (ibstat of amzn-drivers #114), no GID of any RoCE type and no netdev."""
    base = "class/infiniband/%s" % name
    return {base + "/ports/1/state": "4: ACTIVE", base + "/ports/1/phys_state": "5: LinkUp",
            base + "/ports/1/link_layer": "Unknown", base + "/hw_ver": "0xEFA0"}


def _port_findings(facts):
    return [(f["severity"], f["code"]) for f in facts["findings"] if f.get("device")]


def test_efa_port_is_not_taken_for_roce_and_its_tools_agree_with_sysfs():
    devinfo = parse_ibv_devinfo_full(real("ibv_devinfo", "ibv_devinfo_efa_rdmap16s27_unspecified_link_layer.txt"))
    facts = rd.discover(_efa_snapshot("rdmap16s27"), dict(HEALTHY_HOST), tools={"ibv_devinfo": devinfo["devices"]})
    port = facts["devices"][0]["ports"][0]
    assert (port["state"], port["link_layer"], port["fabric"], port["gid_index"]) == (
        "ACTIVE", "Unknown", "other", None)
    assert "neither InfiniBand nor Ethernet" in port["gid_reason"]
    # no RoCE GID or netdev error, no ibv_devinfo 'Unspecified' / sysfs 'Unknown' mismatch
    assert _port_findings(facts) == []


def test_efa_port_with_old_rdma_core_infiniband_link_layer_and_ibstat():
    text = real("ibv_devinfo", "ibv_devinfo_efa0_old_infiniband_after_sysfs_link_layer_unknown.txt")
    devinfo = parse_ibv_devinfo_full(text)
    assert [(d["hca_id"], d["transport"], d["ports"][0]["link_layer"]) for d in devinfo["devices"]] == [
        ("efa_0", "unspecified", "InfiniBand")]
    ibstat = parse_ibstat_full(real("ibstat", "ibstat_efa0_unknown_link_layer_empty_ca_type.txt"))
    facts = rd.discover(_efa_snapshot("efa_0"), dict(HEALTHY_HOST),
                        tools={"ibv_devinfo": devinfo["devices"], "ibstat": ibstat["cas"]})
    assert facts["devices"][0]["ports"][0]["fabric"] == "other"
    assert _port_findings(facts) == []
