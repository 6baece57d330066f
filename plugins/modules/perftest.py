#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
module: perftest
short_description: Run one side (or several sides at once) of a perftest RDMA bandwidth / latency test
version_added: 1.0.0
description:
  - Builds the command line of a perftest tool (C(ib_write_bw), C(ib_read_lat), C(ib_send_bw),
    C(ib_atomic_bw), ...) from options, runs it under a deadline through the collection's transport, parses
    its output with C(clusterops.commcheck.parse_perftest) and gives a verdict (V(pass), V(fail) or V(error))
    with a likely cause and a fix.
  - O(role=server) starts the server side; it is stopped at its deadline when no client comes.
    O(role=client) connects to O(server) and retries, with a short backoff, while the server is not
    listening yet, all within O(timeout).
  - O(sides) runs several sides in one call, at the same time (one per rail, server and client roles mixed);
    sides with a higher C(step) start after every side of the lower steps has ended. This is how the
    C(clusterops.commcheck.rdma_perf) role runs all rails and tests of a round in one task on every host.
  - Every option value is validated before anything runs; device names, addresses and O(extra_args) with
    shell metacharacters, out-of-range sizes, ports or iteration counts fail the task with a clear message.
  - No test process outlives the module; an interrupted run (SIGTERM, SIGHUP, SIGINT) stops its children.
author:
  - commcheck developers (@clusterops)
extends_documentation_fragment:
  - clusterops.commcheck.transport
  - clusterops.commcheck.pair_module
  - clusterops.commcheck.planned_run
