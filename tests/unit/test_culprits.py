# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The run's culprits: one per fault, from every check, with what each one explains folded in."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import copy
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
    flaky["cause"], broken["cause"] = "came and went", "cable broken"
    assert cp.merge([flaky, broken])[0]["cause"] == "cable broken"
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


# --- whole culprits: hosts out of order (h10 after h2), rails that are not 0..n-1 and devices that are not
# mlx5_<rail>, so that a mix-up of host and peer, rail and device, or of sort orders shows ------------------

def finding(host, peer=None, verdict="fail", cause=None, fix=None, evidence=(), **params):
    return {"kind": "finding", "host": host, "peer": peer, "params": params, "metrics": {}, "verdict": verdict,
            "cause": cause, "fix": fix, "evidence": list(evidence)}


def whole(component, host, peer=None, rail=None, device=None, verdict="fail", confidence="medium", checks=(),
          cause=None, fix=None, evidence=()):
    return {"component": component, "host": host, "peer": peer, "rail": rail, "device": device, "verdict": verdict,
            "confidence": confidence, "checks": list(checks), "cause": cause, "fix": fix, "evidence": list(evidence)}


def test_each_kind_of_failing_finding_is_read_as_its_culprit():
    records = [
        finding("h3", cause="port down", fix="reseat", evidence=["state DOWN"], check="discover", code="port_down",
                device="mlx5_2", rail=1),
        finding("h12", cause="memlock 64K", fix="ulimit -l unlimited", code="memlock_limited"),
        finding("h7", verdict="error", cause="launcher failed on h7", fix="fix ssh", check="collective", stage="pool"),
        finding("h8", cause="slow pool", fix="check h8", check="collective", stage="pool"),
        finding("h9", verdict="error", cause="unreachable", fix="boot", check="tcp_perf", finding="unreachable"),
        finding("h4", cause="gpu slow", fix="peermem", check="rdma_perf", family="rdma_gpudirect",
                finding="gpudirect_slow", rail=3, device="mlx5_3"),
        finding("h5", cause="mine", fix="my fix", device="mlx5_9", rail="2"),
        finding("h6", cause="mine6", fix="fix6"),
        # names pair analysis gives (the localization decides), the pool, and warnings: no culprit
        finding("h13", cause="named by pair analysis", check="rdma_perf", finding="bad_node"),
        finding("*", cause="pool", check="collective"),
        finding("h14", verdict="warn", cause="rate low", check="discover", code="rate_below_expected", device="mlx5_1"),
    ]
    assert cp.culprits(records) == [
        whole("host", "h6", cause="mine6", fix="fix6"),
        whole("host", "h7", confidence="high", checks=["collective"], cause="launcher failed on h7", fix="fix ssh"),
        whole("host", "h8", checks=["collective"], cause="slow pool", fix="check h8"),
        whole("host", "h9", confidence="high", checks=["tcp_perf"], cause="unreachable", fix="boot"),
        whole("nic", "h3", rail=1, device="mlx5_2", confidence="high", checks=["discover"], cause="port down",
              fix="reseat", evidence=["discovery: port_down", "state DOWN"]),
        whole("nic", "h5", rail=2, device="mlx5_9", cause="mine", fix="my fix"),
        whole("config", "h4", rail=3, device="mlx5_3", checks=["gpudirect"], cause="gpu slow", fix="peermem",
              evidence=["gpudirect: gpudirect_slow"]),
        whole("config", "h12", confidence="high", checks=["discover"], cause="memlock 64K", fix="ulimit -l unlimited",
              evidence=["discovery: memlock_limited"])]


