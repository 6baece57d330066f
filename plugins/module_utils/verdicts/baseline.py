# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Compare check records with a baseline from history and flag regressions.

The baseline of a record is, per metric, the median over the last K passing
runs of records with the same kind, host, peer and params (or the records of
one named run). :class:`RegressionRule` is the one place that decides what a
regression is (the report, the history summary through the report's stats,
and the history threshold of ``thresholds.py`` all use it):

- a check needs at least ``min_runs`` earlier passing runs
  (:data:`DEFAULT_MIN_RUNS`); one or two healthy runs say nothing about the
  noise of a check;
- a metric regresses when it moves in its bad direction (bandwidth down,
  latency/time up) by more than the larger of its configured change and
  ``spread_k`` x MAD / median of that check's earlier per-run values, so a
  change inside the run-to-run spread is noise;
- the configured change is the metric's own entry of ``thresholds``, else
  ``threshold`` for bandwidth-like metrics and the wider of ``threshold`` and
  ``latency_threshold`` for lower-is-better ones (small-message latency
  moves far more between healthy runs than bandwidth does);
- regressions are counted per check: one check whose bandwidth, sent and
  received rates all dropped is one regression listing three metrics;
- a regression the whole fleet shares is said once (:func:`shared_groups`): when at least half of the
  :data:`SHARED_MIN_CHECKS` or more checks of one test (the same kind, metric and params but the pair's own
  hosts and devices) regressed on a metric, their median change is a shift they share (the hosts' load, a
  firmware or configuration change, the fabric they all cross). A regressed check whose own change, measured
  from that shift, is within its threshold is ``shared``: it still counts, but it names neither its hosts nor
  its link; one that regressed beyond the shift stands on its own.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import functools
from math import isfinite

from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts.record_flow import flow_label
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts.stats import mad, median
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts.values import finite_number

DEFAULT_K = 5
# a test measured on fewer checks has no fleet of its own to share a shift with
SHARED_MIN_CHECKS = 4
# the params that say which hosts' devices a check ran between, not which test it was
ENDPOINT_PARAMS = ("device", "peer_device", "gpu", "peer_gpu", "gpu_pci", "peer_gpu_pci", "address",
                   "peer_address", "netdev", "peer_netdev")
DEFAULT_THRESHOLD = 0.2
DEFAULT_LATENCY_THRESHOLD = 0.5
DEFAULT_MIN_RUNS = 3
# A change must exceed this many MADs (relative to the median) of the check's
# earlier runs: 5 MAD is a robust z of about 3.4, the fleet outlier rule's scale.
DEFAULT_SPREAD_K = 5.0
# Params that say how a check was scheduled, not what was measured: a pair
# measured in another round, on another TCP port or for longer is the same check.
DEFAULT_IGNORE_PARAMS = ("round", "step", "tcp_port", "server", "client", "duration", "iterations",
                         "attempt", "retest")
HIGHER, LOWER, IGNORED = 1, -1, 0

# what a record carries beside its own measurement (its expectation, the fleet's figures the thresholds compared it
# with, its history baseline) is context shared by the records of a group: baselined per record, one shift of the
# whole fleet would be a regression of every pair
_SKIP_PREFIXES = ("expected", "min_", "threshold", "limit", "target", "duration", "timeout", "fleet_", "hw_expected",
                  "history_")
# a run's maximum latency is one sample (a single late packet): shown, never a baseline
_SKIP_SUFFIXES = ("_fraction", "_count", "_iterations", "_ratio", "_pct", "_percent", "_errors", "_change",
                  "_max_us")
_HIGHER_SUFFIXES = ("_gbps", "_gbs", "_mbps", "_mbs", "_mpps", "_gbits", "_gibps", "_bw")
_LOWER_SUFFIXES = ("_us", "_ms", "_ns", "_s", "_sec", "_seconds")


