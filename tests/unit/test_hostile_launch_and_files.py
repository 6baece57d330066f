# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Hostile option values against every option of the launch, quarantine, file and Kubernetes-pod plugins.

The classes (issue 12, section 1):

1. files outside the directory named (``..``, a run id like ``../../x``, a
   quarantine script path: there is no script any more);
2. launcher override (MCA keys and ``OMPI_MCA_*`` / ``PMIX_MCA_*`` /
   ``PRTE_MCA_*`` variables that choose the program remote daemons start with);
3. binaries (relative paths, ``..``, names that are flags);
4. values that become flags (a leading ``-``), names that break naming rules
   (``;``, ``$(...)``, spaces, newlines, NUL);
5. numbers (negative, huge, NaN);
6. messages quote at most about 200 characters of a value.

Every module runs in-process the way Ansible runs it (``main()`` with its
arguments, its JSON read back), with a recording transport in place of the
real one, so "nothing ran" is a fact of the record, not an assumption. The
action plugins run through ``ActionModule.run``; the filters are called.

The rules behind the refusals are tested value by value where they live
(option_rules, mpi_cmd's launch and environment checks); each option here gets
the first value of each class of its table in the fast tier
(``value_classes``), and the rest of its table in the full tier.

``OPTION_KINDS`` classifies every option of every plugin here, and a test
checks that the classification covers each argument spec exactly: a new
option without a rule fails that test.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json
import os
from unittest import mock

import pytest
from ansible.module_utils.testing import patch_module_args
from ansible.playbook.play_context import PlayContext

from ansible_collections.clusterops.commcheck.plugins.action import record as record_action
from ansible_collections.clusterops.commcheck.plugins.action import report as report_action
from ansible_collections.clusterops.commcheck.plugins.module_utils.kubernetes.pods_plan import (
    checked_job_manifest,
    job_command,
    rbac_items,
)
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import mpi_cmd
from ansible_collections.clusterops.commcheck.plugins.module_utils.options import option_rules
from ansible_collections.clusterops.commcheck.plugins.module_utils.records.report_render import REPORT_ARGUMENT_SPEC
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands.transport import TRANSPORT_ARGSPEC
from ansible_collections.clusterops.commcheck.plugins.modules import collective
from ansible_collections.clusterops.commcheck.plugins.modules import quarantine
from ansible_collections.clusterops.commcheck.plugins.modules import test_pods
from module_in_process import KUBECTL_CLIENT_VERSION, is_identity_probe
from value_classes import tiers

HUGE = "a" * 100000
QUOTED_TOO_MUCH = "a" * (option_rules.QUOTE_LIMIT + 10)

# Hostile values by the kind of option they are aimed at. Every one of them must be refused.
FLAGS = ["--help", "-oProxyCommand=touch /tmp/pwned"]
SHELL = ["a;reboot", "$(reboot)", "`id`", "a|b", "a b", "a&&b"]
CONTROL = ["a\nb", "a\rb", "a\x00b", "a\tb"]
TRAVERSAL = ["../../etc/cron.d/x", "a/../../b"]
HOSTILE = {
    # a name that reaches a command line (a host, a node, a pod, a device, a key, a context)
    "name": FLAGS + SHELL + CONTROL + TRAVERSAL + [HUGE],
    # a path (absolute or not): no '..', no control characters, not a flag
    "path": ["--help", "../../etc/cron.d/x", "/tmp/../etc/cron.d/x", "/tmp/a\nb", "/tmp/a\x00b", "/tmp/a\rb",
             "/" + HUGE],
    # an absolute path
    "abspath": ["--help", "relative/dir", "../../etc/cron.d/x", "/tmp/../etc/cron.d/x", "/tmp/a\nb", "/tmp/a\x00b",
                "/" + HUGE],
    # a program: an absolute path or a bare name, never relative, never '..', never a flag
    "binary": ["--help", "-np", "../../bin/sh", "bin/tool", "./tool", "/opt/../bin/sh", "to;ol", "$(id)", "a\nb",
               "a\x00b", HUGE],
    # free text that never stands alone on a command line: no control characters, bounded
    "text": ["a\nb", "a\x00b", "a\rb", HUGE],
    "int": [-1, -3600, 10 ** 12],
    "number": [-1.0, 1e12, "nan", "inf"],
    # sizes of the collective tests
    "size": ["--help", "-8", "8;reboot", "8\n", "$(id)", "99999999G", "0"],
    # a kubeconfig context: a name, where cloud CLIs put '/' and ':' (arn:aws:eks:...:cluster/name); not a path
    "context": FLAGS + SHELL + CONTROL + [HUGE],
}
# Open MPI MCA keys that replace how remote daemons start (all spellings), and variables that set them.
LAUNCH_KEYS = ["plm_rsh_agent", "plm_ssh_agent", "orte_rsh_agent", "pls_rsh_agent", "orte_launch_agent",
               "prte_launch_agent", "plm_rsh_args", "orte_fork_agent", "opal_prefix", "orte_prefix",
               "opal_install_dirs_bindir", "mca_base_param_files", "plm", "btl_tcp_agent", "btl_openib_exec_path",
               "pml_ucx_path", "PLM_RSH_AGENT", "plm-rsh-agent", "--mca", "plm_rsh_agent;id"]
LAUNCH_ENV = ["OMPI_MCA_plm_rsh_agent", "PMIX_MCA_plm_rsh_agent", "PRTE_MCA_plm_ssh_agent", "OMPI_MCA_orte_launch_agent",
              "OMPI_MCA_PLM_RSH_AGENT", "OMPI_MCA_mca_base_param_files", "OMPI_MCA_opal_prefix", "LD_PRELOAD",
              "LD_AUDIT", "LD_LIBRARY_PATH", "PATH", "NCCL_NET_PLUGIN", "UCX_MODULE_DIR", "NCCL_DEBUG_FILE",
              "OPAL_PREFIX", "ompi_mca_plm_rsh_agent", "NCCL_X;id", "-x"]


# ---------------------------------------------------------------- drivers

class RecordingTransport(object):
    """Stands in for the host / kubectl transport: records every command, finds every program."""

    name = "host"
    remote = False

    def __init__(self, *args, **kwargs):
        self.calls = []
        RecordingTransport.made.append(self)

    made = []

    def which(self, name):
        self.calls.append(("which", name))
        return name if name.startswith("/") else "/usr/bin/" + name

    def run(self, argv, timeout, env=None, cwd=None, capture=None):
        self.calls.append(("run", list(argv)))
        node = {"kind": "Node", "metadata": {"name": "x", "labels": {}, "annotations": {}}, "spec": {}}
        if is_identity_probe(argv):
            stdout = KUBECTL_CLIENT_VERSION
        else:
            stdout = json.dumps(node) if "get" in argv else ""
        return {"rc": 0, "stdout": stdout, "stderr": "", "timed_out": False,
                "duration_s": 0.0, "cmd": list(argv)}

    def start(self, argv, timeout, env=None, cwd=None, capture=None):
        raise AssertionError("nothing may start in these tests: %r" % (argv,))

    def read_file(self, path, default=None):
        self.calls.append(("read_file", path))
        return default


def ran():
    """Every command any recording transport saw (which() lookups included)."""
    return [call for transport in RecordingTransport.made for call in transport.calls]


@pytest.fixture(autouse=True)
def recorder(monkeypatch):
    RecordingTransport.made = []
    monkeypatch.setattr(collective, "get_transport", lambda module: RecordingTransport())
    monkeypatch.setattr(collective, "install_cleanup_handlers", lambda: None)
    monkeypatch.setattr(quarantine, "get_transport", lambda module: RecordingTransport())
    monkeypatch.setattr(test_pods, "HostTransport", RecordingTransport)
    monkeypatch.setattr(test_pods, "KubectlTransport", RecordingTransport)
    monkeypatch.setattr(test_pods, "wait_ready", refuse_to_wait)
    return RecordingTransport


def refuse_to_wait(*args, **kwargs):
    """test_pods got as far as waiting for pods: a hostile value was let through (and never wait on a clock here)."""
    raise AssertionError("test_pods went on to wait for pods; commands so far: %r" % (ran(),))


def drive(module, args, capsys, check_mode=False):
    """Run a module's main() as Ansible does; return its JSON result."""
    args = dict(args)
    if check_mode:
        args["_ansible_check_mode"] = True
    capsys.readouterr()
    with patch_module_args(args):
        with pytest.raises(SystemExit):
            module.main()
    out = capsys.readouterr().out
    return json.loads(out[out.index("{"):])


def run_action(cls, args, check_mode=False):
    """Run an action plugin on the controller as a task would; return its result."""
    task = mock.MagicMock()
    task.args = dict(args)
    task.check_mode = check_mode
    task.async_val = 0
    task.diff = False
    action = cls(task, mock.MagicMock(), PlayContext(), loader=mock.MagicMock(), templar=mock.MagicMock(),
                 shared_loader_obj=mock.MagicMock())
    return action.run(task_vars={})


def files_under(path):
    return sorted(os.path.join(d, f) for d, _dirs, names in os.walk(str(path)) for f in names)


def refusal_problem(result, option, value):
    """What keeps ``result`` from being a refusal that names the option, quotes at most about 200 characters of the
    value and ran nothing (None: it is one)."""
    if not result.get("failed"):
        return "taken: %s" % result
    msg = result["msg"]
    if option not in msg:
        return "the message does not name %s: %s" % (option, msg[:500])
    if isinstance(value, str) and len(value) > 1000 and QUOTED_TOO_MUCH in msg:
        return "the message quotes too much: %s" % msg[:500]
    if ran():
        return "ran %s" % ran()[:3]
    return None


def assert_refused(result, option, value):
    problem = refusal_problem(result, option, value)
    assert problem is None, (option, option_rules.show(value, 60), problem)


def assert_each(problem, values):
    """``problem(value)``: what is wrong with the plugin's answer to ``value`` (None: nothing). Every value is
    tried, with a fresh record of what ran, and each one that goes wrong is named."""
    found = []
    for value in values:
        RecordingTransport.made = []
        why = problem(value)
        if why:
            found.append("%s: %s" % (option_rules.show(value, 60), why))
    assert found == [], "\n".join(found)


# ---------------------------------------------------------------- what each option is

# option -> kind. Kinds in HOSTILE are checked here with every hostile value of the kind; the others:
#   choice / bool: Ansible's argument spec refuses anything else (checked with a sample below);
#   hosts, env, mca, mpi_agent_dir, node_source, node_names, records, ...: their own tests below;
#   transport: the transport / kubectl options, checked by module_utils/commands/transport.py (another plugin).
COLLECTIVE_KINDS = {
    "library": "choice", "operation": "choice", "hosts": "hosts", "gpus_per_node": "int", "gpus_per_process": "int",
    "processes_per_node": "int", "min_bytes": "size", "max_bytes": "size", "step_factor": "int",
    "iterations": "int", "warmup_iterations": "int", "check": "int", "datatype": "name", "reduce_op": "name",
    "root": "int", "env": "env", "mca": "mca", "launcher": "choice", "mpirun": "binary", "slurm_job_id": "name",
    "allow_run_as_root": "bool",
    "binary_dir": "abspath", "json_output": "choice", "detect_transport": "bool", "timeout": "int",
    "expected_busbw_gbs": "number", "nic_rates_gbps": "number_list", "nic_rates_source": "text",
    "link_efficiency": "number",
    "min_fraction": "number", "busbw_metric": "choice", "ib_expected": "bool", "ib_devices": "name_list",
    "bisect": "bool", "bisect_max_runs": "int", "bisect_confirm": "bool", "bisect_verify": "bool",
    "workdir": "abspath", "mpi_agent_dir": "agent_dir", "ssh_config": "abspath", "fail_on_error": "bool",
    "transport": "choice", "kubectl": "transport",
    # the planned run the collective action takes out and spreads over the options above (test_roles_only_call.py)
    "run": "planned_run",
}
QUARANTINE_KINDS = {
    "backend": "choice", "localization": "node_source", "findings": "node_source", "hosts": "name_list",
    "reason": "text", "components": "choice", "node_names": "node_names", "state": "choice", "dry_run": "bool",
    "taint": "bool", "taint_effect": "choice", "label_key": "name", "annotation_key": "name",
    "kubectl_binary": "binary", "kubeconfig": "path", "kube_context": "context", "scontrol_binary": "binary",
    "timeout": "int", "transport": "choice", "kubectl": "transport", "role_options": "bool",
    "cordon": "bool", "drain": "bool", "drain_timeout": "int",
}
TEST_PODS_KINDS = {
    "state": "choice", "nodes": "name_list", "node_selector": "selector", "run_id": "name", "namespace": "name",
    "name_prefix": "name", "image": "name", "image_pull_policy": "choice", "image_pull_secrets": "name_list",
    "command": "command", "resources": "name_dict", "gpus": "int", "gpu_resource": "name", "capabilities": "name_list",
    "privileged": "bool", "host_network": "bool", "networks": "name_list", "shm_size": "name",
    "tolerations": "tolerations", "labels": "name_dict", "annotations": "annotations", "service_account": "name",
    "active_deadline_seconds": "int", "wait_timeout": "int", "delete_on_failure": "bool",
    "mpi_agent_dir": "abspath", "mpi_agent_kubectl": "binary", "kubeconfig": "path", "context": "context",
    "kubectl_binary": "binary",
}
REPORT_KINDS = {
    "records": "records", "report_dir": "path", "run_subdir": "bool", "run_id": "run_id", "history_dir": "path",
    "history_run": "text", "compare": "bool", "baseline_runs": "int", "baseline_run": "text",
    "baseline_max_age": "text", "min_runs": "int", "threshold": "number", "thresholds": "number_dict",
    "ignore_params": "text_list", "formats": "choice", "fail_on": "choice", "regression_fails": "bool", "return_records": "bool", "role_options": "bool",
}
# records_from: a variable's name, read on the controller (tests/unit/test_named_vars.py)
RECORD_KINDS = {"records": "records", "records_from": "text"}


def test_every_option_of_every_plugin_here_is_classified():
    assert sorted(COLLECTIVE_KINDS) == sorted(collective.ARGUMENT_SPEC)
    assert sorted(QUARANTINE_KINDS) == sorted(quarantine.argument_spec())
    assert sorted(REPORT_KINDS) == sorted(REPORT_ARGUMENT_SPEC)
    assert sorted(RECORD_KINDS) == sorted(record_action.ARGUMENT_SPEC)
    captured = {}

    class Stop(Exception):
        pass

    def capture(argument_spec, **kwargs):
        captured.update(argument_spec)
        raise Stop()
    with mock.patch.object(test_pods, "checked_module", capture):
        with pytest.raises(Stop):
            test_pods.main()
    assert sorted(TEST_PODS_KINDS) == sorted(captured)
    # the transport options belong to module_utils/commands/transport.py and are only delegated here
    assert sorted(k for k, v in COLLECTIVE_KINDS.items() if v == "transport") == ["kubectl"]
    assert set(TRANSPORT_ARGSPEC) == set(["transport", "kubectl"])


def cases(kinds, wanted=tuple(HOSTILE)):
    return [(option, value) for option, kind in sorted(kinds.items()) if kind in wanted for value in HOSTILE[kind]]


def by_option(pairs):
    """(option, [value, ...]) parameters of (option, value) ``pairs``: the first value of each class of each option
    in the fast tier, the others in the full tier (see value_classes)."""
    return tiers((option, value, value) for option, value in pairs)


def case_id(value):
    text = repr(value)
    return text if len(text) < 30 else text[:20] + "...%d" % len(text)


# ---------------------------------------------------------------- collective

COLLECTIVE_BASE = {"library": "nccl", "hosts": ["n1", "n2"], "binary_dir": "/opt/nccl-tests/build",
                   "min_bytes": "8", "max_bytes": "8M", "fail_on_error": False}


@pytest.mark.parametrize("option,values", by_option(cases(COLLECTIVE_KINDS)))
def test_collective_refuses_hostile_values(option, values, capsys):
    assert_each(lambda value: refusal_problem(drive(collective, dict(COLLECTIVE_BASE, **{option: value}), capsys),
                                              option, value), values)


HOST_CASES = ([("string", v) for v in HOSTILE["name"] + ["", "[fe80::1", "n1:0", "n1:99999", "n1:-1"]]
              + [("address", v) for v in HOSTILE["name"] + [""]]
              # a host's display name is data (never on a command line) unless it reads as a flag or breaks a line
              + [("name", v) for v in FLAGS + CONTROL + [HUGE]])


@pytest.mark.parametrize("shape,values", by_option(HOST_CASES))
def test_collective_refuses_hostile_hosts(shape, values, capsys):
    def problem(value):
        hosts = {"string": ["n1", value], "address": ["n1", {"address": value}],
                 "name": ["n1", {"address": "n2", "name": value}]}[shape]
        return refusal_problem(drive(collective, dict(COLLECTIVE_BASE, hosts=hosts), capsys), "hosts[1]", value)
    assert_each(problem, values)


def test_the_launch_check_refuses_launch_agent_mca_keys_in_every_spelling_even_on_the_allow_list(monkeypatch):
    for key in LAUNCH_KEYS:
        with pytest.raises(mpi_cmd.MpiCmdError, match="mca key"):
            mpi_cmd.check_mca({key: "/tmp/evil"})
    for key in LAUNCH_KEYS[:16]:
        with monkeypatch.context() as patch:
            patch.setattr(mpi_cmd, "MCA_ALLOWED", mpi_cmd.MCA_ALLOWED + (key,))
            patch.setattr(mpi_cmd, "MCA_ALLOWED_PREFIXES", mpi_cmd.MCA_ALLOWED_PREFIXES + (key.split("_", maxsplit=1)[0] + "_",))
            with pytest.raises(mpi_cmd.MpiCmdError, match="refused"):
                mpi_cmd.check_mca({key: "x"})


def test_the_environment_check_refuses_variables_that_set_the_launcher_or_load_code():
    for name in LAUNCH_ENV:
        with pytest.raises(mpi_cmd.MpiCmdError, match="env"):
            mpi_cmd.check_env({name: "/tmp/evil"})


@pytest.mark.parametrize("key,values", by_option([("mca key", key) for key in LAUNCH_KEYS]
                                                 + [("env", name) for name in LAUNCH_ENV]))
def test_collective_refuses_launch_agent_mca_keys_and_env_that_loads_code(key, values, capsys):
    def problem(value):
        option = {"mca key": {"mca": {value: "/tmp/evil"}}, "env": {"env": {value: "/tmp/evil"}}}[key]
        return refusal_problem(drive(collective, dict(COLLECTIVE_BASE, **option), capsys), key, value)
    assert_each(problem, values)


ENV_AND_MCA_VALUES = ([(where, value) for where in ("env", "mca") for value in ["--help", "-x", "a\nb", "a\x00b", HUGE]]
                      + [("mca btl", value) for value in ["a;b", "$(id)", "a b", "`id`"]])


@pytest.mark.parametrize("where,values", by_option(ENV_AND_MCA_VALUES))
def test_collective_refuses_hostile_env_and_mca_values_and_keeps_mca_values_one_word(where, values, capsys):
    def problem(value):
        option = {"env": {"env": {"NCCL_DEBUG": value}}, "mca": {"mca": {"btl_tcp_if_include": value}},
                  "mca btl": {"mca": {"btl": value}}}[where]
        return refusal_problem(drive(collective, dict(COLLECTIVE_BASE, **option), capsys), where, value)
    assert_each(problem, values)


@pytest.mark.parametrize("option,values", by_option(
    ("mpi_agent_dir", value) for value in ["relative/kubexec", "/tmp/../etc", "--help", "/tmp/a b", "/tmp/a\nb"]))
def test_collective_refuses_hostile_agent_dirs(option, values, capsys):
    def problem(value):
        args = dict(COLLECTIVE_BASE, mpi_agent_dir=value, transport="kubectl", kubectl={"pod": "launcher-0"})
        return refusal_problem(drive(collective, args, capsys), option, value)
    assert_each(problem, values)


def test_collective_takes_the_agent_only_from_mpi_agent_dir_and_data_stays_data(capsys):
    """The internal Kubernetes path still sets plm_rsh_agent; env values with shell characters stay one item."""
    args = dict(COLLECTIVE_BASE, mpi_agent_dir="/tmp/commcheck-kubexec", transport="kubectl",
                kubectl={"pod": "launcher-0"}, env={"NCCL_IB_HCA": "^mlx5_2;$(reboot)"},
                mca={"btl_tcp_if_include": "10.0.0.0/24"})
    result = drive(collective, args, capsys, check_mode=True)
    assert not result.get("failed"), result
    cmd = result["cmd"]
    at = cmd.index("plm_rsh_agent")
    assert cmd[at - 1:at + 2] == ["--mca", "plm_rsh_agent", "/tmp/commcheck-kubexec/kubexec.sh"]
    assert cmd[cmd.index("plm_rsh_no_tree_spawn") + 1] == "1"
    assert "NCCL_IB_HCA=^mlx5_2;$(reboot)" in cmd
    assert ran() == []


# ---------------------------------------------------------------- quarantine

QUARANTINE_BASE = {"backend": "kubernetes", "hosts": ["node-3"], "dry_run": False}


@pytest.mark.parametrize("option,values", by_option(cases(QUARANTINE_KINDS)))
def test_quarantine_refuses_hostile_values(option, values, capsys):
    def problem(value):
        base = dict(QUARANTINE_BASE, backend="slurm") if option == "scontrol_binary" else QUARANTINE_BASE
        if option == "hosts":
            return refusal_problem(drive(quarantine, dict(base, hosts=[value]), capsys), "hosts[0]", value)
        return refusal_problem(drive(quarantine, dict(base, **{option: value}), capsys), option, value)
    assert_each(problem, values)


@pytest.mark.parametrize("backend,values", by_option(
    (backend, value) for backend in ("kubernetes", "slurm")
    for value in FLAGS + SHELL + CONTROL + TRAVERSAL + [HUGE, "gpu[1-4]", "a,b", "NodeName=x"]))
def test_quarantine_refuses_hostile_node_names_from_every_source(backend, values, capsys):
    def problem(value):
        sources = {
            "localization": {"localization": {"components": [{"component": "host", "host": value, "cause": "x"}]}},
            "findings": {"findings": [{"kind": "finding", "host": value, "params": {"finding": "bad_node"}}]},
            "node_names[node-3]": {"hosts": ["node-3"], "node_names": {"node-3": value}},
        }
        for option, args in sources.items():
            RecordingTransport.made = []
            why = refusal_problem(drive(quarantine, dict(args, backend=backend, dry_run=False), capsys), option, value)
            if why:
                return "%s: %s" % (option, why)
        return None
    assert_each(problem, values)


def test_quarantine_writes_no_script_and_has_no_script_option(tmp_path, capsys):
    target = tmp_path / "cron.d" / "commcheck"
    result = drive(quarantine, {"backend": "slurm", "hosts": ["gpu001"], "script_path": str(target)}, capsys)
    assert result.get("failed") and "script_path" in result["msg"]
    assert files_under(tmp_path) == [] and ran() == []
    result = drive(quarantine, {"backend": "slurm", "hosts": ["gpu001"]}, capsys)
    assert not result.get("failed") and result["changed"] is False
    assert result["actions"][0]["argv"][1:] == [
        "update", "NodeName=gpu001", "State=DRAIN", "Reason=commcheck: named by the operator"]
    assert files_under(tmp_path) == []


@pytest.mark.parametrize("reason", ["--help", "a;reboot $(reboot) `id`", "-x; rm -rf /"])
def test_quarantine_reason_is_data_in_one_argument(reason, capsys):
    result = drive(quarantine, dict(QUARANTINE_BASE, reason=reason), capsys)
    assert not result.get("failed"), result
    argvs = [call[1] for call in ran() if call[0] == "run"]
    annotate = [argv for argv in argvs if "annotate" in argv]
    assert annotate and annotate[0][-2] == "commcheck.clusterops.io/reason=commcheck: %s" % reason
    slurm = drive(quarantine, {"backend": "slurm", "hosts": ["gpu001"], "reason": reason}, capsys)
    assert slurm["actions"][0]["argv"][-1] == "Reason=commcheck: %s" % reason


# ---------------------------------------------------------------- test_pods

PODS_BASE = {"run_id": "r1", "nodes": ["node-a"], "image": "ghcr.io/example/tools:1", "kubectl_binary": "/usr/bin/kubectl"}


def pods_case(option, value):
    kind = TEST_PODS_KINDS[option]
    if kind == "name_list":
        return {option: [value]}, "%s[0]" % option
    if kind == "name_dict":
        return {option: {value: "1"} if option == "resources" else {value: "v"}}, "%s key" % option
    return {option: value}, option


POD_CASES = cases(TEST_PODS_KINDS) + [(o, v) for o, k in sorted(TEST_PODS_KINDS.items())
                                      if k in ("name_list", "name_dict") for v in HOSTILE["name"]]


POD_CASES += [(option, value) for option in ("labels[team]", "resources[rdma/x]")
              for value in FLAGS + ["a;b", "$(id)", "a\nb", "a\x00b", "x" * 5000]]
POD_CASES += [("node_selector", value) for value in FLAGS + ["a\nb", "a\x00b", "key=v;reboot", "$(id)", "`id`", HUGE]]


def pods_args(option, value):
    """(test_pods arguments with ``value`` for ``option``, the option the message names)."""
    if option == "labels[team]":
        return {"labels": {"team": value}}, option
    if option == "resources[rdma/x]":
        return {"resources": {"rdma/x": value}}, option
    if option == "node_selector":
        return {option: value}, option
    return pods_case(option, value)


@pytest.mark.parametrize("option,values", by_option(POD_CASES))
def test_test_pods_refuses_hostile_values(option, values, capsys):
    def problem(value):
        extra, named = pods_args(option, value)
        return refusal_problem(drive(test_pods, dict(PODS_BASE, **extra), capsys), named, value)
    assert_each(problem, values)


@pytest.mark.parametrize("command", [["--help"], ["../bin/sh", "-c", "x"], ["bin/sleep"], ["sleep", "a\x00b"],
                                     ["/opt/../bin/sh"]], ids=case_id)
def test_test_pods_refuses_hostile_commands(command, capsys):
    result = drive(test_pods, dict(PODS_BASE, command=command), capsys)
    assert_refused(result, "command", command)


@pytest.mark.parametrize("toleration,option", [
    ({"key": "--help", "operator": "Exists"}, "tolerations[0].key"),
    ({"key": "gpu", "operator": "Exists;reboot"}, "tolerations[0].operator"),
    ({"key": "gpu", "effect": "NoSchedule\n"}, "tolerations[0].effect"),
    ({"key": "gpu", "value": "$(id)", "operator": "Equal"}, "tolerations[0].value"),
    ({"key": "gpu", "tolerationSeconds": -1}, "tolerations[0].tolerationSeconds"),
    ({"key": "gpu", "tolerationSeconds": 10 ** 12}, "tolerations[0].tolerationSeconds"),
    ({"key": "gpu", "command": "x"}, "tolerations[0] has unknown keys"),
])
def test_test_pods_refuses_hostile_tolerations(toleration, option, capsys):
    result = drive(test_pods, dict(PODS_BASE, tolerations=[toleration]), capsys)
    assert_refused(result, option, toleration)


@pytest.mark.parametrize("value", ["a\x00b", "x" * 70000], ids=case_id)
def test_test_pods_annotations_are_data_but_bounded(value, capsys):
    result = drive(test_pods, dict(PODS_BASE, annotations={"note": value}), capsys)
    assert_refused(result, "annotations[note]", value)
    result = drive(test_pods, dict(PODS_BASE, annotations={"--help": "x"}), capsys)
    assert_refused(result, "annotations key", "--help")


def test_test_pods_finds_an_existing_kubectl_only(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(test_pods, "HostTransport", lambda: mock.MagicMock(which=lambda name: None))
    result = drive(test_pods, dict(PODS_BASE, kubectl_binary=str(tmp_path / "no-kubectl")), capsys)
    assert result.get("failed") and "kubectl_binary" in result["msg"] and "not an executable file" in result["msg"]


# ---------------------------------------------------------------- report / record (controller files)

@pytest.fixture
def reports(tmp_path):
    base = tmp_path / "reports"
    base.mkdir()
    return base


def wrote(tmp_path):
    return "wrote %s" % files_under(tmp_path)[:3] if files_under(tmp_path) else None


@pytest.mark.parametrize("option,values", by_option(cases(REPORT_KINDS)))
def test_report_refuses_hostile_values(option, values, reports, tmp_path):
    def problem(value):
        args = {"report_dir": str(reports), "records": [{"kind": "tcp_bw", "host": "a", "verdict": "pass"}]}
        args[option] = [value] if option == "ignore_params" else value
        if option == "history_dir" or option == "history_run":
            args["history_dir"] = args.get("history_dir", str(tmp_path / "history"))
        return refusal_problem(run_action(report_action.ActionModule, args), option, value) or wrote(tmp_path)
    assert_each(problem, values)


@pytest.mark.parametrize("option,values", by_option(
    ("run_id", value) for value in ["../../x", "..", ".", "a/b", "/etc/cron.d", "--help", "a\nb", "a\x00b", HUGE]))
def test_report_run_subdir_is_a_checked_file_name_inside_report_dir(option, values, reports, tmp_path):
    def problem(value):
        result = run_action(report_action.ActionModule, {
            "report_dir": str(reports), "run_subdir": True, "run_id": value,
            "records": [{"kind": "x", "host": "a", "verdict": "pass"}]})
        return refusal_problem(result, option, value) or wrote(tmp_path)
    assert_each(problem, values)


@pytest.mark.parametrize("value", [{"bw_gbps": -0.5}, {"bw_gbps": 1e9}, {"bw_gbps": "nan"}, {"--help": 0.2},
                                   {"a\nb": 0.2}], ids=case_id)
def test_report_refuses_hostile_per_metric_thresholds(value, reports, tmp_path):
    result = run_action(report_action.ActionModule, {"report_dir": str(reports), "thresholds": value,
                                                     "records": [{"kind": "x", "host": "a", "verdict": "pass"}]})
    assert result.get("failed") and "thresholds" in result["msg"], result
    assert files_under(tmp_path) == []


def test_report_writes_its_fixed_files_inside_the_run_directory(reports):
    result = run_action(report_action.ActionModule, {"report_dir": str(reports) + "/./", "run_subdir": True,
                                                     "run_id": "20260131T020000Z-1a2b3c",
                                                     "records": [{"kind": "x", "host": "../../h", "verdict": "pass"}]})
    assert not result.get("failed"), result
    run_dir = str(reports / "20260131T020000Z-1a2b3c")
    assert result["report_dir"] == run_dir
    # besides them: the run's entry of the results page, and the page itself beside the run directories
    entry = os.path.join(run_dir, "index-entry.json")
    assert result["index"] == str(reports / "index.html")
    assert sorted(files_under(reports)) == sorted(list(result["files"].values()) + [entry, result["index"]])
    assert all(os.path.dirname(path) == run_dir for path in result["files"].values())


@pytest.mark.parametrize("host", ["../../etc/cron.d/x", "--help", "a;reboot", "$(id)"])
def test_record_keeps_hostile_strings_as_data(host, tmp_path):
    result = run_action(record_action.ActionModule, {"records": [{"kind": "x", "host": host, "verdict": "fail",
                                                                  "cause": host}]})
    assert not result.get("failed"), result
    assert result["commcheck_records"][0]["host"] == host
    assert files_under(tmp_path) == []


def test_record_message_quotes_a_huge_bad_value_short():
    result = run_action(record_action.ActionModule, {"records": [{"kind": "x", "host": "a", "verdict": HUGE}]})
    assert result.get("failed") and "verdict" in result["msg"]
    assert len(result["msg"]) < 3 * option_rules.QUOTE_LIMIT


# ---------------------------------------------------------------- filters

def raised_problem(call, option, value, match=None):
    """What keeps ``call()`` from raising ValueError that names ``option`` (or says ``match``) and quotes
    at most about 200 characters of ``value`` (None: it does)."""
    try:
        call()
    except ValueError as err:
        if (match or option) not in str(err):
            return "the error does not say %s: %s" % (match or option, str(err)[:500])
        if isinstance(value, str) and len(value) > 1000 and QUOTED_TOO_MUCH in str(err):
            return "the error quotes too much"
        return None
    return "taken"


@pytest.mark.parametrize("option,values", by_option(("nodes[1]", value) for value in HOSTILE["name"]))
def test_job_command_refuses_hostile_nodes(option, values):
    assert_each(lambda value: raised_problem(lambda: job_command(["gpu-1", value]), option, value), values)


JOB_OPTIONS = {"collective.mpirun": lambda value: {"mpirun": value}, "binary_dir": lambda value: {"binary_dir": value},
               "collective.mca": lambda key: {"mca": {key: "x"}}, "collective.env": lambda name: {"env": {name: "x"}},
               "gpus_per_node": lambda value: {"gpus_per_node": value}, "min_bytes": lambda value: {"min_bytes": value}}
JOB_CASES = ([("collective.mpirun", value) for value in HOSTILE["binary"]]
             + [("binary_dir", value) for value in HOSTILE["abspath"]]
             + [("collective.mca", key) for key in LAUNCH_KEYS] + [("collective.env", name) for name in LAUNCH_ENV]
             + [("gpus_per_node", value) for value in HOSTILE["int"]] + [("min_bytes", value) for value in HOSTILE["size"]])


@pytest.mark.parametrize("option,values", by_option(JOB_CASES))
def test_job_command_refuses_hostile_collective_options(option, values):
    def problem(value):
        return raised_problem(lambda: job_command(["gpu-1", "gpu-2"], collective=JOB_OPTIONS[option](value)),
                              option, value)
    assert_each(problem, values)


PARAMS = {"image": "nvcr.io/nvidia/pytorch:24.05-py3", "gpus": 8, "run_id": "r1", "namespace": "ml"}
CMD = ["mpirun", "-np", "16", "all_reduce_perf", "-b", "8"]


MANIFEST_CALLS = {
    "namespace": lambda v: checked_job_manifest(dict(PARAMS, namespace=v), ["gpu-1"], CMD),
    "run_id": lambda v: checked_job_manifest(dict(PARAMS, run_id=v), ["gpu-1"], CMD),
    "image": lambda v: checked_job_manifest(dict(PARAMS, image=v), ["gpu-1"], CMD),
    "nodes[1]": lambda v: checked_job_manifest(PARAMS, ["gpu-1", v], CMD),
    "command[0]": lambda v: checked_job_manifest(PARAMS, ["gpu-1"], [v] + CMD[1:]),
}
RBAC_CALLS = {
    "namespace": rbac_items,
    "service_account": lambda v: rbac_items("ns", service_account=v),
    "name": lambda v: rbac_items("ns", name=v),
}
FILTER_VALUES = FLAGS + ["a;reboot", "$(id)", "a\nb", "a\x00b", "../../x", HUGE]


@pytest.mark.parametrize("option,values", by_option(
    (option, value) for option in sorted(MANIFEST_CALLS) for value in FILTER_VALUES))
def test_job_manifest_refuses_hostile_values(option, values):
    assert_each(lambda value: raised_problem(lambda: MANIFEST_CALLS[option](value), option, value), values)


@pytest.mark.parametrize("option,values", by_option(
    (option, value) for option in sorted(RBAC_CALLS) for value in FILTER_VALUES))
def test_kubexec_rbac_refuses_hostile_values(option, values):
    def problem(value):
        # not flags: kubexec.rbac_manifests holds them to DNS-1123 labels, its own message names the field
        match = "DNS-1123" if value in ("a;reboot", "$(id)", "../../x") else None
        return raised_problem(lambda: RBAC_CALLS[option](value), option, value, match)
    assert_each(problem, values)


# ---------------------------------------------------------------- the base arguments are good

def test_the_base_arguments_of_each_table_are_accepted(capsys, reports):
    """Positive control: each table's base arguments pass, so every refusal above is the hostile value's."""
    result = drive(collective, COLLECTIVE_BASE, capsys, check_mode=True)
    assert not result.get("failed") and result["cmd"][0] == "mpirun", result
    result = drive(quarantine, QUARANTINE_BASE, capsys)
    assert not result.get("failed") and result["changed"] is True, result
    # kubectl says it is kubectl before it reads the node
    assert [call[1][1:] for call in ran() if call[0] == "run"][:2] == [
        ["version", "--client"], ["get", "node", "node-3", "-o", "json"]]
    RecordingTransport.made = []
    result = drive(test_pods, PODS_BASE, capsys, check_mode=True)
    assert not result.get("failed") and result["created"] == ["commcheck-r1-node-a"], result
    result = run_action(report_action.ActionModule, {"report_dir": str(reports),
                                                     "records": [{"kind": "tcp_bw", "host": "a", "verdict": "pass"}]})
    assert not result.get("failed"), result
    assert job_command(["gpu-1", "gpu-2"])[0] == "mpirun"
    assert checked_job_manifest(PARAMS, ["gpu-1"], CMD)["kind"] == "MPIJob"
    assert len(rbac_items("ns")) == 3
