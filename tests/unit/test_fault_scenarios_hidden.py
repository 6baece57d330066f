# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 36's scenarios through the whole verdict chain at 4, 8 and 16 hosts x 2 rails, ring and mesh: several
bad hosts at once (adjacent ones too), a bad host and a bad link, a bad NIC and a slow plane, a server stopped
before it listens, a slow leaf or its uplinks (``commcheck_topology``), and healthy noisy runs.

``fault_lab.Fabric`` is the measurement oracle: it answers every planned pair and every retest the planner
designs (as is, partner, control, cross) from the injected faults, so the retest design is exercised as well
as the localization. The culprits must be exactly the injected ones; 16 hosts run in the full tier
(``tiered``), repeating classes pinned at 4 and 8.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import pytest

from ansible_collections.clusterops.commcheck.plugins.module_utils.planning.schedule import commcheck_schedule
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import culprits as cp
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts.retest import PURPOSES

from fault_lab import Fabric
from test_fault_scenarios import tiered

GRID = [(4, "ring"), (4, "mesh"), (8, "ring"), (8, "mesh"), (16, "ring"), (16, "mesh")]
SIZES = tiered(GRID)
SLOW = 0.3


def names(fabric):
    found = sorted(cp.describe(c) for c in fabric.run())
    # every retest the planner designed is a record with its purpose
    retests = [r for r in fabric.judged["records"] if (r.get("params") or {}).get("retest")]
    assert all(r["params"]["retest_purpose"] in PURPOSES for r in retests)
    return found


def hosts(*numbers):
    return sorted("host h%d" % num for num in numbers)


def fabric(n, pattern, **kwargs):
    return Fabric(n, 2, pattern=pattern, **kwargs)


def behind_leaf(n, per_leaf, leaf):
    return ["h%d" % (i + 1) for i in range((leaf - 1) * per_leaf, leaf * per_leaf)]


# --- several bad hosts at once ----------------------------------------------------------------------

