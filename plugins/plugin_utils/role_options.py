# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The rule every role variable obeys, checked once before anything runs (pure).

``RULES`` maps each variable of the roles' ``meta/argument_specs.yml`` to the
rule its value obeys beyond the type and choices the spec gives: ranges,
names, paths, binaries, sizes, extra arguments, hosts, environment and MCA
keys. Where a module-level check exists (perftest_cmd, iperf3_cmd, mpi_cmd,
k8s_pods, k8s_jobs, kubexec, quarantine, transport, history, rdma_discovery)
the rule calls it; the rest are built from ``option_rules``.

``check_values(spec, values, known_hosts)`` checks one host's values: first the
type and choices of the spec (Ansible's own ``ArgumentSpecValidator``, so a
value converts exactly as the role's automatic spec check converts it), then
the rule of each variable. It returns the problems as ``"<option>: <why>"``
strings that quote at most ``option_rules.QUOTE_LIMIT`` characters of a
value; an empty list means every value is good.

Nothing here reads a file or a variable store: the action plugin
``clusterops.commcheck.validate_options`` loads the specs, gathers the values
of every host and calls these functions.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import ipaddress
import re

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible.module_utils.errors import ArgumentValueError

from ansible_collections.clusterops.commcheck.plugins.module_utils.options import option_rules as rules
from ansible_collections.clusterops.commcheck.plugins.module_utils.options.option_rules import OptionError, QUOTE_LIMIT, show
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import cpu_governor
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import history
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import iperf3_cmd
from ansible_collections.clusterops.commcheck.plugins.module_utils.kubernetes import k8s_jobs
from ansible_collections.clusterops.commcheck.plugins.module_utils.kubernetes import k8s_pods
from ansible_collections.clusterops.commcheck.plugins.module_utils.kubernetes import kubexec
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import mpi_cmd
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import perftest_cmd
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import quarantine
from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery import rdma_discovery
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import transport

# The roles with an argument spec, and those the one-click role runs (and so
# checks up front, with its own options first: a variable several roles
# share takes the type and choices of the first role that has it).
ROLES = ("commcheck", "discover", "rdma_perf", "collective", "tcp_perf", "report", "quarantine", "k8s_pods")
ONECLICK_ROLES = ("commcheck", "discover", "rdma_perf", "collective", "tcp_perf", "report", "quarantine")

MESSAGE_PREFIX = "Bad option(s), nothing was run: "
# The most characters a delegated check's message may have (its quoted
# values are cut to QUOTE_LIMIT first; this only bounds the rest).
MESSAGE_LIMIT = 1000

PORT_LOW, PORT_HIGH = 1024, 65000        # the round plan adds one port per rail and test step
RATE_MAX_GBPS = 100000.0                 # 100 Tb/s: far above any link, below anything absurd
TIMEOUT_MAX = 86400
RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:+-]{0,127}$")
ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")
VARIABLE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")
DEVICE_KEYS = ("device", "name", "port", "ib_port", "address", "gid_index", "rate_gbps")
KUBECTL_KEYS = ("namespace", "pod", "container", "context", "kubeconfig", "binary")
TOLERATION_KEYS = ("key", "operator", "value", "effect", "tolerationSeconds")
TOLERATION_OPERATORS = ("Exists", "Equal")
TOLERATION_EFFECTS = ("",) + quarantine.TAINT_EFFECTS

_TYPE_WORDS = {
    "int": "an integer", "float": "a number", "bool": "a boolean (true or false)", "str": "a string",
    "path": "a path", "list": "a list", "dict": "a dict (NAME: value)", "raw": "a value",
}
_ELEMENT_WORDS = {
    "int": "integers", "float": "numbers", "bool": "booleans", "str": "strings", "path": "paths",
    "list": "lists", "dict": "dicts", "raw": "values",
}
_SPEC_KEYS = ("type", "elements", "choices")


class Context(object):
    """What a rule may look at besides its own value.

    ``values``: this host's values that passed their type check, converted
    (spec defaults filled in); ``known_hosts``: inventory host names, which
    host options accept even when they are not DNS names; ``specs``: every
    role variable's spec, for variables that hold other variables
    (``commcheck_k8s_pod_vars``).
    """

    def __init__(self, values=None, known_hosts=(), specs=None):
        self.values = dict(values or {})
        self.known_hosts = frozenset(known_hosts or ())
        self.specs = dict(specs or {})

    def get(self, name, default=None):
        return self.values.get(name, default)


# ---------------------------------------------------------------- messages

def _pieces(value, depth=0):
    """Every value inside ``value`` (keys too), the way a message may quote it."""
    yield value
    if depth > 8:
        return
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _pieces(key, depth + 1)
            yield from _pieces(item, depth + 1)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _pieces(item, depth + 1)


def clip(message, value, limit=QUOTE_LIMIT):
    """``message`` with every long quote of (a part of) ``value`` cut to ``limit`` characters.

    The module-level checks quote values with ``%r`` (or ``%d``/``%s``);
    the same text is replaced by ``option_rules.show`` of it, so a huge value
    cannot flood the message. The whole message is bounded as well.
    """
    quotes = set()
    for piece in _pieces(value):
        for text in (repr(piece), str(piece)):
            if len(text) > limit:
                quotes.add(text)
    for text in sorted(quotes, key=len, reverse=True):
        if text in message:
            message = message.replace(text, "%s...(%d characters)" % (text[:limit], len(text)))
    if len(message) > MESSAGE_LIMIT:
        message = "%s...(%d characters)" % (message[:MESSAGE_LIMIT], len(message))
    return message


def _fail(label, value, why):
    """Raise the problem '<label>: <value> <why>'."""
    rules.fail(label + ":", value, why)


