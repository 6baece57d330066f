"""rdma_facts with role_options: each host's discover variables become the module's arguments, read in Python."""

from unittest import mock

import pytest
from ansible.playbook.play_context import PlayContext

from ansible_collections.clusterops.commcheck.plugins.action import rdma_facts as facts_action

ROLE_DEFAULTS = {"commcheck_sysfs_root": "/sys", "commcheck_expected_rate_gbps": None, "commcheck_subnet": "",
                 "commcheck_ib_gid_index": None, "commcheck_discover_tools": None,
                 "commcheck_discover_topology_tools": None,
                 "commcheck_discover_address_source": "auto", "commcheck_transport": "host", "commcheck_kubectl": {},
                 "commcheck_fail_on": "never"}
# hosts in no sorted order, values that differ per host
HOST_VARS = {
    "node-c": dict(ROLE_DEFAULTS, commcheck_sysfs_root="/lab/c/sys", expected_rate_gbps=200, commcheck_subnet="10.1.0.0/16",
                   commcheck_ib_gid_index=3, commcheck_oneclick_probe_keys=["perftest"],
                   commcheck_oneclick_discover_devices=False, commcheck_fail_on="error",
                   commcheck_discover_topology_tools=True),
    "node-a": dict(ROLE_DEFAULTS, commcheck_sysfs_root="/lab/a/sys", commcheck_expected_rate_gbps=400,
                   expected_rate_gbps=200, commcheck_ib_gid_index=0, commcheck_discover_tools=False,
                   commcheck_transport="kubectl", commcheck_kubectl={"pod": "pod-a"}),
}


def _module_args(task_args, task_vars):
    task = mock.MagicMock()
    task.args = dict(task_args)
    task.check_mode = False
    task.async_val = 0
    templar = mock.MagicMock()
    templar.template.side_effect = lambda value: value
    action = facts_action.ActionModule(task, mock.MagicMock(), PlayContext(), loader=mock.MagicMock(),
                                       templar=templar, shared_loader_obj=mock.MagicMock())
    with mock.patch.object(action, "_execute_module", return_value={"changed": False}) as execute, \
            mock.patch.object(action, "_remove_tmp_path"):
        action.run(task_vars=task_vars)
    return execute.call_args.kwargs["module_args"]


def test_each_host_takes_its_own_values():
    by_host = dict((host, _module_args({"role_options": True}, values)) for host, values in HOST_VARS.items())
    assert by_host == {
        "node-c": {"sysfs_root": "/lab/c/sys", "expected_rate_gbps": 200, "subnet": "10.1.0.0/16", "ib_gid_index": 3,
                   "address_source": "auto", "transport": "host", "probe": ["perftest"], "devices": False,
                   "fail_on": "error", "topology_tools": True},
        "node-a": {"sysfs_root": "/lab/a/sys", "expected_rate_gbps": 400, "ib_gid_index": 0, "tools": False,
                   "address_source": "auto", "transport": "kubectl", "kubectl": {"pod": "pod-a"}, "fail_on": "never"},
    }


def test_a_set_variable_replaces_the_play_default_an_unset_one_keeps_it():
    given = {"role_options": True, "transport": "kubectl", "kubectl": {"pod": "from-defaults"}, "timeout": 9}
    args = _module_args(given, HOST_VARS["node-c"])
    assert args["transport"] == "host"
    assert args["kubectl"] == {"pod": "from-defaults"}
    assert args["timeout"] == 9


def test_without_role_options_nothing_is_read():
    assert _module_args({"sysfs_root": "/given"}, HOST_VARS["node-a"]) == {"sysfs_root": "/given"}


@pytest.mark.parametrize("variables, expected", [
    ({}, None),
    ({"expected_rate_gbps": None}, None),
    ({"expected_rate_gbps": 100}, 100),
    ({"expected_rate_gbps": 100, "commcheck_expected_rate_gbps": 25.5}, 25.5),
])
def test_discovery_gets_the_expected_rate_only_when_one_is_set(variables, expected):
    args = facts_action.role_args({}, dict(ROLE_DEFAULTS, **variables).get)
    assert args.get("expected_rate_gbps") == expected
    assert ("expected_rate_gbps" in args) is (expected is not None)
