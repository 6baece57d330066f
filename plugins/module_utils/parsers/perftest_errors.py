# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""perftest's error catalog and how one line of its output is classified (error code, warning).

The exact message strings come from perftest's sources (perftest_parameters.c,
perftest_resources.c, perftest_communication.c, get_clock.c, cuda_memory.c,
rocm_memory.c) and the Debian perftest 4.5 binaries.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import re

from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.text import found_after

# --------------------------------------------------------------------------
# Error catalog: code -> (likely cause, fix).  One line each; docs build the
# troubleshooting table from it.
# --------------------------------------------------------------------------
PERFTEST_ERRORS = {
    "no_device": (
        "No RDMA device is visible: the RDMA driver (mlx5_ib, irdma, bnxt_re, ionic, ...) is not loaded, "
        "the container/pod was not given the device (/dev/infiniband, RDMA device-plugin resource), or the "
        "rdma-core/libibverbs provider in the image is missing or too old for the kernel",
        "Check `ibv_devices` / `rdma link` on the host and load the driver; in Kubernetes request the RDMA "
        "resource (e.g. rdma/rdma_shared_device_a) so /dev/infiniband is mounted; install an rdma-core that "
        "matches the kernel in the image",
    ),
    "device_not_found": (
        "The device named with -d does not exist on this host (device names differ between hosts and "
        "between a host and its containers)",
        "List the devices with `ibv_devices` or `rdma link` on that host and pass the right name with -d "
        "(or leave -d out to use the first device)",
    ),
    "port_down": (
        "The RDMA port is not ACTIVE (Down/Init/Armed): cable or link down, switch port disabled, on "
        "InfiniBand no subnet manager (the port stays in Init), or an SR-IOV VF (the RDMA device of a pod) whose "
        "link state is disabled or, on InfiniBand, that has no GUID or no subnet manager with virtualization",
        "Check `ibstat` / `ibv_devinfo` and the link; fix the cable or switch port; on InfiniBand run a "
        "subnet manager (opensm) on the fabric; select the right port with -i; for a VF set its link state to "
        "auto (ip link set <PF netdev> vf <N> state auto) and, on InfiniBand, give it GUIDs and run opensm with "
        "virt_enabled",
    ),
    "link_layer_failed": (
        "perftest could not read or set the port's link layer: the port is not usable, -i names the wrong "
        "port, or --force-link does not match the port",
        "Check the port with `ibv_devinfo -d DEV -i PORT`; use the correct -i and drop or correct --force-link",
    ),
    "device_open_failed": (
        "The device exists but could not be opened: driver in a bad state, /dev/infiniband/uverbs* not "
        "accessible (container without the device or permissions), or the port problem reported with it",
        "Check that /dev/infiniband/uverbs* exists and is accessible where the test runs; give the pod the "
        "RDMA device resource; reload the driver if `ibv_devinfo` fails too",
    ),
    "gpu_init_failed": (
        "GPU memory for the test could not be set up: CUDA/ROCm not initialised, no GPU visible to the "
        "process, wrong GPU id, DMA-BUF unsupported, or this perftest was built without GPU support",
        "Run nvidia-smi / rocm-smi in the same container, check the id given to --use_cuda / --use_rocm, "
        "and use a perftest built with CUDA/ROCm support",
    ),
    "hugepages_failed": (
        "--use_hugepages was given but no free huge pages are available",
        "Reserve huge pages (sysctl vm.nr_hugepages=N, or a hugepages-2Mi resource for pods) or drop "
        "--use_hugepages",
    ),
    "mr_alloc_failed": (
        "Memory registration failed: memlock limit (ulimit -l) too low, or pod memory limit / missing "
        "IPC_LOCK; with GPU buffers, GPUDirect RDMA (nvidia-peermem or DMA-BUF) is not available",
        "set memlock unlimited (/etc/security/limits.conf, systemd LimitMEMLOCK=infinity), give the pod "
        "IPC_LOCK and no memory limit; for GPU buffers load nvidia-peermem or use --use_cuda_dmabuf",
    ),
    "resources_failed": (
        "Verbs resources (PD/CQ/QP/SRQ) could not be created: device limits reached, -q/-t/-r/--inline too "
        "large for the device, many processes sharing the device, or the memlock limit",
        "Lower -q/-t/-r/--inline, stop stale perftest processes, check `ulimit -l` and the device limits "
        "(`ibv_devinfo -v`: max_qp, max_cqe, max_qp_wr)",
    ),
    "qp_connect_failed": (
        "The QPs could not be moved to INIT/RTR/RTS: wrong or missing GID index on RoCE, MTU above what the "
        "path supports, peer LID/GID unreachable, or different perftest options on the two sides",
        "Use identical options on both sides; on RoCE pass with -x the RoCE v2 GID index that carries the "
        "interface IP (show_gids); check -m against both ports' active MTU",
    ),
    "gid_invalid": (
        "The local or peer GID is not usable: the GID index (-x) does not exist or has no address, or the "
        "two sides use different GID types (RoCE v1 vs v2, IPv4 vs IPv6)",
        "Pick a RoCE v2 GID index with an IPv4 address on both hosts (show_gids or "
        "/sys/class/infiniband/DEV/ports/PORT/gid_attrs/types) and pass it with -x; use one IP version on "
        "both sides",
    ),
    "mtu_invalid": (
        "The MTU requested with -m is not valid or not supported by the port",
        "Omit -m to use the port's active MTU, or choose 256/512/1024/2048/4096 supported by both ports",
    ),
    "listen_failed": (
        "The server could not listen: its TCP port (default 18515, -p) is already in use, often by a stale "
        "perftest server from an earlier run, or with -R the address is not on an RDMA interface",
        "Stop stale ib_*_bw / ib_*_lat processes (pgrep -a ib_), use a free port with -p, and with -R bind "
        "to the IP of the RDMA netdev",
    ),
    "connect_failed": (
        "The client could not connect to the server: server not (yet) listening, wrong address, firewall "
        "blocking the TCP port (default 18515), or with rdma_cm (-R) the address is not reachable over the "
        "RDMA interface (address/route resolution errors)",
        "Start the server first and let the client retry; check the address and `nc -zv SERVER 18515`; "
        "open the port in firewalls / NetworkPolicies; with -R use the IP of the server's RDMA netdev and "
        "check routing/ARP on it",
    ),
    "negotiation_failed": (
        "The two sides disagree on the test: perftest 26.x and later compare their options before the test and "
        "stop when one differs (the '<option> mismatch: local=..., remote=...' line names it: message size, "
        "iterations or duration, QPs, test, connection type, rdma_cm ...), or one side could not take part "
        "(it could not query its device)",
        "Start server and client with identical options and the same perftest version; the mismatch line names "
        "the option that differs",
    ),
    "device_query_failed": (
        "perftest could not query the device's mlx5 capabilities (mlx5dv_query_device): an NVIDIA/Mellanox device "
        "that is not driven by mlx5 (a ConnectX-3 on mlx4) under a perftest that assumes mlx5 (26.x, perftest "
        "issue #401), or an rdma-core mlx5 provider that does not match the kernel driver",
        "On a ConnectX-3 (mlx4) use a perftest from before 26.x or one with the fix of perftest issue #401; "
        "otherwise install an rdma-core (libmlx5) that matches the kernel driver",
    ),
    "exchange_failed": (
        "The side channel (TCP or rdma_cm) broke while exchanging QP data or results: the peer exited or "
        "failed on its own, options or perftest versions differ between the sides, or a stale server answered",
        "Read the peer's output for its own error; run the same perftest version with identical options on "
        "both sides; kill stale perftest servers before testing",
    ),
    "completion_error": (
        "Work completions failed during the run (e.g. status 12 transport retry exceeded, 13 RNR retry): "
        "the path dropped packets or broke: link flaps, wrong GID/route, RoCE PFC/ECN misconfiguration, or "
        "the peer went away",
        "Check port error counters (ethtool -S, perfquery) and link stability, RoCE PFC/ECN/DSCP settings "
        "on NICs and switches, and the GID index; then rerun",
    ),
    "below_limit": (
        "The result is below the limit given with -w/--limit_bw or -y/--limit_msgrate",
        "Investigate the slow link (compare with the port's expected rate) or adjust the limit",
    ),
    "cpu_freq_failed": (
        "perftest could not determine a stable CPU frequency (frequency scaling, conflicting cpufreq "
        "values), so it could not turn cycles into time",
        "Set the CPU governor to performance (cpupower frequency-set -g performance) or pass -F",
    ),
    "timeout": (
        "The peer stopped answering (perftest gives up after 120 s without a message) or the run exceeded "
        "its deadline",
        "Check that the peer is still running and reachable; allow a longer deadline for -a or -D runs",
    ),
    "version_mismatch": (
        "Server and client run perftest versions that cannot work together",
        "Install the same perftest version on every host and image",
    ),
    "invalid_option": (
        "perftest rejected its command line: unknown flag, invalid value, or an option this test or "
        "perftest version does not support",
        "Check the options against `ib_<test> --help` of the installed perftest; use the same version on "
        "both sides",
    ),
    "not_installed": (
        "The perftest binary was not found on the host or in the container image",
        "Install perftest (apt install perftest, dnf install perftest, or MLNX_OFED/DOCA) or put it on PATH",
    ),
    "crashed": (
        "perftest crashed (segmentation fault / abort), usually right after an earlier error such as a "
        "failed GPU memory registration, or because it does not match the installed rdma-core/driver",
        "Fix the first error reported before the crash; use a perftest build that matches the installed "
        "rdma-core / OFED",
    ),
    "unknown": (
        "perftest reported an error this parser does not recognise",
        "Read the message and the full output; rerun the same command by hand on that host",
    ),
}