def _call(label, shown, check, *args, **kwargs):
    """Run a module-level check; its error becomes '<label>: <its message>' (quotes of ``shown`` cut)."""
    try:
        return check(*args, **kwargs)
    except (ValueError, TypeError, OverflowError) as exc:
        text = str(exc)
        if not text.startswith(label + ":"):
            text = "%s: %s" % (label, text)
        raise OptionError(clip(text, shown))


def _rules_call(label, check, value, *args):
    """An ``option_rules`` check with '<label>:' as the option it names."""
    return check(label + ":", value, *args)


def _described(rule, text):
    rule.describes = text
    return rule


def _words(items):
    return ", ".join(str(i) for i in items)


# ---------------------------------------------------------------- generic rules

def by_spec(what="the choices of the argument spec"):
    """Nothing beyond the type and choices of the argument spec (which ``check_values`` applies)."""
    def rule(label, value, ctx):
        return None
    return _described(rule, what)


def boolean():
    def rule(label, value, ctx):
        if not isinstance(value, bool):
            _fail(label, value, "must be true or false")
    return _described(rule, "true or false")


def integer(low, high, zero=None):
    """An integer in [low, high]; with ``zero`` (what 0 means), 0 is allowed too."""
    def rule(label, value, ctx):
        if zero is not None and value == 0 and not isinstance(value, bool):
            return
        try:
            _rules_call(label, rules.check_int, value, low, high)
        except OptionError:
            if zero is None or isinstance(value, bool) or not isinstance(value, int):
                raise
            _fail(label, value, "must be 0 (%s) or between %s and %s" % (zero, low, high))
    return _described(rule, "%s to %s%s" % (low, high, "" if zero is None else "; 0: %s" % zero))


def number(low, high, above=False):
    """A finite number in [low, high]; ``above``: low itself is not allowed."""
    def rule(label, value, ctx):
        _rules_call(label, rules.check_number, value, low, high)
        if above and value <= low:
            _fail(label, value, "must be above %s (at most %s)" % (low, high))
    return _described(rule, "%s%s to %s" % ("above " if above else "", low, high))


def fraction():
    return number(0, 1, above=True)


def text(max_length=rules.PATH_MAX, empty=True):
    """One line of text (no control characters)."""
    def rule(label, value, ctx):
        _rules_call(label, rules.check_text, value, max_length)
        if not empty and not value.strip():
            _fail(label, value, "must not be empty")
    return _described(rule, "one line of text, at most %d characters" % max_length)


def name(kind, empty=False):
    """A name of ``option_rules.NAME_KINDS`` (never a flag); '' allowed with ``empty``."""
    def rule(label, value, ctx):
        if empty and value == "":
            return
        _rules_call(label, rules.check_name, value, kind)
    return _described(rule, rules.NAME_KINDS[kind][1] + (" or ''" if empty else ""))


def names(kind, empty=True):
    """A list of names of one kind."""
    def rule(label, value, ctx):
        if not empty and not value:
            _fail(label, value, "must name at least one")
        for item in value:
            _rules_call(label, rules.check_name, item, kind)
    return _described(rule, "a list of " + rules.NAME_KINDS[kind][1])


def path(absolute=True, empty=False):
    """A path without '..' components or control characters (absolute unless told)."""
    def rule(label, value, ctx):
        if empty and value in ("", None):
            return
        _rules_call(label, rules.check_path, value, absolute)
    what = "an absolute path" if absolute else "a path (relative to where ansible-playbook runs)"
    return _described(rule, what + " without '..'" + (", or ''" if empty else ""))


def binary(empty=False):
    """A program: an absolute path or a bare command name (never relative, never a flag).

    Only the form is checked: the program runs on a host (or in a pod) that
    the check does not contact; the module that runs it reports it missing.
    """
    def rule(label, value, ctx):
        if empty and value == "":
            return
        _rules_call(label, rules.check_binary, value, None, False)
    return _described(rule, "an absolute path or a command name" + (", or ''" if empty else ""))


def _check_host(label, value, ctx):
    """An inventory host name or a DNS name / IP address; never a flag."""
    _rules_call(label, rules.check_not_flag, value)
    if value in ctx.known_hosts:
        return value
    if not rules.is_host(value):
        _fail(label, value, "is not a host of the inventory, a host name or an IP address")
    return value


def host(empty=False):
    def rule(label, value, ctx):
        if empty and value == "":
            return
        _check_host(label, value, ctx)
    return _described(rule, "a host name or an IP address" + (", or ''" if empty else ""))


def hosts():
    def rule(label, value, ctx):
        seen = set()
        for item in value:
            _check_host(label, item, ctx)
            if item in seen:
                _fail(label, item, "is listed twice")
            seen.add(item)
    return _described(rule, "a list of inventory hosts")


def pairs():
    """[[server, client], ...] of hosts."""
    def rule(label, value, ctx):
        for pair in value:
            if not isinstance(pair, (list, tuple)) or len(pair) != 2:
                _fail(label, pair, "is not a [server, client] pair")
            for item in pair:
                _check_host(label, item, ctx)
            if pair[0] == pair[1]:
                _fail(label, pair, "pairs a host with itself")
    return _described(rule, "a list of [server, client] host pairs")


def choices_not_empty():
    def rule(label, value, ctx):
        if not value:
            _fail(label, value, "must name at least one")
    return _described(rule, "at least one of the choices")


# ---------------------------------------------------------------- one-click and RDMA rules

def _oneclick_checks(label, value, ctx):
    if not value:
        _fail(label, value, "is empty: name at least one of discover, rdma, collective (or nccl, hccl), tcp")
    if "nccl" in value and "hccl" in value:
        _fail(label, value, "names both nccl and hccl; one play runs one of them")


def _device_port(label, value, port):
    if isinstance(port, bool) or not re.match(r"^\d{1,3}$", str(port)) or not 1 <= int(port) <= 255:
        _fail(label, value, "has a port that is not 1 to 255")


