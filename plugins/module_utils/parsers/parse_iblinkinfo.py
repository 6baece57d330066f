# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parse ``iblinkinfo`` (infiniband-diags): every port of the scanned nodes, its link (width, lane speed, state) and
the node and port at its other end.

The default output has a header per node, ``CA: <description>:`` or ``Switch: 0x<guid> <description>:``, then a line
per port: a CA's ``0x<port guid> <lid> <port>[  ] ==( 4X 53.125 Gbps Active/  LinkUp)==> <peer lid> <peer port>[  ]
"<peer description>" ( <remark> )``, a switch's the same without the GUID; a port with no link reads
``==(                Down/ Polling)==>             [  ] "" ( )``. ``-l`` prints the node's GUID and description on
every line instead of the header, and the peer's GUID before its LID. A ``grep`` of the output keeps port lines
without their header: a line with a GUID is then a CA's port, one without a switch's.

The speed is a lane's (``53.125`` Gb/s on a 4X HDR link), as printed. Unknown lines are warnings, ``ibwarn:`` lines
too, ``iberror:`` / ``ibpanic:`` lines errors; the parser never raises.
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
    to_float,
    to_int,
)

IBLINKINFO_ERRORS = error_catalog({
    "no_output": (
        "iblinkinfo printed nothing.",
        "Run iblinkinfo by hand on the host (as root: it needs /dev/infiniband/umad*).",
    ),
    "scan_failed": (
        "The scan failed (no link on the local port, no subnet manager, a umad device that cannot be opened, a "
        "directed route that leads nowhere, or a deadline that ended it).",
        "Check the port's state (ibstat); run iblinkinfo -C <device> -P <port> -D 0 as root and read its message.",
    ),
}, "iblinkinfo")

_HEADER = re.compile(r"^(CA|Switch):\s+(?:0x([0-9A-Fa-f]{1,16})\s+)?(.*):\s*$")
_PORT = re.compile(
    r'^(?:0x(?P<guid>[0-9A-Fa-f]{1,16})\s+(?:"(?P<desc>[^"]*)"\s+)?)?(?P<lid>\d+)\s+(?P<port>\d+)\[[^\]]{0,8}\]\s*'
    r'==\((?P<link>[^)]*)\)==>\s*(?:0x(?P<peer_guid>[0-9A-Fa-f]{1,16})\s+)?(?:(?P<peer_lid>\d+)\s+)?'
    r'(?P<peer_port>\d+)?\[[^\]]{0,8}\]\s*"(?P<peer_desc>.*)"\s*\((?P<remark>.*)\)\s*$')
_LINK = re.compile(r"^\s*(?:(\d+X)\s+([\d.]+)\s+Gbps\s+)?([A-Za-z]+)/\s*([A-Za-z]+)\s*$")


def empty_result():
    return {"switches": [], "ports": [], "links": [], "errors": [], "warnings": [], "ok": False}


def parse_iblinkinfo(text):
    """``{switches, ports, links, errors, warnings, ok}`` of iblinkinfo's output (default, ``-l`` or grepped).

    ``ports``: each port line, ``{node: {type, guid, port_guid, lid, description}, port, width, speed_gbps, state,
    phys_state, peer: {type, guid, port_guid, lid, port, description} or None, remark}`` (``type`` ``CA`` or
    ``Switch`` where the output says it, a peer's where its LID is a node's of the output, else None; a CA line's
    GUID is its port GUID); ``links``: each link once, ``{from, to, width, speed_gbps, state, phys_state}``;
    ``switches``: ``[{guid, description, lid}]``. ``ok``: a port line was read."""
    return read_scan(text, "iblinkinfo", IBLINKINFO_ERRORS, _Reader)


class _Reader(object):
    """The result so far and the node header the port lines below it belong to (None before any: a -l or grepped
    output)."""

    def __init__(self):
        self.result = empty_result()
        self.node = None

    def read(self, _raw, clean):
        line = clean.strip()
        header = _HEADER.match(line)
        if header:
            self.node = {"type": "CA" if header.group(1) == "CA" else "Switch", "guid": guid(header.group(2)),
                         "description": header.group(3).strip()}
            return True
        port = _PORT.match(line)
        if port:
            self.result["ports"].append(_port(port, self.node))
        return bool(port)

    def finish(self):
        _resolve(self.result)
        return bool(self.result["ports"])


def _port(match, header):
    """One port line, under the node header above it (None: a -l or grepped line)."""
    printed = guid(match.group("guid"))
    if header is not None and match.group("desc") is None:
        node = dict(header, lid=to_int(match.group("lid")), port_guid=printed if header["type"] == "CA" else None)
    elif match.group("desc") is not None:
        node = {"type": None, "guid": printed, "port_guid": None, "description": match.group("desc").strip(),
                "lid": to_int(match.group("lid"))}
    else:
        node = {"type": "CA" if printed else "Switch", "guid": None, "port_guid": printed, "description": None,
                "lid": to_int(match.group("lid"))}
    link = _LINK.match(match.group("link")) or None
    peer = None
    if match.group("peer_port"):
        peer_guid = guid(match.group("peer_guid"))
        peer = end(None, peer_guid, None, to_int(match.group("peer_lid")), to_int(match.group("peer_port")),
                   match.group("peer_desc").strip() or None)
    return {"node": node, "port": to_int(match.group("port")),
            "width": link.group(1) if link else None, "speed_gbps": to_float(link.group(2)) if link else None,
            "state": link.group(3) if link else None, "phys_state": link.group(4) if link else None,
            "peer": peer, "remark": match.group("remark").strip() or None}


def _resolve(result):
    """The peers' types and GUIDs from the nodes of the output (by LID), then the links and the switches."""
    by_lid = {}
    for port in result["ports"]:
        node = port["node"]
        if node["lid"] is not None and node["type"] is not None:
            by_lid.setdefault(node["lid"], node)
    links = Links()
    for port in result["ports"]:
        node, peer = port["node"], port["peer"]
        if peer is None:
            continue
        known = by_lid.get(peer["lid"])
        if known is not None:
            peer["type"] = known["type"]
            peer["guid"] = peer["guid"] or known["guid"]
            peer["port_guid"] = known.get("port_guid") if known["type"] == "CA" else None
            peer["description"] = peer["description"] or known["description"]
        near = end(node["type"], node["guid"], node.get("port_guid"), node["lid"], port["port"], node["description"])
        links.add(near, dict(peer), port["width"], None, speed_gbps=port["speed_gbps"], state=port["state"],
                  phys_state=port["phys_state"])
    result["links"] = [dict((k, v) for k, v in link.items() if k != "speed") for link in links.items()]
    named = [port["node"] for port in result["ports"] if port["node"]["type"] == "Switch"]
    result["switches"] = switches_of(result["links"], [end("Switch", n["guid"], None, n["lid"], None,
                                                           n["description"]) for n in named])


__all__ = ["IBLINKINFO_ERRORS", "parse_iblinkinfo"]
