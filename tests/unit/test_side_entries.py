# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""side_options.catalog_entry and side_outcome: the error entries and verdict shape iperf3_cmd and perftest_cmd
share, and the iperf3 side verdicts built with them."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import pytest

from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import iperf3_cmd as ic
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import perftest_cmd as pc
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands.side_options import (
    catalog_entry, side_outcome)

CATALOG = {"lost": ("the peer went away", "bring it back"), "slow": ("too slow", "check the link")}


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