def is_retest(record):
    """A re-measurement of a failing check (params.retest): its own run's evidence, not a check to baseline."""
    return bool((record.get("params") or {}).get("retest"))


@functools.lru_cache(maxsize=4096)
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


def _frozen(value):
    """A param value as a hashable that keeps its type: 1, 1.0, True and "1" stay four different values."""
    if isinstance(value, str):   # Ansible's unsafe text too: equal to the plain text the history holds
        return value
    kind = type(value)
    if kind is dict:
        return ("dict", tuple(sorted((str(k), _frozen(v)) for k, v in value.items())))
    if kind in (list, tuple):
        return ("list", tuple(_frozen(v) for v in value))
    return (kind.__name__, value if value is None or kind in (int, float, bool) else str(value))


def _thawed(value):
    if not isinstance(value, tuple):
        return value
    if value[0] == "dict":
        return dict((k, _thawed(v)) for k, v in value[1])
    if value[0] == "list":
        return [_thawed(v) for v in value[1]]
    return value[1]


# the tag _frozen gives a scalar of each exact type, looked up instead of tested
_SCALAR_TAGS = {int: "int", float: "float", bool: "bool", type(None): "NoneType"}


def _param_value(value):
    """_frozen(value), with the plain text and the number of most params taken without its tests."""
    if isinstance(value, str):
        return value
    tag = _SCALAR_TAGS.get(type(value))
    return (tag, value) if tag else _frozen(value)


def record_key(record, ignore_params=()):
    """The identity of a check: kind, host, peer and params (minus ignore_params) as one hashable tuple.

    Built for every record of every baseline run (hundreds of thousands at fleet scale), so without JSON, and
    the params in name order (names are unique: sorting the names sorts the pairs).
    """
    params = record.get("params") or {}
    return (record.get("kind"), record.get("host"), record.get("peer"),
            tuple([(k, _param_value(params[k])) for k in sorted(params) if k not in ignore_params]))


# the shapes (param or metric names in their order) a CheckKeys keeps: a fleet's records come in a few
_SHAPES_KEPT = 4096


class CheckKeys(object):
    """:func:`record_key` and :func:`comparable_metrics` of many records, each the same as theirs: records come
    in a few shapes (the same param names and metric names in the same order), so the names a shape keeps are
    sorted or sifted once for it, not once per record (half a million history lines a mesh's baseline)."""

    def __init__(self, ignore_params=()):
        self.ignore_params = frozenset(ignore_params or ())
        self._params = {}
        self._metrics = {}

    def key(self, record):
        params = record.get("params") or {}
        if params.__class__ is not dict:
            return record_key(record, self.ignore_params)
        shape = tuple(params)
        names = self._params.get(shape)
        if names is None:
            names = tuple(sorted(k for k in params if k not in self.ignore_params))
            _keep(self._params, shape, names)
        values = []
        for name in names:
            value = params[name]
            values.append((name, value) if value.__class__ is str else (name, _param_value(value)))
        return (record.get("kind"), record.get("host"), record.get("peer"), tuple(values))

    def metrics(self, metrics):
        if metrics.__class__ is not dict:
            return comparable_metrics(metrics)
        shape = tuple(metrics)
        names = self._metrics.get(shape)
        if names is None:
            names = tuple(name for name in metrics if metric_direction(name) != IGNORED)
            _keep(self._metrics, shape, names)
        out = {}
        for name in names:
            value = metrics[name]
            if value.__class__ is not float or not isfinite(value):
                value = finite_number(value)
                if value is None:
                    continue
            out[name] = value
        return out


def _keep(shapes, shape, names):
    if len(shapes) >= _SHAPES_KEPT:
        shapes.clear()
    shapes[shape] = names


def describe_key(key):
    """'rdma_bw a->b [device=mlx5_0 op=write]', a->b: a sends to b (``record_flow``; scheduling params left out)."""
    kind, host, peer, params = key
    params = dict((k, _thawed(v)) for k, v in params)
    text = "%s %s" % (kind, flow_label({"kind": kind, "host": host, "peer": peer, "params": params}))
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


