# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
name: commcheck_round_plan
short_description: Expand scheduled rounds into the sides every host runs (rails, test steps, ports)
version_added: 1.0.0
description:
  - For each round of a C(clusterops.commcheck.commcheck_schedule) result (or, with O(merge), for the whole
    schedule at once), lists what every host runs, ready for the O(clusterops.commcheck.perftest#module:sides) option of C(clusterops.commcheck.perftest)
    (or C(clusterops.commcheck.iperf3)).
  - Rail k of the server is tested against rail k of the client, in the same round. Test step i (one item of
    O(tests)) on rail k uses TCP port O(base_port) + i * stride + k, where stride is the largest rail count.
  - A client side connects to the server's address on that rail (the rail's C(address)), or to the server's
    host name when the rail has no address.
options:
  _input:
    description: The rounds (a list of rounds of C([server, client]) pairs).
    type: list
    elements: list
    required: true
  host_rails:
    description:
      - Host name to its rails, as C(clusterops.commcheck.commcheck_rdma_rails) returns them (C(device), C(port),
        C(gid_index), C(rate_gbps), C(address)). A host without an entry has one rail with no device (TCP tests).
    type: dict
  tests:
    description:
      - The test steps, run one after the other in each round, as dicts with the keys C(test) and C(metric) (and
        any other side option) or as C([op, metric]) pairs.
    type: list
    elements: dict
  base_port:
    description: First TCP port.
    type: int
    default: 18515
  port_stride:
    description: Ports between two test steps; the largest rail count when omitted.
    type: int
  rails:
    description: Only these rail numbers.
    type: list
    elements: int
  merge:
    description:
      - Return a single plan with every round, steps numbered through (round r, test i is step
        C(r * len(tests) + i)), for hosts that run the whole schedule in one task and meet each peer when both get
        there. Ports then cycle through O(port_window) steps.
    type: bool
    default: false
  port_window:
    description: With O(merge), how many steps get their own ports before ports repeat (at most 256 by default).
    type: int
'''

EXAMPLES = r'''
- name: Plan every round of a mesh with write and read bandwidth
  ansible.builtin.set_fact:
    plan: >-
      {{ rounds | clusterops.commcheck.commcheck_round_plan(host_rails=rails_by_host,
           tests=[{'test': 'write', 'metric': 'bw'}, {'test': 'read', 'metric': 'bw'}]) }}

- name: Run this host's sides of round 0
  clusterops.commcheck.perftest:
    sides: "{{ plan[0].sides[inventory_hostname] }}"
  when: inventory_hostname in plan[0].sides
'''

RETURN = r'''
_value:
  description:
    - One item per round (a single item with O(merge)) with C(sides) (host name to the list of its sides; each
      side has C(role), C(peer), C(rail), C(step), C(round), C(tcp_port), the test keys, C(device), C(ib_port),
      C(gid_index), C(expected_gbps), and C(server) for a client), C(jobs) (one per pair, rail and step) and
      C(skipped) (pairs with no common rail, with a C(reason); a rail one side lacks is one item per pair and
      rail with C(rail) and C(missing), naming the host without it, the rail and the device its peer has there);
      with O(merge) also C(steps), the number of steps. Rails are numbered by the fleet's rail of each device name
      where the hosts name their NICs alike, so a missing NIC leaves a gap instead of shifting the others.
  type: list
  elements: dict
'''

from ansible.errors import AnsibleFilterError

from ansible_collections.clusterops.commcheck.plugins.module_utils.planning.schedule import ScheduleError, plan_rounds


def commcheck_round_plan(rounds, host_rails=None, tests=None, base_port=18515, port_stride=None, rails=None,
                         merge=False, port_window=None):
    if not isinstance(rounds, (list, tuple)):
        raise AnsibleFilterError("commcheck_round_plan: the input must be a list of rounds, got %r" % (rounds,))
    try:
        base_port = int(base_port)
        if port_stride is not None:
            port_stride = int(port_stride)
    except (TypeError, ValueError):
        raise AnsibleFilterError("commcheck_round_plan: base_port and port_stride must be integers")
    try:
        return plan_rounds(rounds, host_rails, tests, base_port, port_stride, rails, merge=bool(merge),
                           port_window=port_window)
    except ScheduleError as exc:
        raise AnsibleFilterError("commcheck_round_plan: %s" % exc)


class FilterModule(object):
    def filters(self):
        return {"commcheck_round_plan": commcheck_round_plan}
