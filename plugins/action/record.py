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
most about 200 characters of a bad value.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible.plugins.action import ActionBase

from ansible_collections.clusterops.commcheck.plugins.module_utils.records.history import (
    RecordError,
    normalize_records,
)
from ansible_collections.clusterops.commcheck.plugins.module_utils.options.option_rules import QUOTE_LIMIT

ARGUMENT_SPEC = dict(
    records=dict(type="list", elements="dict", required=True),
)


def short_message(text, limit=2 * QUOTE_LIMIT):
    """A message cut to about ``limit`` characters (a huge bad value must not flood the output)."""
    return text if len(text) <= limit else "%s...(%d characters)" % (text[:limit], len(text))


class ActionModule(ActionBase):

    TRANSFERS_FILES = False
    _requires_connection = False
    _supports_check_mode = True
    _supports_async = False

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        validation, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        del validation
        try:
            records, redacted = normalize_records(args.get("records"))
        except RecordError as exc:
            result.update(failed=True, msg="clusterops.commcheck.record: %s" % short_message(str(exc)))
            return result
        result.update(
            changed=False,
            commcheck_records=records,
            redacted=redacted,
            msg="%d record(s)" % len(records),
        )
        return result
