# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Faults to inject into a lab (tests/lab/lab.py), each with its own undo.

Used by benchmarks/bench_accuracy.py and the lab tests that check what the
verdict names. Every fault is an object with ``inject()``, ``during(line)``
(called with each line of ansible-playbook output, for faults that must hit
mid-run) and ``heal()``; ``heal`` is safe to call twice and after a failed
``inject``. Nothing here knows what the product will conclude: a fault only
describes what was broken (``expected``), in the words of the culprit model
(component, host, peer, rail).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os
import signal
import subprocess


def culprit(component, host, peer=None, rail=None):
    """One injected fault, as the culprit the verdict should name."""
    return {"component": component, "host": host, "peer": peer, "rail": rail}


class Fault(object):
    """Base: nothing injected; subclasses override what they need."""

    name = "healthy"
    checks = ("discover", "rdma")
    # one-click options the scenario needs on top of the bench's (a latency fault needs the latency tests)
    extra_vars = {}
    # per-host inventory variables the scenario adds (an inventory read after the lab's: ``commcheck_topology``)
    inventory_overlay = None

    def __init__(self, lab):
        self.lab = lab

    @property
    def expected(self):
        return []

    def inject(self):
        pass

    def during(self, line):
        pass

    def heal(self):
        self.lab.heal()


class SlowHost(Fault):
    """Every rail of one host shaped down (a bad host: PCIe, NUMA, CPU, driver)."""

    name = "slow host"

    def __init__(self, lab, host, rate):
        super(SlowHost, self).__init__(lab)
        self.host, self.rate = host, rate

    @property
    def expected(self):
        return [culprit("host", self.host)]

    def inject(self):
        self.lab.slow(self.host, self.rate)


class SlowRail(SlowHost):
    """One rail (one NIC) of one host shaped down."""

    name = "slow NIC"

    def __init__(self, lab, host, rate, rail):
        super(SlowRail, self).__init__(lab, host, rate)
        self.rail = rail

    @property
    def expected(self):
        return [culprit("nic", self.host, rail=self.rail)]

    def inject(self):
        self.lab.slow(self.host, self.rate, rail=self.rail)


class SlowTcpHost(SlowHost):
    """One host slow on the path the TCP check uses (its address, on the lab's rail 0), with the TCP check alone:
    iperf3 between hosts must name it as the RDMA check would."""

    name = "slow host, TCP check"
    checks = ("discover", "tcp")

    def inject(self):
        self.lab.slow(self.host, self.rate, rail=0)


class SlowTransmit(SlowRail):
    """One NIC of one host slow only in what it sends (a bad transmit lane, a degraded TX SerDes): its links
    fail in one direction only, so only a test that makes it send shows it."""

    name = "slow NIC, transmit only"

    def inject(self):
        self.lab.slow(self.host, self.rate, rail=self.rail, direction="tx")


class SlowPlane(Fault):
    """One rail slow on every host: the switch plane of that rail (a degraded leaf or spine), not any one node."""

    name = "slow rail plane"

    def __init__(self, lab, rate, rail):
        super(SlowPlane, self).__init__(lab)
        self.rate, self.rail = rate, rail

    @property
    def expected(self):
        return [culprit("fabric", None, rail=self.rail)]

    def inject(self):
        for host in self.lab.hosts:
            self.lab.slow(host, self.rate, rail=self.rail)


class SlowLink(Fault):
    """Only the path between two hosts on one rail (a cable or a switch port)."""

    name = "slow link"

    def __init__(self, lab, host, peer, rate, rail=0):
        super(SlowLink, self).__init__(lab)
        self.host, self.peer, self.rate, self.rail = host, peer, rate, rail

    @property
    def expected(self):
        return [culprit("link", self.host, self.peer, self.rail)]

    def inject(self):
        self.lab.slow_pair(self.host, self.peer, self.rate, rail=self.rail)


