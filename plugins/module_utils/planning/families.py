# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The pair-check families: one row each, everything that differs between them (pure data).

A pair check measures pairs of hosts with a pair tool module (``perftest``, ``iperf3``) and judges them.
Planning, rounds, retests, judgement, localization and records are the same code for every family
(``plugin_utils/pair_engine.py``); a family only names, in its row of :data:`FAMILIES`:

- ``check``: the role and the records' ``params.check``; ``label``: the name its outcome line starts with;
- ``options``: the prefix of its role variables (``<options>_hosts``, ``_pattern``, ``_strategy``, ...);
- ``pair_family``: the family ``verdicts.pair_analysis`` judges its sides as (record kinds follow from it);
- ``kinds``: its pair record kinds (the check's verdict is the worst of these and its findings);
- ``module``: the tool module that runs its sides; ``module_args``: that module's options, each from a
  variable by a rule (:data:`ARG_RULE_NAMES`), the step timeout under ``timeout``;
- ``tests``: how a step's tests are listed (``ops_x_metrics``: every op with every metric; None: the tool's
  one test, no test keys in the sides);
- ``timeout``: the default step timeout: the variables ``timed`` (seconds a step measures) plus ``margin_s``,
  or ``fallback_s`` when the first of them is 0 (a run by count); ``timed_share``: with the variable named
  above 0, only the steps of that metric are timed (the others run by count);
