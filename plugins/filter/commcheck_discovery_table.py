# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
name: commcheck_discovery_table
short_description: Render RDMA discovery facts of many hosts as a compact table plus findings
version_added: 1.0.0
description:
  - Turns the C(commcheck_rdma) facts of M(clusterops.commcheck.rdma_facts), per host, into lines of a
    table (host, device, port, state, physical state, rate, link layer, netdev, GID index) followed by
    every finding (severity, host, device/port, code, message and fix), ready for C(ansible.builtin.debug).
options:
  _input:
    description:
      - A dictionary of inventory host name to its C(commcheck_rdma) fact, or one C(commcheck_rdma) fact.
    type: dict
    required: true
  findings:
    description: Whether to list the findings after the table.
    type: bool
    default: true
  min_severity:
    description: Leave out findings less severe than this.
    type: str
    choices: [error, warning, info]
    default: info
'''

EXAMPLES = r'''
- name: Show what discovery found on every host
  ansible.builtin.debug:
    msg: >-
      {{ dict(ansible_play_hosts | zip(ansible_play_hosts | map('extract', hostvars, 'commcheck_rdma')))
         | clusterops.commcheck.commcheck_discovery_table }}
  run_once: true
'''

RETURN = r'''
_value:
  description: The lines of the table, then an empty line, a count line and one line per finding.
  type: list
  elements: str
  sample:
    - "HOST   DEVICE  PORT  STATE   PHYS    RATE  LINK      NETDEV     GID"
    - "node1  mlx5_0  1     ACTIVE  LinkUp  400G  Ethernet  ens1f0np0  3"
    - ""
    - "Findings: 0 error(s), 0 warning(s), 0 info"
'''

from ansible.errors import AnsibleFilterError

from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery.report import discovery_table


def commcheck_discovery_table(facts_by_host, findings=True, min_severity="info"):
    try:
        return discovery_table(facts_by_host, findings=findings, min_severity=min_severity)
    except (ValueError, TypeError, AttributeError) as exc:
        raise AnsibleFilterError("commcheck_discovery_table: %s" % exc)


class FilterModule(object):
    def filters(self):
        return {"commcheck_discovery_table": commcheck_discovery_table}
