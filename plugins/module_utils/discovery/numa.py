# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""NUMA placement of RDMA tests (pure).

A NIC sits on one NUMA node (sysfs ``device/numa_node``; ``-1`` when the
platform does not say). A perftest process that runs on another node's CPUs
or memory crosses the inter-socket link for every buffer and loses bandwidth
and latency. :func:`pin_argv` builds the prefix that keeps it on the NIC's
node: ``numactl --cpunodebind=N --membind=N`` when ``numactl`` exists, else
``taskset -c <cpulist>`` from the node's cpulist (sysfs
``devices/system/node/nodeN/cpulist``, or the NIC's ``local_cpulist``).

:func:`closest_gpu` picks the GPU nearest a NIC for GPUDirect RDMA tests
(``--use_cuda``): the GPU that shares the most of the NIC's PCIe path
(same switch), then the same NUMA node, then the nearest PCI bus number.
:func:`placement_findings` reports a NIC and the GPU it is tested with on
different NUMA nodes, and a process that cannot be pinned.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import re

MODES = ("auto", "numactl", "taskset", "none")
MAX_CPU = 65535
_CPULIST_RE = re.compile(r"^\d+(-\d+(:\d+)?)?(,\d+(-\d+(:\d+)?)?)*$")
_PCI_RE = re.compile(r"^(?:([0-9a-fA-F]{4,8}):)?([0-9a-fA-F]{2}):([0-9a-fA-F]{2})\.([0-7])$")


class NumaError(ValueError):
    """Bad NUMA input (a clear message before anything runs)."""


def parse_cpulist(text):
    """'0-3,8-11' -> [0, 1, 2, 3, 8, 9, 10, 11]; '0-7:2' (stride) too. Raises NumaError on junk."""
    if text is None:
        return []
    text = str(text).strip()
    if text == "":
        return []
    if not _CPULIST_RE.match(text):
        raise NumaError("%r is not a CPU list like 0-3,8-11" % (text,))
    cpus = set()
    for part in text.split(","):
        stride = 1
        if ":" in part:
            part, step = part.split(":", 1)
            stride = int(step)
            if stride < 1:
                raise NumaError("CPU list stride must be >= 1 in %r" % (text,))
        if "-" in part:
            low, high = [int(x) for x in part.split("-", 1)]
        else:
            low = high = int(part)
        if low > high or high > MAX_CPU:
            raise NumaError("CPU range %r in %r is not valid" % (part, text))
        cpus.update(range(low, high + 1, stride))
    return sorted(cpus)


def format_cpulist(cpus):
    """[0, 1, 2, 3, 8] -> '0-3,8'."""
    cpus = sorted(set(int(c) for c in cpus))
    runs = []
    for cpu in cpus:
        if runs and cpu == runs[-1][1] + 1:
            runs[-1][1] = cpu
        else:
            runs.append([cpu, cpu])
    return ",".join(str(a) if a == b else "%d-%d" % (a, b) for a, b in runs)


def numa_node(value):
    """A NUMA node number, or None for unknown (-1, missing, junk)."""
    if isinstance(value, bool) or value is None:
        return None
    try:
        node = int(str(value).strip())
    except (TypeError, ValueError):
        return None
    return node if node >= 0 else None


def pin_argv(node, cpulist=None, mode="auto", numactl="numactl", taskset="taskset"):
    """(argv prefix, reason) that keeps a process on NUMA ``node``.

    ``mode``: ``auto`` (numactl when its path is given, else taskset when a
    cpulist is known), ``numactl``, ``taskset`` or ``none``. ``numactl`` /
    ``taskset``: the binaries' paths (None: not installed). Returns ``([],
    reason)`` when it cannot or should not pin; raises NumaError when the
    mode asked for cannot be honoured (a missing tool, an unknown node).
    """
    if mode not in MODES:
        raise NumaError("numa pinning mode must be one of %s, got %r" % (", ".join(MODES), mode))
    if mode == "none":
        return [], "pinning disabled"
    node = numa_node(node)
    cpus = parse_cpulist(cpulist) if cpulist else []
    if node is None:
        if mode != "auto":
            raise NumaError("cannot pin with %s: the NIC's NUMA node is unknown (numa_node -1 or unreadable)" % mode)
        return [], "the NIC's NUMA node is unknown"
    if mode in ("auto", "numactl") and numactl:
        return [numactl, "--cpunodebind=%d" % node, "--membind=%d" % node], "numactl on node %d" % node
    if mode == "numactl":
        raise NumaError("numa pinning mode numactl: numactl is not installed")
    if taskset and cpus:
        return [taskset, "-c", format_cpulist(cpus)], "taskset on node %d's CPUs %s" % (node, format_cpulist(cpus))
    if mode == "taskset":
        raise NumaError("numa pinning mode taskset: %s" % (
            "taskset is not installed" if not taskset else "the CPU list of node %d is unknown" % node))
    return [], "neither numactl nor taskset (with node %d's CPU list) is available" % node


