# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Retest planning (as is, known-good partners), tagging, classification, and the whole flow with localization."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import pytest


from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import retest as rt
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import retest_plan as rp
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import localization as loc
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import pair_analysis as pa
from ansible_collections.clusterops.commcheck.plugins.module_utils.planning.schedule import commcheck_schedule, plan_rounds
from ansible_collections.clusterops.commcheck.plugins.filter.commcheck_retest_classify import \
    commcheck_retest_classify

RATE = 100.0
# keys the perftest module accepts in a side (its sides suboptions) plus what round_plan adds for bookkeeping
PERFTEST_SIDE_KEYS = set(("role", "peer", "server", "device", "ib_port", "gid_index", "tcp_port", "rail", "step",
                          "round", "test", "metric", "expected_gbps", "use_cuda"))


def host_rails(names, rails):
    return dict((h, [{"rail": k, "device": "mlx5_%d" % k, "port": 1, "gid_index": 3, "rate_gbps": RATE,
                      "address": "10.0.%d.%d" % (k, i + 10)} for k in range(rails)]) for i, h in enumerate(names))


def rec(host, peer, rail, verdict, value=None, op="write", metric="bw", **params):
    base = {"op": op, "metric": metric, "rail": rail}
    base.update(params)
    return {"kind": "rdma_bw", "host": host, "peer": peer, "params": base,
            "metrics": {"bw_gbps": value if value is not None else (30.0 if verdict == "fail" else 95.0),
                        "expected_gbps": RATE},
            "verdict": verdict, "cause": "slow" if verdict == "fail" else None, "fix": None, "evidence": []}


def mesh(names, rails, bad):
    out = []
    for rail in range(rails):
        for i, x in enumerate(names):
            for y in names[i + 1:]:
                out.append(rec(x, y, rail, "fail" if bad(x, y, rail) else "pass"))
    return out


def names(n):
    return ["h%d" % (i + 1) for i in range(n)]


def test_failing_pairs_are_distinct_and_skip_retests():
    records = [rec("h1", "h2", 0, "fail"), rec("h1", "h2", 0, "fail"), rec("h1", "h2", 0, "error", op="read"),
               rec("h1", "h3", 0, "pass"), rec("h1", "h2", 0, "fail", retest=True),
               {"kind": "finding", "host": "h1", "peer": None, "verdict": "fail"}]
    assert rp.failing_pairs(records) == [("h1", "h2", 0, "write", "bw"), ("h1", "h2", 0, "read", "bw")]
    assert rp.failing_pairs(records, exclude_hosts=("h2",)) == []


def test_good_hosts_prefer_clean_then_victims():
    records = mesh(names(4), 1, lambda x, y, r: set((x, y)) == set(("h1", "h2")))
    assert rp.good_hosts(records, 0) == ["h3", "h4"]
    # h2 is bad with everyone: its peers are victims, they count as good
    records = mesh(names(4), 1, lambda x, y, r: "h2" in (x, y))
    assert rp.good_hosts(records, 0) == ["h1", "h3", "h4"]
    # everybody bad: nobody is good
    assert rp.good_hosts(mesh(names(4), 1, lambda x, y, r: True), 0) == []