def test_a_published_localization_is_read_with_its_devices_place_and_the_devices_warnings_first():
    records = [
        finding("h15", cause="slow nic", fix="replace nic", evidence=["rail 1 pairs slow"], check="rdma_perf",
                component="rail", rail=1, devices=["mlx5_1"], confidence="high", family="rdma_bw"),
        finding("h15", verdict="warn", cause="numa", check="placement", finding="numa_mismatch", device="mlx5_1"),
        finding("h15", verdict="warn", cause="pcie x8", check="discover", code="pcie_link_degraded", device="mlx5_1"),
        finding("h15", verdict="warn", cause="another port", check="discover", code="pcie_link_degraded",
                device="mlx5_0"),
        finding("h15", verdict="warn", cause="governor", check="discover", code="cpu_governor_not_performance"),
        finding("h2", cause="two nics", check="rdma_perf", component="flaky", rail=0, devices=["mlx5_0", "mlx5_4"],
                family="rdma_bw"),
        finding("h16", cause="flaky host", check="rdma_perf", component="flaky", family="rdma_bw"),
    ]
    assert cp.culprits(records) == [
        whole("nic", "h15", rail=1, device="mlx5_1", confidence="high", checks=["rdma_perf"], cause="slow nic",
              fix="replace nic", evidence=["placement: numa_mismatch: numa", "discovery: pcie_link_degraded: pcie x8",
                                           "rail 1 pairs slow"]),
        whole("host", "h16", verdict="flaky", checks=["rdma_perf"], cause="flaky host"),
        whole("nic", "h2", rail=0, verdict="flaky", checks=["rdma_perf"], cause="two nics")]


def test_a_host_whose_every_port_counter_failed_is_the_host_else_each_nic_on_its_rail():
    def counter(host, device, verdict, lines=(), check="rdma_perf"):
        return {"kind": "port_counters", "host": host, "peer": None, "params": {"device": device, "check": check},
                "metrics": {}, "verdict": verdict, "cause": "link_downed rose on %s" % device,
                "fix": "check the cable", "evidence": list(lines)}

    def pair(host, peer, rail, device, peer_device):
        return {"kind": "rdma_bw", "host": host, "peer": peer, "verdict": "pass", "metrics": {"bw_gbps": 90.0},
                "params": {"rail": rail, "device": device, "peer_device": peer_device, "op": "write"}}

    # rail 1 is h2's mlx5_4 and h10's mlx5_5: a counter names the NIC, the pairs its rail
    records = [pair("h2", "h10", 1, "mlx5_4", "mlx5_5"), pair("h10", "h2", "0", "mlx5_3", "mlx5_6"),
               counter("h10", "mlx5_5", "fail", ["link_downed +1"], check=None), counter("h10", "mlx5_3", "pass"),
               counter("h2", "mlx5_4", "error", ["a"]), counter("h2", "mlx5_6", "fail", ["b"]),
               counter("h3", "mlx5_0", "fail", ["c"]), counter("*", "mlx5_0", "fail")]
    assert cp.culprits(records) == [
        whole("host", "h2", checks=["rdma_perf"], cause="link_downed rose on mlx5_4", fix="check the cable",
              evidence=["counters: h2 mlx5_4: a", "counters: h2 mlx5_6: b"]),
        whole("nic", "h3", device="mlx5_0", checks=["rdma_perf"], cause="link_downed rose on mlx5_0",
              fix="check the cable", evidence=["counters: h3 mlx5_0: c"]),
        whole("nic", "h10", rail=1, device="mlx5_5", checks=["counters"], cause="link_downed rose on mlx5_5",
              fix="check the cable", evidence=["counters: h10 mlx5_5: link_downed +1"])]


