# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parse GID tables: MLNX_OFED/DOCA ``show_gids`` and Huawei ``hiroce3 gids``.

``show_gids`` prints a header, a dashes line, one row per GID and a
``n_gids_found=N`` footer::

    DEV     PORT    INDEX   GID                                     IPv4            VER     DEV
    ---     ----    -----   ---                                     ------------    ---     ---
    mlx5_0  1       3       0000:0000:0000:0000:0000:ffff:0a6c:a424 10.108.164.36   v2      eth01

Empty cells (no IPv4 on link-local GIDs, no netdev on IB ports) leave no
token behind, so rows are read column by column with a type check per
column: a cell that does not fit its column is taken as empty. The columns
come from the header (``hiroce3 gids`` uses ``ib_dev net_dev port idx gid
type ip link`` and ``RoCE v2`` types); without a header the ``show_gids``
order is assumed.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import re

from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.gid_text import mapped_ipv4
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.tool_result import tool_result
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.text import (
    error_catalog,
    error_entry,
    found_after,
    is_tagged_warning,
    nonblank_lines,
    to_int,
)

SHOW_GIDS_ERRORS = error_catalog({
    "no_device": (
        "No RDMA device is visible (/sys/class/infiniband is missing or empty).",
        "Load the NIC RDMA driver (mlx5_ib), check rdma dev; in a pod request the RDMA device resource.",
    ),
    "not_installed": (
        "show_gids (MLNX_OFED/DOCA) or hiroce3 (Huawei) is not installed on this host.",
        "Install the vendor host package, or read /sys/class/infiniband/*/ports/*/gids and gid_attrs directly.",
    ),
}, "show_gids")

# Header names -> our column kinds.
_HEADER_NAMES = {
    "dev": "device",
    "ib_dev": "device",
    "ibdev": "device",
    "device": "device",
    "hca": "device",
    "port": "port",
    "index": "gid_index",
    "idx": "gid_index",
    "gid_index": "gid_index",
    "gid": "gid",
    "ipv4": "ipv4",
    "ip": "ip",
    "ipaddr": "ip",
    "ver": "version",
    "version": "version",
    "type": "version",
    "gid_type": "version",
    "net_dev": "netdev",
    "netdev": "netdev",
    "ndev": "netdev",
    "ifname": "netdev",
    "link": "link",
    "state": "link",
}
_DEFAULT_COLUMNS = ["device", "port", "gid_index", "gid", "ipv4", "version", "netdev"]
_REQUIRED = ("device", "port", "gid_index", "gid")

_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.:@-]*$")
_INT = re.compile(r"^\d+$")
_GID = re.compile(r"^(?:[0-9A-Fa-f]{1,4}(?::[0-9A-Fa-f]{0,4}){2,7}|[0-9A-Fa-f]{0,4}(?::[0-9A-Fa-f]{0,4}){2,6}:\d{1,3}(?:\.\d{1,3}){3})$")
_IPV4 = re.compile(r"^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(?:\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$")
_VERSION = re.compile(r"^(?:v|V)[12]$")
_VERSION_PREFIX = re.compile(r"^(?:IB/RoCE|RoCE|IB)$", re.I)
_VERSION_JOINED = re.compile(r"^(?:IB/)?RoCE[_-]?v?[12]$", re.I)
_LINK = re.compile(r"^(?:up|down|unknown|active|inactive|disabled)$", re.I)
_N_GIDS = re.compile(r"n_gids_found\s*=\s*(?P<n>\d+)")
_NA = ("N/A", "N\\A", "NA", "-", "--")
# \S{0,200}, not \S*: an unbounded run retried from every "/sys/class/infiniband" of a long word is quadratic.
_NO_DEVICE = re.compile(r"/sys/class/infiniband\S{0,200}:?\s*No such file or directory", re.I)
# "show_gids: command not found": the tool's name, later "not found" (two searches: linear)
_TOOL = re.compile(r"\b(?:show_gids|hiroce3):?\s", re.I)
_NOT_FOUND = re.compile(r"not found", re.I)


def _is_gid(token):
    if not _GID.match(token):
        return False
    groups = token.split(":")
    return len(groups) == 8 or "" in groups or "." in token


def _norm_version(text):
    match = re.search(r"v\s*([12])\s*$", text or "", re.I)
    return "v" + match.group(1) if match else None


def _is_device(token):
    return bool(_NAME.match(token)) and not _is_gid(token)


def _is_ip(token):
    return bool(_IPV4.match(token)) or (":" in token and _is_gid(token))


def _is_netdev(token):
    """A name that is none of the other cells a row may hold there (index, address, version, link state)."""
    return (bool(_NAME.match(token)) and not _INT.match(token) and not _IPV4.match(token) and not _is_gid(token)
            and not _VERSION.match(token) and not _LINK.match(token))


def _single(test, convert=None):
    """A reader of a one-token cell: the token (converted) when test(token) holds."""
    def read(tokens, position):
        token = tokens[position]
        if not test(token):
            return None, 0
        return (convert(token) if convert else token), 1
    return read


