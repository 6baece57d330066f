# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The collective role's own tool probe (roles/collective/tasks/library.yml) once templated its transport, pod,
environment and delegate_to per host; now the tool_probe action reads the transport and pod of the host, and the
collective_plan probe step says where each host's probe runs and with which environment (issue 35 section 4)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os
from unittest import mock

import pytest
import yaml
from ansible.playbook.play_context import PlayContext

from ansible_collections.clusterops.commcheck.plugins.action import collective_plan
from ansible_collections.clusterops.commcheck.plugins.action import tool_probe as tool_probe_action

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
POD = {"namespace": "cc", "pod": "commcheck-r1-node1"}


def make(module, args):
    task = mock.MagicMock()
    task.args = dict(args)
    task.check_mode = False
    task.async_val = 0
    templar = mock.MagicMock()
    templar.template.side_effect = lambda value, **kwargs: value
    return module.ActionModule(task, mock.MagicMock(), PlayContext(), loader=mock.MagicMock(), templar=templar,
                               shared_loader_obj=mock.MagicMock())


def probe_args(args, task_vars):
    """What the tool_probe action runs its module with."""
    action = make(tool_probe_action, args)
    with mock.patch.object(action, "_execute_module", return_value={"changed": False}) as execute, \
            mock.patch.object(action, "_remove_tmp_path"):
        result = action.run(task_vars=task_vars)
    assert not result.get("failed"), result
    assert execute.call_args.kwargs["module_name"] == "clusterops.commcheck.tool_probe"
    return execute.call_args.kwargs["module_args"]


@pytest.mark.parametrize("task_vars, expected", [
    # a pod: kubectl exec into it
    ({"commcheck_transport": "kubectl", "commcheck_kubectl": POD}, {"transport": "kubectl", "kubectl": POD}),
    # a host reached over ssh keeps no pod from a commcheck_kubectl it inherits
    ({"commcheck_transport": "host", "commcheck_kubectl": POD}, {"transport": "host"}),
    ({"commcheck_kubectl": POD}, {}),
    # nothing set: the module's own default (host)
    ({}, {}),
    # an empty pod is no pod: the module says what kubectl lacks
    ({"commcheck_transport": "kubectl", "commcheck_kubectl": {}}, {"transport": "kubectl"}),
])
def test_the_probe_takes_the_transport_of_the_host_and_a_pod_only_with_kubectl(task_vars, expected):
    given = {"role_options": True, "keys": ["cmd:mpirun"], "timeout": 120}
    assert probe_args(given, task_vars) == dict({"keys": ["cmd:mpirun"], "timeout": 120}, **expected)
    # without role_options the task's arguments go as they are
    assert probe_args({"keys": ["cmd:mpirun"]}, task_vars) == {"keys": ["cmd:mpirun"]}


def test_the_probe_step_runs_a_pods_probe_from_the_controller_without_the_hosts_environment():
    with open(os.path.join(REPO, "roles", "collective", "defaults", "main.yml")) as handle:
        defaults = yaml.safe_load(handle)
    env = {"PATH": "/opt/mpi/bin:/usr/bin"}
    hostvars = {"node-1": {"commcheck_environment": {"LD_LIBRARY_PATH": "/opt/nccl/lib"}},
                "pod-a": {"commcheck_transport": "kubectl", "commcheck_kubectl": POD, "commcheck_environment": env},
                "node-2": {},
                # its own transport stands over the run's
                "node-3": {"commcheck_transport": "host"}}
    task_vars = dict(defaults, hostvars=hostvars, inventory_hostname="node-1", commcheck_environment=env,
                     ansible_play_hosts=["node-1", "pod-a", "node-2", "node-3"])
    result = make(collective_plan, {"step": "probe"}).run(task_vars=task_vars)
    assert not result.get("failed"), result
    assert result["runs_from"] == {"node-1": "node-1", "pod-a": "localhost", "node-2": "node-2", "node-3": "node-3"}
    assert result["environment"] == {"node-1": {"LD_LIBRARY_PATH": "/opt/nccl/lib"}, "pod-a": {}, "node-2": env,
                                     "node-3": env}
    assert result["probe_keys"] and result["timeout"] > 0
    # the run's transport is kubectl: every host without its own is a pod
    pods = make(collective_plan, {"step": "probe"}).run(task_vars=dict(task_vars, commcheck_transport="kubectl"))
    assert pods["runs_from"] == {"node-1": "localhost", "pod-a": "localhost", "node-2": "localhost",
                                 "node-3": "node-3"}
    assert pods["environment"] == {"node-1": {}, "pod-a": {}, "node-2": {}, "node-3": env}
