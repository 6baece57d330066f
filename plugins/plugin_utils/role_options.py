# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The rule every role variable obeys, checked once before anything runs (pure).

``RULES`` maps each variable of the roles' ``meta/argument_specs.yml`` to the
rule its value obeys beyond the type and choices the spec gives: ranges,
names, paths, binaries, sizes, extra arguments, hosts, environment and MCA
keys. Where a module-level check exists (perftest_cmd, iperf3_cmd, mpi_cmd,
k8s_pods, k8s_jobs, kubexec, quarantine, transport, history, discovery.gid)
the rule calls it; the rest are built from ``option_rules``. A rule never
restates the spec (type, choices, default): one that adds nothing is
``kit.by_spec()``. What a rule ``describes`` is the Allowed column of the
docs tools/gen_docs.py writes, so the docs say what the check enforces.

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

import math
import sys

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible.module_utils.errors import ArgumentValueError

from ansible_collections.clusterops.commcheck.plugins.module_utils.options import option_rules as rules
from ansible_collections.clusterops.commcheck.plugins.module_utils.options.option_rules import (
    OptionError, show, takes_as_text)
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import iperf3_cmd
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import perftest_cmd
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import run_lock
from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery import topology
from ansible_collections.clusterops.commcheck.plugins.module_utils.kubernetes import k8s_existing
from ansible_collections.clusterops.commcheck.plugins.module_utils.planning import gpudirect
from ansible_collections.clusterops.commcheck.plugins.module_utils.planning import leaf_schedule
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import slice_meeting
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import quarantine
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import quarantine_drain
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import retest_design
from ansible_collections.clusterops.commcheck.plugins.plugin_utils import role_option_checks as checks
from ansible_collections.clusterops.commcheck.plugins.plugin_utils import role_option_kit as kit
from ansible_collections.clusterops.commcheck.plugins.plugin_utils import reserve_option_checks as reserve_checks

# The roles with an argument spec, and those the one-click role runs (and so
# checks up front, with its own options first: a variable several roles
# share takes the type and choices of the first role that has it).
ROLES = ("commcheck", "discover", "rdma_perf", "collective", "tcp_perf", "report", "quarantine", "k8s_pods")
ONECLICK_ROLES = ("commcheck", "discover", "rdma_perf", "collective", "tcp_perf", "report", "quarantine")

MESSAGE_PREFIX = "Bad option(s), nothing was run: "

_TYPE_WORDS = {
    "int": "an integer", "float": "a number", "bool": "a boolean (true or false)", "str": "a string",
    "path": "a path", "list": "a list", "dict": "a dict (NAME: value)", "raw": "a value",
}
_ELEMENT_WORDS = {
    "int": "integers", "float": "numbers", "bool": "booleans", "str": "strings", "path": "paths",
    "list": "lists", "dict": "dicts", "raw": "values",
}
_SPEC_KEYS = ("type", "elements", "choices")
_TEXT_TYPES = ("str", "path")
# Beyond this an integer has no float (Ansible's float conversion raises).
_FLOAT_MAX = sys.float_info.max


# ---------------------------------------------------------------- the table

_PERCENT = kit.number(0, 1)
_OUTLIER_Z = kit.number(0, 1000, above=True)
_OUTLIER_REL = kit.number(0, 10)
_GBPS = kit.number(0, checks.RATE_MAX_GBPS)

