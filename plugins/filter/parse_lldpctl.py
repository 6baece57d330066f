# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
name: parse_lldpctl
short_description: Parse lldpctl -f json (or -f json0) output into the switch and port each interface is cabled to
version_added: 1.0.0
description:
  - Reads the neighbour table lldpd's C(lldpctl -f json) (also C(-f json0), and C(lldpcli -f json show neighbors))
    prints, and returns one flat entry per interface with an LLDP neighbour, the neighbour's system name and the
    port it reported, whichever way lldpd folded the JSON (one interface as an object, several as a list, the
    chassis keyed by its name or not).
  - Text around the JSON (a prompt, the command line, a warning) is tolerated. No neighbour is an empty list, not an
    error; a text without lldpd's table, a cut JSON or no output at all gives an C(errors) entry with a likely
    cause and fix. The parser never fails on odd text.
  - Discovery runs C(lldpctl -f json) where it is installed and records, from this, the leaf switch of each RDMA
    port (its C(topology)).
extends_documentation_fragment:
  - clusterops.commcheck.tool_output
'''

EXAMPLES = r'''
- name: Read the LLDP neighbours of the host
  ansible.builtin.command:
    argv: [lldpctl, -f, json]
  register: lldp
  changed_when: false
  failed_when: false

- name: Show which switch port each interface is cabled to
  ansible.builtin.debug:
    msg: "{{ item.interface }}: {{ item.chassis }} {{ item.port_id }}"
  loop: "{{ (lldp | clusterops.commcheck.parse_lldpctl).neighbors }}"
'''

RETURN = r'''
_value:
  description: The parsed neighbour table.
  type: dict
  contains:
    ok:
      description: True when lldpd's table was read (even with no neighbour).
      type: bool
    neighbors:
      description: One entry per interface with a neighbour.
      type: list
      elements: dict
      contains:
        interface:
          description: The local interface (netdev).
          type: str
          sample: ens841np0
        chassis:
          description: The neighbour's system name (null when it sends none).
          type: str
          sample: LEAF03
        chassis_id:
          description: The neighbour's chassis id (a MAC address, usually).
          type: str
        chassis_id_type:
          description: The chassis id's subtype (C(mac), C(local), ...).
          type: str
        port_id:
          description: The neighbour's port id.
          type: str
          sample: Ethernet184
        port_id_type:
          description: The port id's subtype (C(ifname), C(local), C(mac), ...).
          type: str
        port_descr:
          description: The neighbour's port description.
          type: str
        mgmt_ip:
          description: The neighbour's management addresses.
          type: list
          elements: str
        via:
          description: The protocol it was learnt by (C(LLDP), C(CDPv2), ...).
          type: str
        rid:
          description: lldpd's remote index of the neighbour.
          type: str
        age:
          description: How long lldpd has known the neighbour.
          type: str
        ttl:
          description: The neighbour's time to live, seconds (as text).
          type: str
    errors:
      description: Errors as C({code, message, cause, fix}); codes C(no_output), C(no_lldp_json), C(truncated_json),
        C(parser_error), C(unknown).
      type: list
      elements: dict
    warnings:
      description: Notes on entries left out (an interface without a name).
      type: list
      elements: str
'''

from ansible_collections.clusterops.commcheck.plugins.plugin_utils.filter_input import tool_text_filter_module
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_lldpctl import parse_lldpctl

FilterModule = tool_text_filter_module("parse_lldpctl", parse_lldpctl)
