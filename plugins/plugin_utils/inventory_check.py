# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The play's test hosts read from the controller's variables, for the inventory check before anything runs.

``validate_options`` calls :func:`play_inventory_problems` once (with its templar's
``template``): each play
host's own ``ansible_host``, ``commcheck_address`` and
``commcheck_tcp_address`` (templated only where the raw value holds a
template), the play's value of the last two where the play, a role or the
extra vars give one for every host, and the address kinds the roles of the
run test between hosts. The checks are ``discovery/inventory_checks.py``'s.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from collections.abc import Mapping

from ansible.errors import AnsibleError

from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery import inventory_checks
from ansible_collections.clusterops.commcheck.plugins.plugin_utils.controller_action import has_template

# The address kinds each role tests with; a role not named (report, quarantine, k8s_pods) tests no host.
ROLE_ADDRESS_KINDS = {
    "commcheck": (inventory_checks.RDMA_ADDRESS, inventory_checks.TCP_ADDRESS),
    "rdma_perf": (inventory_checks.RDMA_ADDRESS,),
    "collective": (inventory_checks.RDMA_ADDRESS,),
    "tcp_perf": (inventory_checks.TCP_ADDRESS,),
    "discover": (),
}
PLAY_LEVEL = ("commcheck_address", "commcheck_tcp_address")


def address_kinds(roles):
    """The address kinds the roles test with, or None when no role of them runs on the test hosts."""
    kinds = [kind for role in roles if role in ROLE_ADDRESS_KINDS for kind in ROLE_ADDRESS_KINDS[role]]
    return sorted(set(kinds)) if any(role in ROLE_ADDRESS_KINDS for role in roles) else None


def _value(hostvars, host, raw, variable):
    value = raw.get(variable)
    if value is None or not has_template(value):
        return value
    try:
        return hostvars[host][variable]
    except (AnsibleError, KeyError):
        return None  # the option check names a value that cannot be evaluated


def _play_values(task_vars, raw_current, template):
    """The variables of PLAY_LEVEL the play, a role or a task gives every host (not the current host's own)."""
    values = {}
    for variable in PLAY_LEVEL:
        if variable in task_vars and variable not in raw_current:
            try:
                value = template(task_vars[variable])
            except AnsibleError:
                continue  # the option check names a value that cannot be evaluated
            if value not in (None, ""):
                values[variable] = value
    return values


def play_inventory_problems(roles, task_vars, template):
    """inventory_checks.inventory_problems of the play's hosts, for a run of ``roles`` (a list of messages)."""
    kinds = address_kinds(roles)
    hostvars = task_vars.get("hostvars")
    hosts = list(task_vars.get("ansible_play_hosts_all") or [])
    if kinds is None or not hosts or hostvars is None or not hasattr(hostvars, "raw_get"):
        return []
    own = {}
    for host in hosts:
        raw = hostvars.raw_get(host)
        raw = raw if isinstance(raw, Mapping) else {}
        own[host] = dict((variable, _value(hostvars, host, raw, variable))
                         for variable in inventory_checks.ADDRESS_VARIABLES)
    current = hostvars.raw_get(task_vars.get("inventory_hostname")) if task_vars.get("inventory_hostname") else {}
    play_values = _play_values(task_vars, current if isinstance(current, Mapping) else {}, template)
    return inventory_checks.inventory_problems(own, play_values, kinds)
