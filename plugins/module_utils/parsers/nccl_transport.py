# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which network NCCL used between the nodes, read from its NCCL_DEBUG=INFO lines
("Using network IB", "Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/0/GDRDMA", "NET/IB : Using ..."), and
whether NVLS (NVLink SHARP) was built ("16 coll channels, 0 nvls channels, ...")."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import re

from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.text import unique

_WEAK_NETWORK = re.compile(r"NET/(IB\w*|Socket)\s*:\s*Using\b(?P<rest>.*)")
# a device of that list: "[0]mlx5_0:1/RoCE", "[1]eth0:10.0.0.1<0>" (not a flag such as "[RO]")
_LISTED_DEVICE = re.compile(r"\[\d+\]\S")
_NO_IB_DEVICE = re.compile(r"NET/IB\s*:\s*No device found|Failed to open libibverbs")
_PLUGIN_FAILED = re.compile(r"Failed to initiali[sz]e NET plugin\s+(\S+)|NET/(\S+?)\s*:\s*No device found")
_VIA = re.compile(r"\bvia\s+(\S+(?: [A-Za-z]+)*)")
# NCCL before 2.9 named its intra-node transports in words, not as "SHM/..." or "P2P/..."
_WORDED_FAMILIES = (("direct shared memory", "SHM"), ("shared memory", "SHM"), ("direct pointer", "P2P"))
_RDMA_NETS = ("ib", "ibext", "aws libfabric", "libfabric", "ofi", "gdr", "efa", "roce", "collnet")
# "16 coll channels, 0 nvls channels, 16 p2p channels, ..." (NCCL 2.17+): how many NVLS (NVLink SHARP) channels
# a communicator built; "NCCL_ALGO set by environment to Tree,Ring,...,NVLS": the algorithms asked for.
_NVLS_CHANNELS = re.compile(r"\b(\d+) nvls channels\b")
_ALGO_ENV = re.compile(r"\bNCCL_ALGO set by environment to\s+(\S+)")


def net_kind(name):
    """'IB' -> 'rdma', 'Socket' -> 'tcp', another plugin -> 'other'."""
    if not name:
        return None
    low = name.lower()
    if low == "socket":
        return "tcp"
    if any(low.startswith(n) for n in _RDMA_NETS):
        return "rdma"
    return "other"


def _channel_family(via):
    """'SHM/direct/direct' -> 'SHM', 'P2P/direct pointer' -> 'P2P', 'direct shared memory' -> 'SHM'."""
    low = via.lower()
    for words, family in _WORDED_FAMILIES:
        if low.startswith(words):
            return family
    return via.split()[0]


def _count(counts, name):
    counts[name] = counts.get(name, 0) + 1


def _most_used(counts):
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[0][0]


class TransportSeen(object):
    """The networks NCCL named, by strength of the evidence: 'Using network' (named), the channels'
    'via NET/<name>' (via), and the net plugin's own 'NET/IB : Using [0]mlx5_0:1/IB' (weak: only with a
    device listed, and not for a plugin NCCL then failed to initialize)."""

    def __init__(self):
        self.named = {}
        self.via = {}
        self.weak = {}
        self.channels = set()
        self.gdr = None
        # the net plugins NCCL said it could not start ("Failed to initialize NET plugin IB")
        self.failed = set()
        self.nvls_channels = None   # the most NVLS channels any communicator built
        self.nvls_asked = None      # the NCCL_ALGO value that names NVLS, when one does

    def info(self, message, warnings):
        """Read an NCCL INFO message; one that is about no network is left alone."""
        if "Using network" in message:
            name = message.split("Using network", 1)[1].strip()
            if name:
                _count(self.named, name)
            return
        if " via " in message:
            self._channel(message)
            return
        if "nvls channels" in message or "NCCL_ALGO" in message:
            self._nvls(message)
            return
        failed = _PLUGIN_FAILED.search(message)
        if failed:
            self.failed.add(failed.group(1) or failed.group(2))
        if "NET/" not in message and "libibverbs" not in message:
            return
        weak = _WEAK_NETWORK.match(message)
        if weak:
            # "NET/IB : Using [RO]; OOB eth0:..." lists no device: that plugin has nothing to use
            if _LISTED_DEVICE.search(weak.group("rest")):
                _count(self.weak, weak.group(1))
            return
        if _NO_IB_DEVICE.search(message):
            warnings.add("NCCL found no usable IB/RoCE device (%s)" % message)

    def _nvls(self, message):
        count = _NVLS_CHANNELS.search(message)
        if count:
            self.nvls_channels = max(int(count.group(1)), self.nvls_channels or 0)
        algo = _ALGO_ENV.search(message)
        if algo and "nvls" in algo.group(1).lower():
            self.nvls_asked = algo.group(1)

    def _channel(self, message):
        """'Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/0/GDRDMA': the transport of a channel."""
        for via in _VIA.findall(message):
            parts = via.split("/")
            family = parts[0]
            if family == "NET" and len(parts) > 1 and parts[1].strip():
                name = parts[1].strip()
                _count(self.via, name)
                self.channels.add("NET/" + name)
                if "GDRDMA" in message:
                    self.gdr = True
                elif self.gdr is None:
                    self.gdr = False
            elif family.split():
                self.channels.add(_channel_family(family))

    def finish(self, result, warnings=None):
        # a plugin's own "Using" line is no evidence once NCCL said that plugin failed to start
        weak = dict((name, count) for name, count in self.weak.items() if name not in self.failed)
        sources = (self.named, self.via, weak)
        transport = next((_most_used(source) for source in sources if source), None)
        result["transport"] = transport
        result["transport_kind"] = net_kind(transport)
        result["networks"] = unique(name for source in sources for name in sorted(source))
        if self.nvls_channels:
            self.channels.add("NVLS")
        result["channel_transports"] = sorted(self.channels)
        result["gdr"] = self.gdr
        result["nvls_channels"] = self.nvls_channels
        if warnings is not None and self.nvls_asked and self.nvls_channels == 0:
            warnings.add("NCCL_ALGO asks for NVLS (%s) but NCCL built 0 NVLS channels: NVLS (NVLink SHARP) is not "
                         "used here (no NVSwitch multicast: check nvidia-smi -q for the fabric state, the "
                         "nvidia-fabricmanager service, and NCCL_NVLS_ENABLE)" % self.nvls_asked)