def relative_spread(values, center=None):
    """MAD / |median| of the earlier runs' values: 0.0 with fewer than two values or a zero median.

    ``center``: their median, when the caller took it already (of values without None).
    """
    values = [v for v in values if v is not None]
    med = median(values) if center is None else center
    if len(values) < 2 or not med:
        return 0.0
    return mad(values, med) / abs(med)


class RegressionRule(object):
    """What a regression is (see the module doc): the one judge of a metric against its earlier runs."""

    def __init__(self, threshold=DEFAULT_THRESHOLD, thresholds=None, min_runs=DEFAULT_MIN_RUNS,
                 latency_threshold=DEFAULT_LATENCY_THRESHOLD, spread_k=DEFAULT_SPREAD_K):
        self.threshold = float(threshold)
        self.thresholds = dict(thresholds or {})
        self.min_runs = max(1, int(min_runs))
        self.latency_threshold = float(latency_threshold)
        self.spread_k = float(spread_k)

    def configured(self, name, direction=None):
        """The configured relative change of a metric: its own entry, else by direction."""
        if name in self.thresholds:
            return float(self.thresholds[name])
        direction = metric_direction(name) if direction is None else direction
        if direction == LOWER:
            return max(self.threshold, self.latency_threshold)
        return self.threshold

    def judge(self, name, value, run_values, direction=None, min_runs=None):
        """{value, baseline, change, threshold, spread, runs, regressed} of one metric; None when not judged.

        ``run_values``: the metric's value in each earlier run (one number per
        run); not judged with fewer than ``min_runs`` of them, without a
        direction or without a positive baseline.
        """
        direction = metric_direction(name) if direction is None else direction
        base = median(run_values)
        needed = self.min_runs if min_runs is None else min_runs
        if direction == IGNORED or value is None or not base or base <= 0 or len(run_values) < needed:
            return None
        change = (value - base) / base
        spread = relative_spread(run_values, base)
        limit = max(self.configured(name, direction), self.spread_k * spread)
        worse = change < -limit if direction == HIGHER else change > limit
        return {"value": value, "baseline": base, "change": round(change, 4), "threshold": round(limit, 4),
                "spread": round(spread, 4), "runs": len(run_values), "regressed": bool(worse)}


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
        self.ignore_params = frozenset(ignore_params or ())
        self.verdicts = tuple(verdicts)
        self._keys = CheckKeys(self.ignore_params)
        # key -> run_id -> [time, {metric: [values]}]
        self._runs = {}

    def add(self, record):
        params = record.get("params") or {}
        if record.get("kind") in ("summary", "regression") or params.get("retest"):   # is_retest, inline
            return False
        run = record.get("run_id")
        if run in self.exclude_runs:
            return False
        if self.baseline_run is not None:
            if run != self.baseline_run or record.get("verdict") in ("error", "skipped"):
                return False
        elif record.get("verdict") not in self.verdicts:
            return False
        key = self._keys.key(record)
        # a check kept already is one of the keys: its key hashed once (a mesh's history, 400,000 times)
        runs = self._runs.get(key)
        if runs is None and self.keys is not None and key not in self.keys:
            return False
        metrics = self._keys.metrics(record.get("metrics"))
        if not metrics:
            return False
        when = record.get("time") or ""
        if runs is None:
            runs = self._runs[key] = {}
        entry = runs.get(run)
        if entry is None:
            # most checks are measured once a run: its metrics as they are, lists only from a second record on
            runs[run] = [when, metrics, True]
            return True
        if entry[2]:
            entry[1] = dict((name, [value]) for name, value in entry[1].items())
            entry[2] = False
        entry[0] = max(entry[0], when)
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
        """{key: {"metrics": {name: median}, "values": {name: [per-run medians]}, "runs": [run ids, oldest
        first], "n": runs used}}."""
        return dict((key, self.baseline(key)) for key in self._runs)

    def baseline(self, key):
        """The baseline of one key, as :meth:`baselines` gives it; None without one."""
        runs = self._runs.get(key)
        if runs is None:
            return None
        ordered = sorted(runs.items(), key=_run_order)[-self.k:]
        per_metric = {}
        for _run, (_time, metrics, single) in ordered:
            for name, values in metrics.items():
                # most runs measured a check once: the median of one value is that value
                per_metric.setdefault(name, []).append(
                    float(values) if single else float(values[0]) if len(values) == 1 else median(values))
        return {
            "metrics": dict((name, median(values)) for name, values in per_metric.items()),
            "values": per_metric,
            "runs": [run for run, _entry in ordered],
            "n": len(ordered),
        }