def _device_text(label, item):
    if not isinstance(item, str):
        _fail(label, item, "is neither a device name (mlx5_0, mlx5_0:1) nor a dict with 'device'")
    parts = item.split(":")
    if len(parts) > 2 or not parts[0] or not rules.NAME_KINDS["rdma_device"][0].match(parts[0]) \
            or parts[0].startswith("-"):
        _fail(label, item, "is not an RDMA device name (mlx5_0) or device:port (mlx5_0:1)")
    if len(parts) == 2:
        _device_port(label, item, parts[1])


def _device_dict(label, item, ctx):
    unknown = sorted(str(k) for k in item if k not in DEVICE_KEYS)
    if unknown:
        _fail(label, item, "has unknown keys %s (known: %s)" % (_words(unknown), _words(DEVICE_KEYS)))
    device = item.get("device", item.get("name"))
    if not isinstance(device, str) or ":" in device:
        _fail(label, item, "needs 'device', an RDMA device name like mlx5_0")
    _device_text(label, device)
    for key in ("port", "ib_port"):
        if key in item:
            _device_port(label, item, item[key])
    if item.get("address") not in (None, ""):
        _check_host(label + " address", item["address"], ctx)
    if item.get("gid_index") not in (None, ""):
        _call(label, item, perftest_cmd.parse_gid_index, item["gid_index"])
    if item.get("rate_gbps") is not None:
        _rules_call(label + " rate_gbps", rules.check_number, item["rate_gbps"], 1, RATE_MAX_GBPS)


def _devices(label, value, ctx):
    for item in value:
        if isinstance(item, dict):
            _device_dict(label, item, ctx)
        else:
            _device_text(label, item)


def _environment(label, value, ctx):
    """NAME: value pairs for a process environment."""
    for key, item in value.items():
        if not isinstance(key, str) or not ENV_NAME.match(key):
            _fail(label, key, "is not an environment variable name (letters, digits, _)")
        if isinstance(item, bool) or not isinstance(item, (str, int, float)):
            _fail(label, item, "is not a value for %s (a string or a number)" % key)
        _rules_call("%s.%s" % (label, key), rules.check_text, str(item))


def _governor(label, value, ctx):
    if value == "":
        return
    _rules_call(label, rules.check_text, value, 32)
    if not cpu_governor.GOVERNOR_NAME.match(value):
        _fail(label, value, "is not a cpufreq governor name (performance, powersave, ... or '' to leave it)")


def _iperf3_extra_args(tokens):
    """iperf3's extra_args check (iperf3_cmd's own; older iperf3_cmd: perftest_cmd's with iperf3's options)."""
    check = getattr(iperf3_cmd, "check_extra_args", None)
    if check is not None:
        return check(tokens)
    return perftest_cmd.check_extra_args(tokens, iperf3_cmd.MANAGED_OPTIONS)


def _extra_args(check):
    """Extra arguments of a tool, read with the tool's own option grammar (``check``)."""
    def rule(label, value, ctx):
        _call(label, value, check, value)
    return _described(rule, "separate arguments the tool knows, none the role sets itself")


def _cidr(ipv4_only):
    def rule(label, value, ctx):
        if value in (None, ""):
            return
        _rules_call(label, rules.check_text, value, 64)
        if ipv4_only:
            error = rdma_discovery.subnet_error(value)
            if error:
                raise OptionError(clip("%s: %s" % (label, error), value))
            return
        try:
            ipaddress.ip_network(value, strict=False)
        except ValueError:
            _fail(label, value, "is not a network in CIDR form (10.0.0.0/24, fd00::/64)")
    return _described(rule, "a network in CIDR form" + (" (IPv4)" if ipv4_only else "") + ", or ''")


def _efficiency(label, value, ctx):
    """op -> fraction of the link rate."""
    for key, item in value.items():
        _rules_call(label, rules.check_name, str(key), "word")
        share = _rules_call("%s.%s" % (label, key), rules.check_number, item, 0, 1)
        if share <= 0:
            _fail("%s.%s" % (label, key), item, "must be above 0 (at most 1)")


def _rdma_timeout(label, value, ctx):
    integer(0, TIMEOUT_MAX, zero="duration + 30 s")(label, value, ctx)
    duration = ctx.get("commcheck_rdma_duration")
    if value and isinstance(duration, int) and duration > 0 and value <= duration:
        _fail(label, value, "must be longer than commcheck_rdma_duration (%d s)" % duration)


def _rdma_iterations(label, value, ctx):
    integer(perftest_cmd.ITERS_MIN, perftest_cmd.ITERS_MAX, zero="perftest's default")(label, value, ctx)
    duration = ctx.get("commcheck_rdma_duration")
    if value and isinstance(duration, int) and duration > 0:
        _fail(label, value, "applies only with commcheck_rdma_duration 0 (perftest runs by time or by count)")


def _rdma_all_sizes(label, value, ctx):
    boolean()(label, value, ctx)
    if value and ctx.get("commcheck_rdma_duration"):
        _fail(label, value, "needs commcheck_rdma_duration 0 (perftest runs one size in duration mode)")
    if value and ctx.get("commcheck_rdma_size"):
        _fail(label, value, "and commcheck_rdma_size exclude each other")


def _rdma_mtu(label, value, ctx):
    if isinstance(value, bool) or value not in (0,) + perftest_cmd.MTUS:
        _fail(label, value, "must be 0 (the port's) or one of %s" % _words(perftest_cmd.MTUS))


# ---------------------------------------------------------------- collective rules

def _library(ctx):
    """The collective library of this run, or None when it is not fixed yet (auto)."""
    checks = ctx.get("commcheck_checks") or []
    for library in mpi_cmd.LIBRARIES:
        if library in checks:
            return library
    library = ctx.get("commcheck_collective_library")
    return library if library in mpi_cmd.LIBRARIES else None


