# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What discovery reads through a transport besides sysfs: host probes, the RDMA tools, ``ip`` (impure).

Every command is an argv list run through ``transport.run`` with a
deadline; a tool that is missing, fails or cannot be parsed is recorded,
never raised.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os
import time

from ansible_collections.clusterops.commcheck.plugins.module_utils.options.option_rules import NAME_KINDS
from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery.host_facts import (
    machine_identity,
    parse_cap_eff,
    parse_ip_addr,
    parse_memlock,
)
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_ibdev2netdev import parse_ibdev2netdev_full
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_ibstat import parse_ibstat_full
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_ibv_devinfo import parse_ibv_devinfo_full
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_lldpctl import parse_lldpctl
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_rdma_link import (
    parse_rdma_link,
    parse_rdma_system,
)
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_show_gids import parse_show_gids
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_smpquery import parse_smpquery
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers import tool_versions
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.output_capture import DOCUMENT

TOOL_TIMEOUT = 20
# What tells two machines apart (host_facts.machine_identity): machine id, the kernel's boot id, the UTS host name.
IDENTITY_FILES = ("/etc/machine-id", "/proc/sys/kernel/random/boot_id", "/proc/sys/kernel/hostname")
CONTAINER_MARKERS = ("/.dockerenv", "/run/.containerenv")
# (evidence kind, file read or program looked up, as the evidence names it). Device nodes are the
# one-click probe's (a read of /dev/nvidiactl is no test of whether it exists).
GPU_PROBES = (
    ("driver", "/proc/driver/nvidia/version", "/proc/driver/nvidia"),
    ("smi", "nvidia-smi", "nvidia-smi"),
)
NPU_PROBES = (
    ("driver", "/usr/local/Ascend/driver/version.info", "/usr/local/Ascend/driver"),
    ("smi", "npu-smi", "npu-smi"),
)
# (name in the facts, argv, parser -> list of entries)
TOOL_SPECS = (
    ("ibdev2netdev", ["ibdev2netdev"], lambda t: parse_ibdev2netdev_full(t)["devices"]),
    ("ibstat", ["ibstat"], lambda t: parse_ibstat_full(t)["cas"]),
    ("ibv_devinfo", ["ibv_devinfo"], lambda t: parse_ibv_devinfo_full(t)["devices"]),
    ("rdma_link", ["rdma", "link", "show"], parse_rdma_link),
    ("show_gids", ["show_gids"], parse_show_gids),
    # lldpd's neighbours: the leaf switch of each RoCE port (discovery's topology; no cross-check)
    ("lldpctl", ["lldpctl", "-f", "json"], lambda t: parse_lldpctl(t)["neighbors"]),
)

# smpquery over the directed route 0,<port>: what the switch behind each InfiniBand port says it is (NodeInfo for
# its type, GUID and the port the query came in by; NodeDesc for its name). All ports share one deadline.
SMPQUERY_OPS = ("nodeinfo", "nodedesc")
SMPQUERY_BUDGET = 60

VERSION_TIMEOUT = 10
# (key in host.versions, program, argv after it, parser): each asked for its version once.
VERSION_COMMANDS = (
    ("perftest", "ib_write_bw", ["--version"], tool_versions.perftest_version),
    ("iperf3", "iperf3", ["--version"], tool_versions.iperf3_version),
    ("openmpi", "mpirun", ["--version"], tool_versions.openmpi_version),
)
# (key, files tried in order, parser): where the library's version is written down.
VERSION_FILES = (
    ("nccl", ("/usr/include/nccl.h", "/usr/local/cuda/include/nccl.h", "/usr/local/nccl/include/nccl.h"),
     tool_versions.nccl_header_version),
    ("cann", ("/usr/local/Ascend/ascend-toolkit/latest/ascend_toolkit_install.info",
              "/usr/local/Ascend/ascend-toolkit/latest/version.cfg"), tool_versions.cann_version),
)


def is_default_root(root):
    return os.path.normpath(root or "/sys") == "/sys"


