# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Compare check records with a baseline from history and flag regressions.

The baseline of a record is, per metric, the median over the last K passing
runs of records with the same kind, host, peer and params (or the records of
one named run). A record regresses when a higher-is-better metric (bandwidth)
falls more than ``threshold`` below its baseline, or a lower-is-better metric
(latency, time) rises more than ``threshold`` above it.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json

from ansible_collections.clusterops.commcheck.plugins.module_utils.records import history
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts.values import finite_number

DEFAULT_K = 5
DEFAULT_THRESHOLD = 0.2
# Params that say how a check was scheduled, not what was measured: a pair
# measured in another round, on another TCP port or for longer is the same check.
DEFAULT_IGNORE_PARAMS = ("round", "step", "tcp_port", "server", "client", "duration", "iterations",
                         "attempt", "retest")
HIGHER, LOWER, IGNORED = 1, -1, 0

_SKIP_PREFIXES = ("expected", "min_", "threshold", "limit", "target", "duration", "timeout")
_SKIP_SUFFIXES = ("_fraction", "_count", "_iterations", "_ratio", "_pct", "_percent", "_errors", "_change")
_HIGHER_SUFFIXES = ("_gbps", "_gbs", "_mbps", "_mbs", "_mpps", "_gbits", "_gibps", "_bw")
_LOWER_SUFFIXES = ("_us", "_ms", "_ns", "_s", "_sec", "_seconds")


def is_retest(record):
    """A re-measurement of a failing check (params.retest): its own run's evidence, not a check to baseline."""
    return bool((record.get("params") or {}).get("retest"))


def metric_direction(name):
    """HIGHER for bandwidth-like metrics, LOWER for latency/time-like ones, IGNORED otherwise."""
    name = str(name).lower()
    if name.startswith(_SKIP_PREFIXES) or name.endswith(_SKIP_SUFFIXES):
        return IGNORED
    if name.endswith(_HIGHER_SUFFIXES) or "bandwidth" in name or "busbw" in name or "algbw" in name:
        return HIGHER
    if name.endswith(_LOWER_SUFFIXES) or name.startswith(("lat", "t_")) or "latency" in name:
        return LOWER
    return IGNORED


def median(values):
    values = sorted(values)
    if not values:
        return None
    middle = len(values) // 2
    if len(values) % 2:
        return values[middle]
    return (values[middle - 1] + values[middle]) / 2.0


def record_key(record, ignore_params=()):
    """The identity of a check: kind, host, peer and params (minus ignore_params) as one hashable tuple."""
    params = record.get("params") or {}
    if ignore_params:
        params = dict((k, v) for k, v in params.items() if k not in ignore_params)
    return (record.get("kind"), record.get("host"), record.get("peer"),
            json.dumps(params, sort_keys=True, separators=(",", ":"), default=str))


def describe_key(key):
    """'rdma_bw a->b [device=mlx5_0 op=write]' (scheduling params left out)."""
    kind, host, peer, params = key
    text = "%s %s" % (kind, host if peer is None else "%s->%s" % (host, peer))
    params = json.loads(params)
    shown = [k for k in sorted(params) if k not in DEFAULT_IGNORE_PARAMS and not isinstance(params[k], (dict, list))]
    if shown:
        text += " [%s]" % " ".join("%s=%s" % (k, params[k]) for k in shown)
    return text


def comparable_metrics(metrics):
    """Numeric metrics that have a direction: {name: value}."""
    out = {}
    for name, value in (metrics or {}).items():
        number = finite_number(value)
        if number is not None and metric_direction(name) != IGNORED:
            out[name] = number
    return out


class BaselineBuilder(object):
    """Collects history records (any order) and yields per-key baselines.

    Only records whose key is in ``keys`` (when given) are kept, so a stream
    of a million history lines costs memory only for the checks of interest.
    """

    def __init__(self, k=DEFAULT_K, keys=None, exclude_runs=(), baseline_run=None, ignore_params=(),
                 verdicts=("pass",)):
        self.k = max(1, int(k))
        self.keys = keys
        self.exclude_runs = set(r for r in (exclude_runs or ()) if r)
        self.baseline_run = baseline_run
        self.ignore_params = tuple(ignore_params or ())
        self.verdicts = tuple(verdicts)
        # key -> run_id -> [time, {metric: [values]}]
        self._runs = {}

    def add(self, record):
        run = record.get("run_id")
        if record.get("kind") in ("summary", "regression") or is_retest(record):
            return False
        if run in self.exclude_runs:
            return False
        if self.baseline_run is not None:
            if run != self.baseline_run or record.get("verdict") in ("error", "skipped"):
                return False
        elif record.get("verdict") not in self.verdicts:
            return False
        key = record_key(record, self.ignore_params)
        if self.keys is not None and key not in self.keys:
            return False
        metrics = comparable_metrics(record.get("metrics"))
        if not metrics:
            return False
        entry = self._runs.setdefault(key, {}).setdefault(run, [record.get("time") or "", {}])
        entry[0] = max(entry[0], record.get("time") or "")
        for name, value in metrics.items():
            entry[1].setdefault(name, []).append(value)
        return True

    def add_all(self, records):
        for record in records:
            self.add(record)
        return self

    def satisfied(self):
        """True when reading older history cannot change the baselines any more."""
        if self.keys is None:
            return False
        if self.baseline_run is not None:
            return bool(self._runs)
        return all(len(self._runs.get(key, ())) >= self.k for key in self.keys)

    def baselines(self):
        """{key: {"metrics": {name: median}, "runs": [run ids, oldest first], "n": runs used}}."""
        result = {}
        for key, runs in self._runs.items():
            ordered = sorted(runs.items(), key=lambda item: (item[1][0], str(item[0])))[-self.k:]
            per_metric = {}
            for _run, (_time, metrics) in ordered:
                for name, values in metrics.items():
                    per_metric.setdefault(name, []).append(median(values))
            result[key] = {
                "metrics": dict((name, median(values)) for name, values in per_metric.items()),
                "runs": [run for run, _entry in ordered],
                "n": len(ordered),
            }
        return result


