# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The lines of nccl-tests text output: NCCL/RCCL log records, also those glued behind a piece of a
table row, split off so that each line holds one thing."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import re

from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.collective_lines import MAX_LINE
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.text import (
    clean_lines, strip_launcher_prefix)

# host:pid:tid [dev] [file.cc:123] NCCL INFO|WARN ...; optional timestamp/launcher bracket first.
LOG_AT_START = re.compile(
    r"^\s*(?:\[[^\]]{0,64}\]\s*)?(?P<host>[^\s:\[\]]+):(?P<pid>\d+):(?P<tid>\d+)\s+\[(?P<dev>\d+)\]\s+"
    r"(?:\S+\s+){0,2}?(?P<lib>NCCL|RCCL)\s+(?P<level>INFO|WARN|TRACE|ABORT|ERROR)\b\s?(?P<msg>.*)$")
# NCCL 2.2 and older named no library: "host:pid:tid [0] include/socket.h:311 WARN Socket creation failed : ..."
LOG_UNNAMED = re.compile(
    r"^\s*(?:\[[^\]]{0,64}\]\s*)?(?P<host>[^\s:\[\]]+):(?P<pid>\d+):(?P<tid>\d+)\s+\[(?P<dev>\d+)\]\s+"
    r"(?:\S+:\d+\s+)?(?P<level>INFO|WARN)\s(?P<msg>.*)$")
LOG_LOOSE = re.compile(r"\b(?P<lib>NCCL|RCCL)\s+(?P<level>INFO|WARN|TRACE|ABORT|ERROR)\b\s?(?P<msg>.*)$")
# A log record glued to the end of a partial table row: launcher prefix, or a host starting with a letter.
_LOG_EMBEDDED = re.compile(
    r"(?:\[\d+(?:,\d+)?\](?:<std\w+>:)?\s?)?(?:\[[^\]\d][^\]]{0,62}\]\s*)?"
    r"(?<![^\W\d]|[.\-])[A-Za-z][\w.\-]{0,254}:\d+:\d+\s+\[\d+\]\s+(?:\S+:\d+\s+)?(?:NCCL|RCCL)\s+(?:INFO|WARN|TRACE|ABORT|ERROR)\b")


def split_embedded(line, checked=False):
    """Split 'row part<host:pid:tid [d] NCCL INFO ...>' into the row part and the log record.

    nccl-tests prints a row in pieces without a newline; a log record printed
    meanwhile lands behind the piece on the same line. The record must start
    with a launcher prefix ("[0] ") or a host name whose first letter does not
    continue a word (host names starting with a digit are not split off).
    """
    if "NCCL " not in line and "RCCL " not in line:
        return [line]
    if not checked and LOG_AT_START.match(line):
        return [line]
    # A record starts at most ~400 characters before its "NCCL"/"RCCL" word and ends just after the
    # level: only those windows are searched (around the first few such words), so a long line costs
    # a bounded number of regex attempts, not one per character.
    for at in _lib_words(line):
        for candidate in _LOG_EMBEDDED.finditer(line, max(0, at - 400), min(len(line), at + 20)):
            begin = candidate.start()
            if begin == 0:
                continue
            if line[begin] != "[" and (line[begin - 1].isalpha() or line[begin - 1] in "._-"):
                continue
            head = line[:begin]
            if not head.strip():
                return [line]
            return [head, strip_launcher_prefix(line[begin:])]
    return [line]


def _lib_words(line, limit=2):
    """Positions of the first `limit` "NCCL " / "RCCL " words after the line's first character."""
    found = []
    for word in ("NCCL ", "RCCL "):
        at = line.find(word, 1)
        while at > 0 and len(found) < 2 * limit:
            found.append(at)
            at = line.find(word, at + 1)
    return sorted(found)[:limit]


def split_lines(data):
    """clean_lines cut to MAX_LINE, with log records glued behind a row piece split off.

    Returns (lines, records): records maps the index of each line that is a
    whole log record to its LOG_AT_START match, so that no line is matched twice.
    """
    lines = []
    records = {}
    for raw in clean_lines(data):
        if len(raw) > MAX_LINE:
            raw = raw[:MAX_LINE]
        if "CCL " not in raw:
            lines.append(raw)
            continue
        log = LOG_AT_START.match(raw)
        if log is not None:
            records[len(lines)] = log
            lines.append(raw)
        else:
            lines.extend(split_embedded(raw, checked=True))
    return lines, records
