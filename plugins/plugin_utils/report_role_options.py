# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The report action's arguments from the report role's variables (``role_options: true``).

The report role's task once passed each of these as a Jinja expression; the rule
for each lives here, in one table, tested: an empty text is "not set" (the
module's own default or None), and the records are the role's
``commcheck_report_records`` unless that is None, else what the run published
(``commcheck_run_records`` of localhost).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

# argument: the role variable it is read from (Ansible's argument spec converts the types)
ROLE_VARIABLES = {
    "run_id": "commcheck_run_id",
    "report_dir": "commcheck_report_dir",
    "history_dir": "commcheck_history_dir",
    "history_run": "commcheck_report_from_history",
    "compare": "commcheck_report_compare",
    "baseline_runs": "commcheck_baseline_runs",
    "baseline_run": "commcheck_baseline_run",
    "baseline_max_age": "commcheck_baseline_max_age",
    "min_runs": "commcheck_baseline_min_runs",
    "threshold": "commcheck_regression_threshold",
    "thresholds": "commcheck_regression_thresholds",
    "ignore_params": "commcheck_baseline_ignore_params",
    "formats": "commcheck_report_formats",
    "regression_fails": "commcheck_report_junit_regression_fails",
    "fail_on": "commcheck_report_fail_on",
    "index": "commcheck_report_index",
    "index_runs": "commcheck_report_index_runs",
    "index_points": "commcheck_report_index_points",
    "index_rows": "commcheck_report_index_rows",
}
# set, but empty: the argument is not given
EMPTY_IS_UNSET = ("history_dir", "history_run", "baseline_run", "baseline_max_age")


def is_unset(argument, value):
    return value is None or (argument in EMPTY_IS_UNSET and value == "")


def run_records(role_value, published_records):
    """The role's ``commcheck_report_records`` unless it is None, else the run's published records (or none)."""
    records = role_value("commcheck_report_records")
    if records is not None:
        return records
    published = published_records()
    return [] if published is None else published


def role_args(args, role_value, published_records):
    """``args`` with each argument the role's variables set replaced by their value, as the task's own arguments
    replaced the play's module_defaults; ``role_value(name)`` is a variable's templated value or None,
    ``published_records()`` localhost's ``commcheck_run_records`` or None."""
    full = dict((name, value) for name, value in args.items() if name != "role_options")
    for argument, variable in ROLE_VARIABLES.items():
        value = role_value(variable)
        if not is_unset(argument, value):
            full[argument] = value
    full["records"] = run_records(role_value, published_records)
    return full
