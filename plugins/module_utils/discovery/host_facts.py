# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Host facts RDMA tests depend on: memlock, CAP_IPC_LOCK, addresses, netns mode, CPU governors, GPUs, modules (pure).

The parsers read the text of ``/proc/self/limits``, ``/proc/self/status``,
``ip addr`` and ``rdma system show``; the rest reads a sysfs snapshot.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json
import re

from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery.numa import gpus_from_snapshot
from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery.sysfs_values import parse_int, text_at

GPUDIRECT_MODULES = ("nvidia_peermem", "nv_peer_mem")
CAP_IPC_LOCK = 14


# --- text of tools and /proc ---------------------------------------------------------

def parse_memlock(limits_text):
    """'Max locked memory' from /proc/<pid>/limits: {soft, hard} (ints in bytes or 'unlimited'), or None."""
    for line in (limits_text or "").splitlines():
        match = re.match(r"^Max locked memory\s+(\S+)\s+(\S+)", line)
        if match:
            def conv(value):
                return "unlimited" if value == "unlimited" else parse_int(value)
            return {"soft": conv(match.group(1)), "hard": conv(match.group(2))}
    return None


def parse_cap_eff(status_text):
    """'CapEff' from /proc/<pid>/status: {cap_eff: the mask as an int, ipc_lock: bit CAP_IPC_LOCK set}.

    Both are None when the text has no readable CapEff line.
    """
    for line in (status_text or "").splitlines():
        match = re.match(r"^CapEff:\s*([0-9a-fA-F]+)\s*$", line)
        if match:
            cap_eff = int(match.group(1), 16)
            return {"cap_eff": cap_eff, "ipc_lock": bool(cap_eff & (1 << CAP_IPC_LOCK))}
    return {"cap_eff": None, "ipc_lock": None}


def parse_ip_addr(text):
    """IPv4 addresses per interface from ``ip -j -4 addr show`` (or ``ip -o -4 addr show``).

    Returns ``{ifname: ["a.b.c.d/len", ...]}`` with primary addresses first,
    or None when the text is neither format.
    """
    text = (text or "").strip()
    if not text:
        return None
    if text.startswith("["):
        links = _json_list(text)
        if links is not None:
            return _ip_json_addresses(links)
    return _ip_oneline_addresses(text)


def _json_list(text):
    try:
        data = json.loads(text)
    except ValueError:
        return None
    return data if isinstance(data, list) else None


def _primary_first(pairs):
    """[(secondary, cidr)] -> [cidr], primary addresses first, otherwise in the order given."""
    return [pair[1] for pair in sorted(pairs, key=lambda x: x[0])]


def _ip_json_addresses(links):
    out = {}
    for link in links:
        if not isinstance(link, dict) or not link.get("ifname"):
            continue
        addrs = []
        for info in link.get("addr_info") or []:
            if info.get("family", "inet") == "inet" and info.get("local"):
                addrs.append((bool(info.get("secondary")), "%s/%s" % (info["local"], info.get("prefixlen", 32))))
        out[link["ifname"]] = _primary_first(addrs)
    return out


def _ip_oneline_addresses(text):
    out = {}
    for line in text.splitlines():
        match = re.match(r"^\d+:\s+(\S+)\s+inet\s+(\d+\.\d+\.\d+\.\d+/\d+)(.*)$", line)
        if match:
            name = match.group(1).split("@")[0]
            out.setdefault(name, []).append((" secondary" in match.group(3), match.group(2)))
    if not out:
        return None
    return dict((name, _primary_first(pairs)) for name, pairs in out.items())


def parse_netns_mode(text):
    """'shared' / 'exclusive' from ``rdma system show`` or ib_core's netns_mode parameter (Y/N/1/0)."""
    if text is None:
        return None
    match = re.search(r"\bnetns\s+(shared|exclusive)\b", text)
    if match:
        return match.group(1)
    value = text.strip().upper()
    if value in ("Y", "1"):
        return "shared"
    if value in ("N", "0"):
        return "exclusive"
    return None


# --- the snapshot ----------------------------------------------------------------

def cpu_governors(snap):
    """{cpuN: governor} from the snapshot."""
    out = {}
    for key, value in snap.items():
        match = re.match(r"^devices/system/cpu/(cpu\d+)/cpufreq/scaling_governor$", key)
        if match and isinstance(value, str) and value.strip():
            out[match.group(1)] = value.strip()
    return out


def gpu_pci_functions(snap):
    """PCI functions that are NVIDIA GPUs (vendor 0x10de, display/3D class)."""
    out = []
    for key, value in snap.items():
        match = re.match(r"^bus/pci/devices/([^/]+)/vendor$", key)
        if match and isinstance(value, str) and value.strip().lower() == "0x10de":
            cls = text_at(snap, "bus/pci/devices/%s/class" % match.group(1)) or ""
            if cls.lower().startswith(("0x0300", "0x0302")):
                out.append(match.group(1))
    return sorted(out)


def loaded_modules(snap):
    """Kernel modules the snapshot shows (``module/<name>/...`` keys)."""
    return sorted(set(key.split("/")[1] for key in snap if key.startswith("module/") and key.count("/") >= 2))


def governor_counts(governors):
    """{cpuN: governor} -> {governor: number of CPUs}."""
    counts = {}
    for gov in governors.values():
        counts[gov] = counts.get(gov, 0) + 1
    return counts


def complete_host(host, snap, modules):
    """The host facts given, completed from the snapshot where they are missing (a new dict)."""
    host = dict(host or {})
    host.setdefault("cpu_governors", cpu_governors(snap))
    if "netns_mode" not in host or host["netns_mode"] is None:
        host["netns_mode"] = parse_netns_mode(text_at(snap, "module/ib_core/parameters/netns_mode"))
    if "gpudirect_module" not in host:
        host["gpudirect_module"] = next((m for m in GPUDIRECT_MODULES if m in modules), None)
    host["gpus"] = _gpus(host.get("gpus"), snap, modules)
    return host


def _gpus(given, snap, modules):
    """{present, evidence, pci, devices}: the evidence given (e.g. nvidia-smi) plus the snapshot's."""
    gpus = dict(given or {})
    evidence = list(gpus.get("evidence") or [])
    pci_gpus = gpu_pci_functions(snap)
    if pci_gpus:
        evidence.append("%d NVIDIA PCI GPU function(s)" % len(pci_gpus))
    if "nvidia" in modules:
        evidence.append("nvidia module loaded")
    gpus["evidence"] = evidence
    gpus["present"] = bool(evidence)
    gpus["pci"] = pci_gpus
    gpus["devices"] = gpus_from_snapshot(snap)
    return gpus
