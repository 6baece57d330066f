# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action clusterops.commcheck.tool_probe: the module, with ``role_options`` read on the controller.

With ``role_options: true`` the transport comes from the host's ``commcheck_transport`` and, with the kubectl
transport, the pod from its ``commcheck_kubectl`` (the collective role's own probe, roles/collective/tasks/library.yml,
as the discover role's probe rides on ``rdma_facts``). The module then runs where the task runs it.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.clusterops.commcheck.plugins.plugin_utils.host_vars import overlay_role_values
from ansible_collections.clusterops.commcheck.plugins.plugin_utils.role_options_action import RoleOptionsAction

MODULE = "clusterops.commcheck.tool_probe"
ROLE_VARIABLES = {"transport": ("commcheck_transport",), "kubectl": ("commcheck_kubectl",)}
# set, but empty: the argument is not given
EMPTY_IS_UNSET = ("kubectl",)


def role_args(args, role_value):
    """``args`` with the transport the host's variables set; its pod only with the kubectl transport (a host reached
    another way keeps no pod from a variable it inherits); ``role_value(name)`` is a variable's templated value or
    None."""
    full = overlay_role_values(args, ROLE_VARIABLES, role_value, EMPTY_IS_UNSET)
    if full.get("transport", "host") != "kubectl":
        full.pop("kubectl", None)
    return full


class ActionModule(RoleOptionsAction):

    MODULE = MODULE

    def role_args(self, args, task_vars):
        return role_args(args, lambda name: self.role_value(task_vars, name))
