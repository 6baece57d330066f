# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pair scheduler: properties for N = 2..33, explicit pairs, rails and round plans."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.clusterops.commcheck.plugins.module_utils.planning import schedule as sch
from ansible_collections.clusterops.commcheck.plugins.filter.commcheck_schedule import (
    commcheck_schedule as schedule_filter,
)
from ansible.errors import AnsibleFilterError

SIZES = list(range(2, 34))


def hosts_of(n):
    return ["node%02d" % i for i in range(n)]


def assert_disjoint_rounds(rounds):
    for rnd in rounds:
        used = [h for pair in rnd for h in pair[:2]]
        assert len(used) == len(set(used)), "a host appears twice in round %r" % (rnd,)
        for pair in rnd:
            assert pair[0] != pair[1]


@pytest.mark.parametrize("n", SIZES)
def test_mesh_every_pair_once_and_round_count(n):
    hosts = hosts_of(n)
    rounds = sch.commcheck_schedule(hosts, "mesh")
    assert len(rounds) == (n - 1 if n % 2 == 0 else n)
    assert_disjoint_rounds(rounds)
    pairs = [frozenset(p) for rnd in rounds for p in rnd]
    assert len(pairs) == len(set(pairs)) == n * (n - 1) // 2
    assert set(pairs) == set(frozenset(c) for c in itertools.combinations(hosts, 2))
    # every round is as full as possible: N/2 pairs (even), (N-1)/2 (odd)
    assert all(len(rnd) == n // 2 for rnd in rounds)


@pytest.mark.parametrize("n", SIZES)
def test_mesh_roles_balanced(n):
    rounds = sch.commcheck_schedule(hosts_of(n), "mesh")
    served = dict((h, 0) for h in hosts_of(n))
    clients = dict((h, 0) for h in hosts_of(n))
    for rnd in rounds:
        for server, client in rnd:
            served[server] += 1
            clients[client] += 1
    for host in hosts_of(n):
        assert served[host] + clients[host] == n - 1
        assert abs(served[host] - clients[host]) <= 1


@pytest.mark.parametrize("n", SIZES)
def test_mesh_orientation_follows_the_circle(n):
    # who serves whom is fixed by the host list (history compares a pair's records run to run): with m odd (N
    # for odd N; N-1 and the last host fixed for even N), x serves y when (y - x) mod m is in 1..(m-1)/2, and
    # the fixed host serves in even rounds
    hosts = hosts_of(n)
    m = n - 1 if n % 2 == 0 else n
    for num, rnd in enumerate(sch.commcheck_schedule(hosts, "mesh")):
        for server, client in rnd:
            if n % 2 == 0 and hosts[-1] in (server, client):
                assert (server == hosts[-1]) is (num % 2 == 0)
            else:
                assert 1 <= (hosts.index(client) - hosts.index(server)) % m <= (m - 1) // 2


@pytest.mark.parametrize("n", SIZES)
def test_ring_neighbours_in_at_most_three_rounds(n):
    hosts = hosts_of(n)
    rounds = sch.commcheck_schedule(hosts, "ring")
    assert 1 <= len(rounds) <= 3
    if n > 2:
        assert len(rounds) == (2 if n % 2 == 0 else 3)
    assert_disjoint_rounds(rounds)
    pairs = [tuple(p) for rnd in rounds for p in rnd]
    expected = set(frozenset((hosts[i], hosts[(i + 1) % n])) for i in range(n))
    assert set(frozenset(p) for p in pairs) == expected
    assert len(pairs) == len(expected)
    if n > 2:   # each host serves once and is client once
        assert sorted(p[0] for p in pairs) == sorted(hosts)
        assert sorted(p[1] for p in pairs) == sorted(hosts)


@pytest.mark.parametrize("n", SIZES)
def test_star_center_against_all(n):
    hosts = hosts_of(n)
    center = hosts[n // 2]
    rounds = sch.commcheck_schedule(hosts, "star", center=center)
    assert len(rounds) == n - 1
    assert_disjoint_rounds(rounds)
    assert sorted(rnd[0][1] for rnd in rounds) == sorted(h for h in hosts if h != center)
    assert all(rnd[0][0] == center for rnd in rounds)
    assert sch.commcheck_schedule(hosts, "star")[0][0][0] == hosts[0]


@settings(max_examples=150, deadline=None)
@given(st.integers(min_value=2, max_value=12).flatmap(
    lambda n: st.tuples(st.just(n), st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1))
                                             .filter(lambda t: t[0] != t[1]), max_size=40))))
