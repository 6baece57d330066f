# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parse ``ibstat`` (infiniband-diags) and ``ibstatus`` output.

``ibstat`` prints one block per CA (``CA 'mlx5_0'`` then ``Key: value``
lines, ports as ``Port 1:`` sub-blocks, tab- or space-indented); with a CA
and port argument it prints ``CA: 'mlx5_0'`` and an unindented port block.
When it cannot stat a device it ends with an ``ibpanic:`` line (exit 255)
after the CAs it could read: :func:`parse_ibstat_full` returns those as
``errors`` next to the CAs, :func:`parse_ibstat` only the list of CAs.

``ibstatus`` (a shell script over sysfs) prints one block per port::

    Infiniband device 'mlx5_0' port 1 status:
            default gid:     fe80:0000:0000:0000:0015:5dff:fd34:11eb
            base lid:        0x33bf
            state:           4: ACTIVE
            phys state:      5: LinkUp
            rate:            200 Gb/sec (4X HDR)
            link_layer:      InfiniBand

:func:`parse_ibstatus` returns the same CA list shape as ``ibstat`` with the
same port keys where they apply (state and phys_state spelled as ``ibstat``
spells them).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import re

from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.tool_result import tool_result
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.text import (
    error_catalog,
    error_entry,
    found_after,
    holds_any,
    is_prompt_line,
    is_tagged_warning,
    nonblank_lines,
    note_if_unread,
    parse_or_report,
    snake_case,
    split_key_value,
    to_float,
    to_int,
)

IBSTAT_ERRORS = error_catalog({
    "stat_failed": (
        "ibstat could not read one RDMA device (often a non-IB device such as an Azure accelerated-networking "
        "mlx5_an0, or a device that vanished); ibstat stops there, so later CAs are missing.",
        "Run ibstat per device (ibstat mlx5_0) or use ibv_devinfo / rdma link / sysfs; check the device with rdma dev.",
    ),
    "umad_init_failed": (
        "The UMAD library could not start: the ib_umad kernel module is not loaded or /dev/infiniband is missing.",
        "modprobe ib_umad (and mlx5_ib); in a container mount /dev/infiniband.",
    ),
    "no_device": (
        "No InfiniBand/RDMA device was found (no /sys/class/infiniband entries).",
        "Load the NIC RDMA driver (mlx5_ib), check lspci, and in a pod request the RDMA device resource.",
    ),
    "device_not_found": (
        "The CA named on the command line does not exist on this host.",
        "List the CAs with ibstat -l or rdma dev and use one of those names.",
    ),
    "bad_port": (
        "The port number asked for does not exist on this CA.",
        "Use a port between 1 and the CA's 'Number of ports'.",
    ),
    "not_installed": (
        "ibstat/ibstatus is not installed on this host.",
        "Install infiniband-diags (Debian/Ubuntu) or rdma-core infiniband-diags (RHEL).",
    ),
}, "ibstat")

# ibstat's node types: "CA", "Switch", "Router", "iWARP RNIC", "???".
_CA_HEADER = re.compile(r"^\s*(?P<node_type>CA|Switch|Router|iWARP RNIC|\?\?\?)\s*:?\s*'(?P<name>[^']*)'\s*$")
_PORT_HEADER = re.compile(r"^\s*Port\s+(?P<port>\d+)\s*:\s*$")
_KEY = re.compile(r"[A-Za-z][A-Za-z0-9 ./_-]*")   # "Key: value" lines: split_key_value (linear)
_PANIC = re.compile(r"\b(?:ibpanic|iberror)\s*:\s*(?:\[\d+\]\s*)?(?:\w+\s*:\s*)?(?P<msg>.*)", re.I)
_WARN = re.compile(r"\bibwarn\s*:", re.I)
_STAT_FAILED = re.compile(r"stat of IB device '(?P<device>[^']*)' failed(?::\s*(?P<reason>.*))?", re.I)
# "ibstat: command not found": the tool's name, later "not found" (two searches: linear)
_TOOL = re.compile(r"\bibstat(?:us)?:?\s", re.I)
_NOT_FOUND = re.compile(r"not found", re.I)

_CA_KEYS = {
    "ca type": "ca_type",
    "switch type": "ca_type",
    "router type": "ca_type",
    "iwarp rnic type": "ca_type",
    "??? type": "ca_type",
    "number of ports": "num_ports",
    "firmware version": "fw_version",
    "hardware version": "hw_version",
    "node guid": "node_guid",
    "system image guid": "sys_image_guid",
}
_PORT_KEYS = {
    "state": "state",
    "physical state": "phys_state",
    "rate": "rate",
    "base lid": "base_lid",
    "lmc": "lmc",
    "sm lid": "sm_lid",
    "capability mask": "capability_mask",
    "port guid": "port_guid",
    "link layer": "link_layer",
}
_INT_KEYS = ("num_ports", "base_lid", "lmc", "sm_lid")

