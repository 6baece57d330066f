# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pair verdicts, fleet outliers, bad node / NIC / link naming, matrices."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import random

import pytest

from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import pair_analysis as pa
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import pair_findings as pf
from ansible_collections.clusterops.commcheck.plugins.module_utils.planning.schedule import commcheck_schedule, plan_rounds


def simulate(n, rails=1, rate=100.0, bw=None, tests=None, drop=(), side_error=None, seed=1):
    """Side results of a full mesh; bw(server, client, rail) gives the measured Gb/s."""
    rnd = random.Random(seed)
    hosts = ["h%d" % i for i in range(n)]
    host_rails = dict((h, [{"device": "mlx5_%d" % k, "port": 1, "rate_gbps": rate, "address": "10.%d.0.%d" % (k, i)}
                           for k in range(rails)]) for i, h in enumerate(hosts))
    tests = tests or [{"test": "write", "metric": "bw"}]
    plans = plan_rounds(commcheck_schedule(hosts, "mesh"), host_rails, tests)
    sides, jobs = [], []
    for num, plan in enumerate(plans):
        for job in plan["jobs"]:
            jobs.append(dict(job, round=num))
        for host, host_sides in plan["sides"].items():
            if host in drop:
                continue
            for side in host_sides:
                out = dict(side, host=host, round=num, cmd=["ib_%s_%s" % (side.get("test"), side.get("metric"))])
                server, client = (host, side["peer"]) if side["role"] == "server" else (side["peer"], host)
                value = (bw or (lambda s, c, k: rate * 0.95))(server, client, side["rail"]) * rnd.uniform(0.99, 1.01)
                out["verdict"] = "pass"
                if side["role"] == "client":
                    out["metrics"] = {"lat_us": 2.0 * value / rate} if side.get("metric") == "lat" else \
                        {"bw_gbps": round(value, 2), "bytes": 65536}
                else:
                    out["metrics"] = {}
                if side_error:
                    err = side_error(out)
                    if err:
                        out.update(verdict="error", cause=err["cause"], fix="fix it", errors=[err])
                sides.append(out)
    return hosts, sides, jobs


def findings_of(result, name):
    return [f for f in result["findings"] if f["params"]["finding"] == name]


def test_all_good_mesh_passes_and_names_nobody():
    hosts, sides, jobs = simulate(8)
    res = pa.analyze_pairs(sides, jobs)
    assert len(res["records"]) == 28
    assert all(r["verdict"] == "pass" for r in res["records"])
    assert res["findings"] == []
    assert res["summary"]["verdict"] == "pass"
    rec = res["records"][0]
    assert rec["kind"] == "rdma_bw" and rec["params"]["op"] == "write" and rec["metrics"]["expected_gbps"] == 100.0
    assert 0.9 < rec["metrics"]["fraction"] < 1.0
    assert set(rec) >= {"kind", "host", "peer", "params", "metrics", "verdict", "cause", "fix", "evidence"}


@pytest.mark.parametrize("n", [4, 5, 8, 16])
def test_slow_node_is_named(n):
    hosts, sides, jobs = simulate(n, bw=lambda s, c, k: 20.0 if "h2" in (s, c) else 95.0)
    res = pa.analyze_pairs(sides, jobs)
    assert res["summary"]["bad_nodes"] == ["h2"]
    assert res["summary"]["bad_links"] == []
    bad = findings_of(res, "bad_node")[0]
    assert bad["host"] == "h2" and bad["verdict"] == "fail" and bad["metrics"] == {"links": n - 1, "bad_links": n - 1}
    assert bad["cause"].startswith("h2: %d of its %d rdma_bw links are bad" % (n - 1, n - 1))
    assert all(r["verdict"] == "fail" for r in res["records"] if "h2" in (r["host"], r["peer"]))
    assert all(r["verdict"] == "pass" for r in res["records"] if "h2" not in (r["host"], r["peer"]))


def test_single_bad_link_is_a_link_not_a_node():
    hosts, sides, jobs = simulate(8, bw=lambda s, c, k: 30.0 if set((s, c)) == set(("h1", "h6")) else 95.0)
    res = pa.analyze_pairs(sides, jobs)
    assert res["summary"]["bad_nodes"] == []
    links = findings_of(res, "bad_link")
    assert len(links) == 1 and set((links[0]["host"], links[0]["peer"])) == set(("h1", "h6"))
    assert "below 90%" in links[0]["cause"]


