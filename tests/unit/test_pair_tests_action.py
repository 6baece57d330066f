# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The action pair_tests (issue 35, one pair-check engine): the shared task files run every family's tool module
through it. The module comes from the family's row; the play's module_defaults reach it as they would reach a task
of that module (Ansible merges them by the task's own action, pair_tests); async and check mode pass through."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from unittest import mock

import pytest

from ansible.playbook.play_context import PlayContext

from ansible_collections.clusterops.commcheck.plugins.action import pair_tests
from ansible_collections.clusterops.commcheck.plugins.module_utils.planning import families
from ansible_collections.clusterops.commcheck.plugins.plugin_utils import planned_tests

GROUPS = {"clusterops.commcheck.perftest": ["clusterops.commcheck.commcheck", "clusterops.commcheck.transport"],
          "clusterops.commcheck.iperf3": ["clusterops.commcheck.commcheck", "clusterops.commcheck.transport"]}


def make(args, module_defaults=None, async_val=0, action_groups=None, check_mode=False):
    task = mock.MagicMock()
    task.args = dict(args)
    task.check_mode = check_mode
    task.async_val = async_val
    task.module_defaults = module_defaults or []
    task._parent._play._action_groups = GROUPS if action_groups is None else action_groups
    templar = mock.MagicMock()
    templar.template.side_effect = lambda value, **kwargs: value
    connection = mock.MagicMock()
    connection.has_native_async = False
    return pair_tests.ActionModule(task, connection, PlayContext(), loader=mock.MagicMock(), templar=templar,
                                   shared_loader_obj=mock.MagicMock())


def executed(args, task_vars, **kwargs):
    """(module name, module arguments, wrap_async) the action ran, or its failed result."""
    action = make(args, **kwargs)
    with mock.patch.object(action, "_execute_module", return_value={"changed": False, "sides": [{"ok": 1}]}) as run, \
            mock.patch.object(action, "_remove_tmp_path"):
        result = action.run(task_vars=task_vars)
    if result.get("failed"):
        return result
    call = run.call_args.kwargs
    return call["module_name"], call["module_args"], call.get("wrap_async"), result


def plan(sides, module_args):
    return {"rounds": [{"sides": sides}], "module_args": module_args}


def host_vars(**changes):
    out = {"inventory_hostname": "h2", "commcheck_sysfs_root": "/lab/h2/sys",
           "ansible_facts": {"commcheck_rdma": {"devices": ["mlx5_0"]}},
           families.FACTS + "_run": plan({"h1": [{"role": "server", "rail": 0}], "h2": [{"role": "client", "rail": 0}]},
                                         {"duration": 5, "timeout": 40, "fail_on_error": False})}
    out.update(changes)
    return out


@pytest.mark.parametrize("family, module, with_facts", [
    ("rdma", "clusterops.commcheck.perftest", True),
    ("tcp", "clusterops.commcheck.iperf3", False),
])
def test_the_module_is_the_family_row_s_and_the_family_comes_from_the_task_or_the_role(family, module, with_facts):
    for args, task_vars in (({"family": family, "planned": "run"}, host_vars(commcheck_pair_family="other")),
                            ({"planned": "run"}, host_vars(commcheck_pair_family=family))):
        name, margs, wrap, result = executed(args, task_vars)
        assert name == module == families.family(family)["module"] and not wrap
        assert margs["sides"] == [{"role": "client", "rail": 0}] and margs["duration"] == 5
        assert margs["sysfs_root"] == "/lab/h2/sys" and ("rdma_facts" in margs) is with_facts
        assert "family" not in margs and "planned" not in margs
        # the module's own result shape, as it is
        assert result["sides"] == [{"ok": 1}]


def test_a_round_takes_the_round_s_sides():
    task_vars = host_vars(commcheck_pair_perf_round={"sides": {"h2": [{"role": "server", "rail": 3}]}})
    _name, margs, _wrap, _result = executed({"family": "rdma", "planned": "round"}, task_vars)
    assert margs["sides"] == [{"role": "server", "rail": 3}]


@pytest.mark.parametrize("args, task_vars, message", [
    ({"family": "infiniband", "planned": "run"}, host_vars(), "family must be one of rdma, rdma_gpu, tcp, got 'infiniband'"),
    ({"planned": "run"}, host_vars(), "give family, or set commcheck_pair_family"),
    ({"planned": "run"}, host_vars(commcheck_pair_family="udp"), "got 'udp'"),
])
def test_a_family_with_no_row_is_refused_naming_it_before_anything_runs(args, task_vars, message):
    action = make(args)
    with mock.patch.object(action, "_execute_module") as run:
        result = action.run(task_vars=task_vars)
    assert result["failed"] and message in result["msg"], result
    assert result["msg"].startswith("clusterops.commcheck.pair_tests: ")
    run.assert_not_called()


def test_a_huge_family_is_shown_cut_in_the_message():
    result = make({"family": "x" * 100000, "planned": "run"}).run(task_vars=host_vars())
    assert result["failed"] and "...(100002 characters)" in result["msg"] and len(result["msg"]) < 400, len(result["msg"])


def test_module_defaults_reach_the_module_as_they_reach_its_own_task_and_the_plan_stands_for_the_group_s():
    defaults = [{"group/clusterops.commcheck.transport": {"transport": "kubectl", "duration": 1, "qps": 4},
                 "clusterops.commcheck.perftest": {"timeout": 99, "kubectl": {"pod": "p"}},
                 # neither the module's group nor the module: never reaches it
                 "group/clusterops.commcheck.other": {"mtu": 1024},
                 "clusterops.commcheck.iperf3": {"parallel": 8}},
                {"clusterops.commcheck.collective": {"np": 2}}]
    _name, margs, _wrap, _result = executed({"family": "rdma", "planned": "run"}, host_vars(), module_defaults=defaults)
    # the module's own defaults over the plan, the plan over the group's, the group's where the plan says nothing
    assert (margs["transport"], margs["kubectl"], margs["timeout"]) == ("kubectl", {"pod": "p"}, 99)
    assert (margs["duration"], margs["qps"]) == (5, 4)
    assert "mtu" not in margs and "parallel" not in margs and "np" not in margs
    # an inner block's entry for the module replaces the play's (as Ansible merges them): the plan's timeout again
    inner = defaults + [{"clusterops.commcheck.perftest": {"kubectl": {"pod": "inner"}}}]
    _name, margs, _wrap, _result = executed({"family": "rdma", "planned": "run"}, host_vars(), module_defaults=inner)
    assert (margs["kubectl"], margs["timeout"], margs["transport"]) == ({"pod": "inner"}, 40, "kubectl")
    # what the task gives itself wins over every default and the plan, even an option a defaults entry names
    given = {"family": "rdma", "planned": "run", "timeout": 7, "duration": 2}
    _name, margs, _wrap, _result = executed(given, host_vars(), module_defaults=defaults)
    assert (margs["timeout"], margs["duration"]) == (7, 2)


def test_a_group_the_play_did_not_resolve_for_the_module_gives_it_nothing():
    defaults = [{"group/clusterops.commcheck.transport": {"transport": "kubectl"}}]
    _name, margs, _wrap, _result = executed({"family": "tcp", "planned": "run"}, host_vars(), module_defaults=defaults,
                                            action_groups={})
    assert "transport" not in margs


def test_without_planned_the_module_gets_the_task_s_options_and_its_defaults():
    defaults = [{"clusterops.commcheck.iperf3": {"transport": "kubectl"}}]
    given = {"family": "tcp", "sides": [{"role": "server"}]}
    _name, margs, _wrap, _result = executed(given, {"inventory_hostname": "h"}, module_defaults=defaults)
    assert margs == {"sides": [{"role": "server"}], "transport": "kubectl"}


def test_async_and_check_mode_pass_through_to_the_module():
    assert pair_tests.ActionModule._supports_async and pair_tests.ActionModule._supports_check_mode
    _name, _margs, wrap, _result = executed({"family": "tcp", "planned": "run"}, host_vars(), async_val=60)
    assert wrap is True
    action = make({"family": "tcp", "planned": "run"}, async_val=60)
    action._connection.has_native_async = True
    with mock.patch.object(action, "_execute_module", return_value={"ansible_job_id": "j1"}) as run:
        result = action.run(task_vars=host_vars())
    assert run.call_args.kwargs["wrap_async"] is False and result["ansible_job_id"] == "j1"
    # in check mode the module runs (it supports check mode itself), not a skipped task
    name, _margs, _wrap, result = executed({"family": "rdma", "planned": "run"}, host_vars(), check_mode=True)
    assert name == "clusterops.commcheck.perftest" and not result.get("skipped")


def test_module_defaults_for_reads_templated_entries_and_the_module_s_short_name():
    got = planned_tests.module_defaults_for(
        "clusterops.commcheck.iperf3", [{"group/g": "{{ t }}", "iperf3": {"omit": 2}}], {"clusterops.commcheck.iperf3": ["g"]},
        lambda value: {"parallel": 3, "omit": 1})
    assert got == {"parallel": 3, "omit": 2}
    assert planned_tests.module_defaults_for("clusterops.commcheck.iperf3", None, None, lambda v: v) == {}
