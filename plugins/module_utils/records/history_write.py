# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Appending to the history: whole JSON lines, one ``write`` under an exclusive ``fcntl.flock``, then flush and fsync.

Several runs may append to the same month file at the same time: the file is
opened with O_APPEND, the lock covers the one write, and a torn last line left
by a writer that died mid-line is ended before the next line goes on.

A write that fails (a full disk, a quota, an I/O error) leaves no half line:
under the same lock the file is cut back to the size it had before the write,
and the caller gets an :class:`AppendError` that says how many lines were not
written.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import errno
import json
import os

try:
    import fcntl
    HAS_FCNTL = True
except ImportError:  # pragma: no cover - not on POSIX
    HAS_FCNTL = False

from ansible_collections.clusterops.commcheck.plugins.module_utils.records.history_records import (
    FILE_PREFIX,
    FILE_SUFFIX,
    SCHEMA_VERSION,
    STAMP_KEYS,
    UTC,
    format_time,
    utc_now,
)


def history_file(directory, when):
    """Path of the month file that holds records stamped at ``when``."""
    return os.path.join(directory, "%s%04d-%02d%s" % (FILE_PREFIX, when.year, when.month, FILE_SUFFIX))


def dumps(record):
    """One record as one JSON line (no newline inside)."""
    return json.dumps(record, separators=(",", ":"), ensure_ascii=True, default=str)


def stamp(record, run_id, when=None):
    """Copy of a normalized record with schema, run_id and time first."""
    when = when or utc_now()
    out = {"schema": SCHEMA_VERSION, "run_id": run_id, "time": format_time(when)}
    out.update((k, v) for k, v in record.items() if k not in STAMP_KEYS)
    return out


class AppendError(OSError):
    """Lines that could not be appended: none of them is in the file (it was cut back to its size before).

    ``errno`` and ``strerror`` are the failed call's; ``path`` the month file;
    ``lines`` how many lines were not written; ``torn`` is True only when the
    cut itself failed, so that a part of the first line may be left (readers
    skip such a line and report it).
    """

    def __init__(self, cause, path, lines, torn=False):
        OSError.__init__(self, cause.errno, cause.strerror or str(cause))
        self.path = path
        self.lines = lines
        self.torn = torn

    @property
    def reason(self):
        return "%s%s" % (self.strerror, " (a part of a line may be left at its end)" if self.torn else "")

    def __str__(self):
        return "%s: %s" % (self.path, self.reason)


def append_lines(path, lines, fsync=True):
    """Append whole lines to path: one write under an exclusive flock, then flush and fsync.

    If the file ends in a torn line (a writer died mid-line), a newline is
    written first so the new lines stay whole. Returns the bytes written.
    Raises AppendError when the lines cannot all be written (see below).
    """
    if not lines:
        return 0
    payload = "".join(line.rstrip("\n") + "\n" for line in lines).encode("utf-8")
    fd = _open_for_append(path)
    try:
        if HAS_FCNTL:
            fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            size = os.fstat(fd).st_size
            if size and _last_byte(path, size) != b"\n":
                payload = b"\n" + payload
            _write_whole_or_nothing(fd, payload, size, fsync, path, len(lines))
        finally:
            if HAS_FCNTL:
                fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
    return len(payload)


def _write_whole_or_nothing(fd, payload, size, fsync, path, count):
    """Write payload at the end of a file of ``size`` bytes (the caller holds the lock); on any failure cut the
    file back to ``size``, so no other writer and no reader ever sees a part of these lines."""
    try:
        view = memoryview(payload)
        while view:
            written = os.write(fd, view)
            view = view[written:]
        if fsync:
            os.fsync(fd)
    except OSError as exc:
        try:
            os.ftruncate(fd, size)
        except OSError:
            raise AppendError(exc, path, count, torn=True)
        raise AppendError(exc, path, count)


def _open_for_append(path):
    """An fd appending to ``path``, never through a symbolic link: one planted in a shared history directory
    would take the records into another file."""
    try:
        return os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o640)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise OSError(exc.errno, "%s is a symbolic link: history is appended to plain files only" % path)
        raise


def _last_byte(path, size):
    with open(path, "rb") as handle:
        handle.seek(size - 1)
        return handle.read(1)


def append_records(directory, records, run_id, when=None, fsync=True):
    """Stamp and append records to the month file of ``when`` (default now). Returns the stamped records."""
    if not records:
        return []
    when = when or utc_now()
    if not os.path.isdir(directory):
        os.makedirs(directory, 0o750)
    stamped = [stamp(record, run_id, when) for record in records]
    append_lines(history_file(directory, when.astimezone(UTC)), [dumps(r) for r in stamped], fsync=fsync)
    return stamped