def test_pairs_packing_properties(case):
    n, idx_pairs = case
    hosts = hosts_of(n)
    pairs = [[hosts[a], hosts[b]] for a, b in idx_pairs]
    rounds = sch.commcheck_schedule(hosts, "pairs", pairs=pairs)
    assert_disjoint_rounds(rounds)
    got = [tuple(p) for rnd in rounds for p in rnd]
    # each distinct directed pair exactly once, orientation kept
    assert sorted(got) == sorted(set(tuple(p) for p in pairs))
    # greedy first fit never needs more than 2*maxdegree - 1 rounds
    degree = {}
    for a, b in set(got):
        degree[a] = degree.get(a, 0) + 1
        degree[b] = degree.get(b, 0) + 1
    if got:
        assert len(rounds) <= 2 * max(degree.values()) - 1


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(alphabet="abcdefgh0123456789-", min_size=1, max_size=6), min_size=2, max_size=20,
                unique=True))
def test_mesh_any_names(hosts):
    rounds = sch.commcheck_schedule(hosts, "mesh")
    assert_disjoint_rounds(rounds)
    assert len(set(frozenset(p) for rnd in rounds for p in rnd)) == len(hosts) * (len(hosts) - 1) // 2


def test_small_and_degenerate_inputs():
    assert sch.commcheck_schedule([], "mesh") == []
    assert sch.commcheck_schedule(["a"], "mesh") == []
    assert sch.commcheck_schedule(["a", "b"], "mesh") == [[["b", "a"]]] or \
        sch.commcheck_schedule(["a", "b"], "mesh") == [[["a", "b"]]]
    assert sch.commcheck_schedule(["a", "b"], "ring") == [[["a", "b"]]]
    assert sch.commcheck_schedule(["a", "b", "c"], "pairs", pairs=[]) == []
    # mesh unless told otherwise; explicit pairs without a host list are taken as they are
    assert sch.commcheck_schedule(hosts_of(5)) == sch.commcheck_schedule(hosts_of(5), "mesh") != \
        sch.commcheck_schedule(hosts_of(5), "ring")
    assert sch.commcheck_schedule([], "pairs", pairs=[["a", "b"], ["b", "c"]]) == [[["a", "b"]], [["b", "c"]]]


@pytest.mark.parametrize("kwargs,message", [
    ({"hosts": ["a", "a"]}, "host 'a' is listed twice"),
    ({"hosts": ["a", ""]}, "host names must be non-empty strings, got ''"),
    ({"hosts": "abc"}, "hosts must be a list of host names, got 'abc'"),
    ({"hosts": {"a": 1}}, r"hosts must be a list of host names, got \{'a': 1\}"),
    ({"pattern": "full"}, "pattern must be one of mesh, ring, pairs, star, got 'full'"),
    ({"pattern": "star", "center": "q"}, "star center 'q' is not one of the hosts"),
    ({"pattern": "pairs"}, r"pattern 'pairs' needs pairs: a list of \[server, client\], got None"),
    ({"pattern": "pairs", "pairs": {"server": "a", "client": "b"}},
     r"pattern 'pairs' needs pairs: a list of \[server, client\], got \{'server': 'a', 'client': 'b'\}"),
    ({"pattern": "pairs", "pairs": [["a", "b", "c"]]},
     r"each pair must be \[server, client\] host names, got \['a', 'b', 'c'\]"),
    ({"pattern": "pairs", "pairs": [["", "b"]]}, r"each pair must be \[server, client\] host names, got \['', 'b'\]"),
    ({"pattern": "pairs", "pairs": [["a", "a"]]}, r"pair \['a', 'a'\] tests a host against itself"),
    ({"pattern": "pairs", "pairs": [["a", "z"]]}, r"pair \['a', 'z'\] names 'z', which is not one of the hosts"),
    ({"rails": 0}, "rails must be at least 1, got 0"),
    ({"rails": True}, "rails must be a count or a list of rail numbers, got True"),
    ({"rails": "2"}, "rails must be a count or a list of rail numbers, got '2'"),
    ({"rails": []}, r"rails must be a count or a list of rail numbers, got \[\]"),
    ({"rails": [-1]}, "rail numbers must be integers >= 0, got -1"),
    ({"rails": [True]}, "rail numbers must be integers >= 0, got True"),
])
def test_bad_input_is_a_clear_error(kwargs, message):
    args = dict({"hosts": ["a", "b"]}, **kwargs)
    with pytest.raises(sch.ScheduleError, match="^%s$" % message):
        sch.commcheck_schedule(**args)


