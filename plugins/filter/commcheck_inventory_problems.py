# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
name: commcheck_inventory_problems
short_description: Test hosts that discovery shows are not machines of their own
version_added: 1.0.0
description:
  - Right after discovery, before any test - two inventory names whose discovery read one machine (the same
    kernel boot id and network namespace, or the same host name where the namespace could not be read), and rails
    of different hosts that share an IPv4 address on the same rail. Either would test a machine against itself.
  - Each problem names the hosts, the machine or the address, and what to fix. An empty list means none.
  - The inventory addresses are checked before discovery, by C(clusterops.commcheck.validate_options).
options:
  _input:
    description:
      - A dict with C(identities) (host -> the C(host.identity) of its C(commcheck_rdma) fact, from
        C(clusterops.commcheck.rdma_facts); null where unknown) and C(rails) (host -> its rails, each with
        C(rail) and C(address), as C(clusterops.commcheck.commcheck_rdma_rails) returns them).
    type: dict
    required: true
'''

EXAMPLES = r'''
- name: Stop when two inventory names reach one machine or share a rail address
  ansible.builtin.assert:
    that: problems | length == 0
    fail_msg: "{{ problems | join('; ') }}; nothing was run"
  vars:
    problems: "{{ {'identities': identities, 'rails': rails} | clusterops.commcheck.commcheck_inventory_problems }}"
  run_once: true
'''

RETURN = r'''
_value:
  description: One message per problem (an empty list when every test host is a machine of its own).
  type: list
  elements: str
'''

from collections.abc import Mapping

from ansible.errors import AnsibleFilterError

from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery.inventory_checks import discovery_problems


def commcheck_inventory_problems(hosts):
    if not isinstance(hosts, Mapping):
        raise AnsibleFilterError("commcheck_inventory_problems: the input must be a dict with identities and rails")
    identities, rails = hosts.get("identities") or {}, hosts.get("rails") or {}
    if not isinstance(identities, Mapping) or not isinstance(rails, Mapping):
        raise AnsibleFilterError("commcheck_inventory_problems: identities and rails must map hosts to values")
    return discovery_problems(dict(identities), dict(rails))


class FilterModule(object):
    def filters(self):
        return {"commcheck_inventory_problems": commcheck_inventory_problems}
