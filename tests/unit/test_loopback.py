# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The loopback pattern (planning/loopback.py): each host's ports against each other, never one port against
itself; through the pair engine on one host and on many; what localization makes of loopback records
(verdicts/localization_loopback.py); the one-click check's one-host RDMA check."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import pytest

from ansible_collections.clusterops.commcheck.plugins.module_utils.planning import check_plan
from ansible_collections.clusterops.commcheck.plugins.module_utils.planning import families
from ansible_collections.clusterops.commcheck.plugins.module_utils.planning import loopback as lb
from ansible_collections.clusterops.commcheck.plugins.module_utils.planning import oneclick_hosts
from ansible_collections.clusterops.commcheck.plugins.module_utils.planning.schedule import (
    ScheduleError, commcheck_schedule, plan_rounds)
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import localization_loopback as ll
from ansible_collections.clusterops.commcheck.plugins.plugin_utils import pair_engine as engine

from fault_lab import Fabric
from test_pair_engine import RDMA, SHARED, by_host, fleet_of, reader

LOOP = reader(SHARED, RDMA, commcheck_rdma_pattern="loopback")
MESH = reader(SHARED, RDMA)


def rails_of(*specs):
    """{rail number: rail} from (device, port) specs."""
    return dict((num, {"rail": num, "device": dev, "port": port, "address": "10.%d.0.1" % num})
                for num, (dev, port) in enumerate(specs))


def flat(rounds):
    return [tuple(pair) for rnd in rounds for pair in rnd]


@pytest.mark.parametrize("count, rounds, pairs", [
    (2, 1, [(0, 1)]),
    (3, 3, [(0, 1), (1, 2), (2, 0)]),
    (4, 2, [(0, 1), (2, 3), (1, 2), (3, 0)]),
    (8, 2, [(0, 1), (2, 3), (4, 5), (6, 7), (1, 2), (3, 4), (5, 6), (7, 0)])])
def test_a_hosts_rails_form_a_ring_each_rail_once_a_round(count, rounds, pairs):
    planned = lb.rail_rounds(rails_of(*[("mlx5_%d" % i, 1) for i in range(count)]))
    assert len(planned) == rounds and flat(planned) == pairs
    for rnd in planned:
        used = [rail for pair in rnd for rail in pair]
        assert len(used) == len(set(used))


def test_the_two_ports_of_a_dual_port_nic_the_ring_misses_meet_in_a_round_of_their_own():
    # mlx5_0's ports are rails 0 and 2: the ring pairs 0-1, 1-2, 2-3, 3-0, never 0-2
    planned = lb.rail_rounds(rails_of(("mlx5_0", 1), ("mlx5_1", 1), ("mlx5_0", 2), ("mlx5_2", 1)))
    assert flat(planned) == [(0, 1), (2, 3), (1, 2), (3, 0), (0, 2)] and len(planned) == 3
    # adjacent in the ring, they are paired once only
    assert flat(lb.rail_rounds(rails_of(("mlx5_0", 1), ("mlx5_0", 2)))) == [(0, 1)]


def test_a_host_with_one_port_is_skipped_naming_why_and_one_host_alone_is_planned():
    fabric = Fabric(n=2, rails=2)
    fabric.missing.add(("h2", 1))
    rounds, skipped = lb.loopback_rounds(fabric.hosts, fabric.host_rails())
    assert rounds == [[["h1", "h1", 0, 1]]]
    assert skipped == [{"server": "h2", "client": "h2", "round": 0, "loopback": True,
                        "reason": "h2 has 1 active RDMA port(s) to test: a loopback needs two (another NIC, or the "
                                  "second port of one)"}]
    assert lb.loopback_rounds(["h1"], Fabric(n=1, rails=3).host_rails())[0] == [
        [["h1", "h1", 0, 1]], [["h1", "h1", 1, 2]], [["h1", "h1", 2, 0]]]
    with pytest.raises(ScheduleError, match="distinct"):
        lb.loopback_rounds(["h1", "h1"], {})


