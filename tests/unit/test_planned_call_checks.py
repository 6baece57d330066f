# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What passes the up-front check cannot fail later for the same reason (plugin_utils/planned_call_checks).

Every role variable of roles/*/meta/argument_specs.yml (read here, so a new one is swept too) is tried with
its choices and boundary values (the range its rule states): each is either refused up front, naming the
variable, or the module calls planned with it all pass the modules' own checks and build their command lines.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import itertools
import re

import pytest

from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import iperf3_cmd, perftest_cmd
from ansible_collections.clusterops.commcheck.plugins.modules import iperf3 as iperf3_module
from ansible_collections.clusterops.commcheck.plugins.modules import perftest as perftest_module
from ansible_collections.clusterops.commcheck.plugins.plugin_utils import planned_call_checks as pcc
from ansible_collections.clusterops.commcheck.plugins.plugin_utils import planned_calls
from ansible_collections.clusterops.commcheck.plugins.plugin_utils import role_options as ro

# every role's argument spec, merged, and the type checks' memo, as test_role_options reads them
from test_role_options import ALL, HOSTS, TYPE_CHECKS

_RANGE = re.compile(r"(-?\d+(?:\.\d+)?) to (-?\d+(?:\.\d+)?)")


def _bounds(name):
    """(low, high) of the range the variable's rule states, or None."""
    found = _RANGE.search(getattr(ro.RULES.get(name), "describes", "") or "")
    if not found:
        return None
    number = float if "." in found.group(0) else int
    return number(found.group(1)), number(found.group(2))


def sweep_values(name):
    """The default, every choice, the bounds and just past them, 0 / empty, true and false."""
    spec = ALL[name]
    kind, choices = spec.get("type", "str"), spec.get("choices")
    values = [spec["default"]] if "default" in spec else []
    if kind == "bool":
        values += [True, False]
    elif kind == "list" and choices:
        values += [[c] for c in choices] + [list(choices), []]
    elif choices:
        values += list(choices)
    elif kind in ("int", "float"):
        bounds = _bounds(name)
        past = 1 if kind == "int" else 0.001
        values += [0] + ([bounds[0], bounds[1], bounds[0] - past, bounds[1] + past] if bounds else [])
    elif kind in ("str", "path"):
        values.append("")
    elif kind == "list":
        values.append([])
    unique = []
    for value in values:
        if not any(value == u and type(value) is type(u) for u in unique):
            unique.append(value)
    return unique


def refusal(values):
    return ro.check_values(ALL, values, known_hosts=HOSTS, memo=TYPE_CHECKS) or pcc.problems(ALL, values, HOSTS)


def names(problem, variable):
    return re.search(r"(?<!\w)%s(?!\w)" % re.escape(variable), problem) is not None


_CALLS_SEEN = {}


def call_fault(module_name, args):
    """What the module's own checks, then its command lines, say of one planned call (None: it would run)."""
    key = repr((module_name, sorted(args.items())))
    if key not in _CALLS_SEEN:
        _CALLS_SEEN[key] = pcc.module_problem(module_name, args) or _argv_fault(module_name, args)
    return _CALLS_SEEN[key]


def _argv_fault(module_name, args):
    module, build = {"perftest": (perftest_module, perftest_cmd.build_argv),
                     "iperf3": (iperf3_module, iperf3_cmd.build_argv)}[module_name]
    params = pcc.ArgumentSpecValidator(module.argument_spec()).validate(args).validated_parameters
    try:
        for side in module.checked_call(params):
            build(side)
    except ValueError as exc:
        return "argv: %s" % exc
    return None


def plan_faults(values):
    """The planned calls of every family that a module would refuse (with its message)."""
    options = pcc.converted(ALL, values)
    faults = []
    for family in pcc.FAMILIES:
        try:
            calls = planned_calls.planned_calls(family, options, HOSTS)
        except pcc.ScheduleError as exc:
            faults.append("%s planner: %s" % (family, exc))
            continue
        for module_name, args, _used in calls:
            fault = call_fault(module_name, args)
            if fault:
                faults.append("%s %s: %s" % (family, module_name, fault))
    return faults


def outcome(values, variables):
    """None when ``values`` are refused naming one of ``variables``, or accepted with calls that all run; else
    what is wrong."""
    problems = refusal(values)
    if problems:
        if any(names(p, v) for p in problems for v in variables):
            return None
        return "refused without naming %s: %s" % (" or ".join(variables), problems)
    faults = plan_faults(values)
    return "accepted, but %s" % faults if faults else None


def test_every_variable_and_each_of_its_values_is_refused_up_front_or_runs():
    swept, wrong = 0, []
    for name in sorted(ALL):
        for value in sweep_values(name):
            swept += 1
            why = outcome({name: value}, [name])
            if why:
                wrong.append("%s=%r: %s" % (name, value, why))
    assert wrong == []
    assert swept > 2 * len(ALL)


def test_the_sweep_reads_each_variables_range_from_its_rule():
    assert _bounds("commcheck_rdma_qps") == (1, 16384)
    assert sweep_values("commcheck_rdma_qps") == [0, 1, 16384, 16385]
    assert sweep_values("commcheck_rdma_ops") == [["write"], ["read"], ["send"], ["atomic"],
                                                  ["write", "read", "send", "atomic"], []]
    assert sweep_values("commcheck_rdma_bidirectional") == [False, True]


PERFTEST_OPS = [["write"], ["read"], ["send"], ["atomic"], ["write", "read", "send", "atomic"]]


@pytest.mark.parametrize("ops", PERFTEST_OPS, ids="+".join)
def test_perftest_per_test_options_together(ops):
    """ops x bidirectional x qps x size x all_sizes (all_sizes with duration 0, as its rule wants)."""
    wrong = []
    for bidir, qps, size, all_sizes in itertools.product((False, True), (0, 1, 4), (0, 8, 65536), (False, True)):
        values = {"commcheck_rdma_ops": ops, "commcheck_rdma_bidirectional": bidir, "commcheck_rdma_qps": qps,
                  "commcheck_rdma_size": size, "commcheck_rdma_all_sizes": all_sizes}
        if all_sizes:
            values["commcheck_rdma_duration"] = 0
        why = outcome(values, [k for k, v in values.items() if v or k == "commcheck_rdma_ops"])
        if why:
            wrong.append("%s: %s" % (values, why))
    assert wrong == []


def _sides(values):
    calls = planned_calls.planned_calls("rdma", pcc.converted(ALL, values), HOSTS)
    params = pcc.ArgumentSpecValidator(perftest_module.argument_spec()).validate(calls[0][1]).validated_parameters
    return perftest_module.checked_call(params)


def test_the_issues_options_run_where_they_apply():
    """bidirectional, 4 QPs and every op: accepted; bandwidth sides get -b and -q 4, latency sides run without."""
    values = {"commcheck_checks": ["discover", "rdma"], "commcheck_rdma_bidirectional": True,
              "commcheck_rdma_qps": 4, "commcheck_rdma_ops": ["read", "write", "send", "atomic"]}
    assert refusal(values) == []
    sides = _sides(values)
    bw = sorted((s["test"], s["role"], s["bidirectional"], s["qps"]) for s in sides if s["metric"] == "bw")
    lat = sorted((s["test"], s["role"], s["bidirectional"], s["qps"]) for s in sides if s["metric"] == "lat")
    runs = [(op, role) for op in sorted(values["commcheck_rdma_ops"]) for role in ("client", "server")]
    assert bw == [(op, role, True, 4) for op, role in runs]
    assert lat == [(op, role, False, None) for op, role in runs]


def test_a_size_goes_to_every_test_but_atomic_ones():
    sides = _sides({"commcheck_rdma_ops": ["atomic", "send"], "commcheck_rdma_size": 4096})
    assert sorted(set((s["test"], s["size"]) for s in sides)) == [("atomic", None), ("send", 4096)]


@pytest.mark.parametrize("values,named,fragment", [
    ({"commcheck_rdma_base_port": 65535}, "commcheck_rdma_base_port: 65535", "the rdma check cannot be planned"),
])
def test_a_value_no_planned_test_can_honour_is_refused_naming_it(values, named, fragment):
    problems = pcc.problems(ALL, values, HOSTS)
    assert len(problems) == 1 and problems[0].startswith(named) and fragment in problems[0], problems


@pytest.mark.parametrize("values,named,fragment", [
    ({"commcheck_rdma_ops": ["atomic"], "commcheck_rdma_size": 4096}, "commcheck_rdma_size: 4096",
     "applies to every test but atomic ones (fixed 8 bytes); none of the tests planned from commcheck_rdma_ops"),
    ({"commcheck_rdma_metrics": ["lat"], "commcheck_rdma_bidirectional": True}, "commcheck_rdma_bidirectional: True",
     "applies to bandwidth tests only"),
    ({"commcheck_rdma_metrics": ["bw"], "commcheck_rdma_lat_iterations": 500}, "commcheck_rdma_lat_iterations: 500",
     "applies to latency tests only"),
])
def test_a_per_test_option_no_planned_test_takes_is_a_note_not_a_refusal(values, named, fragment):
    # a site's group_vars may set a latency option for every run, and a bandwidth-only run must still run
    notes = []
    assert pcc.problems(ALL, values, HOSTS, notes) == []
    assert len(notes) == 1 and notes[0].startswith(named) and fragment in notes[0], notes


def test_a_module_refusal_names_the_variables_behind_the_argument():
    problems = pcc.problems(ALL, {"commcheck_tcp_reverse": True, "commcheck_tcp_bidirectional": True}, HOSTS)
    assert problems == ["commcheck_tcp_bidirectional: True, commcheck_tcp_reverse: True: the iperf3 module would "
                        "refuse it in the planned tcp check: sides[0]: reverse and bidirectional are mutually exclusive"]


def test_a_default_no_test_takes_is_not_refused_and_a_check_not_run_is_not_planned():
    # lat_iterations keeps its default when only bandwidth runs; the one-click check without rdma plans no perftest
    assert pcc.problems(ALL, {"commcheck_rdma_metrics": ["bw"]}, HOSTS) == []
    assert pcc.problems(ALL, {"commcheck_checks": ["discover", "tcp"], "commcheck_rdma_metrics": ["lat"],
                              "commcheck_rdma_qps": 4}, HOSTS) == []


@pytest.mark.parametrize("values", [{}, {"commcheck_rdma_use_cuda": 0, "commcheck_tcp_timeout": 20},
                                    {"commcheck_rdma_gpudirect": True, "commcheck_rdma_strategy": "rounds"}])
def test_the_calls_are_planned_from_the_variables_the_check_converts(values):
    """planned_calls reads nothing past planned_calls.VARIABLES: with every variable it plans the same calls."""
    every = dict((name, spec.get("default")) for name, spec in ALL.items())
    every.update(values)
    wanted = pcc.converted(ALL, values)
    for family in pcc.FAMILIES:
        assert planned_calls.planned_calls(family, every, HOSTS) == planned_calls.planned_calls(family, wanted, HOSTS)


def test_gpudirect_is_planned_only_where_it_runs():
    def families(values):
        return [f for f in pcc.FAMILIES if planned_calls.planned_calls(f, pcc.converted(ALL, values), HOSTS)]
    assert families({}) == ["rdma", "gpudirect", "tcp"]
    assert families({"commcheck_rdma_use_cuda": 0}) == ["rdma", "tcp"]
    assert families({"commcheck_rdma_gpudirect": "off", "commcheck_checks": ["rdma"]}) == ["rdma"]


def test_the_planned_calls_carry_what_the_engine_will_pass_not_more():
    """A variable given as null is left out, as the engine leaves it out (it is the tool's default then), and
    the step timeout is the engine's: the family's fallback when the bandwidth runs by count, plus a second per
    host when pipelined; duration and omit plus the margin for TCP."""
    rdma = {"commcheck_rdma_ops": ["write"], "commcheck_rdma_metrics": ["bw"], "commcheck_rdma_duration": 0,
            "commcheck_rdma_qps": None, "commcheck_rdma_bidirectional": None, "commcheck_rdma_strategy": "pipelined",
            "commcheck_rdma_base_port": 18515}
    (_module, args, used), = planned_calls.planned_calls("rdma", rdma, HOSTS)
    assert "qps" not in args and "bidirectional" not in args and "duration" not in args
    assert args["timeout"] == 300 + 2
    assert "commcheck_rdma_timeout" in used["timeout"]
    tcp = {"commcheck_tcp_duration": 10, "commcheck_tcp_omit": 2, "commcheck_tcp_strategy": "rounds",
           "commcheck_tcp_reverse": None, "commcheck_tcp_base_port": 5201}
    (_module, args, _used), = planned_calls.planned_calls("tcp", tcp, HOSTS)
    assert "reverse" not in args
    assert args["timeout"] == 10 + 2 + 30
    assert planned_calls.planned_calls("tcp", dict(tcp, commcheck_tcp_timeout=7), HOSTS)[0][1]["timeout"] == 7