def _run_order(item):
    """A baseline run's place: its newest record's time, then its id."""
    return item[1][0], str(item[0])


class Baselines(object):
    """The baselines of a :class:`BaselineBuilder`, each built when asked for (``get``, as of the dict
    ``baselines()`` gives), so that they are never all held at once."""

    def __init__(self, builder):
        self._builder = builder

    def get(self, key, default=None):
        found = self._builder.baseline(key)
        return default if found is None else found


def _no_baseline(record):
    out = dict(record)
    out["baseline"] = None
    out["regression"] = None
    return out


def compare_record(record, baseline, rule=None, named_run=False):
    """Return a copy of record with ``baseline`` and ``regression`` (dict or None) set.

    ``rule``: the :class:`RegressionRule`; ``named_run``: the baseline is one
    run the caller chose, so ``min_runs`` does not apply.
    """
    rule = rule or RegressionRule()
    needed = 1 if named_run else rule.min_runs
    if not baseline or is_retest(record) or baseline.get("n", 0) < needed:
        return _no_baseline(record)
    current = comparable_metrics(record.get("metrics"))
    values = baseline.get("values") or dict((n, [m]) for n, m in baseline["metrics"].items())
    changes, regressed = {}, {}
    for name in sorted(baseline["metrics"]):
        verdict = rule.judge(name, current.get(name), values.get(name) or [], min_runs=needed)
        if verdict is None:
            continue
        changes[name] = {"value": verdict["value"], "baseline": verdict["baseline"], "change": verdict["change"],
                         "spread": verdict["spread"]}
        if verdict["regressed"]:
            regressed[name] = dict(changes[name], threshold=verdict["threshold"])
    out = dict(record)
    out["baseline"] = {"metrics": dict(baseline["metrics"]), "runs": list(baseline["runs"]), "n": baseline["n"],
                       "changes": changes}
    out["regression"] = None
    if regressed:
        worst = max(regressed.values(), key=lambda m: abs(m["change"]))
        out["regression"] = {"metrics": regressed, "worst_change": worst["change"], "threshold": rule.threshold,
                             "baseline_runs": list(baseline["runs"])}
    return out


def rule_of(threshold, thresholds, min_runs, latency_threshold, spread_k):
    """The regression rule of these options (``thresholds``: a rule or a dict of its fields, else the others)."""
    return RegressionRule(threshold=threshold, thresholds=thresholds, min_runs=min_runs,
                          latency_threshold=latency_threshold, spread_k=spread_k)


def compare(records, history_records, k=DEFAULT_K, threshold=DEFAULT_THRESHOLD, baseline_run=None,
            exclude_runs=(), ignore_params=(), thresholds=None, min_runs=DEFAULT_MIN_RUNS,
            latency_threshold=DEFAULT_LATENCY_THRESHOLD, spread_k=DEFAULT_SPREAD_K):
    """Compare records with baselines built from history_records (an iterable, streamed once)."""
    records = list(records or [])
    keys = set(record_key(r, ignore_params) for r in records)
    builder = BaselineBuilder(k=k, keys=keys, exclude_runs=exclude_runs, baseline_run=baseline_run,
                              ignore_params=ignore_params)
    builder.add_all(history_records or [])
    return compare_all(records, builder.baselines(), ignore_params, baseline_run,
                       rule_of(threshold, thresholds, min_runs, latency_threshold, spread_k))