def test_outlier_node_named_even_when_everything_passes():
    # h3 runs at 85% of its peers' speed: above no threshold, yet a fleet outlier
    hosts, sides, jobs = simulate(8, rate=100.0, bw=lambda s, c, k: 99.0 if "h3" not in (s, c) else 92.0)
    res = pa.analyze_pairs(sides, jobs, min_fraction=0.9, outlier_min_rel=0.05)
    assert all(r["verdict"] in ("pass", "warn") for r in res["records"])
    assert res["summary"]["bad_nodes"] == ["h3"]
    assert findings_of(res, "bad_node")[0]["verdict"] == "warn"
    assert res["summary"]["node_outliers"][0]["host"] == "h3"
    warned = [r for r in res["records"] if r["verdict"] == "warn"]
    assert len(warned) == 7 and all("h3" in (r["host"], r["peer"]) for r in warned)
    # with the default 20% minimum distance the same data is plain pass
    assert pa.analyze_pairs(sides, jobs)["summary"]["verdict"] == "pass"


def test_link_outlier_in_large_mesh():
    hosts, sides, jobs = simulate(8, bw=lambda s, c, k: 60.0 if set((s, c)) == set(("h0", "h5")) else 99.0)
    res = pa.analyze_pairs(sides, jobs, min_fraction=0.5)
    rec = [r for r in res["records"] if set((r["host"], r["peer"])) == set(("h0", "h5"))][0]
    assert rec["verdict"] == "warn" and rec["metrics"]["robust_z"] < -3.5 and "fleet outlier" in rec["cause"]
    assert res["summary"]["bad_links"] == ["h0-h5"] or res["summary"]["bad_links"] == ["h5-h0"]


def test_bad_nic_on_one_rail():
    hosts, sides, jobs = simulate(4, rails=2, bw=lambda s, c, k: 10.0 if k == 1 and "h1" in (s, c) else 95.0)
    res = pa.analyze_pairs(sides, jobs)
    assert res["summary"]["bad_nodes"] == []
    nics = findings_of(res, "bad_nic")
    assert len(nics) == 1 and nics[0]["host"] == "h1" and nics[0]["params"]["rail"] == [1]
    assert nics[0]["params"]["devices"] == ["mlx5_1"]
    assert res["summary"]["bad_nics"] == ["h1:mlx5_1"]


def test_bad_node_on_every_rail():
    hosts, sides, jobs = simulate(4, rails=2, bw=lambda s, c, k: 10.0 if "h0" in (s, c) else 95.0)
    res = pa.analyze_pairs(sides, jobs)
    assert res["summary"]["bad_nodes"] == ["h0"] and findings_of(res, "bad_nic") == []
    assert "on every rail" in findings_of(res, "bad_node")[0]["cause"]


def test_fleet_wide_instead_of_blaming_everyone():
    hosts, sides, jobs = simulate(6, bw=lambda s, c, k: 40.0)
    res = pa.analyze_pairs(sides, jobs)
    assert res["summary"]["fleet"] and res["summary"]["bad_nodes"] == [] and res["summary"]["bad_links"] == []
    assert findings_of(res, "fleet")[0]["host"] == "*"
    # the same numbers against an explicit, lower expectation pass
    assert pa.analyze_pairs(sides, jobs, expected_gbps=42)["summary"]["verdict"] == "pass"


def test_unreachable_host_gives_error_records_not_silence():
    hosts, sides, jobs = simulate(4, drop=("h3",))
    res = pa.analyze_pairs(sides, jobs, unreachable=["h9"])
    errors = [r for r in res["records"] if r["verdict"] == "error"]
    assert len(errors) == 3 and all("h3" in (r["host"], r["peer"]) for r in errors)
    assert all("no result from h3" in r["cause"] for r in errors)
    assert res["summary"]["bad_nodes"] == ["h3"]
    assert findings_of(res, "unreachable")[0]["host"] == "h9"
    assert res["summary"]["verdict"] == "error"


