# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The nccl-tests error catalog (code -> cause, fix) and the rules that give NCCL WARN lines,
'Test NCCL failure' results and ncclGetLastError() texts their code and a specific hint."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import re

from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.mpi_errors import MPI_ERRORS
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.text import to_text
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers import wc_status as _wc

NCCL_TESTS_ERRORS = dict(MPI_ERRORS)
NCCL_TESTS_ERRORS.update({
    "nccl_cuda_failure": (
        "A CUDA call failed inside NCCL or the test (driver/runtime mismatch, GPU not usable, out of memory, "
        "or peer-to-peer access not supported between the GPUs).",
        "Check nvidia-smi and dmesg (Xid) on the host, that the driver supports the CUDA version of the test, "
        "and GPU memory; for P2P problems try NCCL_P2P_DISABLE=1 or fix the PCIe ACS/IOMMU settings.",
    ),
    "nccl_system_error": (
        "A system call or external library used by NCCL failed (socket, shared memory, verbs, a remote peer exited).",
        "Run with NCCL_DEBUG=INFO and fix the failing call named in the NCCL WARN lines "
        "(network interface, /dev/shm size, RDMA device permissions, memlock limit).",
    ),
    "nccl_internal_error": (
        "NCCL hit an internal check failure.",
        "Use the same NCCL version on every node; if it persists, upgrade NCCL and report the NCCL WARN lines.",
    ),
    "nccl_invalid_argument": (
        "NCCL rejected an argument (buffer, count, datatype, rank or device).",
        "Run with NCCL_DEBUG=WARN to see which argument; check that every rank runs the same test binary "
        "and arguments, and that -g/-t match the GPUs of each process.",
    ),
    "nccl_invalid_usage": (
        "NCCL was used in a way it does not allow (e.g. two ranks on one GPU, mismatched calls between ranks).",
        "Make each rank use a distinct GPU (ranks per node x -g x -t must not exceed the GPUs) and run the "
        "same binary and arguments on every rank.",
    ),
    "nccl_rank_mismatch": (
        "The ranks disagree about what they exchange (a collective or message of another size or kind than the "
        "peer expects): the nodes run different nccl-tests binaries, arguments or NCCL versions, or NCCL settings "
        "differ between them (NCCL_PROTO, NCCL_ALGO, NCCL_IB_DISABLE or NCCL_NET set on some nodes only, so that "
        "one node uses NET/IB and another NET/Socket); rarely, data corrupted on the way (forced PCIe relaxed "
        "ordering on a NIC).",
        "Run the same binary, arguments, NCCL version and NCCL_* environment on every rank (compare each host's "
        "'NCCL version', '... set by environment' and 'Using network' lines; pass settings to all nodes with "
        "mpirun -x); if they match, check that the NICs' PCI_WR_ORDERING (mlxconfig) is not forced relaxed.",
    ),
    "nccl_remote_error": (
        "A remote rank exited or the network between ranks failed during the test.",
        "Find the first failing node (its own errors, dmesg, link flaps on its NICs) and fix or exclude it.",
    ),
    "nccl_timeout": (
        "A collective did not finish in time: a hung rank, a dead link, or a network stuck without progress.",
        "Check the links and NICs of the nodes involved (ibstat, error counters), exclude the node that hangs, "
        "and raise -T only if the size is simply very large.",
    ),
    "nccl_error": (
        "NCCL returned an error.",
        "Run with NCCL_DEBUG=INFO and read the NCCL WARN lines that precede the failure.",
    ),
    "nccl_bootstrap_failed": (
        "NCCL ranks could not connect to each other over TCP (bootstrap/socket): wrong interface, "
        "firewall, or unreachable address.",
        "Set NCCL_SOCKET_IFNAME to an interface every node can reach (the one mpirun uses), open TCP between "
        "nodes, and use the same NCCL version on every node.",
    ),
    "nccl_net_unavailable": (
        "NCCL could not start any network (net plugin) for traffic between nodes: NCCL_NET names one that "
        "cannot run on this node (NCCL_NET=IB without a usable RDMA device), or its plugin library is missing.",
        "Check that the RDMA devices are visible where the test runs (ibv_devinfo; /dev/infiniband and the RDMA "
        "device plugin's resource in pods) and that NCCL_NET / NCCL_IB_HCA name what is there; unset NCCL_NET "
        "to let NCCL fall back to sockets only where TCP is acceptable.",
    ),
    "ib_setup_failed": (
        "NCCL could not set up an RDMA (InfiniBand/RoCE) resource: device open, memory registration, "
        "queue pair creation or GID selection failed.",
        "Check the HCA (ibstat, ibv_devinfo), the memlock limit (ulimit -l unlimited, IPC_LOCK in pods), "
        "/dev/infiniband in containers, NCCL_IB_HCA and NCCL_IB_GID_INDEX (RoCE v2 GID).",
    ),
    "ib_transport_error": (
        "An RDMA transfer completed with an error (e.g. retry counter exceeded): a link, cable or switch "
        "problem, or a peer that went away.",
        "Check port error counters and link flaps on both nodes (ibstat, perfquery, ethtool -S), "
        "the lossless/PFC configuration for RoCE, and rerun the pair with ib_write_bw.",
    ),
    "shm_exhausted": (
        "NCCL could not create its shared-memory segment: /dev/shm is too small or full.",
        "Enlarge /dev/shm (docker --shm-size=1g or more; a Memory emptyDir at /dev/shm in Kubernetes) "
        "or set NCCL_SHM_DISABLE=1.",
    ),
    "separate_jobs": (
        "mpirun started one independent nccl-tests job per process (each printed its own header and Rank 0): "
        "the binary was built without MPI support (MPI=1) or runs against another MPI than the mpirun that "
        "started it, so no traffic crossed the nodes and the bandwidths are those of single nodes.",
        "Rebuild nccl-tests with make MPI=1 MPI_HOME=<the MPI of this mpirun> (check ldd <binary> | grep libmpi "
        "on every node), or run the *_perf_mpi binaries; then rerun.",
    ),
    "test_failure": (
        "The nccl-tests binary stopped with a test failure.",
        "Read the first error printed before the 'Test failure' trace lines.",
    ),
    "wrong_results": (
        "The collective returned wrong data (nonzero #wrong / out-of-bounds values): silent data corruption "
        "on a GPU, NVLink, PCIe path or NIC.",
        "Rerun to confirm, then bisect the nodes; check GPU health (nvidia-smi -q, dcgmi diag, Xid in dmesg) "
        "and remove the failing GPU/node from service.",
    ),
    "bandwidth_below_min": (
        "The average bus bandwidth is below the NCCL_TESTS_MIN_BW limit the test was given.",
        "Find the slow links or nodes (per-pair RDMA tests, bisection) and check that NCCL used the expected transport.",
    ),
    "gpu_count_mismatch": (
        "The test asked for more GPUs than the node shows to the process.",
        "Lower -g/-t or the ranks per node, or make all GPUs visible (CUDA_VISIBLE_DEVICES, the pod's GPU request).",
    ),
    "invalid_arguments": (
        "The test binary rejected its command line.",
        "Fix the options (sizes like 8, 128M, 8G; -b not larger than -e); see the binary's -h output.",
    ),
    "json_invalid": (
        "The nccl-tests JSON output is not valid JSON (the run was probably cut off while writing it).",
        "Rerun the test; read the text output of the run for the error.",
    ),
    "no_table": (
        "The output holds no nccl-tests result rows: the test did not run or stopped before measuring.",
        "Read the other errors of this result, or the raw output, to see why the test did not start.",
    ),
})