def test_server_and_client_run_on_one_host_on_their_own_device_and_port():
    fabric = Fabric(n=2, rails=4)
    plans = lb.loopback_plans(fabric.hosts, fabric.host_rails(), [["write", "bw"], ["read", "bw"]], 20000)
    assert len(plans) == 2
    for plan in plans:
        for host, sides in plan["sides"].items():
            assert all(side["peer"] == host for side in sides)
            for step in set(side["step"] for side in sides):
                ports = [s["tcp_port"] for s in sides if s["step"] == step and s["role"] == "server"]
                devices = [s["device"] for s in sides if s["step"] == step]
                assert len(ports) == len(set(ports)) and len(devices) == len(set(devices))
        for job in plan["jobs"]:
            assert job["server"] == job["client"] and job["loopback"] is True
            assert job["server_device"] == "mlx5_%d" % job["rails"][0] != job["client_device"]
            assert job["client_device"] == "mlx5_%d" % job["rails"][1]
            host = int(job["server"][1:]) - 1
            # the client reaches the server's NIC, on its own address
            assert job["address"] == "10.0.%d.%d" % (job["rails"][0], host + 10)
    first = plans[0]["sides"]["h1"]
    assert [(s["role"], s["device"], s["tcp_port"], s["step"]) for s in first] == [
        ("server", "mlx5_0", 20000, 0), ("client", "mlx5_1", 20000, 0),
        ("server", "mlx5_0", 20004, 1), ("client", "mlx5_1", 20004, 1),
        ("server", "mlx5_2", 20002, 0), ("client", "mlx5_3", 20002, 0),
        ("server", "mlx5_2", 20006, 1), ("client", "mlx5_3", 20006, 1)]
    merged = lb.loopback_plans(fabric.hosts, fabric.host_rails(), [["write", "bw"]], 20000, merge=True)
    assert len(merged) == 1 and merged[0]["steps"] == 2 and len(merged[0]["jobs"]) == 8


def test_a_loopback_of_one_port_against_itself_is_refused():
    rails = {"h1": [{"rail": 0, "device": "mlx5_0", "port": 1}, {"rail": 1, "device": "mlx5_0", "port": 1}]}
    with pytest.raises(ScheduleError, match="rails 0 and 1 are one port"):
        lb.round_plan([["h1", "h1", 0, 1]], rails)


def run_loopback(fabric, opts=LOOP):
    row = families.family("rdma")
    fleet = fleet_of(fabric)
    run = engine.plan(row, opts, fleet, 40, forks=50)
    first = engine.first_pass(row, opts, run, by_host(fabric.sides(run["rounds"], "first")), {})
    retests = engine.retests(row, opts, first, fleet, run, forks=50)
    judged = engine.judge(row, opts, first, retests, fabric.sides(retests["rounds"], "retest"), [], [], [], {}, {})
    return run, first, retests, judged


def test_one_host_gets_an_rdma_check_its_records_marked_loopback_with_both_rails():
    run, first, _retests, judged = run_loopback(Fabric(n=1, rails=2))
    assert run["pattern"] == "loopback" and run["gpudirect"] is False
    assert [(r["host"], r["peer"], r["params"]["loopback"], r["params"]["rails"], r["verdict"])
            for r in first["records"]] == [("h1", "h1", True, [0, 1], "pass")]
    assert first["records"][0]["params"]["device"] == "mlx5_0" and first["records"][0]["params"]["peer_device"] == "mlx5_1"
    assert judged["verdict"] == "pass" and judged["localized"]["summary"]["loopback"] == {"links": 1, "bad": 0}
    # another pattern on one host plans nothing (the one-click check refuses it, below)
    assert engine.plan(families.family("rdma"), MESH, fleet_of(Fabric(n=1, rails=2)), 40, forks=50)["jobs"] == []


