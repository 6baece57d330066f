# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What each finding the verdicts stage can publish means, and what fixes it in general (pure).

A ``finding`` record names its kind in ``params.finding`` (or ``params.code``) and carries its own cause and
fix for the hosts, rails and links it names; these are each code's general words, one line each, for
docs/troubleshooting.md (``tools/gen_docs.py``).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

# code -> (likely cause, fix): the culprits of the pair checks and their localization
CULPRIT_FINDINGS = {
    "bad_node": ("Most links of the host are bad on every rail: what all its NICs share (PCIe, NUMA, CPU, "
                 "firmware, memory)", "Take the host out of the pool; check its PCIe links (lspci -vv), NUMA "
                 "placement, CPU governor and load, firmware and driver versions; compare with a good host"),
    "bad_nic": ("The host's links are bad on one rail only: that NIC, its port, cable or switch port",
                "Check that NIC's port and cable (ibstat / ethtool, error counters), its switch port, PCIe link "
                "and firmware"),
    "bad_link": ("One pair's link is bad while both hosts pass with others: the path between them",
                 "Check the cables, transceivers and switch ports between the two hosts (error counters, speed); "
                 "reseat or replace, then rerun the pair"),
    "fabric": ("Pairs that share no host fail on the same rail while each host passes with others: the switch "
               "fabric of that rail", "Check the rail's spine and inter-switch links, ECMP hashing, routing, PFC / "
               "ECN and buffer settings, not the hosts"),
    "fleet": ("Every host of the rail is affected: the expectation, the test parameters or the rail's switch",
              "Check the expected bandwidth (link rate x efficiency), the test parameters and the rail's switch "
              "(configuration, firmware, PFC / MTU) before blaming hosts"),
    "flaky": ("A transient slowdown: the component failed once and passed on retest",
              "Watch the error counters and the history of these ports; a component flaky run after run is failing"),
    "unreachable": ("The host was unreachable for Ansible during the check; its pairs did not run",
                    "Make the host reachable (ssh, inventory address) and rerun the check"),
    "module_killed": ("The host's test module was killed (signal 9, e.g. the OOM killer) before it returned: its "
                      "pairs have no result, which says nothing about its NICs or links",
                      "Read the host's kernel log for the OOM killer (dmesg, journalctl -k: 'Out of memory: Killed "
                      "process') and what else used its memory, then rerun; the run put back the CPU governors the module had switched"),
    "governor_unmanaged": ("The CPU governor could not be switched for the tests on the host or pod: its sysfs is "
                           "read-only (a pod that is not privileged), it may not write the governor files, or it has "
                           "no cpufreq; the tests ran at the governors it has (named in the finding, a warn record "
                           "of the history once per host and check)",
                           "Run the test pods privileged (a writable /sys), or set the nodes' governor with their "
                           "own tuning (a DaemonSet running cpupower frequency-set -g performance, or a tuned "
                           "profile)"),
    "rail_missing": ("A host lacks a rail (an RDMA device or port) that its peers have; it is a discovery finding "
                     "with code rdma_rail_missing", "Check that the NIC is there and up (ibv_devinfo, lspci, dmesg), "
                     "its driver and cable; in Kubernetes that the pod gets that device"),
    "rdma_rail_missing": ("The code of the rail_missing finding: a host lacks a rail its peers have",
                          "See rail_missing"),
    "gpudirect_slow": ("GPU-memory RDMA runs well below host-memory RDMA on the same link: GPUDirect RDMA is not "
                       "used or crosses a slow path", "Load nvidia_peermem (or use DMA-BUF), keep NIC and GPU on one "
                       "PCIe switch / NUMA node, check the IOMMU and ACS settings"),
    "gpudirect_gpu_slow": ("One GPU's GPU-memory RDMA reads below the other GPUs tested over the same rail (robust z, "
                           "commcheck_outlier_z) or fails with most of its peers after the retests, while host memory "
                           "on its NIC is fine: that GPU's PCIe path to the NIC is slow, not the NIC or the host (the "
                           "finding names the GPU index, PCI address and gpu_path; a warning while none of its pairs "
                           "failed)", "Check the GPU's PCIe link "
                           "(lspci -vv LnkSta against LnkCap, nvidia-smi -q -d PCIE), nvidia-smi topo -m between it "
                           "and the NIC, ACS on the PCIe switch; reseat or replace the GPU"),
    "gpudirect_unavailable": ("GPU-memory RDMA could not run on the host (no GPU visible to perftest, no CUDA "
                              "perftest, no peer-memory module)", "Use a CUDA build of perftest and load "
                              "nvidia_peermem, or leave GPUDirect out (commcheck_rdma_gpudirect=false)"),
    "latency_tail": ("A latency pair's 99th percentile stands out of its fleet's while its median is normal: the "
                     "pair stalls now and then (CPU frequency scaling or C-states, interrupts on a busy or far core, "
                     "PFC pause storms, congestion)", "Set the performance CPU governor and limit C-states, pin the "
                     "NIC's interrupts to its NUMA node's cores, read the pause / ECN counters on the path; a tail "
                     "that follows one host through its pairs is that host"),
    "counter_trend": ("A port's error counters (link_downed, symbol errors) rose over the last runs: a flapping or "
                      "marginal link", "Check and replace the cable or transceiver; watch the switch port's counters"),
    "version_mismatch": ("The hosts run different versions of a test tool (perftest, iperf3, nccl-tests, NCCL, MPI)",
                         "Install one version on every host; results of mixed versions do not compare"),
}

