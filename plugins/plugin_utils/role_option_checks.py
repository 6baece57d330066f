# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The rule of each role variable that needs more than a generic rule (pure).

Where a module-level check exists (perftest_cmd, iperf3_cmd, mpi_cmd,
k8s_pods, k8s_jobs, kubexec, quarantine, transport, history, discovery.gid)
the rule calls it, so a role refuses exactly what the module would; the rest
are built from ``option_rules``. ``role_options.RULES`` maps each variable to
one of these or to a generic rule of ``role_option_kit``.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import ipaddress
import re
from ansible_collections.clusterops.commcheck.plugins.module_utils.options import option_rules as rules
from ansible_collections.clusterops.commcheck.plugins.module_utils.options.option_rules import OptionError, show
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import cpu_governor
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import history
from ansible_collections.clusterops.commcheck.plugins.module_utils.kubernetes import k8s_jobs
from ansible_collections.clusterops.commcheck.plugins.module_utils.kubernetes import k8s_pods
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import kubexec
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import mpi_cmd
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import perftest_cmd
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import srun_cmd
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import quarantine
from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery import gid
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import transport
from ansible_collections.clusterops.commcheck.plugins.plugin_utils.role_option_kit import (
    boolean, call_check, check_host, clip, described, fail, hosts, integer, items, rules_check, words)

PORT_LOW, PORT_HIGH = 1024, 65000        # the round plan adds one port per rail and test step
RATE_MAX_GBPS = 100000.0                 # 100 Tb/s: far above any link, below anything absurd
TIMEOUT_MAX = 86400
RUN_ID = history.RUN_ID_PATTERN
ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")
VARIABLE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")
DEVICE_KEYS = ("device", "name", "port", "ib_port", "address", "gid_index", "rate_gbps")
KUBECTL_KEYS = ("namespace", "pod", "container", "context", "kubeconfig", "binary")
TOLERATION_KEYS = ("key", "operator", "value", "effect", "tolerationSeconds")
TOLERATION_OPERATORS = ("Exists", "Equal")
TOLERATION_EFFECTS = ("",) + quarantine.TAINT_EFFECTS


# ---------------------------------------------------------------- one-click and RDMA rules

def oneclick_checks(label, value, ctx):
    if not value:
        fail(label, value, "is empty: name at least one of discover, rdma, collective (or nccl, hccl), tcp")
    if "nccl" in value and "hccl" in value:
        fail(label, value, "names both nccl and hccl; one play runs one of them")
    library = ctx.get("commcheck_collective_library")
    for named in ("nccl", "hccl"):
        # the check names its library: a library set otherwise would silently give way to it
        if named in value and library in ("nccl", "hccl") and library != named:
            fail(label, value, "runs the collective with %s, but commcheck_collective_library is %r: set one of them"
                 % (named, library))


def device_port(label, value, port):
    if isinstance(port, bool) or not re.match(r"^\d{1,3}$", str(port)) or not 1 <= int(port) <= 255:
        fail(label, value, "has a port that is not 1 to 255")


def device_text(label, item):
    if not isinstance(item, str):
        fail(label, item, "is neither a device name (mlx5_0, mlx5_0:1) nor a dict with 'device'")
    parts = item.split(":")
    if len(parts) > 2 or not parts[0] or not rules.NAME_KINDS["rdma_device"][0].match(parts[0]) \
            or parts[0].startswith("-"):
        fail(label, item, "is not an RDMA device name (mlx5_0) or device:port (mlx5_0:1)")
    if len(parts) == 2:
        device_port(label, item, parts[1])