def test_root_cause_is_the_server_side_error():
    def server_fails(side):
        if side["host"] == "h1" and side["role"] == "server":
            return {"code": "no_device", "cause": "No RDMA device is visible", "message": "Did not detect devices"}
        if side["peer"] == "h1" and side["role"] == "client":
            return {"code": "connect_failed", "cause": "could not connect", "message": "Couldn't connect"}
        return None
    hosts, sides, jobs = simulate(4, side_error=server_fails)
    res = pa.analyze_pairs(sides, jobs)
    bad = [r for r in res["records"] if r["verdict"] == "error"]
    assert bad and all(r["host"] == "h1" for r in bad)
    assert all("server side on h1: No RDMA device is visible" == r["cause"] for r in bad)
    assert any("Did not detect devices" in e for r in bad for e in r["evidence"])


def test_latency_outliers_are_high_values():
    hosts, sides, jobs = simulate(8, tests=[{"test": "send", "metric": "lat"}],
                                  bw=lambda s, c, k: 300.0 if "h4" in (s, c) else 100.0)
    res = pa.analyze_pairs(sides, jobs)
    assert res["records"][0]["kind"] == "rdma_lat" and "expected_gbps" not in res["records"][0]["metrics"]
    assert res["summary"]["bad_nodes"] == ["h4"]


def test_matrix_is_symmetric_and_complete():
    hosts, sides, jobs = simulate(5, tests=[{"test": "write", "metric": "bw"}, {"test": "read", "metric": "bw"}])
    res = pa.analyze_pairs(sides, jobs)
    assert len(res["matrices"]) == 2
    mat = res["matrices"][0]
    assert mat["hosts"] == hosts and mat["unit"] == "Gb/s"
    for i in range(5):
        assert mat["values"][i][i] is None
        for j in range(5):
            if i != j:
                assert mat["values"][i][j] == mat["values"][j][i] and mat["values"][i][j] > 90
                assert mat["verdicts"][i][j] == "pass"


def test_skipped_sides_in_check_mode():
    hosts, sides, jobs = simulate(4)
    for side in sides:
        side.update(verdict="skipped", cause="check mode: nothing was run", metrics={})
    res = pa.analyze_pairs(sides, jobs)
    assert all(r["verdict"] == "skipped" for r in res["records"])
    assert res["findings"] == []


def test_tcp_family_and_without_jobs():
    hosts, sides, jobs = simulate(4, tests=[{}])
    res = pa.analyze_pairs(sides, family="tcp")
    assert len(res["records"]) == 6 and all(r["kind"] == "tcp_bw" and r["params"]["op"] == "tcp"
                                            for r in res["records"])


def test_robust_outliers_edge_cases():
    assert pa.robust_outliers([1.0, 1.0], z=3.5)[1] == {}
    med, flagged = pa.robust_outliers([10, 10, 10, 10, 2])
    assert med == 10 and list(flagged) == [4]
    med, flagged = pa.robust_outliers([10, 10, 10, 10, 30], low=False)
    assert list(flagged) == [4]


def test_analysis_refuses_a_fraction_outside_0_1_and_skips_nothing_measured():
    with pytest.raises(ValueError, match="min_fraction"):
        pa.analyze_pairs([], min_fraction=1.5)
    assert pa.analyze_pairs([])["summary"]["verdict"] == "skipped"


def test_verdict_steps_name_the_root_cause_in_order():
    server = {"host": "h1", "role": "server", "verdict": "error", "cause": "no client", "fix": "f1",
              "errors": [{"code": "server_no_client"}]}
    client = {"host": "h2", "role": "client", "verdict": "error", "cause": "refused", "fix": "f2", "errors": []}
    # a server that only saw no client is not the root cause: the client's error is
    assert pa._verdict((("h1", server), ("h2", client)), "bw", None, 100, 0.9) == (
        "error", "client side on h2: refused", "f2")
    # a missing side comes first, with the other side's own cause when it has one of its own
    mr_failed = dict(server, cause="no MR", errors=[{"code": "mr_alloc_failed"}])
    assert pa._verdict((("h1", mr_failed), ("h2", None)), "bw", None, 100, 0.9) == ("error", "no MR", "f1")
    # ... but a side that only waited for its missing peer names the peer (its module never came back)
    verdict, cause, _fix = pa._verdict((("h1", server), ("h2", None)), "bw", None, 100, 0.9)
    assert verdict == "error" and cause.startswith("no result from h2 (")
    verdict, cause, _fix = pa._verdict((("h1", {"verdict": "pass"}), ("h2", None)), "bw", None, 100, 0.9)
    assert verdict == "error" and cause.startswith("no result from h2 (")
    ok = {"verdict": "pass"}
    assert pa._verdict((("h1", ok), ("h2", ok)), "bw", 80.0, 100, 0.9)[:2] == (
        "fail", "80.00 Gb/s is below 90% of the expected 100.00 Gb/s")
    assert pa._verdict((("h1", ok), ("h2", ok)), "lat", 80.0, 100, 0.9) == ("pass", None, None)


