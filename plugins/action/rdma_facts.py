# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action clusterops.commcheck.rdma_facts: the module, with ``role_options`` read on the controller.

With ``role_options: true`` every option the task does not give comes from
the discover role's variables of this host (the rule for each is
``role_args``); with ``keep_facts: true`` a host that has its discovery's
facts already only reads again (``kept_facts_args``), and one that has none
yet asks its leaf switches as the discover role would
(``commcheck_discover_topology_tools``, ``undiscovered_args``): a pair-check
role run alone localizes by the same topology as the one-click check. The
module then runs on the host as it would without them.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible.module_utils.parsing.convert_bool import boolean

from ansible_collections.clusterops.commcheck.plugins.plugin_utils.host_vars import overlay_role_values
from ansible_collections.clusterops.commcheck.plugins.plugin_utils.role_options_action import RoleOptionsAction

MODULE = "clusterops.commcheck.rdma_facts"
# argument: the variables it is read from, the first one set (not None) wins
ROLE_VARIABLES = {
    "sysfs_root": ("commcheck_sysfs_root",),
    # the role's variable, else the inventory's
    "expected_rate_gbps": ("commcheck_expected_rate_gbps", "expected_rate_gbps"),
    "subnet": ("commcheck_subnet",),
    "ib_gid_index": ("commcheck_ib_gid_index",),
    "tools": ("commcheck_discover_tools",),
    "topology_tools": ("commcheck_discover_topology_tools",),
    "address_source": ("commcheck_discover_address_source",),
    "transport": ("commcheck_transport",),
    "kubectl": ("commcheck_kubectl",),
    # the one-click check's tool probe, in the same module run; no devices when it runs no RDMA check
    "probe": ("commcheck_oneclick_probe_keys",),
    "devices": ("commcheck_oneclick_discover_devices",),
    "fail_on": ("commcheck_fail_on",),
}
# set, but empty (an empty text, an empty mapping): the argument is not given
EMPTY_IS_UNSET = ("subnet", "kubectl")


def role_args(args, role_value):
    """``args`` with each argument the host's variables set replaced by their value, as the task's own arguments
    replaced the play's module_defaults; ``role_value(name)`` is the host's templated value of a variable or None."""
    return overlay_role_values(args, ROLE_VARIABLES, role_value, EMPTY_IS_UNSET)


def kept_facts_args(args, discovered):
    """``args`` for a host that keeps its discovery's facts (``discovered``): a later reading, neither setting the
    facts nor running the tools; unchanged for a host not discovered yet."""
    return dict(args, facts=False, tools=False) if discovered else dict(args)


def undiscovered_args(args, role_value):
    """``args`` for a host that keeps facts but has none yet: ``topology_tools`` from the discover role's
    ``commcheck_discover_topology_tools`` when the task does not give it and the variable is set, so the facts
    this run makes hold the leaf switches the one-click check's discovery would have read."""
    value = role_value(ROLE_VARIABLES["topology_tools"][0])
    if args.get("topology_tools") is not None or value is None:
        return dict(args)
    return dict(args, topology_tools=value)


class ActionModule(RoleOptionsAction):

    MODULE = MODULE

    def role_args(self, args, task_vars):
        return role_args(args, lambda name: self.role_value(task_vars, name))

    def own_args(self, args, task_vars):
        if boolean(args.pop("keep_facts", False), strict=False):
            if (task_vars.get("ansible_facts") or {}).get("commcheck_rdma") is not None:
                return kept_facts_args(args, True)
            return undiscovered_args(args, lambda name: self.role_value(task_vars, name))
        return args
