# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Trustworthy verdicts end to end: real ansible-playbook over real SSH into the 4-host, 2-rail lab.

The perftest EMULATOR (tests/lab/emulators) moves real data over TCP between the
lab hosts' rail addresses; every lab link is shaped with tc to its nominal rate.
Each test breaks one component, runs playbooks/rdma.yml (retests included) and
checks that localization names that component and nothing else:

- a whole host slowed (every rail)            -> component "host" (bad_node)
- one rail of one host slowed                 -> that host's rail (bad_nic, its device)
- one pair slowed on one rail (Lab.slow_pair) -> "link" (bad_link)
- a host slowed for the first pass only, healed before the retests -> "flaky", no "fail"
- a perftest server stopped (SIGSTOP) as it starts -> its host, or the link when
  the two sides' outcomes cannot tell the server from its client; never another host

Also: counter deltas during a run joined to the localized rail, counters rising
run after run named as a trend, a RoCE MTU mismatch found before the pair runs,
NUMA-pinned tests, and the quarantine role's Slurm drain script (dry run).

Records are read from the history the commcheck_history callback writes. As in
test_rdma_perf_lab.py, the pass line is 70% of the link rate (two shared CPU
cores). About 2.5 minutes on the 2-core build machine (4 under load).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json
import os
import subprocess
import threading
import time

import pytest

import faults
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import localization as loc
from lab_checks import HEALTHY_VERDICTS, LAB_MIN_FRACTION, assert_nothing_left, history_env, read_history, \
    slow_rate

pytestmark = [pytest.mark.lab, pytest.mark.slow]

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PLAYBOOK = "playbooks/rdma.yml"
RETEST_MARK = "Plan the retests of the failing pairs"
BASE_VARS = {"commcheck_rdma_ops": ["write"], "commcheck_rdma_metrics": ["bw"], "commcheck_rdma_duration": 2,
             "commcheck_min_fraction": LAB_MIN_FRACTION, "commcheck_cpu_governor": "",
             "commcheck_retest_repeats": 1}


def run_check(lab, tmp_path, extra=None, on_line=None, playbook=PLAYBOOK):
    """ansible-playbook rdma.yml with the history callback; on_line(line) sees the output as it comes."""
    history = tmp_path / "history"
    env = lab.env(history_env(history))
    extra_vars = dict(BASE_VARS, **(extra or {}))
    varfile = tmp_path / "vars.json"
    varfile.write_text(json.dumps(extra_vars))
    argv = [os.path.join(REPO, ".venv", "bin", "ansible-playbook"), "-i", lab.inventory, "-e", "@%s" % varfile,
            playbook]
    started = time.monotonic()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True,
                            env=env, cwd=REPO)
    out = []
    timer = threading.Timer(900, proc.kill)
    timer.start()
    try:
        for line in proc.stdout:
            out.append(line)
            if on_line:
                on_line(line)
        proc.wait()
    finally:
        timer.cancel()
    return proc.returncode, "".join(out), read_history(history), time.monotonic() - started


def components(lines):
    return [(r["params"]["component"], r["host"], r["peer"], r["params"].get("rail"), r["params"].get("devices"))
            for r in lines if r.get("kind") == "finding" and r["params"].get("check") == "rdma_perf"
            and r["params"].get("component")]


def of_kind(lines, kind):
    return [r for r in lines if r.get("kind") == kind]


@pytest.fixture
def lab(lab4):
    lab4.heal()
    yield lab4
    lab4.heal()


QUARANTINE_AFTER_CHECK = """
- name: The RDMA check
  ansible.builtin.import_playbook: %s/playbooks/rdma.yml

- name: Quarantine what it found
  hosts: all
  gather_facts: false
  roles:
    - role: clusterops.commcheck.quarantine
"""


