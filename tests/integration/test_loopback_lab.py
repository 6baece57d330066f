# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The loopback pattern end to end: real ansible-playbook over real SSH into lab hosts with two rails each.

A loopback pair is one host's rail 0 against its rail 1, server and client on the host itself. In the lab the
perftest EMULATOR carries its data between the two rails' addresses of one network namespace, which the kernel
keeps in the host (over ``lo``): like a real loopback, it never crosses the links the lab shapes between hosts.

- one host alone gets an RDMA check, and through the one-click check, with discovery, the collective's per-node
  runs and NCCL's IB loopback (the nccl-tests EMULATOR sends between the host's ranks through its network once P2P
  and SHM are off): the fast tier's run (the behaviour is new, the lab small: about 2.5 minutes); the rdma_perf
  role alone on it is in the full tier;
- a host slowed towards every other host (the lab's shaping of its rails' links), in a mesh run with
  ``commcheck_rdma_loopback``: its NICs pass with each other, so its rails are named, not the host (which the
  pairs between hosts alone would name).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import pytest

import oneclick_helpers as oc
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import localization_loopback as ll

from lab_checks import HEALTHY_VERDICTS, LAB_MIN_FRACTION, assert_nothing_left, run_with_history, slow_rate

pytestmark = [pytest.mark.lab, pytest.mark.slow]

PLAYBOOK = "playbooks/rdma.yml"
VARS = {"commcheck_rdma_ops": ["write"], "commcheck_rdma_metrics": ["bw"], "commcheck_rdma_duration": 2,
        "commcheck_min_fraction": LAB_MIN_FRACTION}


def first_pass(lines):
    return [r for r in lines if r.get("kind") == "rdma_bw" and not r["params"].get("retest")]


def bad_nodes(lines):
    return [r["host"] for r in lines if r.get("kind") == "finding" and r["params"].get("finding") == "bad_node"]


@pytest.mark.full
def test_one_host_tests_its_two_rails_against_each_other(lab_factory, tmp_path):
    lab = lab_factory("loopbk1", hosts=1, rails=2)
    proc, lines, _elapsed = run_with_history(lab, PLAYBOOK, tmp_path, dict(VARS, commcheck_rdma_pattern="loopback"))
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    [rec] = first_pass(lines)
    assert (rec["host"], rec["peer"], rec["params"]["loopback"], rec["params"]["rails"]) == ("h1", "h1", True, [0, 1])
    assert (rec["params"]["device"], rec["params"]["peer_device"]) == ("mlx5_0", "mlx5_1")
    assert rec["verdict"] in HEALTHY_VERDICTS and rec["metrics"]["bw_gbps"] > 0, rec
    # the client reached the server on rail 0's own address, from rail 1's device
    assert any("-d mlx5_1" in line and lab.address("h1", 0) in line for line in rec["evidence"]), rec["evidence"]
    assert not bad_nodes(lines)
    assert_nothing_left(lab)


@pytest.mark.skipif(oc.mpi_missing() is not None, reason=oc.mpi_missing() or "")
def test_one_click_on_one_host_runs_its_rdma_loopback_and_the_nccl_ib_loopback(lab_factory, tmp_path):
    lab = lab_factory("loopbk1", hosts=1, rails=2)
    run = oc.oneclick(lab, tmp_path, dict(
        oc.COLLECTIVE, commcheck_checks=["discover", "rdma", "collective"], commcheck_rdma_pattern="loopback",
        commcheck_rdma_metrics=["bw"], commcheck_collective_mode="per_node", commcheck_gpus_per_node=2,
        commcheck_collective_ops=["all_reduce"], commcheck_require_accelerators=False,
        commcheck_collective_binary_dir=oc.collective_bin("nccl")))
    assert run.rc == 0, run.tail()
    [rec] = [r for r in run.records("rdma_bw") if not r["params"].get("retest")]
    assert rec["params"]["loopback"] is True and rec["verdict"] in HEALTHY_VERDICTS, rec
    assert (rec["host"], rec["peer"], rec["params"]["rails"]) == ("h1", "h1", [0, 1])
    assert any("-d mlx5_1" in line and lab.address("h1", 0) in line for line in rec["evidence"]), rec["evidence"]
    runs = [r for r in run.records("collective") if not r["params"].get("retest")]
    assert sorted(str(r["params"].get("variant")) for r in runs) == ["None", "ib_loopback"], runs
    [loop] = [r for r in runs if r["params"].get("variant") == "ib_loopback"]
    assert loop["host"] == "h1" and loop["params"]["nodes"] == 1 and loop["params"]["ranks"] == 2
    # NCCL's network between the host's own GPUs: its IB (the lab's emulated RoCE ports), the run passes
    assert loop["verdict"] in HEALTHY_VERDICTS, (loop["verdict"], loop["cause"])
    assert loop["metrics"]["transport"] == "IB", loop
    assert any("NCCL_P2P_DISABLE=1" in line and "NCCL_SHM_DISABLE=1" in line for line in loop["evidence"]), loop
    [own] = [r for r in runs if r is not loop]
    assert not any("NCCL_SHM_DISABLE" in line for line in own["evidence"]), own
    assert_nothing_left(lab)


@pytest.mark.full
def test_a_host_slow_towards_every_other_host_whose_nics_pass_with_each_other_is_not_the_host(lab_factory, tmp_path):
    lab = lab_factory("loopbk3", hosts=3, rails=2)
    slow = lab.hosts[1]
    lab.slow(slow, rate=slow_rate(lab))
    try:
        proc, lines, _elapsed = run_with_history(lab, PLAYBOOK, tmp_path, dict(VARS, commcheck_rdma_loopback=True))
    finally:
        lab.heal()
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    records = first_pass(lines)
    loops = [r for r in records if r["params"].get("loopback")]
    assert sorted(r["host"] for r in loops) == sorted(lab.hosts)
    assert all(r["verdict"] in HEALTHY_VERDICTS and r["host"] == r["peer"] for r in loops), [
        (r["host"], r["verdict"], r["cause"]) for r in loops]
    # the pairs between hosts run first, the loopback pairs on ports above theirs
    pairs = [r for r in records if not r["params"].get("loopback")]
    assert max(r["params"]["tcp_port"] for r in pairs) < min(r["params"]["tcp_port"] for r in loops)
    assert all(r["verdict"] == "fail" for r in pairs if slow in (r["host"], r["peer"])), [
        (r["host"], r["peer"], r["verdict"]) for r in pairs]
    # its NICs pass with each other: its rails (ports, cables, switch ports), not the host
    assert not bad_nodes(lines)
    nics = [r for r in lines if r.get("kind") == "finding" and r["params"].get("finding") == "bad_nic"]
    assert sorted((r["host"], r["params"]["rail"]) for r in nics) == [(slow, 0), (slow, 1)], nics
    assert all("NICs pass with each other" in r["cause"] for r in nics), nics
    # the same records without the loopback pairs name the host
    assert ll.localize_records(pairs)["summary"]["hosts"] == [slow]
    assert_nothing_left(lab)
