# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Third sweep of real tool outputs from public issues (tests/fixtures/real, sources in each SOURCES.md):
the values an operator reads from them.  Misread before: older NCCL's intra-node channels
"via direct shared memory" (read as a transport named 'direct', not SHM); an nccl-tests binary that
mpirun started as separate single-rank jobs (the second job's 'Rank 0' on another host was dropped
and the run looked like a healthy one-host run); NET/IB completion errors whose work-completion status
(4: local protection error, 12: retry counter exceeded, ...) was not read, so every one got the same
link-problem advice."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import pytest

from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_ibstat import parse_ibstat_full
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_ibv_devinfo import (
    parse_ibv_devinfo_full,
)
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_nccl_tests import parse_nccl_tests
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_rdma_link import (
    parse_rdma_link_full,
)
from real_outputs import codes as _codes, error_of as _error, real


# --- ibv_devinfo ----------------------------------------------------------------------------------

def test_ibv_devinfo_udev_renamed_devices_after_a_prompt():
    result = parse_ibv_devinfo_full(real("ibv_devinfo", "ibv_devinfo_azure_udev_names_eth_and_ib.txt"))
    assert [d["hca_id"] for d in result["devices"]] == ["rdmaP23800p0s2", "ibP57247p0s2"]
    roce = result["devices"][0]
    assert (roce["fw_ver"], roce["vendor_part_id"], roce["board_id"], roce["phys_port_cnt"]) == (
        "14.25.8102", 4118, "MSF0010110035", 1)
    assert roce["transport"] == "InfiniBand" and roce["sys_image_guid"] == "0000:0000:0000:0000"
    port = roce["ports"][0]
    assert (port["port"], port["state"], port["state_num"]) == (1, "PORT_ACTIVE", 4)
    assert (port["max_mtu"], port["active_mtu"], port["active_mtu_enum"]) == (4096, 1024, 3)
    assert (port["link_layer"], port["port_lid"], port["port_lmc"]) == ("Ethernet", 0, 0)
    cut = result["devices"][1]
    assert (cut["fw_ver"], cut["vendor_part_id"], cut["hw_ver"]) == ("16.26.0206", 4120, "0x0")
    assert cut["ports"] == [] and cut["board_id"] is None
    assert result["errors"] == [] and result["warnings"] == []


def test_ibv_devinfo_verbose_qlogic_with_unknown_flags():
    result = parse_ibv_devinfo_full(real("ibv_devinfo", "ibv_devinfo_v_qedr_unknown_flags.txt"))
    assert len(result["devices"]) == 1
    qedr = result["devices"][0]
    assert (qedr["hca_id"], qedr["vendor_id"], qedr["vendor_part_id"], qedr["board_id"]) == (
        "qedr0", "0x1077", 32880, None)
    assert (qedr["max_qp"], qedr["max_qp_wr"], qedr["max_cqe"], qedr["max_mr"]) == (8568, 32767, 8388480, 131070)
    assert qedr["device_cap_flags"] == "0x00209080"
    assert qedr["device_cap_flags_list"] == [
        "CURR_QP_STATE_MOD", "RC_RNR_NAK_GEN", "MEM_MGT_EXTENSIONS", "Unknown flags: 0x8000"]
    assert qedr["max_sge"] == 4 and qedr["max_qp_init_rd_atom"] == 32
    assert result["errors"] == []


# --- rdma link, ibstat ---------------------------------------------------------------------------

def test_rdma_link_infiniband_port_from_polling_to_active():
    result = parse_rdma_link_full(real("rdma_link", "rdma_link_ib_down_polling_then_active.txt"))
    states = [(link["device"], link["port"], link["state"], link["physical_state"]) for link in result["links"]]
    assert states == [("mlx5_7", 1, "DOWN", "POLLING"), ("mlx5_7", 1, "DOWN", "LINK_UP"),
                      ("mlx5_7", 1, "ACTIVE", "LINK_UP")]
    last = result["links"][-1]
    assert (last["lid"], last["sm_lid"], last["lmc"], last["subnet_prefix"]) == (3403, 1, 0, "fe80:0000:0000:0000")
    assert last["netdev"] is None and result["errors"] == []


def test_rdma_link_show_lines_ending_in_a_space():
    result = parse_rdma_link_full(real("rdma_link", "rdma_link_show_trailing_space_p1p_netdevs.txt"))
    assert [(link["device"], link["state"], link["physical_state"], link["netdev"]) for link in result["links"]] == [
        ("mlx5_0", "ACTIVE", "LINK_UP", "p1p1"), ("mlx5_1", "ACTIVE", "LINK_UP", "p1p2")]
    assert result["errors"] == []


