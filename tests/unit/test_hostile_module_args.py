# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every option of every module and controller action, called directly with values it cannot take.

A user task, or an attacker, can call any module of the collection without the
roles' option check in front of it. Whatever it gets, the task must fail with a
message that names the option (``fail_json(msg=...)``), with no traceback and
before anything runs; what it takes as data never becomes a flag of a command.

Each class of value is tested in full once against the shared check that
every module (``module_args.checked_module``) and controller action
(``module_args.args_problem``) runs before Ansible converts anything. Each
option then gets one representative of each class its kind can receive:
enough to prove that the option is wired to that check (or, for ranges, paths
and text rules, to its own) and that the failure names it. The options come
from each plugin's own argument spec, walked here with its sub-options, so an
option added tomorrow gets these cases the day it is added. The classes:

1. numbers no option can hold: inf, -inf, nan (floats, and text such as
   '.inf', 'nan', '1e999'), 1e308, 10**30, 10**400, 5000 digits, and
   '1e999999' (Ansible's int conversion would build a million digits);
2. the wrong type: a boolean or a fraction for an integer, a boolean, list or
   dict for a number, a boolean, float, list or dict for a text, a scalar for
   an option with sub-options, nonsense for a bool or a dict;
3. negative numbers, zero where the option has no use for it (``ZERO_MEANS``
   lists where it has one), and numbers without an upper bound;
4. paths with '..', a leading '-', a control character or a huge length;
5. hostile text (a flag, a control character, a huge string, shell, an empty
   string) in every text option: refused naming the option, or taken as data
   only (never a flag, never split, never an empty argument);
6. null for every option: refused naming the option, or the same as leaving
   it unset (or empty), and never taken for a required option.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import glob
import json
import os
import signal
import subprocess
from unittest import mock

import pytest
import yaml
from ansible.errors import AnsibleActionFail
from ansible.module_utils import basic
from ansible.module_utils.testing import patch_module_args
from ansible.playbook.play_context import PlayContext

from ansible_collections.clusterops.commcheck.plugins.action import check_outputs as check_outputs_action
from ansible_collections.clusterops.commcheck.plugins.action import check_plan as check_plan_action
from ansible_collections.clusterops.commcheck.plugins.action import collective_plan as collective_plan_action
from ansible_collections.clusterops.commcheck.plugins.action import discovery_results as discovery_results_action
from ansible_collections.clusterops.commcheck.plugins.action import fleet_facts as fleet_facts_action
from ansible_collections.clusterops.commcheck.plugins.action import pods_plan as pods_plan_action
from ansible_collections.clusterops.commcheck.plugins.action import pair_check as pair_check_action
from ansible_collections.clusterops.commcheck.plugins.action import record as record_action
from ansible_collections.clusterops.commcheck.plugins.action import report as report_action
from ansible_collections.clusterops.commcheck.plugins.action import reserve_nodes as reserve_nodes_action
from ansible_collections.clusterops.commcheck.plugins.action import validate_options as validate_options_action
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import transport
from ansible_collections.clusterops.commcheck.plugins.module_utils.options import module_args
from ansible_collections.clusterops.commcheck.plugins.module_utils.options import option_rules
from ansible_collections.clusterops.commcheck.plugins.modules import (
    check_outputs, check_plan, collective, collective_plan, cpu_governor, discovery_results, existing_pods,
    fleet_facts, iperf3, k8s_job, pair_check, pair_tests, perftest, pods_plan, quarantine, rdma_facts, record, report,
    reserve_nodes, run_lock, test_pods, tool_probe, validate_options)
from ansible_collections.clusterops.commcheck.plugins.module_utils.kubernetes.pods_plan import job_manifest
from module_in_process import KUBECTL_CLIENT_VERSION, Recorder, is_identity_probe

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODULES = {
    "check_outputs": check_outputs, "check_plan": check_plan, "pods_plan": pods_plan, "collective": collective,
    "collective_plan": collective_plan, "cpu_governor": cpu_governor, "discovery_results": discovery_results,
    "existing_pods": existing_pods, "pair_check": pair_check, "pair_tests": pair_tests, "k8s_job": k8s_job,
    "fleet_facts": fleet_facts, "iperf3": iperf3, "perftest": perftest, "quarantine": quarantine,
    "rdma_facts": rdma_facts, "record": record, "report": report, "run_lock": run_lock, "test_pods": test_pods,
    "tool_probe": tool_probe, "validate_options": validate_options, "reserve_nodes": reserve_nodes,
}
ACTIONS = {
    "check_outputs": check_outputs_action, "check_plan": check_plan_action, "pods_plan": pods_plan_action,
    "collective_plan": collective_plan_action, "discovery_results": discovery_results_action,
    "fleet_facts": fleet_facts_action, "pair_check": pair_check_action, "record": record_action, "report": report_action,
    "validate_options": validate_options_action, "reserve_nodes": reserve_nodes_action,
}
# Modules whose action plugin runs instead of them: the module only says so, and the action judges the values.
ACTION_ONLY = set(["check_outputs", "check_plan", "collective_plan", "discovery_results", "fleet_facts", "pair_check", "pods_plan",
                   "report", "validate_options", "reserve_nodes", "pair_tests"])
# Action plugins that only fill in their module's arguments on the controller (who takes the host) and run it on
# the host: the module's values are walked above, as MODULES.
# (pair_tests runs the perftest or iperf3 module, whose values are walked as theirs)
MODULE_WRAPPERS = set(["run_lock", "quarantine", "rdma_facts", "perftest", "iperf3", "collective", "cpu_governor",
                       "tool_probe", "pair_tests"])
TIME_LIMIT_S = 20


def _role_defaults(role):
    with open(os.path.join(REPO, "roles", role, "defaults", "main.yml")) as handle:
        return yaml.safe_load(handle)


# The role variables a role's controller step reads (the role's defaults), where the step runs inside the role.
ACTION_VARS = {"collective_plan": _role_defaults("collective")}
MESSAGE_LIMIT = 3 * option_rules.QUOTE_LIMIT + 400

# ---------------------------------------------------------------- the values

HUGE = "x" * 100000
# Every value of each class, checked once against the shared check and rules (test_the_shared_...).
NOT_FINITE = [float("inf"), float("-inf"), float("nan"), ".inf", "-.inf", "inf", "nan", "NaN", "1e999", "-1e999"]
TOO_BIG = [1e308, -1e308, 10 ** 30, -10 ** 30, 10 ** 400, "9" * 5000]
NOT_AN_INT = NOT_FINITE + TOO_BIG + ["1e999999", True, False, 1.5, "1.5", "0x10", "", "ten", [1], {"a": 1}]
NOT_A_NUMBER = NOT_FINITE + [10 ** 400, "9" * 5000, True, False, "", "ten", [1.0], {"a": 1.0}]
NOT_TEXT = [True, False, 1.5, ["a"], {"key": "value-of-a-dict"}]
NOT_A_MAPPING = [True, 1.5, 5, "not a mapping", ["x"]]
NOT_A_BOOL = [2, "maybe", 1.5, float("nan"), [True], {"a": 1}]
FLAG, SHORT_FLAG = "--commcheck-hostile", "-Zcommcheck"
CONTROL = ["a\nb", "a\rb", "a\x00b", "a\x1b[31mb", u"a\u202eb", u"a\u2028b"]
SHELL = "a;b $(id) `id` |&"

# One value of each class for every option of a kind: the one a check narrower than the shared one would let
# through first (a short flag, a direction override, an exponent Ansible's int() would expand...).
# (a dict's value is a no_log value for some options: Ansible masks it wherever it appears in the message)
WRONG_TYPE = {
    "int": [float("nan"), 10 ** 400, "1e999999", True, 1.5, "ten", [1]],
    "float": [float("inf"), 10 ** 400, True, "ten", [1.0]],
    "text": [True, 1.5, ["a"]],
    "path": [True, 1.5, {"key": "value-of-a-dict"}],
    "mapping": [True, "not a mapping", ["x"]],
    "dict": [5, "not a mapping", ["x"]],
    "bool": [2, "maybe", [True]],
}
OUT_OF_RANGE = {"int": [-1, 0, 2 ** 62], "float": [-1, 0, 1e300]}
HOSTILE_PATHS = [FLAG, "../../commcheck-escape", "/tmp/../commcheck-escape", "/tmp/a\nb", "/" + HUGE]
HOSTILE_TEXT = [SHORT_FLAG, u"a\u202eb", HUGE, SHELL, ""]
# The empty value of a kind, which Ansible may make of a null.
EMPTY = {"text": "", "path": "", "dict": {}, "mapping": {}}

# Number options where zero means something (no check, no retries, rank 0, no expectation...).
ZERO_MEANS = {
    "collective": {"check", "root", "warmup_iterations"},
    "iperf3": {"connect_retries", "omit", "expected_gbps", "sides.step", "sides.rail", "sides.round",
               "sides.expected_gbps"},
    "perftest": {"connect_retries", "expected_gbps", "sides.step", "sides.rail", "sides.round",
                 "sides.expected_gbps", "use_cuda", "sides.use_cuda"},
    "rdma_facts": {"ib_gid_index"},
    "report": {"threshold"},
    "run_lock": {"leftovers_wait"},
    "test_pods": {"gpus", "active_deadline_seconds"},
}


# ---------------------------------------------------------------- the plugins and their arguments

class FakeTransport(object):
    """Stands in for the host and kubectl transports: records every command, finds every program, lists one pod."""

    name = "host"
    remote = False
    made = []

    def __init__(self, *args, **kwargs):
        self.calls = []
        FakeTransport.made.append(self)

    def which(self, name):
        return name if name.startswith("/") else "/usr/bin/" + name

    def run(self, argv, timeout, env=None, cwd=None, capture=None):
        self.calls.append(list(argv))
        stdout = KUBECTL_CLIENT_VERSION if is_identity_probe(argv) else json.dumps(_answer(argv))
        return {"rc": 0, "stdout": stdout, "stderr": "", "timed_out": False, "duration_s": 0.0, "cmd": list(argv)}

    def start(self, argv, timeout, env=None, cwd=None, capture=None):
        self.calls.append(list(argv))
        raise OSError("commcheck test: nothing starts here")

    run_plain = run

    def read_file(self, path, default=None):
        return default


def _answer(argv):
    """What kubectl would print: a list with one usable pod for 'get pods', a node for 'get node'."""
    if "pods" in argv:
        status = {"phase": "Running", "podIP": "10.0.0.9", "conditions": [{"type": "Ready", "status": "True"}],
                  "containerStatuses": [{"name": "main", "state": {"running": {}}}]}
        pod = {"metadata": {"name": "worker-0", "namespace": "default"}, "status": status,
               "spec": {"nodeName": "node-a", "containers": [{"name": "main"}]}}
        return {"kind": "List", "items": [pod]}
    return {"kind": "Node", "metadata": {"name": "x", "labels": {}, "annotations": {}}, "spec": {}}


@pytest.fixture
def recorder(monkeypatch):
    rec = Recorder()
    monkeypatch.setattr(subprocess, "Popen", rec)
    FakeTransport.made = []
    # the transport options are still checked; only the commands go to the fake
    monkeypatch.setattr(transport, "KubectlTransport", FakeTransport)
    # the kubectl of a transport is asked who it is on this host before it acts: the fake answers as kubectl
    real_identity_error = transport.identity_error
    monkeypatch.setattr(transport, "identity_error",
                        lambda _host, *args: real_identity_error(FakeTransport(), *args))
    for module in (collective, quarantine):
        monkeypatch.setattr(module, "get_transport", faked_host(module.get_transport))
    monkeypatch.setattr(collective, "install_cleanup_handlers", lambda: None)
    monkeypatch.setattr(k8s_job, "install_cleanup_handlers", lambda: None)
    for module in (test_pods, existing_pods, k8s_job):
        monkeypatch.setattr(module, "HostTransport", FakeTransport)
        if module is not k8s_job:
            monkeypatch.setattr(module, "KubectlTransport", FakeTransport)
    monkeypatch.setattr(test_pods, "wait_ready", lambda *args, **kwargs: pytest.fail("test_pods waited for pods"))
    # the pair modules install handlers for these signals when they start their tools: put pytest's back
    saved = dict((sig, signal.getsignal(sig)) for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT))
    yield rec
    for sig, handler in saved.items():
        signal.signal(sig, handler)


