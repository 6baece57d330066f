# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
name: parse_ibnetdiscover
short_description: Parse ibnetdiscover output (topology file or -p ports report) into switches and links
version_added: 1.0.0
description:
  - Reads what infiniband-diags' C(ibnetdiscover) prints, its topology file (the default output, one block per
    switch or channel adapter with a line per linked port) or its ports report (C(ibnetdiscover -p), one line per
    port), and returns the switches (GUID, node description, LID) and each link between two ports once, with both
    ends (type, node GUID, port GUID, LID, port, description), its width and its speed.
  - Discovery runs C(ibnetdiscover -p) on an InfiniBand port whose leaf switch neither C(smpquery) nor C(iblinkinfo)
    named, and records the switch the port is cabled to (the C(topology) of the host's RDMA facts).
  - An C(iberror:) / C(ibpanic:) line gives a C(scan_failed) error, C(ibwarn:) lines and lines it does not know are
    warnings; no output at all is C(no_output). The parser never fails on odd text.
extends_documentation_fragment:
  - clusterops.commcheck.tool_output
'''

EXAMPLES = r'''
- name: Scan the fabric of mlx5_0 port 1
  ansible.builtin.command:
    argv: [ibnetdiscover, -p, -C, mlx5_0, -P, "1"]
  register: fabric
  changed_when: false
  failed_when: false

- name: Show the switches
  ansible.builtin.debug:
    msg: "{{ (fabric | clusterops.commcheck.parse_ibnetdiscover).switches | map(attribute='description') | list }}"
'''

RETURN = r'''
_value:
  description: The fabric as the scan saw it.
  type: dict
  contains:
    ok:
      description: True when a node or a port was read.
      type: bool
    format:
      description: C(topology) (the default output) or C(ports) (C(-p)); null when nothing was read.
      type: str
    switches:
      description:
        - The switches, each C(guid) (C(0x) and 16 hex digits where it is hex, else as printed), C(description)
          (the node description as printed, blanks kept), C(lid), and from the topology file C(ports) (how many)
          and C(enhanced) (enhanced port 0).
      type: list
      elements: dict
      sample: [{guid: "0x0002c9020046c588", description: Infiniscale-IV Mellanox Technologies, lid: 2, ports: 36,
                enhanced: false}]
    cas:
      description: The topology file's channel adapters, each C(guid), C(description), C(ports).
      type: list
      elements: dict
    links:
      description:
        - Each link once, C(from) and C(to) (each C(type) C(Switch), C(CA) or C(Router), C(guid) the node GUID
          where printed, C(port_guid), C(lid), C(port), C(description)), C(width) (C(4x)) and C(speed) (C(EDR),
          C(HDR), C(NDR)...).
      type: list
      elements: dict
    unlinked:
      description: The ports report's ports with no peer, each C(end), C(width) and C(speed) (null for C(???)).
      type: list
      elements: dict
    errors:
      description: Errors as C({code, message, cause, fix}); codes C(no_output), C(scan_failed), C(parser_error),
        C(unknown).
      type: list
      elements: dict
    warnings:
      description: The C(ibwarn:) lines and the lines not read, and a note when nothing was recognised.
      type: list
      elements: str
'''

from ansible_collections.clusterops.commcheck.plugins.plugin_utils.filter_input import tool_text_filter_module
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_ibnetdiscover import (
    parse_ibnetdiscover,
)

FilterModule = tool_text_filter_module("parse_ibnetdiscover", parse_ibnetdiscover)