def test_plan_as_is_and_partners_keep_roles_and_rails():
    records = mesh(names(4), 2, lambda x, y, r: r == 1 and set((x, y)) == set(("h1", "h2")))
    plan = rp.plan_retests(records, host_rails(names(4), 2), repeats=1)
    items = [(i["purpose"], i["server"], i["client"], i["rail"], i["subject"]) for i in plan["retests"]]
    assert items == [("as_is", "h1", "h2", 1, None), ("partner", "h1", "h3", 1, "h1"), ("partner", "h4", "h2", 1, "h2")]
    assert plan["summary"] == {"failing_pairs": 1, "planned": 3, "as_is": 1, "partner": 2, "control": 0, "cross": 0,
                               "rounds": 2, "skipped": 0, "dropped": 0, "sampled": 0}
    # rounds: a host at most once per rail
    for rnd in plan["rounds"]:
        used = [(h, j["rail"]) for j in rnd["jobs"] for h in (j["server"], j["client"])]
        assert len(used) == len(set(used))
    jobs = [j for rnd in plan["rounds"] for j in rnd["jobs"]]
    assert all(j["tcp_port"] == 18515 + 1 and j["rail"] == 1 for j in jobs)
    assert jobs[0]["retest"] == {"retest": True, "retest_purpose": "as_is", "attempt": 1, "origin": "h1-h2",
                                 "retest_id": "r1", "retest_pass": 1}
    assert jobs[1]["retest"]["subject"] == "h1" and jobs[1]["retest"]["partner"] == "h3"
    # sides are what the perftest module takes: rail 1's device, the server's rail-1 address
    first = plan["rounds"][0]["sides"]
    server = [s for s in first["h1"] if s["role"] == "server"][0]
    client = [s for s in first["h2"] if s["role"] == "client"][0]
    assert server["device"] == "mlx5_1" and server["rail"] == 1 and server["tcp_port"] == 18516
    assert client["server"] == "10.0.1.10" and client["peer"] == "h1" and client["test"] == "write"
    for host_sides in first.values():
        for side in host_sides:
            assert set(side) <= PERFTEST_SIDE_KEYS, set(side) - PERFTEST_SIDE_KEYS


def test_repeats_and_no_partners():
    records = mesh(names(3), 1, lambda x, y, r: set((x, y)) == set(("h1", "h2")))
    plan = rp.plan_retests(records, host_rails(names(3), 1), repeats=3, partners=False)
    assert [(i["purpose"], i["attempt"]) for i in plan["retests"]] == [("as_is", 1), ("as_is", 2), ("as_is", 3)]
    # the same pair three times: three rounds
    assert len(plan["rounds"]) == 3
    assert rp.plan_retests(records, repeats=0)["retests"] == []


def test_a_bad_host_gets_one_partner_test_for_all_its_failing_pairs():
    records = mesh(names(5), 1, lambda x, y, r: "h3" in (x, y))
    plan = rp.plan_retests(records, host_rails(names(5), 1))
    partners = [i for i in plan["retests"] if i["purpose"] == "partner"]
    by_subject = {}
    for item in partners:
        by_subject.setdefault((item["subject"], "server" if item["server"] == item["subject"] else "client"),
                              []).append(item)
    # h3 is server in some failing pairs and client in others: one partner test per role
    assert sorted(by_subject) == sorted(set(by_subject))
    h3 = [i for i in partners if i["subject"] == "h3"]
    assert 1 <= len(h3) <= 2 and all(i["partner"] != "h3" for i in h3)
    assert sum(len(i["origins"]) for i in h3) == 4
    # partner hosts are spread over the good hosts
    assert len(set(i["partner"] for i in partners)) > 1


def test_merged_plan_runs_rounds_as_steps():
    records = mesh(names(5), 2, lambda x, y, r: "h3" in (x, y))
    split = rp.plan_retests(records, host_rails(names(5), 2), round_offset=10)
    merged = rp.plan_retests(records, host_rails(names(5), 2), round_offset=10, merge=True)
    assert len(merged["rounds"]) == 1 and merged["rounds"][0]["steps"] == len(split["rounds"]) > 1
    plan = merged["rounds"][0]
    assert len(plan["jobs"]) == sum(len(r["jobs"]) for r in split["rounds"])
    for job in plan["jobs"]:
        assert job["round"] == 10 + job["step"]
        assert job["tcp_port"] == 18515 + job["step"] * 2 + job["rail"]
    # per host, a step holds at most one test per rail, and sides match the jobs
    for host, host_sides in plan["sides"].items():
        keys = [(s["step"], s["rail"]) for s in host_sides]
        assert len(keys) == len(set(keys))
    assert [r["jobs"][0]["round"] for r in split["rounds"]] == list(range(10, 10 + len(split["rounds"])))
    assert rp.plan_retests([], merge=True)["rounds"] == []


def test_no_good_partner_is_reported():
    records = mesh(names(3), 1, lambda x, y, r: True)
    plan = rp.plan_retests(records, host_rails(names(3), 1))
    assert plan["summary"]["as_is"] == 3 and plan["summary"]["partner"] == 0
    assert plan["skipped"] and all("no host passed every test on rail 0" in s["reason"] for s in plan["skipped"])


