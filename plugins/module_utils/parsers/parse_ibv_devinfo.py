# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parse ``ibv_devinfo`` (plain and ``-v``) and ``ibv_devices`` (rdma-core libibverbs examples).

``ibv_devinfo`` prints ``hca_id:`` blocks of ``key: value`` lines and
``port:`` sub-blocks. Values such as ``PORT_ACTIVE (4)`` keep the name in
``state`` and the number in ``state_num``; MTUs (``4096 (5)``) become bytes.
``-v`` adds device capabilities (flag names listed under a key are collected
into that key, or into ``<key>_list`` when the key holds a hex mask; the
fields of a capability section such as ``tso_caps:`` / ``rss_caps:`` /
``packet_pacing_caps:``, printed one indent deeper, into a dict under the
section's name), per-port
attributes (``gid_tbl_len``, ``active_width``, ``active_speed``,
``phys_state``) and ``GID[  n]:`` lines (with ``, RoCE v2`` type suffixes on
newer rdma-core) collected into the port's ``gids``.

With no device it prints ``No IB devices found`` (or ``Failed to get IB
devices list: ...``) and libibverbs warnings: :func:`parse_ibv_devinfo`
returns an empty list and :func:`parse_ibv_devinfo_full` the messages as
``errors`` / ``warnings``.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import re

from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.gid_text import mapped_ipv4
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.tool_result import tool_result
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.text import (
    bounded_lines,
    error_catalog,
    error_entry,
    found_after,
    is_prompt_line,
    is_tagged_warning,
    snake_case,
    split_key_value,
    to_float,
    to_int,
)

IBV_DEVINFO_ERRORS = error_catalog({
    "no_device": (
        "libibverbs found no RDMA device: no driver bound, no uverbs device, or (in a pod) no device mounted.",
        "Check lsmod (mlx5_ib/ib_uverbs), rdma dev and /dev/infiniband; in Kubernetes request the RDMA resource.",
    ),
    "no_rdma_support": (
        "The kernel offers no RDMA verbs interface (ibv_get_device_list failed), e.g. no ib_uverbs module "
        "or RDMA is not built into this kernel.",
        "modprobe ib_uverbs (and the NIC's RDMA driver); on a VM or container host, pass the RDMA device through.",
    ),
    "provider_missing": (
        "A kernel RDMA device exists but libibverbs has no user-space provider for it "
        "(ibverbs-providers / rdma-core package missing or too old for the kernel).",
        "Install ibverbs-providers (Debian/Ubuntu) or libibverbs/rdma-core (RHEL) matching the driver, "
        "or MLNX_OFED/DOCA in the image.",
    ),
    "config_missing": (
        "libibverbs cannot open its provider config directory (/etc/libibverbs.d): the providers are not installed.",
        "Install ibverbs-providers / rdma-core in the host or container image.",
    ),
    "device_not_found": (
        "The device named with -d does not exist on this host.",
        "List devices with ibv_devices or rdma dev and pass one of those names.",
    ),
    "query_failed": (
        "ibv_devinfo could open the device list but failed to open or query a device or port "
        "(driver problem, permissions on /dev/infiniband, or firmware error).",
        "Check dmesg for mlx5 errors, the permissions of /dev/infiniband/uverbs*, and reset or reload the driver.",
    ),
    "not_installed": (
        "ibv_devinfo/ibv_devices is not installed on this host.",
        "Install ibverbs-utils (Debian/Ubuntu) or libibverbs-utils (RHEL).",
    ),
    "abridged_port": (
        "Port lines (state, MTU, link layer, GIDs) come before any 'port:' line: the paste left the port line out "
        "(ibv_devinfo | head, an elided excerpt); they are read into a port whose number is unknown (null).",
        "Give the whole ibv_devinfo output, or run ibv_devinfo -d <device> -i <port>.",
    ),
    "not_recognised": (
        "Nothing in the text is ibv_devinfo (or ibv_devices) output: another command's output, or a paste that "
        "lost the lines the tool printed (a warning, never an error).",
        "Check which command ran and give its whole output (stdout and stderr).",
    ),
}, "ibv_devinfo")

_HCA_ID = re.compile(r"^\s*hca_id\s*:\s*(?P<name>\S+)\s*$")
_PORT = re.compile(r"^\s*port\s*:\s*(?P<port>\d+)\s*$")
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_ ()-]*")   # "key: value" lines: split_key_value (linear)
_GID = re.compile(r"^\s*GID\s*\[\s*(?P<index>\d+)\s*\]\s*:\s*(?P<gid>[0-9A-Fa-f:.]+)\s*(?:,(?P<type>.*))?$")
_SIGNED_INT = re.compile(r"-?\d+")
_TOOL = re.compile(r"\bibv_(?:devinfo|devices):?\s")
_NOT_FOUND = re.compile(r"not found")
_UNKNOWN_FLAGS = re.compile(r"^\s*Unknown flags\s*:\s*(?P<value>\S+)\s*$", re.I)
_HEX_MASK = re.compile(r"^0x[0-9A-Fa-f]+$")
_FLAG = re.compile(r"^\s*[A-Za-z][A-Za-z0-9_ -]*$")