def test_ibstat_roce_cx7_at_200_and_a_disabled_cx6dx():
    result = parse_ibstat_full(real("ibstat", "ibstat_cx7_roce_rate200_cx6dx_disabled.txt"))
    assert [(ca["name"], ca["ca_type"]) for ca in result["cas"]] == [
        ("mlx5_0", "MT4129"), ("mlx5_1", "MT4129"), ("mlx5_10", "MT4125")]
    first = result["cas"][0]["ports"][0]
    assert (first["state"], first["phys_state"], first["rate"], first["link_layer"]) == (
        "Active", "LinkUp", 200, "Ethernet")
    assert result["cas"][0]["fw_version"] == "28.39.1002"
    disabled = result["cas"][2]["ports"][0]
    assert (disabled["state"], disabled["phys_state"], disabled["rate"]) == ("Down", "Disabled", None)
    assert result["errors"] == []


# --- NCCL transports named in NCCL_DEBUG=INFO channel lines ----------------------------------------

def test_gdrdma_channels_with_bus_id_ranks():
    result = parse_nccl_tests(real("nccl_tests", "nccl_info_channels_gdrdma_busid_send_receive.txt"))
    assert (result["transport"], result["transport_kind"], result["gdr"]) == ("IB", "rdma", True)
    assert result["channel_transports"] == ["NET/IB"]
    assert _codes(result) == ["no_table"]


def test_old_direct_shared_memory_channels_read_as_shm():
    # Before: channel_transports ['direct'].
    result = parse_nccl_tests(real("nccl_tests", "nccl_info_direct_shared_memory_old_row_error_2e-07.txt"))
    assert result["channel_transports"] == ["SHM"]
    assert result["transport"] is None and result["gdr"] is None
    assert len(result["rows"]) == 1
    row = result["rows"][0]
    assert (row["bytes"], row["count"], row["type"], row["redop"]) == (4194304, 1048576, "float", "sum")
    assert row["out_of_place"] == {"time_us": 707.5, "algbw_gbs": 5.93, "busbw_gbs": 8.89, "wrong": 2e-07}
    assert row["in_place"] == {"time_us": 704.0, "algbw_gbs": 5.96, "busbw_gbs": 8.94, "wrong": 2e-07}
    assert result["header"]["wrong_column"] == "error"
    assert result["errors"] == []


def test_socket_between_nodes_and_shm_inside():
    result = parse_nccl_tests(real("nccl_tests", "nccl_info_socket_and_shm_channels_two_hosts.txt"))
    assert (result["transport"], result["transport_kind"], result["gdr"]) == ("Socket", "tcp", False)
    assert result["channel_transports"] == ["NET/Socket", "SHM"]


@pytest.mark.parametrize("via, family", [
    ("via direct shared memory", "SHM"),
    ("via P2P/direct pointer", "P2P"),
    ("via P2P/IPC/read", "P2P"),
    ("via SHM/direct/direct", "SHM"),
    ("via CollNet/IB/0", "CollNet"),
])
def test_channel_transport_names_of_every_nccl_generation(via, family):
    line = "host1:100:200 [0] NCCL INFO Channel 00 : 0[18000] -> 1[3b000] %s\n" % via
    assert parse_nccl_tests(line)["channel_transports"] == [family]


# --- nccl-tests started as separate single-rank jobs -----------------------------------------------

def test_mpirun_of_separate_jobs_is_no_two_rank_run():
    # Before: one rank, one host, and no error: the second job's 'Rank 0' was dropped.
    result = parse_nccl_tests(real("nccl_tests", "all_reduce_perf_separate_jobs_two_rank0_headers.txt"))
    assert result["hosts"] == ["ip-172-31-20-228", "ip-172-31-22-230"]
    assert result["nranks"] == 1
    error = _error(result, "separate_jobs")
    assert error["hosts"] == ["ip-172-31-20-228", "ip-172-31-22-230"]
    assert "Rank 0" in error["message"] and "2 " in error["message"]
    assert _codes(result)[-1] == "no_table"
    assert result["ok"] is False


def _rank_lines(host, pid, count):
    return "".join("#  Rank %2d Group  0 Pid %6d on %10s device %2d [0x%02x] NVIDIA H800\n" % (n, pid, host, n, n)
                   for n in range(count))


_HEADER = ("# nThread 1 nGpus 8 minBytes 1073741824 maxBytes 8589934592 step: 2(factor) warmup iters: 5 iters: 20 "
           "agg iters: 1 validation: 1 graph: 0\n#\n# Using devices\n")
_TABLE = (
    "#       size         count      type   redop    root     time   algbw   busbw #wrong"
    "     time   algbw   busbw #wrong\n"
    "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)"
    "            (us)  (GB/s)  (GB/s)\n"
    "  1073741824     268435456     float     sum      -1   5547.1  193.57  338.75      0"
    "   5520.3  194.51  340.39      0\n")