BITWISE_HINT = "Bitwise repeatability check failed: results differ between identical runs."

# Classification of NCCL WARN messages (and last-error strings). First match wins. Each regex is
# only tried when the lowercased message holds one of its needles (substrings every match holds).
_WARN_RULES = [
    # two ranks on one GPU: "Duplicate GPU detected : rank 2 and rank 0 both on CUDA device 1000"
    ("nccl_invalid_usage", ("duplicate gpu",), re.compile(r"Duplicate GPU detected", re.I)),
    # a CUDA or HIP runtime call that failed; RCCL names the HIP call ("hipIpcGetMemHandle failed : invalid
    # argument", "HIP failure 'invalid device pointer'"): the GPU runtime failed, not NCCL's argument check
    ("nccl_cuda_failure", ("cuda", "hip"),
     re.compile(r"Cuda failure|CUDA (?:error|failure)|cudaError|unhandled cuda error|HIP failure|hipError"
                r"|\b(?:cuda|hip)[A-Z]\w* failed\b", re.I)),
    # ranks that disagree: NET/IB's "collective mismatch error", "Message truncated : received 256 bytes instead of
    # 4" (bootstrap, NET/Socket), NCCL 2.4's "Mismatched collective detected", a peer's socket of another type
    # ("socketFinalizeAccept: wrong type 4 != 3": one node on NET/IB, the other on NET/Socket)
    ("nccl_rank_mismatch", ("mismatch", "message truncated", "wrong type"),
     re.compile(r"collective mismatch|Mismatched collective|Message truncated|wrong type \d+ != \d+", re.I)),
    ("ib_transport_error", ("got completion", "with error", "ibv_wc_", "retry counter exceeded", "remote access error",
                            "wc status", "async event"),
     re.compile(r"Got completion (?:from peer|with error)|with error \d+, opcode|IBV_WC_"
                r"|retry counter exceeded|remote access error|wc status|async event", re.I)),
    ("ib_setup_failed", ("ibv_", "net/ib", "unable to ", "gid index", "mlx5"),
     re.compile(r"\bibv_\w+|NET/IB\w*\s*:.*(?:fail|unable|error|cannot|could not)"
                r"|Unable to (?:open|query) (?:device|port)|GID index|mlx5\w*.*fail", re.I)),
    ("shm_exhausted", ("/dev/shm", "posix_fallocate", "shm_open", "shared memory segment", "no space left on device"),
     re.compile(r"/dev/shm|posix_fallocate|shm_open|shared memory segment|No space left on device", re.I)),
    ("nccl_net_unavailable", ("net plugin",),
     re.compile(r"Failed to initiali[sz]e any NET plugin|No NET plugin|Could not (?:find|load) any NET plugin", re.I)),
    ("nccl_bootstrap_failed", ("bootstrap", "socket", "connect to ", "connection ", "net"),
     re.compile(r"bootstrap|socket\w*\s*:|Connect to \S+ failed|Connection (?:refused|reset)"
                r"|no socket interface|\bNet\s*:\s|Socket creation failed", re.I)),
    ("nccl_timeout", ("time", "watchdog"), re.compile(r"time ?out|timed out|watchdog", re.I)),
    ("nccl_remote_error", ("remote", "network error"),
     re.compile(r"remote process exited|remote error|network error", re.I)),
    ("nccl_system_error", ("system error",), re.compile(r"unhandled system error|system error", re.I)),
    ("nccl_internal_error", ("internal error",), re.compile(r"internal error", re.I)),
    ("nccl_invalid_usage", ("invalid usage",), re.compile(r"invalid usage", re.I)),
    ("nccl_invalid_argument", ("invalid argument",), re.compile(r"invalid argument", re.I)),
]

