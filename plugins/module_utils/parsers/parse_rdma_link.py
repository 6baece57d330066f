# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parse iproute2 ``rdma link`` and ``rdma system`` output (text and ``-j`` JSON).

``rdma link`` prints one line per port, in the current form::

    link mlx5_0/1 state ACTIVE physical_state LINK_UP netdev ens6f0np0

and in the older form (device index first)::

    5/1: mlx5_5/1: subnet_prefix fe80:0000:0000:0000 lid 12 sm_lid 4 lmc 0 state ACTIVE physical_state LINK_UP

followed by ``key value`` pairs (``subnet_prefix``, ``lid``, ``sm_lid``,
``lmc``, ``state``, ``physical_state``, ``netdev``, ``netdev_index`` with
``-d``, and a ``caps: <...>`` line with ``-d``). Unknown keys are kept.

``rdma system`` prints ``netns shared copy-on-fork on`` (newer versions add
``privileged-qkey off``).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import re

from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.tool_result import tool_result
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.text import (
    bounded_lines,
    decode_json_at,
    error_catalog,
    error_entry,
    found_after,
    is_tagged_warning,
    nonblank_lines,
    note_if_unread,
    parse_or_report,
    pasted_text,
    snake_case,
    to_int,
    to_text,
)

RDMA_LINK_ERRORS = error_catalog({
    "no_device": (
        "The kernel reports no RDMA device or the named device does not exist (rdma: wrong device name).",
        "Check the NIC RDMA driver (mlx5_ib) with lsmod and rdma dev; in a pod request the RDMA device resource.",
    ),
    "no_rdma_netlink": (
        "The kernel's RDMA netlink interface is missing (no ib_core / RDMA support) or too old for this iproute2.",
        "Load ib_core and the NIC RDMA driver; use a kernel with RDMA support.",
    ),
    "unsupported": (
        "This iproute2 'rdma' tool does not know the command or option (too old).",
        "Update iproute2, or use ibv_devinfo / sysfs.",
    ),
    "not_installed": (
        "The iproute2 'rdma' tool is not installed on this host.",
        "Install iproute2 (it ships /sbin/rdma since 4.16).",
    ),
}, "rdma")

# The rest of a line is taken whole ((?P<rest>.*)$, split in code): a lazy .*? before \s*$ would
# backtrack over every run of blanks, quadratic in its length.
_NEW_FORM = re.compile(r"^\s*link\s+(?P<device>[^\s/]+)/(?P<port>\d+)(?:\s+(?P<rest>.*))?$")
_OLD_FORM = re.compile(
    r"^\s*(?P<index>\d+)/(?P<port0>\d+):\s*(?P<device>[^\s/]+)/(?P<port>\d+):?(?:\s+(?P<rest>.*))?$"
)
_CAPS = re.compile(r"^\s*caps:\s*<(?P<caps>[^>]*)(?:>\s*)?$")
_INT_FIELDS = ("lid", "sm_lid", "lmc", "netdev_index", "index", "port")
_STR_FIELDS = ("state", "physical_state", "netdev", "subnet_prefix")
_JSON_START = re.compile(r"^[ \t]*[\[{]", re.M)
_MAX_JSON_FAILURES = 100000
_SYSTEM_LINE = re.compile(r"^\s*netns\s+(?P<rest>\S.*)$")
# "X.*Y" searches are two searches (found_after): linear.
_RDMA_WORD = re.compile(r"\brdma:?\s", re.I)
_NOT_FOUND = re.compile(r"not found", re.I)
_NO_SUCH_FILE = re.compile(r"No such file or directory", re.I)
_RDMA_NAME = re.compile(r"\brdma\b", re.I)
_UNSUPPORTED = re.compile(r"\bis unknown\b|unknown option")
_TRY_RDMA = re.compile(r'try "rdma')
_HELP = re.compile(r'help"')
_COMMAND = re.compile(r"command ")
_IS_UNKNOWN = re.compile(r" is unknown")


