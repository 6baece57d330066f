# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Designed retests end to end (issue 36): the 4-host, 2-rail lab tested in a ring with two opposite hosts slowed.

Every link of the ring then has one slow end: no host passed with anyone on either rail, so no known-good partner
exists. The retests pair the two diagonals the ring never measured (control: non-suspects with each other; cross:
suspects with each other): the slowed pair fails, the healthy pair passes, so the two hosts are named, not the
rails' fabric. Real ansible-playbook over real SSH, the perftest emulator shaped by tc (faults.SlowHost twice).

A ring of six with three alternate hosts slowed needs a second, designed pass: after the first retest pass the
host between two slowed ones failed only with them, so the roles' retest loop measures it with a cleared host
(``retest_pass`` 2, ``partner``), and the three hosts are named each on its own.

Full tier (a lab run of its own; the product behaviour is pinned by tests/unit/test_retest_design.py). About
1.5 minutes each on the 2-core build machine.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os
import time

import pytest

import faults
from lab_checks import LAB_MIN_FRACTION, assert_nothing_left, history_env, read_history, slow_rate

pytestmark = [pytest.mark.lab, pytest.mark.slow, pytest.mark.full]

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RING_VARS = {"commcheck_rdma_ops": ["write"], "commcheck_rdma_metrics": ["bw"], "commcheck_rdma_duration": 2,
             "commcheck_min_fraction": LAB_MIN_FRACTION, "commcheck_cpu_governor": "",
             "commcheck_retest_repeats": 1, "commcheck_rdma_pattern": "ring", "commcheck_retest_rounds": 2}


@pytest.fixture(name="lab")
def fixture_lab(lab4):
    lab4.heal()
    yield lab4
    lab4.heal()


def run_ring(lab, tmp_path, slowed_hosts):
    """rdma.yml over a ring of the lab's hosts with ``slowed_hosts`` slowed: (the playbook's process, its history
    lines, the components the check named as (component, host))."""
    slowed = [faults.SlowHost(lab.lab, host, slow_rate(lab)) for host in slowed_hosts]
    for fault in slowed:
        fault.inject()
    try:
        proc = lab.ansible_playbook("playbooks/rdma.yml", extra_vars=RING_VARS,
                                    env=history_env(tmp_path / "history"), on_line=lambda _line: None)
    finally:
        for fault in slowed:
            fault.heal()
    lines = read_history(tmp_path / "history") if proc.returncode == 0 else []
    named = sorted((r["params"]["component"], r["host"]) for r in lines if r.get("kind") == "finding"
                   and r["params"].get("check") == "rdma_perf" and r["params"].get("component"))
    return proc, lines, named


def test_two_opposite_slow_hosts_of_a_ring_are_the_two_hosts_found_by_control_and_cross_pairs(lab, tmp_path):
    hosts = lab.hosts
    started = time.monotonic()
    proc, lines, named = run_ring(lab, tmp_path, [hosts[1], hosts[3]])
    assert proc.returncode == 0, proc.stdout[-4000:]
    # exactly the two slowed hosts, no fabric or fleet culprit
    assert named == sorted([("host", hosts[1]), ("host", hosts[3])]), named
    # the ring measured 4 links a rail, every one with a slowed end
    first = [r for r in lines if r.get("kind") == "rdma_bw"]
    assert len(first) == 8 and all(r["verdict"] == "fail" for r in first), [(r["host"], r["peer"]) for r in first]
    retests = [r for r in lines if r.get("kind") == "rdma_bw_retest"]
    separating = sorted((r["params"]["retest_purpose"], sorted([r["host"], r["peer"]]), r["params"]["rail"],
                         r["verdict"], r["params"]["retest_pass"]) for r in retests
                        if r["params"]["retest_purpose"] in ("control", "cross"))
    # on each rail the slowed diagonal fails and the healthy one passes, whichever the planner calls the control
    # (the first pass is symmetric); the first retest pass left nothing ambiguous
    slow_pair, good_pair = sorted([hosts[1], hosts[3]]), sorted([hosts[0], hosts[2]])
    assert sorted((pair, rail, verdict) for _p, pair, rail, verdict, _n in separating) == sorted(
        [(good_pair, 0, "pass"), (good_pair, 1, "pass"), (slow_pair, 0, "fail"), (slow_pair, 1, "fail")]), separating
    assert set(p for p, _pair, _r, _v, _n in separating) == set(["control", "cross"])
    assert set(r["params"]["retest_pass"] for r in retests) == set([1])
    assert_nothing_left(lab)
    print("ring with two opposite slowed hosts: %.0f s" % (time.monotonic() - started))


@pytest.fixture(name="lab6")
def fixture_lab6(lab_factory):
    lab = lab_factory("rt6", hosts=6, rails=1)
    lab.heal()
    yield lab
    lab.heal()


def test_three_alternate_slow_hosts_of_a_ring_of_six_take_a_designed_second_pass(lab6, tmp_path):
    hosts = lab6.hosts
    started = time.monotonic()
    proc, lines, named = run_ring(lab6, tmp_path, [hosts[1], hosts[3], hosts[5]])
    assert proc.returncode == 0, proc.stdout[-4000:]
    assert named == sorted([("host", hosts[1]), ("host", hosts[3]), ("host", hosts[5])]), named
    # pass 1: control and cross; h1 - h3 passed, so h5 (between slowed h4 and h6) is met with h1 in pass 2
    second = [(r["params"]["retest_purpose"], sorted([r["host"], r["peer"]]), r["verdict"]) for r in lines
              if r.get("kind") == "rdma_bw_retest" and r["params"]["retest_pass"] == 2]
    assert second == [("partner", sorted([hosts[0], hosts[4]]), "pass")], second
    assert "retest pass 2: 1 pair(s) not measured yet" in proc.stdout
    assert_nothing_left(lab6)
    print("ring of six with three alternate slowed hosts: %.0f s" % (time.monotonic() - started))