# 'Test NCCL failure' result strings (ncclGetErrorString) -> code.
_RESULT_RULES = [
    ("nccl_cuda_failure", re.compile(r"cuda", re.I)),
    ("nccl_system_error", re.compile(r"system error", re.I)),
    ("nccl_internal_error", re.compile(r"internal error", re.I)),
    ("nccl_invalid_argument", re.compile(r"invalid argument", re.I)),
    ("nccl_invalid_usage", re.compile(r"invalid usage", re.I)),
    ("nccl_remote_error", re.compile(r"remote", re.I)),
    ("nccl_timeout", re.compile(r"time ?out|timed out", re.I)),
]

_CUDA_HINTS = [
    (re.compile(r"out of memory|OutOfMemory", re.I),
     "GPU memory is exhausted: lower -e (max size) or stop other processes on the GPU."),
    (re.compile(r"hipErrorInvalidDevice|hipErrorNoDevice|no ROCm-capable device", re.I),
     "The process sees no usable AMD GPU: a container needs --device=/dev/kfd --device=/dev/dri and the "
     "video/render groups (the pod's amd.com/gpu request); check HIP_VISIBLE_DEVICES / ROCR_VISIBLE_DEVICES "
     "and rocm-smi."),
    (re.compile(r"no CUDA-capable device|invalid device ordinal|no device", re.I),
     "The process sees no (or fewer) GPUs: check CUDA_VISIBLE_DEVICES and the pod's GPU request."),
    (re.compile(r"driver version is insufficient|unsupported display driver|forward compatibility", re.I),
     "The NVIDIA driver is older than the CUDA runtime of the test: upgrade the driver or use a matching image."),
    (re.compile(r"peer access|peer mapping|invalid argument|Ipc\w*MemHandle", re.I),
     "Peer-to-peer between these GPUs failed: try NCCL_P2P_DISABLE=1 to confirm, then check PCIe ACS/IOMMU "
     "and the GPU topology (nvidia-smi topo -m)."),
    (re.compile(r"ECC|uncorrectable|Xid", re.I),
     "A GPU hardware error: check dmesg for Xid and drain the GPU."),
]

_USAGE_HINTS = [
    (re.compile(r"Duplicate GPU detected", re.I),
     "Two ranks run on the same GPU: more ranks on a node than it has GPUs, or every rank given the same device "
     "(CUDA_VISIBLE_DEVICES naming one GPU for all); run at most one rank per GPU: mpirun -N <GPUs per node> "
     "with -g 1, or one rank per node with -g <GPUs per node>."),
]

_IB_HINTS = [
    (re.compile(r"Cannot allocate memory|reg_mr|memlock", re.I),
     "Memory registration failed: set the memlock limit to unlimited (ulimit -l; IPC_LOCK and a memlock "
     "rlimit in pods)."),
    (re.compile(r"GID", re.I),
     "Select the RoCE v2 GID of the port's IPv4 address with NCCL_IB_GID_INDEX."),
]