def test_a_failing_loopback_is_never_retested_and_names_the_nic_in_every_failing_pair():
    fabric = Fabric(n=3, rails=3)
    fabric.bw_faults.append(lambda s, r, k, op, ph: 0.3 if (s, r) == ("h2", "h2") and k == 1 else 1.0)
    _run, first, retests, judged = run_loopback(fabric)
    bad = [(r["host"], r["params"]["rails"]) for r in first["records"] if r["verdict"] == "fail"]
    assert bad == [("h2", [1, 2])] and retests["retests"] == []
    # rail 2's NIC: its pair with rail 1 fails; rail 1 (with rail 0) and rail 0 pass
    fabric = Fabric(n=3, rails=3)
    fabric.bw_faults.append(lambda s, r, k, op, ph: 0.3 if "h2" == s == r and 2 in (k, (k + 1) % 3) else 1.0)
    judged = run_loopback(fabric)[3]
    assert judged["verdict"] == "fail"
    assert judged["localized"]["summary"]["most_likely"] == "h2 rail 2 (mlx5_2)"
    assert judged["localized"]["summary"]["loopback"] == {"links": 9, "bad": 2}


def test_two_ports_failing_their_one_loopback_name_the_host_saying_a_nic_is_not_told_apart():
    fabric = Fabric(n=2, rails=2)
    fabric.bw_faults.append(lambda s, r, k, op, ph: 0.3 if s == r == "h1" else 1.0)
    judged = run_loopback(fabric)[3]
    comp = judged["localized"]["primary"]
    assert (comp["component"], comp["host"], comp["confidence"]) == ("host", "h1", "low")
    assert ll.ALONE in comp["evidence"]


def mixed(fault):
    """The records of a mesh and a loopback run of one 4-host 2-rail fabric with ``fault``."""
    fabric = Fabric(n=4, rails=2)
    fabric.bw_faults.append(fault)
    return run_loopback(fabric, MESH)[1]["records"] + run_loopback(fabric, LOOP)[1]["records"]


def test_a_host_whose_nics_pass_with_each_other_but_fail_with_everyone_is_not_the_host():
    records = mixed(lambda s, r, k, op, ph: 0.3 if "h3" in (s, r) and s != r else 1.0)
    mesh_only = [r for r in records if not r["params"].get("loopback")]
    assert ll.localize_records(mesh_only)["summary"]["hosts"] == ["h3"]
    result = ll.localize_records(records)
    assert result["summary"]["hosts"] == [] and result["summary"]["rails"] == ["h3:mlx5_0", "h3:mlx5_1"]
    assert all(c["component"] == "rail" and c["host"] == "h3" for c in result["components"])
    assert "h3's NICs pass with each other" in result["primary"]["cause"]
    assert "h3 loopback rail 0 (mlx5_0) - rail 1 (mlx5_1): pass" in "\n".join(result["primary"]["evidence"])


def test_a_host_whose_nics_fail_with_each_other_too_stays_the_host():
    result = ll.localize_records(mixed(lambda s, r, k, op, ph: 0.3 if "h3" in (s, r) else 1.0))
    assert result["summary"]["hosts"] == ["h3"]
    assert "h3 loopback rail 0 (mlx5_0) - rail 1 (mlx5_1): fail" in "\n".join(result["primary"]["evidence"])


def test_the_one_click_check_runs_rdma_on_one_host_only_for_the_loopback_pattern():
    plan = check_plan.plan_checks(["rdma"], "auto", [], ["write"], ["bw"])
    status = {"tools": {}, "rdma": None, "tcp": None, "collective": {}}
    refused = check_plan.decide(plan, [("n1", status)])
    assert refused["rdma_hosts"] == [] and refused["records"][0]["params"]["reason"] == "no_peer"
    assert not oneclick_hosts.check_runs(plan, refused, "rdma", ["n1"])
    alone = check_plan.decide(plan, [("n1", status)], rdma_alone=True)
    assert alone["rdma_hosts"] == ["n1"] and alone["records"] == []
    assert oneclick_hosts.check_runs(plan, alone, "rdma", ["n1"])


