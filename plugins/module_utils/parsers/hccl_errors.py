# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The error catalog of parse_hccl_test: HCCL's return codes (HcclResult), the errors of ACL, CANN and hccl_test
itself, and the launcher errors it shares with nccl-tests (mpi_errors)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.mpi_errors import MPI_ERRORS
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.text import to_int

# HcclResult (hccl_types.h): value -> (name, cause, fix)
HCCL_RESULTS = {
    1: ("HCCL_E_PARA", "HCCL rejected a parameter.",
        "Check the test options (-b/-e/-d/-o/-r/-p) and that every rank runs the same binary and options."),
    2: ("HCCL_E_PTR", "HCCL got an empty pointer.",
        "Use the same CANN version on every node; rerun and read the plog under ~/ascend/log/."),
    3: ("HCCL_E_MEMORY", "HCCL could not allocate or use device memory.",
        "Lower -e (max size) or HCCL_BUFFSIZE and stop other processes on the NPUs (npu-smi info)."),
    4: ("HCCL_E_INTERNAL", "HCCL hit an internal error.",
        "Use the same CANN/driver version on every node; read the plog under ~/ascend/log/ of the failing rank."),
    5: ("HCCL_E_NOT_SUPPORT", "The requested feature is not supported on this NPU/CANN version.",
        "Use options supported by the product (data type, operator, -p) or upgrade CANN."),
    6: ("HCCL_E_NOT_FOUND", "HCCL did not find a resource it needs (device, rank, NIC).",
        "Check the NPUs (npu-smi info), HCCL_TEST_USE_DEVS/-p, and the NPU NIC configuration (hccn_tool)."),
    7: ("HCCL_E_UNAVAIL", "An HCCL resource is unavailable, typically held by leftover hccl_test processes on a peer node.",
        "Kill leftover test processes on all nodes (mpirun -hostfile <hostfile> -n <N> pkill -9 -f hccl_test) "
        "and rerun."),
    8: ("HCCL_E_SYSCALL", "A system call made by HCCL failed.",
        "Check the HCCL_IF_IP/HCCL_SOCKET_IFNAME interface, ulimits and permissions; read the plog."),
    9: ("HCCL_E_TIMEOUT", "An HCCL operation timed out: a peer did not answer (link down, hung rank, or "
        "ranks started too far apart).",
        "Check NPU links (hccn_tool -i <dev> -link -g), that every rank started, and raise HCCL_CONNECT_TIMEOUT "
        "/ HCCL_EXEC_TIMEOUT only if start-up is slow."),
    10: ("HCCL_E_OPEN_FILE_FAILURE", "HCCL could not open a file (rank table, config or log).",
         "Check the file paths and permissions HCCL uses (rank table, log directory)."),
    11: ("HCCL_E_TCP_CONNECT", "A TCP connection between ranks failed.",
         "Check that HCCL_IF_IP/HCCL_SOCKET_IFNAME name a reachable interface on every node and open the ports "
         "between nodes."),
    12: ("HCCL_E_ROCE_CONNECT", "A RoCE connection between NPUs failed.",
         "Check NPU NIC link and addresses (hccn_tool -i <dev> -link -g / -ip -g), the switch ports, and "
         "that the NPU IPs of all nodes can reach each other (hccn_tool -ping)."),
    13: ("HCCL_E_TCP_TRANSFER", "A TCP transfer between ranks failed.",
         "Check the network between the nodes and that no other job uses the same ports."),
    14: ("HCCL_E_ROCE_TRANSFER", "A RoCE transfer between NPUs failed (link errors, PFC/lossless problems).",
         "Check the NPU NIC error counters and link state (hccn_tool -i <dev> -stat -g / -link -g) and the "
         "switch PFC/ECN configuration."),
    15: ("HCCL_E_RUNTIME", "An Ascend runtime call failed.",
         "Check the NPU health (npu-smi info) and the driver/firmware/CANN version match; read the plog."),
    16: ("HCCL_E_DRV", "An NPU driver call failed.",
         "Check the driver and firmware (npu-smi info, dmesg) and that the container sees /dev/davinci*."),
    17: ("HCCL_E_PROFILING", "A profiling call failed.",
         "Unset HCCL_TEST_PROFILING or fix its output path."),
    18: ("HCCL_E_CCE", "A CCE (compute) call failed.",
         "Check the NPU health and the CANN installation."),
    19: ("HCCL_E_NETWORK", "A network call failed (NPU NIC or host network).",
         "Check the NPU NIC configuration and links (hccn_tool) and the host network."),
    20: ("HCCL_E_AGAIN", "HCCL asked to try again.", "Rerun the test."),
    21: ("HCCL_E_REMOTE", "An error completion (CQE) arrived from a remote NPU.",
         "Check the link and the remote node named in the plog; rerun the pair."),
    22: ("HCCL_E_SUSPENDING", "The HCCL communicator was suspended.", "Rerun the test."),
    23: ("HCCL_E_OPRETRY_FAIL", "HCCL's operation retry failed.",
         "Check link stability of the nodes involved (link flaps)."),
    24: ("HCCL_E_OOM", "The NPU ran out of memory.", "Lower -e (max size) or HCCL_BUFFSIZE; free the NPUs."),
}