class FlakyLink(SlowLink):
    """A transient slowdown of one link: slow for the check's own rounds, gone again when the retests start.

    That is what "flaky" means to an operator (a burst of congestion, a port that renegotiated): the
    first measurement fails and a repeat a few seconds later passes. The retests are recognised by the
    playbook's task names (``during``), so the timing never depends on the machine's speed.
    """

    name = "flaky link"
    RETEST_TASK = "retest"

    def __init__(self, lab, host, peer, rate, rail=0):
        super(FlakyLink, self).__init__(lab, host, peer, rate, rail)
        self.healed = False

    @property
    def expected(self):
        return [culprit("flaky", self.host, self.peer, self.rail)]

    def inject(self):
        self.healed = False
        super(FlakyLink, self).inject()

    def during(self, line):
        if not self.healed and line.startswith("TASK [") and self.RETEST_TASK in line.lower():
            self.lab.heal(self.host)
            self.healed = True


class HungSide(Fault):
    """The first perftest server (or client) process on host stops itself (SIGSTOP) as it starts.

    The lab's perftest emulator takes the request from a file in the host's emulated sysfs root
    (``hang_if_asked`` in tests/lab/emulators/perftest_emulator.py), so the first process of that side
    hangs however fast or slow the machine is (a watcher polling for the process could miss a short
    test on a busy machine).
    """

    def __init__(self, lab, host, side="server"):
        super(HungSide, self).__init__(lab)
        self.host, self.side = host, side
        self.name = "hung perftest %s" % side
        self._healed = []

    @property
    def expected(self):
        return [culprit("host", self.host)]

    def _path(self):
        return os.path.join(self.lab.sysfs_root(self.host), "commcheck-lab", "perftest_hang_%s" % self.side)

    @property
    def stopped(self):
        """The pids that stopped themselves (one at most), also after ``heal``."""
        try:
            with open(self._path() + ".taken") as handle:
                # the request's own line, then the pid the emulator appended
                return [int(word) for word in handle.read().split() if word.isdigit()]
        except OSError:
            return list(self._healed)

    def inject(self):
        os.makedirs(os.path.dirname(self._path()), exist_ok=True)
        with open(self._path(), "w") as handle:
            handle.write("the first perftest %s on this host hangs (lab fault)\n" % self.side)

    def heal(self):
        self._healed = self.stopped or self._healed
        for pid in self._healed:
            for sig in (signal.SIGCONT, signal.SIGKILL):
                try:
                    os.kill(pid, sig)
                except OSError:
                    pass
        for path in (self._path(), self._path() + ".taken"):
            if os.path.exists(path):
                os.remove(path)
        self.lab.heal()