def ring_records(hosts, rail, bad):
    """One record per link of a ring of ``hosts`` on ``rail``, failing where ``bad(a, b)``."""
    return [rec(a, b, rail, "fail" if bad(a, b) else "pass") for a, b in zip(hosts, hosts[1:] + hosts[:1])]


def test_a_rail_with_no_known_good_host_gets_control_and_cross_pairs_one_matching_per_round():
    # a ring of six on rail 1, every link failing: h1, h3, h5 are the fewest hosts in every bad link (the
    # suspects); the pairs the ring never measured among them are the cross pairs, among h2, h4, h6 the control
    hosts = names(6)
    records = ring_records(hosts, 1, lambda a, b: True) + ring_records(hosts, 0, lambda a, b: False)
    plan = rp.plan_retests(records, host_rails(hosts, 2), repeats=1)
    separating = [(i["purpose"], i["server"], i["client"], i["rail"]) for i in plan["retests"]
                  if i["purpose"] in ("control", "cross")]
    assert separating == [("control", "h2", "h4", 1), ("cross", "h1", "h3", 1)]
    assert (plan["summary"]["control"], plan["summary"]["cross"], plan["summary"]["partner"]) == (1, 1, 0)
    jobs = [j for rnd in plan["rounds"] for j in rnd["jobs"] if j["retest"]["retest_purpose"] in ("control", "cross")]
    assert sorted((j["retest"]["retest_purpose"], j["retest"]["suspects"]) for j in jobs) == [
        ("control", ["h1", "h3", "h5"]), ("cross", ["h1", "h3", "h5"])]
    for rnd in plan["rounds"]:
        sides = [(h, j["rail"]) for j in rnd["jobs"] for h in (j["server"], j["client"])]
        assert len(sides) == len(set(sides))
    # a rail with a known-good host gets partner retests instead; the retest budget (max_jobs) bounds them all
    one_bad = ring_records(hosts, 1, lambda a, b: "h2" in (a, b))
    assert rp.plan_retests(one_bad, host_rails(hosts, 2))["summary"]["control"] == 0
    assert len(rp.plan_retests(records, host_rails(hosts, 2), max_jobs=6)["retests"]) == 6


def test_max_jobs_and_bad_input():
    records = mesh(names(6), 1, lambda x, y, r: True)
    plan = rp.plan_retests(records, repeats=2, partners=False, max_jobs=5)
    assert len(plan["retests"]) == 5 and plan["summary"]["dropped"] == 25
    with pytest.raises(rt.RetestError):
        rp.plan_retests(records, repeats=-1)
    with pytest.raises(rt.RetestError):
        rp.plan_retests(records, repeats=True)
    with pytest.raises(rt.RetestError):
        rp.plan_retests("h1-h2")
    with pytest.raises(rt.RetestError, match="repeats must be"):
        rp.plan_retests(records, repeats=99)


