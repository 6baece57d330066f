#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
module: iperf3
short_description: Run one side (or several sides at once) of an iperf3 TCP bandwidth test
version_added: 1.0.0
description:
  - Runs real C(iperf3 -J) through the collection's transport, under a deadline, and parses its JSON output
    with C(clusterops.commcheck.parse_iperf3). This measures the plain Ethernet / IP path that NCCL falls back
    to (C(NET/Socket)) and that MPI uses for its out-of-band traffic.
  - O(role=server) runs C(iperf3 -s -1 -J -p PORT [-B ADDR]) (one client, then exit), stopped at its deadline
    when no client comes. O(role=client) runs C(iperf3 -c SERVER -p PORT -J -t SECONDS ...) and retries, with a
    short backoff, while the server is not listening yet, all within O(timeout).
  - O(sides) runs several sides in one call at the same time (the C(clusterops.commcheck.tcp_perf) role runs
    one round of its schedule this way); sides with a higher C(step) start after the lower steps have ended.
  - Every option is validated before anything runs (addresses, ports, shell metacharacters in O(extra_args)).
author:
  - commcheck developers (@clusterops)
extends_documentation_fragment:
  - clusterops.commcheck.transport
  - clusterops.commcheck.pair_module
  - clusterops.commcheck.planned_run
options:
  bind:
    description: Local address to bind to (C(-B)); for a server, the address it listens on.
    type: str
  tcp_port:
    description: TCP port of the test (C(-p)), 1 to 65535.
    type: int
    default: 5201
  duration:
    description: Seconds the client sends (C(-t)), 1 to 86400; negative or zero values are refused.
    type: int
    default: 10
  parallel:
    description: Number of parallel streams (C(-P)), 1 to 128.
    type: int
  reverse:
    description: The server sends, the client receives (C(-R)).
    type: bool
    default: false
  bidirectional:
    description: Both directions at once (C(--bidir)).
    type: bool
    default: false
  omit:
    description: Seconds at the start left out of the result (C(-O)), to skip TCP slow start; 0 to 600.
    type: int
  sysfs_root:
    description: Root of the sysfs tree where O(cpu_governor) finds the CPUs' cpufreq; absolute, without C(..).
    type: path
    default: /sys
  extra_args:
    description:
      - More iperf3 arguments, one list item each (for example C([-Z, -w, 4M])).
      - They are read with iperf3's own option grammar (getopt_long, as iperf3 reads them), so every spelling
        counts the same (C(-p1), C(--port=1), C(--po 1), clustered C(-RZ)). Refused before anything runs are the
        following.
      - An option this module sets itself (C(-s), C(-c), C(-p), C(-B), C(-t), C(-n), C(-k), C(-P), C(-R),
        C(--bidir), C(-O)) or one that changes its output, daemonizes or writes files (C(-J), C(--json-stream),
        C(-1), C(-D), C(--logfile), C(-I), C(-F)), C(-h), C(-v).
      - An option iperf3 does not have, an ambiguous abbreviation, a positional argument or C(--).
      - A value that starts with C(-), or key paths that are not absolute or contain C(..).
      - Items may hold letters, digits and the characters C(_.,:=/+@%-) only.
      - The credential files C(--rsa-private-key-path) and C(--authorized-users-path) must be spelled in full and be
        regular files the run's user can read where iperf3 runs (the host, or the pod), checked before any side
        starts; their paths are never shown in messages or results (C(--rsa-private-key-path=(value not shown))).
    type: list
    elements: str
    default: []
  timeout:
    description:
      - Seconds each side (each step of O(sides)) may run, connection retries included. A client's timeout
        must be longer than O(duration) + O(omit). 1 to 86400.
    type: int
    default: 60
  expected_gbps:
    description:
      - Expected TCP bandwidth in Gb/s, 0 to 100000 (0 - no expectation); a client below O(min_fraction) of it
        gets V(fail).
    type: float
  sides:
    description: Several sides at once; each item overrides the top-level options of the same name.
    type: list
    elements: dict
    suboptions:
      role:
        description: V(server) or V(client).
        type: str
        choices: [server, client]
        required: true
      peer:
        description: Name of the other host (reported back).
        type: str
      server:
        description: Address of the server (clients).
        type: str
      bind:
        description: Local address to bind to.
        type: str
      tcp_port:
        description: TCP port of this side.
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
      expected_gbps:
        description: Expected bandwidth in Gb/s.
        type: float
