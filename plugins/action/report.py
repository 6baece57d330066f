# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action clusterops.commcheck.report: compare a run with its history and write the report files.

Runs on the controller only: reads the history directory, renders with the
pure functions of module_utils/records/report_*.py and writes the files
atomically (temporary file + rename) into ``report_dir``.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import contextlib
import datetime
import os

from ansible_collections.clusterops.commcheck.plugins.module_utils.records import history_baseline
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import baseline as bl
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import version_mix
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import history
from ansible_collections.clusterops.commcheck.plugins.module_utils.records.atomic_file import write_atomic
from ansible_collections.clusterops.commcheck.plugins.module_utils.options import option_rules as rules
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import report_index
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import report_model
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import report_render as rr
from ansible_collections.clusterops.commcheck.plugins.plugin_utils.controller_action import ControllerAction
from ansible_collections.clusterops.commcheck.plugins.plugin_utils.host_vars import host_value
from ansible_collections.clusterops.commcheck.plugins.plugin_utils.report_role_options import role_args
from ansible_collections.clusterops.commcheck.plugins.plugin_utils import work_beside
from ansible.module_utils.parsing.convert_bool import boolean

FORMATS = rr.FORMATS
FILE_NAMES = rr.FILE_NAMES
ARGUMENT_SPEC = dict(rr.REPORT_ARGUMENT_SPEC, **report_index.INDEX_ARGUMENT_SPEC)


MAX_BASELINE_RUNS = 1000
MAX_THRESHOLD = 1000.0
NAME_LIMIT = 255
# from this many records on, the run's culprits are found beside the comparison with the history (culprits_beside)
BESIDE_RECORDS = 20000


def check_options(args):
    """Every option that names a file, a directory or a number, before anything is read or written.

    Returns the report directory (absolute, normalised; history_dir is
    normalised in ``args``). Raises OptionError naming the option.
    """
    report_dir = rules.check_path("report_dir", args["report_dir"], absolute=False)
    if args["history_dir"] is not None:
        args["history_dir"] = rules.check_path("history_dir", args["history_dir"], absolute=False)
    if args["run_id"] is not None:
        rules.check_text("run_id", args["run_id"], NAME_LIMIT)
        if args["run_subdir"]:
            rules.check_file_name("run_id", args["run_id"])
    for name in ("history_run", "baseline_run", "baseline_max_age"):
        if args[name] is not None:
            rules.check_text(name, args[name], NAME_LIMIT)
    rules.check_int("baseline_runs", args["baseline_runs"], 1, MAX_BASELINE_RUNS)
    rules.check_int("min_runs", args["min_runs"], 1, MAX_BASELINE_RUNS)
    rules.check_number("threshold", args["threshold"], 0, MAX_THRESHOLD)
    for metric, value in (args["thresholds"] or {}).items():
        rules.check_not_flag("thresholds key", str(metric))
        rules.check_number("thresholds[%s]" % metric, value, 0, MAX_THRESHOLD)
    for index, name in enumerate(args["ignore_params"] or []):
        rules.check_text("ignore_params[%d]" % index, name, NAME_LIMIT)
        if not name.strip():
            rules.fail("ignore_params[%d]" % index, name, "is empty: name a record parameter or remove the item")
    for name, (low, high) in report_index.INDEX_RANGES.items():
        args[name] = rules.check_int(name, args[name], low, high)
    return os.path.abspath(report_dir)


def run_dir(report_dir, run_id):
    """The run's own subdirectory: the run id must be one plain file name, and the result inside report_dir
    (not through a symbolic link)."""
    rules.check_file_name("run_id", run_id)
    return rules.check_not_linked("run_id", rules.check_inside("run_id", run_id, report_dir), report_dir)