def test_classify_flaky_confirmed_not_retested():
    records = [rec("h1", "h2", 0, "fail"), rec("h1", "h3", 0, "fail"), rec("h2", "h3", 0, "error"),
               rec("h3", "h4", 0, "pass")]
    retests = [rec("h1", "h2", 0, "pass", retest=True, retest_purpose="as_is", attempt=1, origin="h1-h2"),
               rec("h1", "h3", 0, "fail", retest=True, retest_purpose="as_is", attempt=1, origin="h1-h3"),
               rec("h1", "h4", 0, "fail", retest=True, retest_purpose="partner", attempt=1, origin="h1-h3",
                   subject="h1", partner="h4", origins=["h1-h3"]),
               rec("h4", "h3", 0, "pass", retest=True, retest_purpose="partner", attempt=1, origin="h1-h3",
                   subject="h3", partner="h4", origins=["h1-h3"])]
    out = rt.classify(records, retests)
    by_id = dict((p["id"], p) for p in out["pairs"])
    assert by_id["h1-h2 rail 0 write bw"]["status"] == "flaky"
    assert by_id["h1-h3 rail 0 write bw"]["status"] == "confirmed"
    assert by_id["h1-h3 rail 0 write bw"]["implicated"] == ["h1"] and by_id["h1-h3 rail 0 write bw"]["cleared"] == ["h3"]
    assert by_id["h2-h3 rail 0 write bw"]["status"] == "not_retested"
    assert out["summary"] == {"retests": 4, "as_is": 2, "partner": 2, "control": 0, "cross": 0, "failing_pairs": 3,
                              "confirmed": ["h1-h3 rail 0 write bw"], "flaky": ["h1-h2 rail 0 write bw"],
                              "not_retested": ["h2-h3 rail 0 write bw"]}
    first = out["records"][0]
    assert first["verdict"] == "flaky" and first["cause"].startswith("flaky: slow, then passed on retest 1 of 1")
    assert "retest as is: pass (95)" in first["evidence"]
    assert out["records"][1]["verdict"] == "fail"
    assert "retest of h1 with known-good h4: fail 30" in out["records"][1]["evidence"]
    assert "also fails with a known-good partner: h1" in out["records"][1]["evidence"]
    assert len(out["records"]) == 8 and records[0]["verdict"] == "fail"
    summary = rt.summary_record(out)
    assert summary["kind"] == "retest_summary" and summary["verdict"] == "fail"
    assert summary["metrics"]["retests"] == 4 and summary["metrics"]["confirmed_pairs"] == 1
    assert summary["cause"] == "4 retest(s) of 3 failing pair(s): 1 confirmed, 1 flaky, 1 not retested"


@pytest.mark.parametrize("again,status", [
    (("pass",), "flaky"),                       # failed once, passed once: a moment
    (("pass", "pass", "fail"), "flaky"),        # failed 2 of 4: as often as it passed
    (("fail", "pass", "fail"), "confirmed"),    # failed 3 of 4: it passed once in between, a flapping port
    (("pass", "fail"), "confirmed"),            # failed again after it passed: 2 of 3
])
def test_classify_repeats_flaky_only_when_it_passed_as_often_as_it_failed(again, status):
    records = [rec("h1", "h2", 0, "fail")]
    retests = [rec("h1", "h2", 0, v, retest=True, retest_purpose="as_is", attempt=i + 1)
               for i, v in enumerate(again)]
    out = rt.classify(records, retests)
    assert out["pairs"][0]["status"] == status and out["pairs"][0]["first_pass"] == again.index("pass") + 1
    assert out["records"][0]["verdict"] == ("flaky" if status == "flaky" else "fail")
    if status == "flaky":
        assert "passed on retest %d of %d" % (again.index("pass") + 1, len(again)) in out["records"][0]["cause"]


# --- the whole flow: pair results -> retest plan -> retest results -> classify -> localize ----------------

def simulate_sides(plans, bw, round_offset=0):
    """Side results the perftest module would return for round plans; bw(server, client, rail) -> Gb/s."""
    sides = []
    for num, plan in enumerate(plans):
        for host, host_sides in plan["sides"].items():
            for side in host_sides:
                out = dict(side, host=host, round=num + round_offset, verdict="pass", cmd=["ib_write_bw"])
                if side["role"] == "client":
                    out["metrics"] = {"bw_gbps": bw(side["peer"], host, side["rail"])}
                sides.append(out)
    return sides


def run_check(n, rails, first_bw, retest_bw, repeats=1):
    hosts = names(n)
    rails_by_host = host_rails(hosts, rails)
    plans = plan_rounds(commcheck_schedule(hosts, "mesh"), rails_by_host, [{"test": "write", "metric": "bw"}])
    jobs = [dict(job, round=num) for num, plan in enumerate(plans) for job in plan["jobs"]]
    analysis = pa.analyze_pairs(simulate_sides(plans, first_bw), jobs, min_fraction=0.9)
    retest_plan = rp.plan_retests(analysis["records"], host_rails=rails_by_host, repeats=repeats)
    rjobs = [dict(job, round=num) for num, rnd in enumerate(retest_plan["rounds"]) for job in rnd["jobs"]]
    retest_records = pa.pair_records(simulate_sides(retest_plan["rounds"], retest_bw), rjobs, min_fraction=0.9)
    classified = commcheck_retest_classify(analysis["records"], retest_records, retest_plan["rounds"])
    result = loc.localize_records(classified["records"])
    return retest_plan, classified, result


