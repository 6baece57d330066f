# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The skeleton of the modules that run sides of a test (``perftest``, ``iperf3``).

A module keeps its tool: its own options, how one side is normalized and
turned into argv, how its output is parsed and judged. This holds the rest,
once: the options every pair module has (``role`` or ``sides``, ``server``,
``tcp_port``, ``extra_args``, ``timeout``, ``connect_retries``,
``expected_gbps``, ``min_fraction``, ``fail_on_error``, the transport),
merging each side over the top-level options, check mode, running every
side through the one side runner (``side_runner.run_sides``) and the
result, and the CPU governor held while the sides run (``cpu_governor``,
``governor_hold``). ``fail_run`` is the failure of any module whose command
failed (``msg``, ``rc``, ``stdout``, ``stderr``, ``cmd``).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import platform

from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import cpu_governor as gov
from ansible_collections.clusterops.commcheck.plugins.module_utils.options import option_rules
from ansible_collections.clusterops.commcheck.plugins.module_utils.options.module_args import checked_module
from ansible_collections.clusterops.commcheck.plugins.module_utils.options.option_rules import (
    OptionError,
    withhold_secret_paths,
)
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands.runner import (
    commands_fail_task,
    install_cleanup_handlers,
    stop_all,
)
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands.side_options import check_min_fraction
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands.side_runner import (
    run_sides, side_result, sides_outcome)
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands.transport import TRANSPORT_ARGSPEC, get_transport

ROLE_CHOICES = ["server", "client"]
# What a side carries only to be reported back, whatever the tool.
LABEL_KEYS = ("peer", "rail", "round", "expected_gbps")
CHECK_MODE_CAUSE = "check mode: nothing was run"


def pair_argument_spec(tool_options, tool_side_options, tcp_port, timeout):
    """The argument spec of a pair module: the shared options plus the tool's own (top level and per side)."""
    spec = dict(role=dict(type="str", choices=ROLE_CHOICES))
    spec.update(tool_options)
    spec.update(
        server=dict(type="str"),
        tcp_port=dict(type="int", default=tcp_port),
        extra_args=dict(type="list", elements="str", default=[]),
        timeout=dict(type="int", default=timeout),
        connect_retries=dict(type="int", default=100),
        expected_gbps=dict(type="float"),
        min_fraction=dict(type="float", default=0.9),
        fail_on_error=dict(type="bool", default=True),
        # filled in by the module's action plugin (plugin_utils/planned_tests.py), which takes it out
        planned=dict(type="str", choices=["run", "round"]),
    )
    side = dict(
        role=dict(type="str", choices=ROLE_CHOICES, required=True),
        peer=dict(type="str"),
        server=dict(type="str"),
        tcp_port=dict(type="int"),
        rail=dict(type="int"),
        step=dict(type="int", default=0),
        round=dict(type="int"),
        expected_gbps=dict(type="float"),
    )
    side.update(tool_side_options)
    spec["sides"] = dict(type="list", elements="dict", options=side)
    spec.update(TRANSPORT_ARGSPEC)
    return spec


def pair_module(argument_spec):
    """The AnsibleModule of a pair tool (arguments checked first): check mode, ``role`` or ``sides`` (not both)."""
    return checked_module(argument_spec=argument_spec, supports_check_mode=True,
                          mutually_exclusive=[("role", "sides")], required_one_of=[("role", "sides")])


def main(argument_spec, tool, run):
    """A pair module's run: its AnsibleModule, then ``run(module)``."""
    module = pair_module(argument_spec)
    # a program that cannot start outside the sides (the kubectl of the transport, looking the tool up) fails
    # the task; a tool that cannot start is its side's verdict
    with commands_fail_task(module, tool):
        run(module)


def start(module, checked_call):
    """(single, sides, transport) of a pair module's call: whether ``role`` asked for one side, the sides
    ``checked_call`` makes of the arguments (the task fails on a bad one) and the transport they run through."""
    single = raw_sides(module)[0]
    try:
        sides = checked_call(module.params)
    except OptionError as exc:
        module.fail_json(msg=str(exc))
    return single, sides, get_transport(module)