def compare_all(records, bases, ignore_params, baseline_run, rule, keys=None):
    """Each record compared with its baseline in ``bases`` (by :func:`record_key`) under ``rule``.

    ``keys``: the records' keys in their order, when the caller built them already.
    """
    named = baseline_run is not None
    if keys is None:
        keys = [record_key(r, ignore_params) for r in records]
    return [compare_record(r, bases.get(key), rule, named) for r, key in zip(records, keys)]


def _regressed_checks(records):
    """One entry per regressed check, in first-seen order: (record, {metric: worst data}, baseline runs).

    Records of one check (same key, scheduling params left out) in one run
    are one check: their regressed metrics merge, the worst change of each kept.
    """
    checks = {}
    for record in records or []:
        regression = record.get("regression")
        if not regression:
            continue
        key = record_key(record, DEFAULT_IGNORE_PARAMS)
        entry = checks.setdefault(key, (record, {}, list(regression.get("baseline_runs", []))))
        for name, data in regression.get("metrics", {}).items():
            old = entry[1].get(name)
            if old is None or abs(data["change"]) > abs(old["change"]):
                entry[1][name] = data
    return list(checks.values())


def _worst_metric(metrics):
    return sorted(metrics, key=lambda n: (-abs(metrics[n]["change"]), n))[0]


_NOT_THE_TEST = frozenset(DEFAULT_IGNORE_PARAMS + ENDPOINT_PARAMS)


def _test_params(record):
    """The params of a check's test across the fleet: its params but the pair's own (hosts, devices, scheduling)."""
    params = record.get("params") or {}
    return tuple([(k, _param_value(params[k])) for k in sorted(params) if k not in _NOT_THE_TEST])


def _regressed_tests(records):
    """The tests with a regressed check: (kind, metric, :func:`_test_params`)."""
    tests = set()
    for record in records:
        metrics = (record.get("regression") or {}).get("metrics")
        if metrics and record.get("baseline") and not is_retest(record):
            params = _test_params(record)
            tests.update((record.get("kind"), name, params) for name in metrics)
    return tests


def shared_groups(records):
    """{test: {kind, metric, params, checks, regressed, change}} of the tests (kind, metric, params) whose checks
    moved together: :data:`SHARED_MIN_CHECKS` or more checks compared with a baseline, at least half of them
    regressed on the metric; ``change``: the median change of all of them.

    Only a test with a regressed check can be one, so only the checks of those tests' kinds and metrics are
    keyed (a fleet-scale run has hundreds of thousands of checks and a few regressions)."""
    records = records or []
    tests = _regressed_tests(records)
    wanted = set((kind, name) for kind, name, _params in tests)
    kinds = set(kind for kind, _name in wanted)
    changes = {}
    for record in records if tests else ():
        base = record.get("baseline")
        if not base or record.get("kind") not in kinds or is_retest(record):
            continue
        regressed = (record.get("regression") or {}).get("metrics") or {}
        params = None
        for name, data in (base.get("changes") or {}).items():
            if (record["kind"], name) not in wanted:
                continue
            params = _test_params(record) if params is None else params
            if (record["kind"], name, params) in tests:
                changes.setdefault((record["kind"], name, params), []).append((data["change"], name in regressed))
    groups = {}
    for test, items in changes.items():
        regressed = sum(1 for _change, worse in items if worse)
        if len(items) >= SHARED_MIN_CHECKS and regressed * 2 >= len(items):
            groups[test] = {"kind": test[0], "metric": test[1], "params": dict((k, _thawed(v)) for k, v in test[2]),
                            "checks": len(items), "regressed": regressed,
                            "change": round(median([change for change, _worse in items]), 4)}
    return groups


