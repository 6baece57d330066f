# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
name: parse_ibstat
short_description: Parse ibstat (or ibstatus) output into a list of channel adapters and their ports
version_added: 1.0.0
description:
  - Reads the output of C(ibstat) from infiniband-diags (tab or space indented, all CAs or one CA and port).
  - C(ibstat) stops with an C(ibpanic:) line when it cannot stat a device (exit 255); the CAs printed before it
    are returned and, with O(full=true), the panic as an C(errors) entry (code C(stat_failed), with the
    C(device)).
  - Text with no C(ibstat) CA block but C(ibstatus) port blocks is read as C(ibstatus), with the same port keys
    (C(state) and C(phys_state) spelled as C(ibstat) spells them).
extends_documentation_fragment:
  - clusterops.commcheck.tool_output
  - clusterops.commcheck.tool_output.pasted_text
  - clusterops.commcheck.tool_output.full
'''

EXAMPLES = r'''
- name: Read the CAs
  ansible.builtin.command: ibstat
  register: ibstat
  changed_when: false
  failed_when: false

- name: Ports that are not Active/LinkUp
  ansible.builtin.debug:
    msg: >-
      {{ ibstat.stdout | clusterops.commcheck.parse_ibstat
         | subelements('ports')
         | rejectattr('1.state', 'equalto', 'Active')
         | map('first') | map(attribute='name') | list }}

- name: Errors ibstat printed (ibpanic)
  ansible.builtin.debug:
    msg: "{{ (ibstat | clusterops.commcheck.parse_ibstat(full=true)).errors }}"
'''

RETURN = r'''
_value:
  description:
    - One item per CA, in output order; with O(full=true) a dictionary C({cas, errors, warnings, source}), C(errors) the ones the tool
      printed (for example C(stat_failed), C(umad_init_failed), C(no_device)).
  type: list
  elements: dict
  contains:
    name:
      description: CA name.
      type: str
      sample: mlx5_0
    ca_type:
      description: CA type.
      type: str
      sample: MT4129
    num_ports:
      description: Number of ports.
      type: int
    fw_version:
      description: Firmware version.
      type: str
    hw_version:
      description: Hardware version.
      type: str
    node_guid:
      description: Node GUID as printed.
      type: str
      sample: "0xa088c20300adeab8"
    sys_image_guid:
      description: System image GUID as printed.
      type: str
    ports:
      description: >-
        Ports with C(port) (int), C(state) (C(Active), C(Down), ...), C(phys_state) (C(LinkUp), C(Polling),
        C(Disabled), ...), C(rate) (number, Gb/s), C(base_lid), C(lmc), C(sm_lid) (ints), C(capability_mask),
        C(port_guid) and C(link_layer) (C(InfiniBand) or C(Ethernet)).
      type: list
      elements: dict
'''

from ansible_collections.clusterops.commcheck.plugins.plugin_utils.filter_input import tool_text_filter_module
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_ibstat import (
    parse_ibstat, parse_ibstat_full)

FilterModule = tool_text_filter_module("parse_ibstat", parse_ibstat, parse_ibstat_full, items="cas")