@pytest.mark.parametrize("n,pattern", SIZES)
@pytest.mark.parametrize("where", ["apart", "adjacent"])
def test_two_bad_hosts_are_each_named(n, pattern, where):
    # apart: in a ring of four, opposite, so every link has one slow end and only the diagonals the planner
    # adds (control, cross) tell the hosts from the fabric
    bad = (2, n // 2 + 2 if n > 4 else 4) if where == "apart" else (2, 3)
    found = fabric(n, pattern)
    for num in bad:
        found.slow(SLOW, "h%d" % num)
    assert names(found) == hosts(*bad)


@pytest.mark.parametrize("n,pattern", tiered([size for size in GRID if size[0] > 4]))
@pytest.mark.parametrize("where", ["apart", "adjacent"])
def test_three_bad_hosts_are_each_named(n, pattern, where):
    bad = (2, n // 2 + 1, n) if where == "apart" else (2, 3, 4)
    found = fabric(n, pattern)
    for num in bad:
        found.slow(SLOW, "h%d" % num)
    assert names(found) == hosts(*bad)


@pytest.mark.parametrize("pattern", ["ring", "mesh"])
def test_three_bad_hosts_of_four_are_not_separable_from_the_fabric_and_say_so(pattern):
    # every pair has a bad end, control and cross pairs too: pass / fail cannot tell this from a slow fabric
    found = fabric(4, pattern).slow(SLOW, "h2").slow(SLOW, "h3").slow(SLOW, "h4").run()
    assert [(c["component"], c["rail"], c["confidence"]) for c in found] == [("fabric", None, "medium")]
    assert found[0]["cause"].endswith("or 3 of its 4 hosts at once: not separable by these tests")


# --- most pairs of a rail bad: a few hosts in most of them, judged against the pairs without them -------------

def late_or_slow(n, pattern, metric, bad):
    """``bad`` hosts 20 us late (latency) or at :data:`SLOW` of their bandwidth, on every rail, with no link
    rate known: no expectation judges them, only their rail's other pairs do."""
    found = Fabric(n, 2, pattern=pattern, metrics=(metric,), known_rate=False)
    for num in bad:
        if metric == "lat":
            found.late(20.0, "h%d" % num)
        else:
            found.slow(SLOW, "h%d" % num)
    return found


# (n, pattern, bad hosts): in a 4-host mesh two bad hosts are in five of each rail's six pairs, so the median and
# the best quarter are bad too; in a 4-host ring two hosts apart are in every pair (no good pair to judge by)
MAJORITY = [(4, "mesh", (2, 4)), (4, "mesh", (2, 3)), (4, "ring", (2, 3)),
            (8, "mesh", (2, 5)), (8, "ring", (2, 5)), (8, "mesh", (2, 3, 4)), (8, "ring", (2, 5, 8)),
            pytest.param(16, "mesh", (2, 9, 16), marks=pytest.mark.full),
            pytest.param(16, "ring", (2, 3, 4), marks=pytest.mark.full)]


@pytest.mark.parametrize("metric", ["lat", "bw"])
@pytest.mark.parametrize("n,pattern,bad", MAJORITY)
def test_hosts_in_most_pairs_of_a_rail_are_each_named(n, pattern, bad, metric):
    assert names(late_or_slow(n, pattern, metric, bad)) == hosts(*bad)


@pytest.mark.parametrize("n,pattern", [(4, "mesh"), (4, "ring"), (8, "mesh")])
def test_a_healthy_noisy_fabric_without_link_rates_names_nothing(n, pattern):
    found = Fabric(n, 2, pattern=pattern, ops=("write", "read"), metrics=("bw", "lat"), noise=0.05,
                   known_rate=False)
    assert names(found) == []
    assert names(Fabric(n, 2, pattern=pattern, known_rate=False).noisy(0.5, 1.0)) == []


# --- two faults of different kinds --------------------------------------------------------------------

@pytest.mark.parametrize("n,pattern", SIZES)
def test_a_bad_host_and_a_bad_link_elsewhere_are_both_named(n, pattern):
    found = fabric(n, pattern).slow(SLOW, "h2").slow(SLOW, "h%d" % (n - 1), rail=0, peer="h%d" % n)
    assert names(found) == ["host h2", "link h%d - h%d (rail 0)" % (n - 1, n)]


@pytest.mark.parametrize("n,pattern", SIZES)
def test_a_bad_nic_on_one_rail_and_a_slow_plane_on_the_other_are_both_named(n, pattern):
    found = fabric(n, pattern).slow(SLOW, "h2", rail=0).slow(0.5, rail=1)
    assert names(found) == ["fabric of rail 1", "nic h2 mlx5_0 (rail 0)"]


# --- a hung server: no collateral blame ------------------------------------------------------------------

def stop_first_server(found, host, stuck):
    """``host``'s first server (rail 0) stops before it listens, in the first pass only (a retest starts a fresh
    process); its client waited for it until the deadline, so came late to its next pair, whose partner gave up
    on it. Returns the client."""
    rounds = commcheck_schedule(found.hosts, found.pattern)
    first = next(num for num, pairs in enumerate(rounds) if any(pair[0] == host for pair in pairs))
    client = next(pair[1] for pair in rounds[first] if pair[0] == host)
    found.stopped_server(host, client, rail=0, phase="first", stuck=stuck)
    later = [pair for pairs in rounds[first + 1:] for pair in pairs if client in pair]
    if later:
        found.late_for(client, later[0][1] if later[0][0] == client else later[0][0], rail=0)
    return client


@pytest.mark.parametrize("n,pattern", SIZES)
@pytest.mark.parametrize("host", ["h1", "h3"])
def test_a_server_stopped_before_it_listens_is_its_host_and_its_partners_are_not_blamed(n, pattern, host):
    # the runner finds the process stopped at its deadline (SIGSTOP): the host, though its retest passes
    found = fabric(n, pattern)
    stop_first_server(found, host, stuck=True)
    assert names(found) == ["host %s" % host]


@pytest.mark.parametrize("n,pattern", SIZES)
def test_a_server_stopped_for_a_slow_host_is_named_beside_that_host(n, pattern):
    # the slow client explains the pair's failure as a slow link, not a process its partner's host stopped
    found = fabric(n, pattern)
    client = stop_first_server(found, "h1", stuck=True)
    found.slow(SLOW, client)
    assert names(found) == sorted(["host h1", "host %s" % client])


@pytest.mark.parametrize("n,pattern", [(4, "ring"), (8, "mesh")])
def test_a_server_that_never_answered_once_is_its_host_flaky_not_a_flaky_link(n, pattern):
    # silent once (not found stopped), its retest passes: a moment of the host's process, not of the path
    found = fabric(n, pattern)
    client = stop_first_server(found, "h3", stuck=False)
    culprits = found.run()
    assert [cp.describe(c) for c in culprits] == ["host h3 (flaky)"]
    assert client not in str(culprits[0]["cause"])


# --- leaf switches and uplinks, the topology known ----------------------------------------------------------

# (n, pattern, hosts per leaf): two hosts per leaf, and a few leaves of more hosts (a ring pairs the middle
# hosts of such a leaf only with each other)
LEAVES = tiered([(n, pattern, per_leaf) for n, pattern in GRID for per_leaf in sorted(set([2, max(2, n // 4), n // 2]))])


@pytest.mark.parametrize("n,pattern,per_leaf", LEAVES)
def test_a_slow_leaf_is_that_leaf_switch(n, pattern, per_leaf):
    found = fabric(n, pattern).racked(per_leaf).slow_through(0.4, behind_leaf(n, per_leaf, 2), rail=1)
    assert names(found) == ["leaf switch leaf1-2 (rail 1)"]


@pytest.mark.parametrize("n,pattern,per_leaf", LEAVES)
def test_slow_uplinks_of_a_leaf_are_those_uplinks(n, pattern, per_leaf):
    behind = behind_leaf(n, per_leaf, 2)
    found = fabric(n, pattern).racked(per_leaf)
    found.slow_between(0.4, behind, [h for h in found.hosts if h not in behind], rail=1)
    expected = "uplinks of leaf switch leaf1-2 (rail 1)" if n // per_leaf > 2 else \
        "uplinks between leaf switches leaf1-1 and leaf1-2 (rail 1)"
    assert names(found) == [expected]


# --- no false alarm ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("n,pattern", SIZES)
def test_a_healthy_noisy_fabric_names_nothing(n, pattern):
    assert names(fabric(n, pattern, ops=("write", "read"), metrics=("bw", "lat"), noise=0.05)) == []
    assert names(fabric(n, pattern, ops=("write", "read"), noise=0.05).racked(2)) == []
