# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Options that name a program or a configuration file (issue 34), one case per behaviour.

- a program option must name its program (``option_rules.check_program``): /bin/sh is never kubectl, scontrol
  or mpirun, in any module option or role variable that names one;
- a program that acts on the cluster proves what it is (``kubectl version --client``, ``scontrol --version``)
  before it first acts: one that does not is never run again;
- a kubeconfig (and any configuration file) is a regular file the run's user can read; a kubeconfig also
  looks like one (``/etc/shadow`` is refused before kubectl reads it);
- a kubeconfig's path is never echoed: not in messages, results, records or the role check's problems;
- no AWX survey question names a program or a configuration file.

The modules run in this process as Ansible runs them; the programs are small scripts named as the tools
(TOOL DOUBLES, they log their argv to a file), so "nothing else ran" is read from that log.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import glob
import json
import os
import re
import subprocess
import sys

import pytest

from ansible_collections.clusterops.commcheck.plugins.module_utils.options import option_rules as rules
from ansible_collections.clusterops.commcheck.plugins.modules import collective
from ansible_collections.clusterops.commcheck.plugins.modules import existing_pods
from ansible_collections.clusterops.commcheck.plugins.modules import iperf3
from ansible_collections.clusterops.commcheck.plugins.modules import quarantine
from ansible_collections.clusterops.commcheck.plugins.modules import test_pods
from ansible_collections.clusterops.commcheck.plugins.modules import tool_probe
from ansible_collections.clusterops.commcheck.plugins.plugin_utils import role_options

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from module_in_process import Recorder, run_module  # noqa: E402  pylint: disable=wrong-import-position

KUBECONFIG = ("apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: 'https://127.0.0.1:9'}\n"
              "users:\n- name: u\n  user: {token: not-a-secret}\ncontexts:\n- name: lab\n"
              "  context: {cluster: c, user: u}\ncurrent-context: lab\n")
KUBECTL_VERSION = "Client Version: v1.30.2\nKustomize Version: v5.0.4\n"
SCONTROL_VERSION = "slurm 23.11.4\n"
NOT_THE_TOOL = "GNU bash, version 5.2.15(1)-release (x86_64-pc-linux-gnu)\n"


def tool_double(path, version_output, log):
    """A TOOL DOUBLE named as the tool: logs its argv (one JSON line each), prints ``version_output`` for
    ``version --client`` / ``--version`` and a Node object for anything else."""
    with open(path, "w") as handle:
        handle.write("#!%s\nimport json, sys\nargs = sys.argv[1:]\n"
                     "open(%r, 'a').write(json.dumps(args) + '\\n')\n"
                     "if args in (['version', '--client'], ['--version']):\n    sys.stdout.write(%r)\n"
                     "else:\n    print(json.dumps({'kind': 'Node', 'metadata': {'name': 'node-3'}}))\n"
                     % (sys.executable, str(log), version_output))
    os.chmod(path, 0o755)
    return str(path)


def logged(log):
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


@pytest.fixture
def recorder(monkeypatch):
    """subprocess.Popen stand-in: records what would start and starts nothing."""
    rec = Recorder()
    monkeypatch.setattr(subprocess, "Popen", rec)
    return rec


# ---------------------------------------------------------------- a program option names its program

POD = {"run_id": "r1", "nodes": ["node-a"], "image": "ghcr.io/example/tools:1"}
COLLECTIVE = {"library": "nccl", "hosts": ["n1", "n2"], "binary_dir": "/opt/nccl-tests/build"}
KUBECTL_TRANSPORT = {"transport": "kubectl", "kubectl": {"pod": "p1", "binary": "/bin/sh"}}
# every module option that names kubectl, scontrol or mpirun: (module, arguments with /bin/sh in it, option)
MODULE_PROGRAMS = [
    (quarantine, {"backend": "kubernetes", "hosts": ["node-3"], "kubectl_binary": "/bin/sh"}, "kubectl_binary"),
    (quarantine, {"backend": "slurm", "hosts": ["node-3"], "scontrol_binary": "/bin/sh"}, "scontrol_binary"),
    (quarantine, dict(KUBECTL_TRANSPORT, backend="kubernetes", hosts=["node-3"]), "kubectl.binary"),
    (tool_probe, dict(KUBECTL_TRANSPORT, keys=["cmd:iperf3"]), "kubectl.binary"),
    (collective, dict(COLLECTIVE, mpirun="/bin/sh"), "mpirun"),
    (collective, dict(COLLECTIVE, **KUBECTL_TRANSPORT), "kubectl.binary"),
    (test_pods, dict(POD, kubectl_binary="/bin/sh"), "kubectl_binary"),
    (test_pods, dict(POD, mpi_agent_kubectl="/bin/sh"), "mpi_agent_kubectl"),
    (existing_pods, {"selector": "app=x", "kubectl_binary": "/bin/sh"}, "kubectl_binary"),
    (existing_pods, {"selector": "app=x", "mpi_agent_dir": "/tmp/commcheck-kubexec", "mpi_agent_kubectl": "/bin/sh"},
     "mpi_agent_kubectl"),
]
# every role variable that names one
ROLE_PROGRAMS = [
    ({"commcheck_kubectl": {"binary": "/bin/sh"}}, "commcheck_kubectl.binary"),
    ({"commcheck_k8s_kubectl_binary": "/bin/sh"}, "commcheck_k8s_kubectl_binary"),
    ({"commcheck_k8s_mpi_kubectl": "/bin/sh"}, "commcheck_k8s_mpi_kubectl"),
    ({"commcheck_collective_mpirun": "/bin/sh"}, "commcheck_collective_mpirun"),
    ({"commcheck_k8s_job_collective": {"mpirun": "/bin/sh"}}, "commcheck_k8s_job_collective"),
]