def test_explicit_pairs_from_dicts():
    assert sch.commcheck_schedule(["a", "b", "c"], "pairs", pairs=[{"server": "a", "client": "c"}]) == [[["a", "c"]]]


def test_filter_wraps_errors():
    with pytest.raises(AnsibleFilterError, match="commcheck_schedule: host 'a' is listed twice"):
        schedule_filter(["a", "a"])
    assert schedule_filter(["a", "b", "c", "d"], pattern="ring") == [[["a", "b"], ["c", "d"]], [["b", "c"], ["d", "a"]]]


@pytest.mark.parametrize("n", [2, 3, 8, 9])
def test_rails_in_same_round(n):
    rounds = sch.commcheck_schedule(hosts_of(n), "mesh", rails=2)
    plain = sch.commcheck_schedule(hosts_of(n), "mesh")
    assert len(rounds) == len(plain)
    for rnd, base in zip(rounds, plain):
        assert sorted(rnd) == sorted([s, c, k] for s, c in base for k in (0, 1))
    assert sch.commcheck_schedule(["a", "b"], "mesh", rails=[3])[0][0][2] == 3
    # one rail, counted or named: rail 0
    assert sch.commcheck_schedule(["a", "b"], "mesh", rails=1) == sch.commcheck_schedule(["a", "b"], "mesh", rails=[0])
    assert [pair[2] for rnd in sch.commcheck_schedule(["a", "b"], "mesh", rails=1) for pair in rnd] == [0]


FACTS_TWO_RAILS = {
    "devices": [
        {"name": "mlx5_10", "ports": [{"port": 1, "state": "ACTIVE", "link_layer": "Ethernet", "rate_gbps": 100,
                                       "netdev": "ens10", "gid_index": 3, "ipv4": ["10.1.10.2"],
                                       "gids": [{"index": 3, "gid": "0000:0000:0000:0000:0000:ffff:0a01:0a02",
                                                 "type": "RoCE v2", "ipv4": "10.1.10.2"}]}]},
        {"name": "mlx5_2", "ports": [{"port": 1, "state": "ACTIVE", "link_layer": "Ethernet", "rate_gbps": 200,
                                      "netdev": "ens2", "gid_index": 5,
                                      "gids": [{"index": 3, "gid": "::ffff:10.1.2.9", "type": "RoCE v2"},
                                               {"index": 5, "gid": "::ffff:10.1.2.2", "type": "RoCE v2"}]}]},
        {"name": "mlx5_3", "ports": [{"port": 1, "state": "DOWN", "link_layer": "Ethernet", "rate_gbps": 200}]},
        {"name": "mlx5_4", "ports": [{"port": 1, "state": "ACTIVE", "link_layer": "InfiniBand", "rate_gbps": 400,
                                      "gid_index": None, "gids": [{"index": 0, "gid": "fe80::1", "type": "IB/RoCE v1"}]}]},
    ]
}


def test_select_rails_from_facts():
    rails = sch.select_rails(FACTS_TWO_RAILS, address="192.0.2.7")
    assert [r["device"] for r in rails] == ["mlx5_2", "mlx5_4", "mlx5_10"]   # natural order, DOWN left out
    assert [r["rail"] for r in rails] == [0, 1, 2]
    assert rails[0]["address"] == "10.1.2.2"          # the chosen GID's address, not the first GID's
    assert rails[0]["gid_index"] == 5 and rails[0]["rate_gbps"] == 200
    assert rails[1]["address"] == "192.0.2.7"         # IB: the host's address
    assert rails[1]["gid_index"] is None
    assert rails[2]["address"] == "10.1.10.2"


def test_select_rails_explicit_devices():
    rails = sch.select_rails(FACTS_TWO_RAILS, devices=["mlx5_10", "mlx5_3:1", {"device": "mlx9_0", "port": 2,
                                                                               "address": "10.9.9.9"}])
    assert [(r["device"], r["port"]) for r in rails] == [("mlx5_10", 1), ("mlx5_3", 1), ("mlx9_0", 2)]
    assert rails[2]["address"] == "10.9.9.9" and rails[2]["rate_gbps"] is None
    with pytest.raises(sch.ScheduleError, match="not a valid RDMA device"):
        sch.select_rails({}, devices=["mlx5_0;reboot"])


