# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parse ``ibnetdiscover`` (infiniband-diags): the switches and channel adapters of an InfiniBand fabric and the
links between their ports, from its topology file (the default output) or its ports report (``-p``).

The topology file has a block per node: ``vendid=`` / ``devid=`` / ``sysimgguid=`` / ``switchguid=`` or
``caguid=`` lines, then ``Switch <ports> "S-<guid>" # "<description>" base port 0 lid <lid> lmc <lmc>`` (or
``Ca <ports> "H-<guid>" # "<description>"``), then a line per linked port: on a switch
``[<port>] "<H|S>-<peer guid>"[<peer port>](<peer port guid>) # "<peer description>" lid <peer lid> 4xEDR``, on a CA
``[<port>](<port guid>) "S-<switch guid>"[<switch port>] # lid <lid> lmc 0 "<switch description>" lid <lid> 4xEDR``.
The ports report has one line per port: ``CA <lid> <port> 0x<port guid> 4x EDR - SW <lid> <port> 0x<guid> ( '<desc>'
- '<peer desc>' )``, or the port's own description alone when it has no peer (``4x ???`` where it has no link).

Lines are read where they stand in a pasted line (a topology line's ``[port]`` and ``# "..."`` comment would read as
a paste's prefix and note): unknown lines are warnings, ``ibwarn:`` lines too, ``iberror:`` / ``ibpanic:`` lines
errors; the parser never raises.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import re

from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.ib_fabric import (
    Links,
    end,
    guid,
    read_scan,
    switches_of,
)
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.text import (
    error_catalog,
    to_int,
)

IBNETDISCOVER_ERRORS = error_catalog({
    "no_output": (
        "ibnetdiscover printed nothing.",
        "Run ibnetdiscover by hand on the host (as root: it needs /dev/infiniband/umad*).",
    ),
    "scan_failed": (
        "The fabric scan failed (no link on the local port, no subnet manager, a umad device that cannot be "
        "opened, or a deadline that ended it).",
        "Check the port's state (ibstat); run ibnetdiscover -C <device> -P <port> as root and read its message.",
    ),
}, "ibnetdiscover")

_TYPES = {"S": "Switch", "H": "CA", "R": "Router", "SW": "Switch", "CA": "CA", "RT": "Router",
          "Switch": "Switch", "Ca": "CA", "Rt": "Router"}
_ID = r'"([SHR])-([^"\s]{1,40})"'
_NODE = re.compile(r'\b(Switch|Ca|Rt)\s+(\d{1,5})\s+' + _ID + r'\s*#\s*"(.*)"(?:\s+(base|enhanced)\s+port\s+\d+'
                   r'\s+lid\s+(\d+)\s+lmc\s+\d+)?')
_KEY = re.compile(r'\b(vendid|devid|sysimgguid|switchguid|caguid|routerguid)=(\S+)')
_SWITCH_PORT = re.compile(r'\[(\d{1,5})\]\s*' + _ID + r'\[(\d{1,5})\](?:\(([^)\s]{1,40})\))?\s*#\s*"(.*)"'
                          r'\s+lid\s+(\d+)(?:\s+(\d+x)([A-Z]+|\?+))?')
_CA_PORT = re.compile(r'\[(\d{1,5})\]\(([^)\s]{1,40})\)\s*' + _ID + r'\[(\d{1,5})\]\s*#\s*lid\s+(\d+)\s+lmc\s+\d+'
                      r'\s+"(.*)"\s+lid\s+(\d+)(?:\s+(\d+x)([A-Z]+|\?+))?')
_COMMENT = re.compile(r'^#|^(?:Non-)?Chassis\b')
_REPORT = re.compile(r"^(CA|SW|RT)\s+(\d+)\s+(\d+)\s+0x([0-9A-Fa-f]{1,16})\s+(\d+x)\s+(\S+)\s*(.*)$")
_REPORT_PEER = re.compile(r"^-\s+(CA|SW|RT)\s+(\d+)\s+(\d+)\s+0x([0-9A-Fa-f]{1,16})\s+\(\s*'(.*)'\s+-\s+'(.*)'\s*\)$")


def empty_result():
    return {"format": None, "switches": [], "cas": [], "links": [], "unlinked": [], "errors": [], "warnings": [],
            "ok": False}


def parse_ibnetdiscover(text):
    """``{format, switches, cas, links, unlinked, errors, warnings, ok}`` of ibnetdiscover's output.

    ``format``: ``topology`` (the default output) or ``ports`` (``-p``); ``switches``: ``[{guid, description, lid,
    ports, enhanced}]``; ``cas``: ``[{guid, description, ports}]`` (the topology file's CAs); ``links``: each link
    once, ``{from, to, width, speed}``, an end ``{type, guid, port_guid, lid, port, description}`` (``type``
    ``Switch``, ``CA`` or ``Router``; GUIDs as ``0x`` and 16 hex digits where they are hex, else as printed);
    ``unlinked``: the ports report's ports with no peer, ``{end, width, speed}`` (speed None for ``???``). ``ok``: a
    node or a port was read."""
    return read_scan(text, "ibnetdiscover", IBNETDISCOVER_ERRORS, _Reader)


class _Reader(object):
    """The state of one read: the node block being read, the links and nodes so far."""

    def __init__(self):
        self.result = empty_result()
        self.node = None
        self.links = Links()
        self.cas = {}

    def read(self, raw, clean):
        return bool(self._topology_line(raw) or self._report_line(clean) or _COMMENT.match(clean.strip()))

    def _topology_line(self, line):
        node = _NODE.search(line)
        if node:
            self._start_node(node)
            return True
        if _KEY.search(line):
            return True
        port = _SWITCH_PORT.search(line)
        if port and self.node is not None:
            self._switch_port(port)
            return True
        port = _CA_PORT.search(line)
        if port and self.node is not None:
            self._ca_port(port)
            return True
        return False

    def _start_node(self, match):
        self.result["format"] = "topology"
        kind = _TYPES[match.group(1)]
        self.node = {"type": kind, "guid": guid(match.group(4)), "description": match.group(5),
                     "lid": to_int(match.group(7)), "ports": to_int(match.group(2))}
        if kind == "Switch":
            self.result["switches"].append({"guid": self.node["guid"], "description": self.node["description"],
                                            "lid": self.node["lid"], "ports": self.node["ports"],
                                            "enhanced": match.group(6) == "enhanced" if match.group(6) else None})
        elif kind == "CA":
            self.cas[self.node["guid"]] = {"guid": self.node["guid"], "description": self.node["description"],
                                           "ports": self.node["ports"]}

    def _switch_port(self, match):
        node = self.node
        near = end(node["type"], node["guid"], None, node["lid"], to_int(match.group(1)), node["description"])
        far = end(_TYPES[match.group(2)], guid(match.group(3)), guid(match.group(5)), to_int(match.group(7)),
                  to_int(match.group(4)), match.group(6))
        self.links.add(near, far, match.group(8), _speed(match.group(9)))

    def _ca_port(self, match):
        node = self.node
        near = end(node["type"], node["guid"], guid(match.group(2)), to_int(match.group(6)), to_int(match.group(1)),
                   node["description"])
        far = end(_TYPES[match.group(3)], guid(match.group(4)), None, to_int(match.group(8)), to_int(match.group(5)),
                  match.group(7))
        self.links.add(near, far, match.group(9), _speed(match.group(10)))

    def _report_line(self, line):
        match = _REPORT.match(line.strip())
        if not match:
            return False
        self.result["format"] = self.result["format"] or "ports"
        kind = _TYPES[match.group(1)]
        rest = match.group(7).strip()
        peer = _REPORT_PEER.match(rest)
        near = end(kind, guid(match.group(4)) if kind == "Switch" else None, guid(match.group(4)),
                   to_int(match.group(2)), to_int(match.group(3)), peer.group(5) if peer else _unquoted(rest))
        speed = _speed(match.group(6))
        if peer is None:
            self.result["unlinked"].append({"end": near, "width": match.group(5), "speed": speed})
            return True
        far_kind = _TYPES[peer.group(1)]
        far = end(far_kind, guid(peer.group(4)) if far_kind == "Switch" else None, guid(peer.group(4)),
                  to_int(peer.group(2)), to_int(peer.group(3)), peer.group(6))
        self.links.add(near, far, match.group(5), speed)
        return True

    def finish(self):
        result = self.result
        result["links"] = self.links.items()
        result["cas"] = list(self.cas.values())
        if result["format"] == "ports":
            result["switches"] = switches_of(result["links"], [u["end"] for u in result["unlinked"]])
        return bool(result["switches"] or result["cas"] or result["links"] or result["unlinked"])


def _speed(text):
    return None if not text or text.startswith("?") else text


def _unquoted(text):
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] == "'":
        return text[1:-1]
    return text or None


__all__ = ["IBNETDISCOVER_ERRORS", "parse_ibnetdiscover"]
