# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
name: commcheck_select_gid
short_description: Choose the GID index to test an RDMA port with
version_added: 1.0.0
description:
  - For RoCE, returns the index of the C(RoCE v2) GID whose IPv4 address is the netdev's address; with
    O(subnet), the one whose address is in that network; with O(addresses), preferring those addresses
    (the first wins). Returns null when no GID qualifies.
  - For InfiniBand returns null (no GID index is needed) unless O(ib_gid_index) names a slot in use.
  - The same function M(clusterops.commcheck.rdma_facts) uses for C(gid_index).
options:
  _input:
    description:
      - A port from C(commcheck_rdma.devices[].ports[]) (with C(gids), C(link_layer), C(netdev)), or a list
        of GIDs (each with C(index), C(gid), C(type), C(netdev) and optionally C(ipv4)).
    type: raw
    required: true
  subnet:
    description: IPv4 network (CIDR) the GID's address must be in.
    type: str
  link_layer:
    description: Link layer when the input is a list of GIDs (a port's own C(link_layer) wins).
    type: str
    default: Ethernet
  netdev:
    description: Netdev whose GIDs are preferred when the input is a list of GIDs (a port's own C(netdev) wins).
    type: str
  addresses:
    description: The netdev's IPv4 addresses (C(a.b.c.d) or C(a.b.c.d/len)), primary first.
    type: list
    elements: str
  ib_gid_index:
    description: GID index to return for InfiniBand ports when that slot is in use.
    type: int
'''

EXAMPLES = r'''
- name: GID index of the first port of mlx5_0 on the 10.10.0.0/16 network
  ansible.builtin.set_fact:
    commcheck_gid: >-
      {{ (ansible_facts.commcheck_rdma.devices | selectattr('name', '==', 'mlx5_0') | first).ports[0]
         | clusterops.commcheck.commcheck_select_gid(subnet='10.10.0.0/16') }}

- name: From a list of GIDs (for example parsed show_gids output)
  ansible.builtin.debug:
    msg: "{{ gids | clusterops.commcheck.commcheck_select_gid(netdev='ens1f0np0') }}"
  vars:
    gids:
      - {index: 0, gid: "fe80::e42:a1ff:fe5e:9c82", type: IB/RoCE v1, netdev: ens1f0np0}
      - {index: 3, gid: "::ffff:10.10.1.2", type: RoCE v2, netdev: ens1f0np0}
'''

RETURN = r'''
_value:
  description: The GID index, or null when there is none to use.
  type: int
  sample: 3
'''

from ansible.errors import AnsibleFilterError

from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery.gid import (
    select_gid,
    subnet_error,
)


def commcheck_select_gid(data, subnet=None, link_layer="Ethernet", netdev=None, addresses=None, ib_gid_index=None):
    error = subnet_error(subnet)
    if error:
        raise AnsibleFilterError("commcheck_select_gid: %s" % error)
    if isinstance(data, dict):
        gids = data.get("gids") or []
        link_layer = data.get("link_layer") or link_layer
        netdev = data.get("netdev") or netdev
    elif isinstance(data, (list, tuple)):
        gids = list(data)
    else:
        raise AnsibleFilterError("commcheck_select_gid: expected a port dict or a list of GIDs, got %s"
                                 % type(data).__name__)
    if addresses is not None and not isinstance(addresses, (list, tuple)):
        raise AnsibleFilterError("commcheck_select_gid: addresses must be a list")
    try:
        return select_gid(gids, link_layer, netdev=netdev, addresses=addresses, subnet=subnet or None,
                          ib_gid_index=ib_gid_index)["gid_index"]
    except (ValueError, TypeError, KeyError) as exc:
        raise AnsibleFilterError("commcheck_select_gid: %s" % exc)


class FilterModule(object):
    def filters(self):
        return {"commcheck_select_gid": commcheck_select_gid}