def device_dict(label, item, ctx):
    unknown = sorted(str(k) for k in item if k not in DEVICE_KEYS)
    if unknown:
        fail(label, item, "has unknown keys %s (known: %s)" % (words(unknown), words(DEVICE_KEYS)))
    device = item.get("device", item.get("name"))
    if not isinstance(device, str) or ":" in device:
        fail(label, item, "needs 'device', an RDMA device name like mlx5_0")
    device_text(label, device)
    for key in ("port", "ib_port"):
        if key in item:
            device_port(label, item, item[key])
    if item.get("address") not in (None, ""):
        check_host(label + " address", item["address"], ctx)
    if item.get("gid_index") not in (None, ""):
        call_check(label, item, perftest_cmd.parse_gid_index, item["gid_index"])
    if item.get("rate_gbps") is not None:
        rules_check(label + " rate_gbps", rules.check_number, item["rate_gbps"], 1, RATE_MAX_GBPS)


def devices(label, value, ctx):
    for where, item in items(label, value):
        if isinstance(item, dict):
            device_dict(where, item, ctx)
        else:
            device_text(where, item)


def environment(label, value, ctx):
    """NAME: value pairs for a process environment."""
    for key, item in value.items():
        if not isinstance(key, str) or not ENV_NAME.match(key):
            fail(label, key, "is not an environment variable name (letters, digits, _)")
        if isinstance(item, bool) or not isinstance(item, (str, int, float)):
            fail(label, item, "is not a value for %s (a string or a number)" % key)
        rules_check("%s.%s" % (label, key), rules.check_text, str(item))


def governor(label, value, ctx):
    if value == "":
        return
    rules_check(label, rules.check_text, value, 32)
    if not cpu_governor.GOVERNOR_NAME.match(value):
        fail(label, value, "is not a cpufreq governor name (performance, powersave, ... or '' to leave it)")


def extra_args(check):
    """Extra arguments of a tool, read with the tool's own option grammar (``check``)."""
    def rule(label, value, ctx):
        call_check(label, value, check, value)
    return described(rule, "separate arguments the tool knows, none the role sets itself")


def cidr(ipv4_only):
    def rule(label, value, ctx):
        if value in (None, ""):
            return
        rules_check(label, rules.check_text, value, 64)
        if ipv4_only:
            error = gid.subnet_error(value)
            if error:
                raise OptionError(clip("%s: %s" % (label, error), value))
            return
        try:
            ipaddress.ip_network(value, strict=False)
        except ValueError:
            fail(label, value, "is not a network in CIDR form (10.0.0.0/24, fd00::/64)")
    return described(rule, "a network in CIDR form" + (" (IPv4)" if ipv4_only else "") + ", or ''")


def efficiency(label, value, ctx):
    """op -> fraction of the link rate."""
    for key, item in value.items():
        rules_check(label, rules.check_name, str(key), "word")
        share = rules_check("%s.%s" % (label, key), rules.check_number, item, 0, 1)
        if share <= 0:
            fail("%s.%s" % (label, key), item, "must be above 0 (at most 1)")


def rdma_timeout(label, value, ctx):
    integer(0, TIMEOUT_MAX, zero="duration + 30 s")(label, value, ctx)
    duration = ctx.get("commcheck_rdma_duration")
    if value and isinstance(duration, int) and duration > 0 and value <= duration:
        fail(label, value, "must be longer than commcheck_rdma_duration (%d s)" % duration)


def rdma_iterations(label, value, ctx):
    integer(perftest_cmd.ITERS_MIN, perftest_cmd.ITERS_MAX, zero="perftest's default")(label, value, ctx)
    duration = ctx.get("commcheck_rdma_duration")
    if value and isinstance(duration, int) and duration > 0:
        fail(label, value, "applies only with commcheck_rdma_duration 0 (perftest runs by time or by count)")


def rdma_all_sizes(label, value, ctx):
    boolean()(label, value, ctx)
    if value and ctx.get("commcheck_rdma_duration"):
        fail(label, value, "needs commcheck_rdma_duration 0 (perftest runs one size in duration mode)")
    if value and ctx.get("commcheck_rdma_size"):
        fail(label, value, "and commcheck_rdma_size exclude each other")


def rdma_mtu(label, value, ctx):
    if isinstance(value, bool) or value not in (0,) + perftest_cmd.MTUS:
        fail(label, value, "must be 0 (the port's) or one of %s" % words(perftest_cmd.MTUS))