- ``expected``: the variable of the expected rate; ``thresholds``: ``after_retests`` (hardware, fleet and
  history thresholds once the retests are judged) or ``first_pass`` (the fleet threshold on the first pass;
  retests judged against the given rate, else the first pass's fleet median);
- ``retest_port``: ``base`` (the retests reuse the first pass's ports) or ``past_first_pass``;
- ``counters``, ``preflight``, ``gpudirect``, ``placement``: the RDMA extras (port counter deltas and trend, the
  RoCE check of both ends, the pass from GPU memory, the NUMA placement findings), each off unless named.

Every family's role runs the same task files (the internal role ``pair_perf``, with ``commcheck_pair_family``), so
the results they register have one name for every family: :data:`FACTS` is their prefix (``family()`` puts it in
each row as ``facts``). A family runs after the one before it (the one-click check), never beside it.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.clusterops.commcheck.plugins.module_utils.options.option_rules import show

# how a module option takes its variable's value: "value" as it is, "positive" only above 0, "not_negative"
# only at 0 or above, "above_one" only above 1, "text" only when not empty, "bool" as a boolean; "fixed" is the
# given value itself (no variable)
# the prefix of what the pair_perf role registers and keeps (``commcheck_pair_perf_run``, ...), for every family
FACTS = "commcheck_pair_perf"

ARG_RULE_NAMES = ("value", "positive", "not_negative", "above_one", "text", "bool", "fixed")

# the options of every pair tool module (commands.pair_module) that every family takes from the same variable
_PAIR_MODULE_ARGS = (
    ("min_fraction", "commcheck_min_fraction", "value"),
    ("cpu_governor", "commcheck_cpu_governor", "text"),
    ("fail_on_error", False, "fixed"),
)

_RDMA_ARGS = (
    ("duration", "commcheck_rdma_duration", "positive"),
    ("iterations", "commcheck_rdma_iterations", "positive"),
    ("lat_iterations", "commcheck_rdma_lat_iterations", "positive"),
    ("size", "commcheck_rdma_size", "positive"),
    ("all_sizes", "commcheck_rdma_all_sizes", "value"),
    ("qps", "commcheck_rdma_qps", "positive"),
    ("bidirectional", "commcheck_rdma_bidirectional", "value"),
    ("rdma_cm", "commcheck_rdma_rdma_cm", "value"),
    ("mtu", "commcheck_rdma_mtu", "positive"),
    ("use_cuda", "commcheck_rdma_use_cuda", "not_negative"),
    ("gpu_select", "commcheck_gpu_select", "value"),
    ("numa_pin", "commcheck_numa_pin", "value"),
    ("extra_args", "commcheck_rdma_extra_args", "value"),
    ("connect_retries", "commcheck_rdma_connect_retries", "value"),
    # the counters after a host's tests, read by the module when they end
    ("port_counters", "commcheck_rdma_counters", "bool"),
) + _PAIR_MODULE_ARGS

_RDMA = {
    "check": "rdma_perf",
    "label": "RDMA",
    "options": "commcheck_rdma",
    "pair_family": "rdma",
    "kinds": ("rdma_bw", "rdma_lat"),
    "module": "clusterops.commcheck.perftest",
    "module_args": _RDMA_ARGS,
    "tests": "ops_x_metrics",
    "timeout": {"timed": ("commcheck_rdma_duration",), "margin_s": 30, "fallback_s": 300,
                "timed_share": ("commcheck_rdma_lat_iterations", "bw")},
    "expected": "commcheck_expected_gbps",
    "thresholds": "after_retests",
    "retest_port": "base",
    "counters": True,
    "preflight": True,
    "gpudirect": "rdma_gpu",
    "placement": True,
}

FAMILIES = {
    # RDMA from host memory: perftest on every rail, every op and metric
    "rdma": _RDMA,
    # RDMA from GPU memory (GPUDirect): the same tests, each side's buffer in the GPU nearest its NIC; planned
    # per round from each host's GPU state, judged against host memory (gpudirect_verdicts)
    "rdma_gpu": dict(_RDMA, module_args=tuple(
        arg for arg in _RDMA_ARGS if arg[0] not in ("use_cuda", "gpu_select")) + (("gpu_select", "given", "fixed"),),
        gpudirect=None, counters=False, preflight=False, placement=False, memory="gpu"),
    # TCP: iperf3 between the hosts' addresses, one test per pair
    "tcp": {
        "check": "tcp_perf",
        "label": "TCP",
        "options": "commcheck_tcp",
        "pair_family": "tcp",
        "kinds": ("tcp_bw",),
        "module": "clusterops.commcheck.iperf3",
        "module_args": (
            ("duration", "commcheck_tcp_duration", "value"),
            ("parallel", "commcheck_tcp_parallel", "above_one"),
            ("reverse", "commcheck_tcp_reverse", "value"),
            ("bidirectional", "commcheck_tcp_bidirectional", "value"),
            ("omit", "commcheck_tcp_omit", "positive"),
            ("extra_args", "commcheck_tcp_extra_args", "value"),
            ("connect_retries", "commcheck_tcp_connect_retries", "value"),
            ("expected_gbps", "commcheck_tcp_expected_gbps", "positive"),
        ) + _PAIR_MODULE_ARGS,
        "tests": None,
        "timeout": {"timed": ("commcheck_tcp_duration", "commcheck_tcp_omit"), "margin_s": 30, "fallback_s": 300,
                    "timed_share": None},
        "expected": "commcheck_tcp_expected_gbps",
        "thresholds": "first_pass",
        "retest_port": "past_first_pass",
        "counters": False,
        "preflight": False,
        "gpudirect": None,
        "placement": False,
        # one path a host (its address): the topology patterns and localization use that path's leaf
        "path_topology": True,
    },
}

# what every row must hold (a new family is refused naming what it lacks)
REQUIRED = ("check", "label", "options", "pair_family", "kinds", "module", "module_args", "tests", "timeout",
            "expected", "thresholds", "retest_port")
CHOICES = {"tests": (None, "ops_x_metrics"), "thresholds": ("after_retests", "first_pass"),
           "retest_port": ("base", "past_first_pass")}


class FamilyError(ValueError):
    pass


def family(name, table=None):
    """The row of ``name`` in ``table`` (default :data:`FAMILIES`), checked; FamilyError names what is wrong."""
    table = FAMILIES if table is None else table
    if name not in table:
        # a task's value: shown cut, so a huge one cannot flood the message
        raise FamilyError("family must be one of %s, got %s" % (", ".join(sorted(table)), show(name)))
    row = table[name]
    missing = [key for key in REQUIRED if key not in row]
    if missing:
        raise FamilyError("family %s lacks %s" % (name, ", ".join(missing)))
    for key, choices in CHOICES.items():
        if row[key] not in choices:
            raise FamilyError("family %s: %s must be one of %r, got %r" % (name, key, choices, row[key]))
    for arg_name, _source, rule in row["module_args"]:
        if rule not in ARG_RULE_NAMES:
            raise FamilyError("family %s: module option %s has no rule %r" % (name, arg_name, rule))
    return dict(row, name=name, facts=FACTS)


# the variable the role that runs the shared task files (pair_perf) sets to its family; a step given no family
# takes it from there
FAMILY_VAR = "commcheck_pair_family"


def family_of(given, variable, table=None):
    """The row of the family a task names (``given``), else of the one its role set (``variable``, the value of
    :data:`FAMILY_VAR`); FamilyError names both when neither is a family."""
    name = given if given not in (None, "") else variable
    if name in (None, ""):
        raise FamilyError("give family, or set %s (the roles that import clusterops.commcheck.pair_perf set it)"
                          % FAMILY_VAR)
    return family(name, table)


def option(row, suffix):
    """The name of a family's own role variable: ``option(rdma, "hosts")`` is ``commcheck_rdma_hosts``."""
    return "%s_%s" % (row["options"], suffix)


# the controller steps of a pair check (the pair_check action) and its arguments
STEPS = ("hosts", "plan", "wait", "first", "retests", "retest_again", "counters", "gpu_states", "gpu_plan", "gpu_retests",
         "gpu_judge",
         "judge")
PAIR_CHECK_SPEC = {
    "family": {"type": "str", "choices": sorted(FAMILIES)},
    "step": {"type": "str", "required": True, "choices": list(STEPS)},
}
