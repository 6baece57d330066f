# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Topology-aware pair schedules (pure): ``leaf_ring`` and ``spine``, from the leaf switch of each host's rails.

Both group the hosts by their leaves: two hosts are in one group when every rail they test hangs off the same leaf
(``host_leaves``: the topology discovery recorded or the inventory's ``commcheck_topology``, a device name resolved
to its rail). On a rail-optimised fabric a group is the hosts of one leaf per rail; a pair across groups crosses the
spine on the rails whose leaves differ. A round is a matching, as in ``schedule.py``: no host twice.

- ``leaf_ring``: (a) every host of a group of two or more meets a host of its own group (its downlinks alone, no
  spine), in at most 2 rounds (a perfect matching of each group, then its odd host out); (b) every pair of groups
  meets once through the spine (a round-robin of the groups, ``schedule.mesh_rounds``), each group pair in the
  earliest round where both groups have a host free, so a group of several hosts takes part in several at once.
  At most 2 + (number of groups) rounds; with one group, its hosts among themselves only.
- ``spine``: one round of a maximum matching across groups (every host busy where the groups allow it: the hosts
  in leaf order, largest group first, host i against host i + N/2), so every uplink carries load at once; the
  hosts that round leaves out (the largest group's surplus, or the odd host) then meet a host of another group,
  as few rounds as that takes; last, every host of a group of two or more with a host of its own group (as
  ``leaf_ring``'s, at most 2 rounds), without which hosts failing across their leaf could not be told as the
  leaf switch (they fail with each other too) or its uplinks (they pass). Needs two groups at least.

A host without a leaf on a rail it tests has no place in these patterns: :func:`leaf_groups` names it, and the
caller refuses the plan (no fall-back that would measure something else than asked).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import itertools

from ansible_collections.clusterops.commcheck.plugins.module_utils.planning.schedule import (
    PATTERNS as BASE_PATTERNS, ScheduleError, aligned_rails, commcheck_schedule, mesh_rounds)

TOPOLOGY_PATTERNS = ("leaf_ring", "spine")
PATTERNS = BASE_PATTERNS + TOPOLOGY_PATTERNS
OVERSUBSCRIPTION_MAX = 64.0
NO_TOPOLOGY_FIX = ("give each host's leaf per rail in the inventory (commcheck_topology) or let discovery read it "
                   "(lldpd's lldpctl on RoCE, smpquery on InfiniBand: commcheck_discover_tools), or choose another "
                   "pattern")


def host_leaves(topology, host_rails, rail_numbers=None):
    """``{host: {rail: leaf or None}}`` of every rail each host tests.

    ``topology``: host -> {rail number or RDMA device name: {leaf, ...}}; ``host_rails``: host -> its rails
    (``select_rails``; numbered as the fleet numbers them, ``aligned_rails``); ``rail_numbers``: only these."""
    wanted = None if not rail_numbers else set(int(r) for r in rail_numbers)
    out = {}
    for host, rails in aligned_rails(dict(host_rails or {})).items():
        entries = (topology or {}).get(host) or {}
        by_key = dict((str(key), (entry or {}).get("leaf")) for key, entry in entries.items()
                      if isinstance(entry, dict))
        leaves = {}
        for num, rail in enumerate(rails or []):
            number = int(rail.get("rail", num)) if rail.get("rail") is not None else num
            if wanted is not None and number not in wanted:
                continue
            leaf = by_key.get(str(number)) or by_key.get(str(rail.get("device")))
            leaves[number] = str(leaf) if leaf not in (None, "") else None
        out[host] = leaves
    return out


def leaf_groups(hosts, leaves):
    """``(groups, missing)``: the hosts grouped by their leaves on every rail (groups in the order of their first
    host, hosts in the given order) and the hosts without a leaf on a rail they test (with those rails). A host
    with no rail to test (no active port) is a group of its own: its pairs are planned, and skipped naming why,
    as in every pattern."""
    groups, index, missing = [], {}, []
    for host in hosts:
        rails = (leaves or {}).get(host) or {}
        lacking = sorted(rail for rail, leaf in rails.items() if not leaf)
        if lacking:
            missing.append({"host": host, "rails": lacking})
            continue
        signature = tuple(sorted(rails.items()))
        if signature not in index:
            index[signature] = len(groups)
            groups.append([])
        groups[index[signature]].append(host)
    return groups, missing


def missing_text(missing):
    """'h1 (rail 1), h2 (rail 0, 1)' for :func:`leaf_groups`' missing hosts."""
    return ", ".join("%s (rail %s)" % (m["host"], ", ".join(str(r) for r in m["rails"])) for m in missing)


def _check_groups(groups):
    if not isinstance(groups, (list, tuple)):
        raise ScheduleError("leaf groups must be a list of host lists, got %r" % (groups,))
    seen = set()
    for group in groups:
        if not isinstance(group, (list, tuple)) or not group:
            raise ScheduleError("a leaf group must be a non-empty list of hosts, got %r" % (group,))
        for host in group:
            if not isinstance(host, str) or not host or host in seen:
                raise ScheduleError("host %r is not a name or is in two leaf groups" % (host,))
            seen.add(host)
    return [list(group) for group in groups]


def within_rounds(groups):
    """Every host of a group of two or more with a host of its group: a perfect matching of each group, then the
    odd host out of an odd group with the group's first host (at most 2 rounds)."""
    first, second = [], []
    for group in _check_groups(groups):
        for i in range(0, len(group) - 1, 2):
            first.append([group[i], group[i + 1]])
        if len(group) % 2 == 1 and len(group) >= 3:
            second.append([group[-1], group[0]])
    return [rnd for rnd in (first, second) if rnd]


def across_rounds(groups, rounds=None):
    """``rounds`` (default none) with every pair of groups once more: the groups' round-robin (schedule's
    ``mesh_rounds``), its pairs in order, each in the earliest round where both groups have a host free (of those,
    the one tested least so far). A pair of the round-robin's round t lands in round t at the latest, so at most
    as many rounds as the round-robin's are added."""
    groups = _check_groups(groups)
    rounds = [list(rnd) for rnd in rounds or []]
    busy = [set(h for pair in rnd for h in pair[:2]) for rnd in rounds]
    uses = {}
    for rnd in rounds:
        for pair in rnd:
            for host in pair[:2]:
                uses[host] = uses.get(host, 0) + 1
    tournament = mesh_rounds([str(i) for i in range(len(groups))]) if len(groups) >= 2 else []
    for a, b in [(int(a), int(b)) for rnd in tournament for a, b in rnd]:
        for num in itertools.count():
            if num == len(rounds):
                rounds.append([])
                busy.append(set())
            free_a = [h for h in groups[a] if h not in busy[num]]
            free_b = [h for h in groups[b] if h not in busy[num]]
            if free_a and free_b:
                pair = [min(free_a, key=lambda h: uses.get(h, 0)), min(free_b, key=lambda h: uses.get(h, 0))]
                rounds[num].append(pair)
                busy[num].update(pair)
                for host in pair:
                    uses[host] = uses.get(host, 0) + 1
                break
    return rounds


def leaf_ring_rounds(groups):
    """The ``leaf_ring`` schedule (module doc): at most 2 + len(groups) rounds."""
    return across_rounds(groups, within_rounds(groups))


def spine_rounds(groups):
    """The ``spine`` schedule (module doc): the load round first, then the rounds of the hosts it left out, then
    the rounds within each group."""
    groups = _check_groups(groups)
    if len(groups) < 2:
        raise ScheduleError("pattern spine needs hosts behind two leaves at least, got %s" % (
            "one leaf (%s)" % ", ".join(groups[0]) if groups else "no host"))
    ordered = sorted(groups, key=len, reverse=True)
    largest, others = ordered[0], sum(ordered[1:], [])
    if len(largest) <= len(others):
        hosts = sum(ordered, [])
        half = len(hosts) // 2
        load = [_oriented(hosts[i], hosts[i + half], i) for i in range(half)]
        # with an odd count the last host (of the smallest group) sits out; the largest group is never its own
        left, partners = hosts[2 * half:], largest
    else:
        load = [_oriented(largest[i], others[i], i) for i in range(len(others))]
        left = largest[len(others):]
        partners = others
    rounds = [load]
    for start in range(0, len(left), len(partners)):
        rounds.append([_oriented(host, partners[i], start + i)
                       for i, host in enumerate(left[start:start + len(partners)])])
    return rounds + within_rounds(groups)


def _oriented(a, b, num):
    """Server and client alternate, so the load round sends as much each way through the spine."""
    return [a, b] if num % 2 == 0 else [b, a]


def schedule(hosts, pattern="mesh", pairs=None, center=None, leaves=None):
    """``schedule.commcheck_schedule`` for its patterns; ``leaf_ring`` and ``spine`` from ``leaves`` (``{host:
    {rail: leaf}}``, :func:`host_leaves`), refused naming every host without a leaf."""
    if pattern not in TOPOLOGY_PATTERNS:
        return commcheck_schedule(hosts, pattern=pattern, pairs=pairs, center=center)
    groups, missing = leaf_groups(list(hosts or []), leaves)
    if missing:
        raise ScheduleError("pattern %s needs the leaf switch of every rail of every host; none known for %s: %s" % (
            pattern, missing_text(missing), NO_TOPOLOGY_FIX))
    return leaf_ring_rounds(groups) if pattern == "leaf_ring" else spine_rounds(groups)


def mark_leaves(plans, leaves, oversubscription=None, expected_gbps=None):
    """The jobs of a topology pattern's plans with ``leaves`` ([server's, client's] on the job's rail); with
    ``oversubscription`` (the spine pattern), each cross-leaf job and both its sides expect ``expected_gbps`` (the
    given rate, else the job's link rate) / ``oversubscription`` and say so (``oversubscription``); a same-leaf job
    expects what it would alone. Changes ``plans`` in place and returns it."""
    if oversubscription is not None:
        oversubscription = float(oversubscription)
        if not 1 <= oversubscription <= OVERSUBSCRIPTION_MAX:
            raise ScheduleError("oversubscription must be 1 to %g, got %r" % (OVERSUBSCRIPTION_MAX, oversubscription))
    for plan in plans or []:
        scaled = {}
        for job in plan.get("jobs") or []:
            rail = job.get("rail")
            pair = [((leaves or {}).get(host) or {}).get(rail) for host in (job["server"], job["client"])]
            job["leaves"] = pair
            if oversubscription is None:
                continue
            base = expected_gbps if expected_gbps else job.get("expected_gbps")
            cross = None not in pair and pair[0] != pair[1]
            if cross:
                job["oversubscription"] = oversubscription
            if base:
                job["expected_gbps"] = round(float(base) / oversubscription, 4) if cross else base
                scaled[(job["server"], job["client"], rail, job.get("step"))] = job["expected_gbps"]
        for host, sides in (plan.get("sides") or {}).items():
            for side in sides:
                key = (host, side.get("peer")) if side.get("role") == "server" else (side.get("peer"), host)
                value = scaled.get(key + (side.get("rail"), side.get("step")))
                if value is not None:
                    side["expected_gbps"] = value
    return plans