def test_slowed_host_is_the_host(lab, tmp_path):
    slow = lab.hosts[2]
    lab.slow(slow, rate=slow_rate(lab))
    playbook = tmp_path / "check-and-quarantine.yml"
    playbook.write_text(QUARANTINE_AFTER_CHECK % REPO)
    rc, out, lines, elapsed = run_check(lab, tmp_path, {
        "commcheck_quarantine": True, "commcheck_quarantine_backend": "slurm"}, playbook=str(playbook))
    assert rc == 0, out[-4000:]
    assert components(lines) == [("host", slow, None, None, ["mlx5_0", "mlx5_1"])], components(lines)
    finding = [r for r in of_kind(lines, "finding") if r["params"].get("component") == "host"][0]
    assert finding["params"]["finding"] == "bad_node" and finding["params"]["confidence"] == "high"
    assert "6 of its 6 rdma_bw links are bad on every rail" in finding["cause"]
    # every failing pair was retested as is and with known-good partners, and confirmed
    summary = of_kind(lines, "retest_summary")[0]
    assert summary["metrics"]["failing_pairs"] == 6 and summary["metrics"]["confirmed_pairs"] == 6
    assert summary["metrics"]["as_is_retests"] == 6 and summary["metrics"]["partner_retests"] >= 2
    assert len(of_kind(lines, "rdma_bw_retest")) == summary["metrics"]["retests"]
    assert of_kind(lines, "localization")[0]["cause"].startswith("most likely: host %s" % slow)
    # the planned pairs are still 6 pairs x 2 rails
    assert len(of_kind(lines, "rdma_bw")) == 12
    # quarantine (opt-in, a dry run by default): the scontrol command it would run, in the report; no script
    (quarantined,) = of_kind(lines, "quarantine")
    [command] = quarantined["evidence"]
    assert command.startswith("scontrol update NodeName=%s State=DRAIN 'Reason=commcheck: %s: 6 of its 6 rdma_bw "
                              "links" % (slow, slow)), command
    assert quarantined["host"] == slow and quarantined["params"]["dry_run"] is True
    assert quarantined["cause"].startswith("dry run: would drain slurm %s: commcheck: " % slow)
    assert_nothing_left(lab)
    print("slowed host: %.0f s" % elapsed)


def bump_counter(lab, host, device, counter, by):
    """The emulated NIC of host counts errors: add to one of its port counters in the host's emulated sysfs."""
    path = os.path.join(lab.lab.sysfs_root(host), "class", "infiniband", device, "ports", "1", "counters", counter)
    with open(path) as handle:
        value = int(handle.read().strip())
    with open(path, "w") as handle:
        handle.write("%d\n" % (value + by))


def test_one_slowed_rail_is_that_hosts_rail(lab, tmp_path):
    slow = lab.hosts[1]
    lab.slow(slow, rail=1, rate=slow_rate(lab))
    bumped = []

    def errors_during_the_run(line):
        # the counters were read before the tests; the slowed port "sees" bit errors while they run
        if RETEST_MARK in line and not bumped:
            bump_counter(lab, slow, "mlx5_1", "symbol_error", 40)
            bumped.append(True)

    rc, out, lines, elapsed = run_check(lab, tmp_path, on_line=errors_during_the_run)
    assert rc == 0, out[-4000:]
    assert components(lines) == [("rail", slow, None, 1, ["mlx5_1"])], components(lines)
    finding = [r for r in of_kind(lines, "finding") if r["params"].get("component") == "rail"][0]
    assert finding["params"]["finding"] == "bad_nic"
    assert "its other rail (0) is fine" in finding["cause"]
    # the counter deltas of the run: attributed to the port, and part of the evidence of the bad rail
    counters = [r for r in of_kind(lines, "port_counters") if r["host"] == slow and r["params"]["device"] == "mlx5_1"]
    assert len(counters) == 1 and counters[0]["verdict"] == "warn"
    assert counters[0]["metrics"]["symbol_error_delta"] == 40
    assert all(r["verdict"] == "pass" for r in of_kind(lines, "port_counters") if r is not counters[0])
    assert any(line.startswith("%s mlx5_1/1: symbol_error +40 during the run" % slow) for line in finding["evidence"])
    # every test ran pinned to its NIC's NUMA node (the emulated NICs are on node 0)
    pinned = [e for r in of_kind(lines, "rdma_bw") for e in r["evidence"] if ": pinned with " in e]
    assert len(pinned) == 24 and all("--cpunodebind=0 --membind=0" in e or "taskset -c" in e for e in pinned)
    assert all(r["verdict"] in HEALTHY_VERDICTS for r in of_kind(lines, "rdma_bw") if r["params"]["rail"] == 0)
    assert_nothing_left(lab)
    print("slowed rail: %.0f s" % elapsed)


