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

from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.tool_result import tool_result
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.text import (
    error_catalog,
    error_entry,
    found_after,
    is_tagged_warning,
    nonblank_lines,
    to_int,
)

IBDEV2NETDEV_ERRORS = error_catalog({
    "not_installed": (
        "ibdev2netdev is not installed on this host (it ships with MLNX_OFED / DOCA-OFED, not with rdma-core).",
        "Install the MLNX_OFED or DOCA host package, or use rdma link (iproute2) / sysfs instead.",
    ),
    "no_device": (
        "No RDMA device is visible (/sys/class/infiniband is missing or empty).",
        "Load the NIC driver (mlx5_core, mlx5_ib), check lspci, and in a pod request the RDMA device resource.",
    ),
}, "ibdev2netdev")

# "... port 1 (ACTIVE) ==> ens1f0 (Up)"; the IB port state only with -v. Read by _split_tail and
# _split_verbose_head below, not by one regex: its lazy groups before \s* made long lines quadratic.
_PORT_AT = re.compile(r"\bport\s+(?P<port>\d+)")
# After the link state, words someone added ("(Up)  this one") are no part of the line.
_RIGHT = re.compile(r"\s*(?:(?P<netdev>[^\s()]+)\s*)?(?:\((?P<state>[^)]*)\)(?:\s.*)?)?$")
_PCI_END = re.compile(r"\b[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f]$")
_MAX_PORT_CANDIDATES = 8   # "port N" words tried per line (a real line has one)
_FAMILY = re.compile(
    r"\b(ConnectX-\d+[A-Za-z]*(?:\s+(?:Dx|Lx|Ex|En|VPI))?|Connect-IB|BlueField(?:-\d+)?[A-Za-z]*(?:\s+DPU)?|"
    r"SuperNIC|ConnectX\b)",
    re.IGNORECASE,
)
_DEVICE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]*$")
# "ibdev2netdev: command not found": the tool's name, later the message (two searches: linear)
_TOOL = re.compile(r"ibdev2netdev:?\s", re.I)
_NOT_FOUND = re.compile(r"not found|No such file or directory", re.I)
# \S{0,200}, not \S*: an unbounded run retried from every "/sys/class/infiniband" of a long word is quadratic.
_NO_DEVICE = re.compile(r"/sys/class/infiniband\S{0,200}:?\s*No such file or directory", re.I)
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


def _skip_space(line, at):
    while at < len(line) and line[at].isspace():
        at += 1
    return at


def _split_tail(line):
    """(head, port, port_state, netdev, state) of '<head> port N [(STATE)] ==> [NETDEV] [(State)]', or None.

    The head is the text before the first "port N" after which the rest of the line fits.
    """
    for count, match in enumerate(_PORT_AT.finditer(line)):
        if count >= _MAX_PORT_CANDIDATES:
            break
        at = _skip_space(line, match.end())
        port_state = None
        if line[at:at + 1] == "(":
            close = line.find(")", at)
            if close < 0:
                continue
            port_state = line[at + 1:close].strip()
            at = _skip_space(line, close + 1)
        arrow = at
        while line[arrow:arrow + 1] == "=":
            arrow += 1
        if arrow == at or line[arrow:arrow + 1] != ">":
            continue
        right = _RIGHT.match(line, arrow + 1)
        if right is None:
            continue
        state = right.group("state")
        return (line[:match.start()], match.group("port"), port_state, right.group("netdev"),
                state.strip() if state is not None else None)
    return None


def _split_verbose_head(head):
    """{pci, device, hca_type, part_id, product, fw} of '[PCI] DEV (TYPE - PART) PRODUCT fw FW', or None."""
    text = head.rstrip()
    cut = len(text)
    while cut > 0 and not text[cut - 1].isspace():
        cut -= 1
    fw = text[cut:]
    before = text[:cut].rstrip()
    if not fw or cut == 0 or cut == len(before) or not before.endswith("fw"):
        return None
    product_end = len(before) - 2
    if product_end > 0 and (before[product_end - 1].isalnum() or before[product_end - 1] == "_"):
        return None     # "fw" must be a word of its own (\bfw)
    opening = before.find("(", 0, product_end)
    while opening >= 0:
        found = _verbose_group(before, opening, product_end)
        if found is not None:
            found["fw"] = fw
            return found
        opening = before.find("(", opening + 1, product_end)
    return None


def _verbose_group(text, opening, product_end):
    """The device and '(TYPE - PART)' group whose '(' is at `opening`, with the product after it; or None."""
    end = opening
    while end > 0 and text[end - 1].isspace():
        end -= 1
    start = end
    while start > 0 and not text[start - 1].isspace() and text[start - 1] not in "()":
        start -= 1
    close = text.find(")", opening, product_end)
    if start == end or close < 0 or "(" in text[opening + 1:close]:
        return None
    inside = text[opening + 1:close].strip()
    if not inside:
        return None
    first = inside.split(None, 1)[0]
    rest = inside[len(first):].strip()
    if not rest:
        hca_type, part_id = first, None
    elif rest.startswith("-"):
        hca_type, part_id = first, rest[1:].strip()
    else:
        dash = first.rfind("-")
        if dash < 1:
            return None
        hca_type, part_id = first[:dash], inside[dash + 1:].strip()
    pci = None
    if start > 0:
        pci_match = _PCI_END.search(text[:start].rstrip())
        pci = pci_match.group(0) if pci_match else None
    return {"pci": pci, "device": text[start:end], "hca_type": hca_type, "part_id": part_id,
            "product": text[close + 1:product_end].strip()}


def _parse_line(line):
    tail = _split_tail(line)
    if tail is None:
        return None
    head, port, port_state, netdev, state = tail
    head = head.rstrip()
    entry = {
        "device": None,
        "port": to_int(port),
        "netdev": _na(netdev),
        "state": _norm_link_state(state),
        "pci": None,
        "hca_type": None,
        "part_id": None,
        "product": None,
        "description": None,
        "fw": None,
        "port_state": _na(port_state),
    }
    verbose = _split_verbose_head(head)
    if verbose:
        product = _na(verbose["product"])
        entry.update(
            device=verbose["device"],
            pci=verbose["pci"],
            hca_type=_na(verbose["hca_type"]),
            part_id=_na(verbose["part_id"]),
            product=product,
            description=_description(product),
            fw=_na(verbose["fw"]),
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
    warnings = []
    for line in nonblank_lines(text):
        entry = _parse_line(line)
        if entry is not None:
            devices.append(entry)
        elif is_tagged_warning(line):
            warnings.append(line.strip())   # "libibverbs: Warning: couldn't stat ...": never an error
        elif found_after(_TOOL, _NOT_FOUND, line):
            errors.append(error_entry("not_installed", line, IBDEV2NETDEV_ERRORS))
        elif _NO_DEVICE.search(line):
            errors.append(error_entry("no_device", line, IBDEV2NETDEV_ERRORS))
    return {"devices": devices, "errors": errors, "warnings": warnings}


def parse_ibdev2netdev_full(text):
    """Return {devices, errors, warnings} for ibdev2netdev output; never raises."""
    return tool_result(_parse, text, "ibdev2netdev", {"devices": [], "errors": [], "warnings": []}, IBDEV2NETDEV_ERRORS)


def parse_ibdev2netdev(text):
    """List of {device, port, netdev, state (Up|Down|None), pci, hca_type, description, fw, port_state, ...}."""
    return parse_ibdev2netdev_full(text)["devices"]