def slow_if(pred):
    return lambda s, c, r: 30.0 if pred(s, c, r) else 95.0


def test_flow_slow_rail_is_confirmed_and_named():
    bw = slow_if(lambda s, c, r: r == 1 and "h2" in (s, c))
    plan, classified, result = run_check(4, 2, bw, bw)
    assert plan["summary"]["failing_pairs"] == 3 and plan["summary"]["as_is"] == 3
    assert classified["summary"]["confirmed"] and not classified["summary"]["flaky"]
    retests = [r for r in classified["records"] if r["params"].get("retest")]
    assert len(retests) == plan["summary"]["planned"]
    # retest records have their own kind: heat maps and baselines of rdma_bw see the planned pairs only
    assert set(r["kind"] for r in retests) == set(["rdma_bw_retest"])
    assert len([r for r in classified["records"] if r["kind"] == "rdma_bw"]) == 12
    assert [(c["component"], c["host"], c["rail"]) for c in result["components"]] == [("rail", "h2", 1)]
    assert result["primary"]["confidence"] == "high"


def test_flow_transient_slowdown_is_flaky_not_failed():
    plan, classified, result = run_check(4, 2, slow_if(lambda s, c, r: "h3" in (s, c)), slow_if(lambda s, c, r: False))
    assert len(classified["summary"]["flaky"]) == 6 and not classified["summary"]["confirmed"]
    originals = [r for r in classified["records"] if not r["params"].get("retest")]
    assert not [r for r in originals if r["verdict"] == "fail"]
    assert len([r for r in originals if r["verdict"] == "flaky"]) == 6
    assert [(c["component"], c["host"]) for c in result["components"]] == [("flaky", "h3")]


def test_flow_single_link_is_a_link_cleared_by_partners():
    bw = slow_if(lambda s, c, r: r == 0 and set((s, c)) == set(("h1", "h4")))
    plan, classified, result = run_check(5, 2, bw, bw)
    partner = [i for i in plan["retests"] if i["purpose"] == "partner"]
    assert len(partner) == 2 and all(i["partner"] not in ("h1", "h4") for i in partner)
    assert [(c["component"], c["host"], c["peer"], c["rail"]) for c in result["components"]] == \
        [("link", "h1", "h4", 0)]
    assert result["primary"]["confidence"] == "high"


def test_per_host_sampling_of_a_host_bad_with_everyone():
    hosts = names(8)
    records = mesh(hosts, 1, lambda x, y, r: "h5" in (x, y))
    full = rp.plan_retests(records, host_rails(hosts, 1), partners=False)
    assert full["summary"]["as_is"] == 7 and full["summary"]["rounds"] == 7    # serialized through h5
    plan = rp.plan_retests(records, host_rails(hosts, 1), partners=False, per_host=3)
    assert plan["summary"]["as_is"] == 3 and plan["summary"]["sampled"] == 4 and plan["summary"]["rounds"] == 3
    assert all(s["sampled_host"] == "h5" and "h5 fails with 7 peers on rail 0: 3 of its pairs are retested"
               == s["reason"] for s in plan["skipped"])
    # a plain bad link is never sampled away
    records = mesh(hosts, 1, lambda x, y, r: set((x, y)) == set(("h1", "h2")))
    assert rp.plan_retests(records, per_host=1)["summary"]["as_is"] == 1
    with pytest.raises(rt.RetestError, match="per_host"):
        rp.plan_retests(records, per_host=0)