def faked_host(get_transport):
    """get_transport, with a FakeTransport for the host transport."""
    def get(module):
        found = get_transport(module)
        return found if isinstance(found, FakeTransport) else FakeTransport()
    return get


def sysfs_tree(root):
    path = os.path.join(root, "devices", "system", "cpu", "cpu0", "cpufreq")
    os.makedirs(path)
    for name, text in (("scaling_governor", "powersave\n"), ("scaling_available_governors", "performance powersave\n")):
        with open(os.path.join(path, name), "w") as handle:
            handle.write(text)
    return root


def base_args(name, tmp):
    """Arguments each plugin takes (the controls below prove it), so that a refusal is the hostile value's."""
    sysfs = os.path.join(tmp, "sys")
    if not os.path.isdir(sysfs):
        sysfs_tree(sysfs)
    record_list = [{"kind": "tcp_bw", "host": "a", "verdict": "pass"}]
    return {
        "check_outputs": {"step": "start", "report_dir": os.path.join(tmp, "reports")},
        "check_plan": {"step": "plan"},
        "pods_plan": {"step": "state"},
        "collective_plan": {"step": "runs"},
        "discovery_results": {},
        "collective": {"library": "nccl", "hosts": ["n1", "n2"], "binary_dir": "/opt/nccl-tests/build",
                       "min_bytes": "8", "max_bytes": "8M", "fail_on_error": False},
        "cpu_governor": {"governor": "performance", "sysfs_root": sysfs},
        "existing_pods": {"selector": "app=x"},
        "k8s_job": {"manifest": job_manifest({"commcheck_k8s_render_job": "mpijob", "commcheck_k8s_namespace": "cc",
                                              "commcheck_k8s_image": "ghcr.io/example/tools:1"}, "r1", ["node-a"]),
                    "kubectl_binary": "/usr/bin/kubectl"},
        "fleet_facts": {"step": "s", "hosts": ["a"], "slices": 1, "wait": 900, "run_id": "r1",
                        "directory": os.path.join(tmp, "slices")},
        "iperf3": {"role": "client", "server": "10.0.0.2"},
        "pair_check": {"family": "tcp", "step": "hosts"},
        "pair_tests": {"family": "tcp"},
        "perftest": {"role": "client", "server": "10.0.0.2", "device": "mlx5_0"},
        "quarantine": {"backend": "kubernetes", "hosts": ["node-3"]},
        "rdma_facts": {"sysfs_root": sysfs, "tools": False},
        "run_lock": {"run_id": "r1", "dir": os.path.join(tmp, "lock")},
        # mode none: every option is checked, nothing is read or set (nothing to reach on this machine)
        "reserve_nodes": {"run_id": "r1", "mode": "none", "nodes": ["node-a"], "state_dir": os.path.join(tmp, "rsv")},
        "record": {"records": record_list},
        "report": {"report_dir": os.path.join(tmp, "reports"), "records": record_list},
        "test_pods": {"run_id": "r1", "nodes": ["node-a"], "image": "ghcr.io/example/tools:1",
                      "kubectl_binary": "/usr/bin/kubectl"},
        "tool_probe": {"keys": ["cmd:iperf3"]},
        "validate_options": {"roles": ["report"]},
    }[name]


