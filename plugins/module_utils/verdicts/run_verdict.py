# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one verdict of a whole run, shared by the report and the history's summary line.

The report (report_render.summarize) and the history callback's ``kind:
summary`` line both call :func:`overall_verdict`, so a run the report calls
WARN is ``warn`` in the history too. Both count the run's judgements only
(:func:`is_remeasurement`): a retest's own verdict is evidence for its first-pass
record, whose verdict the retests set (``flaky``, or ``fail`` confirmed), so a
partner retest that fails again must not turn a flaky run into a failed one.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

FAILING = ("fail", "error")
WARNING = ("warn", "flaky")
INTERRUPTED = "interrupted"
# A run that checked nothing is an error of the run, never a pass: cron jobs and alerts read a pass as healthy.
NOTHING_CHECKED = "error"
CHECKED = ("pass",) + FAILING + WARNING
RETEST_SUFFIX = "_retest"


def is_remeasurement(record):
    """A retest's re-measurement (``params.retest``, or a kind such as ``rdma_lat_retest``); the retest summary
    and the findings the retests lead to are judgements of the run, not re-measurements."""
    record = record or {}
    return bool((record.get("params") or {}).get("retest") or record.get("retest")
                or str(record.get("kind") or "").endswith(RETEST_SUFFIX))


def overall_verdict(counts, regressions=0, failed_hosts=0):
    """``fail``, ``warn`` or ``pass`` for a run.

    counts: number of checks by verdict. regressions: number of checks that
    regressed against their baseline (the report's count; regression records
    in the history carry ``verdict: warn`` and are in counts instead).
    failed_hosts: hosts that failed or were unreachable (the history callback
    knows them; the report does not).

    fail: a check failed or errored, or a host failed. warn: a check warned,
    was flaky or regressed. error: every check was skipped (nothing was
    measured). pass: anything else (also a run with no record, such as a
    report of an earlier run; :func:`summary_verdict` says more of a run).
    """
    counts = counts or {}
    if failed_hosts or any(counts.get(v) for v in FAILING):
        return "fail"
    if regressions or any(counts.get(v) for v in WARNING):
        return "warn"
    if counts.get("skipped") and not checked_something(counts):
        return NOTHING_CHECKED
    return "pass"


def checked_something(counts):
    """True when a record of the run has a verdict of a check that ran (not only ``skipped`` ones)."""
    return any((counts or {}).get(v) for v in CHECKED)


def summary_verdict(counts, hosts_ran, failed_hosts=0):
    """(verdict, cause) of a run's history summary line: the report's verdict, or ``error`` when it checked nothing.

    hosts_ran: hosts that ran a task (ok, failed or unreachable); failed_hosts:
    those that failed or were unreachable. A run with no record of a check is
    an ``error`` with the reason: every check skipped, every host lost before
    any check, or no host at all (the play's pattern matched none). A run
    whose hosts all did their part and that keeps no record of its own (a
    report or quarantine of an earlier run) stays ``pass``.
    """
    counts = counts or {}
    verdict = overall_verdict(counts, failed_hosts=failed_hosts)
    if checked_something(counts):
        return verdict, None
    if counts.get("skipped"):
        return NOTHING_CHECKED, ("nothing was measured: every check of the run was skipped (%d), see their causes"
                                 % counts["skipped"])
    if failed_hosts:
        return NOTHING_CHECKED, ("nothing was checked: %d host(s) failed or were unreachable before any check "
                                 "recorded a result, see the run's output" % failed_hosts)
    if not hosts_ran:
        return NOTHING_CHECKED, ("nothing was checked: no host ran a task (no hosts matched the play's pattern, "
                                 "commcheck_target)")
    return verdict, None
