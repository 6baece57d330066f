#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
module: fleet_facts
short_description: Gather facts of every host of a check, also across controllers that each run a slice of the fleet
version_added: 1.0.0
description:
  - Reads the variables named in O(facts) of every host in O(hosts) and returns them as RV(facts), one
    mapping per fact from host to value (C(null) where a host lacks the variable).
  - A fleet too large for one controller is split into slices (AWX job slicing, or several
    C(ansible-playbook) processes over disjoint parts of the inventory), all with the same run id
    (O(run_id)). With O(slices) above 1, each slice writes its hosts' facts as one file under
    O(directory)C(/<run_id>/<step>/), waits until all O(slices) slices have written theirs, and returns the
    facts of every host of every slice. Every slice then plans and judges the whole fleet alike, runs only
    its own hosts and publishes only its share of the records.
author:
  - commcheck developers (@clusterops)
options:
  step:
    description:
      - Name of this meeting point (lowercase letters, digits, C(_) and C(-)); each one is used once per run.
    type: str
    required: true
  hosts:
    description:
      - This controller's hosts of the check (every host, when the run is not split).
      - Exactly one of O(hosts) and O(hosts_from) is required.
    type: list
    elements: str
  hosts_from:
    description:
      - The variable of the task's host that lists O(hosts), as C(name) or C(name.key), read on the controller;
        typically a key of a result registered by a run-once task before, such as an earlier meeting's RV(own)
        (C(commcheck_pair_perf_fleet.own)), or a magic variable of the play (C(ansible_play_hosts_all)). A name
        the host lacks, or one that is not a list, fails the task.
    type: str
  unreachable_from:
    description:
      - The variable of the task's host that lists O(unreachable), as for O(hosts_from). Not with O(unreachable).
    type: str
  facts:
    description:
      - What to gather, as C(result_name) to variable name; a dotted name such as C(ansible_facts.commcheck_rdma)
        reads a key inside a variable.
      - A list of names reads the first that the host has (not C(null)), e.g. the C(sides) of a registered
        module result, else a variable the play built over several tasks.
    type: dict
    default: {}
  values:
    description:
      - Facts the play has already derived for all hosts in one run-once task, as C(result_name) to a mapping from
        host to value; returned and shared with the other slices like those of O(facts). One pass over all hosts
        costs the controller less than a C(set_fact) task per host.
      - A host missing from a mapping, or mapped to C(null), gets the O(missing) value of that name; for a name
        also in O(facts), its variable instead (a given value wins over the variable).
      - In place of a mapping, the variable of the task's host that holds it, as for O(hosts_from)
        (C(commcheck_pair_perf_counted.counters) for the name C(counters)).
    type: dict
    default: {}
  missing:
    description:
      - Per result name of O(facts) or O(values), the value of a host that lacks it (default C(null)).
    type: dict
    default: {}
  host_field:
    description:
      - Per result name whose values are lists of mappings, a key to set in each of those mappings to the name of
        the host it came from (C(host) for C(sides), for example), so that the lists of all hosts can be put
        together.
    type: dict
    default: {}
  unreachable:
    description:
      - Hosts of this slice that cannot be reached; the other slices learn them too.
    type: list
    elements: str
    default: []
  slices:
    description:
      - How many controllers share the run (the job template's job slice count under AWX), 1 to 4096. C(1) reads
        this controller's hosts only and writes nothing.
      - Default the C(commcheck_slices) variable, else C(1).
    type: int
  directory:
    description:
      - A directory every slice's controller can read and write (a shared file system when the slices run on
        several machines). Absolute; C(..), NUL and line breaks are refused.
      - Default the C(commcheck_slice_dir) variable, else C(slices) beside the history the C(commcheck_history)
        callback writes (which the slices of a run share anyway).
    type: str
  run_id:
    description:
      - The run id all slices share; it names the meeting's directory. Needed when O(slices) is above 1.
      - Default the C(commcheck_run_id) variable.
    type: str
  wait:
    description:
      - Seconds to wait for the other slices at this step before failing with the number that arrived, 1 to 604800
        (a week).
      - Default the C(commcheck_slice_wait) variable, else C(900).
    type: int
extends_documentation_fragment:
  - clusterops.commcheck.controller
attributes:
  check_mode:
    support: partial
    details: A run split into slices fails in check mode (the other slices would wait for posts it does not make).
    description: With one slice it gathers in check mode too; a split run cannot run in check mode.
notes:
  - A run id used twice fails at the first meeting (the slice's file is already there); slices that do not
    all arrive within O(wait) fail with how many did.
seealso:
  - module: clusterops.commcheck.record
'''

EXAMPLES = r'''
- name: Share the rails of this slice's hosts and learn the other slices'
  clusterops.commcheck.fleet_facts:
    step: rdma-rails
    hosts: "{{ ansible_play_hosts }}"
    facts:
      rails: commcheck_pair_perf_rails
      rdma: ansible_facts.commcheck_rdma
    slices: 2
    directory: /shared/commcheck/slices
    run_id: "{{ commcheck_run_id }}"
  run_once: true
  register: fleet

- name: The same with the role variables (commcheck_slices, commcheck_slice_dir, commcheck_run_id, commcheck_slice_wait)
  clusterops.commcheck.fleet_facts:
    step: rdma-sides
    # the hosts this slice took to the meeting above
    hosts_from: fleet.own
    facts:
      # the module result of each host's tests, else what its rounds gathered
      sides: [commcheck_pair_perf_job.sides, commcheck_pair_perf_sides]
    host_field:
      sides: host
  run_once: true
  register: fleet_sides
'''

RETURN = r'''
hosts:
  description: Every host of every slice, in natural order (this controller's O(hosts) when the run is not split).
  returned: success
  type: list
  elements: str
  sample: [node-1, node-2, node-3, node-4]
facts:
  description: Per fact name, the value of each host.
  returned: success
  type: dict
  sample: {rails: {node-1: [{rail: 0, device: mlx5_0}], node-2: [{rail: 0, device: mlx5_0}]}}
unreachable:
  description: The unreachable hosts every slice reported.
  returned: success
  type: list
  elements: str
  sample: [node-7]
own:
  description: This controller's hosts.
  returned: success
  type: list
  elements: str
  sample: [node-1, node-2]
leader:
  description: Whether this slice publishes the records that belong to no host (always true with one slice).
  returned: success
  type: bool
  sample: true
slices:
  description: How many slices met.
  returned: success
  type: int
  sample: 2
'''

from ansible_collections.clusterops.commcheck.plugins.module_utils.options.module_args import controller_only
from ansible_collections.clusterops.commcheck.plugins.module_utils.records.slice_meeting import FLEET_FACTS_SPEC


def main():
    controller_only("fleet_facts", FLEET_FACTS_SPEC)


if __name__ == "__main__":
    main()
