# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Trustworthy verdicts end to end: real ansible-playbook over real SSH into the 4-host, 2-rail lab.

The perftest EMULATOR (tests/lab/emulators) moves real data over TCP between the
lab hosts' rail addresses; every lab link is shaped with tc to its nominal rate.
Each test breaks one component, runs playbooks/rdma.yml (retests included) and
checks that localization names that component and nothing else:

- a whole host slowed (every rail)            -> component "host" (bad_node)
- a host slowed for the first pass only, healed before the retests -> "flaky", no "fail"
- a perftest server stopped (SIGSTOP) as it starts -> its host, or the link when
  the two sides' outcomes cannot tell the server from its client; never another host

Also: counters rising run after run named as a trend (two earlier runs written
into the history, then one real run), and the quarantine role's Slurm drain
script (dry run).

One slowed rail (with the counter deltas of the run as its evidence, and
NUMA-pinned tests), one slowed pair link and a RoCE MTU mismatch found before
the pair runs are asserted on the fast tier's run with several faults at once
(test_accuracy_lab.py).

Fast tier: the counter trend. Full tier (``pytest.mark.full``): the others.
Records are read from the history the commcheck_history callback writes. The
pass line is half the link rate (two shared CPU cores,
lab_checks.LAB_MIN_FRACTION). About 2.5 minutes on the 2-core build machine
(4 under load); the fast tier's test about 15 s.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import datetime
import os
import time

import pytest

import faults
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import history
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import localization as loc
from lab_checks import LAB_MIN_FRACTION, assert_nothing_left, history_env, read_history, slow_rate

pytestmark = [pytest.mark.lab, pytest.mark.slow]

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PLAYBOOK = "playbooks/rdma.yml"
RETEST_MARK = "Plan the retests of the failing pairs"
# A hung side is stopped at its deadline: long enough for a healthy pair's test on a busy machine (the tests
# run 2 s), short, so that the test waits a few seconds for it and not a quarter of a minute.
HUNG_DEADLINE = 8
BASE_VARS = {"commcheck_rdma_ops": ["write"], "commcheck_rdma_metrics": ["bw"], "commcheck_rdma_duration": 2,
             "commcheck_min_fraction": LAB_MIN_FRACTION, "commcheck_cpu_governor": "",
             "commcheck_retest_repeats": 1}


def run_check(lab, tmp_path, extra=None, on_line=None, playbook=PLAYBOOK):
    """ansible-playbook rdma.yml with the history callback; on_line(line) sees the output as it comes."""
    history = tmp_path / "history"
    started = time.monotonic()
    proc = lab.ansible_playbook(playbook, extra_vars=dict(BASE_VARS, **(extra or {})), env=history_env(history),
                                on_line=on_line or (lambda _line: None))
    return proc.returncode, proc.stdout, read_history(history), time.monotonic() - started


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


@pytest.mark.full
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


def counter_value(lab, host, device, counter):
    path = os.path.join(lab.lab.sysfs_root(host), "class", "infiniband", device, "ports", "1", "counters", counter)
    with open(path) as handle:
        return int(handle.read().strip())


def seed_port_counters(history_dir, runs):
    """Earlier runs written into the history, as the callback writes them: runs is a list of
    {(host, device): {counter: value}}, oldest first, the last one a minute before now."""
    now = history.utc_now()
    for num, ports in enumerate(runs):
        records = [{"kind": "port_counters", "host": host, "peer": None,
                    "params": {"check": "rdma_perf", "device": device, "port": 1}, "metrics": dict(values),
                    "verdict": "pass"} for (host, device), values in sorted(ports.items())]
        history.append_records(str(history_dir), history.normalize_records(records)[0], "seeded-%d" % (num + 1),
                               when=now - datetime.timedelta(minutes=len(runs) - num), fsync=False)


def test_counters_rising_run_after_run_are_a_trend(lab, tmp_path):
    """link_downed of b's port rose before each of the last two runs: a flapping link, named by the third run.
    Two earlier runs are written into the history (records, as the callback writes them); the third is a real
    run. a's port rose too, but it has one earlier run only: two runs are no trend."""
    a, b = lab.hosts[0], lab.hosts[1]
    quick = {"commcheck_rdma_hosts": [a, b], "commcheck_rdma_pattern": "pairs", "commcheck_rdma_pairs": [[a, b]],
             "commcheck_rdma_duration": 1}
    flapping, once = counter_value(lab, b, "mlx5_0", "link_downed"), counter_value(lab, a, "mlx5_0", "link_downed")
    seed_port_counters(tmp_path / "history", [
        {(b, "mlx5_0"): {"link_downed": flapping}},
        {(b, "mlx5_0"): {"link_downed": flapping + 1}, (a, "mlx5_0"): {"link_downed": once}}])
    bump_counter(lab, b, "mlx5_0", "link_downed", 2)      # the link went down between the runs, twice
    bump_counter(lab, a, "mlx5_0", "link_downed", 1)
    rc, out, lines, _elapsed = run_check(lab, tmp_path, quick)
    assert rc == 0, out[-4000:]
    this_run = lines[-1]["run_id"]
    assert this_run not in ("seeded-1", "seeded-2")
    trends = [r for r in lines if r.get("kind") == "finding" and r["params"].get("finding") == "counter_trend"]
    assert [(r["host"], r["params"]["device"], r["params"]["counter"], r["run_id"]) for r in trends] == [
        (b, "mlx5_0", "link_downed", this_run)]
    assert trends[0]["cause"].startswith("flapping link on %s mlx5_0/1: link_downed rose in 2 of the last 2" % b)
    assert trends[0]["metrics"]["runs"] == 3 and trends[0]["metrics"]["increase"] == 2
    assert_nothing_left(lab)


@pytest.mark.full
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


@pytest.mark.full
def test_hung_server_never_blames_another_host(lab, tmp_path):
    hung = lab.hosts[0]
    fault = faults.HungSide(lab.lab, hung, "server")
    fault.inject()
    try:
        rc, out, lines, _elapsed = run_check(lab, tmp_path, {"commcheck_rdma_timeout": HUNG_DEADLINE})
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


@pytest.mark.full
def test_hung_client_names_the_client_host(lab, tmp_path):
    # issue 14: a client stopped before it connected printed what a server hung after its banner prints (the
    # server listened, the client said nothing); the runner found the client's process stopped at its deadline
    hung = lab.hosts[1]
    fault = faults.HungSide(lab.lab, hung, "client")
    fault.inject()
    try:
        rc, out, lines, _elapsed = run_check(lab, tmp_path, {"commcheck_rdma_timeout": HUNG_DEADLINE})
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