_DEVICE_KEYS = (
    "transport", "fw_ver", "node_guid", "sys_image_guid", "vendor_id", "vendor_part_id",
    "hw_ver", "board_id", "phys_port_cnt",
)
_PORT_KEYS = ("state", "max_mtu", "active_mtu", "sm_lid", "port_lid", "port_lmc", "link_layer")
_INT_KEYS = frozenset((
    "vendor_part_id", "phys_port_cnt", "sm_lid", "port_lid", "port_lmc", "gid_tbl_len",
    "pkey_tbl_len", "sm_sl", "subnet_timeout", "init_type_reply", "max_qp", "max_qp_wr",
    "max_sge", "max_sge_rd", "max_cq", "max_cqe", "max_mr", "max_pd", "max_qp_rd_atom",
    "max_ee_rd_atom", "max_res_rd_atom", "max_qp_init_rd_atom", "max_ee_init_rd_atom", "max_ee",
    "max_rdd", "max_mw", "max_raw_ipv6_qp", "max_raw_ethy_qp", "max_mcast_grp", "max_mcast_qp_attach",
    "max_total_mcast_qp_attach", "max_ah", "max_fmr", "max_map_per_fmr", "max_srq", "max_srq_wr",
    "max_srq_sge", "max_pkeys", "local_ca_ack_delay",
))
_MTU_KEYS = ("max_mtu", "active_mtu")
# Keys only a port block holds: before any "port:" line they open a port of unknown number (an abridged paste).
_PORT_ONLY_KEYS = frozenset(_PORT_KEYS + ("phys_state", "active_width", "active_speed", "gid_tbl_len", "port_cap_flags"))


def _blank_record(key, value, null_keys, list_key):
    """{key: value, each null key: None, list_key: []} in that order."""
    record = {key: value}
    record.update(dict.fromkeys(null_keys))
    record[list_key] = []
    return record


def _new_device(name):
    return _blank_record("hca_id", name, _DEVICE_KEYS, "ports")


def _new_port(number):
    return _blank_record("port", number, _PORT_KEYS, "gids")


def _gid_version(gid_type):
    text = (gid_type or "").lower()
    if re.search(r"v2\b", text):
        return "v2"
    if re.search(r"v1\b", text):
        return "v1"
    return None


def _numbered(value):
    """'PORT_ACTIVE (4)' -> ('PORT_ACTIVE', '4'); None when the value does not end in '(number)'."""
    if not value.endswith(")"):
        return None
    name, sep, inner = value[:-1].rpartition("(")
    inner = inner.strip()
    if not sep or _SIGNED_INT.fullmatch(inner) is None:
        return None
    return name.rstrip(), inner


