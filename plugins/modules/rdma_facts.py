#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
module: rdma_facts
short_description: Discover RDMA devices, ports, GIDs and what is wrong with them
version_added: 1.0.0
description:
  - Reads C(/sys/class/infiniband) (and the few other sysfs files RDMA depends on) directly, so it
    works where the MLNX_OFED tools C(ibdev2netdev) and C(show_gids) are absent, and returns every
    RDMA device with its ports, link state, rate, netdev and GID table as the fact C(commcheck_rdma).
  - Chooses the GID index tests should use for each port, the RoCE v2 GID whose IPv4 address is the
    netdev's address (O(subnet) chooses among several), none for InfiniBand unless O(ib_gid_index) asks.
  - Reports findings with a severity, the device and port, a message and a fix, for example
    C(no_rdma_devices), C(port_down), C(phys_state_polling), C(rate_below_expected), C(pcie_link_degraded)
    (the NIC's PCIe link trained below the card's speed or width; an error when what is left is below its
    port's rate, an info in a virtual machine), C(iommu_translated) (the NIC's DMA goes through IOMMU
    translation, not passthrough), C(no_roce_v2_gid),
    C(rdma_netns_exclusive), C(memlock_limited), C(ipc_lock_missing), C(cpu_governor_not_performance),
    C(perftest_missing), C(gpudirect_module_missing), C(tool_mismatch).
  - When C(ibdev2netdev), C(ibstat), C(ibv_devinfo), C(rdma) or C(show_gids) are installed it also runs
    them and reports where they disagree with sysfs.
  - With the C(kubectl) transport one C(kubectl exec) runs a fixed shell script that dumps the sysfs
    files; the parsing happens where the module runs.
  - Changes nothing.
author:
  - commcheck developers (@clusterops)
extends_documentation_fragment:
  - clusterops.commcheck.transport
