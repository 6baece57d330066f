# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which RDMA NIC each GPU should use for GPUDirect RDMA, and how GPU memory is registered (pure).

A GPU's nearest NIC is the one behind the deepest PCIe bridge it shares
with the GPU (the same PCIe switch); without a shared bridge, a NIC on the
GPU's NUMA node; else none. GPUs with the same nearest NICs share them out
in PCI order, so two GPUs and two NICs on one switch (or eight of each on
one node) make two (eight) pairs, not all GPUs on one NIC. A NIC on
another node is never paired: GPU traffic to it crosses the CPUs'
interconnect, which is no test of the rail. Sharing only the root complex
(``pci0000:00``) is no shared bridge.

GPU memory is registered with the NIC through ``nvidia_peermem`` (or the
older ``nv_peer_mem``): perftest ``--use_cuda=<gpu>``; else through
DMA-BUF (Linux >= 5.12, a CUDA driver and a perftest built with DMA-BUF
support): ``--use_cuda=<gpu> --use_cuda_dmabuf``, only when the operator
says DMA-BUF works, since nothing in sysfs shows it.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import re

from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery.numa import (
    gpus_from_snapshot, nic_placement, numa_node)

PEERMEM_MODULES = ("nvidia_peermem", "nv_peer_mem")
GPU_PATHS = ("same_switch", "same_root_port", "same_numa", "cross_socket")
DMABUF_MIN_KERNEL = (5, 12)
MODES = ("peermem", "dmabuf")


def shared_bridges(path_a, path_b):
    """How many PCIe bridges two PCI paths (root port first, the function last) have in common."""
    count = 0
    for a, b in zip(list(path_a or [])[:-1], list(path_b or [])[:-1]):
        if a != b:
            break
        count += 1
    return count


def _pci_order(item):
    return (str(item.get("pci") or ""), str(item.get("device") or ""), item.get("index") or 0)


def _nearest_nics(gpu, nics):
    """(how, depth, candidate NICs): those behind the deepest bridge shared with the GPU, else on its NUMA node."""
    depths = [(shared_bridges(gpu.get("pci_path"), nic.get("pci_path")), nic) for nic in nics]
    deepest = max([depth for depth, _nic in depths] + [0])
    if deepest > 0:
        return "pcie_switch", deepest, [nic for depth, nic in depths if depth == deepest]
    node = numa_node(gpu.get("numa_node"))
    local = [nic for nic in nics if node is not None and numa_node(nic.get("numa_node")) == node]
    return ("numa_node" if local else "none"), 0, local


def pair_gpus_with_nics(gpus, nics):
    """[{gpu, gpu_pci, device, nic_pci, how, bridges}] for every GPU, ``device`` None when no NIC is near.

    ``gpus``: [{index, pci, pci_path, numa_node}] (``numa.gpus_from_snapshot``);
    ``nics``: [{device, pci, pci_path, numa_node}]. ``how``: ``pcie_switch``,
    ``numa_node`` or ``none``. GPUs with the same nearest NICs (two GPUs and
    two NICs on one switch, or one NUMA node) share them out in PCI order.
    """
    nics = sorted([n for n in nics or [] if n.get("device")], key=_pci_order)
    groups = {}
    for gpu in sorted(gpus or [], key=_pci_order):
        how, depth, candidates = _nearest_nics(gpu, nics)
        key = (how, depth, tuple(n["device"] for n in candidates))
        groups.setdefault(key, ([], candidates))[0].append(gpu)
    out = []
    for (how, depth, _devices), (members, candidates) in groups.items():
        for num, gpu in enumerate(members):
            nic = candidates[num % len(candidates)] if candidates else None
            out.append(_pair(gpu, nic, how, depth))
    return sorted(out, key=lambda pair: (pair["gpu"] is None, pair["gpu"], str(pair["gpu_pci"])))


def _pair(gpu, nic, how, depth):
    gpu_node, nic_node = numa_node(gpu.get("numa_node")), numa_node((nic or {}).get("numa_node"))
    return {"gpu": gpu.get("index"), "gpu_pci": gpu.get("pci"), "gpu_numa_node": gpu_node,
            "device": (nic or {}).get("device"), "nic_pci": (nic or {}).get("pci"),
            "nic_numa_node": nic_node, "how": how, "bridges": depth,
            "gpu_path": gpu_path(gpu.get("pci_path"), (nic or {}).get("pci_path"), gpu_node, nic_node)
            if nic else None}