@pytest.mark.parametrize("retest_value,status", [(30.0, "confirmed"), (95.0, "flaky")])
def test_sampled_out_pairs_take_the_outcome_of_their_bad_host(retest_value, status):
    hosts = names(6)
    records = mesh(hosts, 1, lambda x, y, r: "h2" in (x, y))
    plan = rp.plan_retests(records, host_rails(hosts, 1), partners=False, per_host=2)
    retests = [rec(j["server"], j["client"], 0, "fail" if retest_value < 50 else "pass", retest_value, round=j["round"])
               for rnd in plan["rounds"] for j in rnd["jobs"]]
    out = commcheck_retest_classify(records, retests, plan["rounds"], skipped=plan["skipped"])
    assert [p["status"] for p in out["pairs"]] == [status] * 5
    inferred = [p for p in out["pairs"] if p.get("inferred_from")]
    assert len(inferred) == 3 and all(p["inferred_from"] == "h2" for p in inferred)
    rec_ = [r for r in out["records"] if r["kind"] == "rdma_bw" and (r["host"], r["peer"]) == ("h2", "h6")][0]
    assert "(inferred from the retested pairs of h2)" in rec_["evidence"][-1]
    if status == "flaky":
        assert rec_["verdict"] == "flaky" and rec_["cause"].startswith("flaky (inferred): slow, and every retested")
    # without the plan's skipped list nothing is inferred
    out = commcheck_retest_classify(records, retests, plan["rounds"])
    assert len(out["summary"]["not_retested"]) == 3


# --- the TCP check: one anonymous rail, iperf3 sides, the same planner and classification -----------------

def tcp_rails(hosts):
    return dict((h, [{"rail": 0, "address": "192.0.2.%d" % (i + 10)}]) for i, h in enumerate(hosts))


def iperf3_side_options():
    from ansible_collections.clusterops.commcheck.plugins.modules.iperf3 import argument_spec
    return set(argument_spec()["sides"]["options"])


def iperf3_sides(plans, bw):
    """Side results the iperf3 module would return (each side keeps its round); bw(server, client, rail)."""
    sides = []
    for plan in plans:
        for host, host_sides in plan["sides"].items():
            for side in host_sides:
                out = dict(side, host=host, verdict="pass", cmd=["iperf3", "-J"])
                if side["role"] == "client":
                    out["metrics"] = {"bw_gbps": bw(side["peer"], host, side["rail"])}
                sides.append(out)
    return sides


def run_tcp_check(n, first_bw, retest_bw, merge=False):
    """The tcp_perf role's flow: first pass, retests on ports past the first pass's, classify, localize."""
    hosts = names(n)
    rails = tcp_rails(hosts)
    plans = plan_rounds(commcheck_schedule(hosts, "mesh"), rails, base_port=5201, merge=merge)
    jobs = [job for plan in plans for job in plan["jobs"]]
    analysis = pa.analyze_pairs(iperf3_sides(plans, first_bw), jobs, family="tcp", min_fraction=0.9,
                                expected_gbps=RATE)
    first_ports = set(j["tcp_port"] for j in jobs)
    retest_plan = rp.plan_retests(analysis["records"], host_rails=rails, base_port=max(first_ports) + 1,
                                  round_offset=1000, merge=merge, side_tests=False)
    rjobs = [j for rnd in retest_plan["rounds"] for j in rnd["jobs"]]
    retest_records = pa.pair_records(iperf3_sides(retest_plan["rounds"], retest_bw), rjobs, family="tcp",
                                     min_fraction=0.9, expected_gbps=RATE)
    classified = commcheck_retest_classify(analysis["records"], retest_records, retest_plan["rounds"],
                                           check="tcp_perf", kind="tcp_bw")
    result = loc.localize_records(classified["records"], kind="tcp_bw")
    return first_ports, retest_plan, classified, result


@pytest.mark.parametrize("merge", [False, True])
def test_tcp_retests_run_as_iperf3_sides_clear_of_the_first_pass_ports(merge):
    bw = slow_if(lambda s, c, r: set((s, c)) == set(("h1", "h3")))
    first_ports, plan, classified, _result = run_tcp_check(4, bw, bw, merge=merge)
    assert plan["summary"]["failing_pairs"] == 1 and plan["summary"]["as_is"] == 1 and plan["summary"]["partner"] == 2
    allowed = iperf3_side_options()
    for rnd in plan["rounds"]:
        for host_sides in rnd["sides"].values():
            for side in host_sides:
                assert set(side) <= allowed, set(side) - allowed
                assert side["tcp_port"] not in first_ports and side["round"] >= 1000
        # the jobs keep the test, so the retest records are tagged
        assert all(j["test"] == "tcp" and j["metric"] == "bw" for j in rnd["jobs"])
    retests = [r for r in classified["records"] if r["kind"] == "tcp_bw_retest"]
    assert len(retests) == 3 and all(r["params"]["retest"] for r in retests)
    assert classified["summary_record"]["params"] == {"check": "tcp_perf", "family": "tcp_bw"}