# A sub-option is given inside this much of its option, with these arguments beside (None: removed):
# 'sides' replaces the top-level role and server; 'kubectl' is used with the kubectl transport only.
SUB_BASE = {"kubectl": {"pod": "p1", "binary": "/usr/bin/kubectl"}, "sides": {"role": "server"}}
SUB_ARGS = {"kubectl": {"transport": "kubectl"}, "sides": {"role": None, "server": None}}
# rdma_facts reads no sysfs tree through the fake kubectl: it only probes the tools there
SUB_ARGS_OF = {("rdma_facts", "kubectl"): {"devices": False, "probe": ["cmd:iperf3"]}}


class SpecCaught(Exception):
    pass


def module_spec(name):
    """The argument spec a module's main() builds its AnsibleModule with (read as ansible-test reads it)."""
    caught = {}

    def catch(self, *args, **kwargs):
        caught.update(kwargs)
        raise SpecCaught()

    with mock.patch.object(basic.AnsibleModule, "__init__", catch), patch_module_args({}):
        with pytest.raises(SpecCaught):
            MODULES[name].main()
    return caught["argument_spec"]


def plugin_spec(plugin):
    kind, name = plugin
    return module_spec(name) if kind == "module" else ACTIONS[name].ARGUMENT_SPEC


def option_paths(spec, prefix=()):
    """(path, spec) of every option, sub-options included: ('timeout',), ('sides', 'tcp_port')."""
    for option, item in sorted(spec.items()):
        yield prefix + (option,), item
        if item.get("options"):
            yield from option_paths(item["options"], prefix + (option,))


