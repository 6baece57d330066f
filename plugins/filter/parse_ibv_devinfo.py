# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
name: parse_ibv_devinfo
short_description: Parse ibv_devinfo output (plain and -v) into a list of RDMA devices and their ports
version_added: 1.0.0
description:
  - Reads the output of C(ibv_devinfo) from rdma-core (tab or space indented); C(-v) extras are kept with
    snake_case names (C(gid_tbl_len), C(active_width), C(active_speed), C(phys_state), ...) and C(GID[n]) lines
    are collected into each port's C(gids). The fields of a capability section (C(tso_caps:), C(rss_caps:),
    C(packet_pacing_caps:), ..., printed one indent deeper) are a dictionary under the section's name.
  - Values like C(PORT_ACTIVE (4)) keep the name (the number goes to C(<key>_num)); MTUs such as C(4096 (5))
    become bytes.
  - C(No IB devices found) and libibverbs warnings give an empty list; with O(full=true) they are returned as
    C(errors) with a likely cause and fix.
extends_documentation_fragment:
  - clusterops.commcheck.tool_output
  - clusterops.commcheck.tool_output.pasted_text
  - clusterops.commcheck.tool_output.full
'''

EXAMPLES = r'''
- name: Read the RDMA devices
  ansible.builtin.command: ibv_devinfo
  register: devinfo
  changed_when: false
  failed_when: false

- name: Active MTU of every port
  ansible.builtin.debug:
    msg: >-
      {{ devinfo.stdout | clusterops.commcheck.parse_ibv_devinfo
         | subelements('ports') | map('last') | map(attribute='active_mtu') | list }}

- name: Why no device was found (stdout and stderr are both read from the result)
  ansible.builtin.debug:
    msg: "{{ (devinfo | clusterops.commcheck.parse_ibv_devinfo(full=true)).errors | map(attribute='cause') | list }}"
'''

RETURN = r'''
_value:
  description:
    - One item per device, in output order; with O(full=true) a dictionary C({devices, errors, warnings}), C(errors) the ones the tool printed
      (for example C(no_device), C(provider_missing), C(no_rdma_support)), C(warnings) entries like the errors
      (C(not_recognised) when nothing was read).
  type: list
  elements: dict
  contains:
    hca_id:
      description: Device name.
      type: str
      sample: mlx5_0
    transport:
      description: Transport name.
      type: str
      sample: InfiniBand
    fw_ver:
      description: Firmware version.
      type: str
    node_guid:
      description: Node GUID as printed.
      type: str
      sample: "0c42:a103:0040:29a0"
    sys_image_guid:
      description: System image GUID as printed.
      type: str
    vendor_id:
      description: Vendor id as printed.
      type: str
      sample: "0x02c9"
    vendor_part_id:
      description: Vendor part id.
      type: int
      sample: 4117
    hw_ver:
      description: Hardware version as printed.
      type: str
    board_id:
      description: Board id (null when not printed).
      type: str
    phys_port_cnt:
      description: Number of ports.
      type: int
    ports:
      description: >-
        Ports with C(port), C(state) (e.g. C(PORT_ACTIVE)), C(max_mtu) and C(active_mtu) (int bytes), C(sm_lid),
        C(port_lid), C(port_lmc) (ints), C(link_layer), C(gids) (list of C({index, gid, type, version, ipv4}))
        and the C(-v) extras. Port lines a paste shows without their C(port:) line (C(ibv_devinfo | head), an
        elided excerpt) go to a port whose C(port) is null, with an C(abridged_port) warning.
      type: list
      elements: dict
'''

from ansible_collections.clusterops.commcheck.plugins.plugin_utils.filter_input import tool_text_filter_module
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_ibv_devinfo import (
    parse_ibv_devinfo, parse_ibv_devinfo_full)

FilterModule = tool_text_filter_module("parse_ibv_devinfo", parse_ibv_devinfo, parse_ibv_devinfo_full, items="devices")