def test_one_slowed_pair_link_is_the_link(lab, tmp_path):
    a, b = lab.hosts[0], lab.hosts[3]
    lab.lab.slow_pair(a, b, slow_rate(lab), rail=0)
    rc, out, lines, elapsed = run_check(lab, tmp_path)
    assert rc == 0, out[-4000:]
    assert components(lines) == [("link", a, b, 0, ["mlx5_0"])], components(lines)
    finding = [r for r in of_kind(lines, "finding") if r["params"].get("component") == "link"][0]
    assert finding["params"]["finding"] == "bad_link" and "and with known-good partners" in finding["cause"]
    partner = [r for r in of_kind(lines, "rdma_bw_retest") if r["params"]["retest_purpose"] == "partner"]
    assert sorted(r["params"]["subject"] for r in partner) == sorted([a, b])
    assert all(r["verdict"] == "pass" for r in partner)
    assert_nothing_left(lab)
    print("slowed link: %.0f s" % elapsed)


@pytest.fixture
def mtu_9000_on_h4(lab):
    host = lab.hosts[3]
    path = os.path.join(lab.lab.sysfs_root(host), "class", "net", lab.host(host)["rails"][0]["netdev"], "mtu")
    with open(path) as handle:
        old = handle.read()
    with open(path, "w") as handle:
        handle.write("9000\n")
    yield host
    with open(path, "w") as handle:
        handle.write(old)


def test_roce_mismatch_is_a_finding_before_the_pair_runs(lab, tmp_path, mtu_9000_on_h4):
    peer = lab.hosts[0]
    rc, out, lines, elapsed = run_check(lab, tmp_path, {
        "commcheck_rdma_hosts": [peer, mtu_9000_on_h4], "commcheck_rdma_pattern": "pairs",
        "commcheck_rdma_pairs": [[peer, mtu_9000_on_h4]], "commcheck_rdma_duration": 1})
    assert rc == 0, out[-4000:]
    found = [r for r in of_kind(lines, "finding") if r["params"].get("check") == "roce_preflight"]
    assert sorted((r["params"]["finding"], r["host"], r["peer"], r["params"]["rail"]) for r in found) == [
        ("active_mtu_mismatch", peer, mtu_9000_on_h4, 0), ("netdev_mtu_mismatch", peer, mtu_9000_on_h4, 0)]
    active = [r for r in found if r["params"]["finding"] == "active_mtu_mismatch"][0]
    assert "(1024 vs 4096) (derived from the netdev MTU); the pair runs at 1024 bytes" in active["cause"]
    assert active["verdict"] == "warn" and "mtu" in active["fix"].lower()
    # said before the first test ran
    assert out.index("Show the RoCE mismatches found before the tests") < out.index("Run every round of this host")
    assert_nothing_left(lab)
    print("RoCE preflight: %.0f s" % elapsed)


def test_counters_rising_run_after_run_are_a_trend(lab, tmp_path):
    a, b = lab.hosts[0], lab.hosts[1]
    quick = {"commcheck_rdma_hosts": [a, b], "commcheck_rdma_pattern": "pairs", "commcheck_rdma_pairs": [[a, b]],
             "commcheck_rdma_duration": 1}
    runs = []
    for num in range(3):
        if num:
            bump_counter(lab, b, "mlx5_0", "link_downed", 1)      # the link went down between the runs
        rc, out, lines, elapsed = run_check(lab, tmp_path, quick)  # one history for the three runs
        assert rc == 0, out[-4000:]
        runs.append(lines)
    last_run = runs[-1][-1]["run_id"]
    trends = [r for r in runs[-1] if r.get("kind") == "finding" and r["params"].get("finding") == "counter_trend"]
    assert [(r["host"], r["params"]["device"], r["params"]["counter"], r["run_id"]) for r in trends] == [
        (b, "mlx5_0", "link_downed", last_run)]
    assert trends[0]["cause"].startswith("flapping link on %s mlx5_0/1: link_downed rose in 2 of the last 2" % b)
    # the first two runs had no trend yet
    assert not [r for lines in runs[:2] for r in lines if r.get("params", {}).get("finding") == "counter_trend"]
    assert_nothing_left(lab)