def test_tcp_transient_slowdown_is_flaky_and_a_slow_link_is_confirmed_and_named():
    once = slow_if(lambda s, c, r: set((s, c)) == set(("h2", "h4")))
    _ports, _plan, classified, result = run_tcp_check(4, once, slow_if(lambda s, c, r: False))
    assert classified["summary"]["flaky"] == ["h2-h4 rail 0 tcp bw"] and not classified["summary"]["confirmed"]
    assert [r["verdict"] for r in classified["records"] if r["kind"] == "tcp_bw" and r["host"] == "h2"
            and r["peer"] == "h4"] == ["flaky"]
    assert [(c["component"], c["host"], c["peer"]) for c in result["components"]] == [("flaky", "h2", "h4")]

    _ports, _plan, classified, result = run_tcp_check(4, once, once)
    assert classified["summary"]["confirmed"] == ["h2-h4 rail 0 tcp bw"] and not classified["summary"]["flaky"]
    assert [(c["component"], c["host"], c["peer"]) for c in result["components"]] == [("link", "h2", "h4")]


def test_side_tests_off_only_drops_the_test_keys_from_the_sides():
    records = mesh(names(4), 1, lambda x, y, r: set((x, y)) == set(("h1", "h2")))
    with_tests = rp.plan_retests(records, host_rails(names(4), 1))
    without = rp.plan_retests(records, host_rails(names(4), 1), side_tests=False)
    assert [r["jobs"] for r in with_tests["rounds"]] == [r["jobs"] for r in without["rounds"]]
    for full, bare in zip(with_tests["rounds"], without["rounds"]):
        for host, host_sides in full["sides"].items():
            assert [dict((k, v) for k, v in s.items() if k not in ("test", "metric")) for s in host_sides] == \
                bare["sides"][host]
            assert all(s["test"] == "write" for s in host_sides)


def test_a_partner_is_never_a_host_whose_link_with_the_subject_failed():
    # ring h1-h2-h3-h4-h1 on one rail: h2 is slow (h1-h2, h2-h3 fail) and the link h3-h4 is slow too.
    # h4 passed with h1, but its link with h3 failed: retesting h3 "with a known-good partner" h4
    # would measure the bad link again and blame h3.
    records = [rec("h1", "h2", 0, "fail"), rec("h2", "h3", 0, "fail"), rec("h3", "h4", 0, "fail"),
               rec("h4", "h1", 0, "pass")]
    plan = rp.plan_retests(records, host_rails(names(4), 1))
    partners = [(i["subject"], i["partner"]) for i in plan["retests"] if i["purpose"] == "partner"]
    assert ("h3", "h4") not in partners and ("h4", "h3") not in partners
    assert ("h3", "h1") in partners and ("h4", "h1") in partners


@pytest.mark.parametrize("merge", [False, True])
def test_the_plan_names_only_the_hosts_that_run_a_retest(merge):
    # one bad link in a 12-host ring: its two hosts and their partners run retests, the other hosts
    # of the fleet need not be reached at all
    hosts = names(12)
    records = [rec(x, y, 0, "fail" if set((x, y)) == set(("h3", "h4")) else "pass")
               for x, y in zip(hosts, hosts[1:] + hosts[:1])]
    plan = rp.plan_retests(records, host_rails(hosts, 1), merge=merge)
    in_sides = set(h for rnd in plan["rounds"] for h in rnd["sides"])
    assert plan["hosts"] == sorted(in_sides)
    assert {"h3", "h4"} <= set(plan["hosts"]) and len(plan["hosts"]) <= 4
    assert rp.plan_retests([r for r in records if r["verdict"] == "pass"], host_rails(hosts, 1),
                           merge=merge)["hosts"] == []
