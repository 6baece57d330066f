# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What is wrong before any traffic: findings about ports, devices and the host (pure).

Each finding is ``{severity, code, device, port, message, fix}``; each
``_<code>`` function below decides one kind and returns it or None.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery.sysfs_values import port_fabric

SEVERITIES = ("error", "warning", "info")
MEMLOCK_WARN_BYTES = 1 << 30
ROCE_GOOD_MTU = 4200


def finding(severity, code, message, fix, device=None, port=None):
    return {"severity": severity, "code": code, "device": device, "port": port, "message": message, "fix": fix}


def sort_findings(findings):
    """Errors first, then warnings, then infos; by device, port and code within each."""
    order = dict((s, i) for i, s in enumerate(SEVERITIES))
    return sorted(findings, key=lambda f: (order.get(f["severity"], 9), f.get("device") or "",
                                           f.get("port") or 0, f["code"]))


def failing_findings(findings, fail_on):
    """The findings at or above ``fail_on`` (``error`` or ``warning``; ``never``: none), in their order."""
    if fail_on not in SEVERITIES[:2]:
        return []
    levels = SEVERITIES[:SEVERITIES.index(fail_on) + 1]
    return [f for f in findings or [] if isinstance(f, dict) and f.get("severity") in levels]


def failing_message(failing, fail_on):
    """What a host failed by ``fail_on`` is told: how many findings, and their codes (each once)."""
    codes = []
    for item in failing:
        if item.get("code") not in codes:
            codes.append(item.get("code"))
    return "%d finding(s) at or above '%s': %s" % (len(failing), fail_on, ", ".join(str(c) for c in codes))


def _present(items):
    return [item for item in items if item]


# --- one port ------------------------------------------------------------------------

class _Port(object):
    """One port as the finding functions read it, with the discovery options that apply to it."""

    def __init__(self, device, port, expected_rate_gbps, subnet, selection, addresses):
        self.record = port
        self.device = device["name"]
        self.num = port["port"]
        self.where = "%s port %s" % (self.device, self.num)
        self.state = port.get("state")
        self.phys = port.get("phys_state")
        self.link_layer = port.get("link_layer")
        self.netdev = port.get("netdev")
        self.active = self.state in ("ACTIVE", "ACTIVE_DEFER")
        # RoCE only: not the 'Unknown' link layer of an AWS EFA port, nor an iWARP (RNIC) port, which have no
        # RoCE GIDs to choose from
        self.fabric = port.get("fabric") or port_fabric(self.link_layer)
        self.roce = self.fabric == "RoCE"
        self.expected_rate_gbps = expected_rate_gbps
        self.subnet = subnet
        self.selection = selection
        self.addresses = addresses

    def finding(self, severity, code, message, fix):
        return finding(severity, code, message, fix, self.device, self.num)


def port_findings(device, port, expected_rate_gbps=None, subnet=None, selection=None, addresses=None):
    """Findings about one port (state, link, rate, GID, netdev, counters)."""
    view = _Port(device, port, expected_rate_gbps, subnet, selection, addresses)
    checks = [_port_state, _phys_state_polling, _rate_below_expected]
    if view.roce:
        checks += [_roce_v2_gid, _gid_address_mismatch, _netdev, _roce_mtu_small]
    elif view.fabric == "iWARP":
        checks += [_netdev]     # iWARP runs over the netdev's TCP/IP (rdma_cm): no GID index to choose
    checks.append(_port_error_counters)
    return _present(check(view) for check in checks)


def _port_state(view):
    """port_down / port_not_active / port_state_unknown."""
    if view.state == "DOWN":
        return view.finding("error", "port_down",
                            "%s is DOWN (physical state %s)." % (view.where, view.phys or "unknown"),
                            _port_down_fix(view))
    if view.state in ("INIT", "ARMED"):
        if view.link_layer == "InfiniBand":
            msg = "%s is %s: the link is up but no subnet manager has activated the port." % (view.where, view.state)
            fix = "Start or check the subnet manager (opensm, or the switch's SM) for this fabric; see sminfo."
        else:
            msg = "%s is %s, not ACTIVE." % (view.where, view.state)
            fix = "Check the netdev %s and the driver (dmesg)." % (view.netdev or "")
        return view.finding("error", "port_not_active", msg, fix)
    if view.state is None:
        return view.finding("warning", "port_state_unknown", "%s: the port state cannot be read." % view.where,
                            "Check that the RDMA driver is loaded and healthy (dmesg).")
    return None


