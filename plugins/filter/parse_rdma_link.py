# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
name: parse_rdma_link
short_description: Parse iproute2 rdma link output into a list of RDMA ports
version_added: 1.0.0
description:
  - Reads the output of C(rdma link) (iproute2) in the current form (C(link mlx5_0/1 state ACTIVE physical_state
    LINK_UP netdev ens6f0np0)), the older form that starts with the device index (C(0/1:) before C(mlx5_0/1:)) and
    C(rdma -j link) JSON.
  - Extra fields (C(subnet_prefix), C(lid), C(sm_lid), C(lmc), C(netdev_index), C(caps)) are kept.
extends_documentation_fragment:
  - clusterops.commcheck.tool_output
  - clusterops.commcheck.tool_output.pasted_text
  - clusterops.commcheck.tool_output.full
'''

EXAMPLES = r'''
- name: Read the RDMA links
  ansible.builtin.command: rdma link
  register: rdma_link
  changed_when: false

- name: Ports that are not ACTIVE
  ansible.builtin.debug:
    msg: "{{ rdma_link.stdout | clusterops.commcheck.parse_rdma_link | rejectattr('state', 'equalto', 'ACTIVE') | list }}"
'''

RETURN = r'''
_value:
  description:
    - One item per port line, in output order; with O(full=true) a dictionary C({links, errors, warnings}), C(errors) the ones the tool printed
      (for example C(no_device), C(unsupported), C(not_installed)).
  type: list
  elements: dict
  contains:
    device:
      description: RDMA device name.
      type: str
      sample: mlx5_0
    port:
      description: Port number.
      type: int
      sample: 1
    state:
      description: Port state as printed.
      type: str
      sample: ACTIVE
    physical_state:
      description: Physical state as printed.
      type: str
      sample: LINK_UP
    netdev:
      description: Network device (null when not printed).
      type: str
      sample: ens6f0np0
    index:
      description: Device index (older text form and JSON; null otherwise).
      type: int
'''

from ansible_collections.clusterops.commcheck.plugins.plugin_utils.filter_input import tool_text_filter_module
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_rdma_link import (
    parse_rdma_link, parse_rdma_link_full)

FilterModule = tool_text_filter_module("parse_rdma_link", parse_rdma_link, parse_rdma_link_full, items="links")