RULES = {
    # one click (commcheck)
    "commcheck_checks": kit.described(checks.oneclick_checks, "at least one check; not both nccl and hccl"),
    "commcheck_pattern": kit.by_spec(),
    "commcheck_devices": kit.described(checks.devices, "RDMA device names, device:port or dicts with device"),
    "commcheck_ib_port": kit.integer(1, 255),
    "commcheck_collective_library": kit.by_spec(),
    "commcheck_gpus_per_node": kit.integer(1, 1024),
    "commcheck_require_accelerators": kit.by_spec(),
    "commcheck_min_fraction": kit.fraction(),
    "commcheck_fleet_min_fraction": kit.fraction(),
    "commcheck_report_dir": kit.path(absolute=False),
    # discover
    "commcheck_sysfs_root": kit.path(),
    "commcheck_expected_rate_gbps": kit.number(0, checks.RATE_MAX_GBPS, above=True),
    "commcheck_subnet": checks.cidr(ipv4_only=True),
    "commcheck_ib_gid_index": kit.integer(perftest_cmd.GID_MIN, perftest_cmd.GID_MAX),
    "commcheck_discover_tools": kit.by_spec(),
    "commcheck_discover_topology_tools": kit.by_spec(),
    "commcheck_discover_address_source": kit.by_spec(),
    "commcheck_fail_on": kit.by_spec(),
    "commcheck_discover_min_severity": kit.by_spec(),
    "commcheck_discover_publish": kit.by_spec(),
    "commcheck_transport": kit.by_spec(),
    "commcheck_kubectl": kit.names_files(kit.described(
        checks.kubectl, "namespace, pod, container, context, kubeconfig, binary"), "kubectl and its kubeconfig"),
    "commcheck_environment": kit.names_files(kit.described(checks.environment, "NAME: one-line value"),
                                             "the environment (PATH)"),
    # rdma_perf
    "commcheck_rdma_hosts": kit.hosts(),
    "commcheck_rdma_pattern": kit.by_spec(),
    "commcheck_rdma_oversubscription": kit.number(1, leaf_schedule.OVERSUBSCRIPTION_MAX),
    "commcheck_rdma_loopback": kit.by_spec(),
    "commcheck_rdma_strategy": kit.by_spec(),
    "commcheck_rdma_background": kit.by_spec(),
    "commcheck_rdma_pairs": kit.pairs(),
    "commcheck_rdma_center": kit.host(empty=True),
    "commcheck_rdma_rail_numbers": kit.described(
        lambda label, value, ctx: [kit.rules_check(where, rules.check_int, v, 0, 1023)
                                   for where, v in kit.items(label, value)], "0 to 1023"),
    "commcheck_rdma_ops": kit.choices_not_empty(),
    "commcheck_rdma_metrics": kit.choices_not_empty(),
    "commcheck_rdma_duration": kit.integer(1, perftest_cmd.DURATION_MAX, zero="run by iterations"),
    "commcheck_rdma_iterations": kit.described(checks.rdma_iterations, "0, or %d to %d with duration 0" % (
        perftest_cmd.ITERS_MIN, perftest_cmd.ITERS_MAX)),
    "commcheck_rdma_lat_iterations": kit.integer(perftest_cmd.ITERS_MIN, perftest_cmd.ITERS_MAX,
                                                 zero="run like the bandwidth tests"),
    "commcheck_rdma_size": kit.integer(perftest_cmd.SIZE_MIN, perftest_cmd.SIZE_MAX, zero="perftest's default"),
    "commcheck_rdma_all_sizes": kit.described(checks.rdma_all_sizes, "true only with duration 0 and no size"),
    "commcheck_rdma_qps": kit.integer(perftest_cmd.QPS_MIN, perftest_cmd.QPS_MAX, zero="perftest's default"),
    "commcheck_rdma_bidirectional": kit.by_spec(),
    "commcheck_rdma_rdma_cm": kit.by_spec(),
    "commcheck_rdma_mtu": kit.described(checks.rdma_mtu, "0 or %s" % kit.words(perftest_cmd.MTUS)),
    "commcheck_rdma_use_cuda": kit.integer(-1, perftest_cmd.GPU_MAX),
    "commcheck_rdma_extra_args": checks.extra_args(perftest_cmd.check_extra_args),
    "commcheck_rdma_timeout": kit.described(
        checks.rdma_timeout, "0 to %d, longer than the duration" % checks.TIMEOUT_MAX),
    "commcheck_rdma_connect_retries": kit.integer(0, 100000),
    "commcheck_rdma_base_port": kit.integer(checks.PORT_LOW, checks.PORT_HIGH),
    "commcheck_expected_gbps": _GBPS,
    "commcheck_outlier_z": _OUTLIER_Z,
    "commcheck_outlier_min_rel": _OUTLIER_REL,
    "commcheck_cpu_governor": kit.described(checks.governor, "a cpufreq governor name, or ''"),
    "commcheck_lock": kit.by_spec(),
    "commcheck_lock_dir": kit.path(),
    "commcheck_lock_lease": kit.integer(*run_lock.LEASE_RANGE),
    "commcheck_lock_leftovers_wait": kit.integer(*run_lock.LEFTOVERS_WAIT_RANGE),
    "commcheck_reserve_nodes": kit.by_spec(),
    "commcheck_reserve_key": reserve_checks.KEY,
    "commcheck_reserve_node_names": reserve_checks.NODE_NAMES,
    "commcheck_reserve_kubectl": kit.binary(program="kubectl"),
    "commcheck_reserve_kubeconfig": kit.names_files(kit.described(
        checks.kubeconfig, "an absolute path or ~/..., or ''"), "a kubeconfig"),
    "commcheck_reserve_context": kit.name("k8s_context", empty=True),
    "commcheck_reserve_state_dir": kit.path(empty=True),
    "commcheck_retest_repeats": kit.integer(0, 100),
    "commcheck_retest_partners": kit.by_spec(),
    "commcheck_retest_verdicts": kit.by_spec(),
    "commcheck_retest_max": kit.integer(0, 100000),
    "commcheck_retest_per_host": kit.integer(0, 10000),
    "commcheck_retest_rounds": kit.integer(0, retest_design.MAX_ROUNDS),
    "commcheck_roce_preflight": kit.by_spec(),
    "commcheck_rdma_subnet": checks.cidr(ipv4_only=False),
    "commcheck_rdma_counters": kit.by_spec(),
    "commcheck_counter_trend_runs": kit.integer(0, 1000),
    "commcheck_numa_pin": kit.by_spec(),
    "commcheck_gpu_select": kit.by_spec(),
    "commcheck_rdma_gpudirect": kit.described(
        lambda label, value, ctx: kit.call_check(label, value, gpudirect.normalize_setting, value),
        "auto, true or false"),
    "commcheck_rdma_gpudirect_dmabuf": kit.by_spec(),
    "commcheck_rdma_gpudirect_pairs": kit.by_spec(),
    "commcheck_rdma_gpudirect_min_ratio": kit.fraction(),
    "commcheck_efficiency": kit.described(checks.efficiency, "op: fraction above 0, at most 1"),
    "commcheck_topology": kit.described(
        lambda label, value, ctx: kit.call_check(label, value, topology.check_topology, value, label),
        "rail number or RDMA device: {leaf: switch name, port: its port}"),
    "commcheck_thresholds_history": kit.by_spec(),
    "commcheck_history_runs": kit.integer(1, 1000),
    "commcheck_history_threshold": kit.fraction(),
    "commcheck_address": kit.host(),
    "commcheck_slices": kit.integer(1, slice_meeting.SLICES_MAX),
    "commcheck_slice_dir": kit.path(empty=True),
    "commcheck_slice_wait": kit.integer(1, slice_meeting.WAIT_MAX),
    # collective
    "commcheck_collective_ops": kit.described(checks.collective_ops, "collectives the library has"),
    "commcheck_collective_mode": kit.by_spec(),
    "commcheck_collective_hosts": kit.hosts(),
    "commcheck_collective_pair_pattern": kit.by_spec(),
    "commcheck_collective_gpus_per_process": kit.integer(1, 64),
    "commcheck_collective_min_bytes": kit.described(checks.size, "1 byte to 1T (K, M, G), at most max_bytes"),
    "commcheck_collective_max_bytes": kit.described(checks.size, "1 byte to 1T (K, M, G)"),
    "commcheck_collective_step_factor": kit.integer(2, 1024),
    "commcheck_collective_iterations": kit.integer(1, 1000000),
    "commcheck_collective_warmup_iterations": kit.integer(0, 1000000),
    "commcheck_collective_check": kit.integer(0, 1000),
    "commcheck_collective_datatype": kit.described(checks.datatype, "a datatype of the library, or ''"),
    "commcheck_collective_reduce_op": kit.described(checks.reduce_op, "a reduction of the library"),
    "commcheck_collective_env": kit.described(
        checks.collective_env, "NCCL_*, HCCL_*, UCX_*, ... names, one-line values"),
    "commcheck_mpi_mca": kit.described(checks.mca, "MCA parameter names, one-line values"),
    "commcheck_mpi_ssh_config": kit.names_files(kit.described(
        checks.ssh_config, "an absolute path without spaces, or ''"), "a configuration file"),
    "commcheck_collective_launcher": kit.described(checks.collective_launcher, "srun needs "
                                                   "commcheck_collective_mpirun to name srun"),
    "commcheck_collective_mpirun": kit.names_files(kit.described(
        checks.collective_launcher_program, "an absolute path or a command name of mpirun (srun with launcher "
                                            "srun)"), "a program"),
    "commcheck_collective_slurm_job_id": kit.described(checks.slurm_job_id, "a Slurm job id (digits), or ''"),
    "commcheck_collective_allow_run_as_root": kit.by_spec(),
    "commcheck_collective_binary_dir": kit.names_files(kit.path(empty=True), "a directory of programs"),
    "commcheck_collective_json_output": kit.by_spec(),
    "commcheck_collective_timeout": kit.integer(1, 7 * 24 * 3600),
    "commcheck_collective_expected_busbw_gbs": _GBPS,
    "commcheck_collective_node_expected_busbw_gbs": _GBPS,
    "commcheck_collective_nic_rates_gbps": kit.described(checks.rates, "link rates above 0 Gb/s"),
    "commcheck_collective_link_efficiency": kit.fraction(),
    "commcheck_collective_min_fraction": kit.fraction(),
    "commcheck_collective_busbw_metric": kit.by_spec(),
    "commcheck_collective_ib_expected": kit.by_spec(),
    "commcheck_collective_transport_check": kit.by_spec(),
    "commcheck_collective_ib_loopback": kit.by_spec(),
    "commcheck_collective_bisect": kit.by_spec(),
    "commcheck_collective_bisect_max_runs": kit.integer(1, 1000, zero="2 x hosts + 3"),
    # tcp_perf
    "commcheck_tcp_hosts": kit.hosts(),
    "commcheck_tcp_pattern": kit.by_spec(),
    "commcheck_tcp_strategy": kit.by_spec(),
    "commcheck_tcp_background": kit.by_spec(),
    "commcheck_tcp_pairs": kit.pairs(),
    "commcheck_tcp_center": kit.host(empty=True),
    "commcheck_tcp_duration": kit.integer(1, iperf3_cmd.DURATION_MAX),
    "commcheck_tcp_parallel": kit.integer(1, iperf3_cmd.PARALLEL_MAX),
    "commcheck_tcp_reverse": kit.by_spec(),
    "commcheck_tcp_bidirectional": kit.described(checks.tcp_bidirectional, "not with reverse"),
    "commcheck_tcp_omit": kit.integer(0, 600),
    "commcheck_tcp_extra_args": checks.extra_args(iperf3_cmd.check_extra_args),
    "commcheck_tcp_timeout": kit.described(
        checks.tcp_timeout, "0 to %d, longer than duration + omit" % checks.TIMEOUT_MAX),
    "commcheck_tcp_connect_retries": kit.integer(0, 100000),
    "commcheck_tcp_base_port": kit.integer(checks.PORT_LOW, checks.PORT_HIGH),
    "commcheck_tcp_expected_gbps": _GBPS,
    "commcheck_tcp_address": kit.host(),
    # report
    "commcheck_run_records": kit.by_spec("records the check roles publish"),
    "commcheck_report_records": kit.described(checks.records, "check records"),
    "commcheck_run_id": checks.run_id(),
    "commcheck_report_formats": kit.by_spec(),
    "commcheck_history_dir": kit.path(absolute=False, empty=True),
    "commcheck_report_compare": kit.by_spec(),
    "commcheck_baseline_runs": kit.integer(1, 1000),
    "commcheck_baseline_run": checks.run_id(),
    "commcheck_baseline_max_age": kit.described(checks.age, "an age (90d, 12h) or a time, or ''"),
    "commcheck_baseline_min_runs": kit.integer(1, 1000),
    "commcheck_baseline_ignore_params": kit.names("word"),
    "commcheck_regression_threshold": kit.number(0, 10),
    "commcheck_regression_thresholds": kit.described(checks.thresholds, "metric: 0 to 10"),
    "commcheck_report_from_history": checks.run_id(allow_last=True),
    "commcheck_report_junit_regression_fails": kit.by_spec(),
    "commcheck_report_publish_regressions": kit.by_spec(),
    "commcheck_report_fail_on": kit.by_spec(),
    "commcheck_report_index": kit.by_spec(),
    "commcheck_report_index_runs": kit.integer(1, 1000),
    "commcheck_report_index_points": kit.integer(2, 200),
    "commcheck_report_index_rows": kit.integer(1, 10000),
    # k8s_pods
    "commcheck_k8s_existing_pods": kit.described(
        lambda label, value, ctx: value == {} or kit.call_check(label, value, k8s_existing.check_selection, value),
        "{}, or a label selector and/or pod names, a namespace and a container"),
    "commcheck_k8s_nodes": checks.k8s("nodes"),
    "commcheck_k8s_node_selector": checks.k8s("node_selector"),
    "commcheck_k8s_namespace": checks.k8s("namespace"),
    "commcheck_k8s_image": kit.described(checks.k8s_image, "an image reference, or ''"),
    "commcheck_k8s_image_pull_policy": kit.by_spec(),
    "commcheck_k8s_image_pull_secrets": kit.names("k8s_name"),
    "commcheck_k8s_command": kit.names_files(kit.described(checks.k8s_command, "a program and its arguments"),
                                             "a program"),
    "commcheck_k8s_resources": checks.k8s("resources"),
    "commcheck_k8s_gpus": kit.integer(0, 1024),
    "commcheck_k8s_gpu_resource": kit.described(
        lambda label, value, ctx: checks.k8s("resources")(label, {value: 1}, ctx), "an extended resource name"),
    "commcheck_k8s_networks": checks.k8s("networks"),
    "commcheck_k8s_host_network": kit.by_spec(),
    "commcheck_k8s_tolerations": kit.described(checks.tolerations, "Kubernetes tolerations"),
    "commcheck_k8s_shm_size": checks.k8s("shm_size"),
    "commcheck_k8s_capabilities": checks.k8s("capabilities"),
    "commcheck_k8s_privileged": kit.by_spec(),
    "commcheck_k8s_labels": checks.k8s("labels"),
    "commcheck_k8s_annotations": kit.described(checks.annotations, "qualified keys, one-line values"),
    "commcheck_k8s_service_account": kit.name("k8s_name", empty=True),
    "commcheck_k8s_kubeconfig": kit.names_files(kit.described(checks.kubeconfig, "an absolute path or ~/..., or ''"),
                                                "a kubeconfig"),
    "commcheck_k8s_context": kit.name("k8s_context", empty=True),
    "commcheck_k8s_kubectl_binary": kit.binary(empty=True, program="kubectl"),
    "commcheck_k8s_run_id": checks.k8s("run_id"),
    "commcheck_k8s_name_prefix": checks.k8s("name_prefix"),
    "commcheck_k8s_wait_timeout": kit.integer(1, checks.TIMEOUT_MAX),
    "commcheck_k8s_active_deadline_seconds": kit.integer(1, 366 * 86400),
    "commcheck_k8s_keep_pods": kit.by_spec(),
    "commcheck_k8s_group": kit.described(checks.group, "an inventory group name"),
    "commcheck_k8s_host_name": kit.by_spec(),
    "commcheck_k8s_pod_vars": kit.names_files(kit.described(
        checks.host_variables, "variables, each obeying its own rule"), "variables (commcheck_kubectl...)"),
    "commcheck_k8s_node_vars": kit.names_files(kit.described(checks.node_variables, "node: variables"),
                                               "variables (commcheck_kubectl...)"),
    "commcheck_k8s_mpi_agent": kit.by_spec(),
    "commcheck_k8s_mpi_agent_dir": kit.names_files(kit.described(checks.agent_dir, "an absolute directory"),
                                                   "the directory of the MPI agent"),
    "commcheck_k8s_mpi_kubectl": kit.names_files(kit.described(
        checks.agent_kubectl, "an absolute path or a command name of kubectl"), "a program"),
    "commcheck_k8s_mpi_mca": kit.described(checks.mca, "MCA parameter names, one-line values"),
    "commcheck_k8s_render_job": kit.by_spec(),
    "commcheck_k8s_render_rbac": kit.by_spec(),
    "commcheck_k8s_render_only": kit.by_spec(),
    "commcheck_k8s_manifest_dir": kit.path(absolute=False),
    "commcheck_k8s_job_collective": kit.names_files(kit.described(
        checks.job_collective, "the collective module's options"), "mpirun and the test binaries' directory"),
    "commcheck_k8s_run_job": kit.described(checks.run_job, "true only with commcheck_k8s_render_job"),
    "commcheck_k8s_job_timeout": kit.integer(1, checks.TIMEOUT_MAX),
    # quarantine
    "commcheck_quarantine": kit.by_spec(),
    "commcheck_quarantine_backend": kit.by_spec(),
    "commcheck_quarantine_dry_run": kit.by_spec(),
    "commcheck_quarantine_state": kit.by_spec(),
    "commcheck_quarantine_components": kit.by_spec(),
    "commcheck_quarantine_hosts": kit.described(checks.quarantine_hosts, "inventory hosts that are node names"),
    "commcheck_quarantine_reason": kit.text(quarantine.MAX_REASON, empty=False),
    "commcheck_quarantine_findings": kit.described(checks.records, "finding records"),
    "commcheck_quarantine_node_names": kit.described(checks.node_names, "host: node name"),
    "commcheck_quarantine_taint": kit.by_spec(),
    "commcheck_quarantine_taint_effect": kit.by_spec(),
    "commcheck_quarantine_cordon": kit.by_spec(),
    "commcheck_quarantine_drain": kit.by_spec(),
    "commcheck_quarantine_drain_timeout": kit.integer(quarantine_drain.DRAIN_TIMEOUT_MIN,
                                                      quarantine_drain.DRAIN_TIMEOUT_MAX),
    "commcheck_quarantine_kubeconfig": kit.names_files(kit.described(
        checks.kubeconfig, "an absolute path or ~/..., or ''"), "a kubeconfig"),
    "commcheck_quarantine_context": kit.name("k8s_context", empty=True),
}


