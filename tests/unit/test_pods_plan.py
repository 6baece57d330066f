# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The k8s_pods role's decisions (module_utils/kubernetes/pods_plan.py, plugins/action/pods_plan.py): this run's
pod settings, each module call's arguments, each pod's host, the manifests."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os
import time
from unittest import mock

import pytest
import yaml

from ansible.playbook.play_context import PlayContext

from ansible_collections.clusterops.commcheck.plugins.action import pods_plan as action
from ansible_collections.clusterops.commcheck.plugins.module_utils.kubernetes import pods_plan as plan

ROLE_DEFAULTS = os.path.join(os.path.dirname(__file__), "..", "..", "roles", "k8s_pods", "defaults", "main.yml")
with open(ROLE_DEFAULTS) as handle:
    DEFAULTS = yaml.safe_load(handle)
PODS = [{"name": "commcheck-r1-a", "node": "gpu-a", "address": "10.0.0.1", "pod_ip": "10.244.0.1",
         "network_ips": ["10.0.0.1"]},
        {"name": "commcheck-r1-b", "node": "gpu-b", "address": "10.0.0.2", "pod_ip": "10.244.0.2",
         "network_ips": []}]


def values(**changed):
    return dict(DEFAULTS, **dict(("commcheck_k8s_" + key, value) for key, value in changed.items()))


def test_the_run_id_is_the_one_given_else_a_new_one_and_existing_pods_bring_their_namespace():
    state = plan.pods_state(values(run_id="r7", namespace="ns", wait_timeout=60), lambda: "new")
    assert (state["run_id"], state["namespace"], state["existing"], state["created"]) == ("r7", "ns", False, False)
    existing = plan.pods_state(values(existing_pods={"namespace": "training", "names": ["p"]}), lambda: "new")
    assert (existing["run_id"], existing["namespace"], existing["existing"]) == ("new", "training", True)
    assert action.new_run_id(clock=lambda: time.gmtime(0), draw=lambda top: top - 1) == "cc-19700101-000000-99998"


@pytest.mark.parametrize("nodes, expected", [(" a, b,,c ", ["a", "b", "c"]), ("", []), (["a", "b"], ["a", "b"])])
def test_the_nodes_of_a_survey_s_text_become_a_list(nodes, expected):
    assert plan.node_list(nodes) == expected


def test_create_leaves_out_what_is_empty_and_passes_the_rest_as_the_role_has_it():
    state = {"run_id": "r1"}
    args = plan.create_args(values(namespace="ns", image="img:1", gpus=2, context="ctx"), state, ["gpu-a"])
    assert args["nodes"] == ["gpu-a"] and args["run_id"] == "r1" and args["gpus"] == 2
    assert args["context"] == "ctx" and args["mpi_agent_dir"] == "/tmp/commcheck-kubexec"
    for left_out in ("node_selector", "shm_size", "service_account", "kubeconfig", "kubectl_binary"):
        assert left_out not in args, left_out
    assert args["mpi_agent_kubectl"] == "kubectl" and args["capabilities"] == ["IPC_LOCK"]
    given = plan.create_args(values(node_selector="gpu=yes", shm_size="8Gi", service_account="sa", mpi_agent=False),
                             state, [])
    assert (given["node_selector"], given["shm_size"], given["service_account"]) == ("gpu=yes", "8Gi", "sa")
    assert "mpi_agent_dir" not in given


def test_the_cleanup_deletes_only_pods_this_run_created_and_does_not_keep():
    state = {"run_id": "r1", "namespace": "ns", "wait_timeout": "60", "kubeconfig": "/k", "context": "",
             "kubectl_binary": "", "created": True, "keep": False}
    assert plan.delete_args(state) == {"state": "absent", "run_id": "r1", "namespace": "ns", "wait_timeout": 60,
                                       "kubeconfig": "/k"}
    for changed in ({"created": False}, {"keep": True}, {"run_id": ""}):
        assert plan.delete_args(dict(state, **changed)) is None, changed
    assert plan.detach_args(dict(state, attached=[])) is None
    detach = plan.detach_args(dict(state, attached=PODS, mpi_agent_dir="/tmp/x"))
    assert detach["pods"] == PODS and detach["state"] == "detached" and detach["mpi_agent_dir"] == "/tmp/x"
    # no state kept on localhost: the role variables', as if pods were created
    assert plan.delete_args(plan.default_state(values(run_id="r2")))["run_id"] == "r2"
    assert plan.delete_args(plan.default_state(values())) is None


