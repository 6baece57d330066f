# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The run's culprits: one per fault, from every check, with what each one explains folded in."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import itertools

import pytest

from ansible_collections.clusterops.commcheck.plugins.module_utils.records import report_model
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import culprits as cp
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import localization as loc

HOSTS = ["h1", "h2", "h3", "h4"]


def pair_records(bad, kind="rdma_bw", rails=(0, 1), check="rdma_perf"):
    """Ring-free full mesh of pair records; bad(host, peer, rail) -> True fails the pair."""
    out = []
    for rail in rails:
        for host, peer in itertools.combinations(HOSTS, 2):
            failed = bad(host, peer, rail)
            params = {"op": "write", "check": check}
            if rail is not None:
                params.update(rail=rail, device="mlx5_%d" % rail, peer_device="mlx5_%d" % rail)
            out.append({"kind": kind, "host": host, "peer": peer, "params": params,
                        "metrics": {"bw_gbps": 30.0 if failed else 95.0, "expected_gbps": 100.0},
                        "verdict": "fail" if failed else "pass", "cause": "slow" if failed else None,
                        "fix": None, "evidence": []})
    return out


def localized(records, kind="rdma_bw", check="rdma_perf"):
    """What the rdma_perf role publishes: the pair records plus localization findings and summary record."""
    result = loc.localize_records(records, kind)
    return records + loc.finding_records(result, check, kind) + [loc.summary_record(result, check, kind)]


def named(records):
    return [cp.describe(c) for c in cp.culprits(records)]


def discovery_finding(host, code, severity, device=None):
    verdict = {"error": "fail", "warning": "warn", "info": "pass"}[severity]
    return {"kind": "finding", "host": host, "peer": None,
            "params": {"check": "discover", "code": code, "severity": severity, "device": device, "port": 1},
            "metrics": {}, "verdict": verdict, "cause": "%s on %s" % (code, host), "fix": "fix %s" % code,
            "evidence": []}


def test_a_healthy_run_names_nothing():
    records = localized(pair_records(lambda h, p, r: False))
    assert cp.culprits(records) == []
    summary = report_model.summarize(records)
    assert summary["culprits"] == [] and summary["bad_hosts"] == summary["bad_nics"] == summary["bad_links"] == []


def test_a_slow_host_is_one_culprit_and_its_links_are_its_evidence():
    records = localized(pair_records(lambda h, p, r: "h2" in (h, p)))
    found = cp.culprits(records)
    assert [cp.describe(c) for c in found] == ["host h2"]
    assert found[0]["verdict"] == "fail" and found[0]["checks"] == ["rdma_perf"] and found[0]["fix"]
    assert found[0]["confidence"] in ("medium", "high") and found[0]["evidence"]
    assert cp.bad_lists(found) == (["h2"], [], [])


def test_a_slow_nic_is_a_nic_not_its_host():
    found = cp.culprits(localized(pair_records(lambda h, p, r: r == 1 and "h3" in (h, p))))
    assert [(c["component"], c["host"], c["rail"], c["device"]) for c in found] == [("nic", "h3", 1, "mlx5_1")]
    assert cp.bad_lists(found) == ([], ["h3:mlx5_1"], [])


def test_one_slow_link_is_a_link():
    found = cp.culprits(localized(pair_records(lambda h, p, r: r == 0 and set((h, p)) == set(("h1", "h2")))))
    assert [cp.describe(c) for c in found] == ["link h1 - h2 (rail 0)"]
    assert cp.bad_lists(found) == ([], [], ["h1<->h2"])


def test_a_slow_host_and_a_slow_link_elsewhere_are_two_culprits():
    records = localized(pair_records(lambda h, p, r: "h2" in (h, p) or (r == 0 and set((h, p)) == set(("h3", "h4")))))
    assert named(records) == ["host h2", "link h3 - h4 (rail 0)"]


def test_a_port_down_from_discovery_and_its_failing_links_are_one_nic():
    records = localized(pair_records(lambda h, p, r: r == 1 and "h2" in (h, p)))
    records.append(discovery_finding("h2", "port_down", "error", device="mlx5_1"))
    found = cp.culprits(records)
    assert [(c["component"], c["host"], c["rail"], c["device"]) for c in found] == [("nic", "h2", 1, "mlx5_1")]
    assert sorted(found[0]["checks"]) == ["discover", "rdma_perf"] and found[0]["confidence"] == "high"


def test_discovery_errors_name_the_nic_or_the_host_setup_and_warnings_name_nothing():
    records = [discovery_finding("h1", "port_down", "error", device="mlx5_0"),
               discovery_finding("h2", "memlock_limited", "error"),
               discovery_finding("h3", "cpu_governor_not_performance", "warning"),
               discovery_finding("h4", "rate_below_expected", "info", device="mlx5_0")]
    assert named(records) == ["nic h1 mlx5_0", "config h2"]


