# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one pair-check engine: plan, retest and judge any family of ``planning/families.py``.

The controller steps of the pair-check roles (``rdma_perf``, ``tcp_perf``), as plain functions of a family's
row and its options (``opts(name)``: a role variable's value, read once by the ``pair_check`` action). Every
family goes through the same functions; what differs is data in its row. Nothing here touches a host.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import time
from collections import Counter

from ansible.module_utils.parsing.convert_bool import boolean

from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery import numa
from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery import topology as topo
from ansible_collections.clusterops.commcheck.plugins.module_utils.planning import gpudirect as gpu_plan
from ansible_collections.clusterops.commcheck.plugins.module_utils.planning import leaf_schedule
from ansible_collections.clusterops.commcheck.plugins.module_utils.planning import tcp_topology
from ansible_collections.clusterops.commcheck.plugins.module_utils.planning import loopback
from ansible_collections.clusterops.commcheck.plugins.module_utils.planning.families import option
from ansible_collections.clusterops.commcheck.plugins.module_utils.planning.schedule import plan_rounds
from ansible_collections.clusterops.commcheck.plugins.module_utils.planning.task_bound import task_timeout
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import slice_meeting
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import counters as ct
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import gpu_localization as gpu_loc
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import gpu_retests as gpu_rt
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import gpudirect as gpu_verdicts
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import judgement as jd
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import retest as rt
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import retest_design as rd
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import retest_plan as rp
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import roce_consistency as rc
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import thresholds as th
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts.killed_module import killed_hosts
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts.pair_analysis import analyze_pairs

# the verdicts the outcome line counts, in its order
OUTCOME_VERDICTS = ("pass", "warn", "flaky", "fail", "error", "skipped")
# a retest round's number starts here (its records tell it from the first pass's)
RETEST_ROUND_OFFSET = 1000
OFF = ("false", "no", "off")


def number(value):
    """A number as Jinja's ``int`` / ``float`` filters read it: 0 for what is none."""
    try:
        return float(value)
    except (TypeError, ValueError):
        return 0.0


def truthy(value):
    return boolean(value, strict=False)


def given(value):
    """The value, or None when it is empty (a role variable's "not set")."""
    return value if value not in (None, "") and not (hasattr(value, "__len__") and len(value) == 0) else None


def flat(plans, key):
    return [item for plan in plans for item in plan.get(key) or []]


# ------------------------------------------------------------------ options read once

def step_timeout(row, opts, host_count):
    """Seconds one test step may take: the family's timeout variable when above 0, else what its step measures
    plus a margin (``fallback_s`` when it runs by count); pipelined, each step may also wait for a peer that
    started late, so one second per host on top (hosts start one by one)."""
    given_s = number(opts(option(row, "timeout")))
    if given_s > 0:
        return int(given_s)
    rule = row["timeout"]
    timed = [number(opts(name)) for name in rule["timed"]]
    base = sum(timed) + rule["margin_s"] if timed[0] > 0 else rule["fallback_s"]
    return int(base + (host_count if opts(option(row, "strategy")) == "pipelined" else 0))


def module_args(row, opts, timeout):
    """The options of the family's module, the same on every host (left out: those the rule leaves out)."""
    args = {}
    for name, source, rule in row["module_args"]:
        value = source if rule == "fixed" else opts(source)
        if rule == "bool":
            value = truthy(value)
        elif rule != "fixed" and not _kept(rule, value):
            continue
        args[name] = value
    args["timeout"] = int(timeout)
    return args


def _kept(rule, value):
    if value is None:
        return False
    if rule == "positive":
        return number(value) > 0
    if rule == "not_negative":
        return number(value) >= 0
    if rule == "above_one":
        return number(value) > 1
    if rule == "text":
        return len(value) > 0
    return True


def tests_of(row, opts):
    """The test steps of a round: every op with every metric, or None for a tool's one test."""
    if row["tests"] is None:
        return None
    return [[op, metric] for op in opts(option(row, "ops")) or [] for metric in opts(option(row, "metrics")) or []]


def choose_hosts(row, opts, play_hosts, play_hosts_all):
    """``{hosts, unreachable, timeout}``: the check's hosts (its hosts variable, else the play's), those the play
    lost, and the step timeout."""
    chosen = list(opts(option(row, "hosts")) or []) or list(play_hosts_all)
    return {"hosts": [h for h in chosen if h in play_hosts], "unreachable": [h for h in chosen if h not in play_hosts],
            "timeout": step_timeout(row, opts, len(chosen))}


# ------------------------------------------------------------------ plans and how they run

def run_shape(row, opts, plans, timeout, forks, now=None):
    """How a plan runs: round by round or pipelined (``strategy``), its task bound, in the background or not, and how
    long the controller waits for it."""
    first = plans[0] if plans else {"sides": {}, "steps": 0}
    setting = opts(option(row, "background"))
    steps = int(first.get("steps") or 0)
    for each in plans:
        each["bounds"] = dict((host, task_timeout(sides, timeout)) for host, sides in each["sides"].items())
    return {"rounds": plans, "strategy": opts(option(row, "strategy")), "timeout": int(timeout),
            "bound": task_timeout(steps, timeout),
            "background": setting == "always" or (setting == "auto" and len(first["sides"]) > int(forks)),
            "wait_s": int(steps * measured_s(row, opts)), "started": time.time() if now is None else now,
            "module_args": module_args(row, opts, timeout)}


def wait_left(run, now=None):
    """Whole seconds the controller still waits for a plan run in the background: its expected test time less
    what starting the jobs already took, at least 1."""
    now = time.time() if now is None else now
    return int(max(1, number(run.get("wait_s")) - (now - number(run.get("started")))))


def measured_s(row, opts):
    """Seconds of measurement per step (a step run by count, like latency by iterations, measures none)."""
    rule = row["timeout"]
    timed = [number(opts(name)) for name in rule["timed"]]
    if timed[0] <= 0:
        return 0
    fraction = 1.0
    if rule.get("timed_share"):
        by_count, metric = rule["timed_share"]
        if number(opts(by_count)) > 0:
            metrics = list(opts(option(row, "metrics")) or [])
            fraction = float(metrics.count(metric)) / max(len(metrics), 1)
    return sum(timed) * fraction


def plan(row, opts, fleet, timeout, forks, rdma_facts=None, now=None):
    """The first pass: the fleet's hosts scheduled into rounds of pairs (one merged plan when pipelined), how it
    runs, and (for a family that asks for it) the RoCE check of both ends of every planned pair. A topology pattern
    (``leaf_ring``, ``spine``) marks each job with its two leaves; ``spine`` expects a cross-leaf job's rate over the
    oversubscription (``planning/leaf_schedule.py``)."""
    rails = (fleet.get("facts") or {}).get("rails") or {}
    pattern = opts(option(row, "pattern"))
    merge = opts(option(row, "strategy")) == "pipelined"
    if pattern == loopback.PATTERN:
        leaves = None
        plans = loopback.loopback_plans(fleet["hosts"], rails, tests_of(row, opts),
                                        int(number(opts(option(row, "base_port")))),
                                        given(opts(option(row, "rail_numbers"))), merge)
    else:
        rounds, leaves = schedule(row, opts, fleet["hosts"], rails, fleet_topology(fleet, row))
        plans = plan_rounds(rounds, rails, tests_of(row, opts), int(number(opts(option(row, "base_port")))), None,
                            given(opts(option(row, "rail_numbers"))), merge=merge)
        if truthy(opts(option(row, "loopback")) or False):
            plans = loopback.with_loopback(plans, fleet["hosts"], rails, tests_of(row, opts),
                                           given(opts(option(row, "rail_numbers"))))
    over = oversubscription(row, opts) if pattern == "spine" else None
    if leaves is not None:
        leaf_schedule.mark_leaves(plans, leaves, over, expected(row, opts))
    out = run_shape(row, opts, plans, timeout, forks, now)
    out.update(hosts=list(fleet["hosts"]), unreachable=list(fleet.get("unreachable") or []),
               jobs=flat(plans, "jobs"), skipped_pairs=flat(plans, "skipped"),
               gpudirect=bool(row.get("gpudirect")) and gpudirect_asked(row, opts) and pattern != loopback.PATTERN,
               preflight=preflight(row, opts, out["rounds"], rdma_facts, rails), pattern=pattern)
    if over is not None:
        out["oversubscription"] = over
    return out


def schedule(row, opts, hosts, rails, topology):
    """``(rounds, leaves)``: the family's pattern over ``hosts``; ``leaves`` (``{host: {rail: leaf}}``) for a topology
    pattern, else None."""
    pattern = opts(option(row, "pattern"))
    leaves = None
    if pattern in leaf_schedule.TOPOLOGY_PATTERNS:
        leaves = leaf_schedule.host_leaves(topology, rails, given(opts(option(row, "rail_numbers"))))
    rounds = leaf_schedule.schedule(list(hosts), pattern=pattern, pairs=opts(option(row, "pairs")),
                                    center=given(opts(option(row, "center"))), leaves=leaves)
    return rounds, leaves


def fleet_topology(fleet, row=None):
    """host -> {rail or device: {leaf, port, source}} of the fleet's hosts: what discovery read (``facts.rdma``),
    under the inventory's ``commcheck_topology`` (``facts.topology``); for a family that tests one path a host
    (``row["path_topology"]``: TCP), the leaf of that path as its rail 0 (``planning/tcp_topology.py``)."""
    facts = fleet.get("facts") or {}
    out = {}
    for host in fleet.get("hosts") or []:
        discovered = ((facts.get("rdma") or {}).get(host) or {}).get("topology")
        out[host] = topo.check_topology(discovered, "topology of %s" % host, sourced=True)
        out[host].update(topo.check_topology((facts.get("topology") or {}).get(host)))
    return path_topology(row, out, facts.get("rdma"), facts.get("rails"))


def path_topology(row, topology, rdma_facts, rails):
    """``topology`` as the family plans and judges by it: unchanged, or (``row["path_topology"]``) the leaf of
    each host's one path (``tcp_topology.path_topology``)."""
    if not (row or {}).get("path_topology"):
        return topology
    return tcp_topology.path_topology(topology, rdma_facts or {}, rails or {})


def oversubscription(row, opts):
    """The oversubscription the user states for the fabric (1: none; not set: 1)."""
    value = number(opts(option(row, "oversubscription")))
    return value if value >= 1 else 1.0


def gpudirect_asked(row, opts):
    """Whether the pass from GPU memory runs: not turned off, and the first pass did not already run from it."""
    setting = str(opts(option(row, "gpudirect"))).lower()
    return setting not in OFF and number(opts(option(row, "use_cuda"))) < 0


def preflight(row, opts, plans, rdma_facts, rails):
    """The RoCE mismatches of the planned pairs (both ends' MTU, GID type, ...), as findings and records."""
    if not row.get("preflight") or not truthy(opts("commcheck_roce_preflight")):
        return {"findings": [], "records": [], "messages": []}
    result = rc.preflight(flat(plans, "jobs"), rdma_facts or {}, rails, given(opts(option(row, "subnet"))))
    result["records"] = rc.finding_records(result["findings"])
    result["messages"] = [f.get("message") for f in result["findings"]]
    return result


# ------------------------------------------------------------------ the first pass judged

def first_pass(row, opts, run, sides_by_host, module_rcs):
    """The first pass's pair records, findings and summary (with ``first_pass`` thresholds: the fleet check of
    ``thresholds.evaluate`` applied here, so a link far below its peers fails with no rate known)."""
    after = row["thresholds"] == "after_retests"
    first = analyze_pairs(sum(sides_by_host.values(), []), jobs=run["jobs"], family=row["pair_family"],
                          min_fraction=number(opts("commcheck_min_fraction")),
                          # a spine plan's jobs hold their own expectation (the given rate over the oversubscription)
                          expected_gbps=None if run.get("pattern") == "spine" else expected(row, opts), outlier_z=number(opts("commcheck_outlier_z")),
                          outlier_min_rel=number(opts("commcheck_outlier_min_rel")), unreachable=run["unreachable"],
                          skipped=run["skipped_pairs"],
                          fleet_min_fraction=number(opts("commcheck_fleet_min_fraction")) if after else None,
                          killed=killed_hosts(module_rcs or {}))
    if after:
        return first
    judged = th.evaluate(first["records"], [], number(opts("commcheck_min_fraction")) or None, None, None,
                         number(opts("commcheck_outlier_z")), number(opts("commcheck_outlier_min_rel")),
                         set_verdicts=True, fleet_min_fraction=number(opts("commcheck_fleet_min_fraction")))
    present = set(r.get("verdict") for r in judged["records"] + first["findings"])
    summary = dict(first["summary"], verdicts=dict(sorted(Counter(r["verdict"] for r in judged["records"]).items())),
                   verdict=next((v for v in ("error", "fail", "warn", "pass") if v in present), "skipped"))
    return dict(first, records=judged["records"], thresholds=judged["summary"], summary=summary)


def expected(row, opts):
    value = number(opts(row["expected"]))
    return value if value > 0 else None


# ------------------------------------------------------------------ retests

def retests(row, opts, first, fleet, run, forks, now=None):
    """The retest plan of the failing pairs (as is, with known-good partners, control and cross pairs), shaped
    to run like the first pass, and the line that says how many run."""
    planned = rp.plan_retests(retestable(first["records"]), (fleet.get("facts") or {}).get("rails") or {},
                              int(number(opts("commcheck_retest_repeats"))), truthy(opts("commcheck_retest_partners")),
                              retest_base_port(row, opts, run), bad_verdicts(opts), run["unreachable"],
                              int(number(opts("commcheck_retest_max"))),
                              RETEST_ROUND_OFFSET, opts(option(row, "strategy")) == "pipelined",
                              int(number(opts("commcheck_retest_per_host"))) or None, row["tests"] is not None)
    return _retest_pass(row, opts, run, forks, planned, 1, {}, now)


def retest_again(row, opts, first, fleet, run, last, retest_sides, forks, now=None):
    """The next retest pass (``last``: the pass before, as :func:`retests` or this returned it; ``retest_sides``:
    the sides every pass so far measured): the pairs not measured yet that separate the hypotheses the evidence
    still leaves open (``retest_design.next_pass``); none once nothing is ambiguous, the pass before planned
    nothing, or ``commcheck_retest_rounds`` passes after the first have run. Every result carries all the passes'
    jobs, retests and skips so far (``all_rounds``, ``all_retests``, ``all_skipped``) for ``judge``."""
    count = int(number(last.get("retest_pass"))) + 1
    left = int(number(opts("commcheck_retest_max"))) - len(last.get("all_retests") or [])
    nothing = {"retests": [], "rounds": [], "skipped": [], "hosts": [], "summary": {}}
    if count < 2 or not last.get("rounds") or count > 1 + int(number(opts("commcheck_retest_rounds"))) or left <= 0:
        return _retest_pass(row, opts, run, forks, nothing, max(count - 1, 1), last, now, done=True)
    records = retestable(first["records"])
    after = row["thresholds"] == "after_retests"
    evidence = list(records) + jd.judged_retests(
        records, row["pair_family"], retest_sides, last.get("all_rounds") or [], retest_expectation(row, opts, first),
        number(opts("commcheck_fleet_min_fraction")) if after else None)
    planned = rd.next_pass(evidence, count, (fleet.get("facts") or {}).get("rails") or {},
                           max(1, int(number(opts("commcheck_retest_repeats")))), retest_base_port(row, opts, run),
                           bad_verdicts(opts), run["unreachable"], left, RETEST_ROUND_OFFSET * count,
                           opts(option(row, "strategy")) == "pipelined", row["tests"] is not None)
    if not planned["rounds"]:
        return _retest_pass(row, opts, run, forks, nothing, count - 1, last, now, done=True)
    return _retest_pass(row, opts, run, forks, planned, count, last, now)


def _retest_pass(row, opts, run, forks, planned, count, last, now, done=False):
    """A retest pass shaped to run like the first pass, with every pass's jobs, retests and skips so far."""
    out = run_shape(row, opts, planned["rounds"], run["timeout"], forks, now)
    summary = planned["summary"]
    jobs_only = [{"jobs": rnd["jobs"]} for rnd in planned["rounds"]]
    out.update(hosts=planned["hosts"], summary=summary, retests=planned["retests"],
               skipped_retests=planned["skipped"], retest_pass=count,
               message=None if done else retest_message(summary, count),
               all_rounds=list(last.get("all_rounds") or []) + jobs_only,
               all_retests=list(last.get("all_retests") or []) + planned["retests"],
               all_skipped=list(last.get("all_skipped") or []) + planned["skipped"],
               passes=list(last.get("passes") or []) + ([] if done else [summary]))
    return out


def retestable(records):
    """The records a retest may repeat: not a loopback pair's (one host's two ports, planned by its own pattern:
    a retest pairs hosts)."""
    return [rec for rec in records if not loopback.is_loopback(rec)]


def retest_base_port(row, opts, run):
    """The first port of the retests: the family's base port, or (``past_first_pass``) the one after the first
    pass's last, so a late side of the first pass never meets a retest."""
    base_port = int(number(opts(option(row, "base_port"))))
    if row["retest_port"] == "past_first_pass":
        base_port = max([int(number(job.get("tcp_port"))) for job in run["jobs"]] + [base_port - 1]) + 1
    return base_port


def bad_verdicts(opts):
    return tuple(opts("commcheck_retest_verdicts") or ()) or rt.BAD_VERDICTS


def retest_message(summary, count=1):
    if not summary.get("failing_pairs") or (count > 1 and not summary.get("planned")):
        return None
    if count > 1:
        return ("retest pass %d: %s pair(s) not measured yet that separate what is still ambiguous (%s with "
                "known-good partners, %s control or cross)" % (count, summary["planned"], summary["partner"],
                                                               summary["control"] + summary["cross"]))
    return ("%s retest(s) of %s failing pair(s) (%s as is, %s with known-good partners, %s control or cross)"
            % (summary["planned"], summary["failing_pairs"], summary["as_is"], summary["partner"],
               summary["control"] + summary["cross"]))


# ------------------------------------------------------------------ port counters

def counter_deltas(row, host, before, after):
    """What a host's port counters did while its tests ran (None when either reading is missing)."""
    if not isinstance(before, dict) or not isinstance(after, dict):
        return None
    snap_before, snap_after = ct.snapshot(before), ct.snapshot(after)
    deltas = ct.deltas(snap_before, snap_after, host)
    return {"deltas": deltas, "records": ct.counter_records(host, snap_before, snap_after, row["check"]),
            "evidence": ct.port_evidence(deltas, host)}


def counter_trend(opts, history, counter_records):
    """Port counters that keep rising over the last runs (history plus this run's readings)."""
    runs = int(number(opts("commcheck_counter_trend_runs")))
    items = ct.trend(list(history) + list(counter_records), runs)
    return {"trends": items, "records": ct.trend_records(items)}


def trend_asked(row, opts):
    return bool(row.get("counters")) and truthy(opts(option(row, "counters"))) and \
        number(opts("commcheck_counter_trend_runs")) >= 2


# ------------------------------------------------------------------ GPU memory

def gpu_states(row, opts, hosts, rails_by_host, facts_by_host, kernels):
    """Each host's GPUDirect state: its GPUs paired with their nearest NIC, how GPU memory is registered."""
    return dict((host, gpu_plan.host_gpudirect(facts_by_host.get(host), [r for r in rails_by_host.get(host) or []
                                                                         if isinstance(r, dict)],
                                               opts(option(row, "gpudirect")), truthy(opts(option(row, "gpudirect_dmabuf"))),
                                               kernels.get(host), opts(option(row, "gpudirect_pairs"))))
                for host in hosts)


def gpu_rounds(row, opts, hosts, rails, states, timeout, forks, now=None, topology=None):
    """The rounds from GPU memory (the bandwidth steps, pairs whose both ends have GPUDirect), in the first pass's
    pattern (``topology``: :func:`fleet_topology`, for a topology pattern)."""
    rounds = schedule(row, opts, hosts, rails, topology)[0]
    plans = gpu_plan.gpu_round_plans(rounds, rails, states, tests_of(row, opts),
                                     int(number(opts(option(row, "base_port")))), given(opts(option(row, "rail_numbers"))))
    out = run_shape(row, opts, plans, timeout, forks, now)
    out.update(hosts=list(hosts), jobs=flat(plans, "jobs"), states=states)
    return out


def gpu_retests(row, opts, gpu_sides, gpu_run, fleet, run, forks, now=None):
    """The pairs from GPU memory judged like the first pass (``records``, marked with their GPUs), and the retest
    plan of the failing ones (``verdicts/gpu_retests.py``: the retest planner GPU round by GPU round, each side
    from its GPU), shaped to run like the pass from GPU memory."""
    jobs = gpu_run.get("jobs") or []
    records = analyze_pairs(gpu_sides, jobs=jobs, family=row["pair_family"],
                            min_fraction=number(opts("commcheck_min_fraction")), expected_gbps=expected(row, opts),
                            outlier_z=number(opts("commcheck_outlier_z")),
                            outlier_min_rel=number(opts("commcheck_outlier_min_rel")))["records"] if jobs else []
    marked = gpu_plan.mark_gpu_records(records, jobs)
    planned = {"retests": [], "rounds": [], "skipped": [], "hosts": [], "summary": {}}
    if number(opts("commcheck_retest_repeats")) > 0:
        planned = gpu_rt.plan_gpu_retests(
            marked, (fleet.get("facts") or {}).get("rails") or {}, gpu_run.get("states") or {},
            int(number(opts("commcheck_retest_repeats"))), truthy(opts("commcheck_retest_partners")),
            int(number(opts(option(row, "base_port")))), bad_verdicts(opts), run.get("unreachable") or [],
            int(number(opts("commcheck_retest_max"))), int(number(opts("commcheck_retest_per_host"))) or None)
    out = run_shape(row, opts, planned["rounds"], gpu_run.get("timeout") or run.get("timeout") or 0, forks, now)
    out.update(records=marked, hosts=planned["hosts"], retests=planned["retests"], skipped=planned["skipped"],
               summary=planned["summary"], message=retest_message(planned["summary"]) if planned["rounds"] else None)
    return out


def gpu_judge(row, opts, host_records, gpu_first, retest_sides, gpu_run, history=()):
    """The pairs from GPU memory after their retests and thresholds (``records``), GPU-memory bandwidth next to
    host-memory bandwidth per host, rail and GPU with its findings, and the lines that show it."""
    judged = gpu_rt.judge_gpu_records(gpu_first.get("records") or [], retest_sides, gpu_first,
                                      retest_expectation(row, opts, {"records": []}), bad_verdicts(opts),
                                      threshold_options(opts, history),
                                      number(opts("commcheck_fleet_min_fraction")))
    out = gpu_verdicts.gpudirect_verdicts([r for r in host_records if isinstance(r, dict)] + judged["records"],
                                          gpu_run.get("states") or {}, number(opts(option(row, "gpudirect_min_ratio"))))
    out.update(records=judged["records"], retests=judged["summary"])
    out["lines"] = ["GPUDirect %s rail %s (%s, GPU %s): GPU memory %s Gb/s, host memory %s Gb/s (ratio %s%s)"
                    % (r["host"], r["rail"], r["device"], r["gpu"], r["cuda_gbps"], r["host_gbps"], r["ratio"],
                       ", SLOW" if r["slow"] else "") for r in out["rows"]]
    return out


def gpu_named(opts, gpu, host_records):
    """The GPU pass's records and findings to publish once the host-memory records are judged: a GPU whose path is
    slow while host memory on its NIC is fine is named (``gpudirect_gpu_slow``), and the ``gpudirect_slow`` row of
    that GPU is its, not a setting's."""
    rows = gpu_loc.slow_gpus(gpu.get("records") or [], host_records, number(opts("commcheck_outlier_z")),
                             number(opts("commcheck_outlier_min_rel")))
    named = gpu_loc.named_places(rows)
    kept = [f for f in gpu.get("findings") or [] if (f.get("params") or {}).get("finding") != "gpudirect_slow"
            or (f.get("host"), f["params"].get("rail"), f["params"].get("gpu")) not in named]
    return list(gpu.get("records") or []) + kept + gpu_loc.findings(rows)


# ------------------------------------------------------------------ the verdicts

def judge(row, opts, first, retest_plan, retest_sides, counters, history, trend_history, topology, extras):
    """Retests judged and classified, the thresholds, the most likely faulty components; the records to publish
    and the verdict of the check. ``extras``: ``preflight``, ``sides`` (the first pass's, for NUMA placement)
    and ``gpudirect`` results, where the family has them."""
    after = row["thresholds"] == "after_retests"
    counters = [c for c in counters if isinstance(c, dict)]
    deltas = sum((c.get("deltas") or [] for c in counters), [])
    counter_records = sum((c.get("records") or [] for c in counters), [])
    retested = dict(retest_plan or {})
    if "skipped_retests" in retested:
        retested["skipped"] = retested.pop("skipped_retests")
    if "all_rounds" in retested:
        # every retest pass's jobs (the last pass's plan alone holds only its own)
        retested.update(rounds=retested["all_rounds"], skipped=retested.get("all_skipped") or [])
    judged = jd.judge_retests(first["records"], row["pair_family"], retest_sides, retested, retest_expectation(row, opts, first),
                              opts("commcheck_retest_verdicts"), threshold_options(opts, history) if after else None,
                              deltas, number(opts("commcheck_fleet_min_fraction")) if after else None,
                              first["findings"] if after else None, topo.check_hosts(topology))
    trend = counter_trend(opts, trend_history, counter_records) if trend_asked(row, opts) else {}
    gpu = extras.get("gpudirect") or {}
    publish = (judged["records"] + judged["findings"] + kept_findings(row, first, judged)
               + ((extras.get("preflight") or {}).get("records") or []) + counter_records
               + (numa.finding_records([s for s in extras.get("sides") or [] if isinstance(s, dict)], row["check"])
                  if row.get("placement") else [])
               + (trend.get("records") or []) + (gpu_named(opts, gpu, judged["records"]) if gpu else [])
               + judged["summary_records"])
    verdict = jd.check_verdict(publish, list(row["kinds"]) + ["finding"])
    out = {"retests": judged["retests"], "localized": judged["localized"], "counter_trend": trend,
           "publish": publish, "verdict": verdict}
    out["message"] = outcome(row, first, out)
    return out


def retest_expectation(row, opts, first):
    """How a retest side is judged: against the family's expected rate; a ``first_pass`` family without one,
    against the first pass's fleet median, failing below the fleet threshold's fraction of it."""
    options = {"min_fraction": number(opts("commcheck_min_fraction")), "expected_gbps": expected(row, opts),
               "outlier_z": number(opts("commcheck_outlier_z")),
               "outlier_min_rel": number(opts("commcheck_outlier_min_rel"))}
    if row["thresholds"] == "first_pass" and options["expected_gbps"] is None:
        medians = [r["metrics"]["fleet_median"] for r in first["records"]
                   if "fleet_median" in (r.get("metrics") or {})]
        options.update(min_fraction=number(opts("commcheck_fleet_min_fraction")),
                       expected_gbps=medians[0] if medians else None)
    return options


def threshold_options(opts, history):
    """The hardware, fleet and history thresholds applied after the retests."""
    efficiency = opts("commcheck_efficiency")
    return {"history": list(history or []),
            "efficiency": efficiency if given(efficiency) is not None else (number(opts("commcheck_min_fraction")) or None),
            "outlier_z": number(opts("commcheck_outlier_z")), "outlier_min_rel": number(opts("commcheck_outlier_min_rel")),
            "fleet_min_fraction": number(opts("commcheck_fleet_min_fraction")),
            "history_threshold": number(opts("commcheck_history_threshold")),
            "history_k": int(number(opts("commcheck_history_runs")))}


def kept_findings(row, first, judged):
    """The first pass's findings that still stand: an ``after_retests`` family's culprits named again from the
    judged records (``other_findings``); a ``first_pass`` family's all of them when localization named nothing,
    else those of its other pair kinds."""
    if row["thresholds"] == "after_retests":
        return judged["other_findings"]
    if not judged["localized"].get("components"):
        return list(first["findings"])
    kind = row["kinds"][0]
    return [f for f in first["findings"] if (f.get("params") or {}).get("family") != kind]


def outcome(row, first, verdicts):
    """The line that says how the check went."""
    kinds = set(row["kinds"])
    counts = Counter(r.get("verdict") for r in verdicts["publish"] if r.get("kind") in kinds)
    loc = verdicts["localized"]["summary"]
    tested = verdicts["retests"] or {}
    head = "%s %s: %s results %s;" % (row["label"], verdicts["verdict"], first["summary"]["records"],
                                      ", ".join("%s %d" % (v, counts.get(v, 0)) for v in OUTCOME_VERDICTS))
    if row["thresholds"] == "after_retests":
        named = "bad nodes %s, bad NICs %s, bad links %s, fabric %s, flaky %s" % (
            loc["hosts"], loc["rails"], loc["links"], loc["fabric"], loc["flaky"])
    else:
        findings = [f for f in verdicts["publish"] if f.get("kind") == "finding"]
        nodes = unique(f["host"] for f in findings if f["params"].get("finding") == "bad_node")
        links = ["%s-%s" % (f["host"], f["peer"]) for f in findings if f["params"].get("finding") == "bad_link"]
        named = "bad nodes %s, bad links %s, flaky %s" % (nodes, links, loc["flaky"])
    return "%s %s, unreachable %s; retests %s (confirmed %d, flaky %d); most likely %s" % (
        head, named, first["summary"]["unreachable"], tested.get("retests", 0), len(tested.get("confirmed") or []),
        len(tested.get("flaky") or []), loc["most_likely"])


def unique(items):
    out = []
    for item in items:
        if item not in out:
            out.append(item)
    return out


def share(records, fleet):
    """The records this controller publishes: all of them, or a slice's share of a split run."""
    records = [rec for rec in records if isinstance(rec, dict)]
    if int(fleet.get("slices") or 1) <= 1:
        return records
    return slice_meeting.my_share(records, fleet.get("own") or [], fleet.get("hosts") or [], bool(fleet.get("leader")))