def test_roce_mismatches_name_the_host_in_two_pairs_of_a_rail_else_the_pair():
    records = [
        finding("h3", "h10", rail=2, check="roce_preflight", finding="roce_mtu_mismatch", cause="MTU 1024 vs 4096",
                fix="set MTU 4096"),
        finding("h10", "h1", verdict="warn", rail="2", check="roce_preflight", finding="roce_ecn_mismatch",
                cause="ECN off vs on", fix="enable ECN"),
        finding("h2", "h1", rail=0, check="roce_preflight", cause="v1 vs v2", fix="same GID type"),
        finding("h2", "h1", rail=0, verdict="pass", check="roce_preflight", finding="roce_gid_type_mismatch"),
        finding("h4", "h5", rail=None, check="roce_preflight", finding="roce_pfc_mismatch", cause="PFC", fix="pfc"),
    ]
    assert [c["rail"] for c in cp.roce_config_culprits(records)] == [None, 0, 2]
    # in a rail's own order: the hosts set differently, then the pairs, in natural order
    rail = [finding(host, peer, rail=1, check="roce_preflight", cause="x") for host, peer in (
        ("h9", "h1"), ("h9", "h2"), ("h10", "h3"), ("h10", "h7"), ("h6", "h5"), ("h11", "h4"))]
    assert [(c["host"], c["peer"], c["confidence"]) for c in cp.roce_config_culprits(rail)] == [
        ("h9", None, "high"), ("h10", None, "high"), ("h4", "h11", "medium"), ("h5", "h6", "medium")]
    assert cp.culprits(records) == [
        whole("config", "h1", "h2", rail=0, checks=["roce_preflight"], cause="RoCE settings differ (mismatch): v1 vs v2",
              fix="same GID type", evidence=["h2-h1 rail 0: v1 vs v2"]),
        whole("config", "h4", "h5", checks=["roce_preflight"], cause="RoCE settings differ (roce_pfc_mismatch): PFC",
              fix="pfc", evidence=["h4-h5 rail None: PFC"]),
        whole("config", "h10", rail=2, confidence="high", checks=["roce_preflight"],
              cause="RoCE settings differ (roce_ecn_mismatch, roce_mtu_mismatch): MTU 1024 vs 4096",
              fix="set MTU 4096", evidence=["h3-h10 rail 2: MTU 1024 vs 4096", "h10-h1 rail 2: ECN off vs on"])]


C = cp.culprit


def test_a_setting_explains_what_was_measured_through_it_and_nothing_else():
    items = [
        C("link", "h10", "h3", 2, check="rdma_perf", cause="slow link", evidence=["l1"]),
        C("nic", "h10", None, 2, "mlx5_2", check="rdma_perf", cause="slow nic", evidence=["n1"]),
        C("nic", "h10", None, 0, "mlx5_0", check="rdma_perf", cause="slow nic0"),
        C("config", "h10", None, 2, check="roce_preflight", confidence="high", cause="MTU differs", evidence=["c1"]),
        C("link", "h1", "h2", 0, check="rdma_perf", cause="slow 12"),
        C("link", "h2", "h1", 1, check="rdma_perf", cause="slow 12 r1"),
        C("config", "h2", "h1", 0, check="roce_preflight", cause="GID type differs"),
        C("config", "h5", None, None, check="discover", confidence="high", cause="memlock"),
        C("host", "h5", check="collective", cause="pool slow"),
        C("nic", "h5", None, 1, "mlx5_1", check="discover", cause="port down"),       # discovery's own reading
        C("config", "h7", None, 1, check="roce_preflight", cause="ECN"),
        C("host", "h7", check="rdma_perf", cause="h7 slow"),                          # h7 was measured on rail 1 only
        C("host", "h8", check="rdma_perf", cause="h8 slow"),                          # h8 on rails 0 and 1
        C("config", "h8", None, 1, check="roce_preflight", cause="ECN8"),
    ]
    merged = cp.merge(items, {"h7": {1}, "h8": {0, 1}, "h10": {0, 2}})
    assert [(cp.describe(c), c["checks"], c["confidence"], c["evidence"]) for c in merged] == [
        ("host h8", ["rdma_perf"], "medium", []),
        ("nic h5 mlx5_1 (rail 1)", ["discover"], "medium", []),
        ("nic h10 mlx5_0 (rail 0)", ["rdma_perf"], "medium", []),
        ("link h2 - h1 (rail 1)", ["rdma_perf"], "medium", []),
        ("config h2 - h1 (rail 0)", ["roce_preflight", "rdma_perf"], "medium", ["explains link h1 - h2 (rail 0)"]),
        ("config h5", ["discover", "collective"], "high", ["explains host h5"]),
        ("config h7 (rail 1)", ["roce_preflight", "rdma_perf"], "medium", ["explains host h7"]),
        ("config h8 (rail 1)", ["roce_preflight"], "medium", []),
        ("config h10 (rail 2)", ["roce_preflight", "rdma_perf"], "high",
         ["c1", "explains nic h10 mlx5_2 (rail 2)", "n1", "explains link h10 - h3 (rail 2)", "l1"])]