@pytest.mark.parametrize("module,args,option", MODULE_PROGRAMS,
                         ids=["%s-%s" % (m.__name__.rsplit(".", 1)[-1], o) for m, _a, o in MODULE_PROGRAMS])
def test_a_module_option_that_names_a_program_refuses_another_program(
        module, args, option, recorder, monkeypatch, capsys):
    result = run_module(module, monkeypatch, capsys, dict(args, dry_run=False) if module is quarantine else args)
    assert result.get("failed") and "%s '/bin/sh' is not " % option in result["msg"], result.get("msg")
    assert recorder.argvs == [], recorder.argvs


@pytest.mark.parametrize("values,option", ROLE_PROGRAMS, ids=[o for _v, o in ROLE_PROGRAMS])
def test_a_role_variable_that_names_a_program_refuses_another_program(values, option):
    problems = role_options.check_values(role_options.merge_specs(_role_specs(), _roles()), values)
    assert problems and problems[0].startswith(option) and "'/bin/sh' is not " in problems[0], problems


def test_the_names_of_a_program_are_words_of_its_file_name():
    for path in ("kubectl", "/usr/local/bin/kubectl", "/opt/k8s/kubectl-1.30", "/snap/bin/microk8s.kubectl"):
        assert rules.check_program("kubectl_binary", path, "kubectl", must_exist=False) == path
    for path in ("/bin/sh", "/usr/bin/kubectx", "notkubectl"):
        with pytest.raises(rules.OptionError, match="is not kubectl"):
            rules.check_program("kubectl_binary", path, "kubectl", must_exist=False)
    assert rules.check_program("mpirun", "/usr/bin/mpirun.openmpi", "mpirun", must_exist=False)


# ---------------------------------------------------------------- a cluster program proves what it is first

@pytest.mark.parametrize("tool,args", [
    ("kubectl", {"backend": "kubernetes", "hosts": ["node-3"], "dry_run": False}),
    ("scontrol", {"backend": "slurm", "hosts": ["node-3"], "dry_run": False}),
])
def test_a_program_that_does_not_say_it_is_the_tool_never_acts(tool, args, tmp_path, monkeypatch, capsys):
    log = tmp_path / "argv.log"
    binary = tool_double(tmp_path / tool, NOT_THE_TOOL, log)
    result = run_module(quarantine, monkeypatch, capsys, dict(args, **{"%s_binary" % tool: binary}))
    assert result.get("failed") and "%s_binary %r is not %s" % (tool, binary, tool) in result["msg"], result
    assert "GNU bash" in result["msg"] and "set %s_binary to the %s program" % (tool, tool) in result["msg"]
    # it was asked what it is, and nothing else
    assert logged(log) == [rules.PROGRAMS[tool].version_args]


def test_the_kubectl_of_the_transport_proves_what_it_is_before_anything_runs(tmp_path, monkeypatch, capsys):
    log = tmp_path / "argv.log"
    kubectl = {"pod": "p1", "binary": tool_double(tmp_path / "kubectl", NOT_THE_TOOL, log)}
    result = run_module(tool_probe, monkeypatch, capsys, {"keys": ["cmd:iperf3"], "transport": "kubectl",
                                                          "kubectl": kubectl})
    assert result.get("failed") and result["msg"].startswith("kubectl.binary %r is not kubectl" % kubectl["binary"])
    assert logged(log) == [["version", "--client"]]


# ---------------------------------------------------------------- configuration files

def test_a_kubeconfig_must_be_a_readable_regular_kubeconfig(tmp_path, monkeypatch, capsys):
    shadow = tmp_path / "shadow"
    shadow.write_text("root:$6$salt$hash:19000:0:99999:7:::\n")
    good = tmp_path / "config"
    good.write_text(KUBECONFIG)
    base = {"backend": "kubernetes", "hosts": ["node-3"]}      # a dry run: the file is checked all the same
    for path, why in ((tmp_path, "is not a regular file"), (shadow, "is not a kubeconfig file"),
                      (tmp_path / "missing", "is not a file the run's user can read")):
        result = run_module(quarantine, monkeypatch, capsys, dict(base, kubeconfig=str(path)))
        assert result.get("failed") and "kubeconfig (value not shown) %s" % why in result["msg"], result
    monkeypatch.setattr(os, "access", lambda path, mode: path != str(good))
    result = run_module(quarantine, monkeypatch, capsys, dict(base, kubeconfig=str(good)))
    assert "kubeconfig (value not shown) is not readable by the user the run runs as" in result["msg"]
    monkeypatch.undo()
    assert not run_module(quarantine, monkeypatch, capsys, dict(base, kubeconfig=str(good))).get("failed")