def _collective_ops(label, value, ctx):
    if not value:
        _fail(label, value, "must name at least one collective")
    library = _library(ctx)
    for op in value:
        if op not in mpi_cmd.OPERATIONS:
            _fail(label, op, "is not a collective (known: %s)" % _words(mpi_cmd.OPERATIONS))
        if library is not None:
            _call(label, op, mpi_cmd.binary_name, library, op)


def _size(label, value, ctx):
    if isinstance(value, str):
        _rules_call(label, rules.check_text, value, 64)
    size = _call(label, value, mpi_cmd.parse_size, value, "the value")
    if label == "commcheck_collective_min_bytes":
        largest = ctx.get("commcheck_collective_max_bytes")
        try:
            largest = mpi_cmd.parse_size(largest) if largest is not None else None
        except ValueError:
            largest = None
        if largest is not None and size > largest:
            _fail(label, value, "is larger than commcheck_collective_max_bytes (%s)"
                  % show(ctx.get("commcheck_collective_max_bytes")))
    return size


def _datatype(label, value, ctx):
    if value == "":
        return
    library = _library(ctx)
    if library:
        known = mpi_cmd.DATATYPES[library]
    else:
        known = sorted(set(mpi_cmd.DATATYPES["nccl"]) | set(mpi_cmd.DATATYPES["hccl"]))
    if value not in known:
        _fail(label, value, "is not a%s datatype (known: %s)" % (" " + library if library else "", _words(known)))


def _reduce_op(label, value, ctx):
    library = _library(ctx)
    known = mpi_cmd.REDUCE_OPS[library] if library else mpi_cmd.REDUCE_OPS["nccl"]
    if value not in known:
        _fail(label, value, "is not a reduction (known: %s)" % _words(known))


def _collective_env(label, value, ctx):
    _call(label, value, mpi_cmd.check_env, value)


def _mca(label, value, ctx):
    _call(label, value, mpi_cmd.check_mca, value)


def _ssh_config(label, value, ctx):
    if value == "":
        return
    _call(label, value, mpi_cmd.launch_mca, None, value)


def _rates(label, value, ctx):
    for item in value:
        if _rules_call(label, rules.check_number, item, 0, RATE_MAX_GBPS) <= 0:
            _fail(label, item, "must be above 0 Gb/s")


# ---------------------------------------------------------------- TCP rules

def _tcp_timeout(label, value, ctx):
    integer(0, TIMEOUT_MAX, zero="duration + omit + 30 s")(label, value, ctx)
    duration, omit = ctx.get("commcheck_tcp_duration"), ctx.get("commcheck_tcp_omit") or 0
    if value and isinstance(duration, int) and isinstance(omit, int) and value <= duration + omit:
        _fail(label, value, "must be longer than commcheck_tcp_duration + commcheck_tcp_omit (%d s)"
              % (duration + omit))


def _tcp_bidirectional(label, value, ctx):
    boolean()(label, value, ctx)
    if value and ctx.get("commcheck_tcp_reverse"):
        _fail(label, value, "and commcheck_tcp_reverse exclude each other")


# ---------------------------------------------------------------- report rules

def _run_id(allow_last=False):
    def rule(label, value, ctx):
        if value == "" or (allow_last and value == "last"):
            return
        _rules_call(label, rules.check_text, value, 128)
        if not RUN_ID.match(value):
            _fail(label, value, "is not a run id (letters, digits and _ . : + -, no '/', at most 128)")
    return _described(rule, "a run id%s, or ''" % (", 'last'" if allow_last else ""))


def _age(label, value, ctx):
    if value == "":
        return
    _rules_call(label, rules.check_text, value, 64)
    _call(label, value, history.parse_time, value)


def _thresholds(label, value, ctx):
    """metric -> relative change."""
    for key, item in value.items():
        _rules_call(label, rules.check_name, str(key), "word")
        _rules_call("%s.%s" % (label, key), rules.check_number, item, 0, 10)


def _records(label, value, ctx):
    if value is None:
        return
    _call(label, value, history.normalize_records, value)


# ---------------------------------------------------------------- Kubernetes rules

def _k8s(param):
    """A test-pod parameter, checked by ``k8s_pods.validate_params``."""
    def rule(label, value, ctx):
        if value in ("", None):
            return
        for item in [value] if isinstance(value, str) else value if isinstance(value, list) else []:
            _rules_call(label, rules.check_not_flag, item)
        errors = k8s_pods.validate_params({"state": "absent", param: value})
        if errors:
            more = " (and %d more)" % (len(errors) - 1) if len(errors) > 1 else ""
            raise OptionError(clip("%s: %s%s" % (label, errors[0], more), value))
    return _described(rule, "as the test_pods module's %s" % param)


def _k8s_image(label, value, ctx):
    if value == "":
        return
    errors = k8s_pods.validate_params({"state": "present", "nodes": ["node"], "image": value})
    if errors:
        raise OptionError(clip("%s: %s" % (label, errors[0]), value))


def _k8s_command(label, value, ctx):
    if not value:
        _fail(label, value, "must name the program the container runs")
    _rules_call(label, rules.check_binary, value[0], None, False)
    for item in value[1:]:
        _rules_call(label, rules.check_text, item)
    _k8s("command")(label, value, ctx)


def _kubeconfig(label, value, ctx):
    if value in ("", None):
        return
    _rules_call(label, rules.check_path, value, False)


