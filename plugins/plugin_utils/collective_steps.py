# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The collective role's controller steps (pure): which hosts run, the runs and their module arguments, the
results gathered and judged. The action ``clusterops.commcheck.collective_plan`` reads the variables and calls
these; each function takes plain values.

A run of the pool (or of a pair) starts ``mpirun`` from its first host (the launcher) and is judged against the
NIC rates of its hosts; a per-node run runs on its own host with that host's options.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.clusterops.commcheck.plugins.module_utils.planning.check_plan import probe_keys
from ansible_collections.clusterops.commcheck.plugins.module_utils.planning.collective_expectation import (
    nic_rates_choice)
from ansible_collections.clusterops.commcheck.plugins.module_utils.planning.collective_plan import collective_records
from ansible_collections.clusterops.commcheck.plugins.module_utils.planning.schedule import commcheck_schedule
from ansible_collections.clusterops.commcheck.plugins.module_utils.planning.task_bound import task_timeout
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import collective_retest

# each mpirun ends by its own deadline; the task bound adds this for the set-up commands around it
RUN_MARGIN_S = 180
PROBE_TIMEOUT_S = 120
# module option -> role variable, passed as they are
SAME_OPTIONS = {
    "gpus_per_node": "commcheck_gpus_per_node", "gpus_per_process": "commcheck_collective_gpus_per_process",
    "min_bytes": "commcheck_collective_min_bytes", "max_bytes": "commcheck_collective_max_bytes",
    "step_factor": "commcheck_collective_step_factor", "iterations": "commcheck_collective_iterations",
    "warmup_iterations": "commcheck_collective_warmup_iterations", "check": "commcheck_collective_check",
    "reduce_op": "commcheck_collective_reduce_op", "env": "commcheck_collective_env",
    "launcher": "commcheck_collective_launcher", "mpirun": "commcheck_collective_mpirun",
    "allow_run_as_root": "commcheck_collective_allow_run_as_root", "json_output": "commcheck_collective_json_output",
    "timeout": "commcheck_collective_timeout", "min_fraction": "commcheck_collective_min_fraction",
    "busbw_metric": "commcheck_collective_busbw_metric",
}
# module option -> role variable, left out when the variable is empty (the module's own default then)
UNLESS_EMPTY = {"datatype": "commcheck_collective_datatype", "ssh_config": "commcheck_mpi_ssh_config",
                "binary_dir": "commcheck_collective_binary_dir", "slurm_job_id": "commcheck_collective_slurm_job_id"}
# module options only Open MPI's mpirun takes (the others refuse them)
OPENMPI_ONLY = ("ssh_config",)
# the role variables the steps read, with what each step reads beyond the module options
RUN_VARIABLES = sorted(set(SAME_OPTIONS.values()) | set(UNLESS_EMPTY.values()) | set([
    "commcheck_mpi_mca", "commcheck_collective_expected_busbw_gbs", "commcheck_collective_node_expected_busbw_gbs",
    "commcheck_collective_nic_rates_gbps", "commcheck_collective_link_efficiency", "commcheck_collective_ib_expected",
    "commcheck_collective_transport_check", "commcheck_collective_bisect", "commcheck_collective_bisect_max_runs",
    "commcheck_collective_ib_loopback",
    "commcheck_collective_library", "commcheck_collective_hosts", "commcheck_collective_mode",
    "commcheck_collective_pair_pattern", "commcheck_collective_ops"]))
# the loop variable of the per-node runs (roles/collective/tasks/per_node.yml): each result item holds its run
NODE_RUN_VAR = "commcheck_collective_node_run"
RETEST_VARIABLES = ["commcheck_retest_repeats", "commcheck_retest_partners", "commcheck_retest_verdicts"]
JUDGE_VARIABLES = ["commcheck_thresholds_history", "commcheck_history_runs", "commcheck_outlier_z",
                   "commcheck_outlier_min_rel", "commcheck_history_threshold"]


def probe_plan(ops):
    """The plan of a probe for the collective check alone (the one-click check's plan, other checks off)."""
    return {"checks": ["collective"], "discover": False, "rdma": False, "tcp": False, "collective": True,
            "library": "auto", "collective_ops": list(ops), "rdma_ops": [], "rdma_metrics": [], "need_facts": False}


def probe_step(ops, mpirun, binary_dir):
    """{plan, probe_keys, timeout}: what the collective role run alone (library auto) probes every host for."""
    plan = probe_plan(ops)
    return {"plan": plan, "probe_keys": probe_keys(plan, mpirun or "mpirun", binary_dir or ""),
            "timeout": task_timeout(1, PROBE_TIMEOUT_S)}


