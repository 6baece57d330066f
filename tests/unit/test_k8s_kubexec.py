# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""MPI in pods: the kubexec agent, its configuration and installer, RBAC and job launcher commands."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json
import os
import stat
import subprocess

import kubernetes_validate
import pytest

from ansible_collections.clusterops.commcheck.plugins.module_utils.kubernetes.pods_plan import (
    checked_job_manifest,
    job_command,
    rbac_items,
)
from ansible_collections.clusterops.commcheck.plugins.module_utils.kubernetes import k8s_jobs
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import kubexec
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands.runner import HostTransport

PODS = [
    {"name": "commcheck-r1-gpu-01", "address": "192.168.10.11", "pod_ip": "10.244.1.5",
     "network_ips": ["192.168.10.11", "192.168.11.11"]},
    {"name": "commcheck-r1-gpu-02", "address": "192.168.10.12", "pod_ip": "10.244.2.7",
     "network_ips": ["192.168.10.12"]},
]


def test_config_maps_every_name_of_a_pod():
    text = kubexec.agent_config(PODS, "commcheck", container="commcheck", kubectl="/opt/kube/kubectl")
    assert text.splitlines() == [
        "kubectl /opt/kube/kubectl",
        "namespace commcheck",
        "host 192.168.10.11 commcheck-r1-gpu-01 commcheck",
        "host 10.244.1.5 commcheck-r1-gpu-01 commcheck",
        "host 192.168.11.11 commcheck-r1-gpu-01 commcheck",
        "host commcheck-r1-gpu-01 commcheck-r1-gpu-01 commcheck",
        "host 192.168.10.12 commcheck-r1-gpu-02 commcheck",
        "host 10.244.2.7 commcheck-r1-gpu-02 commcheck",
        "host commcheck-r1-gpu-02 commcheck-r1-gpu-02 commcheck",
    ]


@pytest.mark.parametrize("pods,namespace,container,kubectl,message", [
    ([dict(PODS[0], name="Bad_Pod")], "ns", None, "kubectl", "pod name .* is not a Kubernetes name"),
    ([dict(PODS[0], address="10.0.0.1;id")], "ns", None, "kubectl", "not a host name or an IP address"),
    ([dict(PODS[0], address="-oProxyCommand=x")], "ns", None, "kubectl", "not a host name"),
    (PODS, "ns;x", None, "kubectl", "namespace .* is not a DNS-1123 label"),
    (PODS, "ns", "c d", "kubectl", "container .* is not a DNS-1123 label"),
    (PODS, "ns", None, "kubectl --insecure", "must be an absolute path or a command name"),
    (PODS, "ns", None, "-kubectl", "must not start with '-'"),
    (PODS, "ns", None, "bin/kubectl", "must be an absolute path or a command name"),
    (PODS, "ns", None, "/opt/../bin/kubectl", "'..'"),
    ([PODS[0], dict(PODS[1], pod_ip="10.244.1.5")], "ns", None, "kubectl", "stands for two pods"),
    ([], "ns", None, "kubectl", "no test pods"),
])
def test_config_refuses_what_cannot_go_into_it(pods, namespace, container, kubectl, message):
    with pytest.raises(kubexec.KubexecError, match=message):
        kubexec.agent_config(pods, namespace, container=container, kubectl=kubectl)


@pytest.mark.parametrize("path", ["relative", "/tmp/a b", "/tmp/$(id)", "/", "/tmp/../etc", "", None])
def test_agent_dir_must_be_a_plain_absolute_path(path):
    with pytest.raises(kubexec.KubexecError):
        kubexec.check_dir(path)


def test_install_argv_is_a_constant_script_with_positional_content():
    config = kubexec.agent_config(PODS, "commcheck")
    argv = kubexec.install_argv("/tmp/commcheck-kubexec/", config)
    assert argv[:4] == ["sh", "-c", kubexec.INSTALL_SH, "sh"]
    assert argv[4:] == ["/tmp/commcheck-kubexec", kubexec.KUBEXEC_SCRIPT, config]
    assert "commcheck" not in kubexec.INSTALL_SH and "$(id)" not in kubexec.INSTALL_SH
    assert kubexec.mca_options("/tmp/commcheck-kubexec", {"btl_tcp_if_include": "net1"}) == {
        "plm_rsh_agent": "/tmp/commcheck-kubexec/kubexec.sh", "plm_rsh_no_tree_spawn": "1",
        "btl_tcp_if_include": "net1"}


@pytest.fixture
def fake_kubectl(tmp_path):
    """A kubectl stand-in that records its argv as JSON (to check what the agent runs)."""
    path = tmp_path / "kubectl"
    path.write_text("#!/bin/sh\nexec python3 -c 'import json, sys; print(json.dumps(sys.argv[1:]))' \"$@\"\n")
    path.chmod(0o755)
    return str(path)