def _run_tool(transport, argv, timeout=TOOL_TIMEOUT):
    try:
        # what a discovery tool prints is read whole (ibv_devinfo -v of many ports), up to the bound for documents
        res = transport.run(argv, timeout, capture=DOCUMENT)
    except Exception as exc:  # pylint: disable=broad-except
        # the program did not start (CommandError: not executable, not a program for this machine...)
        return {"cmd": argv, "rc": None, "stdout": "", "stderr": str(exc), "timed_out": False,
                "start_error": str(exc)}
    return res


# --- the host ----------------------------------------------------------------------------

def probe_host(transport):
    """{memlock, cap_eff, ipc_lock, in_container, perftest, gpus / npus: {evidence, found_by}, pod} as seen here.

    Through kubectl, /proc/self is the process the pod runs for the read: it
    has the limits and capabilities the tests started there get.
    """
    host = {
        "memlock": parse_memlock(transport.read_file("/proc/self/limits")),
        "in_container": _in_container(transport),
        "perftest": transport.which("ib_write_bw"),
        "gpus": accelerator_evidence(transport, GPU_PROBES),
        "npus": accelerator_evidence(transport, NPU_PROBES),
        "pod": bool(getattr(transport, "remote", False)),
        "identity": machine_identity(*[transport.read_file(path) for path in IDENTITY_FILES],
                                     netns_text=_network_namespace(transport)),
    }
    host.update(parse_cap_eff(transport.read_file("/proc/self/status")))
    return host


def _network_namespace(transport):
    """``net:[inode]`` of the network namespace commands run in on the host, or None."""
    readlink = transport.which("readlink")
    if not readlink:
        return None
    res = _run_tool(transport, [readlink, "/proc/self/ns/net"], VERSION_TIMEOUT)
    return res.get("stdout") if res.get("rc") == 0 else None


def _in_container(transport):
    """A remote (kubectl) transport, a container runtime's marker file, or a Kubernetes environment."""
    if getattr(transport, "remote", False):
        return True
    for marker in CONTAINER_MARKERS:
        if transport.read_file(marker) is not None:
            return True
    return bool(os.environ.get("KUBERNETES_SERVICE_HOST"))


def accelerator_evidence(transport, probes):
    """{evidence, found_by}: what each of probes ((kind, file or program, shown as)) finds on the host."""
    evidence = []
    found_by = []
    for kind, what, shown in probes:
        found = transport.which(what) if kind == "smi" else transport.read_file(what) is not None
        if found:
            evidence.append(shown)
            found_by.append(kind)
    return {"evidence": evidence, "found_by": found_by}


# --- the RDMA tools ------------------------------------------------------------------------

def run_tools(transport, names=None):
    """Run each installed RDMA tool once (those of ``names`` when given): ({name: run summary}, {name: parsed
    entries})."""
    results = {}
    parsed = {}
    for name, argv, parser in TOOL_SPECS:
        if names is not None and name not in names:
            continue
        path = transport.which(argv[0])
        if not path:
            results[name] = {"ran": False, "reason": "not installed"}
            continue
        results[name], value, rc = _run_parsed(transport, [path] + argv[1:], parser)
        value = _worth_comparing(name, value, rc)
        if value is not None:
            parsed[name] = value
    return results, parsed


def _run_parsed(transport, argv, parser):
    """(run summary, parsed value or None when it timed out or could not be parsed, rc)."""
    res = _run_tool(transport, argv)
    text = (res.get("stdout") or "") + "\n" + (res.get("stderr") or "")
    try:
        value = parser(text)
    except Exception as exc:  # pylint: disable=broad-except
        value = None
        res["stderr"] = "%s\nparser error: %s" % (res.get("stderr") or "", exc)
    if res.get("start_error"):
        # nothing ran: the summary says why, and nothing is compared (an empty parse is not "no device")
        return {"ran": False, "rc": None, "timed_out": False, "reason": res["start_error"]}, None, None
    summary = {"ran": True, "rc": res.get("rc"), "timed_out": res.get("timed_out"),
               "entries": len(value) if isinstance(value, list) else None}
    return summary, None if res.get("timed_out") else value, res.get("rc")


def _worth_comparing(name, value, rc):
    """A tool that lists nothing is not compared, except ibv_devinfo: then user space sees no device."""
    if value is None:
        return None
    if name != "ibv_devinfo":
        return value or None
    if rc not in (0, None) and not value:
        # "Failed to get IB devices list" / "No IB devices found"
        return []
    return value