@pytest.mark.parametrize("merge", [False, True], ids=["rounds", "pipelined"])
def test_another_pattern_with_loopback_runs_its_pairs_after_the_patterns_on_ports_above_them(merge):
    fabric = Fabric(n=4, rails=2)
    tests = [["write", "bw"], ["read", "bw"]]
    plans = plan_rounds(commcheck_schedule(fabric.hosts, "ring"), fabric.host_rails(), tests, 20000, merge=merge)
    both = lb.with_loopback(plans, fabric.hosts, fabric.host_rails(), tests)
    jobs = [job for plan in both for job in plan["jobs"]]
    ring = [job for job in jobs if not job.get("loopback")]
    loops = [job for job in jobs if job.get("loopback")]
    assert ring == [job for plan in plans for job in plan["jobs"]]
    assert sorted((j["server"], j["rails"], j["test"]) for j in loops) == sorted(
        (h, [0, 1], t) for h in fabric.hosts for t in ("write", "read"))
    assert min(j["tcp_port"] for j in loops) == max(j["tcp_port"] for j in ring) + 1
    assert min(j["round"] for j in loops) == max(j["round"] for j in ring) + 1
    if merge:
        [plan] = both
        assert plan["steps"] == plans[0]["steps"] + 2
        # each host runs its loopback steps after its ring steps
        for host, sides in plan["sides"].items():
            steps = [s["step"] for s in sides]
            assert steps == sorted(steps) and [s["step"] for s in sides if s["peer"] == host] == [4, 4, 5, 5]
    else:
        assert len(both) == len(plans) + 1 and both[-1]["jobs"] == loops


def run_with(fabric, fault, **options):
    fabric.bw_faults.append(fault)
    return run_loopback(fabric, reader(SHARED, RDMA, **options))


def towards_others(sender, receiver, _rail, _op, _phase):
    """h3 slow with every other host, not with itself."""
    return 0.3 if "h3" in (sender, receiver) and sender != receiver else 1.0


def everywhere(sender, receiver, _rail, _op, _phase):
    return 0.3 if "h3" in (sender, receiver) else 1.0


def test_with_loopback_a_host_whose_nics_pass_with_each_other_is_named_by_its_rails_in_one_run():
    assert run_with(Fabric(n=4, rails=2), towards_others)[3]["localized"]["summary"]["hosts"] == ["h3"]
    judged = run_with(Fabric(n=4, rails=2), towards_others, commcheck_rdma_loopback=True)[3]
    summary = judged["localized"]["summary"]
    assert summary["hosts"] == [] and summary["rails"] == ["h3:mlx5_0", "h3:mlx5_1"]
    assert summary["loopback"] == {"links": 4, "bad": 0} and judged["verdict"] == "fail"
    judged = run_with(Fabric(n=4, rails=2), everywhere, commcheck_rdma_loopback=True)[3]
    assert judged["localized"]["summary"]["hosts"] == ["h3"]
    assert judged["localized"]["summary"]["loopback"] == {"links": 4, "bad": 1}


def test_loopback_pairs_far_faster_than_the_links_between_hosts_are_a_population_of_their_own():
    """A loopback stays in the host (the lab's over lo, unshaped): the links between hosts are not its outliers."""
    def in_host_fast(sender, receiver, _rail, _op, _phase):
        return 6.0 if sender == receiver else 1.0
    _run, first, _retests, judged = run_with(Fabric(n=4, rails=2), in_host_fast, commcheck_rdma_loopback=True)
    assert len(first["records"]) == 16 and judged["verdict"] == "pass", [
        (r["host"], r["peer"], r["verdict"], r["cause"]) for r in judged["publish"] if r.get("verdict") != "pass"]
    assert set(r["verdict"] for r in first["records"]) == set(["pass"])