def _read_version(tokens, position):
    """'v2', 'RoCE_v2', or two tokens 'RoCE v2'."""
    token = tokens[position]
    if _VERSION.match(token) or _VERSION_JOINED.match(token):
        return token, 1
    if _VERSION_PREFIX.match(token) and position + 1 < len(tokens) and _VERSION.match(tokens[position + 1]):
        return token + " " + tokens[position + 1], 2
    return None, 0


def _read_netdev(tokens, position):
    token = tokens[position]
    if token in _NA:
        return None, 1
    return (token, 1) if _is_netdev(token) else (None, 0)


def _read_extra(tokens, position):
    """An unknown header column: one token."""
    return tokens[position], 1


_CELL_READERS = {
    "device": _single(_is_device),
    "port": _single(_INT.match, to_int),
    "gid_index": _single(_INT.match, to_int),
    "gid": _single(_is_gid, str.lower),
    "ipv4": _single(_IPV4.match),
    "ip": _single(_is_ip),
    "version": _read_version,
    "link": _single(_LINK.match, str.lower),
    "netdev": _read_netdev,
}


def _take(kind, tokens, position):
    """(value, tokens used) when tokens[position:] starts with a cell of this kind, else (None, 0)."""
    if position >= len(tokens):
        return None, 0
    return _CELL_READERS.get(kind, _read_extra)(tokens, position)


def _header_columns(line):
    """Column kinds of a header line, or None when the line is not a GID table header."""
    low = line.lower()
    if "gid" not in low or "port" not in low:
        return None     # a header names at least the gid and port columns
    tokens = line.split()
    kinds = []
    for token in tokens:
        name = token.strip().lower()
        kind = _HEADER_NAMES.get(name)
        if name == "dev" and "device" in kinds:
            kind = "netdev"  # show_gids: DEV ... DEV (the second is the netdev)
        kinds.append(kind or "extra:" + re.sub(r"[^a-z0-9_]+", "_", name))
    if "gid" in kinds and "port" in kinds and "gid_index" in kinds and "device" in kinds:
        return kinds
    return None


def _parse_row(tokens, columns):
    row = {}
    position = 0
    for kind in columns:
        value, used = _take(kind, tokens, position)
        if used == 0 and kind in _REQUIRED:
            return None
        if kind.startswith("extra:"):
            if used:
                row[kind[6:]] = value
        elif kind == "version":
            row["type"] = value
            row["version"] = _norm_version(value) if value else None
        elif kind == "ip":
            row["ip"] = value
            if value and _IPV4.match(value):
                row["ipv4"] = value
        else:
            row[kind] = value
        position += used
    return row


def _parse(text):
    gids = []
    errors = []
    warnings = []
    columns = list(_DEFAULT_COLUMNS)
    n_found = None
    header_seen = False
    for line in nonblank_lines(text):
        n_gids = _N_GIDS.search(line) if "n_gids_found" in line else None
        if n_gids:
            # also at the end of a header line: a paste that lost its newlines ("...v1 enp4s0f1n_gids_found=2")
            n_found = (n_found or 0) + to_int(n_gids.group("n"), 0)
        header = _header_columns(line)
        if header:
            columns = header
            header_seen = True
            continue
        if n_gids:
            continue
        if is_tagged_warning(line):
            warnings.append(line.strip())   # "libibverbs: Warning: couldn't stat '/sys/class/infiniband/...'"
            continue
        if _NO_DEVICE.search(line):
            errors.append(error_entry("no_device", line, SHOW_GIDS_ERRORS))
            continue
        if found_after(_TOOL, _NOT_FOUND, line):
            errors.append(error_entry("not_installed", line, SHOW_GIDS_ERRORS))
            continue
        tokens = line.split()
        if not tokens or set(line.strip()) <= set("- \t"):
            continue
        row = _parse_row(tokens, columns)
        if row is None:
            continue
        entry = {
            "device": row.get("device"),
            "port": row.get("port"),
            "gid_index": row.get("gid_index"),
            "gid": row.get("gid"),
            "ipv4": row.get("ipv4") or mapped_ipv4(row.get("gid")),
            "version": row.get("version"),
            "netdev": row.get("netdev"),
        }
        for key, value in row.items():
            if key not in entry:
                entry[key] = value
        gids.append(entry)
    if n_found is not None and n_found != len(gids):
        warnings.append("n_gids_found=%d but %d GID rows were read" % (n_found, len(gids)))
    elif header_seen and n_found is None and not gids and not errors:
        warnings.append("a GID table header but no GID row and no n_gids_found line: the output is cut")
    return {"gids": gids, "n_gids_found": n_found, "errors": errors, "warnings": warnings}


def parse_show_gids_full(text):
    """Return {gids, n_gids_found, errors, warnings} for show_gids / hiroce3 gids output; never raises."""
    return tool_result(_parse, text, "show_gids (or hiroce3 gids)",
                       {"gids": [], "n_gids_found": None, "errors": [], "warnings": []}, SHOW_GIDS_ERRORS)


def parse_show_gids(text):
    """List of {device, port, gid_index, gid, ipv4, version (v1|v2|None), netdev[, type, link, ip]}."""
    return parse_show_gids_full(text)["gids"]