def file_naming_variables():
    """{variable: what it names} of every role variable that names a program or a configuration file, or holds
    variables that may: inventory or job-template settings, never survey questions (awx/surveys)."""
    return dict((name, rule.names_files) for name, rule in RULES.items() if getattr(rule, "names_files", None))


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


def is_text_kind(kind):
    return kind in _TEXT_TYPES


def _items(plain, value):
    """(kind, items): the type each item must have, and the items (a list option wraps a single value)."""
    if plain["type"] == "list":
        return plain.get("elements"), value if isinstance(value, list) else [value]
    return plain["type"], [value]


def _untextual(plain, value):
    """The first item of ``value`` that a text option (or list of text) must not take as its text; None if none."""
    kind, items = _items(plain, value)
    if kind not in _TEXT_TYPES:
        return None
    return next(((item,) for item in items if not takes_as_text(item)), None)


def _out_of_range(plain, value):
    """True when an item is a number no integer or float option can convert (inf, nan, 10**400): Ansible raises."""
    kind, items = _items(plain, value)
    return kind in ("int", "float") and any(_not_finite(item) for item in items)


def _not_finite(value):
    if isinstance(value, bool):
        return False
    if isinstance(value, float):
        return not math.isfinite(value)
    if isinstance(value, int):
        return abs(value) > _FLOAT_MAX
    if isinstance(value, str):
        try:
            return not math.isfinite(float(value.strip()))
        except (ValueError, OverflowError):
            return False
    return False