def test_a_host_a_nic_and_a_rails_link_explain_what_they_would_make_fail():
    items = [
        C("link", "h9", "h4", 3, check="rdma_perf", evidence=["l49"]),
        C("nic", "h4", None, 1, "mlx5_7", check="rdma_perf", confidence="low"),
        C("host", "h4", check="rdma_perf", confidence="high", cause="h4 slow", fix="drain h4"),
        # a NIC: the TCP link of its host and the host that only node-level checks (collective, TCP) named
        C("link", "h6", "h11", None, check="tcp_perf", cause="tcp slow"),
        C("nic", "h11", None, 0, "mlx5_0", check="rdma_perf", cause="nic slow"),
        C("host", "h11", check="collective", cause="collective slow"),
        C("host", "h11", check="tcp_perf", cause="tcp slow host"),
        C("link", "h12", "h13", 0, check="rdma_perf", cause="link 12-13"),
        C("link", "h13", "h12", None, check="tcp_perf", cause="tcp 12-13"),
        C("link", "h13", "h12", 1, check="rdma_perf", cause="link 12-13 rail 1"),
        # a GPU path set up wrong (gpudirect) is no setting of the NIC: both stand
        C("config", "h24", None, 3, "mlx5_3", check="gpudirect", cause="gpu path"),
        C("nic", "h24", None, 3, "mlx5_3", check="rdma_perf", cause="nic 24"),
        # failing explains flaky, flaky explains flaky, flaky never explains failing
        C("nic", "h16", None, 0, "mlx5_0", check="rdma_perf", verdict="flaky", cause="flaky nic"),
        C("host", "h16", check="rdma_perf", cause="h16 bad"),
        C("link", "h17", "h18", 5, verdict="flaky", check="rdma_perf", cause="flaky 17"),
        C("nic", "h17", None, 5, None, check="rdma_perf", verdict="flaky", cause="flaky nic 17"),
        C("nic", "h19", None, 4, "mlx5_4", check="rdma_perf", verdict="flaky", cause="flaky nic 19"),
        C("link", "h19", "h20", 4, check="rdma_perf", cause="failing link 19"),
        # a rail's fabric explains no link of that rail
        C("fabric", "*", None, 6, check="rdma_perf", cause="fabric 6"),
        C("link", "h21", "h22", 6, check="rdma_perf", cause="link on the fabric's rail"),
    ]
    merged = cp.merge(items)
    assert [c["rail"] for c in merged[:2]] == [None, None]         # a host takes no rail from its NICs
    assert [(cp.describe(c), c["checks"], c["confidence"], c["device"], c["evidence"], c["cause"])
            for c in merged] == [
        ("host h4", ["rdma_perf"], "high", "mlx5_7",
         ["explains nic h4 mlx5_7 (rail 1)", "explains link h9 - h4 (rail 3)", "l49"], "h4 slow"),
        ("host h16", ["rdma_perf"], "medium", "mlx5_0", ["explains nic h16 mlx5_0 (rail 0) (flaky)"], "h16 bad"),
        ("nic h11 mlx5_0 (rail 0)", ["rdma_perf", "collective", "tcp_perf"], "medium", "mlx5_0",
         ["explains host h11", "explains link h6 - h11"], "nic slow"),
        ("nic h24 mlx5_3 (rail 3)", ["rdma_perf"], "medium", "mlx5_3", [], "nic 24"),
        ("link h12 - h13 (rail 0)", ["rdma_perf", "tcp_perf"], "medium", None, ["explains link h13 - h12"],
         "link 12-13"),
        ("link h13 - h12 (rail 1)", ["rdma_perf"], "medium", None, [], "link 12-13 rail 1"),
        ("link h19 - h20 (rail 4)", ["rdma_perf"], "medium", None, [], "failing link 19"),
        ("link h21 - h22 (rail 6)", ["rdma_perf"], "medium", None, [], "link on the fabric's rail"),
        ("fabric of rail 6", ["rdma_perf"], "medium", None, [], "fabric 6"),
        ("config h24 (rail 3)", ["gpudirect"], "medium", "mlx5_3", [], "gpu path"),
        ("nic h17 (rail 5) (flaky)", ["rdma_perf"], "medium", None, ["explains link h17 - h18 (rail 5) (flaky)"],
         "flaky nic 17"),
        ("nic h19 mlx5_4 (rail 4) (flaky)", ["rdma_perf"], "medium", "mlx5_4", [], "flaky nic 19")]


