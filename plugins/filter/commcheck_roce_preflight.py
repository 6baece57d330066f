# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
name: commcheck_roce_preflight
short_description: Check that both ends of every planned RoCE pair agree (GID type, subnet, MTU, traffic class)
version_added: 1.0.0
description:
  - For every distinct pair and rail of the planned jobs, compares both sides' discovery facts for the port
    each side tests; link layer; GID present, RoCE version (v2 on both), address family, subnet (when prefixes
    are known, or both inside O(subnet)); netdev MTU and active RDMA MTU (derived from the netdev MTU when
    C(ibv_devinfo) did not run); traffic class and RDMA CM ToS where readable.
  - A mismatch is a finding with the fix, so a pair does not just measure a mysterious low number.
options:
  _input:
    description: The planned jobs (C(jobs) of C(clusterops.commcheck.commcheck_round_plan), all rounds).
    type: list
    elements: dict
    required: true
  facts:
    description: Host to its C(commcheck_rdma) fact.
    type: dict
    required: true
  host_rails:
    description: Host to rails (C(clusterops.commcheck.commcheck_rdma_rails)), for the port and GID index tested.
    type: dict
  subnet:
    description: The RDMA subnet both GID addresses must be in (CIDR).
    type: str
'''

EXAMPLES = r'''
- name: RoCE consistency of the planned pairs
  ansible.builtin.set_fact:
    preflight: >-
      {{ plan | map(attribute='jobs') | flatten(levels=1)
         | clusterops.commcheck.commcheck_roce_preflight(facts=facts_by_host, host_rails=rails_by_host) }}
'''

RETURN = r'''
_value:
  description:
    - C(findings) (worst first; C(severity), C(code) such as gid_type_mismatch, gid_missing, gid_subnet_mismatch,
      netdev_mtu_mismatch, active_mtu_mismatch, traffic_class_mismatch, link_layer_mismatch, C(host), C(peer),
      C(device), C(peer_device), C(rail), C(message), C(fix), C(values)), C(pairs) (C(server-client:rail) to the
      codes found), C(checked) (pairs compared) and C(records) (C(finding) records).
  type: dict
'''

from ansible.errors import AnsibleFilterError

from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import roce_consistency as rc


def commcheck_roce_preflight(jobs, facts=None, host_rails=None, subnet=None):
    if not isinstance(jobs, (list, tuple)):
        raise AnsibleFilterError("commcheck_roce_preflight: the input must be a list of planned jobs")
    try:
        result = rc.preflight(list(jobs), facts or {}, host_rails or {}, subnet or None)
    except (rc.PreflightError, TypeError, ValueError) as exc:
        raise AnsibleFilterError("commcheck_roce_preflight: %s" % exc)
    result["records"] = rc.finding_records(result["findings"])
    return result


class FilterModule(object):
    def filters(self):
        return {"commcheck_roce_preflight": commcheck_roce_preflight}
