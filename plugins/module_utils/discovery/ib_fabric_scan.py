# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fabric scans discovery runs for the InfiniBand ports smpquery did not place (impure): ``iblinkinfo``, then
``ibnetdiscover`` for those still unplaced, all within one deadline (``ib_topology`` reads what they print).

- ``iblinkinfo -C <device> -P <port> -D 0 -l``: a partial scan from the local node (directed route ``0``), which
  iblinkinfo takes one hop out and prints that node alone: the adapter's ports and their neighbours, a few queries
  whatever the fabric's size (where the partial scan fails iblinkinfo falls back to a full one: the deadline bounds
  it); ``-l`` prints the peer's GUID on the port's line (the leaf of a switch nobody named).
- ``ibnetdiscover -p -C <device> -P <port>``: the whole fabric (every node: seconds to minutes on a large one), as
  its one-line-per-port report; one scan serves every local port it shows (a port already seen in a scan is not
  scanned again), so a host whose rails share a fabric scans it once.

Each run is bounded by what is left of the deadline (at most ``SCAN_TIMEOUT``); ports the deadline leaves are
counted, never half read. A tool that is missing is recorded, never an error.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import time

from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery import ib_topology
from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery.gather import _run_tool, ib_link_ports
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_iblinkinfo import parse_iblinkinfo
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_ibnetdiscover import (
    parse_ibnetdiscover,
)

SCAN_BUDGET = 60
SCAN_TIMEOUT = 30
# (tool, argv after the program for a device and port, parser), cheapest first
SCANS = (
    ("iblinkinfo", lambda device, port: ["-C", device, "-P", str(port), "-D", "0", "-l"], parse_iblinkinfo),
    ("ibnetdiscover", lambda device, port: ["-p", "-C", device, "-P", str(port)], parse_ibnetdiscover),
)


def scan_fabric(transport, devices, placed=(), ibstat=None, budget=SCAN_BUDGET, clock=time.monotonic):
    """Scan for the leaf of each InfiniBand port with a link whose device is not in ``placed``: ({tool: run summary},
    {tool: {device: [parsed result with its ``port`` and ``timed_out``]}}). A summary counts the ``ports`` it was
    asked for, those it ``placed``, those it ran for but did not place (``unplaced``) and those the deadline left
    ``unasked``; ``scans`` is how many times the tool ran."""
    by_name = dict((d.get("name"), d) for d in devices or [])
    ports = [(device, port) for device, port in ib_link_ports(devices) if device not in set(placed or ())]
    summaries, answers = {}, {}
    deadline = clock() + budget
    for tool, argv_of, parser in SCANS:
        if not ports:
            summaries[tool] = {"ran": False, "reason": "no InfiniBand port left to place"}
            continue
        path = transport.which(tool)
        if not path:
            summaries[tool] = {"ran": False, "reason": "not installed"}
            continue
        summary = {"ran": True, "ports": len(ports), "placed": 0, "unplaced": 0, "unasked": 0, "scans": 0}
        done, left = [], []
        for device, port in ports:
            record = by_name[device]
            guids = ib_topology.port_guids(record, _port_of(record, port), ibstat)
            answer = _seen(tool, done, port, guids)
            if answer is None:
                answer = _scan(transport, [path] + argv_of(device, port), parser, deadline, clock)
            if answer is None:
                summary["unasked"] += 1
                left.append((device, port))
                continue
            if not any(answer is one for one in done):
                done.append(answer)
                summary["scans"] += 1
            answers.setdefault(tool, {}).setdefault(device, []).append(dict(answer, port=port))
            if ib_topology.LEAF_OF[tool](answer, port, guids):
                summary["placed"] += 1
            else:
                summary["unplaced"] += 1
                left.append((device, port))
        summaries[tool] = summary
        ports = left
    return summaries, answers


def _port_of(device, number):
    return next((p for p in device.get("ports") or [] if p.get("port") == number), {"port": number})


def _seen(tool, done, port, guids):
    """A whole-fabric scan already run that shows this port (iblinkinfo's partial scans show only their own)."""
    if tool != "ibnetdiscover":
        return None
    return next((answer for answer in done if ib_topology.ibnetdiscover_leaf(answer, port, guids)), None)


def _scan(transport, argv, parser, deadline, clock):
    """The parsed output of one run with ``timed_out``, or None when the deadline has come."""
    left = deadline - clock()
    if left <= 0:
        return None
    res = _run_tool(transport, argv, min(SCAN_TIMEOUT, left))
    answer = parser((res.get("stdout") or "") + "\n" + (res.get("stderr") or ""))
    answer["timed_out"] = bool(res.get("timed_out"))
    return answer
