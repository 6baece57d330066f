# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The result table of nccl-tests text output: its column layout (from the column-name line, or inferred
from the first row) and the rows, assembled from token streams also when NCCL log lines split a row."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import re

from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.nccl_result import GROUP_NAMES
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.text import (
    snake_case, to_float, to_int, to_text)

_TOKEN_INT = re.compile(r"^[-+]?\d+$")
_TOKEN_UINT = re.compile(r"^\d+$")
_TOKEN_WORD = re.compile(r"^[A-Za-z][\w.+\-]*$")
_TOKEN_NUM = re.compile(r"^(?:[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?(?:nan|inf|infinity)|N/A)$", re.I)
_TOKEN_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_TOKEN_CLOCK = re.compile(r"^\d{1,2}:\d{2}:\d{2}(?:\.\d+)?$")
_ROW_FIRST = frozenset("0123456789-+.nNiI")   # first characters of a _TOKEN_NUM token
_ROW_PREFIX = re.compile(r"^(?:\[[^\]]*\](?:<\w+>:)?|<\w+>:|[A-Za-z0-9][\w.\-@]*:)$")

_GROUP_FIELDS = {
    "time": "time_us", "cputime": "time_us", "algbw": "algbw_gbs", "busbw": "busbw_gbs",
    "wrong": "wrong", "error": "wrong", "errors": "wrong", "bitdiff": "bitdiff",
    "i_min": "iter_min_us", "i_max": "iter_max_us", "i_p99": "iter_p99_us", "i_cv": "iter_cv_pct",
}
_LEAD_FIELDS = {"size": "bytes", "bytes": "bytes", "count": "count", "type": "type", "redop": "redop",
                "op": "redop", "root": "root"}
_GROUP_KEYS = ("time_us", "algbw_gbs", "busbw_gbs", "wrong")


def _number(token):
    """Value of a numeric table cell: int when integral, float otherwise, None for N/A/nan/junk."""
    text = to_text(token).strip()
    if _TOKEN_INT.match(text):
        return int(text)
    return to_float(text)


def _cell_float(token):
    """A validated numeric cell as a finite float; None for N/A, nan and inf."""
    try:
        value = float(token)
    except ValueError:
        return None
    return value if value - value == 0 else None


def _wrong_value(token):
    """A #wrong count (a whole number, also when printed as 3e+00), else an error column's maximum error; None for
    N/A and nan."""
    value = to_int(token)
    return value if value is not None else to_float(token)


class _Layout(object):
    """Column layout of a result table: leading columns, then measurement groups."""

    def __init__(self, lead, groups, timestamp=False, source="default", wrong_kind=None, time_kind="time"):
        self.lead = lead            # e.g. ["bytes", "count", "type", "redop", "root"]
        self.groups = groups        # e.g. [["time_us", "algbw_gbs", "busbw_gbs", "wrong"], [...]]
        self.timestamp = timestamp
        self.source = source        # "header" | "inferred" | "default"
        self.wrong_kind = wrong_kind
        self.time_kind = time_kind
        specs = [("lead", name, None) for name in lead]
        for index, fields in enumerate(groups):
            specs.extend(("group", field, index) for field in fields)
        if timestamp:
            specs.extend([("ts", "date", None), ("ts", "clock", None)])
        self.specs = specs
        self.validators = [_validator(spec) for spec in specs]
        # per group: the group dict to copy, and (field, converter) per column
        self.group_plans = [(dict.fromkeys(list(_GROUP_KEYS) + [f for f in fields if f not in _GROUP_KEYS]),
                             [(field, _converter(field)) for field in fields]) for fields in groups]

    @property
    def width(self):
        return len(self.specs)

    def columns(self):
        return {"lead": list(self.lead), "groups": [list(g) for g in self.groups], "timestamp": self.timestamp}


def default_layout(has_redop=True, has_root=True, wrong_kind=None):
    lead = ["bytes", "count", "type"] + (["redop"] if has_redop else []) + (["root"] if has_root else [])
    fields = ["time_us", "algbw_gbs", "busbw_gbs", "wrong"]
    return _Layout(lead, [list(fields), list(fields)], wrong_kind=wrong_kind)


def _names_a_table(names):
    """A column-name line names the size and the type (layout_from_header asks each group for its time and
    bus bandwidth)."""
    return "size" in names and "type" in names


