# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the history writer of this run has written, and what it could not: counted, kept aside, told at the end.

The ``commcheck_history`` callback runs in ansible-playbook's main process and
keeps one :class:`WriterState` for the run (``publish``). Lines that the history
cannot take (a full disk, a quota, a read-only or lost mount) are counted by
kind and kept in a spill file in another directory (:class:`Spill`), so that
nothing is lost without a word: the state says what was not written and where
it is kept (``loss_message``).

The ``check_outputs`` action (``step: end``) reads the same state to fail the
play's last task: Ansible forks its workers from the main process, so a worker
sees the state as it was when the worker started (``current``).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os
import re
import tempfile

from ansible_collections.clusterops.commcheck.plugins.module_utils.records.history_write import append_lines

SPILL_PREFIX = "commcheck-history-"
SPILL_SUFFIX = ".jsonl"
_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9_.:+-]")
_CURRENT = []


def publish(state):
    """Make ``state`` the writer state of this process (and of the workers it forks from now on)."""
    del _CURRENT[:]
    _CURRENT.append(state)


def current():
    """The writer state of the run this process belongs to, or None when no history callback is loaded."""
    return _CURRENT[0] if _CURRENT else None


def count_text(counts):
    """'3 record(s) (rdma_bw 2, tcp_bw 1)': how many, then by kind, most first."""
    total = sum(counts.values())
    kinds = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return "%d record(s) (%s)" % (total, ", ".join("%s %d" % item for item in kinds)) if total else "no record"


class Spill(object):
    """A private file in ``directory`` (another directory than the history's) that takes the lines the history
    could not: the same JSON lines, so that appending the file to its month file later restores them."""

    def __init__(self, directory, run_id):
        self.directory = directory
        self.run_id = run_id
        self.path = None

    def keep(self, lines, fsync=True):
        """Append ``lines``; the file is made on first use (mode 0600, a new name: never one that exists)."""
        if self.path is None:
            name = _UNSAFE_NAME.sub("_", str(self.run_id or "run"))[:64]
            if not os.path.isdir(self.directory):
                os.makedirs(self.directory, 0o700)
            fd, self.path = tempfile.mkstemp(prefix="%s%s-" % (SPILL_PREFIX, name), suffix=SPILL_SUFFIX,
                                             dir=self.directory)
            os.close(fd)
        append_lines(self.path, lines, fsync=fsync)
        return self.path


class WriterState(object):
    """The history of one run as the callback wrote it: where, how many lines, and what it could not write."""

    def __init__(self, directory=None, off_reason=None, pid=None):
        self.directory = directory
        self.off_reason = off_reason      # why nothing is written (None: the history is on)
        self.pid = os.getpid() if pid is None else pid
        self.run_id = None
        self.file = None                  # the month file of the last write (or try)
        self.written = 0                  # record lines written
        self.summary_written = False
        self.lost = {}                    # kind -> record lines not written
        self.summary_lost = False
        self.error = None                 # the first write error
        self.spill = None                 # the file that keeps what was not written
        self.spill_error = None           # why it could not be kept (None: kept, or nothing to keep)

    @property
    def on(self):
        return self.off_reason is None

    def note_written(self, path, records):
        self.file = path
        for record in records:
            if record.get("kind") == "summary":
                self.summary_written = True
            else:
                self.written += 1

    def note_lost(self, path, records, error):
        self.file = path
        self.error = self.error or getattr(error, "reason", None) or getattr(error, "strerror", None) or str(error)
        for record in records:
            if record.get("kind") == "summary":
                self.summary_lost = True
            else:
                kind = str(record.get("kind"))
                self.lost[kind] = self.lost.get(kind, 0) + 1

    def note_kept(self, path, error=None):
        if path:
            self.spill = path
        if error is not None:
            self.spill_error = self.spill_error or str(error)

    def lost_records(self):
        return sum(self.lost.values())

    def has_losses(self):
        return bool(self.lost) or self.summary_lost

    def lost_text(self):
        """What was not written: '20 record(s) (rdma_bw 12, tcp_bw 8) and the summary line'."""
        parts = [count_text(self.lost)] if self.lost else []
        if self.summary_lost:
            parts.append("the summary line")
        return " and ".join(parts)

    def where_kept(self):
        if self.spill and not self.spill_error:
            return ("they are kept in %s (append it to %s once there is room: cat %s >> %s)"
                    % (self.spill, self.file, self.spill, self.file))
        if self.spill:
            return "a part of them is kept in %s; the rest could not be kept (%s)" % (self.spill, self.spill_error)
        return "they could not be kept anywhere (%s)" % (self.spill_error or "no spill directory")

    def loss_message(self):
        """One sentence for the operator, or None when every line was written."""
        if not self.has_losses():
            return None
        return ("the history of run %s is INCOMPLETE: %s could not be written to %s (%s); %s"
                % (self.run_id, self.lost_text(), self.file or self.directory, self.error, self.where_kept()))

    def stopped_line(self, run_id, how, default_file=None):
        """The one line a stopped run prints: 'run R stopped by SIGTERM: 23 record(s) and its summary
        (interrupted) are in FILE', with what could not be written, if anything."""
        if not self.on:
            where = "no record was kept (%s)" % self.off_reason
        else:
            where = "%d record(s)%s in %s" % (
                self.written, " and its summary (interrupted) are" if self.summary_written else " are",
                self.file or default_file or self.directory)
            if self.has_losses():
                where += "; %s" % self.loss_message()
        return "run %s %s: %s" % (run_id or "(no id yet)", how, where)

    def as_dict(self):
        return {
            "enabled": self.on,
            "off_reason": self.off_reason,
            "directory": self.directory,
            "file": self.file,
            "run_id": self.run_id,
            "records_written": self.written,
            "records_not_written": self.lost_records(),
            "not_written_by_kind": dict(self.lost),
            "summary_not_written": self.summary_lost,
            "error": self.error,
            "spill": self.spill,
            "spill_error": self.spill_error,
        }


def end_problem(state, pids):
    """(problem or None, facts) of the end step: the history of this run lost lines, or it is whole.

    ``pids``: the caller's own pid and its parent's (a worker's parent is
    ansible-playbook's main process). A state of another process is not this
    run's.
    """
    if state is None or state.pid not in pids:
        return None, {"enabled": False, "off_reason": "no history callback in this run"}
    facts = state.as_dict()
    return state.loss_message(), facts