def _set_value(scope, key, value):
    """Store value under key with the conversions the contract asks for."""
    numbered = _numbered(value)
    if key in _MTU_KEYS:
        scope[key] = to_int(numbered[0] if numbered else value)
        if numbered:
            scope[key + "_enum"] = to_int(numbered[1])
        return
    if key == "active_speed":
        scope[key] = numbered[0] if numbered else value
        speed = re.match(r"^\s*(\d+(?:\.\d+)?)\s*Gbps", value, re.I)
        scope["active_speed_gbps"] = to_float(speed.group(1)) if speed else None
        if numbered:
            scope[key + "_num"] = to_int(numbered[1])
        return
    if numbered and key not in _INT_KEYS:
        scope[key] = numbered[0]
        scope[key + "_num"] = to_int(numbered[1])
        return
    if key in _INT_KEYS:
        scope[key] = to_int(value)
        if scope[key] is None:
            scope[key + "_raw"] = value
        return
    scope[key] = value


def _add_flag(scope, key, flag):
    """Flags listed under 'key:' go to key itself (no value) or to key_list (key holds a mask)."""
    if scope.get(key) is None and key not in _DEVICE_KEYS and key not in _PORT_KEYS:
        scope[key] = []
    target = key if isinstance(scope[key], list) else key + "_list"
    scope.setdefault(target, []).append(flag)


def _indent(line):
    """The width of a line's leading blanks, tabs at 8 (how deep ibv_devinfo nested it)."""
    return len(line[:len(line) - len(line.lstrip())].expandtabs(8))


def _open_section(scope, indent, section):
    """The section a valueless key opened, once the key:value line after it is indented deeper (indent).

    ibv_devinfo -v prints capability sections ("tso_caps:", "rss_caps:", "packet_pacing_caps:", "cq
    moderation caps:") as a valueless key with its fields one indent deeper; several sections have a field of
    the same name (supported_qp under tso_caps, rss_caps and packet_pacing_caps), so flattening them into the
    device merged three lists into one.  A section's fields go into a dict under the section's name.
    """
    if section is None or section["fields"] is not None or indent <= section["indent"]:
        return section
    section["fields"] = {}
    scope[section["key"]] = section["fields"]
    return section


def _may_open_section(scope, flag_key, key):
    """Whether the valueless key just stored may hold a section: never a field of the contract (port, state,
    transport, ...) nor one already read, which a section would overwrite with a dict."""
    return bool(flag_key) and flag_key == snake_case(key) and flag_key not in _DEVICE_KEYS + _PORT_KEYS + (
        "port", "hca_id", "ports", "gids") and scope.get(flag_key) is None


def _is_flag(line, indent, flag_indent):
    """Whether a line without ':' is one more flag name of the list the key at flag_indent opened.

    Flag names are printed deeper than their key; a line at the key's own indent is a statement of its own
    ("tag matching not supported", "core clock not supported"), which was read as one more flag of the list
    before it.  A paste that lost all indentation (flag_indent 0) can not tell them apart: a flag, as before.
    """
    return _FLAG.match(line) is not None and (indent > flag_indent or flag_indent == 0)


def _error_for(line):
    lowered = line.lower()
    if "no ib devices found" in lowered:
        return error_entry("no_device", line, IBV_DEVINFO_ERRORS), False
    if "failed to get ib devices list" in lowered:
        return error_entry("no_rdma_support", line, IBV_DEVINFO_ERRORS), False
    if "no userspace device-specific driver found" in lowered:
        return error_entry("provider_missing", line, IBV_DEVINFO_ERRORS), True
    if "couldn't open config directory" in lowered or "could not open config directory" in lowered:
        return error_entry("config_missing", line, IBV_DEVINFO_ERRORS), True
    if re.search(r"ib device '[^']*' wasn't found", lowered):
        return error_entry("device_not_found", line, IBV_DEVINFO_ERRORS), False
    if re.search(r"failed to (?:open device|query device|query port|query gid|close device)", lowered) or (
        "invalid port requested" in lowered
    ):
        return error_entry("query_failed", line, IBV_DEVINFO_ERRORS), False
    if found_after(_TOOL, _NOT_FOUND, lowered):
        return error_entry("not_installed", line, IBV_DEVINFO_ERRORS), False
    if is_tagged_warning(line):
        # "libibverbs: Warning: couldn't stat ...", "mlx4: Warning: BlueFlame ...": a warning, not a field
        return error_entry("unknown", line, IBV_DEVINFO_ERRORS), True
    return None, False