def test_installed_agent_runs_kubectl_exec_like_ssh(tmp_path, fake_kubectl):
    directory = str(tmp_path / "agent")
    config = kubexec.agent_config(PODS, "commcheck", container="commcheck", kubectl=fake_kubectl)
    transport = HostTransport()
    changed, res = kubexec.install(transport, directory, config)
    assert changed is True and res["stdout"].strip() == "written"
    script = os.path.join(directory, "kubexec.sh")
    assert open(script).read() == kubexec.KUBEXEC_SCRIPT
    assert open(os.path.join(directory, "kubexec.conf")).read() == config
    assert os.stat(script).st_mode & stat.S_IXUSR
    assert kubexec.install(transport, directory, config)[0] is False        # identical: unchanged

    # Open MPI calls it like ssh: agent HOST words-of-a-remote-command...
    proc = subprocess.run([script, "10.244.2.7", "PATH=/opt/ompi/bin:$PATH", ";", "export", "PATH", ";",
                           "orted", "-mca", "ess", "env", "-mca", "orte_hnp_uri", "\"1234.0;tcp://10.244.1.5:4000\""],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == [
        "-n", "commcheck", "exec", "commcheck-r1-gpu-02", "-c", "commcheck", "--", "/bin/sh", "-c",
        "PATH=/opt/ompi/bin:$PATH ; export PATH ; orted -mca ess env -mca orte_hnp_uri \"1234.0;tcp://10.244.1.5:4000\""]

    proc = subprocess.run([script, "commcheck-r1-gpu-01", "hostname"], stdout=subprocess.PIPE,
                          universal_newlines=True, check=False)
    assert json.loads(proc.stdout)[:4] == ["-n", "commcheck", "exec", "commcheck-r1-gpu-01"]

    proc = subprocess.run([script, "10.9.9.9", "hostname"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, check=False)
    assert proc.returncode == 1 and "10.9.9.9 is not one of this run's test pods" in proc.stderr
    proc = subprocess.run([script, "only-a-host"], stderr=subprocess.PIPE, universal_newlines=True, check=False)
    assert proc.returncode == 2 and "usage" in proc.stderr

    # a changed pod list is written again
    other = kubexec.agent_config(PODS[:1], "commcheck", kubectl=fake_kubectl)
    assert kubexec.install(transport, directory, other)[0] is True


def test_install_failure_is_an_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with pytest.raises(kubexec.KubexecError, match="installing the MPI agent"):
        kubexec.install(HostTransport(), str(blocker / "agent"), kubexec.agent_config(PODS, "ns"))


def test_rbac_objects_are_valid_and_allow_exec():
    items = rbac_items("commcheck", service_account="mpi")
    for item in items:
        kubernetes_validate.validate(json.loads(json.dumps(item)), "1.30.0", strict=True)
    assert [i["kind"] for i in items] == ["ServiceAccount", "Role", "RoleBinding"]
    rules = {tuple(r["resources"]): r["verbs"] for r in items[1]["rules"]}
    assert set(rules[("pods/exec",)]) >= {"create", "get"} and "list" in rules[("pods",)]
    assert items[2]["subjects"] == [{"kind": "ServiceAccount", "name": "mpi", "namespace": "commcheck"}]
    assert items[2]["roleRef"]["name"] == items[1]["metadata"]["name"] == "mpi-kubexec"
    with pytest.raises(Exception, match="DNS-1123"):
        rbac_items("Bad NS")


POD_PARAMS = {"image": "nvcr.io/nvidia/pytorch:24.05-py3", "gpus": 8, "run_id": "r1", "namespace": "commcheck",
              "resources": {"rdma/rdma_shared_device_a": 1}, "networks": ["commcheck/roce-net"]}


@pytest.mark.parametrize("kind", ["mpijob", "volcano"])
def test_job_launcher_command_and_manifest(kind):
    nodes = ["gpu-01", "gpu-02"]
    command = job_command(nodes, kind=kind, collective={
        "gpus_per_node": 8, "min_bytes": "8", "max_bytes": "8G", "allow_run_as_root": True,
        "env": {"NCCL_IB_HCA": "mlx5_0"}, "mca": {"btl_tcp_if_include": "eth0"}})
    expected = ["mpirun", "--allow-run-as-root", "-np", "16", "--map-by", "ppr:8:node"]
    if kind == "volcano":
        expected += ["--hostfile", k8s_jobs.VOLCANO_HOSTFILE]
    expected += ["-x", "NCCL_DEBUG=INFO", "-x", "NCCL_IB_HCA=mlx5_0", "--mca", "btl_tcp_if_include", "eth0",
                 "all_reduce_perf", "-b", "8", "-e", "8G", "-f", "2", "-g", "1", "-n", "20", "-w", "5", "-c", "1",
                 "-d", "float", "-o", "sum"]
    assert command == expected
    manifest = checked_job_manifest(POD_PARAMS, nodes, command, kind=kind)
    for template in k8s_jobs.pod_templates(manifest):
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": dict(template["metadata"], name="x"),
               "spec": template["spec"]}
        kubernetes_validate.validate(json.loads(json.dumps(pod)), "1.30.0", strict=True)
    hccl = job_command(nodes, kind=kind, collective={"library": "hccl", "gpus_per_node": 8})
    assert "all_reduce_test" in hccl and "-p" in hccl and "NCCL_DEBUG=INFO" not in " ".join(hccl)


@pytest.mark.parametrize("nodes,kind,collective,message", [
    ([], "mpijob", {}, "non-empty"),
    (["gpu-01"], "slurm", {}, "kind must be one of"),
    (["gpu-01"], "mpijob", {"operation": "all_to_nowhere"}, "has no 'all_to_nowhere' test"),
    (["gpu-01"], "mpijob", {"env": {"LD_PRELOAD": "/x.so"}}, "not allowed"),
    (["gpu-01"], "mpijob", {"min_bytes": "8X"}, "min_bytes must be a size"),
    (["gpu-01"], "mpijob", {"hosts": ["a"]}, "unknown collective options: hosts"),
    (["-oops"], "mpijob", {}, "nodes\\[0\\] '-oops' must not start with '-'"),
])
def test_job_command_refuses_bad_input(nodes, kind, collective, message):
    with pytest.raises(Exception, match=message):
        job_command(nodes, kind=kind, collective=collective)
