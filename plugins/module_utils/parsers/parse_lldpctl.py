# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parse ``lldpctl -f json`` (and ``-f json0``, ``lldpcli -f json show neighbors``) from lldpd: which switch and
which of its ports each local interface sees as its LLDP neighbour.

lldpd's ``json`` folds what has one element: the ``interface`` table is an object ``{ifname: entry}`` for one
interface and a list of such objects for several (newer releases give entries with a ``name`` key instead), a
chassis is keyed by its system name (``{"leaf01": {"id": ..., "descr": ...}}``) or, without one, is the object
itself, and a value is a string or a list of strings (``mgmt-ip``). ``json0`` wraps everything in lists and
every value in ``{"value": ...}``. Both are read into one flat entry per neighbour. Text around the JSON (a
prompt, the command line, a warning) is tolerated; no neighbour is an empty list, not an error.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.text import (
    decode_json_at,
    error_catalog,
    error_entry,
    parse_or_report,
    pasted_text,
    to_text,
    unrecognised_warning,
)

LLDPCTL_ERRORS = error_catalog({
    "no_output": (
        "lldpctl printed nothing (lldpd not running, or lldpctl could not reach its socket).",
        "Start lldpd on the host (systemctl start lldpd) and run lldpctl as root or a member of the _lldpd group.",
    ),
    "no_lldp_json": (
        "The text holds no lldpd JSON table (lldpctl printed an error, or another format than json / json0).",
        "Run lldpctl -f json; read its message: lldpd may not be running, or the socket may not be readable.",
    ),
    "truncated_json": (
        "The JSON ends before its table does (the output was cut: a deadline, a full buffer).",
        "Rerun lldpctl -f json; with many interfaces, give it more time.",
    ),
}, "lldpctl")
# the keys of a neighbour entry (an interface's table entry holds some of them)
_ENTRY_KEYS = ("chassis", "port", "via", "rid", "age")
# how many JSON starts are tried in noise before giving up (each decode reads until it fails)
_MAX_STARTS = 64


def empty_result():
    return {"neighbors": [], "errors": [], "warnings": [], "ok": False}


def parse_lldpctl(text):
    """``{neighbors, errors, warnings, ok}`` of lldpctl's JSON; each neighbour ``{interface, chassis,
    chassis_id, chassis_id_type, port_id, port_id_type, port_descr, mgmt_ip, via, rid, age, ttl}`` (strings,
    ``mgmt_ip`` a list; None where lldpd gave nothing). ``ok``: a table was read (even with no neighbour)."""
    return parse_or_report(_parse, text, empty_result(), LLDPCTL_ERRORS)


def _parse(text):
    text = to_text(text)
    result = empty_result()
    if not text.strip():
        result["errors"].append(error_entry("no_output", "lldpctl printed nothing", LLDPCTL_ERRORS))
        return result
    table, cut = _lldp_table(pasted_text(text))
    if table is None:
        code = "truncated_json" if cut else "no_lldp_json"
        message = "the JSON is cut before its end" if cut else (unrecognised_warning("lldpctl", text) or "")
        result["errors"].append(error_entry(code, message, LLDPCTL_ERRORS))
        return result
    for name, entry in _entries(table):
        neighbor = _neighbor(name, entry)
        if neighbor is None:
            result["warnings"].append("an interface entry without a name or a neighbour was left out")
        else:
            result["neighbors"].append(neighbor)
    result["ok"] = True
    return result


def _lldp_table(text):
    """(the ``lldp`` value of the first JSON object that has one, whether a JSON object was cut)."""
    cut = False
    start = text.find("{")
    tries = 0
    while start >= 0 and tries < _MAX_STARTS:
        tries += 1
        value, end, reason = decode_json_at(text, start)
        if reason is None and isinstance(value, dict) and isinstance(value.get("lldp"), (dict, list)):
            return value["lldp"], False
        cut = cut or reason == "cut"
        start = text.find("{", max(end, start + 1) if reason is None else start + 1)
    return None, cut


def _entries(table):
    """(interface name or None, entry) of every interface of the table, json and json0 alike."""
    out = []
    for block in _as_list(table):
        if not isinstance(block, dict):
            continue
        for item in _as_list(block.get("interface")):
            out.extend(_named(item))
    return out


def _named(item):
    """(name, entry) of one item of the interface table: an entry itself (``name`` inside) or ``{name: entry}``."""
    if not isinstance(item, dict):
        return []
    if any(key in item for key in _ENTRY_KEYS) or "name" in item:
        return [(_value(item.get("name")), item)]
    return [(name, entry) for name, entry in item.items() if isinstance(entry, dict)]


def _neighbor(name, entry):
    if not name or not isinstance(entry, dict):
        return None
    chassis_name, chassis = _chassis(entry.get("chassis"))
    port = _first(entry.get("port"))
    chassis_id = _first(chassis.get("id"))
    port_id = _first(port.get("id"))
    return {
        "interface": to_text(name),
        "chassis": chassis_name,
        "chassis_id": _value(chassis_id.get("value")),
        "chassis_id_type": _value(chassis_id.get("type")),
        "port_id": _value(port_id.get("value")),
        "port_id_type": _value(port_id.get("type")),
        "port_descr": _value(port.get("descr")),
        "mgmt_ip": _values(chassis.get("mgmt-ip")),
        "via": _value(entry.get("via")),
        "rid": _value(entry.get("rid")),
        "age": _value(entry.get("age")),
        "ttl": _value(port.get("ttl")) or _value(_first(entry.get("ttl")).get("ttl")),
    }


def _chassis(value):
    """(system name or None, the chassis object): json keys it by its name, json0 has a ``name`` list."""
    chassis = _first(value)
    if not chassis:
        return None, {}
    if "id" in chassis or "name" in chassis or "descr" in chassis:
        return _value(chassis.get("name")), chassis
    name, inner = next(iter(chassis.items()))
    return to_text(name), inner if isinstance(inner, dict) else {}


def _as_list(value):
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


def _first(value):
    """The first object of a json0 list, or the object (an empty dict for anything else)."""
    for item in _as_list(value):
        return item if isinstance(item, dict) else {}
    return {}


def _value(value):
    """A json string, or json0's ``[{"value": ...}]`` (the first), as text; None for nothing."""
    if isinstance(value, list):
        value = value[0] if value else None
    if isinstance(value, dict):
        value = value.get("value")
    if value is None or isinstance(value, (dict, list)):
        return None
    return to_text(value) if not isinstance(value, bool) else None


def _values(value):
    return [v for v in (_value(item) for item in _as_list(value)) if v is not None]