def _read_header_columns(tokens):
    """(lead, groups, timestamp, wrong_kind, time_kind) of a column-name line: a group starts at each time column."""
    lead = []
    groups = []
    timestamp = False
    wrong_kind = None
    time_kind = "time"
    for raw in tokens:
        name = raw.lower().lstrip("#").rstrip("%")
        if name in ("time", "cputime"):
            time_kind = name
            groups.append([])
        if name == "timestamp":
            timestamp = True
            continue
        if not groups:
            lead.append(_LEAD_FIELDS.get(name, snake_case(name) or "col%d" % len(lead)))
            continue
        if name in ("wrong", "error", "errors"):
            wrong_kind = "count" if name == "wrong" else "max_error"
        field = _GROUP_FIELDS.get(name, snake_case(name) or "col")
        if field in groups[-1]:
            field = "%s_%d" % (field, len(groups[-1]))
        groups[-1].append(field)
    return lead, groups, timestamp, wrong_kind, time_kind


def layout_from_header(tokens):
    """Build a layout from the column-name line; None if it is not one."""
    if not _names_a_table([t.lower() for t in tokens]):
        return None
    lead, groups, timestamp, wrong_kind, time_kind = _read_header_columns(tokens)
    if not lead or lead[0] != "bytes" or not groups:
        return None
    if any("busbw_gbs" not in g for g in groups):   # each group starts at its time column
        return None     # a damaged column line: rather infer the layout from the rows
    return _Layout(lead, groups, timestamp=timestamp, source="header", wrong_kind=wrong_kind, time_kind=time_kind)


def _validator(spec):
    """The check a token must pass to fill this column (a compiled regex's match, or accept-all)."""
    kind, name, _index = spec
    if kind == "lead":
        if name in ("bytes", "count"):
            return _TOKEN_UINT.match
        if name in ("type", "redop"):
            return _TOKEN_WORD.match
        if name == "root":
            return _TOKEN_INT.match
        return _any_token
    if kind == "ts":
        return _TOKEN_DATE.match if name == "date" else _TOKEN_CLOCK.match
    return _TOKEN_NUM.match


def _any_token(_token):
    return True


def _converter(field):
    if field == "wrong":
        return _wrong_value
    if field == "bitdiff":
        return to_int
    return _cell_float


def _is_row_start(tokens):
    return (len(tokens) >= 3 and _TOKEN_UINT.match(tokens[0]) is not None
            and _TOKEN_UINT.match(tokens[1]) is not None and _TOKEN_WORD.match(tokens[2]) is not None)


def may_start_row(token):
    """False when a line starting with this token can be no table content (no number, no launcher prefix)."""
    return token[0] in _ROW_FIRST or token[-1] in ":]"


def _strip_row_prefix(tokens):
    """Drop leading launcher/host tokens ("node1:", "[1,0]<stdout>:") in front of a row."""
    if not tokens or tokens[0][-1] not in ":]":
        return tokens
    index = 0
    while index < len(tokens) and index < 3 and _ROW_PREFIX.match(tokens[index]):
        index += 1
    return tokens[index:]