def kind_of(spec):
    """'int', 'float', 'text', 'path', 'bool', 'dict', 'mapping' (sub-options), 'list:<kind>' or 'raw'."""
    kind = spec.get("type", "str")
    if spec.get("options"):
        return "mapping" if kind == "dict" else "list:mapping"
    if kind == "list":
        return "list:" + kind_of({"type": spec.get("elements") or "raw"})
    return {"str": "text"}.get(kind, kind)


PLUGINS = [("module", name) for name in sorted(MODULES)] + [("action", name) for name in sorted(ACTIONS)]
SPECS = dict((plugin, list(option_paths(plugin_spec(plugin)))) for plugin in PLUGINS)


def item_kind(spec):
    """kind_of, for a list option the kind of its items."""
    return kind_of(spec).replace("list:", "")


def options_of(kinds, plugins=PLUGINS):
    """(plugin, path) of every option of a kind in ``kinds`` (a list option: of its items) of ``plugins``."""
    return [(plugin, path) for plugin in plugins for path, spec in SPECS[plugin] if item_kind(spec) in kinds]


def cases(kinds, values, plugins=PLUGINS):
    """(plugin, path, value) for every option of a kind in ``kinds`` (a list option: its items) of ``plugins``."""
    return [option + (value,) for option in options_of(kinds, plugins) for value in values]


def judging(plugins=PLUGINS):
    """The plugins that judge values themselves (not the modules that only say that their action plugin runs)."""
    return [p for p in plugins if not (p[0] == "module" and p[1] in ACTION_ONLY)]