def _port_down_fix(view):
    if view.phys == "LinkUp":
        return _down_with_link_up_fix(view)
    if view.phys == "Polling":
        return ("No link partner: check the cable/transceiver (mlxlink -d %s -m), that the peer switch port is "
                "up and the link speeds match." % view.device)
    if view.phys == "Disabled":
        return ("The port is disabled: bring up %s (ip link set %s up) or enable the port "
                "(ibportstate / mlxlink --port_state UP)." % (view.netdev or "its netdev", view.netdev or "<netdev>"))
    return "Check the cable and the peer port, then the driver (dmesg | grep %s)." % view.device


def _down_with_link_up_fix(view):
    """DOWN on a physical link that is up: the cable and the peer port are fine, what keeps the port down is
    logical (typically an SR-IOV VF in a pod)."""
    vf = "for an SR-IOV VF set its link state to follow the PF (ip link set <PF netdev> vf <N> state auto)"
    if view.link_layer == "InfiniBand":
        return ("The physical link is up (cable and peer port are fine) but the port stays logically DOWN: %s, "
                "give the VF a node and a port GUID (ip link set <PF netdev> vf <N> node_guid ... port_guid ...) "
                "and run a subnet manager with virtualization enabled (opensm virt_enabled 2); on a PF check "
                "the subnet manager (sminfo) and the switch port." % vf)
    return ("The physical link is up (cable and peer port are fine) but the port is DOWN: bring up its netdev "
            "%s (ip link set %s up); %s." % (view.netdev or "", view.netdev or "<netdev>", vf))


def _phys_state_polling(view):
    if view.phys != "Polling":
        return None
    return view.finding("error", "phys_state_polling",
                        "%s physical state is Polling: it is looking for a link partner and finds none." % view.where,
                        "Reseat or replace the cable/transceiver and check the peer (switch) port is enabled; "
                        "mlxlink -d %s -m shows cable and lane details." % view.device)


def _rate_below_expected(view):
    rate = view.record.get("rate_gbps")
    expected = view.expected_rate_gbps
    if not (view.active and expected and rate is not None and rate < float(expected)):
        return None
    return view.finding("warning", "rate_below_expected",
                        "%s runs at %s Gb/s, expected %s Gb/s." % (view.where, rate, _num(expected)),
                        "A lower rate means fewer lanes or a lower speed negotiated: check the cable, "
                        "the switch port speed and mlxlink -d %s (FEC, width)." % view.device)


def _roce_v2_gid(view):
    """no_roce_v2_gid, or multiple_roce_v2_gids when the choice was a tie-break and no subnet was given."""
    if view.record.get("gid_index") is None:
        if view.subnet:
            msg = "%s has no RoCE v2 GID with an IPv4 address in %s." % (view.where, view.subnet)
        else:
            msg = "%s has no RoCE v2 GID with an IPv4 address%s." % (
                view.where, " (netdev %s)" % view.netdev if view.netdev else "")
        fix = ("Give %s an IPv4 address (the kernel then adds the RoCE v2 GID); in a pod, the RDMA device and "
               "its netdev must be in the pod's network namespace." % (view.netdev or "the port's netdev"))
        return view.finding("error" if view.active else "warning", "no_roce_v2_gid", msg, fix)
    candidates = (view.selection or {}).get("candidates") or []
    if len(candidates) > 1 and not view.subnet:
        return view.finding("info", "multiple_roce_v2_gids",
                            "%s has several RoCE v2 IPv4 GIDs (indexes %s); using %s." % (
                                view.where, ", ".join(str(c) for c in candidates), view.record["gid_index"]),
                            "Set subnet (commcheck_subnet) to choose the network the tests use.")
    return None


