# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one verdict of a whole run, shared by the report and the history's summary line.

The report (report_render.summarize) and the history callback's ``kind:
summary`` line both call :func:`overall_verdict`, so a run the report calls
WARN is ``warn`` in the history too.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

FAILING = ("fail", "error")
WARNING = ("warn", "flaky")
INTERRUPTED = "interrupted"


def overall_verdict(counts, regressions=0, failed_hosts=0):
    """``fail``, ``warn`` or ``pass`` for a run.

    counts: number of checks by verdict. regressions: number of checks that
    regressed against their baseline (the report's count; regression records
    in the history carry ``verdict: warn`` and are in counts instead).
    failed_hosts: hosts that failed or were unreachable (the history callback
    knows them; the report does not).

    fail: a check failed or errored, or a host failed. warn: a check warned,
    was flaky or regressed. pass: anything else (also an empty run).
    """
    counts = counts or {}
    if failed_hosts or any(counts.get(v) for v in FAILING):
        return "fail"
    if regressions or any(counts.get(v) for v in WARNING):
        return "warn"
    return "pass"