def ib_link_ports(devices):
    """(device, port) of each InfiniBand port whose physical link is up (a directed route out of it reaches its
    neighbour), of a device whose name is an RDMA device name (never a flag)."""
    name_ok = NAME_KINDS["rdma_device"][0].match
    return [(device["name"], port["port"]) for device in devices or []
            if isinstance(device.get("name"), str) and not device["name"].startswith("-") and name_ok(device["name"])
            for port in device.get("ports") or []
            if port.get("link_layer") == "InfiniBand" and port.get("phys_state") == "LinkUp"
            and isinstance(port.get("port"), int)]


def query_ib_neighbours(transport, devices, budget=SMPQUERY_BUDGET, clock=time.monotonic):
    """Ask the switch behind each InfiniBand port with a link who it is (``smpquery -D nodeinfo`` and ``nodedesc``
    over ``0,<port>``), all within ``budget`` seconds: (run summary, ``{device: [{port, parse_smpquery's
    result}]}``). Ports the deadline leaves unasked are counted in the summary, never half read."""
    ports = ib_link_ports(devices)
    if not ports:
        return {"ran": False, "reason": "no InfiniBand port with a link"}, {}
    path = transport.which("smpquery")
    if not path:
        return {"ran": False, "reason": "not installed"}, {}
    deadline = clock() + budget
    answers = {}
    summary = {"ran": True, "ports": len(ports), "switches": 0, "failed": 0, "unasked": 0}
    for device, port in ports:
        asked = _smpquery_port(transport, path, device, port, deadline, clock)
        if asked is None:
            summary["unasked"] += 1
            continue
        answer = parse_smpquery("\n".join(asked[0]))
        answer.update(port=port, timed_out=asked[1])
        answers.setdefault(device, []).append(answer)
        if answer["is_switch"]:
            summary["switches"] += 1
        elif asked[1] or not answer["ok"]:
            summary["failed"] += 1
    return summary, answers


def _smpquery_port(transport, path, device, port, deadline, clock):
    """(the outputs of SMPQUERY_OPS for one port, whether one timed out), or None when the deadline comes
    before its first query."""
    texts = []
    for operation in SMPQUERY_OPS:
        left = deadline - clock()
        if left <= 0:
            return (texts, True) if texts else None
        res = _run_tool(transport, [path, "-C", device, "-P", str(port), "-D", operation, "0,%d" % port],
                        min(TOOL_TIMEOUT, left))
        texts.append((res.get("stdout") or "") + "\n" + (res.get("stderr") or ""))
        if res.get("timed_out"):
            return texts, True
    return texts, False


def tool_version_probes(transport):
    """{perftest, iperf3, openmpi, nccl, cann, nccl_tests}: each version string, None where it is not found.

    nccl-tests has no version flag: its version comes from a collective run's header.
    """
    versions = {"nccl_tests": None}
    for key, program, args, parser in VERSION_COMMANDS:
        path = transport.which(program)
        versions[key] = None
        if path:
            res = _run_tool(transport, [path] + args, VERSION_TIMEOUT)
            versions[key] = parser((res.get("stdout") or "") + "\n" + (res.get("stderr") or ""))
    for key, paths, parser in VERSION_FILES:
        versions[key] = next((v for v in (parser(transport.read_file(p)) for p in paths) if v), None)
    return versions


def rdma_netns_mode(transport):
    """'shared' / 'exclusive' from ``rdma system show``, or None."""
    rdma = transport.which("rdma")
    if not rdma:
        return None
    res = _run_tool(transport, [rdma, "system", "show"])
    if res.get("rc") != 0:
        return None
    return parse_rdma_system(res.get("stdout") or "").get("netns_mode")


def ip_addresses(transport):
    """{ifname: ["a.b.c.d/len", ...]} from ``ip -j -4 addr show`` (``ip -o`` when -j fails), or None."""
    ip_bin = transport.which("ip")
    if not ip_bin:
        return None
    addresses = None
    for argv in ([ip_bin, "-j", "-4", "addr", "show"], [ip_bin, "-o", "-4", "addr", "show"]):
        res = _run_tool(transport, argv)
        addresses = parse_ip_addr(res.get("stdout")) if res.get("rc") == 0 else None
        if addresses is not None:
            break
    return addresses
