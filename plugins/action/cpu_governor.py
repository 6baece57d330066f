# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action clusterops.commcheck.cpu_governor: the module, with ``role_options`` read on the controller.

With ``role_options: hold`` the governor and where each CPU's own governor is kept come from the run's variables
(``commcheck_cpu_governor``, ``commcheck_lock_dir``); with ``role_options: restore`` what was kept there is put
back. ``sysfs_root`` comes from ``commcheck_sysfs_root`` with either. The module then runs on the host as it
would without it.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible.plugins.action import ActionBase

from ansible_collections.clusterops.commcheck.plugins.plugin_utils.host_vars import overlay_role_values

MODULE = "clusterops.commcheck.cpu_governor"
# role_options -> (argument -> the variable it is read from)
ROLE_VARIABLES = {
    "hold": {"governor": "commcheck_cpu_governor", "save_to": "commcheck_lock_dir",
             "sysfs_root": "commcheck_sysfs_root"},
    "restore": {"restore_saved": "commcheck_lock_dir", "sysfs_root": "commcheck_sysfs_root"},
}


def role_args(args, role_value):
    """``args`` with the arguments of its ``role_options`` (hold, restore) taken from the variables where they are
    set (``overlay_role_values``); ``role_value(name)`` is a variable's templated value or None."""
    table = ROLE_VARIABLES.get(args.get("role_options"), {})
    return overlay_role_values(args, table, role_value)


class ActionModule(ActionBase):

    _supports_check_mode = True

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        task_vars = task_vars or {}
        args = dict(self._task.args)
        if args.get("role_options") is not None:
            if args["role_options"] not in ROLE_VARIABLES:
                return dict(result, failed=True, msg="role_options must be one of hold, restore, got %r"
                            % (args["role_options"],))
            args = role_args(args, lambda name: self._templar.template(task_vars[name]) if name in task_vars else None)
        result.update(self._execute_module(module_name=MODULE, module_args=args, task_vars=task_vars))
        self._remove_tmp_path(self._connection._shell.tmpdir)
        return result
