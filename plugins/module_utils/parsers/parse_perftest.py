# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parse the text printed by perftest (ib_{write,read,send,atomic}_{bw,lat}).

The result is read from the output perftest prints on its console (stdout and
stderr, possibly merged, with prompts, wrapped command lines, launcher
prefixes and CPU-frequency warnings in the middle).  Nothing here raises:
whatever can not be read ends up in ``errors`` / ``warnings``.

The parser is split in three: perftest_errors (the error catalog and how a
line is classified), perftest_lines (a table of line handlers) and
perftest_result (the state, the result table and the final result).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.perftest_errors import (
    PERFTEST_ERRORS,
    classify,
    is_warning,
)
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.perftest_lines import (
    process_line,
    split_glued,
    unwrap,
)
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.perftest_result import (
    MAX_PROBE,
    State,
    add_warning,
    finish,
    read_anything,
)
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.text import clean_lines, note_if_unread

# The catalog belongs to this entry point's API: tools/gen_docs.py builds the troubleshooting table from it here.
__all__ = ["PERFTEST_ERRORS", "classify_perftest_error", "parse_perftest"]


def classify_perftest_error(line):
    """Return the error code for one line of perftest output, or None when it is no error.

    Warnings (CPU frequency, MTU adjustments, ...) return None; an error-looking
    line that no known pattern matches returns ``"unknown"``.
    """
    try:
        text = clean_lines(line)
        probe = " ".join(part.strip() for part in text if part.strip())[:MAX_PROBE]
    except Exception:  # pragma: no cover - clean_lines never raises on str/bytes
        return None
    low = probe.lower()
    if not probe or is_warning(low):
        return None
    return classify(low)


def parse_perftest(text):
    """Parse perftest console output into a dict (see the module docstring and DESIGN.md)."""
    state = State()
    try:
        lines = clean_lines(text)
    except Exception:  # pragma: no cover - defensive: clean_lines handles str/bytes/None/lists
        lines = []
    index = 0
    while index < len(lines):
        raw_line = lines[index]
        index += 1
        try:
            raw_line, index = unwrap(state, lines, index - 1)
            for part in split_glued(raw_line):
                process_line(state, part)
        except Exception as exc:  # pragma: no cover - a parser never raises
            add_warning(state, "line not understood (%s): %s" % (type(exc).__name__, raw_line[:200]))
    return note_if_unread(finish(state), text, "perftest (ib_*_bw / ib_*_lat)", read_anything(state))
