# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What each code discovery can report means, and what fixes it in general (pure).

A finding carries its own message and fix for its device and port (``findings.py``, ``cross_check.py``,
``numa.py``); these catalogs give each code's general cause and fix, one line each, for the reader who
meets the code in a report, the history or a task's output. ``tools/gen_docs.py`` writes them into
docs/troubleshooting.md; tests/unit/test_troubleshooting_codes.py fails when code emits a code that is in
no catalog.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

# code -> (likely cause, fix)
DISCOVERY_FINDINGS = {
    "port_down": ("The port is DOWN: no link partner (cable, transceiver, peer port), a disabled port, or, with the "
                  "physical link up, a logical state that keeps it down (an SR-IOV VF, no subnet manager)",
                  "Check the cable and the peer port (mlxlink -d DEV -m), bring up its netdev (ip link set NETDEV up); "
                  "for a VF let its link state follow the PF; on InfiniBand check the subnet manager (sminfo)"),
    "port_not_active": ("The port is INIT or ARMED: the link is up but not activated (InfiniBand: no subnet "
                        "manager activated it)", "Start or check the subnet manager (opensm, or the switch's SM); "
                        "on Ethernet check the netdev and the driver (dmesg)"),
    "port_state_unknown": ("The port's state file cannot be read",
                           "Check that the RDMA driver is loaded and healthy (dmesg)"),
    "phys_state_polling": ("The physical state is Polling: the port looks for a link partner and finds none",
                           "Reseat or replace the cable/transceiver and check that the peer (switch) port is "
                           "enabled; mlxlink -d DEV -m shows cable and lane details"),
    "rate_below_expected": ("The active port runs below the expected link rate: fewer lanes or a lower speed "
                            "negotiated", "Check the cable, the switch port speed and mlxlink -d DEV (FEC, width)"),
    "rate_inconsistent": ("An active port runs slower than like ports (same HCA type and link layer) of the same host",
                          "Check the cable and switch port of that link; set expected_rate_gbps to judge against a "
                          "fixed rate"),
    "no_roce_v2_gid": ("A RoCE port has no RoCE v2 GID with an IPv4 address (in the subnet given): its netdev has no "
                       "address, or in a pod the device and its netdev are not in the pod's namespace",
                       "Give the port's netdev an IPv4 address (the kernel then adds the RoCE v2 GID); in a pod "
                       "attach the RDMA device with its netdev"),
    "multiple_roce_v2_gids": ("The port has several RoCE v2 IPv4 GIDs and no subnet chose among them",
                              "Set the subnet (commcheck_subnet) of the network the tests use"),
    "gid_address_mismatch": ("The GIDs' IPv4 addresses are not the addresses of the port's netdev",
                             "Check that the addresses are on the port's netdev itself (not only on an upper device) "
                             "and the RDMA driver"),
    "no_netdev": ("A RoCE or iWARP port has no network device", "Check the NIC driver (mlx5_core) and that the netdev "
                                                                "is in this network namespace"),
    "netdev_down": ("The port is ACTIVE but its netdev is not up", "ip link set NETDEV up, and check its addresses"),
    "roce_mtu_small": ("The netdev's MTU limits the RoCE path MTU below 4096 bytes",
                       "Use an MTU of at least 4200 (jumbo frames, e.g. 9000) on hosts and switches"),
    "port_error_counters": ("symbol_error / link_downed counted since boot: a marginal cable or transceiver",
                            "Watch the counters during the tests (commcheck_rdma_counters); replace the cable if they "
                            "rise"),
    "bond_device": ("The device is a RoCE LAG (bond): one slave carries each connection",
                    "Run with several QPs (perftest -q) to use both slaves"),
    "bond_slave_down": ("A slave of the device's bond is down", "Check the cables and switch ports of the slaves"),
    "pcie_link_degraded": ("The NIC's PCIe link trained below what the card supports (slot, riser, seating or BIOS); "
                           "an error when what is left is below the port's rate, an info in a virtual machine",
                           "Reseat the card or move it to a slot of its width and generation; check the riser and "
                           "the BIOS PCIe settings; lspci -vv shows LnkCap and LnkSta"),
    "iommu_translated": ("The NIC's DMA goes through IOMMU translation (group type DMA / DMA-FQ): RDMA loses "
                         "bandwidth to IOTLB misses and GPUDirect RDMA may fail",
                         "Boot with iommu=pt (with intel_iommu=on / amd_iommu=on where it must stay on), or disable "
                         "the IOMMU where nothing needs it"),
    "no_rdma_devices": ("No RDMA device under the sysfs root: the RDMA driver is not loaded, or a pod was not given "
                        "the device", "Load the NIC's RDMA driver (mlx5_core + mlx5_ib, ib_uverbs); in a pod request "
                        "the RDMA device resource or use host networking"),
    "rdma_netns_exclusive": ("The RDMA subsystem is in exclusive network-namespace mode: only devices moved into this "
                             "namespace are visible (an error when there is none)",
                             "Move a device into the namespace (rdma dev set DEV netns NS) or switch the host to "
                             "shared mode (rdma system set netns shared)"),
    "memlock_limited": ("RLIMIT_MEMLOCK is limited: large RDMA buffers fail to register unless the process holds "
                        "CAP_IPC_LOCK", "Set memlock to unlimited (limits.d, LimitMEMLOCK=infinity, "
                        "--ulimit memlock=-1)"),
    "ipc_lock_missing": ("The process lacks CAP_IPC_LOCK and memlock is limited: memory registration beyond the limit "
                         "fails (perftest Couldn't allocate MR, NCCL ibv_reg_mr failed)",
                         "Give the test processes CAP_IPC_LOCK (pod securityContext capabilities add IPC_LOCK) or "
                         "raise memlock to unlimited"),
    "cpu_governor_not_performance": ("CPUs are not on the performance governor: latency and bandwidth vary",
                                     "Let the tests hold commcheck_cpu_governor (performance), or cpupower "
                                     "frequency-set -g performance"),
    "perftest_missing": ("perftest is not installed: the RDMA tests cannot run", "Install perftest or use an image "
                                                                                 "that has it"),
    "gpudirect_module_missing": ("NVIDIA GPUs are present but neither nvidia_peermem nor nv_peer_mem is loaded: "
                                 "GPUDirect RDMA is off unless DMA-BUF is used",
                                 "modprobe nvidia_peermem (load it at boot), or use DMA-BUF (NCCL_DMABUF_ENABLE=1)"),
    "tool_mismatch": ("An RDMA tool (ibdev2netdev, ibstat, ibv_devinfo, rdma, show_gids) says something else than "
                      "sysfs: the state changed between the reads, or the tool reads another namespace or device set",
                      "Rerun discovery and compare the tool with /sys/class/infiniband"),
    "verbs_devices_missing": ("libibverbs (ibv_devinfo) sees no device while sysfs has some: user-space RDMA (perftest, "
                              "NCCL) cannot open them", "Install the verbs providers matching the driver (rdma-core, "
                              "MLNX_OFED/DOCA), load ib_uverbs, and in a pod mount /dev/infiniband"),
    "numa_mismatch": ("The NIC and the GPU a test uses are on different NUMA nodes: GPUDirect traffic crosses the "
                      "inter-socket link", "Test and run jobs with a GPU on the NIC's NUMA node or PCIe switch "
                      "(nvidia-smi topo -m)"),
    "not_pinned": ("A test process could not be pinned to its NIC's NUMA node (numactl missing, cpulist unreadable)",
                   "Install numactl, or accept the scheduler's placement"),
}

# The errors of reading sysfs (``sysfs_snapshot``): code -> (likely cause, fix)
SYSFS_ERRORS = {
    "no_root": ("The sysfs root given (sysfs_root, commcheck_sysfs_root) is not a directory",
                "Give the directory that holds class/infiniband (/sys, or a copy)"),
    "dump_failed": ("The sysfs dump through kubectl exec failed in the pod (no sh or find there, or the exec failed)",
                    "Check kubectl exec into the pod by hand; the image needs a POSIX sh"),
    "no_header": ("What came back is not a commcheck sysfs dump", "Check the pod's shell and what kubectl exec prints"),
    "truncated": ("The sysfs dump ended before its end marker (the exec was cut or timed out)",
                  "Rerun; raise the timeout on a slow API server"),
}
