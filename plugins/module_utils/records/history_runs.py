# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The runs of a history: each run's first and last line, its record count, its summary and its status.

A run stopped by a signal ends with a summary whose verdict is ``interrupted``;
a run with records and no summary (a controller killed outright, or a run still
going) is ``incomplete``.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type


from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import run_verdict
from ansible_collections.clusterops.commcheck.plugins.module_utils.records.history_records import (
    parse_time,
    utc_now,
)
from ansible_collections.clusterops.commcheck.plugins.module_utils.records.history_read import (
    LINE_HEAD,
    TIME_KEY,
    ReadReport,
    history_files,
    iter_lines,
    load_line,
    time_text_bound,
)

_RUN_KEY = b'"run_id":"'
_SUMMARY_TOKEN = b'"kind":"summary"'
_KIND_AFTER_TIME = b',"kind":"'
_HOST_AFTER_KIND = b',"host":"'
RUN_COMPLETE, RUN_INTERRUPTED, RUN_INCOMPLETE = "complete", "interrupted", "incomplete"


def _raw_run(raw):
    """(run_id, time) of a record line as this module writes it, without parsing it; else None.

    Such a line starts with the stamp keys, then a non-empty ``kind`` and a
    non-empty string ``host``, none of them with escapes; any other line is
    parsed and checked in full.
    """
    if not raw.startswith(LINE_HEAD):
        return None
    run_at = raw.find(_RUN_KEY, 0, 64)
    if run_at < 0:
        return None
    run_at += len(_RUN_KEY)
    run_end = raw.find(b'"', run_at)
    time_at = raw.find(TIME_KEY, run_end, 320) if run_end > run_at else -1
    if time_at < 0:
        return None
    time_at += len(TIME_KEY)
    if raw[time_at + 26:time_at + 28] != b'Z"':           # the canonical 27-character time
        return None
    kind_at = time_at + 28 + len(_KIND_AFTER_TIME)
    if not raw.startswith(_KIND_AFTER_TIME, time_at + 28):
        return None
    kind_end = raw.find(b'"', kind_at)
    if kind_end <= kind_at or not raw.startswith(_HOST_AFTER_KIND, kind_end + 1):
        return None
    host_at = kind_end + 1 + len(_HOST_AFTER_KIND)
    host_end = raw.find(b'"', host_at)
    if host_end <= host_at or b"\\" in raw[run_at:host_end]:
        return None
    try:
        return raw[run_at:run_end].decode("utf-8"), raw[time_at:time_at + 27].decode("ascii")
    except UnicodeDecodeError:
        return None


def run_status(summary):
    """``complete`` (a summary line ended the run), ``interrupted`` (a signal stopped it: its summary
    says so) or ``incomplete`` (records without a summary: the controller was killed outright, the
    run is still going, or the summary line was turned off)."""
    if summary is None:
        return RUN_INCOMPLETE
    if summary.get("interrupted") or summary.get("verdict") == run_verdict.INTERRUPTED:
        return RUN_INTERRUPTED
    return RUN_COMPLETE


def list_runs(directory, since=None, until=None, report=None, now=None):
    """One entry per run, in time order: run_id, first/last time, record count, summary (if written)
    and status (see run_status). Bad lines are skipped and reported, as by query()."""
    now = now or utc_now()
    since_dt, until_dt = parse_time(since, now), parse_time(until, now)
    since_text, until_text = time_text_bound(since_dt), time_text_bound(until_dt)
    if report is None:
        report = ReadReport()
    runs = {}

    def account(run, when, summary):
        if (since_text and when < since_text) or (until_text and when > until_text):
            return
        entry = runs.get(run)
        if entry is None:
            entry = runs[run] = {"run_id": run, "first": when, "last": when, "records": 0, "summary": None}
        entry["first"] = min(entry["first"], when)
        entry["last"] = max(entry["last"], when)
        if summary is not None:
            entry["summary"] = summary
        else:
            entry["records"] += 1

    for path in history_files(directory, since_dt, until_dt):
        report.files.append(path)
        for number, raw in iter_lines(path, report):
            report.lines += 1
            fast = _raw_run(raw) if _SUMMARY_TOKEN not in raw else None
            if fast is not None:
                account(fast[0], fast[1], None)
                continue
            if not raw.strip():
                continue
            record = load_line(path, number, raw, report)
            if record is None:
                continue
            when = record.get("time") or ""
            account(record.get("run_id"), when, record if record.get("kind") == "summary" else None)
    for entry in runs.values():
        entry["status"] = run_status(entry["summary"])
    return sorted(runs.values(), key=lambda e: (e["first"] or "", str(e["run_id"])))