def _gid_address_mismatch(view):
    if view.addresses is None or not view.netdev or view.record.get("gid_index") is None:
        return None
    gid_ips = set(g["ipv4"] for g in view.record.get("gids") or [] if g.get("ipv4"))
    ips = set(a.split("/")[0] for a in view.addresses)
    if not ips or ips & gid_ips:
        return None
    return view.finding("warning", "gid_address_mismatch",
                        "%s: the GIDs' IPv4 addresses (%s) are not the addresses of %s (%s)." % (
                            view.where, ", ".join(sorted(gid_ips)), view.netdev, ", ".join(sorted(ips))),
                        "The GID table follows the netdev's addresses; check the addresses are on the "
                        "port's netdev itself (not only on an upper device) and the RDMA driver.")


def _netdev(view):
    """no_netdev / netdev_down (an ACTIVE port whose netdev is not up)."""
    if not view.netdev:
        return view.finding("warning", "no_netdev", "%s (%s) has no network device." % (view.where, view.fabric),
                            "Check the NIC driver (mlx5_core) and that the netdev is in this network namespace.")
    netdev_state = view.record.get("netdev_state")
    if view.active and netdev_state not in (None, "up", "unknown"):
        return view.finding("warning", "netdev_down",
                            "%s is ACTIVE but its netdev %s is %s." % (view.where, view.netdev, netdev_state),
                            "ip link set %s up, and check its addresses." % view.netdev)
    return None


def _roce_mtu_small(view):
    mtu = view.record.get("netdev_mtu")
    if not (view.active and mtu is not None and mtu < ROCE_GOOD_MTU):
        return None
    return view.finding("info", "roce_mtu_small",
                        "%s: netdev %s MTU is %s, so the RoCE path MTU is at most %s bytes." % (
                            view.where, view.netdev, mtu, _ib_mtu_for(mtu)),
                        "Use an MTU of at least 4200 (jumbo frames, e.g. 9000) on hosts and switches "
                        "for full RDMA bandwidth.")


def _port_error_counters(view):
    counters = view.record.get("counters") or {}
    bad = dict((k, v) for k, v in counters.items() if k in ("symbol_error", "link_downed") and v)
    if not bad:
        return None
    return view.finding("info", "port_error_counters",
                        "%s error counters since boot: %s." % (
                            view.where, ", ".join("%s=%s" % (k, bad[k]) for k in sorted(bad))),
                        "Rising symbol_error/link_downed counts mean a marginal cable or transceiver; "
                        "watch them during the tests.")


def _num(value):
    value = float(value)
    return int(value) if value == int(value) else value


def _ib_mtu_for(netdev_mtu):
    best = 256
    for size in (256, 512, 1024, 2048, 4096):
        if size + 100 <= netdev_mtu:
            best = size
    return best


# --- across devices ------------------------------------------------------------------

def device_findings(devices, expected_rate_gbps=None, virtual=None):
    """Findings about whole devices: bonds, degraded PCIe links, IOMMU translation, rates that differ between
    like ports."""
    out = []
    for device in devices:
        if device.get("bond"):
            out.extend(_bond_findings(device["name"], device["bond"]))
        out.extend(_present([_pcie_link_degraded(device, virtual), _iommu_translated(device, virtual)]))
    if not expected_rate_gbps:
        out.extend(_rate_inconsistent(devices))
    return out


def _bond_findings(name, bond):
    """bond_device (info) and bond_slave_down."""
    out = [finding("info", "bond_device",
                   "%s is a RoCE LAG over %s (slaves %s%s)." % (
                       name, bond["netdev"], ", ".join(bond["slaves"]),
                       ", mode %s" % bond["mode"] if bond.get("mode") else ""),
                   "Tests through a bond use one slave per connection; run with several QPs "
                   "(perftest -q) to use both.", name, None)]
    down = sorted(s for s, st in (bond.get("slave_states") or {}).items() if st not in (None, "up", "unknown"))
    if down:
        out.append(finding("warning", "bond_slave_down",
                           "%s: bond %s slave(s) %s are down." % (name, bond["netdev"], ", ".join(down)),
                           "Check the cables and switch ports of %s." % ", ".join(down), name, None))
    return out


