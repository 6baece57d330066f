# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
name: commcheck_retest_plan
short_description: Plan retests of the failing pairs, as is, against known-good partners, and control pairs
version_added: 1.0.0
description:
  - For every failing pair record (verdict in O(bad_verdicts), retest records ignored) plans O(repeats) retests
    B(as is) (same server, client, rail and test) and, with O(partners), O(repeats) retests of each side with a
    host that passed on that rail (a B(known-good partner)), keeping the side's role.
  - A known-good host has no bad link on the rail; when there is none, a host whose bad links all involve a
    host that is bad with most of its peers.
  - On a rail with no known-good host the first pass cannot tell bad hosts from the rail's fabric; with
    O(partners) the plan then adds, once per rail and test, the pairs the first pass did not measure that
    separate them (O(repeats) times each), taking for suspects the fewest hosts in every bad link
    (most bad links first, then by name) - B(control) pairs, non-suspects with each other (they fail too only
    when the fabric or the expected rate is at fault), and B(cross) pairs, suspects with each other; each kind
    is a matching (no host in two of its pairs). O(max_jobs) bounds them with the other retests.
  - The retests are packed into rounds in which a host runs at most one test per rail, each round in the shape
    of C(clusterops.commcheck.commcheck_round_plan) (C(sides) per host, C(jobs)), so the same task as the first
    pass runs them (C(clusterops.commcheck.perftest) for C(clusterops.commcheck.rdma_perf),
    C(clusterops.commcheck.iperf3) for C(clusterops.commcheck.tcp_perf) with O(side_tests=false)); every job
    carries C(retest) (the params its records get).
options:
  _input:
    description: The pair records of the check (results contract).
    type: list
    elements: dict
    required: true
  host_rails:
    description: Host to rails (C(clusterops.commcheck.commcheck_rdma_rails)) for the sides' devices and addresses.
    type: dict
  repeats:
    description: Retests per failing pair and purpose (0 plans none).
    type: int
    default: 1
  partners:
    description: Also retest each side with a known-good partner.
    type: bool
    default: true
  base_port:
    description:
      - TCP port of rail 0 (rail k uses base_port + k); with O(merge), step s of a window of steps uses
        base_port + s x rails + k. A port past those of the first pass keeps a retest clear of them.
    type: int
    default: 18515
  bad_verdicts:
    description: Verdicts that make a pair failing.
    type: list
    elements: str
    default: [fail, error]
  exclude_hosts:
    description: Hosts never used (for example unreachable ones).
    type: list
    elements: str
  max_jobs:
    description: At most this many retests (the rest are reported as skipped).
    type: int
    default: 200
  round_offset:
    description: Round number of the first retest round (sides and jobs carry C(round)).
    type: int
    default: 0
  per_host:
    description:
      - A host bad with most of its peers on a rail would serialize every retest through itself (N - 1 steps); only
        this many of its failing pairs are retested as is, the others are C(skipped) with C(sampled_host) and take
        the outcome of the sampled ones (C(clusterops.commcheck.commcheck_retest_classify) with O(skipped)). 0
        retests every pair.
    type: int
    default: 0
  merge:
    description:
      - One plan holding every retest round as a step (C(steps) the count), for the pipelined strategy, like
        C(clusterops.commcheck.commcheck_round_plan) with C(merge).
    type: bool
    default: false
  side_tests:
    description:
      - Whether each side carries its test (C(test), C(metric)), as C(clusterops.commcheck.perftest) takes them.
      - V(false) leaves them out of the sides, for a tool with one test whose sides take no such keys
        (C(clusterops.commcheck.iperf3)); the jobs keep them, so
        C(clusterops.commcheck.commcheck_retest_classify) still tags the retest records.
    type: bool
    default: true
'''

EXAMPLES = r'''
- name: Plan the retests
  ansible.builtin.set_fact:
    retest_plan: "{{ pair_records | clusterops.commcheck.commcheck_retest_plan(host_rails=rails_by_host, repeats=1) }}"

- name: Plan the retests of the TCP check (iperf3 sides take no test keys), on ports past the first pass's
  ansible.builtin.set_fact:
    retest_plan: >-
      {{ tcp_records | clusterops.commcheck.commcheck_retest_plan(host_rails=tcp_rails_by_host, base_port=5301,
                                                                   side_tests=false) }}
'''

RETURN = r'''
_value:
  description:
    - C(retests) (C(id), C(purpose) as_is|partner|control|cross, C(attempt), C(server), C(client), C(rail), C(test),
      C(metric), C(subject), C(partner), C(origin), C(suspects) for control and cross), C(rounds) (round plans,
      jobs with C(retest), whose C(retest_purpose) the records get), C(skipped) (with C(reason)), C(summary)
      (C(failing_pairs), C(planned), C(as_is), C(partner), C(control), C(cross), C(rounds), C(skipped)),
      C(hosts) (the hosts that run a side of a retest, sorted).
  type: dict
'''

from ansible.errors import AnsibleFilterError

from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import retest as rt
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import retest_plan as rp
from ansible_collections.clusterops.commcheck.plugins.module_utils.planning.schedule import ScheduleError


def commcheck_retest_plan(records, host_rails=None, repeats=1, partners=True, base_port=18515, bad_verdicts=None,
                          exclude_hosts=None, max_jobs=200, round_offset=0, merge=False, per_host=0, side_tests=True):
    if not isinstance(records, (list, tuple)):
        raise AnsibleFilterError("commcheck_retest_plan: the input must be a list of pair records")
    try:
        return rp.plan_retests(list(records), host_rails or {}, int(repeats), bool(partners), int(base_port),
                               tuple(bad_verdicts) if bad_verdicts else rt.BAD_VERDICTS, exclude_hosts or (),
                               int(max_jobs), int(round_offset), bool(merge), int(per_host) or None,
                               bool(side_tests))
    except (rt.RetestError, ScheduleError, TypeError, ValueError) as exc:
        raise AnsibleFilterError("commcheck_retest_plan: %s" % exc)


class FilterModule(object):
    def filters(self):
        return {"commcheck_retest_plan": commcheck_retest_plan}