class LostHost(Fault):
    """A host drops off every rail once the pair tests begin (its bridge ports go down)."""

    name = "host lost mid-run"
    MARK = "Run every round of this host"

    def __init__(self, lab, host):
        super(LostHost, self).__init__(lab)
        self.host = host
        self.lost = False

    @property
    def expected(self):
        return [culprit("host", self.host)]

    def _links(self, state):
        for rail in self.lab.host(self.host)["rails"]:
            subprocess.run(["ip", "link", "set", rail["peer"], state], check=False,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def during(self, line):
        if not self.lost and self.MARK in line:
            self.lost = True
            self._links("down")

    def heal(self):
        self._links("up")
        self.lab.heal()


class SysfsWrite(Fault):
    """Values written into a host's emulated sysfs, restored on heal."""

    def __init__(self, lab, host):
        super(SysfsWrite, self).__init__(lab)
        self.host = host
        self._saved = {}

    def _write(self, rel, text):
        path = os.path.join(self.lab.sysfs_root(self.host), rel)
        if path not in self._saved:
            with open(path) as handle:
                self._saved[path] = handle.read()
        with open(path, "w") as handle:
            handle.write(text)

    def heal(self):
        for path, text in self._saved.items():
            with open(path, "w") as handle:
                handle.write(text)
        self._saved = {}
        self.lab.heal()


class NicSysfsWrite(SysfsWrite):
    """Values written into the emulated sysfs of one NIC (one rail) of a host: that NIC is the culprit."""

    def __init__(self, lab, host, rail):
        super(NicSysfsWrite, self).__init__(lab, host)
        self.rail = rail

    @property
    def expected(self):
        return [culprit("nic", self.host, rail=self.rail)]


class PortDown(NicSysfsWrite):
    """One RDMA port reads DOWN / Disabled in the host's sysfs."""

    name = "port down"

    def inject(self):
        device = self.lab.host(self.host)["rails"][self.rail]["device"]
        port = os.path.join("class", "infiniband", device, "ports", "1")
        self._write(os.path.join(port, "state"), "1: DOWN\n")
        self._write(os.path.join(port, "phys_state"), "3: Disabled\n")


class PcieDowngraded(NicSysfsWrite):
    """One NIC's PCIe link trained low (Gen3 x4 in its Gen4 x16 slot: a seating or riser fault) and its rail
    slowed to match: discovery reads the link from the host's emulated sysfs, the tests measure the rail."""

    name = "PCIe link degraded"

    def __init__(self, lab, host, rate, rail):
        super(PcieDowngraded, self).__init__(lab, host, rail)
        self.rate = rate

    def inject(self):
        device = self.lab.host(self.host)["rails"][self.rail]["device"]
        pci = os.path.join("class", "infiniband", device, "device")
        self._write(os.path.join(pci, "current_link_speed"), "8.0 GT/s PCIe\n")
        self._write(os.path.join(pci, "current_link_width"), "4\n")
        self.lab.slow(self.host, self.rate, rail=self.rail)


class RateDowngraded(NicSysfsWrite):
    """One port negotiated half its rate (fewer lanes or a lower speed: a cable, transceiver or switch-port
    setting) and its rail moves half as much: the pairs of that NIC measure what its own port reports, so
    only a comparison with its like ports (the host's other NICs, the fleet) shows it."""

    name = "port rate downgraded"

    def inject(self):
        import lab as lablib   # pylint: disable=import-outside-toplevel
        import sysfs_tree      # pylint: disable=import-outside-toplevel
        nominal = lablib.rate_gbps(self.lab.rate) if self.lab.rate else 100
        device = self.lab.host(self.host)["rails"][self.rail]["device"]
        self._write(os.path.join("class", "infiniband", device, "ports", "1", "rate"),
                    sysfs_tree.rate_text(nominal / 2.0) + "\n")
        self.lab.slow(self.host, "%dbit" % (nominal / 2.0 * 1e9), rail=self.rail)


class MissingNic(Fault):
    """One NIC is gone from a host (not passed into the pod, its driver not loaded, the card dead): its
    device is missing from the host's emulated sysfs while its like hosts have it."""

    name = "NIC missing"

    def __init__(self, lab, host, rail):
        super(MissingNic, self).__init__(lab)
        self.host, self.rail = host, rail
        self.moved = None

    @property
    def expected(self):
        return [culprit("nic", self.host, rail=self.rail)]

    def inject(self):
        device = self.lab.host(self.host)["rails"][self.rail]["device"]
        path = os.path.join(self.lab.sysfs_root(self.host), "class", "infiniband", device)
        self.moved = (path, os.path.join(self.lab.sysfs_root(self.host), "commcheck-lab-missing-" + device))
        os.rename(*self.moved)

    def heal(self):
        if self.moved and os.path.lexists(self.moved[1]):     # a sysfs class entry is a symbolic link
            os.rename(self.moved[1], self.moved[0])
        self.moved = None
        self.lab.heal()


class MtuMismatch(SysfsWrite):
    """One host's netdev MTU differs from the rest of the fleet (a RoCE configuration fault)."""

    name = "MTU mismatch"

    def __init__(self, lab, host, rail=0, mtu=9000):
        super(MtuMismatch, self).__init__(lab, host)
        self.rail, self.mtu = rail, mtu

    @property
    def expected(self):
        return [culprit("config", self.host, rail=self.rail)]

    def inject(self):
        netdev = self.lab.host(self.host)["rails"][self.rail]["netdev"]
        self._write(os.path.join("class", "net", netdev, "mtu"), "%d\n" % self.mtu)


class LateNic(Fault):
    """One host's NIC answers late: the lab's perftest emulator waits ``delay_us`` before each latency message
    that device sends (``answer_delay`` in tests/lab/emulators/perftest_emulator.py, read from a file in the
    host's emulated sysfs; this kernel has no netem to delay the veth itself). A retransmitting cable or
    transceiver, a congested or misconfigured port: the latency tests of its pairs fail, bandwidth holds."""

    name = "high latency NIC"
    extra_vars = {"commcheck_rdma_metrics": ["bw", "lat"]}

    def __init__(self, lab, host, rail=0, delay_us=2000):
        super(LateNic, self).__init__(lab)
        self.host, self.rail, self.delay_us = host, rail, int(delay_us)
        self.paths = []

    @property
    def expected(self):
        return [culprit("nic", self.host, rail=self.rail)]

    def _devices(self):
        return [self.lab.host(self.host)["rails"][self.rail]["device"]]

    def inject(self):
        folder = os.path.join(self.lab.sysfs_root(self.host), "commcheck-lab")
        if not os.path.isdir(folder):
            os.makedirs(folder)
        self.paths = [os.path.join(folder, "answer_delay_us_%s" % device) for device in self._devices()]
        for path in self.paths:
            with open(path, "w") as handle:
                handle.write("%d\n" % self.delay_us)

    def heal(self):
        for path in self.paths:
            if os.path.exists(path):
                os.remove(path)
        self.paths = []
        self.lab.heal()


class LateHost(LateNic):
    """Every NIC of one host answers late (the host itself: interrupt moderation, a CPU in a deep C-state,
    a busy or throttled core serving the NICs)."""

    name = "high latency host"

    def __init__(self, lab, host, delay_us=2000):
        super(LateHost, self).__init__(lab, host, rail=None, delay_us=delay_us)

    @property
    def expected(self):
        return [culprit("host", self.host)]

    def _devices(self):
        return [rail["device"] for rail in self.lab.host(self.host)["rails"]]


class LateLink(LateNic):
    """Only the path between two hosts on one rail is late, both ways (a cable or switch port that retransmits):
    each side's emulator waits before every latency message it sends to the other."""

    name = "high latency link"

    def __init__(self, lab, host, peer, rail=0, delay_us=2000):
        super(LateLink, self).__init__(lab, host, rail=rail, delay_us=delay_us)
        self.peer = peer

    @property
    def expected(self):
        return [culprit("link", self.host, self.peer, self.rail)]

    def inject(self):
        self.paths = []
        for this, other in ((self.host, self.peer), (self.peer, self.host)):
            folder = os.path.join(self.lab.sysfs_root(this), "commcheck-lab")
            if not os.path.isdir(folder):
                os.makedirs(folder)
            device = self.lab.host(this)["rails"][self.rail]["device"]
            path = os.path.join(folder, "answer_delay_us_%s_to_%s" % (device, self.lab.address(other, self.rail)))
            with open(path, "w") as handle:
                handle.write("%d\n" % self.delay_us)
            self.paths.append(path)


class SlowCollectiveNode(SlowHost):
    """One node slowed while only the collective runs: bisection must find it."""

    name = "slow node in a collective"
    checks = ("discover", "collective")


class SlowCollectiveRuns(Fault):
    """The collective runs with a rank on one host take ``factor`` times as long (a slow GPU, a throttled node);
    with ``once``, only the first run that meets it (a moment of slowness: its retest passes).

    The lab's nccl-tests emulator reads the factor from a file in the host's emulated sysfs root
    (``SLOW_FILE`` / ``SLOW_ONCE_FILE`` of tests/lab/emulators/nccl_net_emulation.py) and claims a once-only
    fault by renaming its file away; unlike shaping the host's rails, it also slows a node's runs inside itself
    (``per_node``)."""

    name = "slow collective node"
    checks = ("discover", "collective")
    SLOW_FILE = os.path.join("commcheck-lab", "nccl_slow_factor")
    SLOW_ONCE_FILE = os.path.join("commcheck-lab", "nccl_slow_once_factor")

    def __init__(self, lab, host, factor=1000, once=False):
        super(SlowCollectiveRuns, self).__init__(lab)
        self.host, self.factor, self.once = host, factor, once

    @property
    def expected(self):
        return [] if self.once else [culprit("host", self.host)]

    def _path(self):
        return os.path.join(self.lab.sysfs_root(self.host), self.SLOW_ONCE_FILE if self.once else self.SLOW_FILE)

    def inject(self):
        os.makedirs(os.path.dirname(self._path()), exist_ok=True)
        with open(self._path(), "w") as handle:
            handle.write("%s\n" % self.factor)

    def claimed(self):
        """Whether a run met the once-only fault (its file was renamed away)."""
        return self.once and not os.path.exists(self._path())

    def heal(self):
        folder = os.path.dirname(self._path())
        name = os.path.basename(self._path())
        for entry in os.listdir(folder) if os.path.isdir(folder) else []:
            if entry == name or entry.startswith(name + ".used-"):
                os.remove(os.path.join(folder, entry))
        self.lab.heal()


class SocketFallback(Fault):
    """NCCL on one host falls back from NET/IB to NET/Socket (no net plugin, NCCL_IB_HCA naming no device...).

    The lab's nccl-tests emulator reads the fault from a file in the host's emulated sysfs root
    (``FALLBACK_FILE`` of tests/lab/emulators/nccl_net_emulation.py); the RDMA devices stay healthy.
    """

    name = "NCCL falls back to Socket"
    checks = ("discover", "collective")
    FALLBACK_FILE = os.path.join("commcheck-lab", "nccl_socket_fallback")

    def __init__(self, lab, host):
        super(SocketFallback, self).__init__(lab)
        self.host = host

    @property
    def expected(self):
        return [culprit("config", self.host)]

    def _path(self):
        return os.path.join(self.lab.sysfs_root(self.host), self.FALLBACK_FILE)

    def inject(self):
        os.makedirs(os.path.dirname(self._path()), exist_ok=True)
        with open(self._path(), "w") as handle:
            handle.write("NCCL on this host finds no IB/RoCE device (lab fault)\n")

    def heal(self):
        if os.path.exists(self._path()):
            os.remove(self._path())
        self.lab.heal()


class SlowLeaf(Fault):
    """A leaf switch of one rail slow: the lab shapes that rail's port of every host behind it (so their paths
    with each other are slow too, as through the leaf) and the inventory says which leaf each host's rail hangs
    off (``commcheck_topology``: ``per_leaf`` hosts per leaf, in order, on every rail). The lab's rails are one
    bridge each, so this emulates the leaf at its hosts' ports; what the product reads is the same."""

    name = "slow leaf switch"

    def __init__(self, lab, rate, rail, per_leaf, leaf=2):
        super(SlowLeaf, self).__init__(lab)
        self.rate, self.rail, self.per_leaf, self.leaf = rate, rail, per_leaf, leaf
        self.behind = lab.hosts[(leaf - 1) * per_leaf:leaf * per_leaf]

    def leaf_name(self, rail, num):
        return "lab-leaf%d-%d" % (rail, num)

    @property
    def expected(self):
        return [dict(culprit("leaf", None, rail=self.rail), switch=[self.leaf_name(self.rail, self.leaf)])]

    @property
    def inventory_overlay(self):
        rails = range(len(self.lab.host(self.lab.hosts[0])["rails"]))
        return {"all": {"hosts": dict(
            (host, {"commcheck_topology": dict(
                (rail, {"leaf": self.leaf_name(rail, num // self.per_leaf + 1),
                        "port": "swp%d" % (num % self.per_leaf + 1)}) for rail in rails)})
            for num, host in enumerate(self.lab.hosts))}}

    def inject(self):
        for host in self.behind:
            self.lab.slow(host, self.rate, rail=self.rail)


class SlowLeafSwitch(Fault):
    """A slow leaf of a two-tier lab (``lab.py up --tiers 2``): every port of its bridge on one rail (its hosts', its
    uplink) sends at ``rate``. No ``commcheck_topology``: the product reads the leaves from the lldpctl EMULATOR."""

    name = "slow leaf switch (two-tier lab)"
    part = "leaf"

    def __init__(self, lab, rate, rail, leaf=2):
        super(SlowLeafSwitch, self).__init__(lab)
        self.rate, self.rail, self.leaf = rate, rail, lab.leaf(rail, leaf)

    @property
    def expected(self):
        return [dict(culprit(self.part, None, rail=self.rail), switch=[self.leaf["name"]])]

    def inject(self):
        self.lab.slow_leaf(self.rail, self.leaf["leaf"], self.rate)


class SlowLeafSwitchInventory(SlowLeafSwitch):
    """``SlowLeafSwitch`` with the leaves given as ``commcheck_topology`` in the inventory and lldpctl not asked:
    each leaf is renamed ``inv-...`` there, so only a leaf named from the inventory matches."""

    name = "slow leaf switch (two-tier lab, commcheck_topology)"
    extra_vars = {"commcheck_discover_topology_tools": False}

    @property
    def expected(self):
        return [dict(culprit(self.part, None, rail=self.rail), switch=["inv-" + self.leaf["name"]])]

    @property
    def inventory_overlay(self):
        return {"all": {"hosts": dict(
            (host, {"commcheck_topology": dict(
                (str(hrail["rail"]), {"leaf": "inv-" + hrail["leaf"], "port": hrail["port"]})
                for hrail in self.lab.host(host)["rails"])})
            for host in self.lab.hosts)}}


class SlowUplink(SlowLeafSwitch):
    """One leaf's uplinks slow (too few left, a bad optic): what it sends to and gets from the spine runs at rate."""

    name = "slow leaf uplink (two-tier lab)"
    part = "uplink"

    def inject(self):
        self.lab.slow_uplink(self.rail, self.leaf["leaf"], self.rate)


class Both(Fault):
    """Two faults (or more) at once."""

    def __init__(self, lab, first, second, *more):
        super(Both, self).__init__(lab)
        self.faults = (first, second) + more
        self.name = " + ".join(fault.name for fault in self.faults)
        self.checks = tuple(sorted(set(check for fault in self.faults for check in fault.checks)))
        self.extra_vars = {}
        for fault in self.faults:
            self.extra_vars.update(fault.extra_vars)

    @property
    def expected(self):
        return [item for fault in self.faults for item in fault.expected]

    @property
    def inventory_overlay(self):
        overlays = [fault.inventory_overlay for fault in self.faults if fault.inventory_overlay]
        return overlays[0] if overlays else None

    def inject(self):
        for fault in self.faults:
            fault.inject()

    def during(self, line):
        for fault in self.faults:
            fault.during(line)

    def heal(self):
        for fault in self.faults:
            fault.heal()


class SlowGpuPath(Fault):
    """One GPU's PCIe path to its NIC is slow (a link trained down, a bad switch port): the lab's perftest emulator
    moves at most ``rate_mbit`` for a side whose buffer is in that GPU (``--use_cuda=<gpu>``;
    ``gpu_pace_if_asked`` in tests/lab/emulators/perftest_emulator.py reads ``gpu_rate_mbit_<gpu>`` from the host's
    emulated sysfs). Host memory on every NIC is as fast as before. ``gpus_per_rail``: each host gets that many
    emulated GPUs per rail (the lab builds one), so GPUDirect ``all`` tests several GPUs over each NIC."""

    name = "slow GPU path"
    extra_vars = {"commcheck_rdma_gpudirect": True, "commcheck_rdma_gpudirect_pairs": "all"}

    def __init__(self, lab, host, gpu, rate_mbit=100, gpus_per_rail=2):
        super(SlowGpuPath, self).__init__(lab)
        self.host, self.gpu, self.rate_mbit, self.gpus_per_rail = host, int(gpu), int(rate_mbit), int(gpus_per_rail)
        self.added = []
        self.path = None

    @property
    def expected(self):
        rails = len(self.lab.host(self.host)["rails"])
        # the lab pairs GPUs with NICs in PCI order (all on NUMA node 0): GPU g is near the NIC of rail g % rails
        return [dict(culprit("gpu", self.host, rail=self.gpu % rails), gpu=self.gpu)]

    def inject(self):
        import sysfs_tree  # pylint: disable=import-outside-toplevel
        for host in self.lab.hosts:
            rails = len(self.lab.host(host)["rails"])
            root = self.lab.sysfs_root(host)
            for num in range(rails, rails * self.gpus_per_rail):
                sysfs_tree.add_gpu(root, num)
                self.added.append((root, num))
        folder = os.path.join(self.lab.sysfs_root(self.host), "commcheck-lab")
        if not os.path.isdir(folder):
            os.makedirs(folder)
        self.path = os.path.join(folder, "gpu_rate_mbit_%d" % self.gpu)
        with open(self.path, "w") as handle:
            handle.write("%d\n" % self.rate_mbit)

    def heal(self):
        import sysfs_tree  # pylint: disable=import-outside-toplevel
        for root, num in self.added:
            sysfs_tree.remove_gpu(root, num)
        self.added = []
        if self.path and os.path.exists(self.path):
            os.remove(self.path)
        self.path = None
        self.lab.heal()