def pcie_gbps(speed_gts, width):
    """Usable PCIe bandwidth (Gb/s) of ``width`` lanes at ``speed_gts``: 8b/10b encoding below 8 GT/s,
    128b/130b from 8 GT/s, FLIT mode (242 of 256 bytes carry data) from 64 GT/s."""
    if speed_gts < 8:
        per_lane = speed_gts * 0.8
    elif speed_gts < 64:
        per_lane = speed_gts * 128 / 130
    else:
        per_lane = speed_gts * 242 / 256
    return per_lane * width


def _pcie_link_degraded(device, virtual=None):
    """pcie_link_degraded: the NIC's PCIe link trained below what the card supports (a slot, riser or seating
    fault, or a BIOS setting). An error when what is left is below the rate of its fastest active port; only
    an info in a virtual machine, whose passed-through devices report the virtual slot's link."""
    link = device.get("pcie") or {}
    speed, width = link.get("speed_gts"), link.get("width")
    top_speed, top_width = link.get("max_speed_gts"), link.get("max_width")
    if None in (speed, width, top_speed, top_width) or (speed >= top_speed and width >= top_width):
        return None
    usable = pcie_gbps(speed, width)
    rates = [p["rate_gbps"] for p in device.get("ports") or []
             if p.get("state") == "ACTIVE" and p.get("rate_gbps") is not None]
    limits = bool(rates) and usable < max(rates)
    message = "%s: its PCIe link runs at %s GT/s x%d, below the %s GT/s x%d the card supports (%s Gb/s left%s)." % (
        device["name"], _num(speed), width, _num(top_speed), top_width, _num(round(usable)),
        " for a %s Gb/s port" % _num(max(rates)) if limits else "")
    if virtual:
        return finding("info", "pcie_link_degraded",
                       message + " This host is a virtual machine (%s): the link it reports is the virtual "
                       "slot's, not the card's; the measured bandwidth tells." % virtual,
                       "Check LnkSta of the card on the hypervisor (lspci -vv) if the measured bandwidth is low.",
                       device["name"], None)
    return finding("error" if limits else "warning", "pcie_link_degraded", message,
                   "Reseat the card or move it to a slot of its width and generation; check the riser and the "
                   "BIOS PCIe settings (link speed, bifurcation). lspci -vv -s %s shows LnkCap and LnkSta "
                   "(downgraded)." % (device.get("pci") or "<pci address>"), device["name"], None)


def _iommu_translated(device, virtual=None):
    """iommu_translated: the NIC's DMA goes through IOMMU translation (its IOMMU group's type is DMA or DMA-FQ),
    not passthrough: every RDMA transfer pays IOTLB lookups, which cost bandwidth at high rates, and GPUDirect
    RDMA peer-to-peer may fail. Not judged in a virtual machine (a vIOMMU is the hypervisor's choice)."""
    kind = device.get("iommu")
    if kind not in ("DMA", "DMA-FQ") or virtual:
        return None
    return finding("warning", "iommu_translated",
                   "%s: its DMA goes through IOMMU translation (IOMMU group type %s), not passthrough: RDMA at high "
                   "rates loses bandwidth to IOTLB misses and GPUDirect RDMA may not work." % (device["name"], kind),
                   "Boot with the IOMMU in passthrough (kernel command line iommu=pt, with intel_iommu=on or "
                   "amd_iommu=on where it must stay on), or disable it where nothing needs it.",
                   device["name"], None)