def node_cpulists(snapshot):
    """{node: cpulist text} from a sysfs snapshot (``devices/system/node/nodeN/cpulist``)."""
    out = {}
    for key, value in (snapshot or {}).items():
        match = re.match(r"^devices/system/node/node(\d+)/cpulist$", key)
        if match and isinstance(value, str):
            out[int(match.group(1))] = value.strip()
    return out


def nic_placement(snapshot, device):
    """{device, numa_node, cpulist, pci} of an RDMA device from a sysfs snapshot."""
    base = "class/infiniband/%s/device" % device
    node = numa_node(snapshot.get(base + "/numa_node")) if isinstance(snapshot.get(base + "/numa_node"), str) \
        else None
    cpulist = snapshot.get(base + "/local_cpulist")
    if not isinstance(cpulist, str) or not cpulist.strip():
        cpulist = node_cpulists(snapshot).get(node) if node is not None else None
    link = snapshot.get(base)
    pci = None
    if isinstance(link, dict) and link.get("link"):
        pci = link["link"].rstrip("/").split("/")[-1]
    path = []
    if pci:
        # bus/pci/devices/<pci> links to the full path (root port, switches, function)
        full = snapshot.get("bus/pci/devices/%s" % pci)
        path = _pci_path(full.get("link") if isinstance(full, dict) else None)
    if not path:
        path = _pci_path(link.get("link") if isinstance(link, dict) else None)
    return {"device": device, "numa_node": node, "cpulist": cpulist.strip() if isinstance(cpulist, str) else None,
            "pci": pci, "pci_path": path}


def pci_path_of(snapshot, pci):
    """The PCI path (root port ... function) of a PCI function from the ``bus/pci/devices/<pci>`` link."""
    link = (snapshot or {}).get("bus/pci/devices/%s" % pci) if pci else None
    return _pci_path(link.get("link") if isinstance(link, dict) else None) or ([pci] if pci else [])


def _pci_path(target):
    """The PCI addresses on a sysfs device link target, root first ('../../0000:16:02.0/0000:17:00.0')."""
    if not target:
        return []
    return [p for p in str(target).split("/") if _PCI_RE.match(p)]


def _bus(pci):
    match = _PCI_RE.match(pci or "")
    if not match:
        return None
    return (int(match.group(1) or "0", 16), int(match.group(2), 16))


def gpus_from_snapshot(snapshot):
    """NVIDIA / AMD GPU PCI functions in a snapshot: [{index, pci, numa_node, pci_path}], in PCI order.

    The index is the GPU's position in PCI bus order, which is CUDA's order
    with ``CUDA_DEVICE_ORDER=PCI_BUS_ID`` (and nvidia-smi's).
    """
    gpus = []
    for key, value in (snapshot or {}).items():
        match = re.match(r"^bus/pci/devices/([^/]+)/class$", key)
        if not match or not isinstance(value, str):
            continue
        pci = match.group(1)
        vendor = snapshot.get("bus/pci/devices/%s/vendor" % pci)
        klass = value.strip().lower()
        if vendor not in ("0x10de", "0x1002") or not (klass.startswith("0x0302") or klass.startswith("0x0300")):
            continue
        link = snapshot.get("bus/pci/devices/%s" % pci)
        gpus.append({"pci": pci, "numa_node": numa_node(snapshot.get("bus/pci/devices/%s/numa_node" % pci)),
                     "pci_path": _pci_path(link.get("link") if isinstance(link, dict) else None) or [pci],
                     "vendor": vendor})
    gpus.sort(key=lambda g: _bus(g["pci"]) or (0, 0))
    for num, gpu in enumerate(gpus):
        gpu["index"] = num
    return gpus


