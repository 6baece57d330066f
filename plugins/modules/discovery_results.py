#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
module: discovery_results
short_description: Every host's RDMA discovery as one table and as records, read once on the controller
version_added: 1.1.0
description:
  - Reads the registered C(clusterops.commcheck.rdma_facts) result C(commcheck_discover_run) of every host of the
    play (those that C(commcheck_fail_on) failed included) and returns the operator's table of devices, ports and
    findings (findings below C(commcheck_discover_min_severity) left out) and the discovery records, each named by
    its host.
  - The C(clusterops.commcheck.discover) role shows the table and publishes the records with
    C(clusterops.commcheck.record).
author:
  - commcheck developers (@clusterops)
options: {}
extends_documentation_fragment:
  - clusterops.commcheck.controller
attributes:
  check_mode:
    support: full
    description: It only reads variables.
notes:
  - Run it with C(run_once=true) after C(clusterops.commcheck.rdma_facts) registered C(commcheck_discover_run).
seealso:
  - module: clusterops.commcheck.rdma_facts
  - module: clusterops.commcheck.record
'''

EXAMPLES = r'''
- name: Read every host's discovery once
  clusterops.commcheck.discovery_results:
  run_once: true
  register: discovered

- name: Show the RDMA devices and findings of every host
  ansible.builtin.debug:
    msg: "{{ discovered.table }}"
  run_once: true
'''

RETURN = r'''
table:
  description: Lines of a table (host, device, port, state, rate, GID index...) and the findings.
  returned: success
  type: list
  elements: str
records:
  description: The discovery records of every host, each with its C(host).
  returned: success
  type: list
  elements: dict
'''

from ansible_collections.clusterops.commcheck.plugins.module_utils.options.module_args import controller_only


def main():
    controller_only("discovery_results", {})


if __name__ == "__main__":
    main()