def compare_record(record, baseline, threshold=DEFAULT_THRESHOLD, thresholds=None, min_runs=1):
    """Return a copy of record with ``baseline`` and ``regression`` (dict or None) set."""
    out = dict(record)
    if not baseline or is_retest(record) or baseline.get("n", 0) < max(1, int(min_runs)):
        out["baseline"] = None
        out["regression"] = None
        return out
    thresholds = thresholds or {}
    current = comparable_metrics(record.get("metrics"))
    changes, regressed = {}, {}
    for name, base in sorted(baseline["metrics"].items()):
        value = current.get(name)
        if value is None or base is None or base <= 0:
            continue
        change = (value - base) / base
        changes[name] = {"value": value, "baseline": base, "change": round(change, 4)}
        limit = float(thresholds.get(name, threshold))
        direction = metric_direction(name)
        if (direction == HIGHER and change < -limit) or (direction == LOWER and change > limit):
            regressed[name] = dict(changes[name], threshold=limit)
    out["baseline"] = {"metrics": dict(baseline["metrics"]), "runs": list(baseline["runs"]), "n": baseline["n"],
                       "changes": changes}
    if regressed:
        worst = max(regressed.values(), key=lambda m: abs(m["change"]))
        out["regression"] = {"metrics": regressed, "worst_change": worst["change"], "threshold": threshold,
                             "baseline_runs": list(baseline["runs"])}
    else:
        out["regression"] = None
    return out


def compare(records, history_records, k=DEFAULT_K, threshold=DEFAULT_THRESHOLD, baseline_run=None,
            exclude_runs=(), ignore_params=(), thresholds=None, min_runs=1):
    """Compare records with baselines built from history_records (an iterable, streamed once)."""
    records = list(records or [])
    keys = set(record_key(r, ignore_params) for r in records)
    builder = BaselineBuilder(k=k, keys=keys, exclude_runs=exclude_runs, baseline_run=baseline_run,
                              ignore_params=ignore_params)
    builder.add_all(history_records or [])
    bases = builder.baselines()
    return [compare_record(r, bases.get(record_key(r, ignore_params)), threshold, thresholds, min_runs)
            for r in records]


def compare_with_history(records, directory, k=DEFAULT_K, threshold=DEFAULT_THRESHOLD, baseline_run=None,
                         exclude_runs=(), ignore_params=(), thresholds=None, min_runs=1, since=None,
                         until=None, report=None):
    """Like compare(), streaming the baseline records from the history directory."""
    records = list(records or [])
    # only checks with something to compare need a baseline
    measured = [r for r in records if comparable_metrics(r.get("metrics")) and r.get("kind") != "regression"
                and not is_retest(r)]
    kinds = sorted(set(r.get("kind") for r in measured if r.get("kind")))
    keys = set(record_key(r, ignore_params) for r in measured)
    builder = BaselineBuilder(k=k, keys=keys, exclude_runs=exclude_runs, baseline_run=baseline_run,
                              ignore_params=ignore_params)
    if kinds:
        # Newest month first; once every check has K passing runs, older months cannot change the medians.
        selection = history.Selection(kind=kinds, run_id=baseline_run, since=since, until=until)
        for record in history.select(directory, selection, report, newest_first=True, stop=builder.satisfied):
            builder.add(record)
    bases = builder.baselines()
    return [compare_record(r, bases.get(record_key(r, ignore_params)), threshold, thresholds, min_runs)
            for r in records]


def _regressed(records):
    """(record, its regression) of the records that regressed."""
    for record in records or []:
        regression = record.get("regression")
        if regression:
            yield record, regression


def regressions(records):
    """Flat list of regressions: {key, kind, host, peer, params, metric, value, baseline, change, threshold}."""
    out = []
    for record, regression in _regressed(records):
        for name, data in sorted(regression.get("metrics", {}).items()):
            out.append({
                "kind": record.get("kind"), "host": record.get("host"), "peer": record.get("peer"),
                "params": record.get("params") or {}, "metric": name, "value": data["value"],
                "baseline": data["baseline"], "change": data["change"], "threshold": data["threshold"],
                "baseline_runs": regression.get("baseline_runs", []),
                "check": describe_key(record_key(record)),
            })
    return out


def regression_records(records):
    """One ``kind: regression`` record per regressed check, for the history and other consumers."""
    out = []
    for record, regression in _regressed(records):
        worst_name = sorted(regression["metrics"], key=lambda n: -abs(regression["metrics"][n]["change"]))[0]
        worst = regression["metrics"][worst_name]
        params = dict(record.get("params") or {})
        params["check_kind"] = record.get("kind")
        out.append({
            "kind": "regression",
            "host": record.get("host"),
            "peer": record.get("peer"),
            "params": params,
            "metrics": dict(("%s_change" % n, m["change"]) for n, m in regression["metrics"].items()),
            "verdict": "warn",
            "cause": "%s %s is %.3g, %+.0f%% against its baseline %.3g (median of %d run(s))" % (
                describe_key(record_key(record)), worst_name, worst["value"], worst["change"] * 100,
                worst["baseline"], len(regression.get("baseline_runs", []))),
            "fix": "Compare with the baseline runs (%s); look for a slowed link, a changed setting or load on %s." % (
                ", ".join(regression.get("baseline_runs", [])[-3:]), record.get("host")),
            "evidence": [],
        })
    return out
