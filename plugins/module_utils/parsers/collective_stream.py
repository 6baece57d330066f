# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The stream entry point of the collective parsers: which lines of a huge output they need.

``NCCL_DEBUG=INFO`` from thousands of ranks is tens of megabytes, nearly all of it the same log records
once per rank and channel ("Channel 03/0 : 12[3] -> 13[4] via P2P/IPC", "Init COMPLETE", "Destroy
COMPLETE"). The runner keeps the head and the tail of such an output and streams its middle through
``collective_line_filter()``: every line that is not a log record (the table, its header, the ranks,
launcher errors) is kept, and of the log records the first few of each shape (the record with its numbers
taken out), so the transport, the version and every kind of warning are still read by the parser.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import re

from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.nccl_lines import LOG_LOOSE

# How many log records of one shape are kept from the middle of an output.
RECORDS_PER_SHAPE = 4
_NUMBERS = re.compile(r"0x[0-9a-fA-F]+|\d+")


class CollectiveLineFilter(object):
    """A predicate on one line of a collective's output (str): True when the parser needs it. Stateful: one
    per output."""

    def __init__(self, per_shape=RECORDS_PER_SHAPE):
        self.per_shape = per_shape
        self.seen = {}

    def __call__(self, line):
        record = LOG_LOOSE.search(line) if ("CCL" in line) else None
        if record is None:
            return True
        shape = _NUMBERS.sub("#", record.group("msg"))
        count = self.seen.get(shape, 0)
        self.seen[shape] = count + 1
        return count < self.per_shape


def collective_line_filter():
    """A fresh filter for one output of mpirun running nccl-tests or hccl_test."""
    return CollectiveLineFilter()
