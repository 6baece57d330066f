# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action clusterops.commcheck.record: validate and normalize check records on the controller.

Nothing runs on the target: the records are checked against the results
contract, normalized, stripped of secret-looking keys and values, and returned
as ``commcheck_records`` (which the commcheck_history callback writes out).
Records are data: no value of a record names a file, a directory or a
program here (the history files are named by month, the report files are
fixed names), so hostile strings stay strings. An error message quotes at
most about 200 characters of a bad value. A role passes the name of the
result that holds them (``records_from``, ``plugin_utils/named_vars.py``)
rather than a template.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.clusterops.commcheck.plugins.module_utils.records.history import (
    RecordError,
    normalize_records,
)
from ansible_collections.clusterops.commcheck.plugins.module_utils.options.option_rules import QUOTE_LIMIT, OptionError
from ansible_collections.clusterops.commcheck.plugins.plugin_utils.controller_action import ControllerAction
from ansible_collections.clusterops.commcheck.plugins.plugin_utils.named_vars import named, task_value

ARGUMENT_SPEC = dict(
    # exactly one of the two
    records=dict(type="list", elements="dict"),
    records_from=dict(type="str"),
)


def given_records(args, read):
    """The records the task gives: ``records``, or what ``records_from`` names (``read(path)`` reads a variable of
    the task's host, MISSING when it has none), which must be a list."""
    if (args.get("records") is None) == (args.get("records_from") is None):
        raise RecordError("give one of records and records_from (the variable that holds them), not %s"
                          % ("both" if args.get("records") is not None else "neither"))
    if args.get("records") is not None:
        return args["records"]
    try:
        return named("records_from", args["records_from"], read, list)
    except OptionError as exc:
        raise RecordError(str(exc))


class ActionModule(ControllerAction):

    NAME = "clusterops.commcheck.record"
    ARGUMENT_SPEC = ARGUMENT_SPEC
    FAILURES = (RecordError,)
    MESSAGE_LIMIT = 2 * QUOTE_LIMIT

    def decide(self, args, result, task_vars):
        records, redacted = normalize_records(given_records(args, lambda path: task_value(task_vars, path)))
        result.update(
            changed=False,
            commcheck_records=records,
            redacted=redacted,
            msg="%d record(s)" % len(records),
        )
        return result
