# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Host facts RDMA tests depend on: memlock, CAP_IPC_LOCK, addresses, netns mode, CPU governors, GPUs / NPUs, modules (pure).

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
NVIDIA = "0x10de"
HUAWEI = "0x19e5"
# PCI class prefixes: 0x0300 VGA, 0x0302 3D controller, 0x1200 processing accelerator. Huawei's own
# display function is the BMC's VGA (Hi171x) on its servers, never an NPU: only 0x1200 counts there.
ACCELERATOR_CLASSES = {NVIDIA: ("0x0300", "0x0302", "0x1200"), HUAWEI: ("0x1200",)}
# How an accelerator was found, in the order a report lists them.
EVIDENCE_KINDS = ("driver", "device nodes", "smi", "pci")
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


def machine_identity(machine_id_text, boot_id_text, hostname_text, netns_text=None):
    """{machine_id, boot_id, hostname, netns} as read on a host (None where unread).

    From /etc/machine-id, the kernel's boot id, the host name of the host's
    UTS namespace and ``readlink /proc/self/ns/net``. Two inventory names with
    the same boot id and network namespace (or, where the namespace is
    unknown, the same host name) reach one machine's network stack
    (inventory_checks.same_machine_problems); the machine id alone is not
    enough (cloned images share it).
    """
    def first_line(text):
        line = (text or "").strip().splitlines()[0:1]
        value = line[0].strip() if line else ""
        return value[:255] or None
    return {"machine_id": first_line(machine_id_text), "boot_id": first_line(boot_id_text),
            "hostname": first_line(hostname_text), "netns": first_line(netns_text)}


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


def accelerator_pci_functions(snap, vendor):
    """PCI functions of one accelerator vendor (``NVIDIA`` or ``HUAWEI``) whose class is an accelerator's."""
    out = []
    for key, value in snap.items():
        match = re.match(r"^bus/pci/devices/([^/]+)/vendor$", key)
        if match and isinstance(value, str) and value.strip().lower() == vendor:
            cls = (text_at(snap, "bus/pci/devices/%s/class" % match.group(1)) or "").strip().lower()
            if cls.startswith(ACCELERATOR_CLASSES[vendor]):
                out.append(match.group(1))
    return sorted(out)


def gpu_pci_functions(snap):
    """PCI functions that are NVIDIA GPUs (vendor 0x10de, display / 3D / processing-accelerator class)."""
    return accelerator_pci_functions(snap, NVIDIA)


def npu_pci_functions(snap):
    """PCI functions that are Huawei Ascend NPUs (vendor 0x19e5, processing-accelerator class)."""
    return accelerator_pci_functions(snap, HUAWEI)


def loaded_modules(snap):
    """Kernel modules the snapshot shows (``module/<name>/...`` keys)."""
    return sorted(set(key.split("/")[1] for key in snap if key.startswith("module/") and key.count("/") >= 2))


def governor_counts(governors):
    """{cpuN: governor} -> {governor: number of CPUs}."""
    counts = {}
    for gov in governors.values():
        counts[gov] = counts.get(gov, 0) + 1
    return counts


# DMI vendor / product names (lower case) of virtual machines; an EC2 "*.metal" instance is bare metal.
VM_MARKERS = ("qemu", "kvm", "vmware", "virtualbox", "innotek", "xen", "hvm domu", "virtual machine",
              "google compute engine", "openstack", "bhyve", "parallels", "alibaba cloud ecs", "amazon ec2")


def virtual_machine(snap):
    """The platform's name when the host is a virtual machine (its DMI vendor and product, or the hypervisor
    type), else None: in a VM the PCIe links a passed-through device reports are the virtual slot's."""
    vendor = text_at(snap, "class/dmi/id/sys_vendor") or ""
    product = text_at(snap, "class/dmi/id/product_name") or ""
    hypervisor = text_at(snap, "hypervisor/type") or ""
    name = " ".join(part for part in (vendor, product) if part)
    lowered = name.lower()
    if any(marker in lowered for marker in VM_MARKERS) and not product.endswith(".metal"):
        return name
    return hypervisor or None


def complete_host(host, snap, modules):
    """The host facts given, completed from the snapshot where they are missing (a new dict)."""
    host = dict(host or {})
    host.setdefault("cpu_governors", cpu_governors(snap))
    host.setdefault("virtual", virtual_machine(snap))
    if "netns_mode" not in host or host["netns_mode"] is None:
        host["netns_mode"] = parse_netns_mode(text_at(snap, "module/ib_core/parameters/netns_mode"))
    if "gpudirect_module" not in host:
        host["gpudirect_module"] = next((m for m in GPUDIRECT_MODULES if m in modules), None)
    # A pod sees every PCI function of its node in /sys, whether or not it was given a GPU / NPU; what
    # it was given shows as device nodes, the driver or the SMI tool: in a pod only those count.
    count_pci = not host.get("pod")
    host["gpus"] = _gpus(host.get("gpus"), snap, modules, count_pci)
    host["npus"] = _accelerators(host.get("npus"), npu_pci_functions(snap), "Huawei PCI NPU", count_pci)
    return host


def _gpus(given, snap, modules, count_pci=True):
    """{present, evidence, found_by, pci_only, pci, devices}: the evidence given (nvidia-smi...) and the snapshot's."""
    gpus = _accelerators(given, gpu_pci_functions(snap), "NVIDIA PCI GPU", count_pci)
    if "nvidia" in modules:
        gpus["evidence"].append("nvidia module loaded")
        gpus["found_by"] = found_by_order(gpus["found_by"] + ["driver"])
        gpus["present"] = True
        gpus["pci_only"] = False
    gpus["devices"] = gpus_from_snapshot(snap)
    return gpus


def _accelerators(given, pci, what, count_pci):
    """{present, evidence, found_by, pci_only, pci}: the evidence given plus the PCI functions when they count."""
    acc = dict(given or {})
    evidence = list(acc.get("evidence") or [])
    found_by = list(acc.get("found_by") or [])
    if pci and count_pci:
        evidence.append("%d %s function(s)" % (len(pci), what))
        found_by.append("pci")
    elif pci:
        acc["not_counted"] = ["%d %s function(s) in the node's /sys (a pod sees them all)" % (len(pci), what)]
    acc["evidence"] = evidence
    acc["found_by"] = found_by_order(found_by)
    acc["pci_only"] = acc["found_by"] == ["pci"]
    acc["present"] = bool(evidence)
    acc["pci"] = pci
    return acc


def found_by_order(kinds):
    """The evidence kinds, each once, in EVIDENCE_KINDS order."""
    return [kind for kind in EVIDENCE_KINDS if kind in kinds]