def _new_link(device, port, index=None):
    return {
        "device": device,
        "port": port,
        "state": None,
        "physical_state": None,
        "netdev": None,
        "index": index,
    }


def _apply_pairs(link, rest):
    tokens = (rest or "").split()
    position = 0
    while position < len(tokens):
        key = snake_case(tokens[position])
        value = tokens[position + 1] if position + 1 < len(tokens) else None
        position += 2
        if not key or key in ("device", "port", "index", "caps"):
            continue
        if key in _INT_FIELDS:
            link[key] = to_int(value)
            if link[key] is None and value is not None:
                link[key + "_raw"] = value
        else:
            link[key] = value


_CONTINUED_KEYS = frozenset(("state", "physical_state", "netdev", "netdev_index", "subnet_prefix", "lid", "sm_lid",
                             "lmc"))


def _continues_link(line):
    """Whether an indented line holds more key value pairs of the link line before it."""
    words = line.split(None, 1)
    return line[:1] in (" ", "\t") and bool(words) and words[0] in _CONTINUED_KEYS


def _error_for(line):
    if is_tagged_warning(line):
        return None     # "libibverbs: Warning: ...": never an error
    lowered = line.lower()
    if found_after(_RDMA_WORD, _NOT_FOUND, line) or found_after(_NO_SUCH_FILE, _RDMA_NAME, line):
        return error_entry("not_installed", line, RDMA_LINK_ERRORS)
    if "wrong device name" in lowered or "no such device" in lowered or "unknown device" in lowered:
        return error_entry("no_device", line, RDMA_LINK_ERRORS)
    if (_UNSUPPORTED.search(lowered) or found_after(_TRY_RDMA, _HELP, lowered)
            or found_after(_COMMAND, _IS_UNKNOWN, lowered)):
        return error_entry("unsupported", line, RDMA_LINK_ERRORS)
    if "netlink" in lowered and ("error" in lowered or "failed" in lowered):
        return error_entry("no_rdma_netlink", line, RDMA_LINK_ERRORS)
    if lowered.lstrip().startswith("error:"):
        return error_entry("unknown", line, RDMA_LINK_ERRORS)
    return None


def _json_values(text):
    """Yield the JSON arrays/objects found at the starts of lines (rdma -j / -jp output).

    Linear: after a value the scan goes on behind it, after a failure at the
    position where the decoder stopped (no value starts before it that is not
    nested in the failed one); a value cut off at the end ends the scan.
    """
    position = 0
    failures = 0
    while failures < _MAX_JSON_FAILURES:
        match = _JSON_START.search(text, position)
        if not match:
            return
        start = match.end() - 1
        value, end, reason = decode_json_at(text, start)
        if reason is None:
            yield value
        elif reason in ("cut", "deep"):
            return
        else:
            failures += 1
        position = end


def _links_from_json(value):
    links = []
    items = value if isinstance(value, list) else [value]
    for item in items:
        if not isinstance(item, dict) or "ifname" not in item:
            continue
        name = to_text(item.get("ifname"))
        port = to_int(item.get("port"))
        if "/" in name:  # older iproute2: "ifname": "mlx5_0/1"
            name, _sep, port_text = name.partition("/")
            port = port if port is not None else to_int(port_text)
        if not name or port is None:
            continue
        link = _new_link(name, port, to_int(item.get("ifindex")))
        for key, val in item.items():
            key = snake_case(key)
            if key in ("ifname", "port", "ifindex", "device"):
                continue
            if key in _INT_FIELDS:
                link[key] = to_int(val) if not isinstance(val, (dict, list, bool)) else None
            elif key in _STR_FIELDS:
                link[key] = None if val is None or isinstance(val, (dict, list)) else to_text(val)
            else:
                link[key] = val
        links.append(link)
    return links


def _json_links(text):
    """The links of the rdma -j JSON values in the text."""
    return [link for value in _json_values(text) for link in _links_from_json(value)]