def option_id(option):
    (kind, name), path = option
    return "%s-%s-%s" % (kind, name, ".".join(path))


def case_id(case):
    text = repr(case[2])
    return "%s=%s" % (option_id(case[:2]), text if len(text) < 24 else text[:16] + "...%d" % len(text))


UNSET = object()


def args_with(plugin, path, value, tmp, whole=False):
    """The plugin's base arguments with ``value`` at ``path``: a list option gets it as its one item, unless
    ``whole``; UNSET leaves the option out."""
    args = dict(base_args(plugin[1], tmp))
    if not whole and kind_of(dict(SPECS[plugin])[path]).startswith("list:"):
        value = [value]
    if len(path) == 1:
        args.pop(path[0], None)
        if value is not UNSET:
            args[path[0]] = value
        return args
    top, option = path
    beside = dict(SUB_ARGS[top], **SUB_ARGS_OF.get((plugin[1], top), {}))
    args.update(beside)
    args = dict((key, item) for key, item in args.items() if item is not None)
    inner = dict((key, item) for key, item in SUB_BASE[top].items() if key != option)
    if value is not UNSET:
        inner[option] = value
    args[top] = [inner] if top == "sides" else inner
    return args


def run_plugin(plugin, args, recorder, capsys, tmp):
    """(result, every argv that ran or was planned) of one plugin call, in check mode, with a time limit."""
    def too_slow(*_args):
        raise AssertionError("%s took more than %d s (a hang)" % (plugin, TIME_LIMIT_S))

    old = signal.signal(signal.SIGALRM, too_slow)
    signal.alarm(TIME_LIMIT_S)
    try:
        result = _call(plugin, args, capsys, tmp)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    ran = recorder.argvs + [argv for transport in FakeTransport.made for argv in transport.calls]
    return result, ran + list(planned_argvs(result))


def _call(plugin, args, capsys, tmp):
    kind, name = plugin
    cwd = os.getcwd()
    os.chdir(tmp)
    try:
        if kind == "action":
            return run_action(ACTIONS[name].ActionModule, args, ACTION_VARS.get(name))
        capsys.readouterr()
        with patch_module_args(dict(args, _ansible_check_mode=True)):
            with pytest.raises(SystemExit):
                MODULES[name].main()
        out = capsys.readouterr().out
        return json.loads(out[out.index("{"):])
    finally:
        os.chdir(cwd)


def run_action(cls, args, task_vars=None):
    """An action plugin's result for a task with ``args`` on the controller, in check mode; ``task_vars`` beside
    the empty play's (the role variables a role's step reads)."""
    task = mock.MagicMock()
    task.args = dict(args)
    task.check_mode = True
    task.async_val = 0
    task.diff = False
    templar = mock.MagicMock()
    templar.template.side_effect = lambda value, **kwargs: value
    action = cls(task, mock.MagicMock(), PlayContext(), loader=mock.MagicMock(), templar=templar,
                 shared_loader_obj=mock.MagicMock())
    try:
        return action.run(task_vars=dict(task_vars or {}, hostvars={}, ansible_play_hosts_all=[], groups={"all": []}))
    except AnsibleActionFail as exc:
        # how Ansible's own argument spec check fails a task (the task executor reads its result)
        return dict(exc.result, failed=True, msg=exc.message)


def planned_argvs(value):
    """Every command line a result shows (``cmd``, ``argv``, ``exec_cmd``), at any depth."""
    if isinstance(value, dict):
        for key, item in value.items():
            if key in ("cmd", "argv", "exec_cmd") and isinstance(item, list) and all(isinstance(t, str) for t in item):
                yield item
            else:
                yield from planned_argvs(item)
    elif isinstance(value, list):
        for item in value:
            yield from planned_argvs(item)


def names_option(msg, path):
    """True when ``msg`` names the option at ``path`` (a sub-option together with its option), as it is spelt or
    in words ('entry point' for entry_point)."""
    return all(part in msg or part.replace("_", " ") in msg for part in path)


def refusal_problem(path, result, ran):
    """What keeps ``result`` from being a clean refusal of the option at ``path`` (None: it is one)."""
    msg = result.get("msg") or ""
    if result.get("failed") is not True:
        return "taken"
    if not names_option(msg, path):
        return "the message does not name %s: %s" % (".".join(path), msg[:500])
    if len(msg) >= MESSAGE_LIMIT:
        return "the message quotes too much: %d characters" % len(msg)
    if ran:
        return "something ran or was planned: %s" % ran[:3]
    return None


def assert_refused(result, ran, plugin, path, value):
    problem = refusal_problem(path, result, ran)
    assert problem is None, "%s %s=%s: %s" % ("-".join(plugin), ".".join(path), option_rules.show(value, 60), problem)


