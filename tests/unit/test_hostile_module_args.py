# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every option of every module and controller action, called directly with values it cannot take.

A user task, or an attacker, can call any module of the collection without the
roles' option check in front of it. Whatever it gets, the task must fail with a
message that names the option (``fail_json(msg=...)``), with no traceback and
before anything runs; what it takes as data never becomes a flag of a command.

The options come from each plugin's own argument spec, walked here with its
sub-options, so an option added tomorrow gets these cases the day it is added.
The classes:

1. numbers no option can hold: inf, -inf, nan (floats, and text such as
   '.inf', 'nan', '1e999'), 1e308, 10**30, 10**400, 5000 digits, and
   '1e999999' (Ansible's int conversion would build a million digits);
2. the wrong type: a boolean or a fraction for an integer, a boolean, list or
   dict for a number, a boolean, float, list or dict for a text, a scalar for
   an option with sub-options, nonsense for a bool or a dict;
3. negative numbers, and zero where the option has no use for it
   (``ZERO_MEANS`` lists where it has one);
4. paths with '..', a leading '-' or a control character for every path option;
5. hostile text (flags, control characters, a huge string, shell, '..', empty)
   in every text option: refused, or taken as data only;
6. null for every option: unset, or a clean failure.
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
from ansible.errors import AnsibleActionFail
from ansible.module_utils import basic
from ansible.module_utils.testing import patch_module_args
from ansible.playbook.play_context import PlayContext

from ansible_collections.clusterops.commcheck.plugins.action import check_outputs as check_outputs_action
from ansible_collections.clusterops.commcheck.plugins.action import fleet_facts as fleet_facts_action
from ansible_collections.clusterops.commcheck.plugins.action import record as record_action
from ansible_collections.clusterops.commcheck.plugins.action import report as report_action
from ansible_collections.clusterops.commcheck.plugins.action import validate_options as validate_options_action
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import transport
from ansible_collections.clusterops.commcheck.plugins.module_utils.options import module_args
from ansible_collections.clusterops.commcheck.plugins.module_utils.options import option_rules
from ansible_collections.clusterops.commcheck.plugins.modules import (
    check_outputs, collective, cpu_governor, existing_pods, fleet_facts, iperf3, perftest, quarantine, rdma_facts, record, report,
    test_pods, tool_probe, validate_options)
from module_in_process import Recorder

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODULES = {
    "check_outputs": check_outputs, "collective": collective, "cpu_governor": cpu_governor, "existing_pods": existing_pods,
    "fleet_facts": fleet_facts, "iperf3": iperf3, "perftest": perftest, "quarantine": quarantine,
    "rdma_facts": rdma_facts, "record": record, "report": report, "test_pods": test_pods, "tool_probe": tool_probe,
    "validate_options": validate_options,
}
ACTIONS = {
    "check_outputs": check_outputs_action, "fleet_facts": fleet_facts_action, "record": record_action, "report": report_action,
    "validate_options": validate_options_action,
}
# Modules whose action plugin runs instead of them: the module only says so, and the action judges the values.
ACTION_ONLY = set(["check_outputs", "fleet_facts", "report", "validate_options"])
TIME_LIMIT_S = 20
MESSAGE_LIMIT = 3 * option_rules.QUOTE_LIMIT + 400

# ---------------------------------------------------------------- the values

HUGE = "x" * 100000
NOT_FINITE = [float("inf"), float("-inf"), float("nan"), ".inf", "-.inf", "inf", "nan", "NaN", "1e999", "-1e999"]
TOO_BIG = [1e308, -1e308, 10 ** 30, -10 ** 30, 10 ** 400, "9" * 5000]
NOT_AN_INT = NOT_FINITE + TOO_BIG + ["1e999999", True, False, 1.5, "1.5", "0x10", "", "ten", [1], {"a": 1}]
NOT_A_NUMBER = NOT_FINITE + [10 ** 400, "9" * 5000, True, False, "", "ten", [1.0], {"a": 1.0}]
# (the dict's value is a no_log value for some options: Ansible masks it wherever it appears in the message)
NOT_TEXT = [True, False, 1.5, ["a"], {"key": "value-of-a-dict"}]
NOT_A_MAPPING = [True, 1.5, 5, "not a mapping", ["x"]]
NOT_A_BOOL = [2, "maybe", 1.5, float("nan"), [True], {"a": 1}]
FLAG, SHORT_FLAG = "--commcheck-hostile", "-Zcommcheck"
CONTROL = ["a\nb", "a\rb", "a\x00b", "a\x1b[31mb", u"a\u202eb", u"a\u2028b"]
HOSTILE_TEXT = [FLAG, SHORT_FLAG, HUGE, "a;b $(id) `id` |&", "../../commcheck-escape", "", u"\u00e9t\u00e9"] + CONTROL
HOSTILE_PATHS = [FLAG, "../../commcheck-escape", "/tmp/../commcheck-escape", "/tmp/a\nb", "/tmp/a\x00b", "/" + HUGE]

# Number options where zero means something (no check, no retries, rank 0, no expectation...).
ZERO_MEANS = {
    "collective": {"check", "root", "warmup_iterations"},
    "iperf3": {"connect_retries", "omit", "expected_gbps", "sides.step", "sides.rail", "sides.round",
               "sides.expected_gbps"},
    "perftest": {"connect_retries", "expected_gbps", "sides.step", "sides.rail", "sides.round",
                 "sides.expected_gbps", "use_cuda", "sides.use_cuda"},
    "rdma_facts": {"ib_gid_index"},
    "report": {"threshold"},
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

    def run(self, argv, timeout, env=None, cwd=None):
        self.calls.append(list(argv))
        return {"rc": 0, "stdout": json.dumps(_answer(argv)), "stderr": "", "timed_out": False, "duration_s": 0.0,
                "cmd": list(argv)}

    def start(self, argv, timeout, env=None, cwd=None):
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
    for module in (collective, quarantine):
        monkeypatch.setattr(module, "get_transport", faked_host(module.get_transport))
    monkeypatch.setattr(collective, "install_cleanup_handlers", lambda: None)
    for module in (test_pods, existing_pods):
        monkeypatch.setattr(module, "HostTransport", FakeTransport)
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
        "collective": {"library": "nccl", "hosts": ["n1", "n2"], "binary_dir": "/opt/nccl-tests/build",
                       "min_bytes": "8", "max_bytes": "8M", "fail_on_error": False},
        "cpu_governor": {"governor": "performance", "sysfs_root": sysfs},
        "existing_pods": {"selector": "app=x"},
        "fleet_facts": {"step": "s", "hosts": ["a"], "slices": 1, "wait": 900, "run_id": "r1",
                        "directory": os.path.join(tmp, "slices")},
        "iperf3": {"role": "client", "server": "10.0.0.2"},
        "perftest": {"role": "client", "server": "10.0.0.2", "device": "mlx5_0"},
        "quarantine": {"backend": "kubernetes", "hosts": ["node-3"]},
        "rdma_facts": {"sysfs_root": sysfs, "tools": False},
        "record": {"records": record_list},
        "report": {"report_dir": os.path.join(tmp, "reports"), "records": record_list},
        "test_pods": {"run_id": "r1", "nodes": ["node-a"], "image": "ghcr.io/example/tools:1",
                      "kubectl_binary": "/usr/bin/kubectl"},
        "tool_probe": {"keys": ["cmd:iperf3"]},
        "validate_options": {"roles": ["report"]},
    }[name]


# A sub-option is given inside this much of its option, with these arguments beside (None: removed):
# 'sides' replaces the top-level role and server; 'kubectl' is used with the kubectl transport only.
SUB_BASE = {"kubectl": {"pod": "p1", "binary": "/bin/true"}, "sides": {"role": "server"}}
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


def cases(kinds, values, plugins=PLUGINS):
    """(plugin, path, value) for every option of a kind in ``kinds`` (a list option: its items) of ``plugins``."""
    return [(plugin, path, value) for plugin in plugins for path, spec in SPECS[plugin]
            if kind_of(spec).replace("list:", "") in kinds for value in values]


def judging(plugins=PLUGINS):
    """The plugins that judge values themselves (not the modules that only say that their action plugin runs)."""
    return [p for p in plugins if not (p[0] == "module" and p[1] in ACTION_ONLY)]


def case_id(case):
    (kind, name), path, value = case
    text = repr(value)
    return "%s-%s-%s=%s" % (kind, name, ".".join(path), text if len(text) < 24 else text[:16] + "...%d" % len(text))


def args_with(plugin, path, value, tmp):
    """The plugin's base arguments with ``value`` at ``path`` (a list option gets it as its one item)."""
    args = dict(base_args(plugin[1], tmp))
    if kind_of(dict(SPECS[plugin])[path]).startswith("list:"):
        value = [value]
    if len(path) == 1:
        args[path[0]] = value
        return args
    top, option = path
    beside = dict(SUB_ARGS[top], **SUB_ARGS_OF.get((plugin[1], top), {}))
    args.update(beside)
    args = dict((key, item) for key, item in args.items() if item is not None)
    inner = dict(SUB_BASE[top], **{option: value})
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
            return run_action(ACTIONS[name].ActionModule, args)
        capsys.readouterr()
        with patch_module_args(dict(args, _ansible_check_mode=True)):
            with pytest.raises(SystemExit):
                MODULES[name].main()
        out = capsys.readouterr().out
        return json.loads(out[out.index("{"):])
    finally:
        os.chdir(cwd)


def run_action(cls, args):
    """An action plugin's result for a task with ``args`` on the controller, in check mode."""
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
        return action.run(task_vars={"hostvars": {}, "ansible_play_hosts_all": [], "groups": {"all": []}})
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
    """True when ``msg`` names the option at ``path`` (a sub-option together with its option)."""
    return all(part in msg for part in path)


def assert_refused(result, ran, plugin, path, value):
    assert result.get("failed") is True, "%s took %s=%r: %s" % (plugin, ".".join(path), value, result.get("msg"))
    msg = result.get("msg") or ""
    assert names_option(msg, path), "the message does not name %s: %s" % (".".join(path), msg[:500])
    assert len(msg) < MESSAGE_LIMIT, "the message quotes too much: %d characters" % len(msg)
    assert ran == [], "something ran or was planned for %s=%r: %s" % (".".join(path), value, ran[:3])


@pytest.fixture
def call(recorder, capsys, tmp_path):
    def run(plugin, path, value):
        return run_plugin(plugin, args_with(plugin, path, value, str(tmp_path)), recorder, capsys, str(tmp_path))
    return run


# ---------------------------------------------------------------- coverage of the table

def test_every_module_and_controller_action_is_here():
    modules = sorted(os.path.basename(p)[:-3] for p in glob.glob(os.path.join(REPO, "plugins", "modules", "*.py")))
    actions = sorted(os.path.basename(p)[:-3] for p in glob.glob(os.path.join(REPO, "plugins", "action", "*.py")))
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


# ---------------------------------------------------------------- 1, 2: numbers and types no option can take

@pytest.mark.parametrize("case", cases(["int"], NOT_AN_INT), ids=case_id)
def test_integer_options_refuse_what_is_not_an_integer_they_can_hold(case, call):
    result, ran = call(*case)
    assert_refused(result, ran, *case)


@pytest.mark.parametrize("case", cases(["float"], NOT_A_NUMBER), ids=case_id)
def test_number_options_refuse_what_is_not_a_finite_number(case, call):
    result, ran = call(*case)
    assert_refused(result, ran, *case)


@pytest.mark.parametrize("case", cases(["text", "path"], NOT_TEXT), ids=case_id)
def test_text_options_refuse_values_ansible_would_turn_into_other_text(case, call):
    result, ran = call(*case)
    assert_refused(result, ran, *case)


@pytest.mark.parametrize("case", cases(["mapping"], NOT_A_MAPPING), ids=case_id)
def test_options_with_sub_options_refuse_what_is_not_a_mapping(case, call):
    result, ran = call(*case)
    assert_refused(result, ran, *case)


@pytest.mark.parametrize("case", cases(["bool"], NOT_A_BOOL) + cases(["dict"], NOT_A_MAPPING), ids=case_id)
def test_bool_and_dict_options_refuse_other_values(case, call):
    result, ran = call(*case)
    assert_refused(result, ran, *case)


# ---------------------------------------------------------------- 3: negative, zero, huge

@pytest.mark.parametrize("case", cases(["int", "float"], [-1, "-1"], judging()), ids=case_id)
def test_number_options_refuse_negative_numbers(case, call):
    result, ran = call(*case)
    assert_refused(result, ran, *case)


@pytest.mark.parametrize("case", [c for c in cases(["int", "float"], [0], judging())
                                  if ".".join(c[1]) not in ZERO_MEANS.get(c[0][1], ())], ids=case_id)
def test_number_options_refuse_zero_unless_it_means_something(case, call):
    result, ran = call(*case)
    assert_refused(result, ran, *case)


@pytest.mark.parametrize("case", cases(["int", "float"], [2 ** 62, 1e300], judging()), ids=case_id)
def test_number_options_have_an_upper_bound(case, call):
    result, ran = call(*case)
    assert_refused(result, ran, *case)


# ---------------------------------------------------------------- 4, 5: paths and text

@pytest.mark.parametrize("case", cases(["path"], HOSTILE_PATHS, judging()), ids=case_id)
def test_path_options_refuse_traversal_flags_and_control_characters(case, call):
    result, ran = call(*case)
    assert_refused(result, ran, *case)


@pytest.mark.parametrize("case", cases(["text", "path"], HOSTILE_TEXT, judging()), ids=case_id)
def test_hostile_text_is_refused_or_stays_data(case, call):
    result, ran = call(*case)
    value = case[2]
    if result.get("failed"):
        msg = result.get("msg") or ""
        assert len(msg) < MESSAGE_LIMIT and HUGE not in msg, msg[:300]
        return
    tokens = [token for argv in ran for token in argv]
    assert FLAG not in tokens and SHORT_FLAG not in tokens, "%r became a flag: %s" % (value, ran)
    bad = [c for c in value if c in u"\n\r\x00\x1b\u202e\u2028"]
    assert not [t for t in tokens if bad and any(c in t for c in bad)], "%r reached a command: %s" % (value, ran)
    assert not [t for t in tokens if HUGE in t], "a 100000-character value reached a command whole"


# ---------------------------------------------------------------- 6: null

@pytest.mark.parametrize("case", [(p, path, None) for p in PLUGINS for path, _s in SPECS[p]], ids=case_id)
def test_null_is_unset_or_a_clean_failure(case, call):
    result, _ran = call(*case)
    assert not result.get("failed") or result.get("msg"), result


# ---------------------------------------------------------------- the shared check itself

@pytest.mark.parametrize("spec,value,fragment", [
    ({"type": "int"}, float("inf"), "t inf must be an integer"),
    ({"type": "int"}, "9" * 5000, "must be between"),
    ({"type": "float"}, 10 ** 400, "must be a finite number"),
    ({"type": "str"}, True, "t True is not a string"),
    ({"type": "list", "elements": "int"}, "1,nan", "t[1] 'nan' must be an integer"),
    ({"type": "dict", "options": {"n": {"type": "int"}}}, "n=inf", "t.n 'inf' must be an integer"),
    ({"type": "list", "elements": "dict", "options": {"n": {"type": "int"}}}, [{"n": 1}, {"n": True}],
     "t[1].n True must be an integer"),
])
def test_args_problem_names_the_option_and_the_rule(spec, value, fragment):
    problem = module_args.args_problem({"t": spec}, {"t": value})
    assert problem and fragment in problem, problem


def test_args_problem_reads_aliases_and_takes_good_values():
    spec = {"t": {"type": "int", "aliases": ["alias"]}, "s": {"type": "str"}, "f": {"type": "float"}}
    assert "alias 'inf' must be an integer" in module_args.args_problem(spec, {"alias": "inf"})
    assert module_args.args_problem(spec, {"t": "12", "s": 7, "f": "0.5"}) is None


def test_a_refusal_hides_no_log_values_even_inside_sub_options(capsys, monkeypatch):
    spec = {"secret": {"type": "str", "no_log": True}, "sub": {"type": "dict", "options": {
        "key": {"type": "path", "no_log": True}, "n": {"type": "int"}}}}
    args = {"secret": "hunter2-top", "sub": {"key": "/hunter2/inner", "n": float("inf")}}
    monkeypatch.setattr(basic, "_ANSIBLE_ARGS", json.dumps({"ANSIBLE_MODULE_ARGS": args}).encode("utf-8"))
    monkeypatch.setattr(basic, "_ANSIBLE_PROFILE", "legacy", raising=False)
    with pytest.raises(SystemExit):
        module_args.checked_module(argument_spec=spec, supports_check_mode=True)
    out = capsys.readouterr().out
    result = json.loads(out[out.index("{"):])
    assert result["failed"] and "sub.n inf must be an integer" in result["msg"], result
    assert "hunter2" not in out, out


@pytest.mark.parametrize("check,value,fragment", [
    (option_rules.check_number, 10 ** 400, "must be a finite number"),
    (option_rules.check_number, -10 ** 400, "must be a finite number"),
    (option_rules.check_int, "9" * 5000, "must be between 0 and 10"),
    (option_rules.check_int, float("nan"), "must be an integer"),
])
def test_the_one_validator_refuses_numbers_python_cannot_convert(check, value, fragment):
    with pytest.raises(option_rules.OptionError) as refused:
        check("n", value, 0, 10)
    assert str(refused.value).startswith("n ") and fragment in str(refused.value)
    assert len(str(refused.value)) < MESSAGE_LIMIT


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
