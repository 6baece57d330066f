# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parse ``smpquery nodeinfo`` and ``smpquery nodedesc`` (infiniband-diags): what a node answers to a subnet
management query, and, over the directed route ``0,<port>`` out of a local InfiniBand port, which switch (and which
of its ports) that port is cabled to.

``nodeinfo`` prints a header ``# Node info: <address>`` and one ``Field:.....value`` line per NodeInfo field
(``NodeType``, ``NumPorts``, ``SystemGuid``, ``Guid``, ``PortGuid``, ``PartCap``, ``DevId``, ``Revision``,
``LocalPort``: the port of the node the query came in by, ``VendorId``). ``nodedesc`` prints one line,
``Node Description:`` then dots up to column 32 (one dot when the description is 32 characters or longer) and the
description. Both outputs may be read together (discovery runs both for a port). A failed query prints
``ibwarn:`` and ``iberror:`` lines on stderr: they are errors, never exceptions.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import re

from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.text import (
    error_catalog,
    error_entry,
    nonblank_lines,
    note_if_unread,
    parse_or_report,
    snake_case,
    to_int,
)

SMPQUERY_ERRORS = error_catalog({
    "no_output": (
        "smpquery printed nothing.",
        "Run smpquery by hand on the host (as root: it needs /dev/infiniband/umad*).",
    ),
    "query_failed": (
        "The subnet management query got no answer (no link on the port, nothing behind it, the node does not "
        "answer SMPs, or the device or port cannot be opened).",
        "Check the port's state (ibstat); run smpquery -C <device> -P <port> -D nodeinfo 0,<port> as root and "
        "read its message.",
    ),
}, "smpquery")

# the NodeInfo fields read (smpquery's name -> key)
_NODE_FIELDS = {
    "BaseVers": "base_version", "ClassVers": "class_version", "NodeType": "node_type", "NumPorts": "num_ports",
    "SystemGuid": "system_guid", "Guid": "guid", "PortGuid": "port_guid", "PartCap": "partition_cap",
    "DevId": "device_id", "Revision": "revision", "LocalPort": "local_port", "VendorId": "vendor_id",
}
_NUMBERS = ("base_version", "class_version", "num_ports", "partition_cap", "local_port")
# libibmad's node types; rdma-ibtool and old releases print the number
_NODE_TYPES = {"1": "Channel Adapter", "2": "Switch", "3": "Router"}
_FIELD = re.compile(r"^([A-Za-z][A-Za-z0-9]*):\.{2,}(.*)$")
_DESCRIPTION = re.compile(r"^Node Description:(\.+)(.*)$")
_DESCRIPTION_WIDTH = 32
_HEADER = re.compile(r"^# Node info: (.+)$")
_FAILURE = re.compile(r"\b(iberror|ibpanic):\s*(.*)$")


def empty_result():
    return {"node": {}, "description": None, "address": None, "is_switch": None, "errors": [], "warnings": [],
            "ok": False}


def parse_smpquery(text):
    """``{node, description, address, is_switch, errors, warnings, ok}`` of smpquery's nodeinfo and/or nodedesc
    output: ``node`` the NodeInfo fields (snake case keys, numbers as int, GUIDs as printed), ``description`` the
    node description, ``address`` the header's address (``Lid 4``, ``DR path slid 0; dlid 0; 0,1``),
    ``is_switch`` whether the node is a switch (None without NodeInfo). ``ok``: a field or the description was
    read."""
    return parse_or_report(_parse, text, empty_result(), SMPQUERY_ERRORS)


def _parse(text):
    result = empty_result()
    lines = nonblank_lines(text)
    if not lines:
        result["errors"].append(error_entry("no_output", "smpquery printed nothing", SMPQUERY_ERRORS))
        return result
    for line in lines:
        _read_line(result, line.strip())
    node = result["node"]
    if node.get("node_type") is not None:
        node["node_type"] = _NODE_TYPES.get(node["node_type"], node["node_type"])
        result["is_switch"] = node["node_type"] == "Switch"
    result["ok"] = bool(node) or result["description"] is not None
    return note_if_unread(result, text, "smpquery", result["ok"] or result["errors"])


def _read_line(result, line):
    failure = _FAILURE.search(line)
    if failure:
        result["errors"].append(error_entry("query_failed", line, SMPQUERY_ERRORS))
        return
    if line.startswith("ibwarn:"):
        result["warnings"].append(line)
        return
    header = _HEADER.match(line)
    if header:
        result["address"] = header.group(1).strip()
        return
    description = _DESCRIPTION.match(line)
    if description:
        result["description"] = _description(description.group(1), description.group(2))
        return
    field = _FIELD.match(line)
    if field and field.group(1) in _NODE_FIELDS:
        key = _NODE_FIELDS[field.group(1)]
        value = field.group(2).strip()
        result["node"][key] = to_int(value) if key in _NUMBERS else value
    elif field:
        result["node"][snake_case(field.group(1))] = field.group(2).strip()


def _description(dots, rest):
    """The description smpquery padded with dots to column 32: all of them before a short one, one before a
    long one (so a long description's own leading dots are kept)."""
    if len(dots) + len(rest) > _DESCRIPTION_WIDTH:
        rest = dots[1:] + rest
    return rest.rstrip()