def assert_each_refused(call, option, values):
    """Every one of ``values`` at ``option`` is refused cleanly; all are tried, and each one that is not is named."""
    plugin, path = option
    problems = ["%s: %s" % (option_rules.show(value, 40), problem) for value in values
                for problem in [refusal_problem(path, *call(plugin, path, value))] if problem]
    assert problems == [], "%s %s:\n  %s" % ("-".join(plugin), ".".join(path), "\n  ".join(problems))


def data_problem(value, ran):
    """What is wrong with where a taken text ``value`` went in the commands that ran or were planned (None: it
    stayed data): it must not become a flag or an empty argument, reach a command with a control character, or
    whole when huge, or be split into several arguments."""
    tokens = [token for argv in ran for token in argv]
    hidden = option_rules.CONTROL_CHARACTERS.findall(value)
    pieces = value.split()
    if value.startswith("-") and value in tokens:
        return "became a flag: %s" % ran
    if value == "" and "" in tokens:
        return "became an empty argument: %s" % [argv for argv in ran if "" in argv][:2]
    if hidden and [token for token in tokens if any(char in token for char in hidden)]:
        return "reached a command: %s" % ran
    if len(value) > option_rules.PATH_MAX and [token for token in tokens if value in token]:
        return "reached a command whole"
    if len(pieces) > 1 and [token for token in tokens if any(piece in token for piece in pieces)
                            and value not in token]:
        return "was split into several arguments: %s" % ran
    return None


@pytest.fixture
def call(recorder, capsys, tmp_path):
    """call(plugin, path, value, whole=False): (result, what ran or was planned) of the plugin with the value."""
    def run(plugin, path, value, whole=False):
        del recorder.argvs[:]
        FakeTransport.made = []
        args = args_with(plugin, path, value, str(tmp_path), whole)
        return run_plugin(plugin, args, recorder, capsys, str(tmp_path))
    return run


# ---------------------------------------------------------------- coverage of the table

def test_every_module_and_controller_action_is_here():
    modules = sorted(os.path.basename(p)[:-3] for p in glob.glob(os.path.join(REPO, "plugins", "modules", "*.py")))
    actions = sorted(os.path.basename(p)[:-3] for p in glob.glob(os.path.join(REPO, "plugins", "action", "*.py")))
    actions = [name for name in actions if name not in MODULE_WRAPPERS]
    assert sorted(MODULES) == modules
    assert sorted(ACTIONS) == actions


@pytest.mark.parametrize("plugin", PLUGINS, ids="-".join)
def test_every_kind_of_option_is_walked(plugin):
    kinds = set(kind_of(spec).replace("list:", "") for _path, spec in SPECS[plugin])
    assert kinds <= set(["int", "float", "text", "path", "bool", "dict", "mapping", "raw"]), kinds


@pytest.mark.parametrize("plugin", PLUGINS, ids="-".join)
def test_control_the_base_arguments_are_taken(plugin, recorder, capsys, tmp_path):
    args = base_args(plugin[1], str(tmp_path))
    result, _ran = run_plugin(plugin, args, recorder, capsys, str(tmp_path))
    if plugin[0] == "module" and plugin[1] in ACTION_ONLY:
        assert result.get("failed") and "runs as an action plugin" in result["msg"], result
    else:
        assert not result.get("failed"), result.get("msg")


@pytest.mark.parametrize("plugin", [p for p in PLUGINS if any(len(path) > 1 for path, _s in SPECS[p])],
                         ids="-".join)
def test_control_the_sub_option_bases_are_taken(plugin, recorder, capsys, tmp_path):
    for top in set(path[0] for path, _spec in SPECS[plugin] if len(path) > 1):
        spec = dict(SPECS[plugin])[(top,)]
        option = sorted(spec["options"])[0]
        args = args_with(plugin, (top, option), SUB_BASE[top].get(option), str(tmp_path))
        result, _ran = run_plugin(plugin, args, recorder, capsys, str(tmp_path))
        assert not result.get("failed"), result.get("msg")


# ---------------------------------------------------------------- the shared check, every value of every class

GOOD = {"int": 1, "float": 1.0, "str": "a", "path": "/a", "dict": {"a": 1}}


def shapes(kind):
    """(label, spec, value -> the option's value) of an option of ``kind`` ('mapping': with sub-options) alone,
    as a list's item, as a sub-option, and as a sub-option of a list's item."""
    sub = {"n": {"type": "int"}}
    if kind == "mapping":
        return [("t", {"type": "dict", "options": sub}, lambda value: value),
                ("t[1]", {"type": "list", "elements": "dict", "options": sub}, lambda value: [{"n": 1}, value]),
                ("t.s", {"type": "dict", "options": {"s": {"type": "dict", "options": sub}}},
                 lambda value: {"s": value})]
    scalar = {"type": kind}
    return [("t", scalar, lambda value: value),
            ("t[1]", {"type": "list", "elements": kind}, lambda value: [GOOD[kind], value]),
            ("t.n", {"type": "dict", "options": {"n": scalar}}, lambda value: {"n": value}),
            ("t[0].n", {"type": "list", "elements": "dict", "options": {"n": scalar}}, lambda value: [{"n": value}])]