options:
  test:
    description: The RDMA operation tested.
    type: str
    choices: [write, read, send, atomic]
    default: write
  metric:
    description: Bandwidth (C(ib_*_bw)) or latency (C(ib_*_lat)).
    type: str
    choices: [bw, lat]
    default: bw
  device:
    description:
      - RDMA device (for example C(mlx5_0)) as the kernel names it; letters, digits, underscore, dot, colon and
        hyphen only, at most 64 characters, never starting with C(-). perftest takes the first device when omitted.
    type: str
  ib_port:
    description: Port of O(device) (C(-i)), 1 to 255.
    type: int
    default: 1
  gid_index:
    description:
      - GID index (C(-x)), an integer from 0 to 255, or C(auto).
      - C(auto) takes the port's GID index from O(rdma_facts) (the C(commcheck_rdma) fact of
        C(clusterops.commcheck.rdma_facts)), or else reads the port's GID table under O(sysfs_root) and
        chooses the RoCE v2 GID with an IPv4 address. InfiniBand ports use no GID index.
      - Left out of the command line when omitted (perftest's default).
    type: str
  rdma_facts:
    description: The C(commcheck_rdma) fact of this host, used by O(gid_index=auto).
    type: dict
  sysfs_root:
    description:
      - Root of the sysfs tree read by O(gid_index=auto) when O(rdma_facts) does not know the port, and where
        O(cpu_governor) finds the CPUs' cpufreq. An absolute path without C(..) components.
    type: path
    default: /sys
  port_counters:
    description:
      - Read the port counters of every RDMA device under O(sysfs_root) when the tests of this task have ended
        (after the CPU governor is put back) and return them as RV(port_counters), so that a play compares them
        with a reading from before the tests without a module run of its own.
    type: bool
    default: false
  tcp_port:
    description: TCP port of perftest's out-of-band connection (C(-p)), 1 to 65535.
    type: int
    default: 18515
  size:
    description:
      - Message size in bytes (C(-s)), 1 to 2147483647. Mutually exclusive with O(all_sizes);
        atomic tests have a fixed 8-byte size.
    type: int
  all_sizes:
    description: Run every size from 2 bytes to 8 MiB (C(-a)). Not with O(duration).
    type: bool
    default: false
  iterations:
    description: Number of iterations (C(-n)), 5 to 100000000. Mutually exclusive with O(duration).
    type: int
  duration:
    description:
      - Run for this many seconds (C(-D)) instead of a number of iterations; 1 to 86400 (negative or zero values
        are refused).
    type: int
  lat_iterations:
    description:
      - Latency tests (O(metric=lat), or a side's) run this many iterations (C(-n)), 5 to 100000000, instead of
        O(duration) or O(iterations); bandwidth tests are left as those say.
      - perftest prints the median latency (C(t_typical)) and the 99 and 99.9 percentiles only when it runs by
        count; by time it prints the average alone, which one stall of either host moves. The median is what
        C(metrics.lat_us) then holds and what the verdicts judge.
    type: int
  qps:
    description: Number of queue pairs (C(-q)), 1 to 16384; bandwidth tests only.
    type: int
  bidirectional:
    description: Measure bidirectional bandwidth (C(-b)); bandwidth tests only. Expected bandwidth doubles.
    type: bool
    default: false
  rdma_cm:
    description: Connect the queue pairs with RDMA CM (C(-R)).
    type: bool
    default: false
  mtu:
    description: RDMA MTU in bytes (C(-m)).
    type: int
    choices: [256, 512, 1024, 2048, 4096]
  use_cuda:
    description:
      - Index of the GPU whose memory is used for GPUDirect RDMA (C(--use_cuda=N)), 0 to 1023. Needs a perftest
        built with CUDA; a build without it rejects the option and the verdict says so.
    type: int
  gpu_select:
    description:
      - With O(use_cuda), V(closest) replaces the index by the GPU closest to each side's NIC (same PCIe switch,
        then same NUMA node, then nearest bus; from the GPUs in O(rdma_facts)); V(given) keeps it.
    type: str
    choices: [given, closest]
    default: given
  numa_pin:
    description:
      - Pin each perftest process to its NIC's NUMA node (the device's C(numa_node) from O(rdma_facts) or
        O(sysfs_root)). V(auto) uses C(numactl --cpunodebind=N --membind=N) when numactl is installed, else
        C(taskset -c) with the node's CPUs, else runs unpinned and says why; V(numactl) / V(taskset) insist on that
        tool (the task fails before anything runs when it cannot be done); V(none) does not pin.
      - A NIC and the GPU it is tested with (O(use_cuda)) on different NUMA nodes is reported in the side's
        C(findings) (C(numa_mismatch)).
    type: str
    choices: [auto, numactl, taskset, none]
    default: auto
  extra_args:
    description:
      - More perftest arguments, one list item each (for example C([-F, --tclass=106])).
      - They are read with perftest's own option grammar (getopt_long, as every C(ib_*) tool reads them), so every
        spelling counts the same (C(-p1), C(--port=1), C(--por 1), clustered C(-bd X)). Refused before anything
        runs are the following.
      - An option this module sets itself (C(-d), C(-i), C(-x), C(-p), C(-s), C(-a), C(-n), C(-D), C(-q), C(-b),
        C(-R), C(-m), C(--use_cuda), C(--use_cuda_bus_id), C(--use_cuda_dmabuf), C(--report_gbits), C(--server),
        C(--client)) or one that
        changes its output or never ends (C(--out_json), C(--out_json_file), C(--output), C(--run_infinitely)),
        C(-h), C(-V).
      - C(--mmap) (perftest writes into that file) and the AES-XTS key options C(--kek_path),
        C(--data_enc_key_app_path), C(--credentials_path) (perftest runs them through a shell).
      - An option perftest does not have, an ambiguous abbreviation, a positional argument or C(--).
      - A value that starts with C(-), a C(--payload_file_path) that is not absolute or contains C(..).
      - Items may hold letters, digits and the characters C(_.,:=/+@%-) only.
    type: list
    elements: str
    default: []
  timeout:
    description:
      - Seconds each side (each step of O(sides)) may run, connection retries included; the process is
        stopped at this deadline. 1 to 86400; must be longer than O(duration).
    type: int
    default: 120
  expected_gbps:
    description:
      - Expected bandwidth in Gb/s (usually the port's link rate), 0 to 100000 (0 - no expectation). A client
        whose bandwidth is below O(min_fraction) of it gets the verdict V(fail).
    type: float
  sides:
    description:
      - Several sides run at the same time in one call. Each item overrides the top-level options of the
        same name; unset keys inherit them.
      - A side inherits only the top-level options its test takes, so one call can mix tests. O(bidirectional)
        and O(qps) go to bandwidth sides, O(lat_iterations) to latency sides, O(size) and O(all_sizes) to every
        test but atomic ones (fixed 8 bytes); the other sides run without them.
    type: list
    elements: dict
    suboptions:
      role:
        description: V(server) or V(client).
        type: str
        choices: [server, client]
        required: true
      peer:
        description: Name of the other host of the pair (reported back, not used to connect).
        type: str
      server:
        description: Address of the server side (clients).
        type: str
      device:
        description: RDMA device of this side.
        type: str
      ib_port:
        description: Port of the device.
        type: int
      gid_index:
        description: GID index, or C(auto).
        type: str
      tcp_port:
        description: TCP port of this side's connection.
        type: int
      rail:
        description: Rail number (reported back), 0 to 1023.
        type: int
      step:
        description: Sides of step N start after every side of the steps before has ended (0 to 10000).
        type: int
        default: 0
      round:
        description: Round of the schedule this side belongs to (reported back), 0 to 1000000.
        type: int
      test:
        description: The RDMA operation.
        type: str
        choices: [write, read, send, atomic]
      metric:
        description: V(bw) or V(lat).
        type: str
        choices: [bw, lat]
      expected_gbps:
        description: Expected bandwidth of this side in Gb/s.
        type: float
      use_cuda:
        description: GPU index for GPUDirect RDMA.
        type: int
      use_cuda_dmabuf:
        description: With O(sides[].use_cuda), register that GPU's memory through DMA-BUF (C(--use_cuda_dmabuf)).
        type: bool
attributes:
  platform:
    support: full
    platforms: posix
    description: Runs the perftest tools on the target (or in a pod with the kubectl transport).
notes:
  - A measurement; the task never reports a change.
  - The C(clusterops.commcheck.rdma_perf) role runs a whole schedule of pairs with this module and names bad links
    and nodes.
  - Both sides of a pair must run at the same time; the client retries until the server listens. Run the two sides
    in one task on both hosts with C(forks) at least the number of hosts.
seealso:
  - module: clusterops.commcheck.rdma_facts
  - module: clusterops.commcheck.iperf3
'''

EXAMPLES = r'''
- name: Server side of a write bandwidth test on mlx5_0
  clusterops.commcheck.perftest:
    role: server
    device: mlx5_0
    gid_index: auto
    rdma_facts: "{{ commcheck_rdma }}"
    duration: 10
    timeout: 60
  async: 90
  poll: 0
  register: server_job

- name: Client side against node-a's RoCE address
  clusterops.commcheck.perftest:
    role: client
    device: mlx5_0
    gid_index: 3
    server: 10.10.0.11
    duration: 10
    timeout: 60
    expected_gbps: 200
  register: write_bw

- name: Two rails of one round, this host serves rail 0 and rail 1 of a pair
  clusterops.commcheck.perftest:
    test: read
    metric: bw
    size: 65536
    iterations: 5000
    fail_on_error: false
    sides:
      - {role: server, peer: node-b, device: mlx5_0, rail: 0, tcp_port: 18515}
      - {role: server, peer: node-b, device: mlx5_1, rail: 1, tcp_port: 18516}

- name: Check a command line only
  clusterops.commcheck.perftest:
    role: client
    test: send
    metric: lat
    device: mlx5_2
    server: node-b.example.com
    all_sizes: true
  check_mode: true
'''

RETURN = r'''
port_counters:
  description:
    - With O(port_counters), the counters read when the tests ended, shaped like the C(commcheck_rdma) fact of
      M(clusterops.commcheck.rdma_facts) (C(devices), each with C(name) and C(ports); each port with C(port),
      C(netdev), C(rate_gbps), C(counters), C(hw_counters)), for the port counter deltas of the C(counters) step of
      C(clusterops.commcheck.pair_check).
  returned: when O(port_counters) is true and the tests ran (not in check mode)
  type: dict
  sample: {devices: [{name: mlx5_0, ports: [{port: 1, netdev: eth2, rate_gbps: 400, counters: {symbol_error: 0},
                                             hw_counters: {out_of_sequence: 0}}]}]}
cpu_governor:
  description: With O(cpu_governor), what was done with the CPU governor.
  returned: when O(cpu_governor) is given
  type: dict
  sample: {governor: performance, previous: {cpu0: powersave, cpu1: powersave}, restored: true}
  contains:
    governor:
      description: The governor asked for.
      type: str
      returned: always
    previous:
      description: The governor of each CPU that was changed, as it was before.
      type: dict
      returned: always
    restored:
      description: Whether the changed CPUs were set back when the tests ended.
      type: bool
      returned: always
    skipped:
      description: Why nothing was changed (no cpufreq, files it cannot write, or a transport that cannot change it).
      type: str
      returned: when nothing was changed for a reason
    unmanaged:
      description:
        - With RV(cpu_governor.skipped) for governor files that take no write or no cpufreq, the C(governor_unmanaged)
          finding - C(host) (the host, or C(namespace/pod)), C(governors) (how many CPUs run each), C(why)
          (C(read-only /sys), C(not privileged), C(no cpufreq)), C(message), C(fix).
      type: dict
      returned: when the governor could not be managed
    restore_error:
      description: Why setting a CPU back failed.
      type: str
      returned: when restoring failed
cmd:
  description: The command line of the (single) side.
  returned: when O(role) is given
  type: list
  elements: str
  sample: [ib_write_bw, -d, mlx5_0, -i, "1", -x, "3", -p, "18515", -D, "10", --report_gbits, 10.10.0.11]
rc:
  description: Exit status of the tool (null when it did not run or was stopped).
  returned: when O(role) is given
  type: int
  sample: 0
stdout:
  description: What the tool printed.
  returned: when O(role) is given
  type: str
stderr:
  description: What the tool printed on stderr.
  returned: when O(role) is given
  type: str
timed_out:
  description: Whether the side was stopped at its deadline.
  returned: when O(role) is given
  type: bool
attempts:
  description: How many times the side was started (clients retry while the server is not listening).
  returned: when O(role) is given
  type: int
  sample: 2
perftest:
  description: The output parsed by C(clusterops.commcheck.parse_perftest) (C(test), C(metric), C(settings),
    C(rows), C(errors), C(warnings), C(ok)).
  returned: when O(role) is given and the tool ran
  type: dict
metrics:
  description: Headline numbers; bandwidth C(bw_gbps) (average of the best row), C(bw_peak_gbps), C(bytes);
    latency C(lat_us) (typical), C(lat_avg_us), C(lat_p99_us), C(bytes).
  returned: when O(role) is given
  type: dict
  sample: {bw_gbps: 96.8, bw_peak_gbps: 97.1, bytes: 65536}
verdict:
  description: V(pass), V(fail) or V(error) (V(skipped) in check mode); the worst side's with O(sides).
  returned: always
  type: str
  sample: pass
cause:
  description: Likely cause when the verdict is not V(pass).
  returned: always
  type: str
fix:
  description: What to do about it.
  returned: always
  type: str
errors:
  description: Every error found (C(code), C(message), C(cause), C(fix)).
  returned: when O(role) is given
  type: list
  elements: dict
sides:
  description:
    - One result per side, in the order given (one item when O(role) is given). Each has the side's
      parameters (C(role), C(peer), C(rail), C(step), C(round), C(test), C(metric), C(device), C(ib_port), C(gid_index),
      C(tcp_port), C(server), C(expected_gbps)) and its C(cmd), C(exec_cmd) (as run, under its deadline), C(rc), C(stdout), C(stderr), C(timed_out),
      C(duration_s), C(started) and C(ended) (epoch seconds), C(attempts), C(perftest), C(metrics), C(verdict), C(cause), C(fix), C(errors);
      of an output over 128 KiB only its first and last 64 KiB, with C(output_too_large) and C(output_bytes) (the sizes).
    - C(placement) (C(numa_node), C(cpulist), C(prefix) the pinning argv put before C(cmd) in C(exec_cmd),
      C(pinned), C(reason), C(use_cuda), C(gpu), C(gpu_reason)) and C(findings) (C(numa_mismatch), C(not_pinned)).
  returned: always
  type: list
  elements: dict
'''

from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import pair_module as pm
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import perftest_cmd as pc
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands.perftest_options import (
    argument_spec,
    checked_call,
)
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands.side_runner import is_connect_failure
from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery import numa
from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery.endpoint import Endpoint, resolve_gid_index
from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery.rdma_discovery import port_counters
from ansible_collections.clusterops.commcheck.plugins.module_utils.options import option_rules

try:
    from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_perftest import parse_perftest
except ImportError:  # pragma: no cover - the parser ships with the collection
    parse_perftest = None


def main():
    pm.main(argument_spec(), "perftest", run)


def run(module):
    params = module.params
    single, sides, transport = pm.start(module, checked_call)

    warnings = []
    for side in sides:
        resolve_gid(module, transport, side, warnings)
    for side in sides:
        place(module, transport, side)
    build_argvs(module, transport, sides)

    if module.check_mode:
        _exit(module, single, pm.check_mode_results(sides, _side_info, exec_cmd=_exec_argv), warnings)
    if parse_perftest is None:
        module.fail_json(msg="the parse_perftest module_utils of the collection is missing")
    hold, release, report = pm.governor_hold(module, transport, warnings)
    ran = pm.run_all(transport, sides, _retryable, exec_argv=_exec_argv, hold=hold, release=release)
    extra = {"cpu_governor": dict(report)} if report else {}
    if params["port_counters"]:
        extra["port_counters"] = port_counters(transport, params["sysfs_root"])
    _exit(module, single, pm.side_results(sides, ran, _side_info, _outcome(params["min_fraction"])), warnings, extra)


def resolve_gid(module, transport, side, warnings):
    """``gid_index: auto`` of one side as discovery chooses it (facts, else sysfs); the task fails on a bad one."""
    try:
        side["gid_index"], warning = resolve_gid_index(side, module.params.get("rdma_facts"), transport.read_file,
                                                       module.params["sysfs_root"])
    except option_rules.OptionError as exc:
        module.fail_json(msg=str(exc))
    if warning:
        warnings.append(warning)


def build_argvs(module, transport, sides):
    """Each side's endpoint and argv, with the tool as the transport finds it (once per tool)."""
    binaries = {}
    for side in sides:
        tool = pc.tool_name(side["test"], side["metric"])
        if tool not in binaries:
            binaries[tool] = transport.which(tool) if not module.check_mode else tool
        try:
            side["endpoint"] = Endpoint.from_side(side, numa_node=numa.numa_node(side["placement"].get("numa_node")))
            side["argv"] = pc.build_argv(side, binary=binaries[tool] or tool, endpoint=side["endpoint"])
        except option_rules.OptionError as exc:
            module.fail_json(msg="%s side on %s: %s" % (side["role"], side.get("device") or "the default device", exc))
        side["tool_missing"] = binaries[tool] is None


def _retryable(result):
    parsed = parse_perftest((result.get("stdout") or "") + "\n" + (result.get("stderr") or ""))
    return is_connect_failure(result, parsed)


def _exec_argv(side):
    return side["placement"]["prefix"] + side["argv"]


def _outcome(min_fraction):
    def outcome(side, res):
        parsed = parse_perftest((res.get("stdout") or "") + "\n" + (res.get("stderr") or ""))
        return dict(pc.side_verdict(side, res, parsed, min_fraction), perftest=parsed, metrics=pc.summarize(parsed))
    return outcome


def _side_info(side):
    keys = ("role", "peer", "rail", "step", "round", "test", "metric", "device", "ib_port", "gid_index", "tcp_port",
            "server", "expected_gbps", "bidirectional", "size", "all_sizes", "duration", "iterations", "qps",
            "placement", "findings")
    return dict((k, side.get(k)) for k in keys)


def place(module, transport, side):
    """NUMA pinning prefix and GPU of one side (numa.side_placement); fails the task before anything runs."""
    params = module.params
    try:
        plan = numa.side_placement(side.get("device"), params.get("rdma_facts"), transport.read_file,
                                   transport.which, params["sysfs_root"], params["numa_pin"], params["gpu_select"],
                                   side.get("use_cuda"))
    except numa.NumaError as exc:
        module.fail_json(msg="%s side on %s: %s" % (side["role"], side.get("device") or "the default device", exc))
    side["use_cuda"] = plan["use_cuda"]
    side["findings"] = plan.pop("findings")
    gpu = plan.get("gpu")
    plan["gpu"] = dict((k, gpu.get(k)) for k in ("index", "pci", "numa_node")) if gpu else None
    side["placement"] = plan


def _exit(module, single, results, warnings, extra=None):
    pm.exit_pair(module, single, results, "perftest", _failure, warnings, extra)


def _failure(first):
    return "%s side of %s: %s" % (first["role"], pc.tool_name(first["test"], first["metric"]),
                                  first.get("cause") or "error")


if __name__ == "__main__":
    main()