def closest_gpu(nic, gpus):
    """The GPU nearest the NIC and why: (gpu dict or None, reason).

    Order: the longest shared PCIe path (same PCIe switch), then the same
    NUMA node, then the nearest bus number, then the lowest index.
    """
    if not gpus:
        return None, "no GPU found"
    nic_path = list(nic.get("pci_path") or ([nic["pci"]] if nic.get("pci") else []))
    nic_node = numa_node(nic.get("numa_node"))
    nic_bus = _bus(nic.get("pci"))

    def shared(gpu):
        path = gpu.get("pci_path") or []
        count = 0
        for a, b in zip(nic_path[:-1], path[:-1]):
            if a != b:
                break
            count += 1
        return count

    def score(gpu):
        node = numa_node(gpu.get("numa_node"))
        same_node = nic_node is not None and node == nic_node
        bus = _bus(gpu.get("pci"))
        distance = abs(bus[1] - nic_bus[1]) if bus and nic_bus and bus[0] == nic_bus[0] else 1 << 16
        return (-shared(gpu), 0 if same_node else 1, distance, gpu.get("index", 0))

    best = min(gpus, key=score)
    reasons = []
    if shared(best):
        reasons.append("shares %d PCIe bridge(s) with the NIC" % shared(best))
    if nic_node is not None and numa_node(best.get("numa_node")) == nic_node:
        reasons.append("same NUMA node %d" % nic_node)
    elif nic_node is not None:
        reasons.append("no GPU on the NIC's NUMA node %d" % nic_node)
    if not reasons:
        reasons.append("nearest PCI bus")
    return best, "GPU %s (%s): %s" % (best.get("index"), best.get("pci"), ", ".join(reasons))


def placement_findings(device, nic_node, gpu=None, pinned=None, reason=None, host=None):
    """Findings ``{severity, code, device, message, fix}`` about a test's placement.

    ``numa_mismatch`` (warning): the NIC and its GPU are on different NUMA
    nodes; ``not_pinned`` (info): the process could not be pinned and why.
    """
    out = []
    where = "%s%s" % ("%s " % host if host else "", device)
    nic_node = numa_node(nic_node)
    if gpu is not None:
        gpu_node = numa_node(gpu.get("numa_node"))
        if nic_node is not None and gpu_node is not None and gpu_node != nic_node:
            out.append({"severity": "warning", "code": "numa_mismatch", "device": device,
                        "message": "%s is on NUMA node %d but GPU %s (%s) is on node %d: GPUDirect traffic "
                                   "crosses the inter-socket link" % (where, nic_node, gpu.get("index"),
                                                                      gpu.get("pci"), gpu_node),
                        "fix": "test (and run jobs) with a GPU on the NIC's NUMA node or PCIe switch; check "
                               "nvidia-smi topo -m and the NCCL_IB_HCA / CUDA_VISIBLE_DEVICES mapping"})
    if pinned is False and reason:
        out.append({"severity": "info", "code": "not_pinned", "device": device,
                    "message": "%s: the test process was not pinned to the NIC's NUMA node (%s)" % (where, reason),
                    "fix": "install numactl (or make the node's cpulist readable), or accept the placement the "
                           "scheduler gives"})
    return out


def nic_from_facts(rdma_facts, device):
    """{device, numa_node, cpulist, pci, pci_path} of an RDMA device from the ``commcheck_rdma`` fact."""
    facts = rdma_facts or {}
    for dev in facts.get("devices") or []:
        if dev.get("name") != device:
            continue
        node = numa_node(dev.get("numa_node"))
        cpulist = dev.get("local_cpulist")
        if not cpulist and node is not None:
            cpulist = ((facts.get("host") or {}).get("numa_nodes") or {}).get(str(node))
        pci = dev.get("pci")
        return {"device": device, "numa_node": node, "cpulist": cpulist or None, "pci": pci,
                "pci_path": list(dev.get("pci_path") or ([pci] if pci else []))}
    return None


def gpus_from_facts(rdma_facts):
    """The GPUs the ``commcheck_rdma`` fact lists (``host.gpus.devices``)."""
    return list((((rdma_facts or {}).get("host") or {}).get("gpus") or {}).get("devices") or [])


