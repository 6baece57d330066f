# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
name: commcheck_counter_deltas
short_description: Port error counter deltas during a run, attributed to the port
version_added: 1.0.0
description:
  - Compares the port counters of a host's C(commcheck_rdma) fact taken before the traffic tests (the input)
    with the fact taken after them (O(after)) and attributes every counter that rose to its port.
  - Severity by counter; C(link_downed) is an error, bit errors, receive errors, discards and transport retries
    are warnings, RoCE congestion counters (C(np_cnp_sent), C(rp_cnp_handled), C(np_ecn_marked_roce_packets)) are
    information. A counter that went down was reset; its delta is unknown.
options:
  _input:
    description: The C(commcheck_rdma) fact read before the tests.
    type: dict
    required: true
  after:
    description: The C(commcheck_rdma) fact read after the tests.
    type: dict
    required: true
  host:
    description: The host the counters belong to (named in the records).
    type: str
    required: true
  check:
    description: The check name of the records.
    type: str
    default: rdma_perf
'''

EXAMPLES = r'''
- name: Counter deltas of this host during the RDMA tests
  ansible.builtin.set_fact:
    counter_deltas: >-
      {{ counters_before | clusterops.commcheck.commcheck_counter_deltas(after=ansible_facts.commcheck_rdma,
                                                                          host=inventory_hostname) }}
'''

RETURN = r'''
_value:
  description:
    - C(deltas) (worst first; C(host), C(device), C(port), C(netdev), C(counter), C(before), C(after), C(delta),
      C(severity) error|warning|info, C(meaning), C(fix)), C(records) (one C(port_counters) record per port, absolute
      values and C(<counter>_delta) as metrics, verdict fail|warn|pass) and C(evidence) (lines for the records of
      this host's pairs).
  type: dict
'''

from ansible.errors import AnsibleFilterError

from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import counters as ct


def commcheck_counter_deltas(before, after=None, host=None, check="rdma_perf"):
    try:
        snap_before = ct.snapshot(before)
        snap_after = ct.snapshot(after)
        deltas = ct.deltas(snap_before, snap_after, host)
        records = ct.counter_records(host, snap_before, snap_after, check)
    except ct.CounterError as exc:
        raise AnsibleFilterError("commcheck_counter_deltas: %s" % exc)
    return {"deltas": deltas, "records": records, "evidence": ct.port_evidence(deltas, host)}


class FilterModule(object):
    def filters(self):
        return {"commcheck_counter_deltas": commcheck_counter_deltas}
