# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the collective-test parsers (nccl-tests, hccl_test) do alike with the lines around their tables:
Open MPI help frames, launcher errors, and the lines no rule knows."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import re

from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.mpi_errors import (
    ErrorCollector, scan_launcher_line)
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.text import (
    is_context_line, is_diagnostic_line)

MAX_LINE = 4096  # longer lines are read up to here (no line of these tools is that long)
MAX_WARNINGS = 100  # listed; more are counted
MAX_UNKNOWN_LISTED = 50  # lines no rule knows, listed as warnings; more are counted

_FRAME = re.compile(r"^-{20,}$")   # Open MPI frames its help messages with dash lines


def parser_error_result(result, catalog, exc):
    """What a parser that raised returns: its empty result with one 'unknown' error (a parser never raises)."""
    errors = ErrorCollector(catalog)
    errors.add("unknown", "parser error: %s" % exc)
    result["errors"] = errors.entries()
    return result


class CollectiveLines(object):
    """Base of a one-pass collective-test parser: the subclass sets `errors` (an ErrorCollector)
    and `warnings` (Notes) and calls these for the lines that are not its tool's own."""

    def __init__(self):
        self.unknown_lines = 0
        self.frame_lines = None     # lines seen so far inside an Open MPI help frame (dash lines), or None
        self.joined_line = None     # a wrapped line joined to the error message of the line before

    def _frame(self, content):
        """Count the lines inside an Open MPI help frame. True for a dash line (the frame itself)."""
        if content[0] == "-" and _FRAME.match(content):
            self.frame_lines = 0 if self.frame_lines is None else None
            return True
        if self.frame_lines is not None:
            self.frame_lines += 1
        return False

    def _launcher_error(self, lines, index):
        """An mpirun/ssh/signal error line (with a wrapped continuation joined): True."""
        launcher = scan_launcher_line(lines, index)
        if not launcher:
            return False
        code, message, hint, host = launcher
        if len(message) > len(lines[index].strip()):
            self.joined_line = index + 1
        self.errors.add(code, message, host=host, hint=hint)
        return True

    def _unknown(self, index, content):
        """A line no rule knows never makes the result fail: when it reports a problem in words
        ("libibverbs: Warning: ...", "mpirun noticed that the job aborted") it is a warning; chatter
        (progress notes, prompts, wrapped command lines) is left out. Inside an Open MPI help frame
        only its first line (the headline) is taken; the rest explains it.
        """
        if index == self.joined_line or (self.frame_lines is not None and self.frame_lines > 1):
            return
        if not is_diagnostic_line(content) or is_context_line(content):
            return
        self.unknown_lines += 1
        if self.unknown_lines <= MAX_UNKNOWN_LISTED:
            self.warnings.add(content[:300])

    def _count_unlisted(self):
        if self.unknown_lines > MAX_UNKNOWN_LISTED:
            self.warnings.add("%d more output lines not understood (not listed)"
                              % (self.unknown_lines - MAX_UNKNOWN_LISTED))