# ---------------------------------------------------------------- collective rules

def collective_library(ctx):
    """The collective library of this run, or None when it is not fixed yet (auto)."""
    checks = ctx.get("commcheck_checks") or []
    for library in mpi_cmd.LIBRARIES:
        if library in checks:
            return library
    library = ctx.get("commcheck_collective_library")
    return library if library in mpi_cmd.LIBRARIES else None


def collective_ops(label, value, ctx):
    if not value:
        fail(label, value, "must name at least one collective")
    library = collective_library(ctx)
    for where, op in items(label, value):
        if op not in mpi_cmd.OPERATIONS:
            fail(where, op, "is not a collective (known: %s)" % words(mpi_cmd.OPERATIONS))
        if library is not None:
            call_check(where, op, mpi_cmd.binary_name, library, op)


def size(label, value, ctx):
    if isinstance(value, str):
        rules_check(label, rules.check_text, value, 64)
    size = call_check(label, value, mpi_cmd.parse_size, value, "the value")
    if label == "commcheck_collective_min_bytes":
        largest = ctx.get("commcheck_collective_max_bytes")
        try:
            largest = mpi_cmd.parse_size(largest) if largest is not None else None
        except ValueError:
            largest = None
        if largest is not None and size > largest:
            fail(label, value, "is larger than commcheck_collective_max_bytes (%s)"
                 % show(ctx.get("commcheck_collective_max_bytes")))
    return size


def datatype(label, value, ctx):
    if value == "":
        return
    library = collective_library(ctx)
    if library:
        known = mpi_cmd.DATATYPES[library]
    else:
        known = sorted(set(mpi_cmd.DATATYPES["nccl"]) | set(mpi_cmd.DATATYPES["hccl"]))
    if value not in known:
        fail(label, value, "is not a%s datatype (known: %s)" % (" " + library if library else "", words(known)))


def reduce_op(label, value, ctx):
    library = collective_library(ctx)
    known = mpi_cmd.REDUCE_OPS[library] if library else mpi_cmd.REDUCE_OPS["nccl"]
    if value not in known:
        fail(label, value, "is not a reduction (known: %s)" % words(known))


def collective_env(label, value, ctx):
    call_check(label, value, mpi_cmd.check_env, value)


def mca(label, value, ctx):
    call_check(label, value, mpi_cmd.check_mca, value)


def collective_launcher_program(label, value, ctx):
    """mpirun's file name is a launcher's (only the form: the program runs on a host); with launcher srun the
    launcher's rule says whether it is srun's, naming the launcher that asks for it."""
    if ctx.get("commcheck_collective_launcher") == "srun":
        rules_check(label, rules.check_binary, value, None, False)
    else:
        rules_check(label, rules.check_program, value, "mpirun", None, False)


def collective_launcher(label, value, ctx):
    """srun is started as commcheck_collective_mpirun: that must name srun."""
    program = ctx.get("commcheck_collective_mpirun", "mpirun")
    if value == "srun" and isinstance(program, str):
        try:
            srun_cmd.check_srun(program, "commcheck_collective_mpirun")
        except OptionError as exc:
            fail(label, value, "starts its steps with commcheck_collective_mpirun, which must name srun: %s" % exc)


def slurm_job_id(label, value, ctx):
    if value == "":
        return
    if ctx.get("commcheck_collective_launcher") != "srun":
        fail(label, value, "is srun's allocation: it needs commcheck_collective_launcher=srun")
    call_check(label, value, srun_cmd.check_job_id, value, label)


def ssh_config(label, value, ctx):
    if value == "":
        return
    call_check(label, value, mpi_cmd.launch_mca, None, value)


def rates(label, value, ctx):
    for where, item in items(label, value):
        if rules_check(where, rules.check_number, item, 0, RATE_MAX_GBPS) <= 0:
            fail(where, item, "must be above 0 Gb/s")