def _within_shift(name, data, shift):
    """Whether a regressed metric's change, measured from its test's shared shift, is within its threshold."""
    if 1 + shift <= 0:
        return False
    own = (1 + data["change"]) / (1 + shift) - 1
    return own >= -data["threshold"] if metric_direction(name) == HIGHER else own <= data["threshold"]


def _shared(record, metrics, groups):
    """The shared group of a regressed check when every metric it regressed on is within its test's shift."""
    params = _test_params(record)
    found = dict((name, groups.get((record.get("kind"), name, params))) for name in metrics)
    if not found or any(group is None or not _within_shift(name, metrics[name], group["change"])
                        for name, group in found.items()):
        return None
    return dict(found[_worst_metric(metrics)])


def regressions(records, groups=None):
    """One regression per regressed check: {kind, host, peer, params, check, metrics, baseline_runs, shared} and
    the worst metric's {metric, value, baseline, change, threshold}; ``metrics``: every regressed metric's
    numbers; ``shared``: None, or the group of checks whose shift it shares (``groups``: :func:`shared_groups` of
    the records, found here when not given)."""
    out = []
    groups = shared_groups(records) if groups is None else groups
    for record, metrics, runs in _regressed_checks(records):
        worst = _worst_metric(metrics)
        data = metrics[worst]
        out.append({
            "kind": record.get("kind"), "host": record.get("host"), "peer": record.get("peer"),
            "params": record.get("params") or {}, "metric": worst, "value": data["value"],
            "baseline": data["baseline"], "change": data["change"], "threshold": data["threshold"],
            "metrics": dict((n, dict(m)) for n, m in sorted(metrics.items())),
            "baseline_runs": runs, "check": describe_key(record_key(record)),
            "shared": _shared(record, metrics, groups) if groups else None,
        })
    return out


def shared_text(group):
    """'rdma_lat lat_avg_us [metric=lat op=write rail=0 size=2]: 12 of 16 checks regressed, +85 % median'."""
    shown = " ".join("%s=%s" % (k, v) for k, v in sorted(group["params"].items())
                     if not isinstance(v, (dict, list)))
    return "%s %s%s: %d of %d checks regressed, %+.0f %% median" % (
        group["kind"], group["metric"], " [%s]" % shown if shown else "", group["regressed"], group["checks"],
        group["change"] * 100)


def _regression_fix(record, runs, shared):
    if shared:
        return "Shared with the fleet (%s): look for what these checks share - load on the hosts, a firmware or " \
            "configuration change, the fabric - not this pair." % shared_text(shared)
    return "Compare with the baseline runs (%s); look for a slowed link, a changed setting or load on %s." % (
        ", ".join(runs[-3:]), record.get("host"))


def regression_records(records, groups=None):
    """One ``kind: regression`` record per regressed check, for the history and other consumers."""
    out = []
    groups = shared_groups(records) if groups is None else groups
    for record, metrics, runs in _regressed_checks(records):
        shared = _shared(record, metrics, groups) if groups else None
        worst_name = _worst_metric(metrics)
        worst = metrics[worst_name]
        params = dict(record.get("params") or {})
        params["check_kind"] = record.get("kind")
        out.append({
            "kind": "regression",
            "host": record.get("host"),
            "peer": record.get("peer"),
            "params": params,
            "metrics": dict(("%s_change" % n, m["change"]) for n, m in metrics.items()),
            "verdict": "warn",
            "cause": "%s %s is %.3g, %+.0f%% against its baseline %.3g (median of %d run(s))" % (
                describe_key(record_key(record)), worst_name, worst["value"], worst["change"] * 100,
                worst["baseline"], len(runs)),
            "fix": _regression_fix(record, runs, shared),
            "evidence": [shared_text(shared)] if shared else [],
        })
    return out
