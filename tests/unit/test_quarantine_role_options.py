"""quarantine with role_options: the role's variables, and the culprits of the published records, read in Python."""

from unittest import mock

import pytest
from ansible.playbook.play_context import PlayContext

from ansible_collections.clusterops.commcheck.plugins.action import quarantine as quarantine_action
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import culprits

ROLE_VALUES = {
    "commcheck_quarantine_backend": "slurm",
    "commcheck_quarantine_hosts": ["node-c", "node-a"],
    "commcheck_quarantine_reason": "bad rail",
    "commcheck_quarantine_components": ["node"],
    "commcheck_quarantine_node_names": {"node-c": "c01"},
    "commcheck_quarantine_state": "absent",
    "commcheck_quarantine_dry_run": False,
    "commcheck_quarantine_taint": True,
    "commcheck_quarantine_taint_effect": "NoExecute",
    "commcheck_quarantine_kubeconfig": "/etc/kube.conf",
    "commcheck_quarantine_context": "prod",
    "commcheck_quarantine_findings": [{"kind": "finding", "host": "node-c"}],
}
# an unreachable host (a culprit) and a passing pair (none)
PUBLISHED = [
    {"kind": "rdma", "check": "rdma_bw", "host": "node-a", "peer": "node-c", "verdict": "pass", "metric": "bw_gbps",
     "value": 90.0},
    {"kind": "finding", "host": "node-b", "verdict": "error", "params": {"finding": "unreachable"}},
]


def _args(args, values, published=None):
    return quarantine_action.role_args(args, values.get, lambda: published)


def test_every_argument_comes_from_its_own_role_variable():
    assert _args({"role_options": True}, ROLE_VALUES) == {
        "backend": "slurm", "hosts": ["node-c", "node-a"], "reason": "bad rail", "components": ["node"],
        "node_names": {"node-c": "c01"}, "state": "absent", "dry_run": False, "taint": True,
        "taint_effect": "NoExecute", "kubeconfig": "/etc/kube.conf", "kube_context": "prod",
        "findings": [{"kind": "finding", "host": "node-c"}],
    }


def test_empty_kubeconfig_and_context_are_unset_and_a_set_variable_replaces_the_tasks_value():
    values = dict(ROLE_VALUES, commcheck_quarantine_kubeconfig="", commcheck_quarantine_context="",
                  commcheck_quarantine_reason="")
    full = _args({"backend": "kubernetes", "kube_context": "given"}, values)
    assert "kubeconfig" not in full
    assert full["kube_context"] == "given"
    assert full["reason"] == ""
    assert full["backend"] == "slurm"


def test_without_findings_the_culprits_of_the_published_records():
    values = dict(ROLE_VALUES, commcheck_quarantine_findings=[])
    expected = culprits.culprits(list(PUBLISHED))
    assert expected  # the fixture names a culprit
    assert _args({}, values, PUBLISHED)["findings"] == expected
    assert _args({}, values, None)["findings"] == culprits.culprits([])


def test_published_records_that_are_not_a_list_fail_the_task():
    task = mock.MagicMock()
    task.args = {"role_options": True}
    task.async_val = 0
    templar = mock.MagicMock()
    templar.template.side_effect = lambda value: value
    action = quarantine_action.ActionModule(task, mock.MagicMock(), PlayContext(), loader=mock.MagicMock(),
                                            templar=templar, shared_loader_obj=mock.MagicMock())
    task_vars = dict(ROLE_VALUES, commcheck_quarantine_findings=[],
                     hostvars={"localhost": {"commcheck_run_records": "not records"}})
    with mock.patch.object(action, "_execute_module") as execute:
        result = action.run(task_vars=task_vars)
    assert result["failed"] is True
    assert "must be a list of records, got str" in result["msg"]
    execute.assert_not_called()


@pytest.mark.parametrize("role_options", [True, False])
def test_the_module_gets_the_arguments_without_role_options(role_options):
    task = mock.MagicMock()
    task.args = {"role_options": role_options, "backend": "kubernetes"}
    task.async_val = 0
    templar = mock.MagicMock()
    templar.template.side_effect = lambda value: value
    action = quarantine_action.ActionModule(task, mock.MagicMock(), PlayContext(), loader=mock.MagicMock(),
                                            templar=templar, shared_loader_obj=mock.MagicMock())
    task_vars = dict(ROLE_VALUES, hostvars={"localhost": {"commcheck_run_records": PUBLISHED}})
    with mock.patch.object(action, "_execute_module", return_value={"changed": False}) as execute:
        action.run(task_vars=task_vars)
    sent = execute.call_args.kwargs["module_args"]
    assert "role_options" not in sent
    assert sent["backend"] == ("slurm" if role_options else "kubernetes")
    assert ("reason" in sent) is role_options
