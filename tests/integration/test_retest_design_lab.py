# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Designed retests end to end (issue 36): the 4-host, 2-rail lab tested in a ring with two opposite hosts slowed.

Every link of the ring then has one slow end: no host passed with anyone on either rail, so no known-good partner
exists. The retests pair the two diagonals the ring never measured (control: non-suspects with each other; cross:
suspects with each other): the slowed pair fails, the healthy pair passes, so the two hosts are named, not the
rails' fabric. Real ansible-playbook over real SSH, the perftest emulator shaped by tc (faults.SlowHost twice).

Full tier (a lab run of its own; the product behaviour is pinned by tests/unit/test_retest_design.py). About
1.5 minutes on the 2-core build machine.
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


def test_two_opposite_slow_hosts_of_a_ring_are_the_two_hosts_found_by_control_and_cross_pairs(lab, tmp_path):
    hosts = lab.hosts
    slowed = [faults.SlowHost(lab.lab, hosts[1], slow_rate(lab)), faults.SlowHost(lab.lab, hosts[3], slow_rate(lab))]
    for fault in slowed:
        fault.inject()
    started = time.monotonic()
    try:
        proc = lab.ansible_playbook("playbooks/rdma.yml", extra_vars=RING_VARS,
                                    env=history_env(tmp_path / "history"), on_line=lambda _line: None)
    finally:
        for fault in slowed:
            fault.heal()
    assert proc.returncode == 0, proc.stdout[-4000:]
    lines = read_history(tmp_path / "history")
    named = sorted((r["params"]["component"], r["host"]) for r in lines if r.get("kind") == "finding"
                   and r["params"].get("check") == "rdma_perf" and r["params"].get("component"))
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