def _rate_inconsistent(devices):
    """Active ports slower than the fastest port of the same HCA type and link layer on this host."""
    groups = {}
    for device in devices:
        for port in device["ports"]:
            if port.get("state") == "ACTIVE" and port.get("rate_gbps") is not None:
                key = (device.get("hca_type"), port.get("link_layer"))
                groups.setdefault(key, []).append((device["name"], port))
    out = []
    for key, members in sorted(groups.items(), key=lambda kv: str(kv[0])):
        if len(members) < 2:
            continue
        top = max(member[1]["rate_gbps"] for member in members)
        for name, port in members:
            if port["rate_gbps"] < top:
                out.append(finding("warning", "rate_inconsistent",
                                   "%s port %s runs at %s Gb/s while other %s ports of this host run at %s Gb/s." % (
                                       name, port["port"], port["rate_gbps"], key[0] or "like", top),
                                   "Check the cable and switch port of this link (mlxlink -d %s); set "
                                   "expected_rate_gbps to check against a fixed rate." % name,
                                   name, port["port"]))
    return out


# --- the host ------------------------------------------------------------------------

def host_findings(devices, host):
    """Host-level findings: no devices, netns, memlock and CAP_IPC_LOCK, governor, perftest, GPUDirect."""
    return _present(check(devices, host) for check in (
        _no_rdma_devices, _rdma_netns_exclusive, _memlock_limited, _ipc_lock_missing,
        _cpu_governor_not_performance, _perftest_missing, _gpudirect_module_missing))


def _no_rdma_devices(devices, host):
    if devices:
        return None
    if host.get("sysfs_error"):
        msg = "No RDMA devices: %s." % host["sysfs_error"]
    else:
        msg = "No RDMA devices under %s/class/infiniband." % (host.get("sysfs_root") or "/sys").rstrip("/")
    return finding("error", "no_rdma_devices", msg,
                   "Load the NIC's RDMA driver (mlx5_core + mlx5_ib, ib_uverbs) and check lspci; in a pod, request "
                   "the RDMA device resource (e.g. rdma/hca or an SR-IOV VF) or use host networking.")


def _rdma_netns_exclusive(devices, host):
    """In a container (or with no device at all): info with devices, error without."""
    if host.get("netns_mode") != "exclusive" or not (host.get("in_container") or not devices):
        return None
    if devices:
        return finding("info", "rdma_netns_exclusive",
                       "The RDMA subsystem is in exclusive network-namespace mode: this container sees "
                       "only the %d device(s) moved into its namespace." % len(devices),
                       "Nothing to do if these are the devices the tests should use; otherwise move "
                       "devices with rdma dev set DEV netns NS.", None, None)
    return finding("error", "rdma_netns_exclusive",
                   "The RDMA subsystem is in exclusive network-namespace mode and no RDMA device is "
                   "in this network namespace.",
                   "Move a device into this namespace (rdma dev set DEV netns NS; the RDMA device "
                   "plugin / SR-IOV CNI does this for pods) or switch the host to shared mode "
                   "(rdma system set netns shared).", None, None)


def _memlock_soft_limit(host):
    """The soft RLIMIT_MEMLOCK in bytes, or None when it is unlimited or unknown."""
    soft = (host.get("memlock") or {}).get("soft")
    return None if soft in (None, "unlimited") else soft


def _memlock_text(host):
    memlock = host.get("memlock") or {}
    return "RLIMIT_MEMLOCK is %s (soft) / %s (hard)" % (_bytes(memlock.get("soft")), _bytes(memlock.get("hard")))