def check_type(option, spec, value, label=None):
    """(converted value, None) or (None, problem) by the spec's type, elements and choices."""
    label = label or option
    plain = dict((k, spec[k]) for k in _SPEC_KEYS if spec.get(k) is not None)
    plain.setdefault("type", "str")
    if plain["type"] == "list" and isinstance(value, str):
        # comma-separated text (AWX surveys), read as the roles read it: items trimmed; an empty answer is
        # an empty list, an empty item between commas is refused (it was meant as something, never dropped)
        items = value.split(",") if value.strip() else []
        for index, item in enumerate(items):
            if not item.strip():
                return None, "%s[%d]: %s is empty (in %s): name something there or remove the comma" % (
                    label, index, show(item), show(value))
        value = [item.strip() for item in items]
    if isinstance(value, bool) and plain["type"] in ("int", "float"):
        # Ansible would read true as 1: a number option never takes a boolean
        return None, "%s: %s is not %s" % (label, show(value), _type_text(plain))
    if _out_of_range(plain, value):
        return None, "%s: %s is not %s: it must be a finite number" % (label, show(value), _type_text(plain))
    wrong = _untextual(plain, value)
    if wrong is not None:
        return None, "%s: %s is not a string (quote it if it is meant as text)" % (label, show(wrong[0]))
    result = ArgumentSpecValidator({option: plain}).validate({option: value})
    if not result.error_messages:
        return result.validated_parameters.get(option), None
    choices = plain.get("choices")
    if choices and all(isinstance(e, ArgumentValueError) for e in result.errors):
        converted = result.validated_parameters.get(option)
        known = kit.words(repr(c) if c == "" else c for c in choices)
        if isinstance(converted, list):
            # the first item that is not a choice, named by its index
            for where, item in kit.items(label, converted):
                if item not in choices:
                    return None, "%s: %s is not one of %s" % (where, show(item), known)
        return None, "%s: %s is not one of %s" % (label, show(converted), known)
    return None, "%s: %s is not %s" % (label, show(value), _type_text(plain))


