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

from ansible_collections.clusterops.commcheck.plugins.plugin_utils.host_vars import overlay_role_values
from ansible_collections.clusterops.commcheck.plugins.plugin_utils.role_options_action import (
    RoleArgsError,
    RoleOptionsAction,
)

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


class ActionModule(RoleOptionsAction):

    MODULE = MODULE

    def takes_role_options(self, value):
        if value is not None and value not in ROLE_VARIABLES:
            raise RoleArgsError("role_options must be one of hold, restore, got %r" % (value,))
        return value is not None

    def role_args(self, args, task_vars):
        return role_args(args, lambda name: self.role_value(task_vars, name))