def test_a_configuration_file_must_be_a_regular_file(tmp_path, monkeypatch, capsys):
    result = run_module(collective, monkeypatch, capsys, dict(COLLECTIVE, ssh_config=str(tmp_path)),
                        check_mode=True)
    # not sensitive: an ssh configuration's path is quoted
    assert result.get("failed") and "ssh_config %r is not a regular file" % str(tmp_path) in result["msg"], result


def test_a_kubeconfig_path_is_never_echoed(tmp_path, monkeypatch, capsys):
    secret = tmp_path / "admin-secret.conf"
    secret.write_text(KUBECONFIG)
    log = tmp_path / "argv.log"
    kubectl = tool_double(tmp_path / "kubectl", KUBECTL_VERSION, log)
    result = run_module(quarantine, monkeypatch, capsys, {"backend": "kubernetes", "hosts": ["node-3"],
                                                          "kubectl_binary": kubectl, "kubeconfig": str(secret)})
    assert not result.get("failed"), result
    # the commands, the report and the records show the option withheld (not Ansible's masking of it)
    assert result["actions"][0]["argv"][1:3] == ["--kubeconfig", rules.WITHHELD]
    assert "--kubeconfig '(value not shown)'" in result["report"][1]
    assert result["records"][0]["evidence"][0].startswith("%s --kubeconfig '(value not shown)'" % kubectl)
    assert "admin-secret" not in json.dumps(result)
    # a problem with it, in a module and in the role check, never quotes it either
    problem = run_module(quarantine, monkeypatch, capsys, {"backend": "kubernetes", "hosts": ["node-3"],
                                                           "kubeconfig": "admin-secret/../config"})["msg"]
    assert "kubeconfig (value not shown) must be an absolute path" in problem and "admin-secret" not in problem
    [problem] = role_options.check_values(role_options.merge_specs(_role_specs(), _roles()),
                                          {"commcheck_quarantine_kubeconfig": "/etc/admin-secret/../x"})
    assert problem.startswith("commcheck_quarantine_kubeconfig: (value not shown) must not contain '..'"), problem


def test_a_credential_file_of_a_tool_is_checked_and_never_echoed(tmp_path, monkeypatch, capsys):
    """iperf3's RSA private key: a readable regular file on the host before any side starts; never shown."""
    key = tmp_path / "server-secret.pem"
    key.write_text("-----BEGIN PRIVATE KEY-----\n")
    (tmp_path / "server-secret.d").mkdir()
    side = {"role": "server", "extra_args": ["--rsa-private-key-path", str(tmp_path / "server-secret.d")]}
    result = run_module(iperf3, monkeypatch, capsys, side, check_mode=True)
    assert result.get("failed") and result["msg"] == \
        "extra_args --rsa-private-key-path (value not shown) is not a regular file", result
    assert "server-secret" not in json.dumps(result)
    result = run_module(iperf3, monkeypatch, capsys, dict(side, extra_args=["--rsa-private-key-path=%s" % key]),
                        check_mode=True)
    assert result["sides"][0]["cmd"][-1] == "--rsa-private-key-path=%s" % rules.WITHHELD, result
    assert "server-secret" not in json.dumps(result)
    # an abbreviation would hide the flag from that: it is refused
    result = run_module(iperf3, monkeypatch, capsys, dict(side, extra_args=["--rsa-priv=%s" % key]), check_mode=True)
    assert "abbreviates --rsa-private-key-path, which names a credential file" in result["msg"], result


# ---------------------------------------------------------------- surveys

def test_no_survey_question_names_a_program_or_a_configuration_file():
    named = role_options.file_naming_variables()
    # every variable whose name says it names a program, a configuration file or a place of programs is marked
    hint = re.compile(r"kubeconfig|kubectl|binary|mpirun|ssh_config|command|environment|_vars$|agent_dir|job_collective")
    assert sorted(n for n in role_options.RULES if hint.search(n) and n not in named) == []
    asked = {}
    for path in sorted(glob.glob(os.path.join(REPO, "awx", "surveys", "*.json"))):
        with open(path) as handle:
            for question in json.load(handle)["spec"]:
                asked[question["variable"]] = os.path.basename(path)
    assert asked and dict((v, s) for v, s in asked.items() if v in named) == {}


# ---------------------------------------------------------------- helpers

def _roles():
    return sorted(os.path.basename(os.path.dirname(os.path.dirname(p)))
                  for p in glob.glob(os.path.join(REPO, "roles", "*", "meta", "argument_specs.yml")))


def _role_specs():
    import yaml
    specs = {}
    for role in _roles():
        with open(os.path.join(REPO, "roles", role, "meta", "argument_specs.yml")) as handle:
            specs[role] = yaml.safe_load(handle)["argument_specs"]
    return specs
