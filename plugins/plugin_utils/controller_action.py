# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The frame of commcheck's action plugins that run on the controller only (record, report, validate_options).

They never contact a host and transfer no file; each one validates its
arguments against its spec (``module_args.args_problem`` first, as the
modules do), then decides. A subclass names itself
(``NAME``), gives its ``ARGUMENT_SPEC``, the exceptions that fail the task with
their message (``FAILURES``) and ``decide(args, result, task_vars)``.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import contextlib
import gc
from collections.abc import Mapping

from ansible.plugins.action import ActionBase

from ansible_collections.clusterops.commcheck.plugins.module_utils.options.module_args import args_problem

TEMPLATE_MARKS = ("{{", "{%", "{#")


def cut(text, limit):
    """A message cut to ``limit`` characters (a huge bad value or a long history line must not flood the output)."""
    return text if len(text) <= limit else "%s...(%d characters)" % (text[:limit], len(text))


def has_template(value):
    """True when a string anywhere in a raw value (keys included) holds Jinja: only templating gives its value,
    and that value can differ per host."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if any(mark in item for mark in TEMPLATE_MARKS):
                return True
        elif isinstance(item, Mapping):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
    return False


@contextlib.contextmanager
def without_cycle_collection():
    """Python's cycle collector off while the block runs, back as it was after (also when the block raises).

    Records are trees of dicts and lists: they form no cycles, but each one
    allocated counts towards the next collection, and each full collection
    walks every object alive. Reading and judging tens of thousands of
    records then spends a third of its CPU in collections that free nothing
    (the report of a 1,024-host ring: 7.5 -> 4.6 CPU s, benchmarks/bench_report.py).
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


class ControllerAction(ActionBase):

    TRANSFERS_FILES = False
    _requires_connection = False
    _supports_check_mode = True
    _supports_async = False

    NAME = "clusterops.commcheck"
    ARGUMENT_SPEC = {}
    FAILURES = ()
    MESSAGE_LIMIT = 2000
    # True for an action that reads or builds tens of thousands of records: decide() runs without_cycle_collection
    BULK_RECORDS = False

    def run(self, tmp=None, task_vars=None):
        result = super(ControllerAction, self).run(tmp, task_vars)
        del tmp
        # before Ansible converts them: some values break its conversion instead of failing it
        problem = args_problem(self.ARGUMENT_SPEC, self._task.args)
        if problem:
            return self.fail(result, problem)
        _validation, args = self.validate_argument_spec(argument_spec=self.ARGUMENT_SPEC)
        try:
            with without_cycle_collection() if self.BULK_RECORDS else contextlib.nullcontext():
                return self.decide(args, result, task_vars or {})
        except self.FAILURES as exc:  # pylint: disable=catching-non-exception
            return self.fail(result, str(exc))

    def decide(self, args, result, task_vars):
        raise NotImplementedError

    def fail(self, result, message):
        """The task fails with ``NAME: message`` (cut to MESSAGE_LIMIT characters)."""
        result.update(failed=True, msg="%s: %s" % (self.NAME, cut(message, self.MESSAGE_LIMIT)))
        return result
