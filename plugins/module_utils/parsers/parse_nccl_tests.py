# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parser for NVIDIA nccl-tests output (``*_perf`` binaries; rccl-tests print the same).

``parse_nccl_tests(text)`` reads what the binary printed (any version since
2018: with or without ``Group``, ``redop``, ``root``, ``#wrong`` or ``error``
columns, per-iteration and bitwise columns of the newest releases), with
launcher prefixes, prompts, NCCL INFO/WARN lines anywhere -- also inside a
table row -- and errors of NCCL, CUDA, MPI, ssh and the kernel. It also
accepts the JSON file that nccl-tests writes with ``-J/--output_file
<name>.json`` (and the rccl-tests JSON list); ``parse_nccl_tests_json`` does
only that. It never raises.

The pieces, by concern: ``nccl_lines`` (splitting log records off row pieces),
``nccl_text`` (the one pass over the text, a table of line handlers),
``nccl_table`` (column layout and rows), ``nccl_transport`` (the network NCCL
used), ``nccl_json`` (the JSON forms), ``nccl_errors`` (the catalog
``NCCL_TESTS_ERRORS`` and the WARN rules) and ``nccl_result`` (summary and
verdict); ``collective_lines`` is shared with ``parse_hccl_test``.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json
import re

from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.collective_lines import (
    MAX_WARNINGS, parser_error_result)
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.mpi_errors import ErrorCollector
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.nccl_errors import NCCL_TESTS_ERRORS
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.nccl_json import (
    read_nccl_json, read_rccl_json)
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.nccl_result import (
    SECONDARY, empty_result, finish)
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.nccl_text import TextParser
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.text import Notes, pasted_text, to_text

_EMBEDDED_JSON = re.compile(r'(?m)^[ \t]*(\{)\s*"(?:version|start_time|config|results|args)"')


def parse_nccl_tests(text):
    """Parse nccl-tests output (text or JSON). Never raises; see module doc for the keys."""
    try:
        if isinstance(text, (dict, list)):
            return parse_nccl_tests_json(text)
        data = to_text(text)
        whole = _whole_json(data)
        if whole is not None:
            return whole
        result = TextParser().parse(data)
        if not result["rows"] and not result["header"].get("nthread"):
            embedded = _find_embedded_json(data)
            if embedded is not None:
                return parse_nccl_tests_json(embedded)
            if "{" in data:
                return _pasted_json(data) or result
        return result
    except Exception as exc:  # a parser must never raise; report instead
        return parser_error_result(empty_result(), NCCL_TESTS_ERRORS, exc)


def _whole_json(data, undecodable=True):
    """The result of a text that is one JSON document (or JSON lines); with `undecodable` the json_invalid result of
    one that starts like a JSON object and does not decode; else None."""
    stripped = data.lstrip()
    if stripped[:1] in ("{", "[") and not re.match(r"\[\d+(?:,\d+)?\]", stripped):
        doc = _load_json(stripped)
        if doc is None:
            doc = _load_json_lines(stripped)
        if doc is not None:
            return parse_nccl_tests_json(doc)
        if undecodable and stripped[:1] == "{" and re.match(r'\{\s*"', stripped):
            return _undecodable_json()
    return None


def _pasted_json(data):
    """The result of the JSON a paste decorated (quote markers, prefixes, colours, notes), or None."""
    cleaned = pasted_text(data)
    if cleaned == data:
        return None
    whole = _whole_json(cleaned, undecodable=False)
    if whole is not None:
        return whole
    embedded = _find_embedded_json(cleaned)
    return parse_nccl_tests_json(embedded) if embedded is not None else None


def _undecodable_json():
    result = empty_result()
    result["format"] = "json"
    errors = ErrorCollector(NCCL_TESTS_ERRORS)
    errors.add("json_invalid", "the input starts like JSON but cannot be decoded")
    errors.add("no_table", "no result rows in the input")
    result["errors"] = errors.entries(last=SECONDARY)
    return result


def _load_json(text):
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return doc if isinstance(doc, (dict, list)) else None


def _load_json_lines(text):
    """rccl-tests' --output_file of late 2024 to mid 2025 (before rccl-tests PR #140): one JSON object per line,
    not a list. The objects as a list, or None unless every line that is not blank is an object."""
    doc = []
    for line in text.splitlines():
        if not line.strip():
            continue
        item = _load_json(line)
        if not isinstance(item, dict):
            return None
        doc.append(item)
    return doc or None


def _find_embedded_json(data):
    # [ \t]* (not \s*) at the line start: a \s* there spans runs of blank lines and made this search
    # quadratic in them. The \s* after the brace is tried once per brace, so it stays linear.
    match = _EMBEDDED_JSON.search(data)
    if not match:
        return None
    try:
        doc, _end = json.JSONDecoder().raw_decode(data, match.start(1))
    except (ValueError, RecursionError):
        return None
    return doc if isinstance(doc, dict) else None


def parse_nccl_tests_json(data):
    """Parse the JSON nccl-tests writes with -J/--output_file <f>.json (or the rccl-tests list).

    Accepts the JSON text, bytes, or the already decoded dict/list. Never raises.
    """
    result = empty_result()
    result["format"] = "json"
    result["warnings"] = Notes(limit=MAX_WARNINGS, width=1000)
    errors = ErrorCollector(NCCL_TESTS_ERRORS)
    try:
        doc = data
        if not isinstance(data, (dict, list)):
            text = to_text(data).strip()
            doc = _load_json(text)
            if doc is None:
                doc = _load_json_lines(text)
            if doc is None:
                errors.add("json_invalid", "input is not a JSON object or list")
        if isinstance(doc, list):
            read_rccl_json(doc, result)
        elif isinstance(doc, dict):
            read_nccl_json(doc, result, errors)
    except Exception as exc:  # never raise
        errors.add("unknown", "parser error: %s" % exc)
    finish(result, errors, False)
    return result