def choose_hosts(library, decision, asked, play_hosts, play_hosts_all):
    """(library, chosen, unreachable): with library ``auto`` the probe's ``decision`` names the library and the
    hosts that have it; the hosts asked (all of the play when none) that are still in the play and able run,
    those asked that left the play are unreachable. Play order is kept."""
    auto = library == "auto"
    if auto and not isinstance(decision, dict):
        raise ValueError("commcheck_collective_library is auto but no probe decided (commcheck_oneclick_decision)")
    run_library = decision.get("library") if auto else library
    able = decision.get("collective_hosts") or [] if auto else play_hosts_all
    asked = list(asked) if asked else list(play_hosts_all)
    chosen = [host for host in asked if host in play_hosts and host in able]
    unreachable = [host for host in asked if host not in play_hosts]
    return run_library, chosen, unreachable


def run_groups(chosen, mode, pattern):
    """The host groups of one run each: the whole pool, every pair of the schedule (``pattern``), or none
    (per-node mode runs on each host instead)."""
    if mode == "pool":
        return [list(chosen)] if chosen else []
    if mode == "pairs":
        return [pair for round_pairs in commcheck_schedule(list(chosen), pattern=pattern) for pair in round_pairs]
    return []


def active_devices(facts_by_host, hosts):
    """The RDMA devices with an ACTIVE port that discovery found on ``hosts``, sorted, each once."""
    names = set()
    for host in hosts:
        for device in (facts_by_host.get(host) or {}).get("devices") or []:
            if any((port or {}).get("state") == "ACTIVE" for port in device.get("ports") or []):
                names.add(device.get("name"))
    return sorted(name for name in names if name is not None)


def _positive(value):
    try:
        return float(value) > 0
    except (TypeError, ValueError):
        return False


def module_args(variables, library, operation, entries, expected):
    """The collective module's arguments that a pool, pair and per-node run share, from the role variables;
    ``expected``: the variable of the run's expected bus bandwidth (used when above 0)."""
    args = dict((option, variables[name]) for option, name in SAME_OPTIONS.items())
    openmpi = variables["commcheck_collective_launcher"] == "openmpi"
    args.update((option, variables[name]) for option, name in UNLESS_EMPTY.items()
                if variables.get(name) and (openmpi or option not in OPENMPI_ONLY))
    args.update(library=library, operation=operation, hosts=list(entries), fail_on_error=False,
                mca=variables["commcheck_mpi_mca"] if openmpi else {})
    if _positive(variables[expected]):
        args["expected_busbw_gbs"] = variables[expected]
    return args


def group_args(variables, library, hosts, operation, entries, facts_by_host, launcher_vars):
    """The module arguments of one pool or pair run: the shared ones, the NIC rates it is judged by (configured,
    else the slowest host's active ports; HCCL drives the NPUs' own NICs, which RDMA discovery does not see), the
    transport check, bisection (pool mode), and the launcher host's transport, kubectl and MPI agent."""
    nccl = library == "nccl"
    mode_pool = variables["commcheck_collective_mode"] == "pool"
    transport_check = variables["commcheck_collective_transport_check"]
    args = module_args(variables, library, operation, entries, "commcheck_collective_expected_busbw_gbs")
    ib_hca = (variables["commcheck_collective_env"] or {}).get("NCCL_IB_HCA", "")
    expectation = nic_rates_choice(variables["commcheck_collective_nic_rates_gbps"] or [],
                                   dict((host, facts_by_host.get(host) or {}) for host in hosts) if nccl else {},
                                   list(hosts), ib_hca)
    args.update(nic_rates_gbps=expectation["rates"], link_efficiency=variables["commcheck_collective_link_efficiency"],
                ib_expected=variables["commcheck_collective_ib_expected"] and transport_check,
                ib_devices=active_devices(facts_by_host, hosts) if transport_check and nccl else [],
                bisect=variables["commcheck_collective_bisect"] and mode_pool,
                transport=launcher_vars.get("transport") or "host")
    if expectation.get("note"):
        args["nic_rates_source"] = expectation["note"]
    for option in ("kubectl", "mpi_agent_dir"):
        if launcher_vars.get(option) is not None and (option == "kubectl" or launcher_vars[option]):
            args[option] = launcher_vars[option]
    if int(variables["commcheck_collective_bisect_max_runs"] or 0) > 0:
        args["bisect_max_runs"] = variables["commcheck_collective_bisect_max_runs"]
    return args


