# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action clusterops.commcheck.check_outputs: the run's outputs can be written (start), and were (end).

``step: start``, before anything runs: the report directory and the history
directory can be written, so that a run is never lost after its tests.
``step: end``, the play's last task: every line the commcheck_history callback
had to write was written; if not, the task fails with what was not written and
where it is kept, so ansible-playbook exits non-zero (a callback cannot set its
exit status). The callback's state is read as ansible-playbook's main process
had it when this task started (records/history_state.py).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os

from ansible_collections.clusterops.commcheck.plugins.module_utils.options import option_rules as rules
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import history_state
from ansible_collections.clusterops.commcheck.plugins.module_utils.records.writable import dir_write_problem
from ansible_collections.clusterops.commcheck.plugins.plugin_utils.controller_action import ControllerAction

ARGUMENT_SPEC = dict(
    step=dict(type="str", required=True, choices=["start", "end"]),
    report_dir=dict(type="path"),
)


def this_runs_state():
    """The history callback's state if it belongs to this run (this process or the one that forked it)."""
    state = history_state.current()
    return state if state is not None and state.pid in (os.getpid(), os.getppid()) else None


def start_problems(report_dir, state, probe=True):
    """What keeps the run's outputs from being written: one text per directory, naming its setting."""
    problems = []
    if report_dir is not None:
        why = dir_write_problem(report_dir, probe=probe)
        if why:
            problems.append("commcheck_report_dir %s cannot be written (%s): the report would be lost after the "
                            "tests; choose a directory this controller user can write" % (report_dir, why))
    if state is not None and state.on:
        why = dir_write_problem(state.directory, probe=probe)
        if why:
            problems.append("the history directory %s (history_dir of the commcheck_history callback, "
                            "COMMCHECK_HISTORY_DIR) cannot be written (%s): the records would be lost; choose "
                            "another directory or free it" % (state.directory, why))
    return problems


class ActionModule(ControllerAction):

    NAME = "clusterops.commcheck.check_outputs"
    ARGUMENT_SPEC = ARGUMENT_SPEC
    FAILURES = (rules.OptionError, ValueError, OSError)

    def decide(self, args, result, task_vars):
        state = this_runs_state()
        if args["step"] == "end":
            problem, facts = history_state.end_problem(state, (os.getpid(), os.getppid()))
            result.update(changed=False, history=facts)
            if problem:
                return self.fail(result, problem)
            result["msg"] = ("every history line of run %s was written to %s" % (facts["run_id"], facts["file"])
                             if facts["enabled"] and facts.get("file") else "no history line to check")
            return result
        report_dir = None
        if args["report_dir"] is not None:
            report_dir = os.path.abspath(rules.check_path("report_dir", args["report_dir"], absolute=False))
        problems = start_problems(report_dir, state, probe=not self._task.check_mode)
        result.update(changed=False, report_dir=report_dir,
                      history_dir=state.directory if state is not None and state.on else None)
        if problems:
            return self.fail(result, "nothing was run: %s" % "; ".join(problems))
        result["msg"] = "the report and history directories can be written"
        return result