def test_culprit_steps_fleet_rails_are_not_blamed_on_nodes():
    records = []
    for a, b in (("h1", "h2"), ("h1", "h3"), ("h2", "h3")):
        records.append({"kind": "rdma_bw", "host": a, "peer": b, "params": {"rail": 0}, "verdict": "fail",
                        "cause": "slow"})
    links = pf._links_by_pair(records)
    per_node = pf._node_stats(links)
    bad_rails = pf._bad_rails(per_node)
    assert bad_rails == {("rdma_bw", "h1"): [0], ("rdma_bw", "h2"): [0], ("rdma_bw", "h3"): [0]}
    rails_of, nodes_of = pf._rails_and_nodes(per_node)
    assert rails_of[("rdma_bw", "h1")] == set([0]) and nodes_of[("rdma_bw", 0)] == set(["h1", "h2", "h3"])
    fleet, fleet_rails = pf._fleet_findings(links, nodes_of, bad_rails, "rdma_perf")
    assert fleet_rails == set([("rdma_bw", 0)]) and fleet[0]["metrics"] == {"links": 3, "bad_links": 3}
    assert pf._node_findings(per_node, rails_of, bad_rails, fleet_rails, "rdma_perf") == ([], set())
    assert pf._link_findings(links, fleet_rails, set(), "rdma_perf") == []


def test_a_failing_pair_with_a_downgraded_port_says_which_port_and_why():
    job = {"server": "h2", "client": "h3", "rail": 0, "step": 0, "round": 0, "test": "write", "metric": "bw",
           "expected_gbps": 400, "server_device": "mlx5_0", "client_device": "mlx5_0",
           "downgraded_ports": [{"host": "h3", "device": "mlx5_0", "rate_gbps": 200, "like_gbps": 400}]}
    common = dict((k, v) for k, v in job.items() if k not in ("server", "client", "downgraded_ports"))
    sides = [dict(common, host="h2", role="server", peer="h3", verdict="pass", metrics={}),
             dict(common, host="h3", role="client", peer="h2", server="10.0.0.2", verdict="pass",
                  metrics={"bw_gbps": 190.0, "bytes": 65536})]
    out = pa.pair_records(sides, jobs=[job], min_fraction=0.9)
    rec = out[0]
    assert rec["verdict"] == "fail" and rec["params"]["downgraded_ports"] == job["downgraded_ports"]
    assert rec["cause"].endswith("h3 mlx5_0 negotiated 200 Gb/s where its like ports (same NIC model and rail) "
                                 "run at 400 Gb/s")
    assert "mlxlink" in rec["fix"]


def test_a_host_without_a_rail_its_peers_have_is_one_failing_finding_per_rail():
    skipped = [{"server": "h2", "client": "h3", "round": 0, "rail": 1, "reason": "r",
                "missing": {"host": "h3", "rail": 1, "device": "mlx5_1", "peer": "h2"}},
               {"server": "h3", "client": "h4", "round": 1, "rail": 1, "reason": "r",
                "missing": {"host": "h3", "rail": 1, "device": "mlx5_1", "peer": "h4"}},
               {"server": "h5", "client": "h6", "round": 1, "reason": "no active RDMA port on h5 and h6"}]
    found = pf.missing_rail_findings(skipped)
    assert len(found) == 1 and found[0]["host"] == "h3" and found[0]["verdict"] == "fail"
    assert found[0]["params"] == {"check": "discover", "code": "rdma_rail_missing", "finding": "rail_missing",
                                  "family": "rdma", "rail": 1, "device": "mlx5_1"}
    assert found[0]["cause"] == ("h3 has no active RDMA port for rail 1, where its peers (h2, h4) have mlx5_1: its "
                                 "pairs on that rail could not run")
    records = pa.skipped_records(skipped)
    assert [r["params"].get("rail") for r in records] == [1, 1, None]
    assert all(r["verdict"] == "skipped" for r in records)