def test_a_pod_host_is_named_after_its_node_unless_the_node_carries_several_and_vars_go_on_top():
    pods = PODS + [dict(PODS[1], name="commcheck-r1-b2", container="main")]
    hosts = plan.pod_hosts(values(pod_vars={"commcheck_cpu_governor": "x", "k": 1},
                                  node_vars={"gpu-b": {"k": 2}}, kubeconfig="/k"), pods, "ns", True, "/py")
    assert [host["name"] for host in hosts] == ["gpu-a", "commcheck-r1-b", "commcheck-r1-b2"]
    first = hosts[0]
    assert first["commcheck_kubectl"] == {"namespace": "ns", "pod": "commcheck-r1-a", "container": "commcheck",
                                          "context": None, "kubeconfig": "/k", "binary": None}
    assert (first["commcheck_address"], first["commcheck_tcp_address"], first["commcheck_k8s_pod_ip"]) == (
        "10.0.0.1", "10.0.0.1", "10.244.0.1")
    assert (first["ansible_python_interpreter"], first["groups"], first["ansible_connection"]) == (
        "/py", ["commcheck_pods"], "local")
    assert first["commcheck_cpu_governor"] == "x" and first["k"] == 1 and hosts[1]["k"] == 2
    assert hosts[2]["commcheck_kubectl"]["container"] == "main"
    assert first["commcheck_mpi_agent_dir"] == "/tmp/commcheck-kubexec"
    assert plan.pod_hosts(values(host_name="pod"), PODS, "ns", False, "/py")[0]["name"] == "commcheck-r1-a"
    assert plan.pod_hosts(values(), PODS, "ns", False, "/py")[0]["commcheck_mpi_agent_dir"] is None


def test_the_job_s_pod_parameters_keep_their_types_and_an_empty_shm_size_is_none():
    params = plan.job_params(values(gpus=0, host_network=False), "r1")
    assert (params["gpus"], params["host_network"], params["shm_size"], params["run_id"]) == (0, False, None, "r1")


def run_step(step, task_vars, **args):
    task = mock.MagicMock()
    task.args = dict(args, step=step)
    task.check_mode = False
    task.async_val = 0
    templar = mock.MagicMock()
    templar.template.side_effect = lambda value, **kwargs: value
    plugin = action.ActionModule(task, mock.MagicMock(), PlayContext(), loader=mock.MagicMock(), templar=templar,
                                 shared_loader_obj=mock.MagicMock())
    calls = []

    def module(module_name, module_args, task_vars):
        calls.append((module_name, module_args, task.check_mode))
        return {"changed": True, "pods": PODS, "manifests": [{"spec": {"nodeName": "picked"}}]}

    plugin._execute_module = module  # pylint: disable=protected-access
    return plugin.run(task_vars=task_vars), calls