def plan_placement(nic, gpus=None, use_cuda=None, gpu_select="given", mode="auto", numactl="numactl",
                   taskset="taskset", host=None):
    """Everything about one side's placement: the pin prefix, the GPU and the findings.

    ``use_cuda``: the GPU index asked for (None: no GPUDirect); ``gpu_select``
    ``closest`` replaces it with the GPU closest to the NIC. Returns
    ``{prefix, pinned, reason, gpu, gpu_reason, use_cuda, findings}``.
    Raises NumaError for a mode that cannot be honoured or an unknown GPU.
    """
    if gpu_select not in ("given", "closest"):
        raise NumaError("gpu_select must be given or closest, got %r" % (gpu_select,))
    nic = nic or {}
    prefix, reason = pin_argv(nic.get("numa_node"), nic.get("cpulist"), mode, numactl, taskset)
    gpu = None
    gpu_reason = None
    chosen = use_cuda
    if use_cuda is not None:
        gpus = list(gpus or [])
        if gpu_select == "closest" and gpus:
            gpu, gpu_reason = closest_gpu(nic, gpus)
            chosen = gpu.get("index")
        else:
            gpu = next((g for g in gpus if g.get("index") == use_cuda), None)
            gpu_reason = "GPU %s as given" % use_cuda if gpu else "GPU %s is not in the discovered GPUs" % use_cuda
    findings = placement_findings(nic.get("device"), nic.get("numa_node"), gpu, pinned=bool(prefix),
                                  reason=None if mode == "none" else reason, host=host)
    return {"prefix": prefix, "pinned": bool(prefix), "reason": reason, "gpu": gpu, "gpu_reason": gpu_reason,
            "use_cuda": chosen, "findings": findings}


def nic_from_sysfs(read_file, sysfs_root, device):
    """{device, numa_node, cpulist} read with ``read_file(path)`` (None when unreadable) from a sysfs root."""
    base = "%s/class/infiniband/%s/device" % (str(sysfs_root or "/sys").rstrip("/") or "", device)
    node = numa_node(read_file(base + "/numa_node"))
    cpulist = (read_file(base + "/local_cpulist") or "").strip() or None
    if cpulist is None and node is not None:
        cpulist = (read_file("%s/devices/system/node/node%d/cpulist" % (
            str(sysfs_root or "/sys").rstrip("/"), node)) or "").strip() or None
    return {"device": device, "numa_node": node, "cpulist": cpulist, "pci": None, "pci_path": []}


def side_placement(device, rdma_facts=None, read_file=None, which=None, sysfs_root="/sys", mode="auto",
                   gpu_select="given", use_cuda=None, host=None):
    """Placement of one test side (see :func:`plan_placement`), from the facts or, else, from sysfs.

    ``read_file(path)`` -> text or None and ``which(name)`` -> path or None
    come from the module's transport. Raises NumaError for a mode that cannot
    be honoured.
    """
    if not device:
        if mode not in ("auto", "none"):
            raise NumaError("numa pinning mode %s needs the side's device" % mode)
        return dict(plan_placement({"device": None}, None, use_cuda, "given", "none", None, None, host),
                    reason="no device given: perftest picks one, so its NUMA node is unknown")
    nic = nic_from_facts(rdma_facts, device) if rdma_facts else None
    if (nic is None or nic.get("numa_node") is None) and read_file is not None:
        nic = nic_from_sysfs(read_file, sysfs_root, device)
    numactl = which("numactl") if which and mode in ("auto", "numactl") else None
    taskset = which("taskset") if which and mode in ("auto", "taskset") else None
    gpus = gpus_from_facts(rdma_facts)
    plan = plan_placement(nic or {"device": device}, gpus, use_cuda, gpu_select if gpus else "given", mode,
                          numactl, taskset, host)
    plan["numa_node"] = (nic or {}).get("numa_node")
    plan["cpulist"] = (nic or {}).get("cpulist")
    if use_cuda is not None and gpu_select == "closest" and not gpus:
        plan["gpu_reason"] = "no GPU list in the facts: GPU %s as given" % use_cuda
    return plan


def finding_records(sides, check="rdma_perf"):
    """``finding`` records for the placement findings (warning and worse) of side results, one per host/device/code."""
    seen = set()
    out = []
    for side in sides or []:
        for item in side.get("findings") or []:
            if item.get("severity") not in ("error", "warning"):
                continue
            key = (side.get("host"), item.get("device"), item.get("code"))
            if key in seen:
                continue
            seen.add(key)
            out.append({"kind": "finding", "host": side.get("host") or "?", "peer": None,
                        "params": {"check": check, "finding": item["code"], "severity": item["severity"],
                                   "device": item.get("device")},
                        "metrics": {}, "verdict": "warn" if item["severity"] == "warning" else "fail",
                        "cause": item["message"], "fix": item["fix"], "evidence": []})
    return out