# Extra, situation-specific advice attached to an error entry as ``detail``.
GPU_MR_DETAIL = (
    "The buffer was {gpu} GPU memory: registering it needs GPUDirect RDMA (nvidia-peermem / nv_peer_mem, "
    "amdgpu peer-direct, or DMA-BUF via --use_cuda_dmabuf / --use_rocm_dmabuf); vGPU and some MIG or "
    "virtualised setups do not support it"
)
ZERO_GID_DETAIL = (
    "An all-zero GID was printed for the {sides} side of this Ethernet (RoCE) link: GID index {index} holds no address "
    "on that port (no IP on the RDMA device's netdev, common in pods, or the wrong -x); pass with -x the RoCE v2 "
    "GID index that carries the interface IP (show_gids)"
)


# How lines are classified.  Each rule is (code, lowercase substrings, optional
# regex on the lowercased line that must also match).  Order matters: the
# first rule that matches decides the code.  Plain substring tests keep the
# parser fast (CPython's re is slow on long alternations).
_ERROR_RULES = [
    ("not_installed", ("command not found", "executable file not found"), None),
    ("not_installed", (": not found",), r": not found$"),
    # "no such file or directory" and later a perftest binary's name (_After: two searches, not one .*)
    ("not_installed", ("no such file or directory",), ("no such file or directory", r"ib_\w{1,32}?_(?:bw|lat)")),
    ("no_device", ("did not detect devices", "if device exists, check if driver is up",
                   "unable to find the infiniband/roce device", "no ib devices found",
                   "failed to get ib devices list", "no rdma devices"), None),
    ("device_not_found", ("couldn't find device", "could not find device"), None),
    ("device_not_found", ("ib device ",), r"ib device \S+ not found"),
    ("port_down", ("port number",), r"port number\s+\d+\s+state is"),
    ("link_layer_failed", ("couldn't set the link layer", "unable to query port", "error when trying to query port",
                           "test can only run on ethernet link"), None),
    ("link_layer_failed", ("link layer on port",), r"link layer on port \d+ is unknown"),
    ("device_open_failed", ("couldn't get context for", "couldn't allocate context", "failed to open device",
                            "ibv_open_device failed"), None),
    ("gpu_init_failed", ("cuinit(", "cudevicegetcount", "that support cuda", "no such device id",
                         "cuctxcreate() error", "cuctxsetcurrent() error", "couldn't init gpu context",
                         "cudevicegetbypcibusid failed", "dma-buf is not supported on this gpu",
                         "hipdevicegetcount", "requested rocm device", "couldn't initialize rocm device",
                         "unsupported memory type", "cuda dma-buf cannot be used", "neuron dma-buf cannot be used",
                         "invalid neuron core", "cumemalloc error", "cumemallochost error",
                         "cumemallocmanaged error", "hipmalloc error", "failed to export dmabuf handle",
                         "can't use multiple memory types", "validation plugin", "not available in kernel plugin",
                         "dma_buf_mapping_type_pcie is missing"), None),
    ("hugepages_failed", ("failed to allocate hugepage", "please configure hugepages"), None),
    ("mr_alloc_failed", ("couldn't allocate mr", "failed to create mr", "couldn't register mr",
                         "couldn't create null mr", "stack does not support dma-buf", "ibv_reg_mr failed",
                         "failed to register memory"), None),
    ("qp_connect_failed", ("unable to connect the hca's through the link", "failed to modify qp",
                           "couldn't modify to init", "couldn't modify to rtr", "couldn't modify to rts",
                           "couldn't modify qp to"), None),
    ("resources_failed", ("couldn't create ib resources", "couldn't allocate pd", "couldn't create cq",
                          "couldn't create a receiver cq", "couldn't create send cq", "couldn't create recv cq",
                          "failed to create cqs", "couldn't create qp", "couldn't create rdma new qp",
                          "couldn't create rdma old qp", "unable to create qp", "failed to create qp",
                          "couldn't create completion channel", "couldn't create comp channel",
                          "couldn't create srq", "couldn't create xrc", "couldn't open xrc", "error opening xrc",
                          "unable to create rdma resources", "unable to create rdma_cm resources",
                          "unable to create the resources needed", "failed to initialize rdma contexts",
                          "couldn't allocate work buf", "cannot allocate", "failed to create ah",
                          "unable to create ah", "unable to create address handler",
                          "requested qp size might be too big", "failed to allocate rdma cm nodes",
                          "failed to create rdma cm connection with resources", "couldn't attach qp",
                          "couldn't malloc"), None),
    ("gid_invalid", ("found incompatibility issue with gid types", "please try to use a different ip version",
                     "failed to query gid", "ibv_query_gid failed", "couldn't get gid",
                     "unable to set up my ib connection parameters", "unable to set up socket connection"), None),
    ("gid_invalid", ("gid index",), r"gid index \S+ is (?:not valid|invalid)"),
    # perftest 26.x's option negotiation: " size mismatch: local=65536, remote=8", " Failed to negotiate parameters"
    ("negotiation_failed", ("mismatch: local=", "failed to negotiate parameters"), None),
    ("device_query_failed", ("failed to query device capabilities",), None),
    ("mtu_invalid", ("invalid mtu", "please choose mtu f", "couldn't set eth mtu"), None),
    ("listen_failed", ("couldn't listen to port", "failed to bind socket", "rdma_bind_addr failed",
                       "failed to bind rdma cm address", "rdma_listen failed", "failed to listen on rdma cm"), None),
    ("connect_failed", ("couldn't connect to", "unable to open file descriptor for socket connection",
                        "unable to init the socket connection", "unable to connect", "failed to connect rdma cm",
                        "failed to connect through rdma cm", "failed to handle rdma cm event",
                        "failed to resolve rdma cm", "rdma_resolve_addr failed", "rdma_resolve_route failed",
                        "times addr_error", "rdma cm event error", "function rdma_connect failed",
                        "unable to perform rdma_client function", "unable to perform rdma_server function",
                        "failed to get rdma cm", "failed to create rdma cm id",
                        "failed to create rdma cm event channel",
                        "failed to create rdma cm connection", "rdma_create_id failed",
                        "rdma_create_event_channel failed", "failed to establish ud connection for rdma cm",
                        "failed request ud connection parameters", "accept() failed", "failed to accept rdma cm",
                        "function rdma_accept failed", "couldn't connect client"), None),
    ("connect_failed", ("event: rdma_cm_event_",), r"event: rdma_cm_event_\w+; error"),
    ("exchange_failed", ("failed to exchange", "unable to read from socket", "unable to read to socket",
                         "unable to write to socket", "unable to write from socket", "ethernet_read_",
                         "ethernet_write_", "couldn't read remote address", "couldn't send local address",
                         "couldn't write to socket", "couldn't read from socket", "couldn't send reports",
                         "couldn't read reports", "failed to sync between",
                         "failed to close connection between server and client", "unable to send my qp number",
                         "couldn't post send my qp number", "failed to send ud connection parameters"), None),
    ("completion_error", ("completion with error", "failed status ", "poll send cq error", "poll send cq failed",
                          "poll send cq to clean credit failed", "poll receive cq failed", "poll cq failed",
                          "poll on send cq failed", "bad wc status", "bad wqe status", "error occurred in run_iter",
                          "error occurred while running", "failed to complete run_iter", "test exited with error",
                          "couldn't post send", "couldn't post recv", "failed to post receive",
                          "function ibv_post_send failed", "function ibv_post_recv failed", "failed to poll cq"),
     None),
    ("below_limit", ("below bw limit", "below msg_rate limit", "below the bw limit"), None),
    ("cpu_freq_failed", ("can't produce a report", "couldn't acquire cpu frequency"), None),
    ("timeout", ("did not get message for", "timed out"), None),
    ("version_mismatch", ("not compatible with versions older than", "version mismatch", "versions mismatch"), None),
    ("crashed", ("segmentation fault", "core dumped", "bus error", "illegal instruction", "floating point exception",
                 "double free", "stack smashing"), None),
    ("crashed", ("aborted",), r"^aborted\b"),
    ("invalid_option", ("invalid command", "please check command line", "should be between", "must be positive",
                        "must be non-negative", "must be a multiple", "must be greater", "not supported",
                        "doesn't support", "does not support", "isn't supported", "only available", "you must",
                        "cannot be greater", "can't be grater", "duration mode currently doesn't",
                        "duration mode doesn't", "bidirectional is only", "message size cannot be changed",
                        "number of iterations must", "post list size must", "only valid for",
                        "unrecognized option", "invalid option", "requires an argument",
                        "parser function exited with error"), None),
    ("invalid_option", ("usage:", "invalid "), r"^(?:usage:|invalid )"),
    # perftest's option-dependency checks (force_dependecies() & co.): one line, then exit(1), no "error" word
    ("invalid_option", ("is incompatible with", "incompatible ooo settings", "requires --", "requires rc connection",
                        "requires tx_depth", "requires host cpu", "requires dma-buf", "requires the kernel plugin",
                        "must be enabled", "must specify", "only possible in", "not possible in", "can only be used",
                        "can be only", "only supported", "supported only", "only supports", "tests only",
                        "verbs only", "traffic only", "mode only.", "exists only in", "available only on",
                        "only avavilible", "only for latency tests", "work only with", "designed to work with",
                        "not available on", "feature not available", "not detected in libibverbs",
                        "unsupported by hca", "unsupported value for", "is not yet supported", "out of range",
                        "does not exist (available", "duplicated argument", "non-digit character",
                        "longer than six fields", "please provide", "please add --", "please check that",
                        "you are not running the", "not requiring flows", "unexpected compare type",
                        "output verbosity level", "should be greater than", "can not open the",
                        "cann't be executed", "aren't supported for", "do not support -",
                        "kernel support for numa"), None),
    ("invalid_option", ("service levels",), r"^only \d+ service levels"),
    ("connect_failed", ("problem in resolving basic address", "unexpected cm event", "bad event waiting for connect",
                        "unsupported address family", "srd connection was not found"), None),
]