options:
  sysfs_root:
    description:
      - The directory that stands for C(/sys) (on the target, or inside the pod with the C(kubectl) transport).
        An absolute path without C(..) components.
    type: path
    default: /sys
  expected_rate_gbps:
    description:
      - Link rate in Gb/s every ACTIVE port should run at (above 0, at most 100000); slower ports get a
        C(rate_below_expected) finding.
      - When not set, ports of the same adapter type that run slower than their peers on the host get a
        C(rate_inconsistent) finding instead.
    type: float
  subnet:
    description:
      - IPv4 network in CIDR form (for example C(10.10.0.0/16)); the chosen RoCE GID is the RoCE v2 GID
        whose IPv4 address is in it. Use it when a netdev (or a VLAN on it) has several addresses.
    type: str
  ib_gid_index:
    description:
      - GID index to report for InfiniBand ports (when that slot is in use), 0 to 255. InfiniBand needs none,
        so by default their C(gid_index) is null.
    type: int
  tools:
    description:
      - Whether to run C(ibdev2netdev), C(ibstat), C(ibv_devinfo), C(rdma link) and C(show_gids) (those
        installed) and cross-check them with sysfs, and C(lldpctl) and C(smpquery) for each port's leaf switch
        (RV(ansible_facts.commcheck_rdma.topology)), with C(iblinkinfo) and C(ibnetdiscover) for the InfiniBand ports
        C(smpquery) did not place.
      - When not set, they run only if O(sysfs_root) is C(/sys) (with another root the tools would describe
        a different tree).
    type: bool
  topology_tools:
    description:
      - Whether to ask C(lldpctl) and C(smpquery) (those installed) which leaf switch each port is cabled to
        (RV(ansible_facts.commcheck_rdma.topology)), whatever O(tools) says about the cross-check tools.
      - They ask lldpd and the switches about the ports' netdevs and devices, not sysfs; V(true) fits a host
        whose O(sysfs_root) is its own sysfs mounted elsewhere.
      - When not set, they run where O(tools) runs the cross-check tools.
    type: bool
  address_source:
    description:
      - Where the netdevs' IPv4 addresses come from.
      - V(ip) runs C(ip -j -4 addr show) (C(ip -o -4 addr show) on old iproute2); V(gids) reads them from
        the IPv4-mapped GIDs.
      - V(auto) uses V(ip) when O(sysfs_root) is C(/sys) and C(ip) exists, else V(gids).
    type: str
    choices: [auto, ip, gids]
    default: auto
  timeout:
    description:
      - Deadline in seconds for reading sysfs (the dump command with the C(kubectl) transport), and for O(probe),
        1 to 86400.
    type: int
    default: 60
  facts:
    description:
      - Whether what was found is set as the fact C(commcheck_rdma) (V(true)) or only returned as
        RV(commcheck_rdma) (V(false)), for a later reading, such as port counters after a test, that must not
        replace the facts of the discovery.
    type: bool
    default: true
  probe:
    description:
      - Also look for these test tools and accelerator evidence, through the same transport, as the
        M(clusterops.commcheck.tool_probe) module does (the same script and keys),
        so that discovery and the tool probe cost one module run. The outcome is RV(probe), not a fact.
      - Each key is C(cmd:NAME) (on PATH; a NAME with a slash must be an executable file) or C(exists:/PATH).
    type: list
    elements: str
    default: []
  devices:
    description:
      - Whether to discover the RDMA devices. V(false) runs only O(probe), for a run that checks no RDMA
        (the one-click check with only TCP). Nothing is then read from sysfs, no fact is set and
        RV(commcheck_rdma) is not returned.
    type: bool
    default: true
  fail_on:
    description:
      - Fail the host when it has findings of this severity or worse (V(error), V(warning)); V(never) only
        reports them. What was found is still returned (RV(commcheck_rdma), RV(ansible_facts) in the
        registered result), so that the records of a failed host can still be published.
    type: str
    choices: [error, warning, never]
    default: never
  role_options:
    description:
      - Take the options from this host's variables, as the discover role does
        (O(sysfs_root) from C(commcheck_sysfs_root), O(expected_rate_gbps) from C(commcheck_expected_rate_gbps)
        else the inventory's C(expected_rate_gbps), O(subnet), O(ib_gid_index), O(tools), O(address_source),
        O(transport), O(kubectl), O(fail_on) from their C(commcheck_) variables, see docs/variables.md). A variable
        that is null, or an empty O(subnet) or O(kubectl), leaves the option unset; one that is set replaces the task's own value.
      - O(probe) and O(devices) then come from the one-click role's C(commcheck_oneclick_probe_keys) and
        C(commcheck_oneclick_discover_devices) when it sets them. The action plugin reads them on the controller.
    type: bool
    default: false
  keep_facts:
    description:
      - Whether a host that already has the facts of a discovery (C(ansible_facts.commcheck_rdma)) keeps them;
        there the run is a later reading (O(facts=false), O(tools=false), the port counters before a test, as the
        rdma_perf role reads them); elsewhere it discovers as without it, and asks the leaf switches
        (O(topology_tools)) as the discover role would when the task does not say and this host's
        C(commcheck_discover_topology_tools) is set, so a pair-check role run alone localizes by the same
        topology as the one-click check. The action plugin decides on the controller.
    type: bool
    default: false
    version_added: 1.1.0
attributes:
  check_mode:
    support: full
    description: It only reads; check mode runs the same reads.
  facts:
    support: full
    description: Sets C(ansible_facts.commcheck_rdma) (unless O(facts=false) or O(devices=false)).
  platform:
    support: full
    platforms: posix
    description: Linux hosts (it reads sysfs), or pods through O(transport=kubectl).
notes:
  - Unused GID slots (all-zero GIDs, type files the kernel refuses to read) are skipped.
  - The memlock limit is read from C(/proc/self/limits) through the transport, so in a pod it is the pod's limit.
  - CAP_IPC_LOCK (bit 14 of C(CapEff) in C(/proc/self/status), read the same way) lifts that limit for RDMA
    memory registration; without it and with a limited memlock the finding is C(ipc_lock_missing).
seealso:
  - module: clusterops.commcheck.cpu_governor
