# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""End to end: the TCP baseline with REAL iperf3 over real SSH into the 4-host lab.

Every lab link is shaped to its nominal rate; a host slowed with tc (to a fifth)
must be named. The
records come from the history the commcheck_history callback writes. The pass
line is 70% of the nominal rate (two shared CPU cores, see
test_rdma_perf_lab.py). Takes about a minute.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type


import pytest

from lab_checks import assert_nothing_left, run_with_history, slow_rate

pytestmark = [pytest.mark.lab, pytest.mark.slow]

PLAYBOOK = "playbooks/tcp.yml"


def run_check(lab, tmp_path, extra_vars, inventory_overlay=None):
    return run_with_history(lab, PLAYBOOK, tmp_path, extra_vars, inventory_overlay)


@pytest.fixture
def lab(lab4):
    lab4.heal()
    yield lab4
    lab4.heal()


def test_slowed_host_is_named_with_real_iperf3(lab, tmp_path):
    slow = lab.hosts[1]
    lab.slow(slow, rate=slow_rate(lab))
    proc, lines, _elapsed = run_check(lab, tmp_path, {"commcheck_tcp_duration": 2, "commcheck_tcp_expected_gbps": lab.rate_gbps,
                                                      "commcheck_min_fraction": 0.7})
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    records = [r for r in lines if r.get("kind") == "tcp_bw"]
    assert len(records) == 6
    for rec in records:
        assert rec["params"]["op"] == "tcp" and rec["metrics"]["expected_gbps"] == pytest.approx(lab.rate_gbps)
        assert any("iperf3" in e and " -J" in e for e in rec["evidence"])
        if slow in (rec["host"], rec["peer"]):
            assert rec["verdict"] == "fail" and rec["metrics"]["bw_gbps"] < 0.5 * lab.rate_gbps, rec
        else:
            assert rec["verdict"] == "pass" and rec["metrics"]["bw_gbps"] > 0.7 * lab.rate_gbps, rec
    named = [r for r in lines if r.get("kind") == "finding"]
    assert [(f["params"]["finding"], f["host"]) for f in named] == [("bad_node", slow)], named
    assert_nothing_left(lab)


def test_slowed_host_is_a_fleet_outlier_without_an_expected_rate(lab, tmp_path):
    slow = lab.hosts[3]
    lab.slow(slow, rate=slow_rate(lab))
    proc, lines, _elapsed = run_check(lab, tmp_path, {"commcheck_tcp_duration": 2, "commcheck_tcp_strategy": "rounds"})
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    named = [r for r in lines if r.get("kind") == "finding"]
    assert [(f["params"]["finding"], f["host"], f["verdict"]) for f in named] == [("bad_node", slow, "warn")], named
    assert "bad nodes ['%s']" % slow in proc.stdout
    assert_nothing_left(lab)


def test_one_link_far_below_its_peers_fails_on_a_first_run(lab, tmp_path):
    """A star: three links, one slowed; no expected rate and no history, the fleet median alone fails it."""
    center, slow = lab.hosts[0], lab.hosts[2]
    lab.slow(slow, rate=slow_rate(lab))
    proc, lines, _elapsed = run_check(lab, tmp_path, {"commcheck_tcp_duration": 2, "commcheck_tcp_pattern": "star",
                                                      "commcheck_tcp_center": center, "commcheck_min_fraction": 0.7})
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    records = [r for r in lines if r.get("kind") == "tcp_bw"]
    assert len(records) == 3 and all(r["host"] == center for r in records)
    for rec in records:
        if rec["peer"] == slow:
            assert rec["verdict"] == "fail" and "x the fleet median" in rec["cause"], rec
            assert rec["thresholds"]["fleet"]["far"] and rec["thresholds"]["hardware"] == {"checked": False}, rec
        else:
            assert rec["verdict"] == "pass", rec
    assert "TCP fail:" in proc.stdout
    assert_nothing_left(lab)


def test_client_whose_server_never_answers_is_bounded(lab, tmp_path):
    """h1's peers are told to reach it at h4's address, where nothing listens on the test port."""
    server, client, elsewhere = lab.hosts[0], lab.hosts[1], lab.hosts[3]
    overlay = {"all": {"hosts": {server: {"commcheck_tcp_address": lab.address(elsewhere)}}}}
    proc, lines, elapsed = run_check(lab, tmp_path, {
        "commcheck_tcp_hosts": [server, client], "commcheck_tcp_pattern": "pairs",
        "commcheck_tcp_pairs": [[server, client]], "commcheck_tcp_duration": 2, "commcheck_tcp_timeout": 6,
        "commcheck_tcp_background": "always"},
        inventory_overlay=overlay)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    (rec,) = [r for r in lines if r.get("kind") == "tcp_bw"]
    assert rec["verdict"] == "error" and rec["host"] == server and rec["peer"] == client
    assert rec["cause"].startswith("client side on %s: the client could not reach the server" % client), rec["cause"]
    # bounded by its 6 s deadline: 10x that plus ansible's own time on a busy machine, far below the
    # playbook's 900 s limit that a client retrying without end would reach
    assert elapsed < 10 * 6 + 180, elapsed
    assert_nothing_left(lab)