# ---------------------------------------------------------------- TCP rules

def tcp_timeout(label, value, ctx):
    integer(0, TIMEOUT_MAX, zero="duration + omit + 30 s")(label, value, ctx)
    duration, omit = ctx.get("commcheck_tcp_duration"), ctx.get("commcheck_tcp_omit") or 0
    if value and isinstance(duration, int) and isinstance(omit, int) and value <= duration + omit:
        fail(label, value, "must be longer than commcheck_tcp_duration + commcheck_tcp_omit (%d s)"
             % (duration + omit))


def tcp_bidirectional(label, value, ctx):
    boolean()(label, value, ctx)
    if value and ctx.get("commcheck_tcp_reverse"):
        fail(label, value, "and commcheck_tcp_reverse exclude each other")


# ---------------------------------------------------------------- report rules

def run_id(allow_last=False):
    def rule(label, value, ctx):
        if value == "" or (allow_last and value == "last"):
            return
        rules_check(label, rules.check_text, value, 128)
        if not RUN_ID.match(value):
            fail(label, value, "is not a run id (letters, digits and _ . : + -, no '/', at most 128)")
    return described(rule, "a run id%s, or ''" % (", 'last'" if allow_last else ""))


def age(label, value, ctx):
    if value == "":
        return
    rules_check(label, rules.check_text, value, 64)
    call_check(label, value, history.parse_time, value)


def thresholds(label, value, ctx):
    """metric -> relative change."""
    for key, item in value.items():
        rules_check(label, rules.check_name, str(key), "word")
        rules_check("%s.%s" % (label, key), rules.check_number, item, 0, 10)


def records(label, value, ctx):
    if value is None:
        return
    call_check(label, value, history.normalize_records, value)


# ---------------------------------------------------------------- Kubernetes rules

def k8s(param):
    """A test-pod parameter, checked by ``k8s_pods.validate_params``."""
    def rule(label, value, ctx):
        if value in ("", None):
            return
        for where, item in [(label, value)] if isinstance(value, str) else \
                items(label, value) if isinstance(value, list) else []:
            rules_check(where, rules.check_not_flag, item)
        errors = k8s_pods.validate_params({"state": "absent", param: value})
        if errors:
            more = " (and %d more)" % (len(errors) - 1) if len(errors) > 1 else ""
            raise OptionError(clip("%s: %s%s" % (label, errors[0], more), value))
    return described(rule, "as the test_pods module's %s" % param)


def k8s_image(label, value, ctx):
    if value == "":
        return
    errors = k8s_pods.validate_params({"state": "present", "nodes": ["node"], "image": value})
    if errors:
        raise OptionError(clip("%s: %s" % (label, errors[0]), value))


def k8s_command(label, value, ctx):
    if not value:
        fail(label, value, "must name the program the container runs")
    rules_check(label + "[0]", rules.check_binary, value[0], None, False)
    for where, item in items(label, value)[1:]:
        rules_check(where, rules.check_text, item)
    k8s("command")(label, value, ctx)


def kubeconfig(label, value, ctx):
    """A kubeconfig's path (absolute, or ~/...; never quoted in a message): whether it is a readable kubeconfig
    is the module's check, on the host that runs kubectl."""
    if value in ("", None):
        return
    rules_check(label, rules.check_config_path, value, True, True)


def tolerations(label, value, ctx):
    for where, item in items(label, value):
        unknown = sorted(str(k) for k in item if k not in TOLERATION_KEYS)
        if unknown:
            fail(where, item, "has unknown keys %s (known: %s)" % (words(unknown), words(TOLERATION_KEYS)))
        if item.get("key") not in (None, ""):
            call_check(where, item, quarantine.check_key, item["key"], "toleration key")
        if item.get("operator") not in (None,) + TOLERATION_OPERATORS:
            fail(where, item, "has an operator that is not %s" % " or ".join(TOLERATION_OPERATORS))
        if item.get("effect") not in (None,) + TOLERATION_EFFECTS:
            fail(where, item, "has an effect that is not %s" % words(TOLERATION_EFFECTS[1:]))
        if item.get("value") is not None:
            rules_check(where, rules.check_name, str(item["value"]), "k8s_label_value")
        if item.get("tolerationSeconds") is not None:
            rules_check(where, rules.check_int, item["tolerationSeconds"], 0, 10 ** 9)


