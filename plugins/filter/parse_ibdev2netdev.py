# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
name: parse_ibdev2netdev
short_description: Parse ibdev2netdev output (plain and -v) into a list of RDMA port to netdev mappings
version_added: 1.0.0
description:
  - Reads the output of MLNX_OFED/DOCA C(ibdev2netdev) (C(mlx5_0 port 1 ==> ens1f0 (Up))) and of C(ibdev2netdev
    -v) (which adds the PCI address, device id, VPD product name, firmware and IB port state).
  - Prompts, command echoes and C(mpirun)/C(srun) line prefixes are ignored.
extends_documentation_fragment:
  - clusterops.commcheck.tool_output
  - clusterops.commcheck.tool_output.pasted_text
  - clusterops.commcheck.tool_output.full
'''

EXAMPLES = r'''
- name: Map RDMA devices to netdevs
  ansible.builtin.command: ibdev2netdev -v
  register: ib2net
  changed_when: false

- name: Names of the RDMA devices whose netdev is down
  ansible.builtin.debug:
    msg: "{{ ib2net.stdout | clusterops.commcheck.parse_ibdev2netdev | selectattr('state', 'equalto', 'Down') | map(attribute='device') | list }}"
'''

RETURN = r'''
_value:
  description:
    - One item per line read, in output order; with O(full=true) a dictionary C({devices, errors, warnings}), C(errors) the ones the tool printed
      (for example C(not_installed), C(no_device)).
    - Items without C(-v) have C(pci), C(hca_type), C(part_id), C(product), C(description), C(fw) and C(port_state) null.
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
    netdev:
      description: Network device of the port (null when the script printed none or C(NA)).
      type: str
      sample: ens1f0
    state:
      description: Link state of the netdev, C(Up) or C(Down) (null for C(NA)).
      type: str
      sample: Up
    pci:
      description: PCI address (C(-v)).
      type: str
      sample: "0000:3b:00.0"
    hca_type:
      description: Device id (C(-v)).
      type: str
      sample: MT4115
    part_id:
      description: The serial/part identifier printed after the device id (C(-v)).
      type: str
      sample: MT1630X01234
    product:
      description: The VPD product string (C(-v)).
      type: str
      sample: CX416A - ConnectX-4 QSFP28
    description:
      description: The product family read from the product string (C(-v)), else the product name.
      type: str
      sample: ConnectX-4
    fw:
      description: Firmware version (C(-v)).
      type: str
      sample: 12.28.2006
    port_state:
      description: IB port state (C(-v)).
      type: str
      sample: ACTIVE
'''

from ansible_collections.clusterops.commcheck.plugins.plugin_utils.filter_input import tool_text_filter_module
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_ibdev2netdev import (
    parse_ibdev2netdev, parse_ibdev2netdev_full)

FilterModule = tool_text_filter_module("parse_ibdev2netdev", parse_ibdev2netdev, parse_ibdev2netdev_full, items="devices")