def _tolerations(label, value, ctx):
    for item in value:
        unknown = sorted(str(k) for k in item if k not in TOLERATION_KEYS)
        if unknown:
            _fail(label, item, "has unknown keys %s (known: %s)" % (_words(unknown), _words(TOLERATION_KEYS)))
        if item.get("key") not in (None, ""):
            _call(label, item, quarantine.check_key, item["key"], "toleration key")
        if item.get("operator") not in (None,) + TOLERATION_OPERATORS:
            _fail(label, item, "has an operator that is not %s" % " or ".join(TOLERATION_OPERATORS))
        if item.get("effect") not in (None,) + TOLERATION_EFFECTS:
            _fail(label, item, "has an effect that is not %s" % _words(TOLERATION_EFFECTS[1:]))
        if item.get("value") is not None:
            _rules_call(label, rules.check_name, str(item["value"]), "k8s_label_value")
        if item.get("tolerationSeconds") is not None:
            _rules_call(label, rules.check_int, item["tolerationSeconds"], 0, 10 ** 9)


def _annotations(label, value, ctx):
    for key, item in value.items():
        _call(label, key, quarantine.check_key, key, "annotation key")
        _rules_call("%s.%s" % (label, key), rules.check_text, str(item), 65536)


def _variables(label, value, ctx):
    """Variables of a host: names, and the rule of every commcheck option among them."""
    for key, item in value.items():
        if not isinstance(key, str) or not VARIABLE_NAME.match(key):
            _fail(label, key, "is not a variable name")
        spec = ctx.specs.get(key)
        if spec is not None:
            problem = check_option(key, spec, item, ctx, label="%s.%s" % (label, key))
            if problem:
                raise OptionError(problem)


def _node_variables(label, value, ctx):
    for node, variables in value.items():
        _rules_call(label, rules.check_name, str(node), "k8s_name")
        if not isinstance(variables, dict):
            _fail("%s.%s" % (label, node), variables, "must be a dict of variables")
        _variables("%s.%s" % (label, node), variables, ctx)


def _group(label, value, ctx):
    if not isinstance(value, str) or not VARIABLE_NAME.match(value):
        _fail(label, value, "is not an inventory group name (letters, digits, _)")


def _agent_dir(label, value, ctx):
    _call(label, value, kubexec.check_dir, value)


def _agent_kubectl(label, value, ctx):
    _rules_call(label, rules.check_binary, value, None, False)
    _call(label, value, kubexec.check_kubectl, value)


def _job_collective(label, value, ctx):
    if value:
        _call(label, value, k8s_jobs.launcher_command, "mpijob", ["node"], value)


def _kubectl(label, value, ctx):
    """The kubectl transport's pod (checked by the transport when it is used)."""
    unknown = sorted(str(k) for k in value if k not in KUBECTL_KEYS)
    if unknown:
        _fail(label, value, "has unknown keys %s (known: %s)" % (_words(unknown), _words(KUBECTL_KEYS)))
    for key in ("pod", "namespace", "container"):
        if value.get(key) is not None:
            _rules_call("%s.%s" % (label, key), rules.check_name, value[key], "k8s_name")
    if value.get("context") is not None:
        _rules_call("%s.context" % label, rules.check_name, value["context"], "k8s_context")
    if value.get("kubeconfig") is not None:
        _kubeconfig("%s.kubeconfig" % label, value["kubeconfig"], ctx)
    if value.get("binary") is not None:
        _rules_call("%s.binary" % label, rules.check_binary, value["binary"], None, False)
    if ctx.get("commcheck_transport") == "kubectl":
        error = transport.kubectl_options_error(value)
        if error:
            raise OptionError(clip("%s: %s" % (label, error), value))


# ---------------------------------------------------------------- quarantine rules

def _node_name(backend):
    return quarantine.check_slurm_node if backend == "slurm" else quarantine.check_k8s_node


def _node_names(label, value, ctx):
    check = _node_name(ctx.get("commcheck_quarantine_backend"))
    for key, node in value.items():
        _check_host(label, key, ctx)
        _call("%s.%s" % (label, key), node, check, node)


def _quarantine_hosts(label, value, ctx):
    hosts()(label, value, ctx)
    mapped = ctx.get("commcheck_quarantine_node_names") or {}
    check = _node_name(ctx.get("commcheck_quarantine_backend"))
    for item in value:
        if item not in mapped:
            _call(label, item, check, item)


# ---------------------------------------------------------------- the table

_PERCENT = number(0, 1)
_OUTLIER_Z = number(0, 1000, above=True)
_OUTLIER_REL = number(0, 10)
_GBPS = number(0, RATE_MAX_GBPS)