'''

EXAMPLES = r'''
- name: Discover RDMA hardware
  clusterops.commcheck.rdma_facts:
    expected_rate_gbps: 400

- name: Choose the RoCE GID on the storage network
  clusterops.commcheck.rdma_facts:
    subnet: 10.20.0.0/16

- name: Print the GID index of each port
  ansible.builtin.debug:
    msg: "{{ ansible_facts.commcheck_rdma.gid_index }}"

- name: Discover inside a test pod
  clusterops.commcheck.rdma_facts:
    transport: kubectl
    kubectl:
      namespace: commcheck
      pod: commcheck-run1-node1
  delegate_to: localhost

- name: Discover, and fail the hosts that have a finding of severity error
  clusterops.commcheck.rdma_facts:
    fail_on: error

- name: Discover, and look for perftest and iperf3 in the same module run
  clusterops.commcheck.rdma_facts:
    probe: [cmd:ib_write_bw, cmd:iperf3]
  register: discovered

- name: Only look for iperf3 (a run that checks no RDMA)
  clusterops.commcheck.rdma_facts:
    devices: false
    probe: [cmd:iperf3]

- name: Read the port counters again after a test, keeping the discovery's facts
  clusterops.commcheck.rdma_facts:
    tools: false
    facts: false
  register: counters_after

- name: Read a saved sysfs tree without running the host's tools
  clusterops.commcheck.rdma_facts:
    sysfs_root: /tmp/node1-sys
    tools: false
