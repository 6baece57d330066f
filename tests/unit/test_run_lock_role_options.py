"""run_lock with role_options: each host's own one-click variables become the module's arguments."""

from unittest import mock

from ansible.playbook.play_context import PlayContext

from ansible_collections.clusterops.commcheck.plugins.action import run_lock as lock_action

HOST_VARS = {
    "node-b": {"commcheck_run_id": "run-9", "commcheck_lock_dir": "/run/lock/b", "commcheck_lock_lease": 120,
               "commcheck_lock_leftovers_wait": 7, "commcheck_transport": "kubectl"},
    "node-a": {"commcheck_run_id": "run-9", "commcheck_lock_dir": "/run/lock/a", "commcheck_lock_lease": 900,
               "commcheck_lock_leftovers_wait": 0},
}


def _module_args(task_args, task_vars):
    task = mock.MagicMock()
    task.args = dict(task_args)
    task.check_mode = False
    task.async_val = 0
    templar = mock.MagicMock()
    templar.template.side_effect = lambda value: value
    action = lock_action.ActionModule(task, mock.MagicMock(), PlayContext(), loader=mock.MagicMock(),
                                      templar=templar, shared_loader_obj=mock.MagicMock())
    seen = []

    def execute(module_name, module_args, task_vars):
        seen.append(dict(module_args))
        return {"acquired": True, "state": "free"}

    with mock.patch.object(action, "_execute_module", side_effect=execute):
        action.run(task_vars=task_vars)
    assert len(seen) == 1
    args = seen[0]
    args.pop("controller")
    return args


def test_each_host_takes_its_own_values():
    by_host = dict((host, _module_args({"role_options": True}, values)) for host, values in HOST_VARS.items())
    assert by_host == {
        "node-b": {"run_id": "run-9", "dir": "/run/lock/b", "lease": 120, "leftovers_wait": 7, "transport": "kubectl"},
        "node-a": {"run_id": "run-9", "dir": "/run/lock/a", "lease": 900, "leftovers_wait": 0},
    }


def test_a_set_variable_replaces_the_tasks_value_and_without_role_options_nothing_is_read():
    values = HOST_VARS["node-a"]
    given = _module_args({"role_options": True, "state": "absent", "dir": "/given", "transport": "kubectl"}, values)
    assert given["dir"] == "/run/lock/a"
    assert given["transport"] == "kubectl"
    assert _module_args({"state": "absent", "run_id": "r"}, values) == {"state": "absent", "run_id": "r"}


def test_state_held_reads_the_hosts_results_not_the_variables():
    task = mock.MagicMock()
    task.args = {"state": "held", "role_options": True}
    task.async_val = 0
    action = lock_action.ActionModule(task, mock.MagicMock(), PlayContext(), loader=mock.MagicMock(),
                                      templar=mock.MagicMock(), shared_loader_obj=mock.MagicMock())
    hostvars = {"node-b": {"commcheck_run_lock": {"failed": True, "msg": "held by run-1"}}, "node-a": {}}
    result = action.run(task_vars={"hostvars": hostvars, "ansible_play_hosts": ["node-b", "node-a"]})
    assert result["failed"] is True
    assert result["msg"] == "held by run-1"