def test_the_manifests_asked_for_are_rendered_over_the_nodes_the_selector_picks_in_check_mode():
    run = values(render_job="mpijob", render_rbac=True, node_selector="gpu=yes", image="img:1", gpus="8",
                 namespace="ml", job_collective={"gpus_per_node": 8}, manifest_dir="/out")
    result, calls = run_step("render", dict(run, commcheck_k8s_pods_state={"run_id": "r1", "nodes": ["asked"]}))
    assert not result.get("failed"), result
    assert [(name, args["state"], check) for name, args, check in calls] == [
        ("clusterops.commcheck.test_pods", "present", True)]
    job, rbac = result["files"]
    assert job["dest"] == "/out/r1-mpijob.yml" and rbac["dest"] == "/out/ml-kubexec-rbac.yml"
    manifest = yaml.safe_load(job["content"])
    assert manifest["kind"] == "MPIJob" and manifest["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"] == 1
    assert "picked" in job["content"] and "asked" not in job["content"]
    assert [item["kind"] for item in yaml.safe_load(rbac["content"])["items"]] == [
        "ServiceAccount", "Role", "RoleBinding"]
    state = {"run_id": "r1", "nodes": ["a"]}
    bad, _calls = run_step("render", dict(values(render_job="slurm"), commcheck_k8s_pods_state=state))
    assert bad["failed"] and "kind must be one of mpijob, volcano" in bad["msg"]


def test_the_job_step_runs_the_same_manifest_with_k8s_job_over_the_nodes_the_selector_picks():
    run = values(render_job="volcano", run_job=True, node_selector="gpu=yes", image="img:1", namespace="ml",
                 job_collective={"library": "nccl", "gpus_per_node": 8}, wait_timeout=45, job_timeout="900",
                 context="ctx")
    result, calls = run_step("job", dict(run, commcheck_k8s_pods_state={"run_id": "r1", "nodes": ["asked"]}))
    assert not result.get("failed"), result
    assert [(name, check) for name, _args, check in calls] == [
        ("clusterops.commcheck.test_pods", True), ("clusterops.commcheck.k8s_job", False)]
    args = calls[1][1]
    assert args["manifest"] == plan.job_manifest(run, "r1", ["picked"])       # what render writes
    assert args["manifest"]["kind"] == "Job" and args["manifest"]["metadata"]["namespace"] == "ml"
    assert (args["timeout"], args["schedule_timeout"], args["context"]) == (900, 45, "ctx")
    assert args["collective"] == {"library": "nccl", "gpus_per_node": 8} and "kubeconfig" not in args


def test_the_cleanup_reads_the_state_localhost_kept_and_empties_what_it_detached():
    kept = {"run_id": "r1", "namespace": "training", "created": False, "keep": False, "attached": PODS,
            "mpi_agent_dir": "/tmp/a", "kubeconfig": "", "context": "", "kubectl_binary": "", "wait_timeout": 60}
    result, calls = run_step("cleanup", dict(values(), hostvars={"localhost": {"commcheck_k8s_pods_state": kept}}))
    assert [(name, args["state"]) for name, args, _check in calls] == [
        ("clusterops.commcheck.existing_pods", "detached")]
    assert result["detached_pods"] and result["state"]["attached"] == [] and result["state"]["run_id"] == "r1"
    nothing, calls = run_step("cleanup", dict(values(), hostvars={"localhost": {}}))
    assert calls == [] and not nothing["detached_pods"] and nothing["msg"] == "nothing to clean"


def test_the_hosts_step_says_what_the_pods_are():
    state = {"run_id": "r1", "namespace": "ns", "existing": False}
    created, _calls = run_step("hosts", dict(values(), commcheck_k8s_pods_state=state,
                                             ansible_playbook_python="/py"), result={"pods": PODS, "mpi_agent": {}})
    assert created["msg"] == ("2 test pod(s) Ready in namespace ns: commcheck-r1-a on gpu-a on 10.0.0.1; "
                              "commcheck-r1-b on gpu-b on 10.0.0.2")
    assert [host["name"] for host in created["hosts"]] == ["gpu-a", "gpu-b"]
    found = {"pods": PODS[:1], "skipped": [{"reason": "p2 is Pending"}], "missing": ["p3"]}
    existing, _calls = run_step("hosts", dict(values(), commcheck_k8s_pods_state=dict(state, existing=True)),
                                result=found)
    assert existing["msg"] == ("1 existing pod(s) in namespace ns: commcheck-r1-a on gpu-a. Left out: p2 is Pending. "
                               "Not found: p3.")