def roce_finding(host, peer, rail=0, code="roce_mtu_mismatch"):
    return {"kind": "finding", "host": host, "peer": peer,
            "params": {"check": "roce_preflight", "finding": code, "severity": "error", "rail": rail},
            "metrics": {}, "verdict": "fail", "cause": "active MTU 1024 vs 4096", "fix": "set one MTU",
            "evidence": []}


def test_a_roce_mismatch_names_the_host_set_differently():
    records = [roce_finding("h3", "h4"), roce_finding("h3", "h4"), roce_finding("h4", "h1")]
    found = cp.culprits(records)
    assert [cp.describe(c) for c in found] == ["config h4 (rail 0)"]
    assert len(found[0]["evidence"]) == 3 and found[0]["confidence"] == "high"


def test_a_single_mismatching_pair_is_named_as_the_pair():
    assert named([roce_finding("h1", "h2", rail=1)]) == ["config h1 - h2 (rail 1)"]


def collective(host, verdict, stage="pool"):
    return {"kind": "collective", "host": host, "peer": None,
            "params": {"check": "collective", "stage": stage, "nodes": HOSTS}, "metrics": {"busbw_gbs": 1.0},
            "verdict": verdict, "cause": None, "fix": None, "evidence": []}


def test_collective_bisection_names_its_node_and_never_the_launcher():
    records = [collective("h1", "fail"), collective("h1", "fail", "bisect"), collective("h1", "pass", "bisect"),
               {"kind": "finding", "host": "h3", "peer": None, "params": {"check": "collective", "stage": "bisect"},
                "metrics": {"runs": 4}, "verdict": "fail", "cause": "runs with h3 are bad", "fix": "check h3",
                "evidence": ["h1,h2: pass", "h3,h4: fail"]}]
    found = cp.culprits(records)
    assert [cp.describe(c) for c in found] == ["host h3"] and found[0]["confidence"] == "high"
    assert found[0]["checks"] == ["collective"]


def test_unreachable_hosts_are_host_culprits_once_whatever_checks_saw_them():
    records = [{"kind": "finding", "host": "h4", "peer": None,
                "params": {"check": check, "finding": "unreachable", "family": "rdma", "rail": None},
                "metrics": {}, "verdict": "error", "cause": "h4 was unreachable", "fix": "bring it back",
                "evidence": []} for check in ("rdma_perf", "tcp_perf")]
    found = cp.culprits(records)
    assert [cp.describe(c) for c in found] == ["host h4"] and found[0]["checks"] == ["rdma_perf", "tcp_perf"]


def test_pair_checks_without_a_localization_are_localized_here_without_rails():
    records = pair_records(lambda h, p, r: set((h, p)) == set(("h1", "h3")), kind="tcp_bw", rails=(None,),
                           check="tcp_perf")
    found = cp.culprits(records)
    assert [cp.describe(c) for c in found] == ["link h1 - h3"] and found[0]["checks"] == ["tcp_perf"]


def test_a_flaky_link_is_flaky_and_not_a_bad_link():
    records = pair_records(lambda h, p, r: r == 0 and set((h, p)) == set(("h3", "h4")))
    retest = dict(records[[i for i, r in enumerate(records) if r["verdict"] == "fail"][0]])
    records.append(dict(retest, verdict="pass", params=dict(retest["params"], retest=True, retest_purpose="as_is")))
    found = cp.culprits(localized(records))
    assert [(cp.describe(c), c["verdict"]) for c in found] == [("link h3 - h4 (rail 0) (flaky)", "flaky")]
    assert cp.bad_lists(found) == ([], [], [])
    assert report_model.summarize(localized(records))["flaky"] == ["link h3 - h4 (rail 0) (flaky)"]


def test_a_flaky_place_that_fails_for_good_elsewhere_is_one_failing_culprit():
    flaky = cp.culprit("link", "h1", "h2", 0, verdict="flaky", check="rdma_perf", fix="watch it")
    broken = cp.culprit("link", "h2", "h1", 0, verdict="fail", check="tcp_perf", fix="replace the cable")
    merged = cp.merge([flaky, broken])
    assert len(merged) == 1 and merged[0]["verdict"] == "fail" and merged[0]["fix"] == "replace the cable"
    assert merged[0]["checks"] == ["rdma_perf", "tcp_perf"]


def test_fleet_is_the_rail_fabric():
    found = cp.culprits(localized(pair_records(lambda h, p, r: r == 0)))
    assert [(c["component"], c["host"], c["rail"]) for c in found] == [("fabric", "*", 0)]