def test_one_off_slowdown_that_recovers_is_flaky(lab, tmp_path):
    slow = lab.hosts[3]
    lab.slow(slow, rate=slow_rate(lab))
    healed = []

    def heal_before_retests(line):
        if RETEST_MARK in line and not healed:
            lab.heal(slow)
            healed.append(time.monotonic())

    rc, out, lines, elapsed = run_check(lab, tmp_path, on_line=heal_before_retests)
    assert rc == 0, out[-4000:]
    assert healed, "the retest step never started"
    assert [c[0] for c in components(lines)] == ["flaky"], components(lines)
    assert components(lines)[0][1] == slow
    pairs = of_kind(lines, "rdma_bw")
    assert not [r for r in pairs if r["verdict"] == "fail"]
    flaky = [r for r in pairs if r["verdict"] == "flaky"]
    assert len(flaky) == 6 and all(slow in (r["host"], r["peer"]) for r in flaky)
    assert all("then passed on retest 1 of 1" in r["cause"] for r in flaky)
    summary = of_kind(lines, "retest_summary")[0]
    assert summary["verdict"] == "flaky" and summary["metrics"]["flaky_pairs"] == 6
    assert_nothing_left(lab)
    print("flaky: %.0f s" % elapsed)


def test_hung_server_never_blames_another_host(lab, tmp_path):
    hung = lab.hosts[0]
    fault = faults.HungSide(lab.lab, hung, "server")
    fault.inject()
    try:
        rc, out, lines, _elapsed = run_check(lab, tmp_path, {"commcheck_rdma_timeout": 15})
    finally:
        fault.heal()
    assert rc == 0, out[-4000:]
    assert fault.stopped, "no perftest server of %s was stopped" % hung
    errors = [r for r in of_kind(lines, "rdma_bw") if r["verdict"] == "error"]
    assert errors, components(lines)
    # every error pair says how each side ended; those that are evidence (not a knock-on of a partner the
    # hung host kept waiting, localization.late_partner_errors) blame at most the side that failed to answer
    late = loc.late_partner_errors(errors)
    for index, rec in enumerate(errors):
        assert rec["params"]["server_outcome"] and rec["params"]["client_outcome"], rec
        if index not in late:
            assert rec["params"]["failed_side"] in (hung, None), rec
    named = components(lines)
    assert named, out[-4000:]
    assert any(hung in (host, peer) for _c, host, peer, _r, _d in named), named
    for component, host, peer, _rail, _devices in named:
        if component in ("host", "rail"):
            assert host == hung, named
        elif component == "flaky":
            # a link the loaded machine slowed once and its retest passed: named as transient, not
            # blamed (seen once with three test workers and two busy loops on two cores)
            continue
        else:
            assert component == "link" and hung in (host, peer), named


def test_hung_client_names_the_client_host(lab, tmp_path):
    # issue 14: a client stopped before it connected printed what a server hung after its banner prints (the
    # server listened, the client said nothing); the runner found the client's process stopped at its deadline
    hung = lab.hosts[1]
    fault = faults.HungSide(lab.lab, hung, "client")
    fault.inject()
    try:
        rc, out, lines, _elapsed = run_check(lab, tmp_path, {"commcheck_rdma_timeout": 15})
    finally:
        fault.heal()
    assert rc == 0, out[-4000:]
    assert fault.stopped, "no perftest client of %s was stopped" % hung
    errors = [r for r in of_kind(lines, "rdma_bw") if r["verdict"] == "error"]
    first = [rec for index, rec in enumerate(errors) if index not in loc.late_partner_errors(errors)]
    assert first, errors
    stuck = [rec for rec in first if rec["params"]["client_outcome"] == "stuck"]
    assert stuck and all(rec["peer"] == hung and rec["params"]["failed_side"] == hung for rec in stuck), first
    assert all(rec["params"]["failed_side"] in (hung, None) for rec in first), first
    named = components(lines)
    # a link the loaded machine slowed once and whose retest passed is named flaky, never blamed (seen once
    # under a loaded make test); everything blamed is the hung client's host
    blamed = [item for item in named if item[0] != "flaky"]
    assert blamed and all(component == "host" and host == hung for component, host, _peer, _rail, _dev in blamed), \
        named