def raw_sides(module):
    """(single, the sides asked for): one side when ``role`` is given, else the ``sides`` list (never empty)."""
    params = module.params
    single = params.get("role") is not None
    raws = [{"role": params["role"]}] if single else list(params.get("sides") or [])
    if not raws:
        module.fail_json(msg="sides is empty: nothing to run")
    return single, raws


def side_params(params, side, common_keys, side_keys, per_test=None):
    """Top-level options overridden by one side's keys (``step``: the side's, else 0).

    ``per_test`` (the tool's ``(top-level options, side) -> options``) keeps from the top level only what the
    side's test takes (``planning/per_test_options.py``): a bandwidth-only option still reaches the bandwidth
    sides, and the latency sides run without it.
    """
    merged = dict((k, params.get(k)) for k in common_keys)
    if per_test is not None:
        merged = per_test(merged, side)
    for key in side_keys:
        if side.get(key) is not None:
            merged[key] = side[key]
    merged["step"] = int(side.get("step") or 0)
    return merged


def checked_sides(params, single, raws, common_keys, side_keys, normalize, per_test=None):
    """Each side merged over the top-level options (``per_test`` for ``sides`` only: one side from ``role``
    is the test asked for), then ``normalize``d; raises OptionError naming ``sides[N]`` on the first bad one.

    The module runs it on its arguments, and the up-front check on the planned module calls.
    """
    sides = []
    for num, raw in enumerate(raws):
        merged = side_params(params, raw, common_keys, side_keys, None if single else per_test)
        try:
            norm = normalize(merged)
        except OptionError as exc:
            if single:
                raise
            raise OptionError("sides[%d]: %s" % (num, exc))
        norm["step"] = merged["step"]
        norm.update((key, merged.get(key)) for key in LABEL_KEYS)
        sides.append(norm)
    return sides


def checked_call(params, common_keys, side_keys, normalize, per_test=None):
    """The normalized sides of a call (its arguments after the spec), or OptionError: what a pair module checks
    before anything runs (``min_fraction``, the governor options, every side), and what the up-front check
    runs on every planned call."""
    check_min_fraction(params["min_fraction"])
    check_governor_options(params)
    single = params.get("role") is not None
    raws = [{"role": params["role"]}] if single else list(params.get("sides") or [])
    return checked_sides(params, single, raws, common_keys, side_keys, normalize, per_test)


def check_mode_results(sides, side_info, **extra):
    """What check mode returns for every side: its argv, nothing run (verdict skipped)."""
    return [dict(side_info(s), cmd=withhold_secret_paths(s["argv"]), verdict="skipped", cause=CHECK_MODE_CAUSE,
                 fix=None, errors=[],
                 **dict((key, value(s)) for key, value in extra.items()))
            for s in sides]


def not_found_result(argv):
    """The run result of a side whose tool is not on PATH (nothing was started)."""
    return {"cmd": argv, "rc": None, "stdout": "", "stderr": "%s: not found on PATH" % argv[0], "timed_out": False,
            "duration_s": 0.0, "attempts": 0, "connect_failed": False, "tool_missing": True}


def run_all(transport, sides, retryable, exec_argv=None, hold=None, release=None, capture=None):
    """Run every side whose tool was found (``side["tool_missing"]`` false) through ``run_sides``.

    ``exec_argv(side)``: what really runs (a pinning prefix before the argv).
    ``hold()`` is called right before the sides start and ``release(held)``
    after every process is stopped, whatever happens in between. ``capture``: what is kept of each side's
    output (None: the runner's bound for a tool's text output). Returns one
    run result per side, in order.
    """
    install_cleanup_handlers()
    exec_argv = exec_argv or (lambda side: side["argv"])
    runnable = [i for i, s in enumerate(sides) if not s.get("tool_missing")]
    jobs = [{"argv": exec_argv(sides[i]), "role": sides[i]["role"], "timeout": sides[i]["timeout"],
             "connect_retries": sides[i]["connect_retries"], "step": sides[i]["step"], "retryable": retryable,
             "capture": capture}
            for i in runnable]
    held = hold() if hold else None
    try:
        ran = run_sides(transport, jobs)
    finally:
        stop_all()
        if release:
            release(held)
    outputs = dict(zip(runnable, ran))
    return [outputs.get(num) or not_found_result(side["argv"]) for num, side in enumerate(sides)]


