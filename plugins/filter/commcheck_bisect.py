# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
name: commcheck_bisect
short_description: Plan the next collective run of a bisection and name the bad node(s)
version_added: 1.0.0
description:
  - Given a pool of hosts and the runs made so far (each with its hosts and whether it was bad), returns the
    hosts to run next, or, when done, the nodes named bad. The first run is the whole pool.
  - A suspect group is split in halves and the first half is run; a good half clears its hosts and puts the
    fault in the other half without a run of its own, so one bad node among N takes about log2(N) runs.
    Halves set aside while searching are run once together at the end, which finds a second bad node.
  - A collective across nodes needs O(min_size) hosts, so a lone suspect runs with known-good hosts; with
    O(confirm=true) a node is only named after such a run was bad, so one flaky pool result cannot blame a
    healthy node.
  - This is the planner the C(clusterops.commcheck.collective) module uses with O(bisect=true); the filter lets a
    playbook drive the same bisection with runs of its own (for example pods started per run).
options:
  _input:
    description: The pool, host names in rank order.
    type: list
    elements: str
    required: true
  runs:
    description: The runs so far, in order; each a dict with C(hosts) (list) and C(bad) (bool).
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
    description: Stop (conclusion V(max_runs)) after this many runs.
    type: int
'''

EXAMPLES = r'''
- name: What to run after the pool run was bad and the first half good
  ansible.builtin.debug:
    msg: "{{ ['n1', 'n2', 'n3', 'n4'] | clusterops.commcheck.commcheck_bisect(runs=runs) }}"
  vars:
    runs:
      - {hosts: [n1, n2, n3, n4], bad: true}
      - {hosts: [n1, n2], bad: false}
  # next: [n3, n1]  (n3 with a known-good partner)
'''

RETURN = r'''
_value:
  description:
    - C(done) (bool), C(next) (hosts to run now, or null), C(bad_nodes), C(good_nodes), C(inferred) (named without
      a confirming run), C(unresolved) (suspects that could not be separated), C(unexplained) (indexes of bad runs
      that hold no node named bad), C(conclusion) (V(pending), V(healthy), V(isolated), V(inconsistent),
      V(unresolved), V(max_runs)) and C(runs) (how many runs were given).
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
