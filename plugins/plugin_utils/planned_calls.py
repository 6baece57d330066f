# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The module calls a pair check would make, from the role variables: ``planned_calls(family, options, hosts)``.

Each family's calls are built as its role builds them (``roles/pair_perf/tasks/round.yml``, the task files every
family's role runs, with the rounds from GPU memory through it too): the same module arguments from the same
variables (the module options of the family's row in ``planning/families.py``), the sides from the same
planner (``planning/schedule.plan_rounds``) over placeholder endpoints, as discovery has not run. The modules
merge each side with the per-test options the same way at run time (``planning/per_test_options.py``).
``plugin_utils/planned_call_checks.py`` passes every call through its module's own checks before anything
runs.

A call: ``(module, arguments, {argument: [role variables that fed it]})``.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.clusterops.commcheck.plugins.module_utils.planning import families
from ansible_collections.clusterops.commcheck.plugins.module_utils.planning.schedule import plan_rounds
from ansible_collections.clusterops.commcheck.plugins.plugin_utils import pair_engine


def _timeout_variables(row):
    """The variables a family's step timeout comes from (pair_engine.step_timeout)."""
    return [families.option(row, "timeout")] + list(row["timeout"]["timed"]) + [families.option(row, "strategy")]


def _family_args(name):
    """(module argument, role variable, rule) of each option of the family's module that comes from a variable."""
    return tuple(arg for arg in families.family(name)["module_args"] if arg[2] != "fixed")


PERFTEST_ARGS = _family_args("rdma")
IPERF3_ARGS = _family_args("tcp")
# what the sides are planned from (a bad one fails the planner or every side)
PERFTEST_SIDE_VARIABLES = ("commcheck_rdma_ops", "commcheck_rdma_metrics", "commcheck_rdma_base_port",
                           "commcheck_rdma_strategy")
IPERF3_SIDE_VARIABLES = ("commcheck_tcp_base_port", "commcheck_tcp_strategy")
# what the family's calls need at least: without it the roles checked do not run the family
FAMILY_KEYS = {"rdma": "commcheck_rdma_ops", "gpudirect": "commcheck_rdma_gpudirect", "tcp": "commcheck_tcp_duration"}
# the one-click check's name of each family (commcheck_checks)
FAMILY_CHECKS = {"rdma": "rdma", "gpudirect": "rdma", "tcp": "tcp"}
# the row of planning/families.py each family's calls are made by
FAMILY_ROWS = {"rdma": "rdma", "gpudirect": "rdma_gpu", "tcp": "tcp"}
# every variable the calls are planned from (the up-front check converts only these)
VARIABLES = tuple(sorted(set(
    [variable for _arg, variable, _how in PERFTEST_ARGS + IPERF3_ARGS] + list(PERFTEST_SIDE_VARIABLES)
    + list(IPERF3_SIDE_VARIABLES) + list(FAMILY_KEYS.values())
    + [variable for row in FAMILY_ROWS.values() for variable in _timeout_variables(families.family(row))]
    + ["commcheck_checks", "commcheck_rdma_use_cuda", "commcheck_ib_gid_index"])))
PLACEHOLDER_HOSTS = ("planned-host-a", "planned-host-b")
_GPUDIRECT_OFF = ("false", "no", "off")


def _arguments(row, options, hosts):
    """(module arguments, {argument: [variable]}): the engine's own arguments of the family's module
    (``pair_engine.module_args``, its step timeout included), with the variables each came from."""
    timeout = pair_engine.step_timeout(row, options.get, len(hosts))
    args = pair_engine.module_args(row, options.get, timeout)
    used = dict((argument, [variable]) for argument, variable, how in row["module_args"]
                if how != "fixed" and argument in args)
    used["timeout"] = _timeout_variables(row)
    return args, used


def _placeholder_rails(hosts, gid_index):
    rail = {"rail": 0, "device": "mlx5_0", "port": 1, "gid_index": gid_index, "rate_gbps": 100.0}
    return dict((host, [dict(rail, address="192.0.2.%d" % (num + 1))]) for num, host in enumerate(hosts))


def _pair(hosts):
    hosts = list(hosts or ())[:2]
    return hosts + list(PLACEHOLDER_HOSTS[len(hosts):])


def _perftest_call(options, hosts, gpu):
    args, used = _arguments(families.family(FAMILY_ROWS["gpudirect" if gpu else "rdma"]), options, hosts)
    tests = [[op, metric] for op in options.get("commcheck_rdma_ops") or [] for metric in options.get(
        "commcheck_rdma_metrics") or []]
    plan = plan_rounds([[hosts]], _placeholder_rails(hosts, options.get("commcheck_ib_gid_index")), tests,
                       options.get("commcheck_rdma_base_port", 18515),
                       merge=options.get("commcheck_rdma_strategy") == "pipelined")
    sides = [side for host in hosts for side in plan[0]["sides"].get(host, [])]
    if gpu:
        sides = [dict(side, use_cuda=0) for side in sides]
    args["sides"] = sides
    used["sides"] = list(PERFTEST_SIDE_VARIABLES)
    return ("perftest", args, used)


def _iperf3_call(options, hosts):
    args, used = _arguments(families.family(FAMILY_ROWS["tcp"]), options, hosts)
    plan = plan_rounds([[hosts]], None, None, options.get("commcheck_tcp_base_port", 5201),
                       merge=options.get("commcheck_tcp_strategy") == "pipelined")
    args["sides"] = [side for host in hosts for side in plan[0]["sides"].get(host, [])]
    used["sides"] = list(IPERF3_SIDE_VARIABLES)
    return ("iperf3", args, used)


def runs(family, options):
    """Whether the variables checked (``options``) run ``family`` at all."""
    if FAMILY_KEYS[family] not in options:
        return False
    if "commcheck_checks" in options and FAMILY_CHECKS[family] not in (options["commcheck_checks"] or []):
        return False
    if family == "gpudirect":
        setting = str(options.get("commcheck_rdma_gpudirect")).lower()
        use_cuda = options.get("commcheck_rdma_use_cuda")
        return setting not in _GPUDIRECT_OFF and (use_cuda is None or use_cuda < 0)
    return True


def planned_calls(family, options, hosts=None):
    """The module calls ``family`` (rdma, gpudirect, tcp) would make with these variable values (converted),
    between the first two of ``hosts`` (placeholders when fewer): the arguments of a call do not depend on
    the pair, only on the test. Raises ``schedule.ScheduleError`` when the planner refuses the variables."""
    if not runs(family, options):
        return []
    pair = _pair(hosts)
    if family == "tcp":
        return [_iperf3_call(options, pair)]
    return [_perftest_call(options, pair, gpu=family == "gpudirect")]