def _memlock_limited(devices, host):
    """A limited memlock while CAP_IPC_LOCK is unknown (warning) or held (info: the limit does not bind).

    Without CAP_IPC_LOCK, ipc_lock_missing reports the limit with both fixes.
    """
    soft = _memlock_soft_limit(host)
    if soft is None or host.get("ipc_lock") is False:
        return None
    if host.get("ipc_lock"):
        return finding("info", "memlock_limited",
                       "%s, but this process holds CAP_IPC_LOCK, so RDMA memory registration is not bound by it; "
                       "a test process without that capability would be." % _memlock_text(host),
                       "Nothing to do while the tests run with CAP_IPC_LOCK (as root); otherwise set memlock to "
                       "unlimited.", None, None)
    return finding("warning" if soft < MEMLOCK_WARN_BYTES else "info", "memlock_limited",
                   "%s: large RDMA buffers fail to register (perftest: \"Couldn't allocate MR\")." % (
                       _memlock_text(host)),
                   "Set memlock to unlimited: '* - memlock unlimited' in /etc/security/limits.d/ (new "
                   "login), LimitMEMLOCK=infinity for services, or a pod with IPC_LOCK and no memlock "
                   "limit (container runtime --ulimit memlock=-1).", None, None)


def _ipc_lock_missing(devices, host):
    """No CAP_IPC_LOCK and a limited memlock: error below MEMLOCK_WARN_BYTES, warning above."""
    soft = _memlock_soft_limit(host)
    if host.get("ipc_lock") is not False or soft is None:
        return None
    cap_eff = host.get("cap_eff")
    return finding("error" if soft < MEMLOCK_WARN_BYTES else "warning", "ipc_lock_missing",
                   "This process lacks CAP_IPC_LOCK (CapEff %s) and %s: RDMA memory registration beyond the "
                   "limit fails (perftest: \"Couldn't allocate MR\"; NCCL: ibv_reg_mr failed with "
                   "Cannot allocate memory)." % (_cap_eff_text(cap_eff), _memlock_text(host)),
                   "Give the test processes CAP_IPC_LOCK (root on the host has it, root in a container "
                   "usually not; pod: securityContext.capabilities.add: [\"IPC_LOCK\"], which reaches a root "
                   "container user only), or raise memlock to unlimited ('* - memlock unlimited' in "
                   "/etc/security/limits.d/, LimitMEMLOCK=infinity, container runtime --ulimit memlock=-1).",
                   None, None)


def _cpu_governor_not_performance(devices, host):
    governors = host.get("cpu_governors") or {}
    other = dict((cpu, gov) for cpu, gov in governors.items() if gov != "performance")
    if not other:
        return None
    counts = {}
    for gov in other.values():
        counts[gov] = counts.get(gov, 0) + 1
    return finding("warning", "cpu_governor_not_performance",
                   "%d of %d CPUs are not on the performance governor (%s): latency and bandwidth "
                   "results vary (perftest warns about conflicting CPU frequency)." % (
                       len(other), len(governors), ", ".join("%s: %d" % (g, counts[g]) for g in sorted(counts))),
                   "Use the clusterops.commcheck.cpu_governor module (governor: performance) for the "
                   "test and restore afterwards, or cpupower frequency-set -g performance.", None, None)


def _perftest_missing(devices, host):
    if host.get("perftest") is not None or not host.get("perftest_checked", True):
        return None
    return finding("warning", "perftest_missing",
                   "perftest (ib_write_bw) is not installed; RDMA bandwidth/latency tests cannot run.",
                   "Install perftest (apt install perftest / dnf install perftest) or use an image that "
                   "has it.", None, None)


def _gpudirect_module_missing(devices, host):
    gpus = host.get("gpus") or {}
    if not gpus.get("present") or host.get("gpudirect_module"):
        return None
    return finding("warning", "gpudirect_module_missing",
                   "NVIDIA GPUs are present (%s) but neither nvidia_peermem nor nv_peer_mem is loaded: "
                   "GPUDirect RDMA is off unless DMA-BUF is used." % ", ".join(gpus.get("evidence") or []),
                   "modprobe nvidia_peermem (ships with the NVIDIA driver; load it at boot), or use "
                   "DMA-BUF (open kernel modules, NCCL_DMABUF_ENABLE=1).", None, None)


def _cap_eff_text(cap_eff):
    return "unknown" if cap_eff is None else "%016x" % cap_eff


def _bytes(value):
    if value in (None, "unlimited"):
        return value or "unknown"
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if value >= size and value % size == 0:
            return "%d %s" % (value // size, unit)
    return "%d bytes" % value
