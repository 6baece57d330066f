# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
name: parse_iblinkinfo
short_description: Parse iblinkinfo output into the ports of the scanned nodes, their links and peers
version_added: 1.0.0
description:
  - Reads what infiniband-diags' C(iblinkinfo) prints (the default output with a C(CA:) / C(Switch:) header per node,
    C(-l) with the node on every line, or a C(grep) of either) and returns each port (its node, width, lane speed,
    state, physical state and the node and port at its other end), each link once, and the switches.
  - A peer's type (C(CA), C(Switch)) is known where its LID is a node's of the output; a C(-S) / C(-D) partial scan
    prints one node, and its peers' types stay null.
  - Discovery runs C(iblinkinfo -C <device> -P <port> -D 0 -l) (the local node and its neighbours only) on an
    InfiniBand port whose leaf switch C(smpquery) did not name, and records the node the port is cabled to (the
    C(topology) of the host's RDMA facts).
  - An C(iberror:) / C(ibpanic:) line gives a C(scan_failed) error, C(ibwarn:) lines and lines it does not know are
    warnings; no output at all is C(no_output). The parser never fails on odd text.
extends_documentation_fragment:
  - clusterops.commcheck.tool_output
'''

EXAMPLES = r'''
- name: Show the link of mlx5_0 port 1 and what it is cabled to
  ansible.builtin.command:
    argv: [iblinkinfo, -C, mlx5_0, -P, "1", -D, "0"]
  register: link
  changed_when: false
  failed_when: false

- name: Show the peer of each port
  ansible.builtin.debug:
    msg: "{{ (link | clusterops.commcheck.parse_iblinkinfo).ports | map(attribute='peer') | list }}"
'''

RETURN = r'''
_value:
  description: The ports and links the scan printed.
  type: dict
  contains:
    ok:
      description: True when a port line was read.
      type: bool
    ports:
      description:
        - Each port line, C(node) (C(type) C(CA) or C(Switch) where the output says it, C(guid) a switch's or a
          C(-l) line's node GUID, C(port_guid) a CA line's GUID, C(lid), C(description)), C(port), C(width) (C(4X)),
          C(speed_gbps) (a lane's, as printed, C(53.125) on 4X HDR), C(state), C(phys_state), C(peer) (C(type),
          C(guid), C(port_guid), C(lid), C(port), C(description); null for a port with no peer) and C(remark)
          (iblinkinfo's C(Could be ...) note).
      type: list
      elements: dict
    links:
      description: Each link once, C(from) and C(to) (ends as C(peer) above), C(width), C(speed_gbps), C(state),
        C(phys_state).
      type: list
      elements: dict
    switches:
      description: The switches, each C(guid) (null where the output does not print it), C(description), C(lid).
      type: list
      elements: dict
      sample: [{guid: "0x0c42a103008982a4", description: Quantum Mellanox Technologies, lid: 3}]
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
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_iblinkinfo import parse_iblinkinfo

FilterModule = tool_text_filter_module("parse_iblinkinfo", parse_iblinkinfo)
