# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The loopback pattern end to end: real ansible-playbook over real SSH into lab hosts with two rails each.

A loopback pair is one host's rail 0 against its rail 1, server and client on the host itself. In the lab the
perftest EMULATOR carries its data between the two rails' addresses of one network namespace, which the kernel
keeps in the host (over ``lo``): like a real loopback, it never crosses the links the lab shapes between hosts.

- one host alone gets an RDMA check (fast tier: the behaviour is new, the lab small);
- a host slowed towards every other host (the lab's shaping of its rails' links) is the host for a mesh run
  alone, while its NICs pass with each other: the two runs' records together name its rails, not the host.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import pytest

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


@pytest.mark.full
def test_a_host_slow_towards_every_other_host_whose_nics_pass_with_each_other_is_not_the_host(lab_factory, tmp_path):
    lab = lab_factory("loopbk3", hosts=3, rails=2)
    slow = lab.hosts[1]
    lab.slow(slow, rate=slow_rate(lab))
    try:
        mesh, mesh_lines, _elapsed = run_with_history(lab, PLAYBOOK, tmp_path / "mesh", dict(VARS))
        loop, loop_lines, _elapsed = run_with_history(lab, PLAYBOOK, tmp_path / "loop",
                                                      dict(VARS, commcheck_rdma_pattern="loopback"))
    finally:
        lab.heal()
    assert mesh.returncode == 0, mesh.stdout[-3000:] + mesh.stderr[-2000:]
    assert loop.returncode == 0, loop.stdout[-3000:] + loop.stderr[-2000:]
    # alone, the mesh run names the host
    assert bad_nodes(mesh_lines) == [slow]
    loops = first_pass(loop_lines)
    assert sorted(r["host"] for r in loops) == sorted(lab.hosts)
    assert all(r["verdict"] in HEALTHY_VERDICTS and r["host"] == r["peer"] for r in loops), [
        (r["host"], r["verdict"], r["cause"]) for r in loops]
    assert not bad_nodes(loop_lines)
    # together: its NICs pass with each other, so its rails (ports, cables, switch ports), not the host
    result = ll.localize_records(first_pass(mesh_lines) + loops)
    assert result["summary"]["hosts"] == [], result["summary"]
    assert sorted(result["summary"]["rails"]) == ["%s:mlx5_0" % slow, "%s:mlx5_1" % slow]
    assert "NICs pass with each other" in result["primary"]["cause"]
    assert_nothing_left(lab)
