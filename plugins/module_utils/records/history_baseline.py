# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A run's records compared with their baselines read from the history directory (``verdicts/baseline.py``
decides what a baseline and a regression are; this module reads the history for it)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.clusterops.commcheck.plugins.module_utils.records import history
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import baseline as bl


def compare_with_history(records, directory, k=bl.DEFAULT_K, threshold=bl.DEFAULT_THRESHOLD, baseline_run=None,
                         exclude_runs=(), ignore_params=(), thresholds=None, min_runs=bl.DEFAULT_MIN_RUNS, since=None,
                         until=None, report=None, latency_threshold=bl.DEFAULT_LATENCY_THRESHOLD,
                         spread_k=bl.DEFAULT_SPREAD_K, known=None):
    """Like ``baseline.compare``, streaming the baseline records from the history directory.

    known: a ``history.LinesOfRun`` of the lines an earlier read found of one of ``exclude_runs`` (the run
    read from the history to be judged): passed over unread, since no baseline takes them.
    """
    records = list(records or [])
    ignore_params = frozenset(ignore_params or ())
    check_keys = bl.CheckKeys(ignore_params)
    record_keys = [check_keys.key(r) for r in records]
    # only checks with something to compare need a baseline
    measured = [(r, key) for r, key in zip(records, record_keys)
                if check_keys.metrics(r.get("metrics")) and r.get("kind") != "regression" and not bl.is_retest(r)]
    kinds = sorted(set(r.get("kind") for r, _key in measured if r.get("kind")))
    keys = set(key for _r, key in measured)
    builder = bl.BaselineBuilder(k=k, keys=keys, exclude_runs=exclude_runs, baseline_run=baseline_run,
                                 ignore_params=ignore_params)
    if kinds:
        # Newest month first; once every check has K passing runs, older months cannot change the medians.
        selection = history.Selection(kind=kinds, run_id=baseline_run, since=since, until=until)
        skip = known if known is not None and known.run_id in builder.exclude_runs else None
        for record in history.select(directory, selection, report, newest_first=True, stop=builder.satisfied,
                                     skip=skip):
            builder.add(record)
    # each check's baseline built as its record is judged: never all of them held at once
    return bl.compare_all(records, bl.Baselines(builder), ignore_params, baseline_run,
                          bl.rule_of(threshold, thresholds, min_runs, latency_threshold, spread_k), keys=record_keys)
