# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The collective result of an MPIJob or Volcano Job from its launcher's log (pure).

The launcher's log is what ``mpirun`` printed: the nccl-tests (or hccl_test) output of rank 0, parsed with the
same parsers and judged with the same rules as the collective module's runs, into a result of the collective
module's shape, so ``planning.collective_plan.collective_records`` makes the same ``collective`` records of it.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.clusterops.commcheck.plugins.module_utils.planning import collective_plan as plan_utils
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_hccl_test import parse_hccl_test
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_nccl_tests import parse_nccl_tests
from ansible_collections.clusterops.commcheck.plugins.module_utils.kubernetes import k8s_job_watch as watch

TAIL = 4000
NOT_STARTED_FIX = ("the job's pods could not all start: see the refusal of each pod (its reason, message and fix); "
                   "free or add the resource, fix the image or the node selection, then run again")
FAILED_FIX = "the job failed: see the launcher's log (mpirun's errors) and kubectl describe of the job and its pods"


def _tail(text, limit=TAIL):
    text = text or ""
    return text if len(text) <= limit else "...[%d bytes cut]...\n%s" % (len(text) - limit, text[-limit:])


def job_nodes(observed, manifest_nodes):
    """The nodes the manifest pins the workers to (every one, also those whose worker never started), else those
    the workers ran on as seen while watching."""
    if manifest_nodes:
        return list(manifest_nodes)
    nodes = list(observed.get("worker_nodes") or [])
    return nodes + [line["node"] for line in observed.get("pods") or []
                    if line["role"] == "worker" and line["node"] and line["node"] not in nodes]


def manifest_nodes(manifest):
    """The nodes a job manifest's workers are pinned to (its node affinity's kubernetes.io/hostname values)."""
    spec = manifest.get("spec") or {}
    if manifest.get("kind") == "MPIJob":
        template = ((spec.get("mpiReplicaSpecs") or {}).get("Worker") or {}).get("template") or {}
    else:
        workers = [t for t in spec.get("tasks") or [] if t.get("name") == "mpiworker"]
        template = workers[0].get("template") or {} if workers else {}
    affinity = ((template.get("spec") or {}).get("affinity") or {}).get("nodeAffinity") or {}
    terms = (affinity.get("requiredDuringSchedulingIgnoredDuringExecution") or {}).get("nodeSelectorTerms") or []
    for term in terms:
        for expr in term.get("matchExpressions") or []:
            if expr.get("key") == "kubernetes.io/hostname":
                return [str(v) for v in expr.get("values") or []]
    return []


def parse_log(library, text):
    return parse_nccl_tests(text) if library == "nccl" else parse_hccl_test(text)


def job_result(manifest, collective, observed, log, expectation=None):
    """The collective module's result shape for one job run.

    ``collective``: library, operation, gpus_per_node, gpus_per_process (the job's collective options);
    ``observed``: the last ``k8s_job_watch.observe``; ``log``: {text, rc, timed_out, duration_s} of the launcher
    (text None when no launcher ran); ``expectation``: expected_busbw_gbs, min_fraction, busbw_metric,
    ib_expected.
    """
    collective, expectation = dict(collective or {}), dict(expectation or {})
    kind = watch.kind_of(manifest)
    library = collective.get("library") or "nccl"
    operation = collective.get("operation") or "all_reduce"
    argv = watch.launcher_argv(manifest)
    np_ = watch.ranks(argv) or 1
    nranks = np_ * (int(collective.get("gpus_per_process") or 1) if library == "nccl" else 1)
    text = log.get("text") or ""
    parsed = parse_log(library, text) if text else {}
    launcher_rc = 0 if observed["phase"] == "Succeeded" else log.get("rc") if log.get("rc") else 1
    expected = expectation.get("expected_busbw_gbs")
    min_fraction = float(expectation.get("min_fraction") or 0.8)
    judgement = plan_utils.judge_run(library, operation, nranks, launcher_rc, bool(log.get("timed_out")), parsed,
                                     expected_busbw_gbs=expected, min_fraction=min_fraction,
                                     busbw_metric=expectation.get("busbw_metric") or "max",
                                     ib_expected=bool(expectation.get("ib_expected")))
    nodes = job_nodes(observed, manifest_nodes(manifest))
    if observed["phase"] != "Succeeded" and not parsed.get("rows"):
        # nothing measured: the job's own reason (a pod refused, the job failed) is the cause
        judgement.update(verdict="error", cause=observed.get("cause") or judgement["cause"],
                         fix=NOT_STARTED_FIX if observed.get("refusals") else FAILED_FIX)
    record = {"hosts": nodes, "round": 1, "cmd": argv, "rc": launcher_rc, "timed_out": bool(log.get("timed_out")),
              "duration_s": log.get("duration_s"), "busbw_gbs": judgement["busbw_gbs"],
              "algbw_gbs": judgement["algbw_gbs"], "verdict": judgement["verdict"], "cause": judgement["cause"],
              "fix": judgement["fix"], "bad": judgement["verdict"] in ("fail", "error"),
              "transport": judgement["transport"], "errors": [e.get("code") for e in judgement["errors"]],
              "json_output": False, "evidence": evidence(observed, argv)}
    compact = dict(parsed)
    compact.pop("env", None)
    return {
        "cmd": argv, "rc": launcher_rc, "stdout": _tail(text), "timed_out": bool(log.get("timed_out")),
        "duration_s": log.get("duration_s"), "result": compact, "verdict": judgement["verdict"],
        "cause": judgement["cause"], "fix": judgement["fix"], "busbw_gbs": judgement["busbw_gbs"],
        "algbw_gbs": judgement["algbw_gbs"], "expected_busbw_gbs": expected,
        "threshold_busbw_gbs": round(expected * min_fraction, 6) if expected else None,
        "transport": judgement["transport"], "errors": judgement["errors"], "warnings": judgement["warnings"],
        "runs": [record], "bad_nodes": [], "bisect": None,
        "params": {"library": library, "operation": operation, "hosts": nodes, "nodes": len(nodes), "ranks": nranks,
                   "gpus_per_node": collective.get("gpus_per_node") or 1, "launcher": kind,
                   "transport": "kubernetes", "job": manifest["metadata"]["name"]},
    }


def evidence(observed, argv):
    """What the record shows: the pods' states, each refusal with its fix, and the launcher's command."""
    lines = [watch.summary(observed.get("pods") or [])]
    for name, refusal in sorted((observed.get("refusals") or {}).items()):
        lines.append("%s: %s%s" % (name, refusal["reason"], ": " + refusal["message"] if refusal["message"] else ""))
        if refusal.get("fix"):
            lines.append("fix: %s" % refusal["fix"])
    if argv:
        lines.append(" ".join(argv))
    return lines
