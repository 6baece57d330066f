# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""End to end: the TCP baseline with REAL iperf3 over real SSH into the 4-host lab.

Every lab link is shaped to its nominal rate; a host slowed with tc (to a fifth)
must be named. The
records come from the history the commcheck_history callback writes. The pass
line is 70% of the nominal rate (two shared CPU cores, see
test_rdma_perf_lab.py). Failing pairs are retested before anything is blamed:
a link slowed for the first pass only (healed when the retests are planned, an
event in the playbook's output, never a clock) is `flaky`, one slowed
throughout is a confirmed bad link. Takes about two minutes.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import pytest

import faults
from lab_checks import HEALTHY_VERDICTS, LAB_MIN_FRACTION, assert_nothing_left, history_env, read_history, \
    run_with_history, slow_rate

pytestmark = [pytest.mark.lab, pytest.mark.slow, pytest.mark.full]

PLAYBOOK = "playbooks/tcp.yml"
RETEST_MARK = "Plan the retests of the failing pairs"
# no expected rate: the fleet judges the first pass (a link far below the fleet median fails) and the
# retests (below commcheck_fleet_min_fraction of that median), which a loaded machine does not move
RETEST_VARS = {"commcheck_tcp_duration": 2, "commcheck_retest_repeats": 1, "commcheck_retest_partners": True}


def run_check(lab, tmp_path, extra_vars, inventory_overlay=None):
    return run_with_history(lab, PLAYBOOK, tmp_path, extra_vars, inventory_overlay)


def run_watching(lab, tmp_path, extra_vars, on_line):
    """ansible-playbook tcp.yml with the history callback; on_line(line) sees the output as it comes.
    Returns (returncode, output, history lines)."""
    history = tmp_path / "history"
    proc = lab.ansible_playbook(PLAYBOOK, extra_vars=extra_vars, env=history_env(history), on_line=on_line)
    return proc.returncode, proc.stdout, read_history(history)


def of_kind(lines, kind):
    return [r for r in lines if r.get("kind") == kind]


def tcp_findings(lines):
    """(component, finding, the two ends, verdict) of the TCP check's findings."""
    return [(r["params"].get("component"), r["params"]["finding"], frozenset((r["host"], r["peer"])), r["verdict"])
            for r in of_kind(lines, "finding") if r["params"].get("check") == "tcp_perf"]


def link_records(lines, kind, a, b):
    return [r for r in of_kind(lines, kind) if set((r["host"], r["peer"])) == set((a, b))]


@pytest.fixture
def lab(lab4):
    lab4.heal()
    yield lab4
    lab4.heal()


def test_slowed_host_is_named_with_real_iperf3(lab, tmp_path):
    slow = lab.hosts[1]
    lab.slow(slow, rate=slow_rate(lab))
    proc, lines, _elapsed = run_check(lab, tmp_path, {"commcheck_tcp_duration": 2, "commcheck_tcp_expected_gbps": lab.rate_gbps,
                                                      "commcheck_min_fraction": LAB_MIN_FRACTION})
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    records = [r for r in lines if r.get("kind") == "tcp_bw"]
    assert len(records) == 6
    for rec in records:
        assert rec["params"]["op"] == "tcp" and rec["metrics"]["expected_gbps"] == pytest.approx(lab.rate_gbps)
        assert any("iperf3" in e and " -J" in e for e in rec["evidence"])
        if slow in (rec["host"], rec["peer"]):
            assert rec["verdict"] == "fail" and rec["metrics"]["bw_gbps"] < 0.5 * lab.rate_gbps, rec
        else:
            assert rec["verdict"] in HEALTHY_VERDICTS, rec
            assert rec["verdict"] != "pass" or rec["metrics"]["bw_gbps"] > LAB_MIN_FRACTION * lab.rate_gbps, rec
    named = [r for r in lines if r.get("kind") == "finding"]
    assert [(f["params"]["finding"], f["host"]) for f in named] == [("bad_node", slow)], named
    assert_nothing_left(lab)


def test_slowed_host_fails_against_the_best_links_without_an_expected_rate(lab, tmp_path):
    """A host at a fifth of the lab's rate is in half of a 4-host ring's pairs, so the fleet median sits between
    its links and the others: the best links (3 x faster or more: thresholds.BEST_FACTOR) make it a fail, where
    the median alone made it a warn."""
    slow = lab.hosts[3]
    lab.slow(slow, rate=slow_rate(lab))
    proc, lines, _elapsed = run_check(lab, tmp_path, {"commcheck_tcp_duration": 2, "commcheck_tcp_strategy": "rounds"})
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    named = [r for r in lines if r.get("kind") == "finding"]
    assert [(f["params"]["finding"], f["host"], f["verdict"]) for f in named] == [("bad_node", slow, "fail")], named
    assert "bad nodes ['%s']" % slow in proc.stdout
    assert_nothing_left(lab)


def test_one_link_far_below_its_peers_fails_on_a_first_run(lab, tmp_path):
    """A star: three links, one slowed; no expected rate and no history: far below the best of its peers, it
    fails in the first pass (so it is retested), and the fleet threshold trips too."""
    center, slow = lab.hosts[0], lab.hosts[2]
    lab.slow(slow, rate=slow_rate(lab))
    proc, lines, _elapsed = run_check(lab, tmp_path, {"commcheck_tcp_duration": 2, "commcheck_tcp_pattern": "star",
                                                      "commcheck_tcp_center": center, "commcheck_min_fraction": LAB_MIN_FRACTION})
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    records = [r for r in lines if r.get("kind") == "tcp_bw"]
    assert len(records) == 3 and all(r["host"] == center for r in records)
    for rec in records:
        if rec["peer"] == slow:
            assert rec["verdict"] == "fail" and "3 x or more lower than the best quarter" in rec["cause"], rec
            assert rec["thresholds"]["fleet"]["far"] and rec["thresholds"]["hardware"] == {"checked": False}, rec
        else:
            assert rec["verdict"] == "pass", rec
    assert "TCP fail:" in proc.stdout
    assert_nothing_left(lab)


def test_client_whose_server_never_answers_is_bounded(lab, tmp_path):
    """h1's peers are told to reach it at h4's second rail address, where nothing listens on the test port (h4's
    inventory address would be refused up front: two inventory names with one address)."""
    # the product's own deadline is what is under test: short, so that the test does not wait long for it
    deadline = 3
    server, client, elsewhere = lab.hosts[0], lab.hosts[1], lab.hosts[3]
    overlay = {"all": {"hosts": {server: {"commcheck_tcp_address": lab.address(elsewhere, 1)}}}}
    proc, lines, elapsed = run_check(lab, tmp_path, {
        "commcheck_tcp_hosts": [server, client], "commcheck_tcp_pattern": "pairs",
        "commcheck_tcp_pairs": [[server, client]], "commcheck_tcp_duration": 2, "commcheck_tcp_timeout": deadline,
        "commcheck_tcp_background": "always"},
        inventory_overlay=overlay)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    (rec,) = [r for r in lines if r.get("kind") == "tcp_bw"]
    assert rec["verdict"] == "error" and rec["host"] == server and rec["peer"] == client
    assert rec["cause"].startswith("client side on %s: the client could not reach the server" % client), rec["cause"]
    # bounded by its deadline: 10x that plus ansible's own time on a busy machine, far below the
    # playbook's 900 s limit that a client retrying without end would reach
    assert elapsed < 10 * deadline + 180, elapsed
    assert_nothing_left(lab)


def test_link_slow_for_the_first_pass_only_is_flaky_not_a_bad_link(lab, tmp_path):
    a, b = lab.hosts[0], lab.hosts[3]
    fault = faults.SlowLink(lab.lab, a, b, slow_rate(lab))
    fault.inject()
    healed = []

    def heal_before_retests(line):
        if RETEST_MARK in line and not healed:
            fault.heal()
            healed.append(line)

    rc, out, lines = run_watching(lab, tmp_path, RETEST_VARS, heal_before_retests)
    assert rc == 0, out[-4000:]
    assert healed, "the retests were never planned: " + out[-3000:]
    (link,) = link_records(lines, "tcp_bw", a, b)
    assert link["verdict"] == "flaky" and "then passed on retest 1 of 1" in link["cause"], link
    assert all(r["verdict"] == "pass" for r in of_kind(lines, "tcp_bw") if r is not link)
    as_is = [r for r in of_kind(lines, "tcp_bw_retest") if r["params"]["retest_purpose"] == "as_is"]
    assert [(set((r["host"], r["peer"])), r["verdict"]) for r in as_is] == [(set((a, b)), "pass")], as_is
    assert tcp_findings(lines) == [("flaky", "flaky", frozenset((a, b)), "flaky")], tcp_findings(lines)
    (summary,) = of_kind(lines, "retest_summary")
    assert summary["params"] == {"check": "tcp_perf", "family": "tcp_bw"} and summary["verdict"] == "flaky"
    assert (summary["metrics"]["flaky_pairs"], summary["metrics"]["confirmed_pairs"]) == (1, 0)
    assert "TCP flaky:" in out and "retests 3 (confirmed 0, flaky 1)" in out
    assert_nothing_left(lab)


def test_link_slow_on_every_retest_is_a_confirmed_bad_link(lab, tmp_path):
    a, b = lab.hosts[0], lab.hosts[3]
    faults.SlowLink(lab.lab, a, b, slow_rate(lab)).inject()
    proc, lines, _elapsed = run_check(lab, tmp_path, RETEST_VARS)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    (link,) = link_records(lines, "tcp_bw", a, b)
    assert link["verdict"] == "fail" and any(e.startswith("retest as is: fail") for e in link["evidence"]), link
    assert "both sides pass with known-good partners: the path between them is at fault" in link["evidence"]
    assert [r["verdict"] for r in link_records(lines, "tcp_bw_retest", a, b)] == ["fail"]
    partner = [r for r in of_kind(lines, "tcp_bw_retest") if r["params"]["retest_purpose"] == "partner"]
    assert sorted(r["params"]["subject"] for r in partner) == sorted([a, b])
    assert all(r["verdict"] == "pass" and r["params"]["partner"] not in (a, b) for r in partner), partner
    # the retests ran on ports of their own, past the first pass's
    first_ports = set(r["params"]["tcp_port"] for r in of_kind(lines, "tcp_bw"))
    assert min(r["params"]["tcp_port"] for r in of_kind(lines, "tcp_bw_retest")) > max(first_ports)
    assert tcp_findings(lines) == [("link", "bad_link", frozenset((a, b)), "fail")], tcp_findings(lines)
    (summary,) = of_kind(lines, "retest_summary")
    assert summary["verdict"] == "fail" and (summary["metrics"]["confirmed_pairs"], summary["metrics"]["flaky_pairs"]) \
        == (1, 0)
    assert "TCP fail:" in proc.stdout and "retests 3 (confirmed 1, flaky 0)" in proc.stdout
    assert_nothing_left(lab)