def test_round_plan_ports_addresses_and_steps():
    host_rails = {
        # GID indexes differ between the hosts and between a host's rails: each side must take its own
        "a": [{"device": "mlx5_0", "port": 1, "gid_index": 3, "rate_gbps": 100, "address": "10.0.0.1"},
              {"device": "mlx5_1", "port": 1, "gid_index": 5, "rate_gbps": 100, "address": "10.0.1.1"}],
        "b": [{"device": "mlx5_0", "port": 2, "gid_index": 7, "rate_gbps": 50, "address": "10.0.0.2"},
              {"device": "mlx5_1", "port": 1, "gid_index": 9, "rate_gbps": 100, "address": "10.0.1.2"}],
        "c": [{"device": "mlx5_0", "port": 1, "gid_index": 3, "rate_gbps": 100, "address": "10.0.0.3"}],
        "d": [],
    }
    tests = [{"test": "write", "metric": "bw"}, {"test": "read", "metric": "lat"}]
    plan = sch.round_plan([["a", "b"], ["c", "d"]], host_rails, tests, base_port=20000)
    assert plan["skipped"] == [{"server": "c", "client": "d", "round": 0, "reason": "no active RDMA port on d"}]
    a_sides, b_sides = plan["sides"]["a"], plan["sides"]["b"]
    assert len(a_sides) == len(b_sides) == 4
    assert all(s["role"] == "server" and s["peer"] == "b" for s in a_sides)
    assert sorted(s["tcp_port"] for s in a_sides) == [20000, 20001, 20002, 20003]
    assert sorted(s["tcp_port"] for s in a_sides) == sorted(s["tcp_port"] for s in b_sides)
    rail1_client = [s for s in b_sides if s["rail"] == 1 and s["step"] == 0][0]
    assert rail1_client["server"] == "10.0.1.1" and rail1_client["device"] == "mlx5_1"
    assert rail1_client["test"] == "write" and rail1_client["metric"] == "bw"
    for host, sides in (("a", a_sides), ("b", b_sides)):
        assert [(s["device"], s["ib_port"], s["gid_index"]) for s in sides if s["step"] == 0] == \
            [(r["device"], r["port"], r["gid_index"]) for r in host_rails[host]]
    rail0 = [s for s in a_sides if s["rail"] == 0 and s["step"] == 0][0]
    assert rail0["expected_gbps"] == 50     # the slower end's link rate
    assert len(plan["jobs"]) == 4


def test_round_plans_number_rounds_and_limit_ports():
    rounds = sch.commcheck_schedule(hosts_of(4), "mesh")
    plans = sch.plan_rounds(rounds, {}, [{}], base_port=5201)
    assert [sorted(set(j["round"] for j in p["jobs"])) for p in plans] == [[0], [1], [2]]
    # hosts without rails get one anonymous rail and their name as address
    side = [s for s in plans[0]["sides"].values() for s in s if s["role"] == "client"][0]
    assert side["server"] in hosts_of(4) and "device" not in side and side["round"] == 0
    with pytest.raises(sch.ScheduleError, match="leaves no room for 3 test step"):
        sch.plan_rounds(rounds, {}, [{}] * 3, base_port=65535)