class ActionModule(ControllerAction):

    NAME = "clusterops.commcheck.report"
    ARGUMENT_SPEC = ARGUMENT_SPEC
    FAILURES = (history.RecordError, ValueError, OSError)
    BULK_RECORDS = True

    def run(self, tmp=None, task_vars=None):
        task_vars = task_vars or {}
        if boolean(self._task.args.get("role_options", False), strict=False):
            self._task.args = role_args(self._task.args, lambda name: self._role_value(task_vars, name),
                                        lambda: self._published_records(task_vars))
        return super(ActionModule, self).run(tmp, task_vars)

    def _role_value(self, task_vars, name):
        """A role variable's value, templated; None when it is not set."""
        return self._templar.template(task_vars[name]) if name in task_vars else None

    @staticmethod
    def _published_records(task_vars):
        hostvars = task_vars.get("hostvars") or {}
        return host_value(hostvars, "localhost", ["commcheck_run_records"], None)

    def decide(self, args, result, task_vars):
        report_dir = parent_dir = check_options(args)
        read_report = history.ReadReport()
        records, run_id, until, known = self._records_of_the_run(args, read_report)
        compared = bool(args["compare"] and args["history_dir"] and records)
        with culprits_beside(records if compared else []) as found:
            if compared:
                records = compare(records, args, run_id, until, read_report, known)
        # hosts of the run on different NCCL, perftest or NIC firmware versions
        records = version_mix.with_version_findings(records)
        now = history.utc_now()
        if args["run_subdir"]:
            run_id = run_id or history.new_run_id(now)
            report_dir = run_dir(report_dir, run_id)
        # the tests whose checks regressed together, found once (a pass over every record) for all that says them
        shared = bl.shared_groups(records)
        summary = report_model.summarize(records, run_id=run_id, generated=history.format_time(now),
                                         report_dir=report_dir, shared=shared, culprits=found.value)
        meta = {"baseline": baseline_meta(args) if compared else None}
        files = dict((fmt, rules.check_inside("formats", FILE_NAMES[fmt], report_dir)) for fmt in args["formats"])
        summary["files"] = files
        texts = rr.each_format(args["formats"], records, summary, meta, now=now,
                               regression_fails=args["regression_fails"], shared=shared, in_pieces=True)
        index = index_problem = None
        if self._task.check_mode:
            for _fmt, text in texts:  # rendered as a run would, written nowhere
                for _piece in text:
                    pass
        else:
            write_files(report_dir, files, texts)
            if args["index"] and args["run_subdir"]:
                index, index_problem = write_index(parent_dir, report_dir, summary, records, args,
                                                   history.format_time(now))
        result.update(
            changed=True,
            run_id=run_id,
            report_dir=report_dir,
            files=files,
            index=index,
            summary=summary,
            summary_lines=rr.summary_lines(summary, files),
            fail_message=rr.failed_as_asked(summary, args["fail_on"], report_dir),
            regressions=bl.regressions(records, shared),
            regression_records=bl.regression_records(records, shared),
            history_problems=read_report.problems,
        )
        if args["return_records"]:
            # every record through Ansible's result handling costs the controller about as much as the report
            # itself at 100,000 records: the role leaves them in results.json and the history instead
            result["records"] = records
        warnings = [problems_warning(read_report.problems)] if read_report.problems else []
        if index_problem:
            warnings.append(index_problem)
        if warnings:
            result["warnings"] = warnings
        return result

    def _records_of_the_run(self, args, read_report):
        """(records, run id, until, known): the given records, or those of a past run from the history.

        ``until`` ends the baseline just before the past run began, so a past
        run is compared with what came before it; ``known``: the history's
        lines of that run (a ``history.LinesOfRun``), which the baseline
        passes over, else None.
        """
        records, _removed = history.normalize_records(args["records"])
        if records or not args["history_run"]:
            return records, args["run_id"], None, None
        if args["history_run"] == "last":
            chosen = past_run(args["history_dir"], args["history_run"], args["run_id"], read_report)
            known = history.LinesOfRun(chosen["run_id"])
            lines = history.query(args["history_dir"], run_id=chosen["run_id"], report=read_report, note=known)
        else:
            chosen, lines, known = named_run(args["history_dir"], args["history_run"], read_report)
        records = [r for r in lines if r.get("kind") not in ("regression", "summary")]
        first = history.parse_time(chosen["first"])
        return records, chosen["run_id"], first - datetime.timedelta(microseconds=1) if first else None, known