def _noted(line, errors, warnings):
    """Whether the line is an error or a warning (``_error_for``), then added to the list it belongs to."""
    error, is_warning = _error_for(line)
    if error is not None:
        (warnings if is_warning else errors).append(error)
    return error is not None


def _gid_entry(match):
    """A 'GID[  3]:  ::ffff:10.0.0.1, RoCE v2' line."""
    gid_type = (match.group("type") or "").strip() or None
    return {
        "index": to_int(match.group("index")),
        "gid": match.group("gid"),
        "type": gid_type,
        "version": _gid_version(gid_type),
        "ipv4": mapped_ipv4(match.group("gid")),
    }


def _store_field(device, scope, pair, flag_key):
    """Store one 'key: value' field (device keys on the device even inside a port block).

    Returns the key when lines of flag names may follow it (device_cap_flags, *_odp_caps, ...: a key with
    a hex mask or no value), else None; a key that is no field leaves flag_key as it was.
    """
    key = snake_case(pair[0])
    value = pair[1]
    if not key or key in ("hca_id", "ports", "gids"):
        return flag_key
    if value:
        _set_value(device if key in _DEVICE_KEYS else scope, key, value)
    return key if (not value or _HEX_MASK.match(value)) else None


def _abridged_port(device, warnings):
    """The port of unknown number that holds port lines printed before any 'port:' line (one warning per device)."""
    port = _new_port(None)
    device["ports"].append(port)
    warnings.append(error_entry("abridged_port", "%s: port lines before any 'port:' line (an abridged paste) are "
                                "read into a port whose number is unknown" % device["hca_id"], IBV_DEVINFO_ERRORS))
    return port


def _parse_devinfo(text):
    devices = []
    errors = []
    warnings = []
    device = None
    port = None
    flag_key = None
    flag_indent = 0
    section = None   # {"key", "indent", "fields"}: a valueless key, a section once deeper fields follow
    for line in bounded_lines(text):
        if not line.strip():
            flag_key = None
            section = None
            continue
        if _noted(line, errors, warnings):
            continue
        hca = _HCA_ID.match(line)
        if hca or is_prompt_line(line):
            # a prompt ends the device: the lines after it are another command's
            device = _new_device(hca.group("name")) if hca else None
            if device is not None:
                devices.append(device)
            port = None
            flag_key = None
            section = None
            continue
        if device is None:
            continue
        port_match = _PORT.match(line)
        if port_match:
            port = _new_port(to_int(port_match.group("port")))
            device["ports"].append(port)
            flag_key = None
            section = None
            continue
        indent = _indent(line)
        if section is not None and section["fields"] is not None and indent <= section["indent"]:
            section = None   # a line back at (or above) the section's own indent ends the section
        gid = _GID.match(line)
        unknown_flags = _UNKNOWN_FLAGS.match(line)
        pair = None if (unknown_flags and flag_key) or gid else split_key_value(line, _KEY)
        if port is None and (gid or (pair and section is None and snake_case(pair[0]) in _PORT_ONLY_KEYS)):
            port = _abridged_port(device, warnings)
        scope = port if port is not None else device
        if gid:
            port["gids"].append(_gid_entry(gid))
            continue
        section = _open_section(scope, indent, section) if pair else section
        inner = section["fields"] if section is not None and section["fields"] is not None else None
        if unknown_flags and flag_key:
            _add_flag(scope if inner is None else inner, flag_key, "Unknown flags: " + unknown_flags.group("value"))
            continue
        if pair:
            if inner is None:
                section = None
                flag_key = _store_field(device, scope, pair, flag_key)
                if not pair[1] and _may_open_section(scope, flag_key, pair[0]):
                    section = {"key": flag_key, "indent": indent, "fields": None}
            else:
                flag_key = _store_field(inner, inner, pair, flag_key)
            flag_indent = indent
            continue
        if flag_key and _is_flag(line, indent, flag_indent):
            _add_flag(scope if inner is None else inner, flag_key, line.strip())
        else:
            flag_key = None
    return {"devices": devices, "errors": errors, "warnings": warnings}