# sysfs state / phys_state numbers -> ibstat's spelling.
_STATE_NAMES = {0: "???", 1: "Down", 2: "Initializing", 3: "Armed", 4: "Active", 5: "ActiveDefer"}
_PHYS_STATE_NAMES = {
    0: "No state change",
    1: "Sleep",
    2: "Polling",
    3: "Disabled",
    4: "PortConfigurationTraining",
    5: "LinkUp",
    6: "LinkErrorRecovery",
    7: "PhyTest",
}


def _number(text):
    """'400' -> 400, '2.5' -> 2.5, '40 (FDR10)' -> 40, junk -> None."""
    match = re.match(r"^\s*(\d+(?:\.\d+)?)", text or "")
    if not match:
        return None
    value = to_float(match.group(1))
    if value is None:
        return None
    return int(value) if value == int(value) else value


def _new_ca(name, node_type):
    return {
        "name": name,
        "node_type": node_type,
        "ca_type": None,
        "num_ports": None,
        "fw_version": None,
        "hw_version": None,
        "node_guid": None,
        "sys_image_guid": None,
        "ports": [],
    }


def _new_port(number):
    return {
        "port": number,
        "state": None,
        "phys_state": None,
        "rate": None,
        "base_lid": None,
        "lmc": None,
        "sm_lid": None,
        "capability_mask": None,
        "port_guid": None,
        "link_layer": None,
    }


def _set_port_value(port, key, value):
    if key == "rate":
        port["rate"] = _number(value)
        note = re.search(r"\(([^)]*)\)", value)
        if note:
            port["rate_note"] = note.group(1).strip()
    elif key in _INT_KEYS:
        port[key] = to_int(value)
    else:
        port[key] = value


def _error_for(line):
    """Map one line to an error entry, or None."""
    panic = _PANIC.search(line)
    msg = _panic_message(line, panic) if panic else None
    if msg:
        stat = _STAT_FAILED.search(msg)
        if stat:
            entry = error_entry("stat_failed", line, IBSTAT_ERRORS)
            entry["device"] = stat.group("device")
            return entry
        lowered = msg.lower()
        if "umad" in lowered:
            return error_entry("umad_init_failed", line, IBSTAT_ERRORS)
        if "can't list ib device" in lowered or "no ib devices" in lowered:
            return error_entry("no_device", line, IBSTAT_ERRORS)
        if "can't be found" in lowered:
            return error_entry("device_not_found", line, IBSTAT_ERRORS)
        if "has no port number" in lowered:
            return error_entry("bad_port", line, IBSTAT_ERRORS)
        return error_entry("unknown", line, IBSTAT_ERRORS)
    if found_after(_TOOL, _NOT_FOUND, line):
        return error_entry("not_installed", line, IBSTAT_ERRORS)
    return None


def _panic_message(line, panic):
    """The message of an ibpanic/iberror line ('' when there is none); "main: msg" when only that is left."""
    message = panic.group("msg").strip()
    if message:
        return message
    return line[panic.start():].split(":", 1)[1].strip()


def _parse_ibstat(text):
    cas = []
    errors = []
    warnings = []
    ca = None
    port = None
    for line in nonblank_lines(text):
        header = _CA_HEADER.match(line)
        if header:
            ca = _new_ca(header.group("name"), header.group("node_type"))
            cas.append(ca)
            port = None
            continue
        if is_prompt_line(line):
            ca = port = None    # the lines after a prompt are another command's
            continue
        port_header = _PORT_HEADER.match(line)
        if port_header and ca is not None:
            port = _new_port(to_int(port_header.group("port")))
            ca["ports"].append(port)
            continue
        error = _error_for(line)
        if error is not None:
            errors.append(error)
            continue
        if _WARN.search(line):
            warnings.append(line.strip())
            if "has no port number" in line:
                errors.append(error_entry("bad_port", line, IBSTAT_ERRORS))
            continue
        if is_tagged_warning(line):
            warnings.append(line.strip())   # "libibverbs: Warning: ...": not a field of the CA
            continue
        pair = split_key_value(line, _KEY)
        if not pair or ca is None:
            continue
        raw_key = " ".join(pair[0].lower().split())
        value = pair[1] or None     # "CA type: ", "Firmware version: " (EFA, soft-RoCE): the device gives none
        if value is None:
            continue
        if raw_key in _PORT_KEYS and port is not None:
            _set_port_value(port, _PORT_KEYS[raw_key], value)
        elif raw_key in _CA_KEYS:
            key = _CA_KEYS[raw_key]
            ca[key] = to_int(value) if key in _INT_KEYS else value
        else:
            key = snake_case(raw_key)
            scope = port if port is not None else ca
            if key and key not in scope:
                scope[key] = value
    return {"cas": cas, "errors": errors, "warnings": warnings}


# ---- ibstatus ---------------------------------------------------------------