def test_one_nic_seen_with_and_without_its_rail_is_one_culprit_on_that_rail():
    merged = cp.merge([C("nic", "h3", None, None, "mlx5_2", check="counters", cause="link went down", fix="reseat"),
                       C("nic", "h3", None, 2, "mlx5_2", verdict="flaky", check="rdma_perf", confidence="high",
                         cause="flaky", fix="watch"),
                       C("nic", "h3", None, None, "mlx5_1", check="counters", cause="other port")])
    assert [(cp.describe(c), c["verdict"], c["confidence"], c["cause"], c["fix"], c["checks"]) for c in merged] == [
        ("nic h3 mlx5_1", "fail", "medium", "other port", None, ["counters"]),
        ("nic h3 mlx5_2 (rail 2)", "fail", "high", "link went down", "reseat", ["counters", "rdma_perf"])]


def test_a_nic_explains_the_links_of_its_rail_either_way_round_and_no_others():
    merged = cp.merge([C("nic", "h23", None, 2, "mlx5_2", check="rdma_perf", cause="nic"),
                       C("link", "h23", "h24", 2, check="rdma_perf"), C("link", "h27", "h23", 2, check="rdma_perf"),
                       C("link", "h23", "h25", 3, check="rdma_perf"), C("link", "h24", "h25", 2, check="rdma_perf")])
    assert [(cp.describe(c), c["evidence"]) for c in merged] == [
        ("nic h23 mlx5_2 (rail 2)", ["explains link h23 - h24 (rail 2)", "explains link h27 - h23 (rail 2)"]),
        ("link h23 - h25 (rail 3)", []), ("link h24 - h25 (rail 2)", [])]


def test_the_views_of_every_component():
    items = [C("host", "h10"), C("nic", "h2", None, 1, "mlx5_4", check="rdma_perf", fix="replace"),
             C("nic", "h2", None, 3), C("link", "h10", "h2", 0, cause="slow"), C("link", "h3", "h2", None),
             C("fabric", "*", None, 1), C("fabric", "*"), C("config", "h5", "h6", 2), C("config", "h5"),
             C("host", "h9", verdict="flaky", check="tcp_perf", evidence=["x"]), C("host", "h8"),
             C("nic", "h10", None, 0, "mlx5_0")]
    assert [cp.describe(c) for c in items] == [
        "host h10", "nic h2 mlx5_4 (rail 1)", "nic h2 (rail 3)", "link h10 - h2 (rail 0)", "link h3 - h2",
        "fabric of rail 1", "fabric", "config h5 - h6 (rail 2)", "config h5", "host h9 (flaky)", "host h8",
        "nic h10 mlx5_0 (rail 0)"]
    assert cp.bad_lists(items) == (["h8", "h10"], ["h2:mlx5_4", "h2:rail 3", "h10:mlx5_0"], ["h2<->h3", "h2<->h10"])
    assert cp.action_lines(items[1:5] + items[9:10]) == [
        "nic h2 mlx5_4 (rail 1) [rdma_perf; medium confidence; 0 evidence]: replace",
        "nic h2 (rail 3) [-; medium confidence; 0 evidence]: -",
        "link h10 - h2 (rail 0) [-; medium confidence; 0 evidence]: slow",
        "link h3 - h2 [-; medium confidence; 0 evidence]: -",
        "host h9 (flaky) [tcp_perf; medium confidence; 1 evidence]: -"]
    both = cp.merge([C("host", "h8", check="rdma_perf", fix="drain"), C("host", "h8", check="tcp_perf")])
    assert cp.action_lines(both) == ["host h8 [rdma_perf, tcp_perf; medium confidence; 0 evidence]: drain"]
    assert [cp.sort_key(c)[:2] for c in (items[0], items[9])] == [(False, 0), (True, 0)]
    assert C("host", "h1", rail="x")["rail"] is None and C("nic", "h1", rail="")["rail"] is None