RULES = {
    # one click (commcheck)
    "commcheck_checks": _described(_oneclick_checks, "at least one check; not both nccl and hccl"),
    "commcheck_pattern": by_spec(),
    "commcheck_devices": _described(_devices, "RDMA device names, device:port or dicts with device"),
    "commcheck_ib_port": integer(1, 255),
    "commcheck_collective_library": by_spec(),
    "commcheck_gpus_per_node": integer(1, 1024),
    "commcheck_require_accelerators": boolean(),
    "commcheck_min_fraction": fraction(),
    "commcheck_report_dir": path(absolute=False),
    # discover
    "commcheck_sysfs_root": path(),
    "commcheck_expected_rate_gbps": number(0, RATE_MAX_GBPS, above=True),
    "commcheck_subnet": _cidr(ipv4_only=True),
    "commcheck_ib_gid_index": integer(perftest_cmd.GID_MIN, perftest_cmd.GID_MAX),
    "commcheck_discover_tools": boolean(),
    "commcheck_discover_address_source": by_spec(),
    "commcheck_fail_on": by_spec(),
    "commcheck_discover_min_severity": by_spec(),
    "commcheck_discover_publish": boolean(),
    "commcheck_transport": by_spec(),
    "commcheck_kubectl": _described(_kubectl, "namespace, pod, container, context, kubeconfig, binary"),
    "commcheck_environment": _described(_environment, "NAME: one-line value"),
    # rdma_perf
    "commcheck_rdma_hosts": hosts(),
    "commcheck_rdma_pattern": by_spec(),
    "commcheck_rdma_strategy": by_spec(),
    "commcheck_rdma_background": by_spec(),
    "commcheck_rdma_pairs": pairs(),
    "commcheck_rdma_center": host(empty=True),
    "commcheck_rdma_rail_numbers": _described(
        lambda label, value, ctx: [_rules_call(label, rules.check_int, v, 0, 1023) for v in value], "0 to 1023"),
    "commcheck_rdma_ops": choices_not_empty(),
    "commcheck_rdma_metrics": choices_not_empty(),
    "commcheck_rdma_duration": integer(1, perftest_cmd.DURATION_MAX, zero="run by iterations"),
    "commcheck_rdma_iterations": _described(_rdma_iterations, "0, or %d to %d with duration 0" % (
        perftest_cmd.ITERS_MIN, perftest_cmd.ITERS_MAX)),
    "commcheck_rdma_size": integer(perftest_cmd.SIZE_MIN, perftest_cmd.SIZE_MAX, zero="perftest's default"),
    "commcheck_rdma_all_sizes": _described(_rdma_all_sizes, "true only with duration 0 and no size"),
    "commcheck_rdma_qps": integer(perftest_cmd.QPS_MIN, perftest_cmd.QPS_MAX, zero="perftest's default"),
    "commcheck_rdma_bidirectional": boolean(),
    "commcheck_rdma_rdma_cm": boolean(),
    "commcheck_rdma_mtu": _described(_rdma_mtu, "0 or %s" % _words(perftest_cmd.MTUS)),
    "commcheck_rdma_use_cuda": integer(-1, perftest_cmd.GPU_MAX),
    "commcheck_rdma_extra_args": _extra_args(perftest_cmd.check_extra_args),
    "commcheck_rdma_timeout": _described(_rdma_timeout, "0 to %d, longer than the duration" % TIMEOUT_MAX),
    "commcheck_rdma_connect_retries": integer(0, 100000),
    "commcheck_rdma_base_port": integer(PORT_LOW, PORT_HIGH),
    "commcheck_expected_gbps": _GBPS,
    "commcheck_outlier_z": _OUTLIER_Z,
    "commcheck_outlier_min_rel": _OUTLIER_REL,
    "commcheck_cpu_governor": _described(_governor, "a cpufreq governor name, or ''"),
    "commcheck_retest_repeats": integer(0, 100),
    "commcheck_retest_partners": boolean(),
    "commcheck_retest_verdicts": by_spec(),
    "commcheck_retest_max": integer(0, 100000),
    "commcheck_retest_per_host": integer(0, 10000),
    "commcheck_roce_preflight": boolean(),
    "commcheck_rdma_subnet": _cidr(ipv4_only=False),
    "commcheck_rdma_counters": boolean(),
    "commcheck_counter_trend_runs": integer(0, 1000),
    "commcheck_numa_pin": by_spec(),
    "commcheck_gpu_select": by_spec(),
    "commcheck_efficiency": _described(_efficiency, "op: fraction above 0, at most 1"),
    "commcheck_thresholds_history": boolean(),
    "commcheck_history_runs": integer(1, 1000),
    "commcheck_history_threshold": fraction(),
    "commcheck_address": host(),
    # collective
    "commcheck_collective_ops": _described(_collective_ops, "collectives the library has"),
    "commcheck_collective_mode": by_spec(),
    "commcheck_collective_hosts": hosts(),
    "commcheck_collective_pair_pattern": by_spec(),
    "commcheck_collective_gpus_per_process": integer(1, 64),
    "commcheck_collective_min_bytes": _described(_size, "1 byte to 1T (K, M, G), at most max_bytes"),
    "commcheck_collective_max_bytes": _described(_size, "1 byte to 1T (K, M, G)"),
    "commcheck_collective_step_factor": integer(2, 1024),
    "commcheck_collective_iterations": integer(1, 1000000),
    "commcheck_collective_warmup_iterations": integer(0, 1000000),
    "commcheck_collective_check": integer(0, 1000),
    "commcheck_collective_datatype": _described(_datatype, "a datatype of the library, or ''"),
    "commcheck_collective_reduce_op": _described(_reduce_op, "a reduction of the library"),
    "commcheck_collective_env": _described(_collective_env, "NCCL_*, HCCL_*, UCX_*, ... names, one-line values"),
    "commcheck_mpi_mca": _described(_mca, "MCA parameter names, one-line values"),
    "commcheck_mpi_ssh_config": _described(_ssh_config, "an absolute path without spaces, or ''"),
    "commcheck_collective_launcher": by_spec(),
    "commcheck_collective_mpirun": binary(),
    "commcheck_collective_allow_run_as_root": boolean(),
    "commcheck_collective_binary_dir": path(empty=True),
    "commcheck_collective_json_output": by_spec(),
    "commcheck_collective_timeout": integer(1, 7 * 24 * 3600),
    "commcheck_collective_expected_busbw_gbs": _GBPS,
    "commcheck_collective_node_expected_busbw_gbs": _GBPS,
    "commcheck_collective_nic_rates_gbps": _described(_rates, "link rates above 0 Gb/s"),
    "commcheck_collective_link_efficiency": fraction(),
    "commcheck_collective_min_fraction": fraction(),
    "commcheck_collective_busbw_metric": by_spec(),
    "commcheck_collective_ib_expected": boolean(),
    "commcheck_collective_bisect": boolean(),
    "commcheck_collective_bisect_max_runs": integer(1, 1000, zero="2 x hosts + 3"),
    # tcp_perf
    "commcheck_tcp_hosts": hosts(),
    "commcheck_tcp_pattern": by_spec(),
    "commcheck_tcp_strategy": by_spec(),
    "commcheck_tcp_background": by_spec(),
    "commcheck_tcp_pairs": pairs(),
    "commcheck_tcp_center": host(empty=True),
    "commcheck_tcp_duration": integer(1, iperf3_cmd.DURATION_MAX),
    "commcheck_tcp_parallel": integer(1, iperf3_cmd.PARALLEL_MAX),
    "commcheck_tcp_reverse": boolean(),
    "commcheck_tcp_bidirectional": _described(_tcp_bidirectional, "not with reverse"),
    "commcheck_tcp_omit": integer(0, 600),
    "commcheck_tcp_extra_args": _extra_args(_iperf3_extra_args),
    "commcheck_tcp_timeout": _described(_tcp_timeout, "0 to %d, longer than duration + omit" % TIMEOUT_MAX),
    "commcheck_tcp_connect_retries": integer(0, 100000),
    "commcheck_tcp_base_port": integer(PORT_LOW, PORT_HIGH),
    "commcheck_tcp_expected_gbps": _GBPS,
    "commcheck_tcp_address": host(),
    # report
    "commcheck_run_records": by_spec("records the check roles publish"),
    "commcheck_report_records": _described(_records, "check records"),
    "commcheck_run_id": _run_id(),
    "commcheck_report_formats": by_spec(),
    "commcheck_history_dir": path(absolute=False, empty=True),
    "commcheck_report_compare": boolean(),
    "commcheck_baseline_runs": integer(1, 1000),
    "commcheck_baseline_run": _run_id(),
    "commcheck_baseline_max_age": _described(_age, "an age (90d, 12h) or a time, or ''"),
    "commcheck_baseline_min_runs": integer(1, 1000),
    "commcheck_baseline_ignore_params": names("word"),
    "commcheck_regression_threshold": number(0, 10),
    "commcheck_regression_thresholds": _described(_thresholds, "metric: 0 to 10"),
    "commcheck_report_from_history": _run_id(allow_last=True),
    "commcheck_report_junit_regression_fails": boolean(),
    "commcheck_report_publish_regressions": boolean(),
    "commcheck_report_fail_on": by_spec(),
    # k8s_pods
    "commcheck_k8s_nodes": _k8s("nodes"),
    "commcheck_k8s_node_selector": _k8s("node_selector"),
    "commcheck_k8s_namespace": _k8s("namespace"),
    "commcheck_k8s_image": _described(_k8s_image, "an image reference, or ''"),
    "commcheck_k8s_image_pull_policy": by_spec(),
    "commcheck_k8s_image_pull_secrets": names("k8s_name"),
    "commcheck_k8s_command": _described(_k8s_command, "a program and its arguments"),
    "commcheck_k8s_resources": _k8s("resources"),
    "commcheck_k8s_gpus": integer(0, 1024),
    "commcheck_k8s_gpu_resource": _described(
        lambda label, value, ctx: _k8s("resources")(label, {value: 1}, ctx), "an extended resource name"),
    "commcheck_k8s_networks": _k8s("networks"),
    "commcheck_k8s_host_network": boolean(),
    "commcheck_k8s_tolerations": _described(_tolerations, "Kubernetes tolerations"),
    "commcheck_k8s_shm_size": _k8s("shm_size"),
    "commcheck_k8s_capabilities": _k8s("capabilities"),
    "commcheck_k8s_privileged": boolean(),
    "commcheck_k8s_labels": _k8s("labels"),
    "commcheck_k8s_annotations": _described(_annotations, "qualified keys, one-line values"),
    "commcheck_k8s_service_account": name("k8s_name", empty=True),
    "commcheck_k8s_kubeconfig": _described(_kubeconfig, "a path, or ''"),
    "commcheck_k8s_context": name("k8s_context", empty=True),
    "commcheck_k8s_kubectl_binary": binary(empty=True),
    "commcheck_k8s_run_id": _k8s("run_id"),
    "commcheck_k8s_name_prefix": _k8s("name_prefix"),
    "commcheck_k8s_wait_timeout": integer(1, TIMEOUT_MAX),
    "commcheck_k8s_active_deadline_seconds": integer(1, 366 * 86400),
    "commcheck_k8s_keep_pods": boolean(),
    "commcheck_k8s_group": _described(_group, "an inventory group name"),
    "commcheck_k8s_host_name": by_spec(),
    "commcheck_k8s_pod_vars": _described(_variables, "variables, each obeying its own rule"),
    "commcheck_k8s_node_vars": _described(_node_variables, "node: variables"),
    "commcheck_k8s_mpi_agent": boolean(),
    "commcheck_k8s_mpi_agent_dir": _described(_agent_dir, "an absolute directory"),
    "commcheck_k8s_mpi_kubectl": _described(_agent_kubectl, "an absolute path or a command name"),
    "commcheck_k8s_mpi_mca": _described(_mca, "MCA parameter names, one-line values"),
    "commcheck_k8s_render_job": by_spec(),
    "commcheck_k8s_render_rbac": boolean(),
    "commcheck_k8s_render_only": boolean(),
    "commcheck_k8s_manifest_dir": path(absolute=False),
    "commcheck_k8s_job_collective": _described(_job_collective, "the collective module's options"),
    # quarantine
    "commcheck_quarantine": boolean(),
    "commcheck_quarantine_backend": by_spec(),
    "commcheck_quarantine_dry_run": boolean(),
    "commcheck_quarantine_state": by_spec(),
    "commcheck_quarantine_components": by_spec(),
    "commcheck_quarantine_hosts": _described(_quarantine_hosts, "inventory hosts that are node names"),
    "commcheck_quarantine_reason": text(quarantine.MAX_REASON, empty=False),
    "commcheck_quarantine_findings": _described(_records, "finding records"),
    "commcheck_quarantine_node_names": _described(_node_names, "host: node name"),
    "commcheck_quarantine_taint": boolean(),
    "commcheck_quarantine_taint_effect": by_spec(),
    "commcheck_quarantine_kubeconfig": _described(_kubeconfig, "a path, or ''"),
    "commcheck_quarantine_context": name("k8s_context", empty=True),
}


