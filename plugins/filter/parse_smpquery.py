# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
name: parse_smpquery
short_description: Parse smpquery nodeinfo / nodedesc output into what a node (the switch behind a port) says it is
version_added: 1.0.0
description:
  - Reads what infiniband-diags' C(smpquery nodeinfo) and C(smpquery nodedesc) print (one of them, or both one
    after the other) and returns the NodeInfo fields (node type, GUIDs, number of ports, the port the query came
    in by) and the node description.
  - Over the directed route C(0,<port>) out of a local InfiniBand port (C(smpquery -C mlx5_0 -P 1 -D nodeinfo 0,1)),
    this is the switch the port is cabled to, C(local_port) its port; discovery runs both queries on each
    InfiniBand port whose link is up and records the leaf switch of each RDMA device (its C(topology)).
  - A failed query (C(iberror:) / C(ibpanic:) lines) gives a C(query_failed) error and C(ibwarn:) lines are
    warnings; no output at all is C(no_output). The parser never fails on odd text.
extends_documentation_fragment:
  - clusterops.commcheck.tool_output
'''

EXAMPLES = r'''
- name: Ask the switch behind mlx5_0 port 1 who it is
  ansible.builtin.command:
    argv: [smpquery, -C, mlx5_0, -P, "1", -D, nodedesc, "0,1"]
  register: leaf
  changed_when: false
  failed_when: false

- name: Show the switch
  ansible.builtin.debug:
    msg: "mlx5_0 port 1 is cabled to {{ (leaf | clusterops.commcheck.parse_smpquery).description }}"
'''

RETURN = r'''
_value:
  description: What the node answered.
  type: dict
  contains:
    ok:
      description: True when a NodeInfo field or the node description was read.
      type: bool
    node:
      description:
        - The NodeInfo fields, empty without a C(nodeinfo) output. C(node_type) (C(Channel Adapter), C(Switch),
          C(Router)), C(num_ports), C(local_port) (the node's port the query came in by), C(base_version),
          C(class_version), C(partition_cap) as numbers; C(system_guid), C(guid), C(port_guid), C(device_id),
          C(revision), C(vendor_id) as printed.
      type: dict
      sample: {node_type: Switch, num_ports: 8, guid: "0x0000000000200001", local_port: 5}
    description:
      description: The node description (null without a C(nodedesc) output).
      type: str
      sample: b1nstcx02 HCA-1
    address:
      description: The queried address as smpquery's header names it (C(Lid 4), C(DR path slid 0; dlid 0; 0,1)).
      type: str
    is_switch:
      description: Whether the node is a switch (null without NodeInfo).
      type: bool
    errors:
      description: Errors as C({code, message, cause, fix}); codes C(no_output), C(query_failed), C(parser_error),
        C(unknown).
      type: list
      elements: dict
    warnings:
      description: The C(ibwarn:) lines, and a note when nothing was recognised.
      type: list
      elements: str
'''

from ansible_collections.clusterops.commcheck.plugins.plugin_utils.filter_input import tool_text_filter_module
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_smpquery import parse_smpquery

FilterModule = tool_text_filter_module("parse_smpquery", parse_smpquery)