def test_eight_gpu_jobs_on_two_hosts_each_print_ranks_0_to_7():
    text = _HEADER + _HEADER + _rank_lines("hw14", 798, 8) + _rank_lines("hw15", 511, 8) + _TABLE
    result = parse_nccl_tests(text)
    assert _error(result, "separate_jobs")["hosts"] == ["hw14", "hw15"]
    assert result["ok"] is False


def test_one_sixteen_rank_job_on_two_hosts_is_fine():
    ranks = _rank_lines("hw14", 798, 8) + "".join(
        "#  Rank %2d Group  0 Pid %6d on %10s device %2d [0x%02x] NVIDIA H800\n" % (n + 8, 511, "hw15", n, n)
        for n in range(8))
    result = parse_nccl_tests(_HEADER + ranks + _TABLE)
    assert result["nranks"] == 16 and result["hosts"] == ["hw14", "hw15"]
    assert "separate_jobs" not in _codes(result)


def test_two_runs_one_after_the_other_on_one_host_are_no_separate_jobs():
    text = _HEADER + _rank_lines("hw14", 798, 8) + _TABLE + _HEADER + _rank_lines("hw14", 912, 8) + _TABLE
    assert "separate_jobs" not in _codes(parse_nccl_tests(text))


# --- NET/IB completion errors: the work-completion status decides the advice -----------------------

def test_completion_status_12_is_retry_exceeded():
    result = parse_nccl_tests(real("nccl_tests", "nccl_warn_completion_status12_ib_plugin.txt"))
    error = _error(result, "ib_transport_error")
    assert error["count"] == 3 and error["hosts"] == ["kp-ddp-worker-0"]
    assert error["wc_status"] == 12
    assert "IBV_WC_RETRY_EXC_ERR" in error["hint"]


def test_completion_error_4_is_a_local_protection_error():
    # Before: no hint; the catalog's cause (a link problem) is the wrong lead for a GPUDirect registration error.
    result = parse_nccl_tests(real("nccl_tests", "nccl_warn_completion_error4_two_hosts.txt"))
    error = _error(result, "ib_transport_error")
    assert error["hosts"] == ["H100-2", "H100-1"] and error["count"] == 2
    assert error["wc_status"] == 4
    assert "IBV_WC_LOC_PROT_ERR" in error["hint"] and "GPUDirect" in error["hint"]


@pytest.mark.parametrize("message, status, name", [
    ("NET/IB : Got completion with error 12, opcode 1, len 0, vendor err 129", 12, "IBV_WC_RETRY_EXC_ERR"),
    ("NET/IB : Got completion from peer 10.1.32.3<54891> with error 5, opcode 0, len 0, vendor err 249", 5,
     "IBV_WC_WR_FLUSH_ERR"),
    ("NET/IB : Got completion from peer 10.0.0.2<1234> with status=13 opcode=0 len=0 vendor err 136 (Recv)", 13,
     "IBV_WC_RNR_RETRY_EXC_ERR"),
    ("NET/IB : Got completion from peer 10.0.0.2<1234> with status=10 opcode=0 len=0 vendor err 136 (Send)", 10,
     "IBV_WC_REM_ACCESS_ERR"),
])
def test_completion_status_in_either_message_form(message, status, name):
    result = parse_nccl_tests("node1:1:2 [0] transport/net_ib.cc:1 NCCL WARN %s\n" % message)
    error = _error(result, "ib_transport_error")
    assert error["wc_status"] == status and name in error["hint"]


def test_completion_error_without_a_status_has_none():
    result = parse_nccl_tests("node1:1:2 [0] NCCL WARN NET/IB : retry counter exceeded on mlx5_0\n")
    error = _error(result, "ib_transport_error")
    assert error["wc_status"] is None and error["hint"] is None


# --- mpirun failures before nccl-tests starts -----------------------------------------------------

def test_not_enough_slots_for_sixteen_ranks():
    result = parse_nccl_tests(real("nccl_tests", "mpirun_not_enough_slots_16_all_reduce_perf.txt"))
    assert _codes(result) == ["mpi_launch_failed", "no_table"]
    error = _error(result, "mpi_launch_failed")
    assert "16 slots" in error["message"] and "slots=" in error["hint"]
    assert result["ok"] is False


def test_ssh_cannot_resolve_the_worker_then_orte_gives_up():
    result = parse_nccl_tests(real("nccl_tests", "mpirun_ssh_unresolvable_orte_daemons.txt"))
    assert _codes(result) == ["hostname_unresolvable", "mpi_launch_failed", "no_table"]
    assert _error(result, "hostname_unresolvable")["hosts"] == ["nccl-tests-worker-0.nccl-tests.default.svc"]
    assert _error(result, "mpi_launch_failed")["message"] == "ORTE was unable to reliably start one or more daemons."