def _null_allowed(spec):
    """Null is a value where the default is null or a template (the role reads null as 'none')."""
    if spec.get("required"):
        return False
    return not has_plain_default(spec) or spec["default"] is None


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
        return kit.clip(str(exc), value)
    return None


def check_option(option, spec, value, ctx, label=None):
    """The problem with one value (type, choices, then its rule), or None."""
    converted, problem = _typed(option, spec, value, label)
    return problem or _rule_problem(option, converted, value, ctx, label)


def is_computed(default):
    """True for a default that is a template (the role computes it when it runs, so no check can see it)."""
    return isinstance(default, str) and "{{" in default


def has_plain_default(item):
    """True when an option's spec gives a default a check can take as the value (not a template)."""
    return "default" in item and not is_computed(item["default"])


def effective_values(spec, values):
    """The values a role sees: those given, else the spec's defaults (a template default is left to the role)."""
    out = {}
    for option, item in spec.items():
        if option in values:
            out[option] = values[option]
        elif has_plain_default(item):
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
    ctx = kit.Context(converted, known_hosts, all_specs if all_specs is not None else spec, check_option)
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
        shown = kit.words(on[:limit]) + (" and %d more" % (len(on) - limit) if len(on) > limit else "")
        out.append("%s (on %s)" % (problem, shown))
    return out


def message(problems):
    """The one error message of a failed check."""
    return MESSAGE_PREFIX + "; ".join(problems)
