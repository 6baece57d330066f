# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kubernetes end to end, against the kubectl STAND-IN (tests/lab/kubectl_standin.py).

There is no Kubernetes cluster here. What runs against what:

- kubectl STAND-IN (not kubectl): ``playbooks/k8s_commcheck.yml`` with real
  ``ansible-playbook``: the ``k8s_pods`` role creates pods with the
  ``test_pods`` module (apply/get/delete on the stand-in's state file), the
  pods become hosts with the kubectl transport, and discover (rdma_facts: one
  exec dumps the emulated sysfs), the pairwise RDMA test (perftest emulator),
  the collective (real Open MPI ``mpirun`` in the first "pod", reaching the
  other pods through the installed ``kubexec.sh`` agent, which calls kubectl
  exec again; nccl-tests emulator with mpi4py), the TCP test (real iperf3) and
  the report run in the lab hosts that stand for the pods' nodes; the pods are
  deleted on every path. The stand-in gives exec'd commands the pod's
  environment (never the caller's) and, like real kubectl, does not kill a
  remote command when the local kubectl dies.
- the test_pods module alone against the stand-in (no lab, no root needed):
  create, idempotence, check mode, diff, node selector, the MPI agent, absent.
- REAL kubectl: see tests/unit/test_kubectl_transport.py and
  tests/unit/test_k8s_real_kubectl.py (argv parsing, and what real kubectl
  sends to a loopback API endpoint).

- the whole playbook without lab and root: two "pods" on this machine
  (discover + TCP over loopback addresses, on ports of the test's own block),
  and a render-only run.

Fast tier: one run in 4 pods (``pods_run``) that two tests read: the
Kubernetes job template launched as AWX launches it (its survey's defaults,
the image and nodes the user gives, what the lab needs), with GPUDirect
(the default) in the pods, the collective in three of them and the fourth
skipped for want of an accelerator, and manifests rendered from the same
parameters; and the test_pods module's create / idempotence / check mode /
diff / absent and node selector. Full tier (``pytest.mark.full``): the other
module and stand-in tests, the playbook without root, render-only, a failed
check and pods that never get ready (the pods are deleted on every path).

Run times on the 2-core build machine (load average 7-9 from other work):
the module and stand-in tests 1-8 s each, the playbook without root about
30 s, render-only about 10 s; the run in 4 pods 75-110 s.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import glob
import json
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import cpu_governor

import lab as lablib
import oneclick_helpers as oc
from lab_checks import HEALTHY_VERDICTS, MEASURED_VERDICTS, assert_nothing_left, history_env, own_ports, read_history, \
    scratch_dir, write_executable
from test_awx_surveys import launch_vars, template_of

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
STANDIN_PY = os.path.join(REPO, "tests", "lab", "kubectl_standin.py")
VENV_BIN = os.path.join(REPO, ".venv", "bin")
VENV_PYTHON = os.path.join(VENV_BIN, "python")
COLLECTIONS = os.path.join(REPO, ".build", "collections")
PLAYBOOK = os.path.join(REPO, "playbooks", "k8s_commcheck.yml")
RUN_LABEL = "commcheck.clusterops.io/run"
IMAGE = "registry.example.com/commcheck-tools:lab"


# ------------------------------------------------------------------ helpers

def _launcher(name, text):
    return write_executable(os.path.join(scratch_dir("k8s"), name), text)


# What the tests give as "kubectl": a launcher of the STAND-IN (not kubectl), with the venv's Python.
STANDIN = _launcher("kubectl-standin", "#!/bin/sh\n# STAND-IN launcher (commcheck lab): this is not kubectl\n"
                    "exec %s %s \"$@\"\n" % (VENV_PYTHON if os.path.exists(VENV_PYTHON) else "python3", STANDIN_PY))


def write_config(tmp_path, nodes):
    state = tmp_path / "k8s-state.json"
    config = tmp_path / "standin.json"
    config.write_text(json.dumps({"state": str(state), "nodes": nodes}))
    return str(config), str(state)


def pods_in(state):
    try:
        with open(state) as handle:
            return json.load(handle)
    except (IOError, ValueError):
        return {}


def events(state):
    try:
        with open(state + ".events") as handle:
            return [json.loads(line) for line in handle if line.strip()]
    except IOError:
        return []


def ansible_env(config, extra=None):
    env = dict(os.environ)
    env.update({"ANSIBLE_COLLECTIONS_PATH": COLLECTIONS, "ANSIBLE_NOCOLOR": "1",
                "ANSIBLE_PYTHON_INTERPRETER": VENV_PYTHON if os.path.exists(VENV_PYTHON) else sys.executable,
                "ANSIBLE_DEPRECATION_WARNINGS": "0", "COMMCHECK_KUBECTL_STANDIN": config,
                "LC_ALL": "C.UTF-8"})
    env.update(extra or {})
    return env


def run_test_pods(tmp_path, config, args, check=False, diff=False):
    """Run the test_pods module (as Ansible runs it, without the ansible CLI); return (rc, result, output)."""
    argfile = tmp_path / ("args-%d.json" % time.monotonic_ns())
    argfile.write_text(json.dumps({"ANSIBLE_MODULE_ARGS": dict(args, kubectl_binary=STANDIN,
                                                               _ansible_check_mode=check, _ansible_diff=diff)}))
    env = ansible_env(config, {"PYTHONPATH": COLLECTIONS})
    proc = subprocess.run([VENV_PYTHON if os.path.exists(VENV_PYTHON) else sys.executable,
                           os.path.join(REPO, "plugins", "modules", "test_pods.py"), str(argfile)],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, env=env, cwd=REPO,
                          timeout=180, check=False)
    output = proc.stdout + proc.stderr
    assert "Traceback" not in output, output
    result = json.loads(proc.stdout[proc.stdout.index("{"):])
    return (1 if result.get("failed") else 0), result, output


# ------------------------------------------- test_pods against the stand-in

@pytest.fixture
def local_nodes(tmp_path):
    """Two 'nodes' that are this machine (no namespaces: runs without root)."""
    nodes = {"node-a": {"addresses": ["127.0.0.1", "127.0.10.1"], "labels": {"rdma": "true"}},
             "node-b": {"addresses": ["127.0.0.2", "127.0.10.2"], "labels": {"rdma": "true"}},
             "node-c": {"addresses": ["127.0.0.3"], "labels": {"rdma": "true"}, "unschedulable": True},
             "node-d": {"addresses": ["127.0.0.4"], "ready": False}}
    return write_config(tmp_path, nodes)


BASE = {"run_id": "t1", "namespace": "commcheck", "image": IMAGE, "nodes": ["node-a", "node-b"],
        "resources": {"rdma/rdma_shared_device_a": 1}, "networks": ["commcheck/roce-net"], "wait_timeout": 20}


def test_test_pods_create_idempotent_check_diff_absent(tmp_path, local_nodes):
    config, state = local_nodes
    rc, res, out = run_test_pods(tmp_path, config, BASE, check=True, diff=True)
    assert rc == 0 and res["changed"] is True and res["created"] == ["commcheck-t1-node-a", "commcheck-t1-node-b"], out
    assert pods_in(state) == {}                                  # check mode created nothing
    rc, res, out = run_test_pods(tmp_path, config, BASE)
    assert rc == 0 and res["changed"] is True, out
    assert sorted(pods_in(state)) == ["commcheck/commcheck-t1-node-a", "commcheck/commcheck-t1-node-b"]
    assert [(p["node"], p["pod_ip"], p["network_ips"], p["address"], p["ready"]) for p in res["pods"]] == [
        ("node-a", "127.0.0.1", ["127.0.10.1"], "127.0.10.1", True),
        ("node-b", "127.0.0.2", ["127.0.10.2"], "127.0.10.2", True)]
    live = pods_in(state)["commcheck/commcheck-t1-node-a"]
    assert live["metadata"]["labels"][RUN_LABEL] == "t1" and live["spec"]["nodeName"] == "node-a"
    rc, res, out = run_test_pods(tmp_path, config, BASE)
    assert rc == 0 and res["changed"] is False and res["created"] == [] and res["deleted"] == [], out
    # a different image: pods are immutable, so they are replaced
    rc, res, out = run_test_pods(tmp_path, config, dict(BASE, image=IMAGE + "2", nodes=["node-a"]))
    assert rc == 0 and res["changed"] is True, out
    assert res["created"] == ["commcheck-t1-node-a"] and res["deleted"] == ["commcheck-t1-node-a", "commcheck-t1-node-b"]
    absent = {"run_id": "t1", "namespace": "commcheck", "state": "absent"}
    rc, res, out = run_test_pods(tmp_path, config, absent, check=True)
    assert rc == 0 and res["changed"] is True and res["deleted"] == ["commcheck-t1-node-a"]
    assert len(pods_in(state)) == 1
    rc, res, out = run_test_pods(tmp_path, config, absent)
    assert rc == 0 and res["changed"] is True and pods_in(state) == {}
    rc, res, out = run_test_pods(tmp_path, config, absent)
    assert rc == 0 and res["changed"] is False


def test_test_pods_node_selector_skips_cordoned_and_not_ready(tmp_path, local_nodes):
    config, state = local_nodes
    rc, res, out = run_test_pods(tmp_path, config, dict(BASE, nodes=[], node_selector="rdma=true"), check=True)
    assert rc == 0, out
    assert [m["spec"]["nodeName"] for m in res["manifests"]] == ["node-a", "node-b"]
    rc, res, out = run_test_pods(tmp_path, config, dict(BASE, nodes=[], node_selector="rdma=false"))
    assert rc != 0 and "no Ready, schedulable node matches" in res["msg"]


@pytest.mark.full
def test_test_pods_not_ready_fails_and_deletes(tmp_path, local_nodes):
    config, state = local_nodes
    rc, res, out = run_test_pods(tmp_path, config, dict(BASE, nodes=["node-a", "node-x"], wait_timeout=3))
    assert rc != 0
    assert "commcheck-t1-node-x: Unschedulable" in res["msg"], res["msg"]
    assert pods_in(state) == {}


@pytest.mark.full
def test_test_pods_installs_the_mpi_agent(tmp_path, local_nodes):
    config, state = local_nodes
    agent_dir = str(tmp_path / "kubexec")
    args = dict(BASE, mpi_agent_dir=agent_dir, mpi_agent_kubectl=STANDIN)
    rc, res, out = run_test_pods(tmp_path, config, args)
    assert rc == 0, out
    agent = res["mpi_agent"]
    # These two "pods" share this machine's filesystem: the second one finds the agent already there.
    assert agent["path"] == agent_dir + "/kubexec.sh" and agent["installed"] == ["commcheck-t1-node-a"]
    assert agent["mca"] == {"plm_rsh_agent": agent_dir + "/kubexec.sh", "plm_rsh_no_tree_spawn": "1"}
    assert "host 127.0.10.2 commcheck-t1-node-b commcheck" in agent["config"]
    assert os.access(agent["path"], os.X_OK)
    # the agent reaches the pod of an address through the stand-in (and the pod's environment)
    proc = subprocess.run([agent["path"], "127.0.10.2", "echo", "$COMMCHECK_STANDIN_POD", "$HOSTNAME"],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                          env=dict(os.environ, COMMCHECK_KUBECTL_STANDIN=config), timeout=60, check=False)
    assert proc.returncode == 0 and proc.stdout.split() == ["commcheck/commcheck-t1-node-b", "commcheck-t1-node-b"], \
        proc.stderr
    proc = subprocess.run([agent["path"], "10.9.9.9", "true"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, env=dict(os.environ, COMMCHECK_KUBECTL_STANDIN=config), timeout=60,
                          check=False)
    assert proc.returncode == 1 and "10.9.9.9 is not one of this run's test pods" in proc.stderr
    rc, res, out = run_test_pods(tmp_path, config, args)
    assert rc == 0 and res["changed"] is False and res["mpi_agent"]["installed"] == [], out
    rc, res, out = run_test_pods(tmp_path, config, dict(args, mpi_agent_dir="relative/dir"))
    assert rc != 0 and "must be an absolute path" in res["msg"]


@pytest.mark.full
def test_standin_exec_outlives_a_killed_local_kubectl(tmp_path, local_nodes):
    """As with real kubectl exec: killing the local client does not end the remote command."""
    config, state = local_nodes
    assert run_test_pods(tmp_path, config, BASE)[0] == 0
    marker = "77.%d" % os.getpid()
    proc = subprocess.Popen([STANDIN, "-n", "commcheck", "exec", "commcheck-t1-node-a", "--", "sleep", marker],
                            env=dict(os.environ, COMMCHECK_KUBECTL_STANDIN=config), start_new_session=True)
    try:
        deadline = time.monotonic() + 60     # only bounds the wait for the remote sleep to start
        while not _pgrep("sleep " + marker) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _pgrep("sleep " + marker)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)
        time.sleep(0.3)
        assert _pgrep("sleep " + marker), "the remote command died with the local kubectl"
    finally:
        # deleting the pod ends what runs in it
        rc, res, out = run_test_pods(tmp_path, config, {"run_id": "t1", "namespace": "commcheck", "state": "absent"})
    assert rc == 0 and not _pgrep("sleep " + marker)
    killed = [e for e in events(state) if e["event"] == "delete" and e["killed"]]
    assert [k["cmdline"] for e in killed for k in e["killed"]] == ["sleep " + marker]


def _pgrep(pattern):
    proc = subprocess.run(["pgrep", "-f", "^" + pattern], stdout=subprocess.PIPE, universal_newlines=True,
                          check=False)
    return proc.stdout.split()


@pytest.mark.full
def test_standin_refuses_what_kubectl_refuses(tmp_path, local_nodes):
    config, state = local_nodes
    env = dict(os.environ, COMMCHECK_KUBECTL_STANDIN=config)

    def kubectl(*args):
        return subprocess.run([STANDIN] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True, env=env, timeout=30, check=False)

    assert "unknown flag: --bogus" in kubectl("get", "pods", "--bogus").stderr
    assert "no such file" in kubectl("--kubeconfig", str(tmp_path / "nope"), "get", "pods").stderr
    assert 'pods "p1" not found' in kubectl("exec", "p1", "--", "true").stderr
    assert run_test_pods(tmp_path, config, BASE)[0] == 0
    res = kubectl("-n", "commcheck", "exec", "commcheck-t1-node-a", "-c", "other", "--", "true")
    assert res.returncode == 1 and "container other is not valid" in res.stderr
    res = kubectl("-n", "commcheck", "exec", "commcheck-t1-node-a", "--", "sh", "-c", "exit 3")
    assert res.returncode == 3 and "command terminated with exit code 3" in res.stderr
    assert kubectl("-n", "commcheck", "delete", "pod", "nope").returncode == 1
    assert kubectl("-n", "commcheck", "delete", "pod", "--ignore-not-found", "-l", RUN_LABEL + "=t1").returncode == 0
    assert pods_in(state) == {}


@pytest.mark.full
def test_playbook_render_only_writes_manifests_and_creates_no_pods(tmp_path, local_nodes):
    config, state = local_nodes
    manifests = tmp_path / "out"
    extra = {"commcheck_k8s_kubectl_binary": STANDIN, "commcheck_k8s_namespace": "commcheck",
             "commcheck_k8s_image": IMAGE, "commcheck_k8s_node_selector": "rdma=true", "commcheck_k8s_run_id": "r9",
             "commcheck_k8s_gpus": 8, "commcheck_k8s_resources": {"nvidia.com/hostdev": 1},
             "commcheck_k8s_render_job": "volcano", "commcheck_k8s_render_rbac": True,
             "commcheck_k8s_render_only": True, "commcheck_k8s_manifest_dir": str(manifests),
             "commcheck_k8s_job_collective": {"gpus_per_node": 8, "max_bytes": "1G"}}
    extra_file = tmp_path / "extra.json"
    extra_file.write_text(json.dumps(extra))
    proc = subprocess.run([os.path.join(VENV_BIN, "ansible-playbook"), "-i", "localhost,", "-c", "local",
                           "-e", "@" + str(extra_file), PLAYBOOK], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, env=ansible_env(config), cwd=REPO, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert pods_in(state) == {} and not [e for e in events(state) if e["event"] == "exec"]
    import yaml  # pylint: disable=import-outside-toplevel
    job = yaml.safe_load((manifests / "r9-volcano.yml").read_text())
    assert job["kind"] == "Job" and job["apiVersion"] == "batch.volcano.sh/v1alpha1"
    workers = [t for t in job["spec"]["tasks"] if t["name"] == "mpiworker"][0]
    assert workers["replicas"] == 2          # node-a and node-b: node-c is cordoned, node-d not Ready
    affinity = workers["template"]["spec"]["affinity"]["nodeAffinity"]
    assert affinity["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][0][
        "matchExpressions"][0]["values"] == ["node-a", "node-b"]
    master = [t for t in job["spec"]["tasks"] if t["name"] == "mpimaster"][0]
    command = master["template"]["spec"]["containers"][0]["command"]
    assert command[:7] == ["mpirun", "-np", "16", "--map-by", "ppr:8:node", "--hostfile", "/etc/volcano/mpiworker.host"]
    assert command[command.index("all_reduce_perf"):][:5] == ["all_reduce_perf", "-b", "32M", "-e", "1G"]
    rbac = yaml.safe_load((manifests / "commcheck-kubexec-rbac.yml").read_text())
    assert [i["kind"] for i in rbac["items"]] == ["ServiceAccount", "Role", "RoleBinding"]


@pytest.mark.full
@pytest.mark.skipif(not shutil.which("iperf3"), reason="iperf3 is not installed")
def test_playbook_tcp_in_local_pods_without_root(tmp_path, local_nodes):
    """The whole playbook, no lab and no root: two 'pods' on this machine, TCP over their 'secondary' loopback IPs."""
    config, state = local_nodes
    extra = {"commcheck_k8s_kubectl_binary": STANDIN, "commcheck_k8s_nodes": ["node-a", "node-b"],
             "commcheck_k8s_image": IMAGE, "commcheck_k8s_networks": ["roce-net"], "commcheck_k8s_run_id": "loc1",
             "commcheck_checks": ["discover", "tcp"], "commcheck_tcp_duration": 1,
             # iperf3 listens on this machine's own loopback addresses: a port of this test's own block
             "commcheck_tcp_base_port": own_ports("k8sloc"),
             # the kubectl stand-in runs every pod's commands on this machine: a lock of this test's own
             "commcheck_report_dir": str(tmp_path / "reports"), "commcheck_lock_dir": str(tmp_path / "lock")}
    extra_file = tmp_path / "extra.json"
    extra_file.write_text(json.dumps(extra))
    env = ansible_env(config, {"ANSIBLE_CALLBACKS_ENABLED": "clusterops.commcheck.commcheck_history",
                               "COMMCHECK_HISTORY_DIR": str(tmp_path / "history"), "COMMCHECK_HISTORY_FSYNC": "false"})
    proc = subprocess.run([os.path.join(VENV_BIN, "ansible-playbook"), "-i", "localhost,", "-c", "local",
                           "-e", "@" + str(extra_file), PLAYBOOK], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, env=env, cwd=REPO, timeout=600, check=False)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    records = read_history(tmp_path / "history")
    tcp = [r for r in records if r.get("kind") == "tcp_bw"]
    assert [(r["host"], r["peer"]) for r in tcp] in ([("node-a", "node-b")], [("node-b", "node-a")]), tcp
    assert sorted(r["host"] for r in records if r.get("kind") == "discover") == ["node-a", "node-b"]
    asked = [_after(e["argv"], "iperf3", "-c") for e in events(state) if e["event"] == "exec"]
    assert [a for a in asked if a] and all(a in ("127.0.10.1", "127.0.10.2") for a in asked if a)
    assert pods_in(state) == {}
    assert [k for e in events(state) if e["event"] == "delete" for k in e["killed"]] == []


# ------------------------------------------------- the full flow in the lab

def mpi_missing():
    if not shutil.which("mpirun"):
        return "Open MPI's mpirun is not installed (apt-get install openmpi-bin libopenmpi-dev)"
    proc = subprocess.run([VENV_PYTHON, "-c", "import mpi4py"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          check=False)
    if proc.returncode != 0:
        return "mpi4py is not installed in .venv (pip install mpi4py; it needs libopenmpi-dev)"
    return None


def nccl_binaries():
    """EMULATOR launchers named like nccl-tests' binaries (every lab host sees this path)."""
    return oc.collective_launchers(scratch_dir("k8s", "nccl"), "nccl", ["all_reduce"])


def lab_nodes(lab, config_path):
    """Stand-in nodes gpu-h1.. for the lab hosts: their namespaces, rail addresses and environment."""
    nodes = {}
    for host in lab.hosts:
        env = lab.environment(host)
        env["COMMCHECK_KUBECTL_STANDIN"] = config_path      # kubectl in the pods (their service account)
        nodes["gpu-" + host] = {"netns": lab.host(host)["netns"], "pid": lab.lab.sshd_pid(host),
                                "addresses": [lab.address(host, r) for r in range(lab.rails)],
                                "env": env, "labels": {"commcheck.example.com/rdma": "true"}}
    return nodes


def lab_config(lab, tmp_path):
    """The stand-in's configuration for the lab's nodes (and its state file): (config path, state path)."""
    config, state = write_config(tmp_path, {})
    with open(config, "w") as handle:
        json.dump({"state": state, "nodes": lab_nodes(lab, config)}, handle)
    return config, state


def lab_needs(lab):
    """What the lab needs to run the checks in pods, beyond what a user asks for: the stand-in as kubectl
    (also in the pods, for the MPI agent), the nodes' emulated sysfs, MPI over the pods' secondary network
    (rail 1), short tests, and the collective's EMULATOR with one rank per pod and small messages."""
    subnet1 = lab.lab.state["rails"][1]["subnet"]
    return {
        "commcheck_k8s_kubectl_binary": STANDIN,
        "commcheck_k8s_resources": {"rdma/rdma_shared_device_a": 1},
        "commcheck_k8s_networks": ["commcheck/roce-net"],
        "commcheck_k8s_service_account": "commcheck",
        "commcheck_k8s_mpi_kubectl": STANDIN,
        # the stand-in's pods share this machine's filesystem: the agent of this lab's own (a fixed directory would
        # be every concurrent lab's, and one lab's kubexec.conf would send another's mpirun to its pods)
        "commcheck_k8s_mpi_agent_dir": os.path.join(lab.lab.dir, "kubexec"),
        "commcheck_k8s_mpi_mca": dict(lablib.LAB_MPI_MCA, btl_tcp_if_include=subnet1, oob_tcp_if_include=subnet1),
        "commcheck_k8s_node_vars": {"gpu-" + h: {"commcheck_sysfs_root": lab.lab.sysfs_root(h)} for h in lab.hosts},
        "commcheck_k8s_wait_timeout": 30,
        "commcheck_rdma_duration": oc.FAST["commcheck_rdma_duration"],
        "commcheck_tcp_duration": oc.FAST["commcheck_tcp_duration"],
        "commcheck_collective_binary_dir": nccl_binaries(),
        "commcheck_collective_allow_run_as_root": True,
        "commcheck_gpus_per_node": 1,
        "commcheck_collective_min_bytes": "1M", "commcheck_collective_max_bytes": "2M",
        "commcheck_collective_iterations": 3, "commcheck_collective_warmup_iterations": 1,
        "commcheck_collective_nic_rates_gbps": [lab.rate_gbps], "commcheck_collective_link_efficiency": 0.5,
        "commcheck_collective_min_fraction": 0.4,
        "commcheck_collective_timeout": 240,
    }


def lab_vars(lab, tmp_path, **kw):
    """The lab's needs and the choices of a test of the flow in pods (every check; RDMA bandwidth only and
    host memory only: GPUDirect in pods runs in the fast tier's run, test_full_check_in_pods)."""
    extra = dict(lab_needs(lab), **{
        "commcheck_k8s_namespace": "commcheck",
        "commcheck_k8s_image": IMAGE,
        "commcheck_checks": ["discover", "rdma", "collective", "tcp"],
        "commcheck_pattern": "ring",
        "commcheck_rdma_metrics": ["bw"],
        "commcheck_rdma_gpudirect": False,
        "commcheck_min_fraction": 0.6,
        "commcheck_collective_library": "nccl",
        "commcheck_require_accelerators": False,      # the nccl-tests emulator needs no GPU
        "commcheck_report_dir": str(tmp_path / "reports"),
        # the kubectl stand-in runs every pod's commands on this machine: a lock of this test's own
        "commcheck_lock_dir": str(tmp_path / "lock"),
    })
    extra.update(kw)
    return extra


def _after(argv, program, flag):
    """The value of ``flag`` in the part of argv that runs ``program`` (None when absent)."""
    for idx, item in enumerate(argv):
        if item == program or item.endswith("/" + program):
            rest = argv[idx + 1:]
            if flag in rest and rest.index(flag) + 1 < len(rest):
                return rest[rest.index(flag) + 1]
    return None


# each lab node's own CPU governors (tests/lab/lab.py)
LAB_GOVERNORS = ["ondemand", "ondemand", "powersave", "performance"]


def lab_governors(sysfs_root):
    return [cpu["governor"] for _name, cpu in sorted(cpu_governor.read_cpus(sysfs_root).items())]


def run_k8s_playbook(lab, tmp_path, extra_vars, config):
    env = history_env(tmp_path / "history", {"COMMCHECK_KUBECTL_STANDIN": config})
    started = time.monotonic()
    proc = lab.ansible_playbook(PLAYBOOK, extra_vars=extra_vars, env=env, timeout=900)
    return proc, time.monotonic() - started


@pytest.fixture
def lab(lab4):
    lab4.heal()
    yield lab4
    lab4.heal()


class PodsRun(object):
    def __init__(self, lab, tmp, extra_vars, config, state, proc, elapsed):
        self.lab, self.tmp, self.extra_vars, self.config, self.state = lab, tmp, extra_vars, config, state
        self.proc, self.elapsed = proc, elapsed
        self.records = read_history(tmp / "history")
        self.nodes = ["gpu-" + h for h in lab.hosts]
        self.left = None

    def kinds(self):
        kinds = {}
        for rec in self.records:
            kinds.setdefault(rec.get("kind"), []).append(rec)
        return kinds


@pytest.fixture(scope="module")
def pods_run(lab4, tmp_path_factory):
    """The Kubernetes job template launched as AWX launches it (test_awx_surveys.launch_vars): its survey's
    defaults, the image and the nodes the user answers (its survey leaves them to the user), what the lab
    needs (lab_needs), and manifests rendered from the same parameters; the collective needs no accelerator
    on three of the four nodes (the nccl-tests EMULATOR runs on CPUs) and needs one (the default) on the fourth."""
    if mpi_missing():
        pytest.skip(mpi_missing())
    lab = lab4
    lab.heal()
    tmp = tmp_path_factory.mktemp("pods")
    config, state = lab_config(lab, tmp)
    needs = lab_needs(lab)
    # each node's own: a run-once decision would otherwise take the first node's value for a node without one
    for num, host in enumerate(lab.hosts):
        needs["commcheck_k8s_node_vars"]["gpu-" + host]["commcheck_require_accelerators"] = num == 3
    needs.update({"commcheck_k8s_run_id": "e2e1", "commcheck_k8s_render_job": "mpijob",
                  "commcheck_k8s_render_rbac": True, "commcheck_k8s_manifest_dir": str(tmp / "manifests")})
    extra_vars = launch_vars(template_of("k8s_commcheck.yml"), str(tmp / "reports"), lab_needs=needs, answers={
        "commcheck_k8s_image": IMAGE, "commcheck_k8s_node_selector": "commcheck.example.com/rdma=true"})
    proc, elapsed = run_k8s_playbook(lab, tmp, extra_vars, config)
    run = PodsRun(lab, tmp, extra_vars, config, state, proc, elapsed)
    try:
        assert_nothing_left(lab, wait=20)
    except AssertionError as exc:        # the test that asserts on it says so
        run.left = str(exc)
    sys.stderr.write("\nthe checks in 4 pods: %.0fs\n" % elapsed)
    return run


def test_k8s_job_template_launch_with_survey_defaults(pods_run):
    """Survey defaults, plus the image and the nodes (the survey leaves them to the user) and the lab's needs:
    every option check passes, every check runs, and on the healthy lab nothing fails."""
    run = pods_run
    answers = launch_vars(template_of("k8s_commcheck.yml"), "-")
    assert answers["commcheck_k8s_nodes"] == "" and answers["commcheck_k8s_node_selector"] == ""
    assert run.proc.returncode == 0, run.proc.stdout[-5000:] + run.proc.stderr[-2000:]
    kinds = run.kinds()
    assert not [r for r in run.records if r.get("verdict") in ("fail", "error")], [
        (r["kind"], r["host"], r.get("peer"), r["verdict"], r.get("cause")) for r in run.records
        if r.get("verdict") in ("fail", "error")]
    assert sorted(r["host"] for r in kinds["discover"]) == run.nodes
    # GPUDirect (auto, the default): each lab node has an emulated GPU beside each NIC, so the ring's bandwidth
    # tests run from host memory and again from GPU memory, on both rails
    gpu = [r for r in kinds["rdma_bw"] if r["params"].get("memory") == "cuda"]
    host_memory = [r for r in kinds["rdma_bw"] if r["params"].get("memory") != "cuda"]
    assert len(gpu) == 4 * run.lab.rails and set(r["verdict"] for r in gpu) <= set(HEALTHY_VERDICTS), gpu
    assert len(host_memory) == 4 * run.lab.rails
    # bandwidth and latency (the default metrics): a latency is a real socket round trip here, at worst flaky
    assert len(kinds["rdma_lat"]) == 4 * run.lab.rails
    assert set(r["verdict"] for r in kinds["rdma_lat"]) <= set(MEASURED_VERDICTS), kinds["rdma_lat"]
    assert len(kinds["tcp_bw"]) == 4
    # auto (the one-click role's default): nccl-tests is in the pods; no GPU is, so the node that requires
    # accelerators (the default) is skipped with the reason
    skipped = [r for r in kinds["collective"] if r["verdict"] == "skipped"]
    assert [r["host"] for r in skipped] == run.nodes[3:], skipped
    assert skipped[0]["params"]["reason"] == "no_accelerator", skipped
    with open(run.state) as handle:
        assert json.load(handle) == {}, "pods left"
    assert glob.glob(str(run.tmp / "reports" / "*" / "report.html"))
    assert run.left is None, run.left


def test_full_check_in_pods(pods_run):
    run, lab, nodes = pods_run, pods_run.lab, pods_run.nodes
    assert run.proc.returncode == 0, run.proc.stdout[-6000:] + run.proc.stderr[-3000:]

    # pods: created on the selected nodes, gone again, and nothing left for their deletion to kill
    assert pods_in(run.state) == {}
    log = events(run.state)
    deletes = [e for e in log if e["event"] == "delete"]
    assert sorted(e["pod"] for e in deletes) == ["commcheck/commcheck-e2e1-%s" % n for n in nodes]
    assert [k for e in deletes for k in e["killed"]] == [], deletes
    assert run.left is None, run.left

    kinds = run.kinds()
    # discovery ran in every pod (its node's emulated sysfs, through one kubectl exec)
    assert sorted(r["host"] for r in kinds["discover"]) == nodes, kinds.get("discover")
    # pairwise RDMA on both rails (ring of 4 hosts = 4 pairs x 2 rails), from host memory. As for TCP below, a
    # fleet outlier ('warn') is allowed: on a loaded 2-core machine one emulated link measured 0.74 of its
    # rate while the others had 0.96; this test is about the flow through the pods, not the speed.
    rdma = [r for r in kinds["rdma_bw"] if r["params"].get("memory") != "cuda"]
    assert len(rdma) == 8 and all(r["verdict"] in HEALTHY_VERDICTS for r in rdma), [
        (r["host"], r["peer"], r["verdict"], r["metrics"]) for r in rdma]
    assert {r["host"] for r in rdma} | {r["peer"] for r in rdma} == set(nodes)
    # TCP over the pods' secondary network (rail 1 addresses)
    tcp = kinds["tcp_bw"]
    assert len(tcp) == 4 and all(r["verdict"] in HEALTHY_VERDICTS for r in tcp), tcp
    # the collective on the three nodes that need no accelerator: mpirun in the first pod, daemons started in
    # the others through kubexec.sh -> kubectl exec
    coll = [r for r in kinds["collective"] if r["verdict"] != "skipped"]
    assert len(coll) == 1 and coll[0]["verdict"] == "pass", [
        (r["host"], r["peer"], r["verdict"], r["cause"], r["params"], r.get("evidence")) for r in coll]
    assert coll[0]["params"]["hosts"] == nodes[:3]
    # every pod of the collective held the CPU governor around it (kubectl exec, as the pair modules do)
    assert coll[0]["params"]["cpu_governor"] == {"governor": "performance", "held": nodes[:3], "unmanaged": [],
                                                 "not_held": []}
    execs = [e for e in log if e["event"] == "exec"]
    mpirun = [e for e in execs if "-np" in e["argv"]
              and any(a == "mpirun" or a.endswith("/mpirun") for a in e["argv"])]
    assert mpirun and {e["pod"] for e in mpirun} == {"commcheck/commcheck-e2e1-gpu-h1"}
    assert "plm_rsh_agent" in " ".join(mpirun[0]["argv"])
    orted = [e for e in execs if e["argv"][:2] == ["/bin/sh", "-c"] and "orted" in e["argv"][2]]
    assert sorted(e["pod"] for e in orted) == ["commcheck/commcheck-e2e1-%s" % n for n in nodes[1:3]]
    # RDMA tests used the pods' devices; TCP used the secondary-network address
    subnet1 = lab.address(lab.hosts[0], 1).rsplit(".", 1)[0] + "."
    perftest = [(e["pod"], _after(e["argv"], "ib_write_bw", "-d")) for e in execs]
    assert sorted(set(p for p in perftest if p[1])) == sorted(
        ("commcheck/commcheck-e2e1-%s" % n, dev) for n in nodes for dev in ("mlx5_0", "mlx5_1"))
    # the CPU governor held in each pod through kubectl exec (the stand-in's pods may write their node's emulated
    # sysfs, as privileged pods): every CPU switched to performance for the tests, each node's own governors after
    writes = [e for e in execs if e["argv"][:3] == ["sh", "-c", cpu_governor.POD_WRITE_SH]]
    switched = {e["pod"] for e in writes if set(e["argv"][5::2]) == {"performance"}}
    assert switched == {"commcheck/commcheck-e2e1-%s" % n for n in nodes}, writes
    assert [lab_governors(lab.lab.sysfs_root(h)) for h in lab.hosts] == [LAB_GOVERNORS] * len(lab.hosts)
    servers_asked = [_after(e["argv"], "iperf3", "-c") for e in execs]
    servers_asked = [a for a in servers_asked if a]
    assert len(servers_asked) >= 4 and all(a.startswith(subnet1) for a in servers_asked), servers_asked
    # report written
    assert glob.glob(str(run.tmp / "reports" / "*" / "report.md"))

    # manifests rendered from the same parameters
    manifests = run.tmp / "manifests"
    job = manifests / "e2e1-mpijob.yml"
    rbac = manifests / "commcheck-kubexec-rbac.yml"
    assert job.exists() and rbac.exists()
    import yaml  # pylint: disable=import-outside-toplevel
    import kubernetes_validate  # pylint: disable=import-outside-toplevel
    doc = yaml.safe_load(job.read_text())
    assert doc["kind"] == "MPIJob" and doc["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"] == 4
    launcher = doc["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0]["command"]
    assert launcher[:5] == ["mpirun", "-np", "4", "--map-by", "ppr:1:node"]
    for item in yaml.safe_load(rbac.read_text())["items"]:
        kubernetes_validate.validate(item, "1.30.0", strict=True)


@pytest.mark.full
def test_failed_check_still_deletes_the_pods(lab, tmp_path):
    """Every pod host fails discovery (commcheck_fail_on: warning): the always section deletes the pods."""
    config, state = lab_config(lab, tmp_path)
    proc = run_k8s_playbook(lab, tmp_path, lab_vars(
        lab, tmp_path, commcheck_k8s_nodes=["gpu-" + h for h in lab.hosts[:2]], commcheck_k8s_run_id="fail1",
        commcheck_checks=["discover"], commcheck_fail_on="warning"), config)[0]
    output = proc.stdout[-6000:] + proc.stderr[-3000:]
    assert proc.returncode != 0, output
    assert "finding(s) at or above 'warning'" in output, output
    assert pods_in(state) == {}, output
    assert len([e for e in events(state) if e["event"] == "delete"]) == 2
    assert_nothing_left(lab, wait=20)


@pytest.mark.full
def test_pods_that_never_get_ready_are_deleted(lab, tmp_path):
    config, state = lab_config(lab, tmp_path)
    proc = run_k8s_playbook(lab, tmp_path, lab_vars(
        lab, tmp_path, commcheck_k8s_nodes=["gpu-h1", "gpu-missing"], commcheck_k8s_run_id="nr1",
        commcheck_k8s_wait_timeout=3), config)[0]
    output = proc.stdout[-6000:] + proc.stderr[-3000:]
    assert proc.returncode != 0, output
    assert "commcheck-nr1-gpu-missing: Unschedulable" in output, output
    assert pods_in(state) == {}
    assert "Commcheck inside the test pods" not in output        # no check ran