def group_timeout(variables, hosts):
    """The task bound of one pool or pair run: its mpirun and, in pool mode with bisection, every bisection run."""
    bisects = variables["commcheck_collective_bisect"] and variables["commcheck_collective_mode"] == "pool"
    return task_timeout(1, variables["commcheck_collective_timeout"], margin=RUN_MARGIN_S,
                        bisect_hosts=len(hosts) if bisects else 0,
                        bisect_max_runs=int(variables["commcheck_collective_bisect_max_runs"] or 0))


def group_runs(variables, library, groups, entry_of, facts_by_host, launcher_vars_of):
    """One run per group and operation (groups first): launcher, label, module arguments, environment, bound."""
    runs = []
    for hosts in groups:
        launcher = launcher_vars_of(hosts[0])
        for operation in variables["commcheck_collective_ops"]:
            runs.append({
                "hosts": list(hosts), "operation": operation, "launcher": hosts[0],
                "label": "%s on %s" % (operation, ",".join(hosts)),
                "args": group_args(variables, library, hosts, operation, [entry_of(host) for host in hosts],
                                   facts_by_host, launcher),
                "environment": launcher.get("environment") or {},
                "timeout": group_timeout(variables, hosts)})
    return runs


def node_runs(variables_of, library, hosts, entry_of, facts_of=None):
    """{host: its runs}: per-node mode, one run per operation on each host, with that host's own options
    (``variables_of(host)``) and its own environment; then, on a host with an RDMA device (``facts_of(host)``: its
    ``commcheck_rdma`` fact) and 2+ GPUs, its IB loopback runs (:func:`ib_loopback_run`)."""
    out = {}
    for host in hosts:
        variables = variables_of(host)
        out[host] = [{
            "hosts": [host], "operation": operation, "launcher": host, "label": "%s on %s" % (operation, host),
            "args": module_args(variables, library, operation, [entry_of(host)],
                                "commcheck_collective_node_expected_busbw_gbs"),
            "environment": variables.get("commcheck_environment") or {},
            "timeout": task_timeout(1, variables["commcheck_collective_timeout"], margin=RUN_MARGIN_S),
        } for operation in variables["commcheck_collective_ops"]]
        facts = (facts_of(host) if facts_of else None) or {}
        out[host] += [ib_loopback_run(run, variables, facts) for run in out[host]
                      if ib_loopback_asked(variables, library, facts)]
    return out


# NCCL's IB loopback: without P2P (NVLink, PCIe peer-to-peer) and shared memory, one host's GPUs talk through its NICs
IB_LOOPBACK_ENV = {"NCCL_P2P_DISABLE": "1", "NCCL_SHM_DISABLE": "1"}


def ib_loopback_asked(variables, library, facts):
    """Whether a per-node host runs NCCL's IB loopback: asked, NCCL, 2+ GPUs and an RDMA device with an active port."""
    return bool(variables.get("commcheck_collective_ib_loopback")) and library == "nccl" and \
        int(variables.get("commcheck_gpus_per_node") or 0) >= 2 and bool(active_devices({"host": facts}, ["host"]))


def ib_loopback_run(run, variables, facts):
    """The IB loopback run of a per-node ``run``: NCCL's P2P and shared memory off, NCCL's IB/RoCE network required
    (``ib_devices``: the host's active devices, Socket fails), judged by the host's NIC rates (the per-node expected
    bus bandwidth is the GPUs' own links'), ``variant: ib_loopback`` in its records."""
    args = dict(run["args"], env=dict(run["args"].get("env") or {}, **IB_LOOPBACK_ENV), ib_expected=True,
                ib_devices=active_devices({"host": facts}, ["host"]))
    args.pop("expected_busbw_gbs", None)
    ib_hca = (variables.get("commcheck_collective_env") or {}).get("NCCL_IB_HCA", "")
    host = run["hosts"][0]
    expectation = nic_rates_choice(variables.get("commcheck_collective_nic_rates_gbps") or [], {host: facts}, [host],
                                   ib_hca)
    args.update(nic_rates_gbps=expectation["rates"],
                link_efficiency=variables.get("commcheck_collective_link_efficiency") or 0.9)
    if expectation.get("note"):
        args["nic_rates_source"] = expectation["note"]
    return dict(run, args=args, variant="ib_loopback", label="IB loopback %s" % run["label"])