def test_measured_rails_are_the_rails_each_end_of_a_pair_was_measured_on():
    records = [
        "not a record",
        {"kind": "finding", "host": "h6", "peer": "h7", "params": {"rail": 2}},       # no measurement
        {"kind": "rdma_bw", "host": "h1", "peer": "h2", "params": {"rail": 0}},
        {"kind": "rdma_lat", "host": "h3", "peer": "h1", "params": {"rail": "1"}},     # as read back from text
        {"kind": "tcp_bw", "host": "h4", "peer": "h5", "params": {}},                  # no rail
        {"kind": "rdma_bw", "host": "h8", "peer": None, "params": {"rail": 3}},        # no peer
        {"kind": "rdma_bw", "host": "h9", "peer": "h10", "params": {"rail": ""}},     # an empty rail is none
    ]
    assert cp.measured_rails(records) == {"h1": {0, 1}, "h2": {0}, "h3": {1}}


@pytest.mark.parametrize("published", ["localization", "finding"])
def test_a_kind_the_role_localized_is_not_localized_again(published):
    pairs = pair_records(lambda h, p, r: set((h, p)) == set(("h1", "h3")) and r == 0)
    records = pairs + [r for r in localized(pairs)[len(pairs):] if r["kind"] == published]
    links = [c for c in cp.raw_culprits(records) if c["component"] == "link"]
    # the role's findings name the link; its summary alone says there is nothing to add
    assert len(links) == (1 if published == "finding" else 0)


def test_pair_checks_without_a_check_or_localization_are_named_by_their_kind_on_their_rail():
    records = [discovery_finding("h2", "ok", "info")] + pair_records(
        lambda h, p, r: set((h, p)) == set(("h1", "h3")) and r == 1, check=None)
    found = cp.culprits(records)
    assert [cp.describe(c) for c in found] == ["link h1 - h3 (rail 1)"] and found[0]["checks"] == ["rdma_bw"]


def _failing(host, device=None):
    """A caller's own failing finding: its host's culprit, or its device's NIC's."""
    return {"kind": "finding", "host": host, "peer": None, "params": {"device": device} if device else {},
            "metrics": {}, "verdict": "fail", "cause": "%s failed" % host, "fix": None, "evidence": []}


def test_a_failing_host_gets_the_warnings_of_all_its_devices_in_device_order_and_a_nic_those_of_its_own():
    # each host's mlx5_1 warning is listed first and reads first alphabetically: only the device order may decide
    records = [discovery_finding(host, code, "warning", device=device)
               for host in ("h2", "h3") for device, code in (("mlx5_1", "pcie_low"), ("mlx5_0", "rate_low"))]
    # a device warning of a measurement is no note of discovery or placement; what is not a record is passed over
    records += [{"kind": "finding", "host": "h3", "peer": None, "verdict": "warn", "cause": "slow",
                 "params": {"check": "rdma_perf", "device": "mlx5_1", "finding": "slow_side"}}, "not a record"]
    found = dict((cp.describe(c), c["evidence"]) for c in cp.culprits(records + [_failing("h2"), _failing("h3", "mlx5_1")]))
    assert found["host h2"][:2] == ["discovery: rate_low: rate_low on h2", "discovery: pcie_low: pcie_low on h2"]
    assert found["nic h3 mlx5_1"] == ["discovery: pcie_low: pcie_low on h3"]


def test_a_port_whose_counters_failed_is_its_nic_on_the_rail_its_pairs_measured_it_on():
    def counters(host, device, verdict):
        return {"kind": "port_counters", "host": host, "peer": None, "params": {"device": device},
                "verdict": verdict, "cause": "link down", "fix": None, "evidence": []}
    records = [
        # no pair: its rail says nothing about the port's
        {"kind": "finding", "host": "h10", "peer": None, "params": {"device": "mlx5_1", "rail": 5}, "verdict": "pass"},
        {"kind": "rdma_bw", "host": "h10", "peer": "h9", "params": {"rail": 1, "device": "mlx5_1", "peer_device": "mlx5_1"},
         "verdict": "pass"},
        # the server's device unknown: the client's still has its rail
        {"kind": "rdma_bw", "host": "h10", "peer": "h9", "params": {"rail": 0, "peer_device": "mlx5_0"}, "verdict": "pass"},
        counters("h10", "mlx5_1", "fail"), counters("h9", "mlx5_0", "fail"), counters("h9", "mlx5_1", "pass")]
    assert [cp.describe(c) for c in cp.counter_culprits(records)] == ["nic h9 mlx5_0 (rail 0)", "nic h10 mlx5_1 (rail 1)"]