@pytest.mark.parametrize("kind,values", [("int", NOT_AN_INT), ("float", NOT_A_NUMBER), ("str", NOT_TEXT),
                                         ("path", NOT_TEXT), ("dict", NOT_A_MAPPING), ("mapping", NOT_A_MAPPING)],
                         ids=["int", "float", "str", "path", "dict", "mapping"])
def test_the_shared_check_refuses_every_value_of_each_class_in_every_shape(kind, values):
    taken = [(label, value, problem) for label, spec, given in shapes(kind) for value in values
             for problem in [module_args.args_problem({"t": spec}, {"t": given(value)})]
             if not (problem and problem.startswith(label + " ") and len(problem) < MESSAGE_LIMIT)]
    assert taken == []


def test_a_bool_option_refuses_every_value_that_is_not_a_boolean_naming_it(capsys):
    # Ansible's own conversion: the shared check leaves booleans to it
    for value in NOT_A_BOOL:
        capsys.readouterr()
        with patch_module_args({"b": value}):
            with pytest.raises(SystemExit):
                module_args.checked_module(argument_spec={"b": {"type": "bool"}}, supports_check_mode=True)
        out = capsys.readouterr().out
        result = json.loads(out[out.index("{"):])
        assert result["failed"] and "'b'" in result["msg"], (value, result)


@pytest.mark.parametrize("check", [
    option_rules.check_text, option_rules.check_not_flag,
    lambda option, value: option_rules.check_name(option, value, "word"),
    lambda option, value: option_rules.check_path(option, "/" + value), option_rules.check_file_name,
    lambda option, value: option_rules.check_binary(option, value, must_exist=False),
], ids=["text", "not_flag", "name", "path", "file_name", "binary"])
def test_the_shared_rules_refuse_every_control_character_and_quote_a_huge_value_short(check):
    for value in CONTROL + ["x" + HUGE]:
        with pytest.raises(option_rules.OptionError) as refused:
            check("opt", value)
        assert str(refused.value).startswith("opt ") and len(str(refused.value)) < MESSAGE_LIMIT, value
    assert not [value for value in CONTROL if option_rules.is_host(value)]


# ---------------------------------------------------------------- 1, 2: numbers and types no option can take

@pytest.mark.parametrize("option", options_of(sorted(WRONG_TYPE)), ids=option_id)
def test_each_option_refuses_a_value_of_each_type_it_cannot_take(option, call):
    assert_each_refused(call, option, WRONG_TYPE[item_kind(dict(SPECS[option[0]])[option[1]])])


# ---------------------------------------------------------------- 3: negative, zero, huge

@pytest.mark.parametrize("option", options_of(["int", "float"], judging()), ids=option_id)
def test_number_options_refuse_negative_numbers_zero_unless_it_means_something_and_no_upper_bound(option, call):
    plugin, path = option
    zero_means = ".".join(path) in ZERO_MEANS.get(plugin[1], ())
    values = OUT_OF_RANGE[item_kind(dict(SPECS[plugin])[path])]
    assert_each_refused(call, option, [value for value in values if value != 0 or not zero_means])


# ---------------------------------------------------------------- 4, 5: paths and text

@pytest.mark.parametrize("option", options_of(["path"], judging()), ids=option_id)
def test_path_options_refuse_traversal_flags_control_characters_and_huge_paths(option, call):
    assert_each_refused(call, option, HOSTILE_PATHS)


@pytest.mark.parametrize("option", options_of(["text", "path"], judging()), ids=option_id)
def test_hostile_text_is_refused_naming_the_option_or_stays_data(option, call):
    plugin, path = option
    problems = []
    for value in HOSTILE_TEXT:
        result, ran = call(plugin, path, value)
        if result.get("failed"):
            problem = refusal_problem(path, result, ran)
        elif value == "" and dict(SPECS[plugin])[path].get("required"):
            problem = "taken for a required option"
        else:
            problem = data_problem(value, ran)
        if problem:
            problems.append("%s: %s" % (option_rules.show(value, 40), problem))
    assert problems == [], "%s %s:\n  %s" % ("-".join(plugin), ".".join(path), "\n  ".join(problems))


# ---------------------------------------------------------------- 6: null