def _parse_link(text):
    links = []
    errors = []
    text = to_text(text)
    if "{" in text or "[" in text:
        links = _json_links(text) or _json_links(pasted_text(text))
        if links:
            return {"links": links, "errors": errors, "warnings": []}
    last = None
    warnings = []
    for line in nonblank_lines(text):
        new = _NEW_FORM.match(line)
        old = None if new else _OLD_FORM.match(line)
        if new or old:
            match = new or old
            link = _new_link(match.group("device"), to_int(match.group("port")),
                             to_int(old.group("index")) if old else None)
            _apply_pairs(link, match.group("rest"))
            links.append(link)
            last = link
            continue
        if last is not None and _continues_link(line):
            _apply_pairs(last, line)    # rdma -p, or a wrapped paste: the pairs go on on an indented line
            continue
        caps = _CAPS.match(line)
        if caps and last is not None:
            last["caps"] = [c.strip() for c in caps.group("caps").split(",") if c.strip()]
            continue
        error = _error_for(line)
        if error is not None:
            errors.append(error)
        elif is_tagged_warning(line):
            warnings.append(line.strip())   # "libibverbs: Warning: ...": never an error
    return {"links": links, "errors": errors, "warnings": warnings}


def parse_rdma_link_full(text):
    """Return {links, errors, warnings} for ``rdma link`` output; never raises."""
    return tool_result(_parse_link, text, "rdma link", {"links": [], "errors": [], "warnings": []}, RDMA_LINK_ERRORS)


def parse_rdma_link(text):
    """List of {device, port, state, physical_state, netdev, index, [subnet_prefix, lid, sm_lid, lmc, netdev_index, caps]}."""
    return parse_rdma_link_full(text)["links"]


# ---- rdma system -----------------------------------------------------------------

def _on_off(value):
    if isinstance(value, bool):
        return value
    text = to_text(value).strip().lower()
    if text in ("on", "true", "1", "yes", "enabled"):
        return True
    if text in ("off", "false", "0", "no", "disabled"):
        return False
    return None


def _system_from_pairs(pairs):
    result = {"netns_mode": None, "copy_on_fork": None}
    for key, value in pairs:
        key = snake_case(key)
        if key == "netns":
            mode = to_text(value).strip().lower()
            result["netns_mode"] = mode if mode in ("shared", "exclusive") else (mode or None)
        elif key in ("copy_on_fork", "privileged_qkey"):
            result[key] = _on_off(value)
        elif key:
            result[key] = value
    return result


def _json_system(text):
    """The last rdma -j system object of the text, read, or None."""
    found = None
    for value in _json_values(text):
        for item in (value if isinstance(value, list) else [value]):
            if isinstance(item, dict) and "netns" in item:
                found = _system_from_pairs(item.items())
    return found


def _parse_system(text):
    text = to_text(text)
    found = None
    errors = []
    if "{" in text:
        found = _json_system(text) or _json_system(pasted_text(text))
    if found is None:
        for line in bounded_lines(text):
            match = _SYSTEM_LINE.match(line)
            if match:
                tokens = ["netns"] + match.group("rest").split()
                pairs = [(tokens[i], tokens[i + 1] if i + 1 < len(tokens) else None)
                         for i in range(0, len(tokens), 2)]
                found = _system_from_pairs(pairs)
                continue
            error = _error_for(line)
            if error is not None:
                errors.append(error)
    result = found or {"netns_mode": None, "copy_on_fork": None}
    result["errors"] = errors
    return note_if_unread(result, text, "rdma system", found is not None or bool(errors))


def parse_rdma_system(text):
    """{netns_mode: shared|exclusive|None, copy_on_fork: bool|None, [privileged_qkey], errors[, warnings]} from
    ``rdma system`` (``warnings`` only when nothing was read from a text that is not blank).

    When the text holds several ``rdma system`` outputs the last one wins.
    """
    return parse_or_report(_parse_system, text, {"netns_mode": None, "copy_on_fork": None, "errors": []},
                           RDMA_LINK_ERRORS)