def gpu_path(gpu_pci_path, nic_pci_path, gpu_node=None, nic_node=None):
    """The bus path between a GPU and a NIC, from their PCI paths (root port first, the function last).

    ``same_switch``: two or more bridges in common (the root port and a switch's upstream port at least: the
    traffic turns in the switch); ``same_root_port``: the root port only (it turns in the root complex);
    ``same_numa``: no bridge in common, both on one known NUMA node (through the CPU's host bridge);
    ``cross_socket``: else (through the CPUs' interconnect, or a node unknown).
    """
    bridges = shared_bridges(gpu_pci_path, nic_pci_path)
    if bridges >= 2:
        return "same_switch"
    if bridges == 1:
        return "same_root_port"
    gpu_node, nic_node = numa_node(gpu_node), numa_node(nic_node)
    if gpu_node is not None and gpu_node == nic_node:
        return "same_numa"
    return "cross_socket"


def nic_gpus(pairs):
    """{device: the lowest-numbered GPU paired with it}: one GPU per NIC keeps the GPU tests bounded."""
    out = {}
    for pair in pairs or []:
        if pair.get("device") and pair.get("gpu") is not None:
            out.setdefault(pair["device"], pair)
    return out


def affinity_from_snapshot(snap):
    """GPU-NIC pairs from a sysfs snapshot (``sysfs_snapshot``): GPUs as ``gpus_from_snapshot`` numbers them."""
    devices = sorted(set(key.split("/")[2] for key in snap or {}
                         if key.startswith("class/infiniband/") and key.count("/") >= 2))
    nics = [nic_placement(snap, dev) for dev in devices]
    gpus = [g for g in gpus_from_snapshot(snap) if g.get("vendor") == "0x10de"]
    return pair_gpus_with_nics(gpus, nics)


def affinity_from_facts(rdma_facts):
    """GPU-NIC pairs from the ``commcheck_rdma`` fact (``devices`` and ``host.gpus.devices``)."""
    facts = rdma_facts or {}
    nics = [{"device": d.get("name"), "pci": d.get("pci"), "numa_node": d.get("numa_node"),
             "pci_path": list(d.get("pci_path") or ([d["pci"]] if d.get("pci") else []))}
            for d in facts.get("devices") or []]
    gpus = [g for g in (((facts.get("host") or {}).get("gpus") or {}).get("devices") or [])
            if g.get("vendor", "0x10de") == "0x10de"]
    return pair_gpus_with_nics(gpus, nics)


def peermem_loaded(snap=None, proc_modules=None):
    """True when nvidia_peermem / nv_peer_mem shows in the snapshot (``module/<name>/...``) or /proc/modules."""
    for key in snap or {}:
        parts = key.split("/")
        if len(parts) >= 2 and parts[0] == "module" and parts[1] in PEERMEM_MODULES:
            return True
    for line in (proc_modules or "").splitlines():
        if line.split(" ", 1)[0] in PEERMEM_MODULES:
            return True
    return False


def kernel_version(release):
    """'5.15.0-91-generic' -> (5, 15); None when unreadable."""
    match = re.match(r"^\s*(\d+)\.(\d+)", str(release or ""))
    return (int(match.group(1)), int(match.group(2))) if match else None


def gpudirect_mode(peermem, dmabuf=False, kernel_release=None):
    """{mode, cause, fix}: ``peermem`` (``--use_cuda``), ``dmabuf`` (plus ``--use_cuda_dmabuf``) or None.

    ``dmabuf``: the operator says this perftest and CUDA driver support
    DMA-BUF; a kernel older than 5.12 (when known) still rules it out.
    """
    if peermem:
        return {"mode": "peermem", "cause": None, "fix": None}
    version = kernel_version(kernel_release)
    old_kernel = version is not None and version < DMABUF_MIN_KERNEL
    if dmabuf and not old_kernel:
        return {"mode": "dmabuf", "cause": None, "fix": None}
    cause = "neither nvidia_peermem nor nv_peer_mem is loaded"
    if dmabuf and old_kernel:
        cause += ", and DMA-BUF needs Linux 5.12 or newer (this host runs %s)" % kernel_release
    elif not dmabuf:
        cause += ", and DMA-BUF is not enabled (commcheck_rdma_gpudirect_dmabuf)"
    return {"mode": None,
            "cause": cause + ": the NIC cannot read or write GPU memory, so GPUDirect RDMA cannot run",
            "fix": "modprobe nvidia_peermem (it ships with the NVIDIA driver; load it at boot), or use DMA-BUF: "
                   "Linux >= 5.12, an open-kernel NVIDIA driver (R515+) and perftest built with CUDA DMA-BUF "
                   "support, then set commcheck_rdma_gpudirect_dmabuf: true"}