# code -> (likely cause, fix): the RoCE preflight of a pair (verdicts/roce_consistency.py)
ROCE_FINDINGS = {
    "link_layer_mismatch": ("The two ports have different link layers (InfiniBand vs Ethernet): they cannot talk "
                            "RDMA to each other", "Test ports of the same fabric"),
    "port_unknown": ("The discovery facts of a host do not know the tested port: the preflight was skipped",
                     "Run discovery (rdma_facts) on both hosts before the pairs"),
    "active_mtu_mismatch": ("The ports' active RDMA MTUs differ: the pair runs at the smaller one",
                            "Set the same MTU on both ports (the partition MTU, the netdevs' MTU)"),
    "netdev_mtu_mismatch": ("The ports' netdev MTUs differ", "Set the same MTU on both netdevs and every switch port on "
                                                             "the path (4200 or 9000)"),
    "gid_missing": ("No usable GID at the chosen index on a side", "Give the port's netdev an IP address and use that "
                                                                   "RoCE v2 GID index"),
    "gid_type_mismatch": ("One side uses a RoCE v1 GID, the other a RoCE v2 one: they do not connect",
                          "Use the RoCE v2 GID index on both sides (show_gids)"),
    "gid_not_roce_v2": ("Both sides use RoCE v1 GIDs: not routable, no DSCP-based QoS",
                        "Use the RoCE v2 GID indexes for tests and jobs"),
    "gid_family_mismatch": ("One side uses an IPv4 GID, the other an IPv6 one", "Use GIDs of the same address family "
                                                                                "on both sides"),
    "gid_subnet_mismatch": ("A GID's address is outside the RDMA subnet, or the two are in different subnets (works "
                            "only where the fabric routes RoCE v2)", "Choose the GIDs of the addresses in the RDMA "
                            "subnet (commcheck_subnet), or check the routing"),
    "traffic_class_mismatch": ("The hosts' RoCE traffic class differs: the two directions use different priorities, "
                               "so PFC or ECN may protect only one", "Set the same traffic class on both hosts"),
    "roce_tos_mismatch": ("The hosts' RDMA CM default ToS differs: the two directions use different priorities",
                          "Set the same default ToS (cma_roce_tos) on both hosts"),
}