def empty_value(spec):
    """The empty value of an option's kind (None: it has none), which Ansible may make of a null."""
    return [] if kind_of(spec).startswith("list:") else EMPTY.get(kind_of(spec))


@pytest.mark.parametrize("option", [(plugin, path) for plugin in judging() for path, _spec in SPECS[plugin]], ids=option_id)
def test_null_is_refused_naming_the_option_or_the_same_as_unset(option, call):
    plugin, path = option
    spec = dict(SPECS[plugin])[path]
    result, ran = call(plugin, path, None, whole=True)
    if result.get("failed"):
        assert refusal_problem(path, result, ran) is None, refusal_problem(path, result, ran)
        return
    assert not spec.get("required"), "null was taken for the required option %s" % ".".join(path)
    alike = [UNSET] if empty_value(spec) is None else [UNSET, empty_value(spec)]
    others = [call(plugin, path, value, whole=True) for value in alike]
    assert [other_ran for other, other_ran in others if not other.get("failed") and other_ran == ran], (ran, others)


# ---------------------------------------------------------------- specific cases

def int_options(plugin):
    return [path[0] for path, spec in SPECS[plugin] if kind_of(spec) == "int" and len(path) == 1]


@pytest.mark.parametrize("plugin", [p for p in judging() if p[0] == "module" and int_options(p)], ids="-".join)
def test_outside_check_mode_an_infinite_integer_runs_and_writes_nothing(plugin, recorder, capsys, tmp_path):
    tmp = str(tmp_path)
    args = dict(base_args(plugin[1], tmp), **{int_options(plugin)[0]: float("inf")})
    before = sorted(os.walk(tmp))
    capsys.readouterr()
    with patch_module_args(args):
        with pytest.raises(SystemExit):
            MODULES[plugin[1]].main()
    out = capsys.readouterr().out
    result = json.loads(out[out.index("{"):])
    assert result["failed"] and "%s inf must be an integer" % int_options(plugin)[0] in result["msg"], result
    assert recorder.argvs == [] and [t.calls for t in FakeTransport.made if t.calls] == []
    assert sorted(os.walk(tmp)) == before


@pytest.mark.parametrize("variable,value", [
    ("commcheck_slices", float("inf")), ("commcheck_slices", "nan"), ("commcheck_slices", "1e999"),
    ("commcheck_slices", 0), ("commcheck_slice_wait", float("-inf")), ("commcheck_slice_wait", 10 ** 30),
    ("commcheck_slice_wait", -1), ("commcheck_slice_wait", True),
])
def test_fleet_facts_checks_the_numbers_it_takes_from_variables(variable, value, tmp_path):
    task = mock.MagicMock()
    task.args = {"step": "s", "hosts": ["a"], "run_id": "r1", "directory": str(tmp_path)}
    task.check_mode = False
    task.async_val = 0
    templar = mock.MagicMock()
    templar.template.side_effect = lambda item, **kwargs: item
    action = fleet_facts_action.ActionModule(task, mock.MagicMock(), PlayContext(), loader=mock.MagicMock(),
                                             templar=templar, shared_loader_obj=mock.MagicMock())
    result = action.run(task_vars={"hostvars": {}, variable: value})
    assert result.get("failed") and variable in result["msg"], result
    assert os.listdir(str(tmp_path)) == []


def test_a_scalar_for_sub_options_fails_cleanly_where_ansible_raised(call):
    # Ansible's own check raised TypeError ("argument of type 'bool' is not iterable") for these
    result, ran = call(("module", "tool_probe"), ("kubectl",), True)
    assert result["failed"] and result["msg"].startswith("kubectl True must be a mapping"), result
    assert ran == []


def test_a_choice_is_quoted_short(call):
    result, _ran = call(("module", "iperf3"), ("transport",), HUGE)
    assert result["failed"] and "transport 'xxx" in result["msg"] and "must be one of host, kubectl" in result["msg"]
    assert len(result["msg"]) < MESSAGE_LIMIT


@pytest.mark.parametrize("option,value", [
    ("kubectl_binary", "/tmp/a\nb"), ("kubeconfig", "relative/../config"), ("namespace", "Bad_Namespace"),
    ("mpi_agent_dir", "relative/dir"), ("selector", "a=b;id"), ("mpi_agent_kubectl", "--help"),
])
def test_existing_pods_names_its_own_options(option, value, recorder, capsys, tmp_path):
    # the kubectl settings are options of their own here, not kubectl.<setting>
    args = dict(base_args("existing_pods", str(tmp_path)), mpi_agent_dir="/tmp/agent")
    args[option] = value
    result, ran = run_plugin(("module", "existing_pods"), args, recorder, capsys, str(tmp_path))
    assert result["failed"] and (" %s " % option) in " " + result["msg"].split(": ", 1)[1], result["msg"]
    assert ran == []
