# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
name: commcheck_schedule
short_description: Schedule host pairs into rounds of disjoint pairs (mesh, ring, pairs, star)
version_added: 1.0.0
description:
  - Turns a list of hosts into rounds; a round is a list of C([server, client]) pairs in which no host appears
    twice, so every pair of a round can run at the same time.
  - V(mesh) tests every unordered pair exactly once (round-robin tournament) in N-1 rounds for an even number
    of hosts, N for an odd number; every host is server about as often as client.
  - V(ring) tests each host with its neighbour (the last with the first) in 2 rounds (even N) or 3 (odd N).
  - V(pairs) packs an explicit list of C([server, client]) pairs into rounds.
  - V(star) tests one host (O(center), the first by default) against every other, one pair per round.
options:
  _input:
    description: Host names (for example C(ansible_play_hosts)); each at most once.
    type: list
    elements: str
    required: true
  pattern:
    description: The schedule.
    type: str
    choices: [mesh, ring, pairs, star]
    default: mesh
  pairs:
    description: The C([server, client]) pairs of O(pattern=pairs).
    type: list
    elements: list
  center:
    description: The host of O(pattern=star) that meets every other.
    type: str
  rails:
    description:
      - Number of rails, or a list of rail numbers. Each pair then becomes one C([server, client, rail]) entry per
        rail in the same round (rail k of the server against rail k of the client).
    type: raw
'''

EXAMPLES = r'''
- name: Rounds of a full mesh over the play's hosts
  ansible.builtin.debug:
    msg: "{{ ansible_play_hosts | clusterops.commcheck.commcheck_schedule(pattern='mesh') }}"

- name: Explicit pairs
  ansible.builtin.set_fact:
    rounds: "{{ ['a', 'b', 'c', 'd'] | clusterops.commcheck.commcheck_schedule(pattern='pairs', pairs=[['a', 'b'], ['c', 'd'], ['a', 'c']]) }}"
    # [[['a', 'b'], ['c', 'd']], [['a', 'c']]]
'''

RETURN = r'''
_value:
  description: The rounds; each a list of C([server, client]) (or C([server, client, rail]) with O(rails)).
  type: list
  elements: list
'''

from ansible.errors import AnsibleFilterError

from ansible_collections.clusterops.commcheck.plugins.module_utils.planning.schedule import (
    ScheduleError,
    commcheck_schedule as schedule,
)


def commcheck_schedule(hosts, pattern="mesh", pairs=None, center=None, rails=None):
    try:
        return schedule(list(hosts) if isinstance(hosts, (list, tuple)) else hosts, pattern=pattern, pairs=pairs,
                        center=center, rails=rails)
    except ScheduleError as exc:
        raise AnsibleFilterError("commcheck_schedule: %s" % exc)


class FilterModule(object):
    def filters(self):
        return {"commcheck_schedule": commcheck_schedule}