def check_governor_options(params):
    """``sysfs_root`` (an absolute path without ``..``) and ``cpu_governor`` (a governor name); OptionError."""
    params["sysfs_root"] = option_rules.check_path("sysfs_root", params["sysfs_root"])
    if params.get("cpu_governor") and not gov.GOVERNOR_NAME.match(params["cpu_governor"]):
        raise OptionError("cpu_governor %s is not a governor name" % option_rules.show(params["cpu_governor"]))


def governor_files(transport):
    """Where the hold reads and writes the governor files: the host's own, or the pod's through kubectl exec. A
    pod's governors are not saved in the lock directory: every pod of the controller shares it."""
    if transport.name == "kubectl":
        return {"files": gov.PodSysfs(transport), "state_dir": "",
                "host": "%s/%s" % (transport.namespace, transport.pod)}
    return {"host": platform.node()}


def governor_hold(module, transport, warnings):
    """``run_all``'s ``hold`` and ``release`` for the ``cpu_governor`` option, and the report of what they did.

    The CPUs are switched right before the sides start and put back after every process stopped, on every
    path; a governor a CPU does not offer fails the task before any side runs. Governor files that take no write
    (an unprivileged pod's read-only /sys, no cpufreq) are left alone with the ``governor_unmanaged`` finding.
    """
    hold = gov.GovernorHold(module.params.get("cpu_governor"), module.params["sysfs_root"], transport.name,
                            **governor_files(transport))

    def take():
        try:
            warning = hold.take()
        except gov.GovernorError as exc:
            module.fail_json(msg="cpu_governor: %s" % exc, cpu_governor=dict(hold.report))
        if warning:
            warnings.append(warning)

    return take, lambda _held: hold.release(), hold.report


def side_results(sides, ran, side_info, outcome):
    """Each side as the module returns it; ``outcome(side, run result)`` adds the parsed output and verdict."""
    return [side_result(side_info(side), side["argv"], res, **outcome(side, res)) for side, res in zip(sides, ran)]


# Options that carry whole documents: the echo of the options in a result (its
# ``invocation``) names them instead of repeating them. Every host returns its
# result to the controller, which copies it several times, and the result's
# ``sides`` already hold each side's options.
ECHOED_AS_SUMMARY = {
    "sides": lambda value: "%d side(s), each in the result's sides" % len(value or []),
    "rdma_facts": lambda value: "the commcheck_rdma facts of %d device(s)" % len((value or {}).get("devices") or []),
    # a credential file's path (iperf3's --rsa-private-key-path) is not echoed
    "extra_args": withhold_secret_paths,
}


def brief_invocation(params):
    """The ``invocation`` of a pair module's result: its options, the bulky ones summarized (ECHOED_AS_SUMMARY)."""
    args = dict(params)
    for name, summary in ECHOED_AS_SUMMARY.items():
        if args.get(name) is not None:
            args[name] = summary(args[name])
    return {"module_args": args}


def exit_pair(module, single, results, parsed_key, failure, warnings=(), extra=None):
    """exit_json with the worst verdict, or fail_json when a side's verdict is error and fail_on_error is set.

    ``failure(first error side)`` says what failed; ``extra`` joins the result.
    """
    out, first = sides_outcome(results, single, parsed_key)
    out.update(extra or {})
    out["invocation"] = brief_invocation(module.params)
    for warning in warnings:
        module.warn(warning)
    if first and module.params["fail_on_error"]:
        module.fail_json(msg=failure(first), **out)
    module.exit_json(**out)


def fail_run(module, msg, result, argv, **extra):
    """Fail the task with what a command that ran left behind: ``rc``, ``stdout``, ``stderr``, ``cmd``."""
    module.fail_json(msg=msg, rc=result.get("rc"), stdout=result.get("stdout"), stderr=result.get("stderr"),
                     cmd=argv, **extra)