def annotations(label, value, ctx):
    for key, item in value.items():
        call_check(label, key, quarantine.check_key, key, "annotation key")
        rules_check("%s.%s" % (label, key), rules.check_text, str(item), 65536)


def host_variables(label, value, ctx):
    """Variables of a host: names, and the rule of every commcheck option among them."""
    for key, item in value.items():
        if not isinstance(key, str) or not VARIABLE_NAME.match(key):
            fail(label, key, "is not a variable name")
        spec = ctx.specs.get(key)
        if spec is not None:
            problem = ctx.check_option(key, spec, item, ctx, label="%s.%s" % (label, key))
            if problem:
                raise OptionError(problem)


def node_variables(label, value, ctx):
    for node, variables in value.items():
        rules_check(label, rules.check_name, str(node), "k8s_name")
        if not isinstance(variables, dict):
            fail("%s.%s" % (label, node), variables, "must be a dict of variables")
        host_variables("%s.%s" % (label, node), variables, ctx)


def group(label, value, ctx):
    if not isinstance(value, str) or not VARIABLE_NAME.match(value):
        fail(label, value, "is not an inventory group name (letters, digits, _)")


def agent_dir(label, value, ctx):
    call_check(label, value, kubexec.check_dir, value)


def agent_kubectl(label, value, ctx):
    call_check(label, value, kubexec.check_kubectl, value, label + ":")


def job_collective(label, value, ctx):
    if value:
        call_check(label, value, k8s_jobs.launcher_command, "mpijob", ["node"], value)


def run_job(label, value, ctx):
    """The job run is the one commcheck_k8s_render_job writes: it needs its kind."""
    if value is True and not ctx.get("commcheck_k8s_render_job"):
        fail(label, value, "runs the job commcheck_k8s_render_job writes: set that to mpijob or volcano")


def kubectl(label, value, ctx):
    """The kubectl transport's settings, checked as the modules check them, whatever the transport (a bad value
    is an error even while it is not used); the pod is needed with commcheck_transport=kubectl only."""
    unknown = sorted(str(k) for k in value if k not in KUBECTL_KEYS)
    if unknown:
        fail(label, value, "has unknown keys %s (known: %s)" % (words(unknown), words(KUBECTL_KEYS)))
    for key in KUBECTL_KEYS:
        if value.get(key) is not None and not isinstance(value[key], str):
            fail("%s.%s" % (label, key), value[key], "must be a string")
    used = (ctx.get("commcheck_transport") or "host") == "kubectl"
    if used and not value.get("pod"):
        fail(label, value, "needs a pod with commcheck_transport=kubectl (%s.pod)" % label)
    # the modules' own check, with the settings named as this option's keys (commcheck_kubectl.pod)
    error = transport.kubectl_options_error(value, transport="kubectl" if used else "host", label=label)
    if error:
        raise OptionError(clip(error, value))


# ---------------------------------------------------------------- quarantine rules

def node_name(backend):
    return quarantine.check_slurm_node if backend == "slurm" else quarantine.check_k8s_node


def node_names(label, value, ctx):
    check = node_name(ctx.get("commcheck_quarantine_backend"))
    for key, node in value.items():
        check_host(label, key, ctx)
        call_check("%s.%s" % (label, key), node, check, node)


def quarantine_hosts(label, value, ctx):
    hosts()(label, value, ctx)
    mapped = ctx.get("commcheck_quarantine_node_names") or {}
    check = node_name(ctx.get("commcheck_quarantine_backend"))
    for where, item in items(label, value):
        if item not in mapped:
            call_check(where, item, check, item)
