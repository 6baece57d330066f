# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action clusterops.commcheck.record: validate and normalize check records on the controller.

Nothing runs on the target: the records are checked against the results
contract, normalized, stripped of secret-looking keys and values, and returned
as ``commcheck_records`` (which the commcheck_history callback writes out). With ``keep`` they are also
added to ``commcheck_run_records`` (the records the report reads), returned as a fact of the host the task's
facts go to: localhost with ``delegate_to: localhost`` and ``delegate_facts: true``.
Records are data: no value of a record names a file, a directory or a
program here (the history files are named by month, the report files are
fixed names), so hostile strings stay strings. An error message quotes at
most about 200 characters of a bad value.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.clusterops.commcheck.plugins.module_utils.records.history import (
    RecordError,
    normalize_records,
)
from ansible_collections.clusterops.commcheck.plugins.module_utils.options.option_rules import QUOTE_LIMIT
from ansible_collections.clusterops.commcheck.plugins.plugin_utils.controller_action import ControllerAction
from ansible_collections.clusterops.commcheck.plugins.plugin_utils.host_vars import host_value

ARGUMENT_SPEC = dict(
    records=dict(type="list", elements="dict", required=True),
    keep=dict(type="bool", default=False),
)
RUN_RECORDS = "commcheck_run_records"


def kept_records(earlier, records):
    """The run's records so far with these added (``earlier``: the fact as it is, None when unset)."""
    return list(earlier or []) + list(records)


class ActionModule(ControllerAction):

    NAME = "clusterops.commcheck.record"
    ARGUMENT_SPEC = ARGUMENT_SPEC
    FAILURES = (RecordError,)
    MESSAGE_LIMIT = 2 * QUOTE_LIMIT

    def decide(self, args, result, task_vars):
        records, redacted = normalize_records(args.get("records"))
        result.update(
            changed=False,
            commcheck_records=records,
            redacted=redacted,
            msg="%d record(s)" % len(records),
        )
        if args.get("keep"):
            earlier = host_value(task_vars.get("hostvars") or {}, self._facts_host(task_vars), [RUN_RECORDS], None)
            result["ansible_facts"] = {RUN_RECORDS: kept_records(earlier, records)}
        return result

    def _facts_host(self, task_vars):
        """The host whose facts the task sets: the delegate with delegate_facts, else the task's own host."""
        if self._task.delegate_to and self._task.delegate_facts:
            return self._templar.template(self._task.delegate_to)
        return task_vars.get("inventory_hostname")
