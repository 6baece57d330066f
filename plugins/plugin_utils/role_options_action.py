# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The action of a module whose task may read its arguments from the role's variables (``role_options: true``).

The module (``MODULE``) runs on the target as it would without the action; with ``role_options`` the action first
replaces the task's arguments by the variables of the host that are set (``role_args`` of the plugin, each
value templated on the controller). The ``quarantine``, ``rdma_facts`` and ``cpu_governor`` actions are this
(``cpu_governor`` with its own ``role_options`` values); ``run_lock`` reads its variables through ``role_value`` too.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible.module_utils.parsing.convert_bool import boolean
from ansible.plugins.action import ActionBase


class RoleArgsError(Exception):
    """The role's variables give no arguments the module can take; the message says why (the task fails)."""


class RoleOptionsAction(ActionBase):
    """Runs ``MODULE`` with the task's arguments, or with ``role_args`` of them under ``role_options: true``."""

    _supports_check_mode = True
    MODULE = None

    def run(self, tmp=None, task_vars=None):
        result = super(RoleOptionsAction, self).run(tmp, task_vars)
        del tmp
        task_vars = task_vars or {}
        args = dict(self._task.args)
        try:
            if self.takes_role_options(args.get("role_options")):
                args = self.role_args(args, task_vars)
        except RoleArgsError as exc:
            result.update(failed=True, msg="%s: %s" % (self.MODULE, exc))
            return result
        args.pop("role_options", None)
        args = self.own_args(args, task_vars)
        result.update(self._execute_module(module_name=self.MODULE, module_args=args, task_vars=task_vars))
        # as the normal action does: the module's temporary directory goes with its run
        self._remove_tmp_path(self._connection._shell.tmpdir)
        return result

    def takes_role_options(self, value):
        """Whether the task's ``role_options`` asks for its arguments from the role's variables (true); raises
        RoleArgsError for a value the action does not know."""
        return boolean(value or False, strict=False)

    def role_value(self, task_vars, name):
        """The host's templated value of the variable ``name``, None when it has none."""
        return self._templar.template(task_vars[name]) if name in task_vars else None

    def own_args(self, args, task_vars):
        """``args`` once the action's own options (none here) are taken out and applied."""
        del task_vars
        return args

    def role_args(self, args, task_vars):
        """``args`` with the role's variables of this host set over them (``role_options`` as the task gave it);
        raises RoleArgsError."""
        raise NotImplementedError