_IBSTATUS_HEADER = re.compile(
    r"^\s*Infiniband device\s+'(?P<device>[^']*)'\s+port\s+(?P<port>\d+)\s+status\s*:?\s*$", re.I
)
_IBSTATUS_FATAL = re.compile(r"^\s*Fatal error:\s*(?P<msg>.*)$", re.I)
_NUMBERED = re.compile(r"^\s*(?P<num>\d+)\s*:(?P<name>.*)$")   # name stripped in code (linear)
_RATE = re.compile(r"^\s*(?P<gbps>\d+(?:\.\d+)?)\s*Gb/sec(?:\s*\((?P<width>\d+X)?(?P<speed>[^)]*)\))?", re.I)


def _ibstatus_port(device, number):
    port = _new_port(number)
    port.update({"device": device, "default_gid": None, "state_num": None, "phys_state_num": None})
    return port


def _set_ibstatus_value(port, key, value):
    if value.lower() == "unknown":
        value = None
    if key == "default_gid":
        port["default_gid"] = value
    elif key in ("base_lid", "sm_lid"):
        port[key] = to_int(value) if value else None
        port[key + "_hex"] = value
    elif key in ("state", "phys_state"):
        port[key + "_raw"] = value
        numbered = _NUMBERED.match(value or "")
        if numbered:
            number = to_int(numbered.group("num"))
            names = _STATE_NAMES if key == "state" else _PHYS_STATE_NAMES
            port[key + "_num"] = number
            port[key] = names.get(number, numbered.group("name").strip())
        else:
            port[key] = value
    elif key == "rate":
        port["rate_text"] = value
        rate = _RATE.match(value or "")
        if rate:
            port["rate"] = _number(rate.group("gbps"))
            port["width"] = rate.group("width")
            port["speed"] = (rate.group("speed") or "").strip() or None
        else:
            port["rate"] = _number(value)
    elif key == "link_layer":
        port["link_layer"] = value
    elif key and key not in port:
        port[key] = value


def _parse_ibstatus(text):
    cas = []
    errors = []
    warnings = []
    by_name = {}
    port = None
    for line in nonblank_lines(text):
        if is_prompt_line(line):
            port = None     # the lines after a prompt are another command's
            continue
        header = _IBSTATUS_HEADER.match(line)
        if header:
            device = header.group("device")
            ca = by_name.get(device)
            if ca is None:
                ca = {"name": device, "ports": []}
                by_name[device] = ca
                cas.append(ca)
            port = _ibstatus_port(device, to_int(header.group("port")))
            ca["ports"].append(port)
            continue
        fatal = _IBSTATUS_FATAL.match(line)
        if fatal:
            msg = fatal.group("msg").lower()
            code = "no_device" if ("no devices" in msg or "sys files not found" in msg) else "unknown"
            errors.append(error_entry(code, line, IBSTAT_ERRORS))
            continue
        if found_after(_TOOL, _NOT_FOUND, line):
            errors.append(error_entry("not_installed", line, IBSTAT_ERRORS))
            continue
        if is_tagged_warning(line):
            warnings.append(line.strip())
            continue
        pair = split_key_value(line, _KEY)
        if pair and port is not None:
            _set_ibstatus_value(port, snake_case(pair[0]), pair[1])
    return {"cas": cas, "errors": errors, "warnings": warnings}


# ---- public API ---------------------------------------------------------------

def _safe(function, text):
    return parse_or_report(function, text, {"cas": [], "errors": [], "warnings": []}, IBSTAT_ERRORS)


def parse_ibstatus_full(text):
    """Return {cas, errors, warnings} for ibstatus output; never raises."""
    return tool_result(_parse_ibstatus, text, "ibstatus", {"cas": [], "errors": [], "warnings": []}, IBSTAT_ERRORS)


def parse_ibstatus(text):
    """List of {name, ports: [{device, port, state, phys_state, rate, base_lid, sm_lid, link_layer, default_gid, ...}]}."""
    return parse_ibstatus_full(text)["cas"]


def parse_ibstat_full(text):
    """Return {cas, errors, warnings, source} for ibstat output; never raises.

    Text that holds no ibstat CA block but ibstatus port blocks is read as
    ibstatus (``source: ibstatus``).
    """
    result = _safe(_parse_ibstat, text)
    result["source"] = "ibstat"
    if not result["cas"]:
        status = _safe(_parse_ibstatus, text)
        if status["cas"]:
            known = set((e["code"], e["message"]) for e in result["errors"])
            status["errors"] = result["errors"] + [e for e in status["errors"] if (e["code"], e["message"]) not in known]
            status["source"] = "ibstatus"
            return status
    return note_if_unread(result, text, "ibstat (or ibstatus)", holds_any(result, "cas", "errors", "warnings"))


def parse_ibstat_errors(text):
    """The errors (``ibpanic`` lines and the like) of ibstat output: list of {code, message, cause, fix[, device]}."""
    return parse_ibstat_full(text)["errors"]


def parse_ibstat(text):
    """List of CAs {name, ca_type, num_ports, fw_version, hw_version, node_guid, sys_image_guid, ports: [...]}."""
    return parse_ibstat_full(text)["cas"]