@pytest.mark.parametrize("verdict", ["warn", "pass", "skipped"])
def test_findings_that_do_not_fail_name_nothing(verdict):
    records = [{"kind": "finding", "host": "h1", "peer": None, "params": {"check": "collective"}, "metrics": {},
                "verdict": verdict, "cause": "x", "fix": "y", "evidence": []}]
    assert cp.culprits(records) == []


def test_action_lines_say_what_why_and_the_fix():
    found = cp.culprits(localized(pair_records(lambda h, p, r: "h2" in (h, p))))
    line = cp.action_lines(found)[0]
    assert line.startswith("host h2 [rdma_perf; ") and "evidence]: take the host out of the pool" in line


def test_evidence_is_bounded():
    items = [cp.culprit("host", "h1", check="c%d" % i, evidence=["line %d-%d" % (i, j) for j in range(10)])
             for i in range(5)]
    merged = cp.merge(items)
    assert len(merged) == 1 and len(merged[0]["evidence"]) == cp.MAX_EVIDENCE


def test_the_filter_wraps_the_function_and_refuses_what_is_not_a_list():
    from ansible.errors import AnsibleFilterError
    from ansible_collections.clusterops.commcheck.plugins.filter.commcheck_culprits import FilterModule
    culprits_filter = FilterModule().filters()["commcheck_culprits"]
    records = localized(pair_records(lambda h, p, r: "h2" in (h, p)))
    assert culprits_filter(records) == cp.culprits(records)
    with pytest.raises(AnsibleFilterError, match="must be a list of records"):
        culprits_filter({"kind": "finding"})


def test_two_node_collective_runs_are_not_links():
    records = [dict(collective("h1", "fail", "bisect"), peer="h2"), dict(collective("h3", "fail", "bisect"), peer="h4"),
               dict(collective("h1", "fail", "bisect"), peer="h3")]
    assert cp.culprits(records) == []


def pipelined(host, peer, rail, step, verdict, failed_side=None, failed_how=None):
    params = {"op": "write", "metric": "bw", "check": "rdma_perf", "rail": rail, "device": "mlx5_%d" % rail,
              "peer_device": "mlx5_%d" % rail, "round": step, "step": step}
    if failed_side:
        params.update(failed_side=failed_side, failed_how=failed_how)
    return {"kind": "rdma_bw", "host": host, "peer": peer, "params": params,
            "metrics": {"bw_gbps": None if verdict == "error" else 95.0, "expected_gbps": 100.0},
            "verdict": verdict, "cause": "side on %s" % failed_side if failed_side else None, "fix": None,
            "evidence": []}


def test_a_hung_server_is_the_host_and_the_partners_it_made_late_are_not_blamed():
    # what the lab measured with h1's first server stopped (SIGSTOP), ring, pipelined strategy: at step 1
    # h2 (kept waiting by h1 at step 0) is late for h3, and h1 itself is late for h4 on both rails
    records = [pipelined("h1", "h2", 0, 0, "error", "h1", "hung"), pipelined("h3", "h4", 0, 0, "pass"),
               pipelined("h1", "h2", 1, 0, "pass"), pipelined("h3", "h4", 1, 0, "pass"),
               pipelined("h2", "h3", 0, 1, "error", "h2", "error"), pipelined("h4", "h1", 0, 1, "error", "h4", "hung"),
               pipelined("h2", "h3", 1, 1, "pass"), pipelined("h4", "h1", 1, 1, "error", "h4", "hung")]
    assert loc.late_partner_errors(records) == set([4, 5, 7])
    found = cp.culprits(localized(records))
    assert [cp.describe(c) for c in found] == ["host h1"]


def test_errors_of_one_step_are_all_evidence():
    records = [pipelined("h1", "h2", 0, 0, "error", "h1", "hung"), pipelined("h1", "h3", 1, 0, "error", "h1", "hung")]
    assert loc.late_partner_errors(records) == set()


def test_gpu_memory_far_below_host_memory_is_the_hosts_gpu_to_nic_setup():
    from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import gpudirect
    rows = [{"host": "h2", "rail": 1, "device": "mlx5_1", "gpu": 1, "cuda_gbps": 20.0, "host_gbps": 95.0,
             "ratio": 20.0 / 95.0, "slow": True},
            {"host": "h3", "rail": 1, "device": "mlx5_1", "gpu": 1, "cuda_gbps": 94.0, "host_gbps": 95.0,
             "ratio": 94.0 / 95.0, "slow": False}]
    records = localized(pair_records(lambda h, p, r: False)) + gpudirect.slow_findings(rows)
    found = cp.culprits(records)
    assert [(c["component"], c["host"], c["rail"], c["device"], c["verdict"]) for c in found] == [
        ("config", "h2", 1, "mlx5_1", "fail")]
    assert found[0]["fix"] == gpudirect.SLOW_FIX and "gpudirect: gpudirect_slow" in found[0]["evidence"]
