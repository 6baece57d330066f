# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What each code the planning stage can report means, and what fixes it in general (pure).

``check_plan.py`` gives a check that cannot run on a host a ``skipped`` record whose ``params.reason`` is one
of ``CHECK_SKIPPED``; ``collective_plan.py`` turns the collective module's results into ``finding`` records
with a ``params.code`` of ``COLLECTIVE_FINDINGS``. ``tools/gen_docs.py`` writes both into
docs/troubleshooting.md.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

# code -> (likely cause, fix)
CHECK_SKIPPED = {
    "probe_failed": ("The tool probe itself failed on the host (it could not look for the test tools)",
                     "Read the probe's message: the host's shell, PATH or the kubectl exec into its pod"),
    "no_rdma": ("The host has no ACTIVE RDMA port, so the RDMA check cannot run there",
                "See the host's discovery findings; leave rdma out of commcheck_checks for hosts without RDMA"),
    "tool_missing": ("A test tool is not installed on the host: a perftest tool, iperf3, the nccl-tests / hccl_test "
                     "binary (not in commcheck_collective_binary_dir) or the MPI launcher",
                     "Install the tool on every host (at the same path for the collective), or set "
                     "commcheck_collective_binary_dir / commcheck_collective_mpirun"),
    "no_accelerator": ("No GPU (NCCL) or NPU (HCCL) was found on the host: no driver, device node, smi tool or "
                       "accelerator PCI function", "Run the collective check on GPU/NPU nodes, or set "
                       "commcheck_require_accelerators=false for CPU-only test builds"),
    "no_peer": ("Only one host can run the pair check: a pair needs two",
                "Fix the other hosts' reasons (their skipped records), or add hosts"),
}

COLLECTIVE_FINDINGS = {
    "collective_node_bisected": ("Bisection named the node: runs that include it are bad, runs without it are good",
                                 "Check the node's NICs, GPUs and links (its RDMA and discovery results); with "
                                 "component config, its NCCL / RDMA setup (it fell back to sockets)"),
    "collective_node_named_by_launcher": ("mpirun's own errors name the node (ssh to it failed, a rank died there)",
                                          "Read the run's cause: make the node reachable for mpirun (ssh, the MPI "
                                          "agent) and check why its rank died"),
    "collective_host_unreachable": ("The host was unreachable for Ansible and was left out of the collective runs",
                                    "Bring the host back (ssh, power, network) and run the check again"),
    "collective_node_failed_retest": ("The node's own run (per_node) failed again on retest, or its pairs fail "
                                      "with known-good partners too (pairs)",
                                      "Check the node's GPUs, NICs and links (its RDMA and discovery results)"),
    "collective_link_failed_retest": ("The pair failed again on retest while both hosts pass with known-good "
                                      "partners: the path between them",
                                      "Check the links and switch ports between the two hosts (their RDMA pair "
                                      "results)"),
}
