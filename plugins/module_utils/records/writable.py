# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Whether a directory the run will write (its report, its history) can be written, asked before the tests.

A report that cannot be written is found when the tests are over, and the run
is lost. The check writes one byte into a new file in the directory (or in its
nearest existing parent, where the run would create it) and removes it:
access(2) says yes to root on a read-only bind mount's files and knows nothing
of a full disk or a quota.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os
import tempfile

PROBE_PREFIX = ".commcheck-write-test-"


def nearest_existing(path):
    """``path`` or its nearest parent that exists (a dangling link counts: it is in the way)."""
    existing = path
    while not os.path.lexists(existing):
        parent = os.path.dirname(existing)
        if parent == existing:
            break
        existing = parent
    return existing


def _probe(directory):
    fd, name = tempfile.mkstemp(prefix=PROBE_PREFIX, dir=directory)
    try:
        os.write(fd, b"\n")
        os.fsync(fd)
    finally:
        os.close(fd)
        os.unlink(name)


def dir_write_problem(path, probe=True):
    """None when the directory ``path`` (existing, or to be made) can be written, else why not.

    probe=False (check mode) writes nothing and asks access(2) only.
    """
    existing = nearest_existing(os.path.abspath(path))
    if not os.path.isdir(existing):
        return "%s is in the way: it is not a directory" % existing
    where = existing if existing == os.path.abspath(path) else "%s (its nearest existing parent)" % existing
    if not probe:
        return None if os.access(existing, os.W_OK | os.X_OK) else "%s: Permission denied" % where
    try:
        _probe(existing)
    except OSError as exc:
        return "%s: %s" % (where, exc.strerror or exc)
    return None