def past_run(history_dir, wanted, current_run_id, read_report):
    """The run named by history_run ("last": the latest with records, other than this run)."""
    if not history_dir:
        raise ValueError("history_run needs history_dir")
    runs = [r for r in history.list_runs(history_dir, report=read_report) if r["records"]]
    if wanted != "last":
        chosen = next((r for r in runs if r["run_id"] == wanted), None)
        if chosen is None:
            raise ValueError("history_run %s not found in %s" % (rules.show(wanted), history_dir))
        return chosen
    runs = [r for r in runs if r["run_id"] != current_run_id] if current_run_id else runs
    if not runs:
        raise ValueError("no run with records in %s" % history_dir)
    return runs[-1]


def named_run(history_dir, wanted, read_report):
    """({run_id, first}, lines, known) of the run named by history_run, from one read of its own lines (known:
    the history's lines of the run, a ``history.LinesOfRun``).

    What ``past_run`` would choose (a run with at least one line besides its summary; ``first``: the time of
    its first line, summary included), without listing every run of the history first: at 100,000 records a
    run, that list is a read of the whole history of its own.
    """
    if not history_dir:
        raise ValueError("history_run needs history_dir")
    known = history.LinesOfRun(wanted)
    lines = [r for r in history.query(history_dir, run_id=wanted, include_summary=True, report=read_report,
                                      note=known)
             if r.get("run_id") == wanted]
    if not any(r.get("kind") != "summary" for r in lines):
        raise ValueError("history_run %s not found in %s" % (rules.show(wanted), history_dir))
    first = min(r.get("time") or "" for r in lines)
    return {"run_id": wanted, "first": first}, [r for r in lines if r.get("kind") != "summary"], known


def compare(records, args, run_id, until, read_report, known=None):
    """The records with their baselines and regressions from the history (known: the lines of the run read
    from it, ``_records_of_the_run``)."""
    return history_baseline.compare_with_history(
        records, args["history_dir"], k=args["baseline_runs"], threshold=args["threshold"],
        baseline_run=args["baseline_run"] or None, exclude_runs=[run_id] if run_id else [],
        ignore_params=args["ignore_params"], thresholds=args["thresholds"], min_runs=args["min_runs"],
        since=args["baseline_max_age"] or None, until=until, report=read_report, known=known)


def baseline_meta(args):
    return {"k": args["baseline_runs"], "threshold": args["threshold"],
            "run": args["baseline_run"] or None, "history_dir": args["history_dir"]}


def write_files(report_dir, files, texts):
    """Write each (format, text) of ``texts`` as it comes, so that one text at a time is held (a text: its pieces,
    ``report_render.each_format(..., in_pieces=True)``)."""
    if not os.path.isdir(report_dir):
        os.makedirs(report_dir, 0o755)
    for fmt, text in texts:
        write_atomic(files[fmt], text)


class NotBeside(object):
    """What ``culprits_beside`` gives when it forks no child: nothing found beside."""
    value = None


def culprits_beside(records):
    """A context in which a forked child finds the run's culprits while the block compares the run with its
    history (a 128-host mesh: 4-5 CPU s of localization beside 12 of comparison), as the entered object's
    ``value`` after the block; None (``summarize`` finds them) below BESIDE_RECORDS records or without a CPU to
    spare. The culprits read the run's own records, with this run's version findings as ``summarize`` will see
    them."""
    if len(records) < BESIDE_RECORDS or not work_beside.can_fork():
        return contextlib.nullcontext(NotBeside())
    return work_beside.beside(lambda: report_model.run_culprits(version_mix.with_version_findings(records)),
                              "finding the culprits")


def write_index(parent_dir, report_dir, summary, records, args, generated):
    """(path, None) once the run's digest and the results page across runs are written; (None, why) when not.

    The run's own report is written already: a page that cannot be written
    is a warning, not a failed run.
    """
    try:
        index_path, _digest = report_index.update_index(
            parent_dir, report_dir, report_index.run_digest(summary, records), write_atomic,
            runs=args["index_runs"], points=args["index_points"], rows=args["index_rows"],
            history_dir=args["history_dir"], generated=generated)
    except (OSError, ValueError) as exc:
        return None, "results page %s not written: %s" % (os.path.join(parent_dir, report_index.INDEX_NAME), exc)
    return index_path, None


def problems_warning(problems):
    return "skipped %d bad history line(s): %s" % (
        len(problems), "; ".join("%s:%s %s" % (p["file"], p["line"], p["reason"]) for p in problems[:3]))