# ---------------------------------------------------------------- checking

def merge_specs(role_specs, roles, entry_point="main"):
    """{variable: spec} of the roles' entry point, in role order.

    ``role_specs``: {role: the ``argument_specs`` mapping of its
    meta/argument_specs.yml}. A variable several roles share takes the spec
    of the first role that has it (the one-click role comes first).
    """
    merged = {}
    for role in roles:
        entry = (role_specs.get(role) or {}).get(entry_point) or {}
        for option, spec in (entry.get("options") or {}).items():
            merged.setdefault(option, spec or {})
    return merged


def _type_text(spec):
    kind = spec.get("type", "str")
    if kind == "list" and spec.get("elements"):
        return "a list of %s" % _ELEMENT_WORDS.get(spec["elements"], spec["elements"])
    return _TYPE_WORDS.get(kind, "a %s" % kind)


def check_type(option, spec, value, label=None):
    """(converted value, None) or (None, problem) by the spec's type, elements and choices."""
    label = label or option
    plain = dict((k, spec[k]) for k in _SPEC_KEYS if spec.get(k) is not None)
    plain.setdefault("type", "str")
    if plain["type"] == "list" and isinstance(value, str):
        # comma-separated text (AWX surveys), read as the roles read it: items trimmed, empty ones dropped
        value = [item.strip() for item in value.split(",") if item.strip()]
    result = ArgumentSpecValidator({option: plain}).validate({option: value})
    if isinstance(value, bool) and plain["type"] in ("int", "float"):
        # Ansible would read true as 1: a number option never takes a boolean
        return None, "%s: %s is not %s" % (label, show(value), _type_text(plain))
    if not result.error_messages:
        return result.validated_parameters.get(option), None
    choices = plain.get("choices")
    if choices and all(isinstance(e, ArgumentValueError) for e in result.errors):
        converted = result.validated_parameters.get(option)
        items = converted if isinstance(converted, list) else [converted]
        bad = [i for i in items if i not in choices] or items
        shown = show(bad[0] if len(bad) == 1 else bad)
        return None, "%s: %s is not one of %s" % (label, shown, _words(repr(c) if c == "" else c for c in choices))
    return None, "%s: %s is not %s" % (label, show(value), _type_text(plain))