@pytest.mark.parametrize("n,rails,n_tests", [(4, 2, 2), (9, 1, 1), (16, 2, 3)])
def test_merged_plan_is_the_whole_schedule_in_step_order(n, rails, n_tests):
    hosts = hosts_of(n)
    host_rails = dict((h, [{"device": "d%d" % k, "address": "10.%d.0.%d" % (k, i)} for k in range(rails)])
                      for i, h in enumerate(hosts))
    rounds = sch.commcheck_schedule(hosts, "mesh")
    tests = [["write", "bw"], ["read", "bw"], ["send", "lat"]][:n_tests]
    (plan,) = sch.plan_rounds(rounds, host_rails, tests, base_port=30000, merge=True)
    assert plan["steps"] == len(rounds) * n_tests
    assert len(plan["jobs"]) == n * (n - 1) // 2 * rails * n_tests
    per_round = sch.plan_rounds(rounds, host_rails, tests, base_port=30000)
    assert sum(len(p["jobs"]) for p in per_round) == len(plan["jobs"])
    for host, sides in plan["sides"].items():
        steps = [s["step"] for s in sides]
        assert steps == sorted(steps)
        assert all(s["step"] == s["round"] * n_tests + ["write", "read", "send"].index(s["test"]) for s in sides)
        # a host is in at most one pair per step and rail
        assert len(set((s["step"], s["rail"]) for s in sides)) == len(sides)
        ports = [s["tcp_port"] for s in sides]
        assert len(set(ports)) == len(ports), "a host reuses a port within the window"
    by_job = {}
    for host, sides in plan["sides"].items():
        for side in sides:
            server = host if side["role"] == "server" else side["peer"]
            client = side["peer"] if side["role"] == "server" else host
            by_job.setdefault((server, client, side["step"], side["rail"]), []).append(side)
    assert all(len(v) == 2 and v[0]["tcp_port"] == v[1]["tcp_port"] for v in by_job.values())


def test_merged_plan_ports_cycle_in_a_window():
    rounds = sch.commcheck_schedule(hosts_of(8), "mesh")
    (plan,) = sch.plan_rounds(rounds, {}, [{}], base_port=5201, merge=True, port_window=3)
    ports = sorted(set(j["tcp_port"] for j in plan["jobs"]))
    assert ports == [5201, 5202, 5203]
    (plan,) = sch.plan_rounds(rounds, {}, [{}], base_port=65534, merge=True)
    assert max(j["tcp_port"] for j in plan["jobs"]) == 65535


def test_select_rails_splits_comma_separated_text():
    """An AWX text answer ('mlx5_0,mlx5_1:2') names two rails, as a list would."""
    from_text = sch.select_rails(devices=" mlx5_0, mlx5_1:2 ,", address="10.0.0.1")
    from_list = sch.select_rails(devices=["mlx5_0", "mlx5_1:2"], address="10.0.0.1")
    assert [(r["device"], r["port"], r["rail"]) for r in from_text] == [("mlx5_0", 1, 0), ("mlx5_1", 2, 1)]
    assert from_text == from_list


# --- a port that negotiated less than its like ports --------------------------------------------

def _facts(rates, model="MT4129"):
    return {"devices": [{"name": "mlx5_%d" % num, "hca_type": model,
                         "ports": [{"port": 1, "state": "ACTIVE", "rate_gbps": rate, "link_layer": "Ethernet"}]}
                        for num, rate in enumerate(rates)]}


def test_a_port_below_its_like_ports_is_expected_at_their_rate():
    # h3's rail 0 negotiated half its rate: its pairs measure what it reports, so the lower of the two ports'
    # rates would expect only that and pass them
    host_rails = dict((h, sch.select_rails(_facts([200, 400] if h == "h3" else [400, 400])))
                      for h in ("h1", "h2", "h3", "h4"))
    assert host_rails["h3"][0]["model"] == "MT4129"
    plan = sch.round_plan([["h2", "h3"], ["h1", "h4"]], host_rails=host_rails)
    jobs = dict(((j["server"], j["rail"]), j) for j in plan["jobs"])
    assert jobs[("h2", 0)]["expected_gbps"] == 400
    assert jobs[("h2", 0)]["downgraded_ports"] == [{"host": "h3", "device": "mlx5_0", "rate_gbps": 200,
                                                    "like_gbps": 400}]
    assert "downgraded_ports" not in jobs[("h1", 0)] and "downgraded_ports" not in jobs[("h2", 1)]
    # the sides (what the modules take) carry only their own keys
    assert all("downgraded_ports" not in side for sides in plan["sides"].values() for side in sides)
    assert [s["expected_gbps"] for s in plan["sides"]["h3"]] == [400, 400]


def test_ports_of_another_model_or_rail_are_not_like_ports():
    # a 200G NIC model among 400G ones on the same rail runs at its own rate: not a downgrade
    host_rails = {"h1": sch.select_rails(_facts([400])), "h2": sch.select_rails(_facts([200], model="MT4123")),
                  "h3": sch.select_rails(_facts([400]))}
    plan = sch.round_plan([["h1", "h2"], ["h3", "h1"]], host_rails=host_rails)
    assert [(j["expected_gbps"], "downgraded_ports" in j) for j in plan["jobs"]] == [(200, False), (400, False)]
    assert sch.pair_rate(0, {"rate_gbps": 100}, {}, {}) == (100, [])
    assert sch.pair_rate(0, {}, {}, {}) == (None, [])


