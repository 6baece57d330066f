# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""side_options.catalog_entry, side_outcome, not_started_outcome and bandwidth_outcome: the error entries and
verdicts iperf3_cmd and perftest_cmd share, and the side verdicts built with them."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import pytest

from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import iperf3_cmd as ic
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import perftest_cmd as pc
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands.side_options import (
    bandwidth_outcome, catalog_entry, not_started_outcome, side_outcome)

CATALOG = {"lost": ("the peer went away", "bring it back"), "slow": ("too slow", "check the link")}
CATALOG_BW = {"below_expected": ("slow link", "look at the cable")}


def test_catalog_entry_takes_cause_and_fix_from_the_catalog_and_the_cause_as_message_by_default():
    assert catalog_entry(CATALOG, "lost") == {"code": "lost", "message": "the peer went away",
                                              "cause": "the peer went away", "fix": "bring it back"}
    assert catalog_entry(CATALOG, "slow", "3 Gb/s")["message"] == "3 Gb/s"
    with pytest.raises(KeyError):
        catalog_entry(CATALOG, "unknown_code")


def test_side_outcome_names_the_first_error_s_cause_else_its_message():
    first, second = catalog_entry(CATALOG, "slow", "3 Gb/s"), catalog_entry(CATALOG, "lost")
    assert side_outcome("fail", [first, second]) == {"verdict": "fail", "cause": "too slow", "fix": "check the link",
                                                     "errors": [first, second]}
    bare = {"code": "x", "message": "what the tool said"}
    assert side_outcome("error", [bare])["cause"] == "what the tool said"
    assert side_outcome("error", [bare])["fix"] is None
    assert side_outcome("pass", []) == {"verdict": "pass", "cause": None, "fix": None, "errors": []}


@pytest.mark.parametrize("tool, catalog", [(ic, ic.CATALOG), (pc, pc.CATALOG)])
def test_a_missing_tool_is_an_error_with_its_catalog_entry(tool, catalog):
    side = {"role": "client", "metric": "bw", "expected_gbps": 10}
    outcome = tool.side_verdict(side, {"tool_missing": True, "stderr": "not found"}, {})
    assert outcome["verdict"] == "error"
    assert outcome["errors"][0] == {"code": "tool_missing", "message": "not found",
                                    "cause": catalog["tool_missing"][0], "fix": catalog["tool_missing"][1]}
    assert (outcome["cause"], outcome["fix"]) == catalog["tool_missing"]


def test_iperf3_sides_pass_fail_below_expected_and_a_silent_server_is_an_error():
    client = {"role": "client", "expected_gbps": 10}
    assert ic.side_verdict(client, {"rc": 0}, {"received_gbps": 9.5})["verdict"] == "pass"
    slow = ic.side_verdict(client, {"rc": 0}, {"received_gbps": 5.0}, min_fraction=0.9)
    assert slow["verdict"] == "fail" and slow["errors"][0]["code"] == "below_expected"
    assert slow["errors"][0]["message"] == "5.00 Gb/s is below 90% of the expected 10.00 Gb/s"
    assert slow["cause"] == ic.CATALOG["below_expected"][0]
    server = ic.side_verdict({"role": "server"}, {"timed_out": True}, {})
    assert (server["verdict"], server["errors"][0]["code"]) == ("error", "server_no_client")
    failed = ic.side_verdict(client, {"rc": 1}, {})
    assert failed["errors"][0] == dict(catalog_entry(ic.CATALOG, "iperf3_error", "exit status 1"))


def test_not_started_outcome_names_a_start_failure_before_a_missing_tool_and_is_none_for_a_side_that_ran():
    catalog = dict(ic.CATALOG)
    both = not_started_outcome(catalog, {"start_error": "Exec format error", "tool_missing": True,
                                         "stderr": "iperf3: not found on PATH"})
    assert both["verdict"] == "error"
    assert both["errors"] == [{"code": "cannot_start", "message": "Exec format error",
                               "cause": "%s: Exec format error" % catalog["cannot_start"][0],
                               "fix": catalog["cannot_start"][1]}]
    missing = not_started_outcome(catalog, {"tool_missing": True, "stderr": "iperf3: not found on PATH"})
    assert [e["code"] for e in missing["errors"]] == ["tool_missing"]
    assert missing["errors"][0]["message"] == "iperf3: not found on PATH"
    assert not_started_outcome(catalog, {"rc": 1, "stderr": "boom", "timed_out": True}) is None
    assert not_started_outcome(catalog, {"start_error": "", "tool_missing": False}) is None


@pytest.mark.parametrize("gbps, expected, fraction, verdict", [
    (8.9, 10, 0.9, "fail"),      # just below 90% of 10
    (9.0, 10, 0.9, "pass"),      # exactly the share passes
    (4.0, 10, 0.5, "fail"),
    (5.0, 10, 0.5, "pass"),
    (0.0, 0, 0.9, "pass"),       # 0: no expectation
    (1.0, None, 0.9, "pass"),    # no expectation
    (None, 10, 0.9, "pass"),     # nothing measured: the caller decides whether that is an error
])
def test_bandwidth_outcome_fails_below_the_share_of_the_expectation_only(gbps, expected, fraction, verdict):
    assert bandwidth_outcome(CATALOG_BW, gbps, expected, fraction)["verdict"] == verdict


def test_bandwidth_outcome_says_by_how_much_with_the_catalog_s_cause_and_fix():
    outcome = bandwidth_outcome(CATALOG_BW, 37.5, 100, 0.8)
    assert outcome == {"verdict": "fail", "cause": "slow link", "fix": "look at the cable", "errors": [
        {"code": "below_expected", "message": "37.50 Gb/s is below 80% of the expected 100.00 Gb/s",
         "cause": "slow link", "fix": "look at the cable"}]}


def test_perftest_doubles_the_expectation_of_a_bidirectional_side_and_leaves_latency_unjudged():
    parsed = {"metric": "bw", "rows": [{"bytes": 65536, "bw_avg_gbps": 150.0, "bw_peak_gbps": 151.0}]}
    one_way = {"role": "client", "metric": "bw", "expected_gbps": 100}
    assert pc.side_verdict(one_way, {"rc": 0}, parsed)["verdict"] == "pass"
    both_ways = dict(one_way, bidirectional=True)
    slow = pc.side_verdict(both_ways, {"rc": 0}, parsed)
    assert slow["verdict"] == "fail"
    assert slow["errors"][0]["message"] == "150.00 Gb/s is below 90% of the expected 200.00 Gb/s"
    lat = {"metric": "lat", "rows": [{"bytes": 2, "t_avg_us": 2.5}]}
    assert pc.side_verdict({"role": "client", "metric": "lat", "expected_gbps": 100}, {"rc": 0}, lat)["verdict"] == "pass"


def test_an_iperf3_server_is_never_judged_on_bandwidth_and_a_client_without_a_result_is_an_error():
    assert ic.side_verdict({"role": "server", "expected_gbps": 10}, {"rc": 0}, {"received_gbps": 1.0})["verdict"] == "pass"
    silent = ic.side_verdict({"role": "client", "expected_gbps": 10}, {"rc": 0}, {})
    assert (silent["verdict"], silent["errors"][0]["code"]) == ("error", "no_result")