attributes:
  platform:
    support: full
    platforms: posix
    description: Runs iperf3 on the target (or in a pod with the kubectl transport).
notes:
  - A measurement; the task never reports a change.
  - The C(clusterops.commcheck.tcp_perf) role runs a whole schedule of pairs with this module and names bad links
    and nodes.
seealso:
  - module: clusterops.commcheck.perftest
'''

EXAMPLES = r'''
- name: Server on node-a's address
  clusterops.commcheck.iperf3:
    role: server
    bind: 10.0.0.11
    timeout: 40

- name: Client, 4 streams for 10 seconds
  clusterops.commcheck.iperf3:
    role: client
    server: 10.0.0.11
    parallel: 4
    duration: 10
    timeout: 40
    expected_gbps: 25
  register: tcp

- name: One round of a schedule (this host serves one peer and is client of nothing else)
  clusterops.commcheck.iperf3:
    duration: 5
    timeout: 30
    fail_on_error: false
    sides:
      - {role: server, peer: node-b, bind: 10.0.0.11, tcp_port: 5201}

- name: Both directions, every CPU at the performance governor while the test runs
  clusterops.commcheck.iperf3:
    role: client
    server: 10.0.0.11
    bidirectional: true
    cpu_governor: performance
'''

RETURN = r'''
cmd:
  description: The command line of the (single) side.
  returned: when O(role) is given
  type: list
  elements: str
  sample: [iperf3, -c, 10.0.0.11, -p, "5201", -J, -t, "10", -P, "4"]
rc:
  description: Exit status of iperf3 (null when it did not run or was stopped).
  returned: when O(role) is given
  type: int
stdout:
  description: iperf3's JSON output.
  returned: when O(role) is given
  type: str
stderr:
  description: What iperf3 printed on stderr.
  returned: when O(role) is given
  type: str
timed_out:
  description: Whether the side was stopped at its deadline.
  returned: when O(role) is given
  type: bool
attempts:
  description: How many times the side was started.
  returned: when O(role) is given
  type: int
iperf3:
  description: The output parsed by C(clusterops.commcheck.parse_iperf3) (C(sent_gbps), C(received_gbps),
    C(retransmits), C(errors), C(ok)).
  returned: when O(role) is given
  type: dict
metrics:
  description: C(bw_gbps) (received, else sent), C(sent_gbps), C(received_gbps), C(retransmits).
  returned: when O(role) is given
  type: dict
  sample: {bw_gbps: 9.41, sent_gbps: 9.43, received_gbps: 9.41, retransmits: 12}
verdict:
  description: V(pass), V(fail) or V(error) (V(skipped) in check mode); the worst side's with O(sides).
  returned: always
  type: str
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
cpu_governor:
  description: With O(cpu_governor), what was done with the CPU governor.
  returned: when O(cpu_governor) is given and not in check mode
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
      description: Whether the changed CPUs were set back when the sides ended.
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
      returned: when a CPU could not be set back
sides:
  description:
    - One result per side in the order given (one item when O(role) is given), with the side's parameters
      (C(role), C(peer), C(rail), C(step), C(round), C(server), C(bind), C(tcp_port), C(expected_gbps)) and C(cmd),
      C(exec_cmd) (as run, under its deadline), C(rc),
      C(stdout), C(stderr), C(timed_out), C(duration_s), C(started) and C(ended) (epoch seconds), C(attempts), C(iperf3), C(metrics), C(verdict), C(cause),
      C(fix), C(errors); C(output_too_large) and C(output_bytes) (the sizes) when the output was larger than the
      32 MiB kept of it.
  returned: always
  type: list
  elements: dict
