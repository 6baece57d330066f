# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the fabric-scan parsers (``parse_ibnetdiscover``, ``parse_iblinkinfo``) share (pure): GUIDs in one form,
the ends of a link, the links of a scan each once, and the lines of a text as pasted and as cleaned."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import re

from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.text import (
    MAX_LINE,
    _ANSI,
    Notes,
    clean_lines,
    error_entry,
    is_context_line,
    note_if_unread,
    parse_or_report,
    to_text,
)

_HEX = re.compile(r"^(?:0x)?([0-9A-Fa-f]{1,16})$")
_FAILURE = re.compile(r"\b(?:iberror|ibpanic):")
# the error code of a scan that failed (iberror / ibpanic), the same in both parsers' catalogs
LINK_FAILURE = "scan_failed"
END_KEYS = ("type", "guid", "port_guid", "lid", "port", "description")


def guid(text):
    """A GUID as ``0x`` and 16 lowercase hex digits (``2c90300293e1f``, ``0x0002c90300293e1f`` and
    ``0002:c903:0029:3e1f`` are one GUID; a GID gives its last 64 bits, the port GUID), None for nothing, anything
    else as printed (a redacted ``9c05<redacted>``)."""
    if text in (None, ""):
        return None
    text = to_text(text).strip()
    digits = text.replace(":", "")
    if digits.lower().startswith("0x"):
        digits = digits[2:]
    if len(digits) == 32 and ":" in text:
        digits = digits[16:]
    match = _HEX.match(digits)
    return "0x%016x" % int(match.group(1), 16) if match else text


def end(kind, node_guid, port_guid, lid, port, description):
    """One end of a link: ``{type, guid, port_guid, lid, port, description}``."""
    return {"type": kind, "guid": node_guid, "port_guid": port_guid, "lid": lid, "port": port,
            "description": description}


def _key(one):
    if one.get("lid") is not None:
        return ("lid", one["lid"], one.get("port"))
    return ("guid", one.get("guid") or one.get("port_guid"), one.get("port"))


class Links(object):
    """The links of a scan, each once whichever end printed it: a link seen again fills what the first sighting
    did not say (a port GUID, a type, a width)."""

    def __init__(self):
        self._by_key = {}
        self._order = []

    def add(self, near, far, width=None, speed=None, **extra):
        key = frozenset((_key(near), _key(far)))
        link = self._by_key.get(key)
        if link is None:
            link = dict({"from": near, "to": far, "width": width, "speed": speed}, **extra)
            self._by_key[key] = link
            self._order.append(link)
            return link
        for mine, theirs in ((link["from"], near), (link["to"], far), (link["from"], far), (link["to"], near)):
            if _key(mine) == _key(theirs):
                for name in END_KEYS:
                    if mine.get(name) is None:
                        mine[name] = theirs.get(name)
        for name, value in dict(extra, width=width, speed=speed).items():
            if link.get(name) is None:
                link[name] = value
        return link

    def items(self):
        return list(self._order)


def switches_of(links, ends=()):
    """``[{guid, description, lid}]`` of the switch ends of the links (and of the other ends given), each once (by
    GUID, else LID), in first-seen order."""
    seen = {}
    for one in [e for link in links for e in (link["from"], link["to"])] + list(ends):
        if one.get("type") != "Switch":
            continue
        key = one.get("guid") or ("lid", one.get("lid"))
        known = seen.setdefault(key, {"guid": one.get("guid"), "description": None, "lid": None})
        for name in ("description", "lid"):
            if known[name] is None and one.get(name) not in (None, ""):
                known[name] = one[name]
    return list(seen.values())


def fabric_lines(text):
    """[(the line as pasted, without CRs, colours and NULs; the line as clean_lines reads it)]: a scan's line is
    found where it stands in the pasted line, since its ``[port]`` and ``# "..."`` comment would read as a paste's
    prefix and note; the cleaned line is what a warning quotes. (The cleaned line alone where the two do not pair.)"""
    text = to_text(text)
    cleaned = [line[:MAX_LINE] for line in clean_lines(text)]
    plain = text.replace("\r\n", "\n").replace("\r", "\n")
    if "\x1b" in plain:
        plain = _ANSI.sub("", plain)
    raw = [line[:MAX_LINE] for line in plain.replace("\x00", "").split("\n")]
    if len(raw) != len(cleaned):
        raw = cleaned
    return list(zip(raw, cleaned))


def is_ignorable(line):
    """A blank line, a prompt, a separator or another line that carries no message."""
    return not line.strip() or is_context_line(line)


def read_failure(line, catalog, notes):
    """An ``iberror:`` / ``ibpanic:`` line: its error entry; an ``ibwarn:`` line: False, kept in notes; else None."""
    if _FAILURE.search(line):
        return error_entry(LINK_FAILURE, line.strip(), catalog)
    if line.strip().startswith("ibwarn:"):
        notes.add(line)
        return False
    return None


def read_scan(text, tool, catalog, new_reader):
    """``scan`` with a new reader (``new_reader()``), as both parsers read their tool's output: never raises; a
    reader that does (a bug in commcheck) leaves another new reader's empty result with one ``parser_error``."""
    return parse_or_report(lambda _text: scan(_text, tool, catalog, new_reader()), text, new_reader().result, catalog)


def scan(text, tool, catalog, reader):
    """``reader.result`` (an empty result to fill) once the fabric scan's output is read the way both scans print
    it: the ``no_output`` error of ``catalog`` when every line is blank; else each line (``fabric_lines``) that is
    no ``iberror:`` / ``ibpanic:`` (an error) or ``ibwarn:`` line (a warning) goes to ``reader.read(raw, clean)``,
    which says whether it knew the line (an unknown line that carries a message is a warning), and
    ``reader.finish()`` then fills the rest and says whether anything was read (``ok``)."""
    pairs = fabric_lines(text)
    result = reader.result
    if not any(clean.strip() for _raw, clean in pairs):
        result["errors"].append(error_entry("no_output", "%s printed nothing" % tool, catalog))
        return result
    notes = Notes()
    for raw, clean in pairs:
        failure = read_failure(clean, catalog, notes)
        if failure:
            result["errors"].append(failure)
        elif failure is None and not reader.read(raw, clean) and not is_ignorable(clean):
            notes.add(clean)
    result["ok"] = reader.finish()
    result["warnings"] = notes.as_list()
    return note_if_unread(result, text, tool, result["ok"] or result["errors"])


__all__ = ["LINK_FAILURE", "Links", "end", "fabric_lines", "guid", "is_ignorable", "read_failure", "read_scan",
           "scan", "switches_of"]