# ibv_modify_qp while NCCL connects a QP: "Call to ibv_modify_qp failed with 110 Connection timed out, on dev
# mlx5_0:1, curr state INIT, next state RTR, local GID index 3, local GID ::ffff:10.0.0.1, remote GID ::ffff:..."
# (NCCL 2.2x), "... failed with error Network is unreachable" (older). The errno tells more than the GID does.
_ZERO_GID = re.compile(r"\b(local|remote) GID\s+::(?=[\s,;]|$)")
_ZERO_GID_HINT = ("The %s GID is all-zero: the GID index NCCL used there (NCCL_IB_GID_INDEX, or the one it chose) "
                  "holds no address; give that RDMA device's netdev its IP, or select there the RoCE v2 GID index "
                  "that carries it (show_gids).")
_MODIFY_QP_ERRNO_HINTS = (
    (("connection timed out", "network is unreachable", "failed with 110 ", "failed with 101 "),
     "The two NICs cannot reach each other: moving the QP to RTR resolves the peer's GID to an address on this "
     "NIC's network and found no route or neighbour. On a rail-optimised fabric only NICs of the same rail "
     "connect (NCCL_CROSS_NIC=0 keeps each ring on one rail); otherwise the RoCE subnets have no route between "
     "them: ping the peer's RDMA netdev IP from this host's RDMA netdev and check ip route / ip neigh there."),
    (("no data available", "failed with 61 "),
     "The GID index names no entry (ENODATA): the port's GID table changed (an address went away or the "
     "interface bounced) after the index was chosen; unset NCCL_IB_GID_INDEX (NCCL 2.21+ chooses one) or set "
     "it again from show_gids on every node."),
)


def _modify_qp_hint(message):
    """A hint for a failed ibv_modify_qp from its all-zero GID or its errno, or None."""
    if "ibv_modify_qp" not in message:
        return None
    zero = _ZERO_GID.search(message)
    if zero:
        return _ZERO_GID_HINT % ("peer's (remote)" if zero.group(1) == "remote" else "local")
    low = message.lower()
    for needles, hint in _MODIFY_QP_ERRNO_HINTS:
        if any(needle in low for needle in needles):
            return hint
    return None


# The ibv_wc_status (infiniband/verbs.h) of a failed RDMA transfer, as NCCL prints it: "Got completion with
# error 4, opcode ..." (older) or "Got completion from peer <addr> with status=12 opcode=..." (newer).
_WC_STATUS = re.compile(r"\bwith (?:error |status=)(\d{1,3})\b")
# what NCCL itself offers to confirm a status
_NCCL_ALSO = {4: "; NCCL_NET_GDR_LEVEL=LOC confirms it when the error goes away"}


def wc_status(message):
    """The work-completion status number of a NET/IB completion error, or None."""
    match = _WC_STATUS.search(message)
    return int(match.group(1)) if match else None


def _completion_hint(message):
    status = wc_status(message)
    return _wc.explain(status, also=_NCCL_ALSO.get(status))


def add_warn_error(errors, code, message, host=None):
    """Add an error of a WARN message; a completion error also keeps its work-completion status."""
    entry = errors.add(code, message, host=host, hint=hint_for(code, message))
    if code == "ib_transport_error" and entry.get("wc_status") is None:
        entry["wc_status"] = wc_status(message)
    return entry


def classify_warn(message):
    """The code of an NCCL WARN message (or a last-error text), or None."""
    low = message.lower()
    for code, needles, regex in _WARN_RULES:
        for needle in needles:
            if needle in low:
                if regex.search(message):
                    return code
                break
    return None


def result_code(result_text):
    """The code of a 'Test NCCL failure' result string (ncclGetErrorString); nccl_error if none fits."""
    for code, regex in _RESULT_RULES:
        if regex.search(result_text):
            return code
    return "nccl_error"


_HINT_TABLES = {"nccl_cuda_failure": _CUDA_HINTS, "ib_setup_failed": _IB_HINTS, "nccl_invalid_usage": _USAGE_HINTS}


def hint_for(code, message):
    """A fix more specific than the catalog's, when the message tells it; else None."""
    if code == "ib_transport_error":
        return _completion_hint(message)
    hint = _modify_qp_hint(message) if code == "ib_setup_failed" else None
    if hint:
        return hint
    table = _HINT_TABLES.get(code, ())
    for regex, hint in table:
        if regex.search(message):
            return hint
    return None


def add_last_error(message, errors, warnings, host=None):
    """ncclGetLastError() text: an error when it names a known failure, else a warning."""
    message = to_text(message).strip()
    if not message:
        return
    code = classify_warn(message)
    if code:
        add_warn_error(errors, code, message, host=host)
    else:
        warnings.add("NCCL last error: %s" % message)
