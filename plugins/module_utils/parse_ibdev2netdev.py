# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parse the output of MLNX_OFED/DOCA ``ibdev2netdev`` (plain and ``-v``).

Plain lines::

    mlx5_0 port 1 ==> ens1f0 (Up)

Verbose (``-v``) lines (PCI address, device id, VPD part number and product
name, firmware, IB port state)::

    0000:3b:00.0 mlx5_0 (MT4115 - MT1630X01234) CX416A - ConnectX-4 QSFP28 fw 12.28.2006 port 1 (ACTIVE) ==> ens1f0 (Up)

The script pads some fields (``(DOWN  )``, ``NA         ``) and prints ``NA``
where sysfs lacks a file; prompts, command echoes and launcher prefixes are
ignored.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import re

from ansible_collections.clusterops.commcheck.plugins.module_utils.text import (
    clean_lines,
    error_entry,
    to_int,
)

IBDEV2NETDEV_ERRORS = {
    "not_installed": (
        "ibdev2netdev is not installed on this host (it ships with MLNX_OFED / DOCA-OFED, not with rdma-core).",
        "Install the MLNX_OFED or DOCA host package, or use rdma link (iproute2) / sysfs instead.",
    ),
    "no_device": (
        "No RDMA device is visible (/sys/class/infiniband is missing or empty).",
        "Load the NIC driver (mlx5_core, mlx5_ib), check lspci, and in a pod request the RDMA device resource.",
    ),
    "parser_error": (
        "The parser failed on this text (a bug in commcheck); nothing was read from it.",
        "Report the raw output to the commcheck maintainers.",
    ),
    "unknown": ("ibdev2netdev printed an error this parser does not know.", "Read the message and the raw output."),
}

# No tool prints lines this long; longer ones are cut so that no regex works on huge lines.
_MAX_LINE = 4096


def _lines(text):
    return [line[:_MAX_LINE] for line in clean_lines(text)]


# "... port 1 (ACTIVE) ==> ens1f0 (Up)"; the IB port state only with -v.
_TAIL = re.compile(
    r"^(?P<head>.*?)\bport\s+(?P<port>\d+)\s*"
    r"(?:\(\s*(?P<port_state>[^)]*?)\s*\)\s*)?"
    r"=+>\s*(?P<netdev>[^\s()]+)?\s*(?:\(\s*(?P<state>[^)]*?)\s*\))?\s*$"
)
# -v head: "[PCI] DEV (MTxxxx - PARTID) DESCRIPTION fw FW"
_VERBOSE_HEAD = re.compile(
    r"(?:(?P<pci>\b[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f])\s+)?"
    r"(?P<device>[^\s()]+)\s*\(\s*(?P<hca_type>[^\s()]+)\s*(?:-\s*(?P<part_id>[^()]*?))?\s*\)"
    r"\s*(?P<product>.*?)\s*\bfw\s+(?P<fw>\S+)\s*$"
)
_FAMILY = re.compile(
    r"\b(ConnectX-\d+[A-Za-z]*(?:\s+(?:Dx|Lx|Ex|En|VPI))?|Connect-IB|BlueField(?:-\d+)?[A-Za-z]*(?:\s+DPU)?|"
    r"SuperNIC|ConnectX\b)",
    re.IGNORECASE,
)
_DEVICE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]*$")
_NOT_INSTALLED = re.compile(r"ibdev2netdev:?\s.*(?:command not found|not found|No such file or directory)", re.I)
_NO_DEVICE = re.compile(r"/sys/class/infiniband\S*:?\s*No such file or directory", re.I)
_NA = ("", "NA", "N/A", "N\\A")


def _norm_link_state(value):
    text = (value or "").strip().lower()
    if text == "up":
        return "Up"
    if text == "down":
        return "Down"
    return None


def _na(value):
    value = (value or "").strip()
    return None if value in _NA else value


def _description(product):
    """'CX416A - ConnectX-4 QSFP28' -> 'ConnectX-4' (the product family), else the name part."""
    if not product:
        return None
    match = _FAMILY.search(product)
    if match:
        return re.sub(r"\s+", " ", match.group(1))
    if " - " in product:
        return product.split(" - ", 1)[1].strip() or None
    return product


def _parse_line(line):
    match = _TAIL.match(line)
    if not match:
        return None
    head = match.group("head").rstrip()
    entry = {
        "device": None,
        "port": to_int(match.group("port")),
        "netdev": _na(match.group("netdev")),
        "state": _norm_link_state(match.group("state")),
        "pci": None,
        "hca_type": None,
        "part_id": None,
        "product": None,
        "description": None,
        "fw": None,
        "port_state": _na(match.group("port_state")),
    }
    verbose = _VERBOSE_HEAD.search(head)
    if verbose:
        product = _na(verbose.group("product"))
        entry.update(
            device=verbose.group("device"),
            pci=verbose.group("pci"),
            hca_type=_na(verbose.group("hca_type")),
            part_id=_na(verbose.group("part_id")),
            product=product,
            description=_description(product),
            fw=_na(verbose.group("fw")),
        )
    else:
        tokens = head.split()
        if not tokens:
            return None
        entry["device"] = tokens[-1]
    if not entry["device"] or not _DEVICE_NAME.match(entry["device"]) or entry["port"] is None:
        return None
    return entry


def _parse(text):
    devices = []
    errors = []
    for line in _lines(text):
        if not line.strip():
            continue
        entry = _parse_line(line)
        if entry is not None:
            devices.append(entry)
        elif _NOT_INSTALLED.search(line):
            errors.append(error_entry("not_installed", line, IBDEV2NETDEV_ERRORS))
        elif _NO_DEVICE.search(line):
            errors.append(error_entry("no_device", line, IBDEV2NETDEV_ERRORS))
    return {"devices": devices, "errors": errors}


def parse_ibdev2netdev_full(text):
    """Return {devices: [...], errors: [...]} for ibdev2netdev output; never raises."""
    try:
        return _parse(text)
    except Exception as exc:  # pylint: disable=broad-except
        return {"devices": [], "errors": [error_entry("parser_error", "%s: %s" % (type(exc).__name__, exc), IBDEV2NETDEV_ERRORS)]}


def parse_ibdev2netdev(text):
    """List of {device, port, netdev, state (Up|Down|None), pci, hca_type, description, fw, port_state, ...}."""
    return parse_ibdev2netdev_full(text)["devices"]
