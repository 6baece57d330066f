# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
name: commcheck_target
short_description: Why a host pattern (commcheck_target) matches no host of the inventory
version_added: 1.0.0
description:
  - Resolves a host pattern the way a play's C(hosts) does (groups, host names, C(:), C(&), C(!), wildcards and
    C(~regex)), on the inventory of this run and within its C(--limit), and returns one message when it matches
    no host, else nothing.
  - The message quotes the pattern and the limit, lists the inventory's groups with their number of hosts (at
    most 20, then how many more) and says what to set. A run whose target matches nothing would check nothing
    and end as if the cluster were healthy; the playbooks of the collection stop it with this message before
    anything runs.
author:
  - commcheck developers (@clusterops)
options:
  _terms:
    description: The host pattern (for example C(commcheck_target)); several terms are one pattern joined by C(,).
    required: true
'''

EXAMPLES = r'''
# The first play of each playbook of the collection: stop when commcheck_target matches nothing.
- name: Refuse a commcheck_target that matches no host
  hosts: localhost
  gather_facts: false
  vars:
    commcheck_target_problems: "{{ query('clusterops.commcheck.commcheck_target', commcheck_target | default('all')) }}"
  tasks:
    - name: Go on, commcheck_target matches hosts of the inventory
      ansible.builtin.meta: end_play
      when: commcheck_target_problems | length == 0
    - name: Stop, commcheck_target matches no host of the inventory
      ansible.builtin.fail:
        msg: "{{ commcheck_target_problems | join('; ') }}"
'''

RETURN = r'''
_raw:
  description: One message when the pattern matches no host within the limit; an empty list when it matches.
  type: list
  elements: str
'''

from ansible.errors import AnsibleError, AnsibleLookupError
from ansible.inventory.manager import InventoryManager
from ansible.module_utils.common.collections import is_sequence
from ansible.plugins.lookup import LookupBase

from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery.inventory_checks import target_problem


def _pattern(terms):
    parts = []
    for term in terms:
        if is_sequence(term):
            parts.extend(str(t) for t in term)
        elif term is not None:
            parts.append(str(term))
    return ",".join(p for p in parts if p)


class LookupModule(LookupBase):

    def run(self, terms, variables=None, **kwargs):
        self.set_options(var_options=variables, direct=kwargs)
        variables = variables or {}
        pattern = _pattern(terms)
        groups = variables.get("groups") or {}
        limit = variables.get("ansible_limit")
        limit = ",".join(str(item) for item in limit) if is_sequence(limit) else limit
        manager = InventoryManager(self._loader, parse=False)
        for group, hosts in groups.items():
            manager.add_group(group)
            for host in hosts:
                manager.add_host(host, group=group)
        try:
            if limit:
                manager.subset(limit)
            matched = [host.name for host in manager.get_hosts(pattern=pattern)] if pattern else []
        except AnsibleError as exc:
            raise AnsibleLookupError("commcheck_target %r is not a host pattern: %s" % (pattern, exc))
        problem = target_problem(pattern, matched, dict((g, len(h)) for g, h in groups.items()), limit)
        return [problem] if problem else []