'''

from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import iperf3_cmd as ic
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import pair_module as pm
from ansible_collections.clusterops.commcheck.plugins.module_utils.options.option_rules import OptionError
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands.transport import config_file_problem
from ansible_collections.clusterops.commcheck.plugins.module_utils.options.option_rules import secret_paths

try:
    from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_iperf3 import parse_iperf3
except ImportError:  # pragma: no cover - the parser ships with the collection
    parse_iperf3 = None

SIDE_KEYS = ("role", "peer", "server", "bind", "tcp_port", "rail", "step", "round", "expected_gbps")
COMMON_KEYS = ("server", "bind", "tcp_port", "duration", "parallel", "reverse", "bidirectional", "omit",
               "extra_args", "timeout", "connect_retries", "expected_gbps")
NO_OUTPUT = {"sent_gbps": None, "received_gbps": None, "retransmits": None, "errors": [], "ok": False}


def argument_spec():
    return pm.pair_argument_spec(
        dict(
            bind=dict(type="str"),
            duration=dict(type="int", default=10),
            parallel=dict(type="int"),
            reverse=dict(type="bool", default=False),
            bidirectional=dict(type="bool", default=False),
            omit=dict(type="int"),
            cpu_governor=dict(type="str"),
            sysfs_root=dict(type="path", default="/sys"),
        ),
        dict(bind=dict(type="str")),
        tcp_port=ic.DEFAULT_PORT, timeout=60)


def main():
    pm.main(argument_spec(), "iperf3", run)


def run(module):
    params = module.params
    single, sides, transport = pm.start(module, checked_call)

    binary = "iperf3" if module.check_mode else transport.which("iperf3")
    try:
        for side in sides:
            side["argv"] = ic.build_argv(side, binary=binary or "iperf3")
            side["tool_missing"] = binary is None
    except OptionError as exc:
        module.fail_json(msg=str(exc))

    check_credential_files(module, transport, sides)
    if module.check_mode:
        _exit(module, single, pm.check_mode_results(sides, _side_info))
    if parse_iperf3 is None:
        module.fail_json(msg="the parse_iperf3 module_utils of the collection is missing")
    warnings = []
    hold, release, report = pm.governor_hold(module, transport, warnings)
    ran = pm.run_all(transport, sides, ic.is_connect_failure, hold=hold, release=release, capture=ic.OUTPUT_CAPTURE)
    _exit(module, single, pm.side_results(sides, ran, _side_info, _outcome(params["min_fraction"])), warnings,
          {"cpu_governor": dict(report)} if report else None)


def checked_call(params):
    """``pair_module.checked_call`` with iperf3's keys and side check."""
    return pm.checked_call(params, COMMON_KEYS, SIDE_KEYS, ic.normalize)


def check_credential_files(module, transport, sides):
    """The RSA private key and authorized users files of extra_args are readable regular files where iperf3
    runs (the host, or the pod), before any side starts; their paths are never quoted."""
    for side in sides:
        for flag, path in secret_paths(side["argv"]):
            problem = config_file_problem(transport, "extra_args %s" % flag, path, sensitive=True, text=None)
            if problem:
                module.fail_json(msg=problem, invocation=pm.brief_invocation(module.params))


def _outcome(min_fraction):
    def outcome(side, res):
        stdout = res.get("stdout") or ""
        parsed = parse_iperf3(stdout) if stdout.strip() else dict(NO_OUTPUT)
        metrics = {"bw_gbps": ic.bandwidth(parsed), "sent_gbps": parsed.get("sent_gbps"),
                   "received_gbps": parsed.get("received_gbps"), "retransmits": parsed.get("retransmits")}
        return dict(ic.side_verdict(side, res, parsed, min_fraction), iperf3=parsed, metrics=metrics)
    return outcome


def _side_info(side):
    keys = ("role", "peer", "rail", "step", "round", "server", "bind", "tcp_port", "duration", "parallel", "reverse",
            "bidirectional", "expected_gbps")
    return dict((k, side.get(k)) for k in keys)


def _exit(module, single, results, warnings=(), extra=None):
    pm.exit_pair(module, single, results, "iperf3",
                 lambda first: "iperf3 %s side: %s" % (first["role"], first.get("cause") or "error"), warnings, extra)


if __name__ == "__main__":
    main()