def _null_allowed(spec):
    return spec.get("default") is None and not spec.get("required")


def _typed(option, spec, value, label=None, memo=None):
    """(converted, problem) of the type check, remembered in ``memo`` by the value's repr."""
    label = label or option
    if value is None:
        if _null_allowed(spec):
            return None, None
        return None, "%s: null is not allowed (leave it unset for the default, %s)" % (label, show(spec.get("default")))
    if memo is None:
        return check_type(option, spec, value, label)
    key = (option, label, type(value).__name__, repr(value))
    if key not in memo:
        memo[key] = check_type(option, spec, value, label)
    return memo[key]


def _rule_problem(option, converted, value, ctx, label=None):
    """The problem the rule of ``option`` finds with a converted value, or None.

    A variable without a rule gets the type and choices check only (the
    unit tests keep every variable of every spec in ``RULES``).
    """
    rule = RULES.get(option)
    if rule is None or converted is None:
        return None
    try:
        rule(label or option, converted, ctx)
    except OptionError as exc:
        return clip(str(exc), value)
    return None


def check_option(option, spec, value, ctx, label=None):
    """The problem with one value (type, choices, then its rule), or None."""
    converted, problem = _typed(option, spec, value, label)
    return problem or _rule_problem(option, converted, value, ctx, label)


def effective_values(spec, values):
    """The values a role sees: those given, else the spec's defaults."""
    out = {}
    for option, item in spec.items():
        if option in values:
            out[option] = values[option]
        elif "default" in item:
            out[option] = item["default"]
    return out


def check_values(spec, values, known_hosts=(), all_specs=None, memo=None):
    """The problems ("<option>: <why>") with one host's values; [] when all are good.

    ``spec``: the merged argument spec of the roles checked; ``values``: the
    variables given (the others take their spec default, checked as well);
    ``known_hosts``: the inventory's host names; ``all_specs``: every role
    variable's spec (for variables that hold variables; default ``spec``);
    ``memo``: a dict kept between calls for many hosts (type checks of equal
    values are done once).
    """
    effective = effective_values(spec, values)
    typed = dict((option, _typed(option, spec[option], value, memo=memo)) for option, value in effective.items())
    converted = dict((option, good) for option, (good, problem) in typed.items() if problem is None)
    ctx = Context(converted, known_hosts, all_specs if all_specs is not None else spec)
    problems = []
    for option, value in effective.items():
        good, problem = typed[option]
        problem = problem or _rule_problem(option, good, value, ctx)
        if problem:
            problems.append(problem)
    return problems


def merge_host_problems(problems_by_host, hosts_order, limit=5):
    """One list of problems for all hosts: a problem not every host has names its hosts.

    ``problems_by_host``: {host: [problem, ...]}; ``hosts_order``: every
    host checked, in play order.
    """
    where = {}
    order = []
    for host_name in hosts_order:
        for problem in problems_by_host.get(host_name) or []:
            if problem not in where:
                where[problem] = []
                order.append(problem)
            where[problem].append(host_name)
    out = []
    for problem in order:
        on = where[problem]
        if len(on) == len(hosts_order):
            out.append(problem)
            continue
        shown = _words(on[:limit]) + (" and %d more" % (len(on) - limit) if len(on) > limit else "")
        out.append("%s (on %s)" % (problem, shown))
    return out


def message(problems):
    """The one error message of a failed check."""
    return MESSAGE_PREFIX + "; ".join(problems)