'''

RETURN = r'''
ansible_facts:
  description: Facts set by the module.
  returned: when O(facts) and O(devices) are true (the defaults)
  type: complex
  contains:
    commcheck_rdma:
      description: What was found.
      returned: always
      type: complex
      contains:
        devices:
          description:
            - RDMA devices, sorted by name, each with C(name), C(hca_type), C(fw_ver), C(node_guid),
              C(board_id), C(sys_image_guid), C(node_desc), C(node_type) (C(CA), C(RNIC) for iWARP, C(unspecified)
              for AWS EFA; null where sysfs does not say), C(numa_node), C(local_cpulist) (the CPUs near the
              device), C(pci), C(pci_path) (PCI functions from the root port down, when sysfs shows them),
              C(pcie) (null, or the PCIe link C(speed_gts), C(width), C(max_speed_gts), C(max_width); null
              where the kernel does not say, as for a VF), C(iommu) (the type of its IOMMU group, C(identity)
              for passthrough, C(DMA) or C(DMA-FQ) for translation; null without one), C(bond) (null or C(netdev), C(slaves), C(mode)) and C(ports).
            - Each port has C(port) (int), C(state) (C(ACTIVE), C(DOWN), C(INIT), C(ARMED)), C(phys_state)
              (C(LinkUp), C(Polling), C(Disabled), ...), C(link_layer) (C(Ethernet), C(InfiniBand), or C(Unknown)
              for a device such as AWS EFA), C(fabric) (C(InfiniBand), C(RoCE), C(iWARP) or C(other); the RoCE GID
              and netdev checks apply to C(RoCE) ports only),
              C(rate_gbps), C(rate) (the kernel's text), C(lid), C(sm_lid), C(netdev), C(netdev_state),
              C(netdev_mtu), C(active_mtu) (from C(ibv_devinfo) when it ran), C(ipv4) (addresses),
              C(gids) (C(index), C(gid), C(type) C(IB/RoCE v1) or C(RoCE v2), C(netdev), C(ipv4) or null),
              C(gid_index), C(gid_reason), C(counters) and C(hw_counters) (error and RoCE congestion
              counters), C(traffic_class) (mlx5 C(tc/<port>/traffic_class), null when unset or unreadable),
              C(roce_tos) (rdma_cm configfs C(default_roce_tos) or null) and, when the addresses come from C(ip),
              C(ipv4_cidr) (addresses with prefix length).
          type: list
          elements: dict
          sample:
            - name: mlx5_0
              hca_type: MT4129
              fw_ver: 28.41.1000
              node_guid: "b83f:d203:00a1:b2c4"
              board_id: MT_0000000838
              ports:
                - port: 1
                  state: ACTIVE
                  phys_state: LinkUp
                  link_layer: Ethernet
                  rate_gbps: 400
                  lid: 0
                  sm_lid: 0
                  netdev: ens1f0np0
                  gids:
                    - {index: 3, gid: "0000:0000:0000:0000:0000:ffff:0a00:0002", type: RoCE v2,
                       netdev: ens1f0np0, ipv4: 10.0.0.2}
                  gid_index: 3
        findings:
          description:
            - Problems found, errors first, each with C(severity) (C(error), C(warning), C(info)), C(code),
              C(device) and C(port) (null for host-wide findings), C(message) and C(fix).
          type: list
          elements: dict
          sample:
            - severity: error
              code: port_down
              device: mlx5_1
              port: 1
              message: mlx5_1 port 1 is DOWN (physical state Polling).
              fix: "No link partner: check the cable/transceiver ..."
        gid_index:
          description: The chosen GID index per C(device/port) (null where none).
          type: dict
          sample: {"mlx5_0/1": 3, "mlx5_1/1": null}
        topology:
          description:
            - The leaf switch each RDMA device's port is cabled to, where the tools run (see O(tools) and
              O(topology_tools)), as device -> C(leaf), C(port) and C(source). RoCE ports, where lldpd
              (C(lldpctl -f json)) sees a neighbour on their netdev, C(source) C(lldp), the neighbour's system name and port. InfiniBand ports with a link,
              where C(smpquery) (infiniband-diags) is installed and the switch answers C(nodeinfo) / C(nodedesc)
              over the directed route C(0,<port>) (all ports within 60 seconds), C(source) C(smpquery), the
              switch's node description (its GUID where the description is no name) and the switch port the query
              came in by. InfiniBand ports smpquery did not place, C(source) C(iblinkinfo) (C(iblinkinfo -C <device>
              -P <port> -D 0 -l), the node at the other end of the port's cable), then C(source) C(ibnetdiscover)
              (C(ibnetdiscover -p -C <device> -P <port>), the switch its link reaches), the port found by its port or
              node GUID, the switch's GUID standing for a factory description (C(Quantum Mellanox Technologies));
              both within one 60 s deadline. Empty where no tool is there or answers. The
              C(commcheck_topology) inventory variable takes precedence over it.
          type: dict
          sample: {mlx5_0: {leaf: LEAF03, port: Ethernet184, source: lldp}, mlx5_1: {leaf: "MF0;ib-leaf-03:MQM8700", port: "17", source: smpquery}}
        summary:
          description: Counts of devices, ports, active ports and findings by severity, and the worst severity.
          type: dict
          sample: {devices: 2, ports: 2, active_ports: 1, errors: 1, warnings: 0, infos: 0, worst: error}
        host:
          description:
            - Host facts used by the findings, C(memlock) (C(soft), C(hard)), C(ipc_lock) (whether the
              process holds CAP_IPC_LOCK; null when C(/proc/self/status) could not be read), C(netns_mode),
              C(in_container), C(perftest) (path or null), C(gpus) (C(present), C(evidence), C(found_by)
              (C(driver), C(smi), C(pci)), C(pci_only), C(pci), C(devices) with C(index), C(pci), C(numa_node),
              C(pci_path)), C(npus) (Huawei Ascend NPUs, with C(present), C(evidence), C(found_by), C(pci_only),
              C(pci)); the NVIDIA (0x10de) and Huawei (0x19e5) accelerator PCI functions under O(sysfs_root) count
              as evidence except through kubectl (a pod sees all of its node's), C(gpudirect_module),
              C(virtual) (the DMI vendor and product, or the hypervisor type, of a virtual machine; null on bare
              metal),
              C(cpu_governors) (count per governor), C(modules), C(numa_nodes) (NUMA node -> CPU list),
              C(identity) (C(machine_id), C(boot_id), C(hostname) of the host's UTS namespace and C(netns), its
              network namespace, each null where unread; two inventory names with the same boot id and network
              namespace reach one machine, and the one-click run refuses them).
            - C(versions) has the versions that shape results, null where not found. C(perftest)
              (C(ib_write_bw --version)), C(iperf3), C(openmpi) (C(mpirun --version)), C(nccl) (from C(nccl.h)),
              C(cann) (the Ascend toolkit's install info) are asked only when the tools run (see O(tools));
              C(nccl_tests) is null here (collective records carry it). C(firmware) (device -> C(fw_ver)),
              C(driver) (device -> driver name and, where the module has one, its version) and C(nic_model)
              (device -> C(hca_type)) come from sysfs.
          type: dict
          sample:
            versions:
              perftest: "6.10"
              iperf3: "3.12"
              openmpi: 4.1.4
              nccl: 2.18.3
              nccl_tests: null
              cann: null
              firmware: {mlx5_0: 28.39.1002}
              driver: {mlx5_0: mlx5_core 5.8-1.1.2}
              nic_model: {mlx5_0: MT4129}
        records:
          description:
            - Results-contract records of this discovery (one C(discover) record and one C(finding) record
              per finding) with C(host) null; the C(discover) role sets C(host) and publishes them.
            - The C(discover) record's C(metrics.versions) is C(host.versions) without the null and empty entries;
              its C(params.topology) is RV(ansible_facts.commcheck_rdma.topology) where that names a leaf.
          type: list
          elements: dict
        sources:
          description: Where the data came from (C(sysfs) C(fs) or C(dump), C(addresses) C(ip) or C(gids)) and
            which tools ran (C(tools); C(tools.smpquery) counts the InfiniBand ports asked, the C(switches) that
            answered, the C(failed) queries and the ports the 60 s deadline left C(unasked); C(tools.iblinkinfo) and
            C(tools.ibnetdiscover) the C(ports) asked, those C(placed), C(unplaced) and C(unasked), and the C(scans)
            run).
          type: dict
commcheck_rdma:
  description: What was found, the same as RV(ansible_facts.commcheck_rdma), when O(facts) is V(false).
  returned: when O(facts) is false and O(devices) is true
  type: dict
probe:
  description:
    - The outcome of O(probe), as M(clusterops.commcheck.tool_probe) returns it (C(looked_for), C(rc), C(stdout_lines),
      C(stderr), C(found), C(cmd)); a non-zero C(rc) means the probe could not run (the discovery still stands).
  returned: when O(probe) is not empty
  type: dict
  sample:
    looked_for: [cmd:ib_write_bw, cmd:iperf3]
    rc: 0
    stdout_lines: ["cmd:iperf3\t/usr/bin/iperf3"]
    stderr: ""
    found: {"cmd:iperf3": /usr/bin/iperf3}
    cmd: [sh, -c, "for a in ...", sh, cmd:ib_write_bw, cmd:iperf3]
'''

import os

from ansible_collections.clusterops.commcheck.plugins.module_utils.options.module_args import checked_module

from ansible_collections.clusterops.commcheck.plugins.module_utils.options import option_rules
from ansible_collections.clusterops.commcheck.plugins.module_utils.options.option_rules import OptionError, show
from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery.findings import (
    failing_findings, failing_message)
from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery.gid import subnet_error
from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery.rdma_discovery import collect
from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery.report import discovery_records
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands.tool_probe import (
    check_probe_keys,
    probe_tools,
)
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands.transport import (
    TRANSPORT_ARGSPEC,
    get_transport,
)
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands.runner import commands_fail_task


RATE_MAX_GBPS = 100000
GID_INDEX_MAX = 255
TIMEOUT_MAX = 86400


def check_options(params):
    """Every option that reaches a path, a command or a comparison; raises OptionError naming the first bad one."""
    rate = params["expected_rate_gbps"]
    if rate is not None:
        option_rules.check_number("expected_rate_gbps", rate, 0, RATE_MAX_GBPS)
        if rate <= 0:
            raise OptionError("expected_rate_gbps must be a positive number of Gb/s, got %s" % show(rate))
    if params["subnet"] is not None:
        option_rules.check_text("subnet", params["subnet"], 64)
    error = subnet_error(params["subnet"])
    if error:
        raise OptionError(error)
    index = params["ib_gid_index"]
    if index is not None:
        if index < 0:
            raise OptionError("ib_gid_index must be 0 or more, got %s" % show(index))
        option_rules.check_int("ib_gid_index", index, 0, GID_INDEX_MAX)
    option_rules.check_int("timeout", params["timeout"], 1, TIMEOUT_MAX)
    params["sysfs_root"] = option_rules.check_path("sysfs_root", params["sysfs_root"])
    params["probe"] = check_probe_keys(params["probe"] or [], option="probe")


def main():
    argument_spec = dict(
        sysfs_root=dict(type="path", default="/sys"),
        expected_rate_gbps=dict(type="float"),
        subnet=dict(type="str"),
        ib_gid_index=dict(type="int"),
        tools=dict(type="bool"),
        topology_tools=dict(type="bool"),
        address_source=dict(type="str", default="auto", choices=["auto", "ip", "gids"]),
        timeout=dict(type="int", default=60),
        facts=dict(type="bool", default=True),
        probe=dict(type="list", elements="str", default=[]),
        devices=dict(type="bool", default=True),
        fail_on=dict(type="str", default="never", choices=["error", "warning", "never"]),
        role_options=dict(type="bool", default=False),
        # read on the controller by the action plugin, which takes it out
        keep_facts=dict(type="bool", default=False),
    )
    argument_spec.update(TRANSPORT_ARGSPEC)
    module = checked_module(argument_spec=argument_spec, supports_check_mode=True)
    params = module.params
    try:
        check_options(params)
    except OptionError as exc:
        module.fail_json(msg=str(exc))
    transport = get_transport(module)
    # kubectl of the transport that cannot start fails the task (a tool that cannot start is a finding)
    with commands_fail_task(module, "rdma_facts"):
        discover(module, transport)


def discover(module, transport):
    params = module.params
    rate = params["expected_rate_gbps"]
    root = params["sysfs_root"]
    if not params["devices"]:
        probe = probe_tools(transport, params["probe"], params["timeout"]) if params["probe"] else None
        module.exit_json(changed=False, msg="RDMA devices not looked for; %d tool key(s) probed" % len(params["probe"]),
                         **({"probe": probe} if probe is not None else {}))
    if not transport.remote and not os.path.isdir(root):
        module.fail_json(msg="sysfs_root %s is not a directory" % show(root))

    facts = collect(transport, sysfs_root=root, expected_rate_gbps=rate, subnet=params["subnet"] or None,
                    ib_gid_index=params["ib_gid_index"], tools=params["tools"],
                    topology_tools=params["topology_tools"], address_source=params["address_source"],
                    timeout=params["timeout"])
    dump_errors = [e for e in facts["sources"]["sysfs_errors"] if e["code"] in ("dump_failed", "no_header")]
    if dump_errors and not facts["devices"]:
        module.fail_json(msg="cannot read %s through the %s transport: %s" % (
            root, transport.name, "; ".join(e["message"] for e in dump_errors)))
    facts["records"] = discovery_records(None, facts)
    summary = facts["summary"]
    extra = {"probe": probe_tools(transport, params["probe"], params["timeout"])} if params["probe"] else {}
    if params["facts"]:
        extra["ansible_facts"] = {"commcheck_rdma": facts}
    else:
        extra["commcheck_rdma"] = facts
    failing = failing_findings(facts.get("findings"), params["fail_on"])
    if failing:
        module.fail_json(msg=failing_message(failing, params["fail_on"]), changed=False, **extra)
    module.exit_json(
        changed=False,
        msg="%d RDMA device(s), %d port(s) (%d active); %d error(s), %d warning(s)" % (
            summary["devices"], summary["ports"], summary["active_ports"], summary["errors"],
            summary["warnings"]),
        **extra
    )


if __name__ == "__main__":
    main()