def test_a_rail_one_side_lacks_is_a_skipped_pair_that_names_the_host_without_it():
    host_rails = {"h2": sch.select_rails(_facts([400, 400])), "h3": sch.select_rails(_facts([400]))}
    plan = sch.round_plan([["h2", "h3"], ["h3", "h2"]], host_rails=host_rails,
                          tests=[["write", "bw"], ["write", "lat"]])
    assert [j["rail"] for j in plan["jobs"]] == [0, 0, 0, 0]
    # once per pair and rail, not once per test step
    assert [(s["server"], s["client"], s["rail"], s["missing"]) for s in plan["skipped"]] == [
        ("h2", "h3", 1, {"host": "h3", "rail": 1, "device": "mlx5_1", "peer": "h2"}),
        ("h3", "h2", 1, {"host": "h3", "rail": 1, "device": "mlx5_1", "peer": "h2"})]
    assert plan["skipped"][0]["reason"] == "h3 has no active RDMA port for rail 1 (h2 has mlx5_1 there)"
    # rails left out by the caller are not missing
    assert sch.round_plan([["h2", "h3"]], host_rails=host_rails, rails=[0])["skipped"] == []


def test_a_missing_first_nic_leaves_a_gap_instead_of_shifting_the_others():
    # h3 lost mlx5_0: its mlx5_1 stays rail 1 (tested against its peers' mlx5_1), and rail 0 is the one missing
    gone = _facts([400, 400])
    gone["devices"] = gone["devices"][1:]
    host_rails = {"h2": sch.select_rails(_facts([400, 400])), "h3": sch.select_rails(gone),
                  "h4": sch.select_rails(_facts([400, 400]))}
    assert [r["rail"] for r in sch.aligned_rails(host_rails)["h3"]] == [1]
    plan = sch.round_plan([["h2", "h3"], ["h3", "h4"]], host_rails=host_rails)
    assert [(j["server"], j["rail"], j["server_device"], j["client_device"]) for j in plan["jobs"]] == [
        ("h2", 1, "mlx5_1", "mlx5_1"), ("h3", 1, "mlx5_1", "mlx5_1")]
    assert [s["missing"] for s in plan["skipped"]] == [{"host": "h3", "rail": 0, "device": "mlx5_0", "peer": "h2"},
                                                       {"host": "h3", "rail": 0, "device": "mlx5_0", "peer": "h4"}]
    # rail 1's port, as on every other host
    assert set(s["tcp_port"] for sides in plan["sides"].values() for s in sides) == {18516}


def test_hosts_that_name_their_nics_otherwise_keep_their_order():
    other = {"devices": [{"name": "mlx5_%d" % n, "hca_type": "MT4129",
                          "ports": [{"port": 1, "state": "ACTIVE", "rate_gbps": 400}]} for n in (4, 5)]}
    host_rails = {"h1": sch.select_rails(_facts([400, 400])), "h2": sch.select_rails(other),
                  "h3": sch.select_rails(_facts([400, 400]))}
    assert [r["rail"] for r in sch.aligned_rails(host_rails)["h2"]] == [0, 1]
    plan = sch.round_plan([["h1", "h2"]], host_rails=host_rails)
    assert [(j["rail"], j["server_device"], j["client_device"]) for j in plan["jobs"]] == [
        (0, "mlx5_0", "mlx5_4"), (1, "mlx5_1", "mlx5_5")]
    assert plan["skipped"] == []


def test_select_rails_takes_the_port_of_devices_that_name_none():
    """commcheck_ib_port: the port of 'mlx5_0' and of a dict without one; 'mlx5_1:1' keeps its own."""
    rails = sch.select_rails(devices="mlx5_0,mlx5_1:1", address="10.0.0.1", port=2)
    assert [(r["device"], r["port"]) for r in rails] == [("mlx5_0", 2), ("mlx5_1", 1)]
    rails = sch.select_rails(devices=[{"device": "mlx5_0"}, {"device": "mlx5_1", "port": 1}], port=2)
    assert [(r["device"], r["port"]) for r in rails] == [("mlx5_0", 2), ("mlx5_1", 1)]
    assert [r["port"] for r in sch.select_rails(devices=["mlx5_0"])] == [1]