HCCL_TEST_ERRORS = dict(MPI_ERRORS)
for _value, (_name, _cause, _fix) in HCCL_RESULTS.items():
    HCCL_TEST_ERRORS[_name.lower()] = (_cause, _fix)
HCCL_TEST_ERRORS.update({
    "hccl_error": (
        "An HCCL call failed with a return code this parser does not know.",
        "Read the plog under ~/ascend/log/ of the failing rank for the HCCL error.",
    ),
    "acl_error": (
        "An Ascend (ACL) runtime call failed: device, memory or stream setup.",
        "Check the NPUs (npu-smi info), that the container sees /dev/davinci*, and the CANN/driver versions; "
        "read the plog under ~/ascend/log/.",
    ),
    "hccl_root_info_failed": (
        "The root rank could not create or share the HCCL root info, so no communicator was built.",
        "Set HCCL_IF_IP or HCCL_SOCKET_IFNAME to an interface of the root node that all nodes reach, "
        "and free its port (leftover test processes).",
    ),
    "hccl_op_failed": (
        "The collective operation failed during the test.",
        "Read the plog under /root/ascend/log/ of the failing rank; check NPU links with hccn_tool.",
    ),
    "hccl_socket_timeout": (
        "HCCL ranks timed out while connecting sockets (EI0006): a node did not start or is unreachable.",
        "Check that every node started the test, the HCCL_IF_IP/HCCL_SOCKET_IFNAME network, and raise "
        "HCCL_CONNECT_TIMEOUT when start-up is slow.",
    ),
    "hccl_notify_timeout": (
        "A collective waited too long for a peer (EI0002 notify wait timeout): a hung rank or a broken link.",
        "Check NPU links of the nodes (hccn_tool -link -g) and that all ranks run; raise HCCL_EXEC_TIMEOUT only "
        "for very large sizes.",
    ),
    "hccl_port_in_use": (
        "HCCL could not listen on its TCP port on this node's address: another process holds the port (often a "
        "leftover test or training process), or the address is not this node's.",
        "Kill leftover processes on the node (ss -ltnp | grep <port>; pkill -9 -f hccl_test), or move HCCL's ports "
        "with HCCL_IF_BASE_PORT; check that HCCL_IF_IP names an address of this node.",
    ),
    "hccl_rank_exception": (
        "HCCL's fault detection named the rank where the failure began (Cluster Exception Location): its process "
        "exited or hung, or its network failed (ExceptionType Heartbeat Lost, Stuck or Error cqe); the timeouts "
        "of the other ranks follow from it.",
        "Look at the node and rank named (IP/ID) first: its own output and plog under ~/ascend/log/, dmesg and "
        "npu-smi info there; for Error cqe check its NPU NIC links and counters (hccn_tool -i <dev> -link -g, "
        "-stat -g).",
    ),
    "hccl_cann_error": (
        "CANN reported an error code (E..../EI....) during the test.",
        "Look the code up in the CANN error code reference and read the plog under ~/ascend/log/.",
    ),
    "npu_not_found": (
        "The test found no NPU (device count 0) or fewer NPUs than requested.",
        "Check the driver (npu-smi info), /dev/davinci* in the container, and -p / HCCL_TEST_USE_DEVS.",
    ),
    "npu_out_of_memory": (
        "The NPU has less free memory than the test needs.",
        "Lower -e (max size) or free the NPUs (other processes, npu-smi info).",
    ),
    "invalid_arguments": (
        "hccl_test rejected its command line.",
        "Fix the options (sizes like 8K, 64M; -b not larger than -e; -p not above the NPUs per node).",
    ),
    "check_failed": (
        "The collective returned wrong data on at least one rank (check_result failed).",
        "Rerun to confirm, then bisect the nodes; check NPU health and links and remove the failing NPU/node.",
    ),
    "no_table": (
        "The output holds no hccl_test result rows: the test did not run or stopped before measuring.",
        "Read the other errors of this result, or the raw output, to see why the test did not start.",
    ),
})


def result_code(value):
    """HcclResult value -> error code (hccl_e_unavail for 7, ...)."""
    value = to_int(value)
    if value in HCCL_RESULTS:
        return HCCL_RESULTS[value][0].lower()
    return "hccl_error"
