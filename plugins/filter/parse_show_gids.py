# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
name: parse_show_gids
short_description: Parse show_gids (or Huawei hiroce3 gids) output into a list of GID table entries
version_added: 1.0.0
description:
  - Reads the GID table printed by MLNX_OFED/DOCA C(show_gids) (C(DEV PORT INDEX GID IPv4 VER DEV) columns, tabs
    or spaces, empty cells allowed, C(n_gids_found=N) footer) and by Huawei C(hiroce3 gids) (C(ib_dev net_dev port
    idx gid type ip link) columns, C(RoCE v2) types).
  - Columns are mapped from the header; without one the C(show_gids) order is assumed.
extends_documentation_fragment:
  - clusterops.commcheck.tool_output
  - clusterops.commcheck.tool_output.pasted_text
  - clusterops.commcheck.tool_output.full
'''

EXAMPLES = r'''
- name: Read the GID tables
  ansible.builtin.command: show_gids
  register: gids
  changed_when: false

- name: RoCE v2 GID index with an IPv4 address, per device
  ansible.builtin.debug:
    msg: >-
      {{ gids.stdout | clusterops.commcheck.parse_show_gids
         | selectattr('version', 'equalto', 'v2') | selectattr('ipv4')
         | items2dict(key_name='device', value_name='gid_index') }}
'''

RETURN = r'''
_value:
  description:
    - One item per GID row, in output order; with O(full=true) a dictionary C({gids, n_gids_found, errors, warnings}), C(errors) the ones
      the tool printed (for example C(no_device), C(not_installed)).
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
    gid_index:
      description: GID index.
      type: int
      sample: 3
    gid:
      description: The GID (lower case, as printed).
      type: str
      sample: "0000:0000:0000:0000:0000:ffff:0a6c:a424"
    ipv4:
      description: IPv4 address of the GID (from the IPv4 column, or from an IPv4-mapped GID), else null.
      type: str
      sample: 10.108.164.36
    version:
      description: RoCE version, C(v1) or C(v2) (null when not printed).
      type: str
      sample: v2
    netdev:
      description: Network device (null when not printed).
      type: str
      sample: eth01
    type:
      description: The type cell as printed (C(v2), C(RoCE v2)).
      type: str
    link:
      description: Link state (C(hiroce3 gids) only).
      type: str
      sample: up
'''

from ansible_collections.clusterops.commcheck.plugins.plugin_utils.filter_input import tool_text_filter_module
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_show_gids import (
    parse_show_gids, parse_show_gids_full)

FilterModule = tool_text_filter_module("parse_show_gids", parse_show_gids, parse_show_gids_full, items="gids")