def retest_runs(runs, node_runs, items, pair_runs):
    """The runs of the retests (``collective_retest.plan``'s items), each shaped like the run it repeats: an as-is
    retest is that run again (a per-node run from its own host), a partner retest a pair run made by
    ``pair_runs(hosts, operation)``; each with ``retest`` (its records' params) and a label saying what it is."""
    planned = {}
    for run in list(runs or []) + [run for host_runs in (node_runs or {}).values() for run in host_runs]:
        planned.setdefault(collective_retest.run_key(run["hosts"], run["operation"]) + (run.get("variant"),), run)
    out = []
    for item in items:
        key = collective_retest.run_key(item["hosts"], item["operation"])
        variant = (item.get("params") or {}).get("variant")
        run = planned.get(key + (variant,)) if item["purpose"] == "as_is" else pair_runs(item["hosts"], item["operation"])
        if run is None:
            raise ValueError("no planned run of %s on %s to retest" % (item["operation"], ",".join(item["hosts"])))
        out.append(dict(run, retest=item["params"], label="retest %s %d of %s" % (
            item["purpose"].replace("_", " "), item["attempt"], run["label"])))
    return out


def failures(group_results):
    """The message of the pool or pair runs that failed (a killed module, its task's timeout); None when none."""
    results = (group_results or {}).get("results") or []
    failed = [item for item in results if isinstance(item, dict) and item.get("failed")]
    if not failed and not (group_results or {}).get("failed"):
        return None
    return "; ".join(str(item.get("msg", "the collective module failed")) for item in failed)


def run_results(group_results, node_results):
    """The module results of this run: the pool or pair runs, then each per-node host's, skipped ones left out."""
    results = [item for item in (group_results or {}).get("results") or [] if "skipped" not in item]
    for registered in node_results:
        results.extend(_variant(item) for item in (registered or {}).get("results") or [] if "skipped" not in item)
    return results


def _variant(item):
    """A per-node result with its run's ``variant`` (the loop's run: ``ib_loopback``) in its params."""
    variant = (item.get(NODE_RUN_VAR) or {}).get("variant") if isinstance(item, dict) else None
    if not variant:
        return item
    return dict(item, params=dict(item.get("params") or {}, variant=variant))


def bad_nodes(results):
    """Every node a run named bad, once each, in the order first named."""
    out = []
    for res in results:
        for node in _flat(res.get("bad_nodes") or []):
            if node not in out:
                out.append(node)
    return out


def _flat(items):
    for item in items:
        if isinstance(item, (list, tuple)):
            yield from _flat(item)
        else:
            yield item


def retest_records(runs, results, mode):
    """The records of the retest runs (``runs``, in the order they ran; ``results``: their registered loop), each
    tagged with its retest params; a skipped retest gives none."""
    items = list((results or {}).get("results") or [])
    records = []
    for run, res in zip(runs or [], items):
        if "skipped" in res and not res.get("runs"):
            continue
        records.extend(collective_retest.tag(
            [rec for rec in collective_records([res], mode=mode) if rec.get("kind") == "collective"][:1],
            run["retest"]))
    return records


def with_retests(collective, records, retests, mode, verdicts):
    """``collective`` (:func:`gathered`, its ``records`` judged) with the retests' outcome: the records
    classified (``collective_retest.classify``), the findings of the confirmed failures and the retest summary
    record after the retests; ``verdicts`` and ``bad_nodes`` of the outcome line as the retests leave them."""
    if not retests:
        return dict(collective, records=records, retest_counts=None)
    checked = collective_retest.classify(records, retests, mode, verdicts)
    found = collective_retest.findings(checked["outcomes"])
    summary = collective_retest.summary_record(checked["classified"])
    nodes = list(collective["bad_nodes"])
    nodes.extend(rec["host"] for rec in found if rec["peer"] is None and rec["host"] not in nodes)
    return dict(collective, records=checked["records"] + found + [summary], bad_nodes=nodes,
                verdicts=[rec.get("verdict") for rec in collective_retest.first_pass(checked["records"])],
                retest_counts=summary["metrics"])


def gathered(results, mode, unreachable):
    """{results, records, bad_nodes, verdicts}: the records of every run (unjudged) and what the outcome says."""
    return {"results": results, "records": collective_records(results, mode=mode, unreachable=list(unreachable)),
            "bad_nodes": bad_nodes(results), "verdicts": [res.get("verdict", "skipped") for res in results]}


def outcome(library, mode, collective, unreachable):
    """The one line the role shows at the end."""
    retests = collective.get("retest_counts")
    said = "; retests %d: %d confirmed, %d flaky" % (
        retests["retests"], retests["confirmed_pairs"], retests["flaky_pairs"]) if retests else ""
    return "%s %s: %d test(s), verdicts %s; bad nodes %s; unreachable %s%s" % (
        (library or "no library").upper(), mode, len(collective["results"]), collective["verdicts"],
        collective["bad_nodes"], list(unreachable), said)