def test_a_culprit_without_a_rail_comes_before_its_hosts_rails():
    merged = cp.merge([C("nic", "h1", None, rail, device, check="rdma_perf")
                       for rail, device in ((1, "mlx5_1"), (None, "mlx5_9"), (0, "mlx5_0"))])
    assert [c["device"] for c in merged] == ["mlx5_9", "mlx5_0", "mlx5_1"]


def test_merging_leaves_the_culprits_it_was_given_alone():
    items = [C("nic", "h1", None, 0, "mlx5_0", check="rdma_perf", evidence=["a"]),
             C("nic", "h1", None, 0, "mlx5_0", check="counters", evidence=["b"])]
    before = copy.deepcopy(items)
    cp.merge(items)
    assert items == before


def test_a_host_wide_setting_explains_its_host_whichever_comes_first():
    setting = C("config", "h5", None, None, check="discover", confidence="high", cause="memlock")
    host = C("host", "h5", check="collective", cause="pool slow")
    for items in ([setting, host], [host, setting]):
        assert [(cp.describe(c), c["evidence"]) for c in cp.merge(copy.deepcopy(items))] == [
            ("config h5", ["explains host h5"])]


def test_a_localized_host_is_the_whole_host_and_a_rail_its_nic_there():
    host = cp.from_component({"component": "host", "host": "h2", "rail": 1, "devices": ["mlx5_1"]}, "rdma_perf")
    nic = cp.from_component({"component": "rail", "host": "h2", "rail": 1, "devices": ["mlx5_1"]}, "rdma_perf")
    assert (cp.describe(host), host["rail"], host["device"]) == ("host h2", None, "mlx5_1")
    assert (cp.describe(nic), nic["rail"]) == ("nic h2 mlx5_1 (rail 1)", 1)


def test_a_flaky_pair_no_localization_covered_is_localized_here_as_flaky():
    records = pair_records(lambda h, p, r: False)
    for rec in records:
        if set((rec["host"], rec["peer"])) == set(("h1", "h3")) and rec["params"]["rail"] == 0:
            rec["verdict"] = "flaky"
    assert [(cp.describe(c), c["verdict"]) for c in cp.culprits(records)] == [("link h1 - h3 (rail 0) (flaky)", "flaky")]


def test_a_finding_pair_analysis_named_is_left_to_the_localization():
    # a failing bad_link finding without a check of its own: no culprit by itself, nor its host's
    assert cp.culprits([{"kind": "finding", "host": "h1", "peer": "h2", "params": {"finding": "bad_link"},
                         "verdict": "fail", "cause": "slow", "fix": None, "evidence": []}]) == []


def test_mismatching_pairs_of_a_rail_come_in_host_order():
    records = [{"kind": "finding", "host": host, "peer": peer, "verdict": "fail", "cause": "MTU differs", "fix": None,
                "params": {"check": "roce_preflight", "rail": 0, "finding": "mtu_mismatch"}, "evidence": []}
               for host, peer in (("h10", "h11"), ("h9", "h12"))]
    assert [cp.describe(c) for c in cp.roce_config_culprits(records)] == ["config h9 - h12 (rail 0)",
                                                                          "config h10 - h11 (rail 0)"]


@pytest.mark.parametrize("rails, explained", [((1,), True), ((0, 1), False)])
def test_a_setting_of_one_rail_explains_a_failing_host_only_when_its_pairs_ran_on_that_rail_alone(rails, explained):
    mismatches = [{"kind": "finding", "host": "h1", "peer": peer, "verdict": "fail", "cause": "ECN differs", "fix": None,
                   "params": {"check": "roce_preflight", "rail": 1, "finding": "ecn_mismatch"}, "evidence": []}
                  for peer in ("h2", "h3")]
    records = pair_records(lambda h, p, r: False, rails=rails) + mismatches + [_failing("h1")]
    assert ("host h1" not in named(records)) is explained and "config h1 (rail 1)" in named(records)
