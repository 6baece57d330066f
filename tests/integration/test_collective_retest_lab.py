# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""End to end: the collective role retests a failing run before it blames anything (issue 36 section 4), with REAL
Open MPI mpirun over the lab's 4 hosts and the lab's nccl-tests EMULATOR (tests/lab/emulators/).

The faults are the emulator's (``faults.SlowCollectiveRuns``): every run with a rank on the slowed host reports
its times 5000 times longer; the once-only fault slows only the first run that meets it. A slowed node stays far
below its pass line, a healthy one far above it (in-node emulator runs measured 0.7-3.6 GB/s on the loaded build
machine, the pass line is 0.0075 GB/s).

- per_node: one node slowed for good, one slowed once: the first fails and is named by a finding after its
  retest failed too, the second is flaky (it passed on retest), the others pass, every retest is a record;
- pairs: one node slowed for good in a ring of four: its two pairs fail, are retested as is, and each side runs
  with the one host whose pairs passed; the node is named, its partners are not.

Fast tier: the per_node run (the role's retest tasks end to end, 50 s with the lab's start on the 2-core build
machine). Full tier (``pytest.mark.full``): the pairs run (five retests after four pairs, 2.5 minutes). The
decisions themselves are pinned by tests/unit/test_collective_retest.py; a pool without bisection is retested
there only (a healthy pool of the emulator can miss its pass line on the loaded machine, which a lab test of its
flaky verdict could not tell from the retest's own failure).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os
import shutil
import subprocess

import pytest

import faults
import oneclick_helpers as oc
from lab_checks import assert_nothing_left, run_with_history, scratch_dir

HERE = os.path.dirname(os.path.abspath(__file__))
VENV_PYTHON = os.path.join(os.path.dirname(os.path.dirname(HERE)), ".venv", "bin", "python")
SLOW = 5000
SIZES = {"commcheck_collective_min_bytes": "1M", "commcheck_collective_max_bytes": "1M",
         "commcheck_collective_iterations": 3, "commcheck_collective_warmup_iterations": 1}


def mpi_missing():
    if not shutil.which("mpirun"):
        return "Open MPI's mpirun is not installed (apt-get install openmpi-bin libopenmpi-dev)"
    proc = subprocess.run([VENV_PYTHON, "-c", "import mpi4py"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          check=False)
    return None if proc.returncode == 0 else "mpi4py is not installed in .venv"


pytestmark = pytest.mark.skipif(mpi_missing() is not None, reason=mpi_missing() or "")


@pytest.fixture(scope="module")
def binary_dir():
    """EMULATOR launchers under the real binaries' names (the lab's hosts all see this path)."""
    return oc.collective_launchers(scratch_dir("collective-retest"), "nccl", ["all_reduce"])


@pytest.fixture
def lab(lab4):
    lab4.heal()
    yield lab4
    lab4.heal()


def role_vars(lab, binary_dir, **changes):
    out = dict(SIZES, commcheck_gpus_per_node=1, commcheck_collective_binary_dir=binary_dir,
               commcheck_collective_allow_run_as_root=True, commcheck_collective_ops=["all_reduce"],
               commcheck_collective_nic_rates_gbps=[lab.rate_gbps], commcheck_collective_link_efficiency=0.5,
               commcheck_collective_min_fraction=0.15, commcheck_thresholds_history=False,
               # in-node and pair runs of the emulator share 2 busy cores: only a run far from the others is an
               # outlier of the fleet; the runs' own pass lines judge them
               commcheck_outlier_min_rel=0.9)
    out.update(changes)
    return out


def run(lab, binary_dir, tmp_path, fault_list, **changes):
    for fault in fault_list:
        fault.inject()
    try:
        proc, records, _seconds = run_with_history(lab, "playbooks/nccl.yml", tmp_path,
                                                   role_vars(lab, binary_dir, **changes))
    finally:
        for fault in fault_list:
            fault.heal()
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    return records


def runs_of(records, retest):
    return [r for r in records if r.get("kind") == "collective" and bool(r["params"].get("retest")) == retest]


def test_per_node_a_node_slow_for_good_fails_and_one_slow_once_is_flaky(lab, binary_dir, tmp_path):
    bad, once = lab.hosts[1], lab.hosts[2]
    slow_once = faults.SlowCollectiveRuns(lab.lab, once, SLOW, once=True)
    records = run(lab, binary_dir, tmp_path, [faults.SlowCollectiveRuns(lab.lab, bad, SLOW), slow_once],
                  commcheck_collective_mode="per_node", commcheck_gpus_per_node=2,
                  commcheck_collective_node_expected_busbw_gbs=0.05)
    first = dict((r["host"], r) for r in runs_of(records, False))
    assert sorted(first) == sorted(lab.hosts)
    verdicts = dict((host, rec["verdict"]) for host, rec in first.items())
    assert verdicts[bad] == "fail" and verdicts[once] == "flaky", verdicts
    assert all(verdicts[h] in ("pass", "warn") for h in lab.hosts if h not in (bad, once)), verdicts
    assert first[once]["cause"].startswith("flaky: ") and any(
        line.startswith("retest as is: pass") for line in first[once]["evidence"]), first[once]
    assert any(line.startswith("retest as is: fail") for line in first[bad]["evidence"]), first[bad]
    # one retest each of the two failing nodes, records of their own with the first pass's keys
    again = dict((r["host"], r) for r in runs_of(records, True))
    assert sorted(again) == sorted([bad, once])
    assert again[bad]["verdict"] == "fail" and again[once]["verdict"] == "pass"
    assert again[bad]["params"]["retest_purpose"] == "as_is" and again[bad]["params"]["attempt"] == 1
    assert set(again[bad]["params"]) > set(first[bad]["params"])
    found = [(r["host"], r["params"]["code"]) for r in records if r.get("kind") == "finding"]
    assert found == [(bad, "collective_node_failed_retest")], found
    [summary] = [r for r in records if r.get("kind") == "retest_summary"]
    assert summary["params"]["check"] == "collective" and summary["metrics"]["flaky_pairs"] == 1
    assert_nothing_left(lab, wait=20)


@pytest.mark.full
def test_pairs_a_slow_node_is_named_by_its_retests_with_known_good_partners(lab, binary_dir, tmp_path):
    bad = lab.hosts[2]
    records = run(lab, binary_dir, tmp_path, [faults.SlowCollectiveRuns(lab.lab, bad, SLOW)],
                  commcheck_collective_mode="pairs")
    first = runs_of(records, False)
    failing = sorted(tuple(r["params"]["hosts"]) for r in first if r["verdict"] == "fail")
    assert all(bad in pair for pair in failing) and len(failing) == 2, [(r["params"]["hosts"], r["verdict"])
                                                                        for r in first]
    retests = [(r["params"]["retest_purpose"], tuple(r["params"]["hosts"]), r["verdict"]) for r in runs_of(records, True)]
    # the one host without a failing pair is every side's known-good partner; only the slowed node's runs fail
    good = [h for h in lab.hosts if not any(h in pair for pair in failing)]
    assert len(good) == 1, (good, failing)
    assert sorted(p for p, _hosts, _v in retests) == ["as_is", "as_is", "partner", "partner", "partner"], retests
    assert all(good[0] in hosts for purpose, hosts, _v in retests if purpose == "partner"), retests
    assert all((v == "fail") == (bad in hosts) for _p, hosts, v in retests), retests
    found = [(r["host"], r["params"]["code"]) for r in records if r.get("kind") == "finding"]
    assert found == [(bad, "collective_node_failed_retest")], found
    assert_nothing_left(lab, wait=20)
