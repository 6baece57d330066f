# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What is kept of a command's output: bounded, whatever the command prints.

The runner (``runner.py``) writes a command's stdout and stderr to temporary files and reads them back
through ``read_bounded`` with the command's ``Capture``: whole when small, else the head and the tail (and
the lines of the middle a parser's filter picks), never more than that in memory.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os

# What a command's output may cost: a tool that prints without end (garbage before its report, NCCL_DEBUG=INFO
# from thousands of ranks) must neither fill the module's memory nor the results the controller keeps.
# Of each stream (stdout, stderr) a tool's output keeps its first and its last OUTPUT_KEEP_BYTES (the report
# of every tool we run sits in its last lines, its settings in its first); a capture with a line filter
# also keeps the lines of the middle the filter picks, KEPT_LINES_BYTES of them at most. A command whose
# output is a document read whole (JSON, a sysfs dump, a file) keeps it whole up to DOCUMENT_MAX_BYTES.
# Beyond, the result says ``output_too_large`` with each stream's size (``output_bytes``).
OUTPUT_KEEP_BYTES = 64 * 1024
KEPT_LINES_BYTES = 1024 * 1024
DOCUMENT_MAX_BYTES = 32 * 1024 * 1024
# No tool's report is this large: a command whose output grows past it is stopped (it would fill the disk).
OUTPUT_STOP_BYTES = 1024 * 1024 * 1024
# A line of the middle longer than this is cut before the filter sees it (what no tool prints, but garbage may).
FILTER_LINE_BYTES = 4096


class Capture(object):
    """What is kept of a command's output: ``whole_up_to`` bytes whole (else head and tail), and ``keep``: a
    predicate on a line (str) picking the lines of the middle a parser needs (None: none)."""

    def __init__(self, whole_up_to=2 * OUTPUT_KEEP_BYTES, keep=None):
        self.whole_up_to = whole_up_to
        self.keep = keep


TOOL_OUTPUT = Capture()
DOCUMENT = Capture(whole_up_to=DOCUMENT_MAX_BYTES)


def filtered_output(keep):
    """The capture of a tool whose parser needs lines of the middle too: those ``keep(line)`` is true for."""
    return Capture(keep=keep)


def _decode(data):
    return data.decode("utf-8", "replace")


def _line_start_after(data):
    """``data`` from the start of its first whole line (the tail kept begins with a line, not half of one)."""
    cut = data.find(b"\n")
    return data[cut + 1:] if 0 <= cut < len(data) - 1 else data


def _up_to_last_line_end(data):
    cut = data.rfind(b"\n")
    return data[:cut + 1] if cut >= 0 else data


def _middle_lines(handle, start, end):
    """The lines of ``handle`` between offsets ``start`` and ``end``, each cut at FILTER_LINE_BYTES, read a piece
    at a time (a gigabyte without a newline costs no more memory than a short line)."""
    handle.seek(start)
    pos = start
    while pos < end:
        piece = handle.readline(min(FILTER_LINE_BYTES, end - pos))
        if not piece:
            return
        pos += len(piece)
        yield _decode(piece.rstrip(b"\n"))
        # the rest of a line longer than FILTER_LINE_BYTES is skipped, a piece at a time
        while not piece.endswith(b"\n") and pos < end:
            piece = handle.readline(min(FILTER_LINE_BYTES, end - pos))
            if not piece:
                return
            pos += len(piece)


def _kept_middle(handle, start, end, keep):
    """The lines of the middle ``keep`` picks, KEPT_LINES_BYTES of them at most: (text, lines kept)."""
    kept, size = [], 0
    for line in _middle_lines(handle, start, end):
        if size + len(line) > KEPT_LINES_BYTES:
            break
        if keep(line):
            kept.append(line)
            size += len(line) + 1
    return "".join(item + "\n" for item in kept), len(kept)


def read_bounded(handle, capture=None):
    """(text, size in bytes, cut) of an output file: whole, or its head and tail (and the lines a filter picks)
    with one line between them saying how much was left out. Never reads more than that into memory."""
    capture = capture or TOOL_OUTPUT
    handle.seek(0, os.SEEK_END)
    size = handle.tell()
    handle.seek(0)
    if size <= capture.whole_up_to:
        return _decode(handle.read()), size, False
    head = _up_to_last_line_end(handle.read(OUTPUT_KEEP_BYTES))
    handle.seek(size - OUTPUT_KEEP_BYTES)
    tail = _line_start_after(handle.read(OUTPUT_KEEP_BYTES))
    middle, count = "", 0
    if capture.keep is not None:
        middle, count = _kept_middle(handle, len(head), size - len(tail), capture.keep)
    note = "[commcheck: output of %d bytes; kept its first %d and last %d bytes%s]\n" % (
        size, len(head), len(tail), " and %d line(s) between them" % count if count else "")
    return _decode(head) + note + middle + _decode(tail), size, True


def text_of(data):
    """``data`` decoded as UTF-8 text; None when it is not text (a NUL byte, bytes that are not UTF-8).

    The files the collection reads (sysfs attributes, /proc, tool version files) are text: one that is not was
    damaged or is not the file its path names, and its value is unknown, not a string of replacement marks."""
    if b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None
