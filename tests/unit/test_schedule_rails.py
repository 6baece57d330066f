# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The pair scheduler's rails: what select_rails keeps of a port, where a rail's address comes from, and what
round_plan and plan_rounds hand the sides and jobs (test_schedule.py has the schedule's own properties)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import re

import pytest

from ansible_collections.clusterops.commcheck.plugins.module_utils.planning import schedule as sch

# two NIC models, each port with its own rate, netdev, GID index and link layer; mlx5_1's ports listed out of
# order and one without its number (port 1)
FACTS = {"devices": [
    {"name": "mlx5_1", "hca_type": "MT4129", "ports": [
        {"port": 2, "state": "ACTIVE", "link_layer": "Ethernet", "rate_gbps": 400, "netdev": "ens1f1",
         "gid_index": 3, "gids": [{"index": 3, "gid": "::ffff:10.0.1.2", "type": "RoCE v2"}]},
        {"state": "ACTIVE", "link_layer": "Ethernet", "rate_gbps": 200, "netdev": "ens1f0",
         "gid_index": 5, "gids": [{"index": 5, "gid": "::ffff:10.0.0.2", "type": "RoCE v2"}]}]},
    {"name": "mlx5_0", "hca_type": "MT4123", "ports": [
        {"port": 1, "state": "ACTIVE", "link_layer": "InfiniBand", "rate_gbps": 100, "netdev": None,
         "gid_index": None, "gids": [{"index": 0, "gid": "fe80::1", "type": "IB/RoCE v1"}]}]},
    {"name": "mlx5_2", "hca_type": "MT4129", "ports": [
        {"port": 1, "state": "ACTIVE_DEFER", "link_layer": "Ethernet", "rate_gbps": 400}]},
]}

RAIL_IB = {"device": "mlx5_0", "port": 1, "gid_index": None, "rate_gbps": 100, "link_layer": "InfiniBand",
           "netdev": None, "address": "192.0.2.1", "model": "MT4123"}
RAIL_P1 = {"device": "mlx5_1", "port": 1, "gid_index": 5, "rate_gbps": 200, "link_layer": "Ethernet",
           "netdev": "ens1f0", "address": "10.0.0.2", "model": "MT4129"}
RAIL_P2 = {"device": "mlx5_1", "port": 2, "gid_index": 3, "rate_gbps": 400, "link_layer": "Ethernet",
           "netdev": "ens1f1", "address": "10.0.1.2", "model": "MT4129"}


def test_select_rails_keeps_each_ports_facts_in_device_and_port_order():
    # mlx5_2's port is not ACTIVE yet (ACTIVE_DEFER): no rail
    assert sch.select_rails(FACTS, address="192.0.2.1") == [
        dict(RAIL_IB, rail=0), dict(RAIL_P1, rail=1), dict(RAIL_P2, rail=2)]


def test_named_devices_take_their_ports_facts():
    assert sch.select_rails(FACTS, devices=["mlx5_1:2", "mlx5_1", "mlx5_0"], address="192.0.2.1") == [
        dict(RAIL_P2, rail=0), dict(RAIL_P1, rail=1), dict(RAIL_IB, rail=2)]


def test_a_device_given_as_a_dict_overrides_its_ports_facts():
    override = {"name": "mlx5_1", "ib_port": "2", "gid_index": 7, "rate_gbps": 100, "netdev": "eth9",
                "link_layer": "InfiniBand", "address": "10.9.0.2"}
    assert sch.select_rails(FACTS, devices=[override]) == [dict(RAIL_P2, rail=0, **dict(
        (key, override[key]) for key in ("gid_index", "rate_gbps", "netdev", "link_layer", "address")))]


def test_a_devices_own_key_wins_over_its_alias():
    assert [r["device"] for r in sch.select_rails(devices=[{"device": "mlx5_1", "name": "mlx5_0"}])] == ["mlx5_1"]


@pytest.mark.parametrize("spec, message", [
    ("mlx5_0;reboot", "device 'mlx5_0;reboot' is not a valid RDMA device name"),
    ({"device": "mlx5_0", "port": "one"}, "port of device 'mlx5_0' must be an integer, got 'one'"),
])
def test_a_bad_device_is_a_clear_error(spec, message):
    with pytest.raises(sch.ScheduleError, match="^%s$" % message):
        sch.select_rails({}, devices=[spec])


@pytest.mark.parametrize("port, address", [
    # the chosen GID's own IPv4 address, when its entry gives only that
    ({"gid_index": 3, "gids": [{"index": 3, "ipv4": "10.0.8.2"}]}, "10.0.8.2"),
    # entries that name their index gid_index
    ({"gid_index": 4, "gids": [{"gid_index": 3, "gid": "::ffff:10.0.9.3"}, {"gid_index": 4, "gid": "::ffff:10.0.9.4"}]},
     "10.0.9.4"),
    # a chosen IPv6 GID has no IPv4 address: the port's own, the first of a list, without its prefix
    ({"gid_index": 3, "gids": [{"index": 3, "gid": "fd00::2", "type": "RoCE v2"}],
      "ipv4": ["10.0.5.2/24", "10.0.5.3/24"]}, "10.0.5.2"),
    ({"ipv4": [], "address": "10.0.4.2/24"}, "10.0.4.2"),
    # else the first RoCE v2 GID with one (a GID without a type counts as v2; v1 GIDs do not)
    ({"gids": [{"gid": "::ffff:10.9.9.9", "type": "RoCE v1"}, {"gid": "::ffff:10.0.6.2", "type": "RoCE v2"}]},
     "10.0.6.2"),
    ({"gids": [{"gid": "::ffff:10.0.7.2"}]}, "10.0.7.2"),
    ({"gid_index": 1, "gids": ["fe80::1", "::ffff:10.0.3.2"]}, "10.0.3.2"),
    # nothing: the host's address
    ({"gids": [{"gid": "fd00::3", "type": "RoCE v2"}]}, "192.0.2.1"),
])
def test_where_a_rails_address_comes_from(port, address):
    facts = {"devices": [{"name": "mlx5_0", "ports": [dict(port, port=1, state="ACTIVE")]}]}
    assert [r["address"] for r in sch.select_rails(facts, address="192.0.2.1")] == [address]


def test_like_ports_are_of_one_rail_model_and_link_layer_and_run_at_the_fastest_rate():
    def rail(rate, link_layer="Ethernet", model="MT4129"):
        return [{"device": "mlx5_0", "rate_gbps": rate, "model": model, "link_layer": link_layer}]
    host_rails = {"h1": rail(400), "h2": rail(200), "h3": rail(100, "InfiniBand"), "h4": rail(None),
                  "h5": rail(800, model=None)}
    assert sch.like_port_rates(host_rails) == {(0, "MT4129", "Ethernet"): 400, (0, "MT4129", "InfiniBand"): 100}
    like = sch.like_port_rates(host_rails)
    # the IB port is no downgrade of the Ethernet ones; a port without a rate takes its peer's
    assert sch.pair_rate(0, host_rails["h3"][0], host_rails["h1"][0], like) == (100, [])
    assert sch.pair_rate(0, host_rails["h4"][0], host_rails["h2"][0], like) == (400, [
        {"side": 1, "device": "mlx5_0", "rate_gbps": 200, "like_gbps": 400}])


def test_a_downgraded_server_port_names_the_server():
    host_rails = {"h1": [{"device": "mlx5_0", "rate_gbps": 200, "model": "M"}],
                  "h2": [{"device": "mlx5_0", "rate_gbps": 400, "model": "M"}]}
    (job,) = sch.round_plan([["h1", "h2"]], host_rails)["jobs"]
    assert job["downgraded_ports"] == [{"host": "h1", "device": "mlx5_0", "rate_gbps": 200, "like_gbps": 400}]


def test_the_fleets_name_for_a_rail_is_the_one_most_hosts_have_there():
    # three hosts have mlx5_1, mlx5_2; one has mlx5_0, mlx5_1: rail 0 is mlx5_1, so that host's mlx5_1 is rail 0
    # and its mlx5_0 no rail of the fleet's: it keeps its order
    host_rails = dict(("h%d" % n, [{"device": "mlx5_1"}, {"device": "mlx5_2"}]) for n in range(3))
    host_rails["odd"] = [{"device": "mlx5_0"}, {"device": "mlx5_1"}]
    host_rails["short"] = [{"device": "mlx5_2"}]
    aligned = sch.aligned_rails(host_rails)
    assert [r["rail"] for r in aligned["h0"]] == [0, 1] and [r["rail"] for r in aligned["short"]] == [1]
    assert aligned["odd"] == host_rails["odd"]


def test_a_job_names_both_ends_and_the_address_the_client_dials():
    host_rails = {"a": [{"device": "mlx5_0", "address": "10.0.0.1"}], "b": [{"device": "mlx5_3", "address": "10.0.0.2"}]}
    (job,) = sch.round_plan([["a", "b"]], host_rails, round_index=4)["jobs"]
    assert job == {"server": "a", "client": "b", "server_device": "mlx5_0", "client_device": "mlx5_3",
                   "address": "10.0.0.1", "rail": 0, "step": 0, "round": 4, "tcp_port": 18515}


def test_pairs_without_ports_are_skipped_with_their_round_and_the_plan_goes_on():
    host_rails = {"a": [], "b": [], "c": [{"device": "mlx5_0"}], "d": [{"device": "mlx5_0"}, {"device": "mlx5_1"}],
                  "e": [{"device": "mlx5_0"}, {"device": "mlx5_1"}, {"device": "mlx5_2"}]}
    plan = sch.round_plan([["a", "b"], ["c", "e"], ["d", "x"]], host_rails, round_index=2, rails=[0, 2])
    assert [(s["server"], s["client"], s["round"], s.get("rail"), s["reason"]) for s in plan["skipped"]] == [
        ("a", "b", 2, None, "no active RDMA port on a and b"),
        ("c", "e", 2, 2, "c has no active RDMA port for rail 2 (e has mlx5_2 there)")]
    # a host without rails in the map (x) has one anonymous rail 0, as d's rail 0; rail 1 was not asked for
    assert [(j["server"], j["client"], j["rail"]) for j in plan["jobs"]] == [("c", "e", 0), ("d", "x", 0)]


def test_rails_numbered_with_a_gap_keep_every_port_apart():
    # rails 0 and 2 (the caller's numbers): each step's ports must not meet the next step's
    host_rails = {"a": [{"rail": 0}, {"rail": 2}], "b": [{"rail": 0}, {"rail": 2}]}
    plan = sch.round_plan([["a", "b"]], host_rails, tests=[{}, {}])
    ports = [j["tcp_port"] for j in plan["jobs"]]
    assert len(set(ports)) == len(ports) == 4


@pytest.mark.parametrize("merge", [False, True])
def test_plan_rounds_passes_its_stride_and_rails_to_every_round(merge):
    host_rails = dict((h, [{"device": "mlx5_0"}, {"device": "mlx5_1"}]) for h in ("a", "b", "c"))
    plans = sch.plan_rounds([[["a", "b"]], [["b", "c"]]], host_rails, [{}, {}], base_port=20000, port_stride=10,
                            rails=[1], merge=merge)
    jobs = [j for plan in plans for j in plan["jobs"]]
    assert set(j["rail"] for j in jobs) == {1}
    assert sorted(set(j["tcp_port"] for j in jobs)) == ([20001, 20011] if not merge else [20001, 20011, 20021, 20031])


def test_plan_rounds_ports_are_whole_numbers_from_perftests_default():
    assert len(sch.plan_rounds([[["a", "b"]], [["b", "c"]]])) == 2      # one plan per round unless merged
    (plan,) = sch.plan_rounds([[["a", "b"]], [["b", "c"]]], {"a": [{}, {}, {}], "b": [{}, {}, {}], "c": [{}]},
                              [{}], merge=True)
    assert min(j["tcp_port"] for j in plan["jobs"]) == 18515
    (plan,) = sch.plan_rounds([[["a", "b"]]] * 4, {"a": [{}, {}, {}], "b": [{}, {}, {}]}, [{}], base_port=65530,
                              merge=True)
    assert all(isinstance(j["tcp_port"], int) for j in plan["jobs"])


@pytest.mark.parametrize("base_port, n_tests", [(65535, 1), (65533, 3), (1, 1)])
def test_a_base_port_with_just_enough_room_is_taken(base_port, n_tests):
    assert sch.plan_rounds([[["a", "b"]]], {}, [{}] * n_tests, base_port=base_port)


@pytest.mark.parametrize("base_port, n_tests, stride, message", [
    (65535, 2, None, "base_port 65535 leaves no room for 2 test step(s) x 1 rail(s) below 65536"),
    (65533, 2, 4, "base_port 65533 leaves no room for 2 test step(s) x 4 rail(s) below 65536"),
    (0, 1, None, "base_port 0 leaves no room for 1 test step(s) x 1 rail(s) below 65536"),
])
def test_a_base_port_without_room_is_a_clear_error(base_port, n_tests, stride, message):
    with pytest.raises(sch.ScheduleError, match="^%s$" % re.escape(message)):
        sch.plan_rounds([[["a", "b"]]], {}, [{}] * n_tests, base_port=base_port, port_stride=stride)


def test_test_steps_as_pairs_and_bad_steps():
    (side,) = sch.round_plan([["a", "b"]], {}, tests=[["write", "bw"]])["sides"]["a"]
    assert (side["test"], side["metric"]) == ("write", "bw")
    for bad in (["write", "bw", "x"], "wb"):
        with pytest.raises(sch.ScheduleError, match="^%s$" % re.escape(
                "a test step is a dict or an [op, metric] pair, got %r" % (bad,))):
            sch.round_plan([["a", "b"]], {}, tests=[bad])


def test_the_port_stride_is_the_largest_rail_count_even_where_two_rails_share_a_number():
    # two rails given one number: one of them is planned, and the stride stays the host's rail count (2), as
    # round_plan's docstring says, so a plan's ports do not depend on how the caller numbered the rails
    host_rails = {"a": [{"rail": 0}, {"rail": 0}], "b": [{"rail": 0}, {"rail": 0}]}
    plan = sch.round_plan([["a", "b"]], host_rails, tests=[{}, {}], base_port=20000)
    assert sorted(j["tcp_port"] for j in plan["jobs"]) == [20000, 20002]