class Table(object):
    """Assemble result rows from token streams, also when NCCL log lines split a row."""

    def __init__(self, result, warnings):
        self.result = result
        self.warnings = warnings
        self.layout = None          # from a header, or locked after the first complete inferred row
        self.pending = None
        self.pending_layout = None
        self.pending_extra = []
        self.pending_lines = 0

    def set_header(self, layout):
        self.flush()
        self.layout = layout

    def _infer(self, tokens):
        """Layout for a row when no column header was seen."""
        has_redop = len(tokens) > 3 and _TOKEN_WORD.match(tokens[3]) is not None   # a word: no number, no N/A
        rest = tokens[3 + (1 if has_redop else 0):]
        wrong_kind = None
        if len(rest) >= 4:
            probe = rest[-1]
            wrong_kind = "max_error" if re.search(r"[eE.]", probe) else "count"
        if len(rest) in (8, 9):
            layout = default_layout(has_redop, len(rest) == 9, wrong_kind)
            layout.source = "inferred"
            self.layout = layout
            return layout
        if len(rest) % 4 == 1:
            has_root = True
        elif len(rest) % 4 == 0 and rest:
            has_root = False
        else:
            has_root = has_redop
        layout = default_layout(has_redop, has_root, wrong_kind)
        layout.source = "inferred"
        return layout

    def feed(self, tokens):
        """Feed the tokens of one data-like line. Return True if they were table content."""
        tokens = _strip_row_prefix(tokens)
        if not tokens:
            return False
        if _is_row_start(tokens):
            if self.pending is None and self.layout is None and len(tokens) < 4 and not self.result["rows"]:
                return False
            self.flush()
            self.pending_layout = self.layout if self.layout is not None else self._infer(tokens)
            self.pending = []
            self.pending_extra = []
            self.pending_lines = 1
            self._extend(tokens)
            return True
        if self.pending is not None and all(_TOKEN_NUM.match(t) or _TOKEN_DATE.match(t) or _TOKEN_CLOCK.match(t)
                                            for t in tokens):
            self.pending_lines += 1
            self._extend(tokens)
            return True
        if all(_TOKEN_NUM.match(t) for t in tokens) and len(tokens) >= 3:
            self.warnings.append("table fragment without its row start ignored: %s" % " ".join(tokens)[:200])
            return True
        return False

    def _extend(self, tokens):
        layout = self.pending_layout
        specs, validators, lead_n = layout.specs, layout.validators, len(layout.lead)
        pending, extra = self.pending, self.pending_extra
        width = len(specs)
        for token in tokens:
            position = len(pending)
            while position < lead_n and not validators[position](token) and _blank_lead_cell(specs[position][1], token):
                pending.append("")
                position += 1
            if position >= width:
                extra.append(token)
            elif validators[position](token):
                pending.append(token)
            elif position < lead_n:
                self.pending = None     # not a real row: drop it
                return
            else:
                extra.append(token)
        if len(pending) >= width:
            self._emit(partial=False)

    def flush(self):
        if self.pending is not None:
            self._emit(partial=True)

    def _emit(self, partial):
        tokens, layout, extra = self.pending, self.pending_layout, self.pending_extra
        self.pending = None
        self.pending_extra = []
        if not tokens:
            return
        if len(tokens) <= len(layout.lead):
            self.warnings.append("incomplete table row dropped (no measurement): %s" % " ".join(tokens)[:200])
            return
        row = _lead_cells(layout, tokens)
        position = _add_groups(row, layout, tokens)
        if layout.timestamp and len(tokens) >= position + 2:
            row["timestamp"] = "%s %s" % (tokens[position], tokens[position + 1])
        if extra:
            row["extra"] = [_number(t) if _TOKEN_NUM.match(t) else t for t in extra]
        row["partial"] = bool(partial)
        if partial:
            self.warnings.append("table row for %s bytes is incomplete (output cut or interleaved)" % row["bytes"])
        if self.pending_lines > 1:
            row["split_lines"] = self.pending_lines
        self.result["rows"].append(row)
        if self.result["header"].get("wrong_column") is None and layout.wrong_kind:
            self.result["header"]["wrong_column"] = "#wrong" if layout.wrong_kind == "count" else "error"


def _blank_lead_cell(name, token):
    """True when a row leaves this header-named redop/root column blank and the token is already the time.

    Older nccl-tests name a redop column for alltoall (and a root column for some collectives) but print
    an empty string in it, so the row is one token shorter than its header.  A redop is always a word; a
    blank root is only recognisable when the time that follows is not a whole number."""
    # asked only for a token that is no redop (a word) or no root (a whole number)
    return name in ("redop", "root") and _TOKEN_NUM.match(token) is not None


def _lead_cells(layout, tokens):
    """A new row with the leading cells (size, count, type, redop, root) of its tokens."""
    row = {"bytes": None, "count": None, "type": None, "redop": None, "root": None}
    for name, token in zip(layout.lead, tokens[:len(layout.lead)]):
        if token == "":
            continue
        row[name] = int(token) if name in ("bytes", "count", "root") else token
    return row


def _add_groups(row, layout, tokens):
    """Put the measurement groups (out-of-place, in-place, ...) into the row; return the position after them."""
    position = len(layout.lead)
    for index, (template, plan) in enumerate(layout.group_plans):
        values = tokens[position:position + len(plan)]
        position += len(plan)
        group = None
        if values:
            group = template.copy()
            for (field, convert), token in zip(plan, values):
                group[field] = convert(token)
        row[GROUP_NAMES[index] if index < len(GROUP_NAMES) else "group_%d" % (index + 1)] = group
    for key in GROUP_NAMES:
        row.setdefault(key, None)
    return position