class _After(object):
    """A regex pair searched as first.*then, in linear time (first match of `first`, then `then` after it)."""

    def __init__(self, first, then):
        self.first, self.then = re.compile(first), re.compile(then)

    def search(self, text):
        return found_after(self.first, self.then, text)


def _rule_regex(regex):
    if regex is None:
        return None
    return _After(*regex) if isinstance(regex, tuple) else re.compile(regex)


_ERROR_RULES = [(code, needles, _rule_regex(regex)) for code, needles, regex in _ERROR_RULES]
ERROR_CODES = tuple(sorted(set(rule[0] for rule in _ERROR_RULES)))

# Error-looking lines no rule above knows become "unknown".
_ERRORISH_NEEDLES = ("couldn't", "couldnt", "could not", "unable to", "fail", "error", "cannot", "can't",
                     "invalid", "not supported", "segmentation fault", "core dumped", "abort")

# Warnings / notes (checked before errors): lines starting with "warning" and these.
_WARNING_NEEDLES = (
    "conflicting cpu frequency", "test integrity may be harmed", "using sampled cpu speed",
    "measured timestamp frequency", "correlation coefficient", "requested mtu is higher than active mtu",
    "changing to active mtu", "will run with the port active mtu", "max msg size in ", "changing to this mtu",
    "changing msg size to this mtu", "min msg size for raweth", "unable to validata pkey index",
    "changing cq moderation", "post list requested", "setting inline size to", "rate_limit type is forced",
    "providing sw rate limit", "bw peak won't be measured", "cpu frequency is not max",
    # settings perftest adjusts before it goes on ("... inline size set to 0", "... falling back to ibv_post_send",
    # "CQ moderation can't be grater than rx depth." then "Changing CQ moderation to ...")
    "inline size set to 0", "falling back to ibv_post_send", "cq moderation can't be grater than rx depth",
    "changing to duplex mode", "using remote max_qp_rd_atom",
)
_TAGGED_WARNING = re.compile(r"^(?:[\w.\-/]{1,64}:\s*){1,2}warn(?:ing)?\b")


def is_warning(low):
    """A warning or note: perftest's own, or a line its tool marks as one ("libibverbs: warning: ...",
    "mlx4: warning: bluefame ..."): never an error, whatever words it holds."""
    return (low.lstrip("* ").startswith("warning") or any(needle in low for needle in _WARNING_NEEDLES)
            or ("warn" in low and _TAGGED_WARNING.match(low) is not None))


def classify(low):
    """Error code of a stripped, lowercased line that is no warning, or None."""
    for code, needles, regex in _ERROR_RULES:
        for needle in needles:
            if needle in low:
                if regex is None or regex.search(low):
                    return code
                break
    if any(needle in low for needle in _ERRORISH_NEEDLES):
        return "unknown"
    return None
