# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
name: commcheck_bisect
short_description: Plan the next round of collective runs of a bisection and name the bad node(s)
version_added: 1.0.0
description:
  - Given a pool of hosts and the runs made so far (each with its hosts and whether it was bad), returns the
    runs of the next round, or, when done, the nodes named bad. The first run (round 1) is the whole pool.
  - The runs of a round are on disjoint hosts, to be run at the same time. Every round runs both halves of
    every suspect group (a group holding a bad node); a good half clears its hosts, a bad half is split in
    the next round. One bad node among N takes at most ceil(log2 N) + 2 rounds, the pool run and the verify
    run (the pool without the named nodes, at the end) included.
  - A collective across nodes needs O(min_size) hosts, so a half smaller than that runs with known-good
    hosts that no other run of the round uses (or waits a round); with O(confirm=true) a node is only named
    after a bad run of it with known-good hosts only, so one flaky pool result cannot blame a healthy node.
  - When no part of the pool failed on its own, the pool is run once more as it was; conclusion V(flaky)
    when that passes, V(inconsistent) when it fails again.
  - This is the planner the C(clusterops.commcheck.collective) module uses with O(bisect=true); the filter lets a
    playbook drive the same bisection with runs of its own (for example pods started per run).
options:
  _input:
    description: The pool, host names in rank order.
    type: list
    elements: str
    required: true
  runs:
    description:
      - The runs so far, round after round (in any order within a round); each a dict with C(hosts) (list) and
        C(bad) (bool). A round may be given in part; the plan then asks for the rest of it.
    type: list
    elements: dict
    default: []
  min_size:
    description: Fewest hosts a run may have.
    type: int
    default: 2
  confirm:
    description: Name a node only after a bad run of it with known-good hosts only.
    type: bool
    default: true
  max_runs:
    description: Most runs in all; a round that would make more is not started (conclusion V(max_runs)).
    type: int
'''

EXAMPLES = r'''
- name: What to run after the pool run was bad, the first half good and the second bad
  ansible.builtin.debug:
    msg: "{{ ['n1', 'n2', 'n3', 'n4'] | clusterops.commcheck.commcheck_bisect(runs=runs) }}"
  vars:
    runs:
      - {hosts: [n1, n2, n3, n4], bad: true}
      - {hosts: [n1, n2], bad: false}
      - {hosts: [n3, n4], bad: true}
  # round: 3, next_round: [[n3, n1], [n4, n2]]  (each with a known-good partner, both at the same time)
'''

RETURN = r'''
_value:
  description:
    - C(done) (bool), C(next_round) (the host lists still to run in this round, at the same time), C(round)
      (its number, or null), C(next) (the first of them, or null), C(bad_nodes), C(good_nodes), C(inferred)
      (named without a confirming run), C(unresolved) (suspects that could not be separated), C(unexplained)
      (indexes of bad runs that hold no node named bad), C(conclusion) (V(pending), V(healthy), V(isolated),
      V(flaky), V(inconsistent), V(unresolved), V(max_runs)), C(retest) (null, V(passed) or V(failed)),
      C(runs) (how many runs were given) and C(rounds) (the complete rounds, lists of runs with C(round)).
  type: dict
'''

from ansible.errors import AnsibleFilterError

from ansible_collections.clusterops.commcheck.plugins.module_utils.planning.bisection import bisect_plan


def commcheck_bisect(pool, runs=None, min_size=2, confirm=True, max_runs=None):
    if not isinstance(pool, (list, tuple)) or not all(isinstance(h, str) and h for h in pool):
        raise AnsibleFilterError("commcheck_bisect: the input must be a list of host names, got %r" % (pool,))
    for run in runs or []:
        if not isinstance(run, dict) or not isinstance(run.get("hosts"), (list, tuple)):
            raise AnsibleFilterError("commcheck_bisect: each run needs hosts (a list) and bad, got %r" % (run,))
    try:
        return bisect_plan(list(pool), list(runs or []), min_size=int(min_size), confirm=bool(confirm),
                           max_runs=max_runs)
    except ValueError as exc:
        raise AnsibleFilterError("commcheck_bisect: %s" % exc)


class FilterModule(object):
    def filters(self):
        return {"commcheck_bisect": commcheck_bisect}