def parse_ibv_devinfo_full(text):
    """Return {devices, errors, warnings} for ibv_devinfo output; never raises.

    When no device was read, the libibverbs warnings that explain why are
    also copied into ``errors`` (before ``no_device``).
    """
    return _devices_result(_parse_devinfo, text, "ibv_devinfo")


def _devices_result(parse, text, tool):
    """parse(text), never raising; when no device was read, the warnings that explain why lead the errors, and
    when nothing was read, a warning says so."""
    return tool_result(parse, text, tool, {"devices": [], "errors": [], "warnings": []}, IBV_DEVINFO_ERRORS,
                       settle=_warnings_lead, warning_entries=True)


def _warnings_lead(result):
    if not result["devices"] and result["errors"] and result["warnings"]:
        result["errors"] = result["warnings"] + result["errors"]


def parse_ibv_devinfo_errors(text):
    """Only the errors of ibv_devinfo output (list of {code, message, cause, fix})."""
    return parse_ibv_devinfo_full(text)["errors"]


def parse_ibv_devinfo(text):
    """List of {hca_id, transport, fw_ver, node_guid, ..., phys_port_cnt, ports: [{port, state, active_mtu, ...}]}."""
    return parse_ibv_devinfo_full(text)["devices"]


# ---- ibv_devices ---------------------------------------------------------------

_DEVICES_ROW = re.compile(r"^\s*(?P<device>[A-Za-z0-9][A-Za-z0-9_.:-]*)\s+(?P<guid>[0-9A-Fa-f]{16})\s*$")
_DEVICES_ROW_COLON = re.compile(
    r"^\s*(?P<device>[A-Za-z0-9][A-Za-z0-9_.:-]*)\s+(?P<guid>[0-9A-Fa-f]{4}(?::[0-9A-Fa-f]{4}){3})\s*$"
)
# ibv_devinfo -l: "2 HCAs found:" then one name per line.
_LIST_HEADER = re.compile(r"^\s*(?P<count>\d+)\s+HCAs?\s+found\s*:\s*$", re.I)
_LIST_ROW = re.compile(r"^\s+(?P<device>[A-Za-z0-9][A-Za-z0-9_.:-]*)\s*$")


def _parse_devices(text):
    devices = []
    errors = []
    warnings = []
    in_list = False
    for line in bounded_lines(text):
        if not line.strip():
            in_list = False
            continue
        if _noted(line, errors, warnings):
            continue
        row = _DEVICES_ROW.match(line) or _DEVICES_ROW_COLON.match(line)
        if row and row.group("device").lower() != "device":
            devices.append({"device": row.group("device"), "node_guid": row.group("guid").lower()})
            continue
        if _LIST_HEADER.match(line):
            in_list = True
            continue
        listed = _LIST_ROW.match(line) if in_list else None
        if listed:
            devices.append({"device": listed.group("device"), "node_guid": None})
    return {"devices": devices, "errors": errors, "warnings": warnings}


def parse_ibv_devices_full(text):
    """Return {devices: [{device, node_guid}], errors, warnings} for ibv_devices (or ibv_devinfo -l) output."""
    return _devices_result(_parse_devices, text, "ibv_devices")


def parse_ibv_devices(text):
    """List of {device, node_guid} from ibv_devices output."""
    return parse_ibv_devices_full(text)["devices"]
