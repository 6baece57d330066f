# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
name: commcheck_compare
short_description: Compare check records with a baseline built from history records
version_added: 1.0.0
description:
  - For each record, the baseline is, per metric, the median over the last O(k) passing runs of history
    records with the same kind, host, peer and params (or the records of the run O(baseline_run)).
  - Returns the records with C(baseline) (medians, runs used, relative changes and each metric's run-to-run
    spread) and C(regression) (null, or the metrics that moved too far in the bad direction) set.
  - Bandwidth-like metrics (C(*_gbps), C(*_gbs), C(busbw)) regress when they drop; latency/time-like metrics
    (C(*_us), C(*_ms), C(lat*)) regress when they rise; other metrics are not compared.
  - A check is compared only with at least O(min_runs) earlier passing runs (not for O(baseline_run)).
  - A metric regresses when its change is beyond the larger of its configured change (O(thresholds), else
    O(threshold) for bandwidth and the wider of O(threshold) and O(latency_threshold) for latency/time) and
    O(spread_k) x MAD / median of its values in the earlier runs, so a change inside the usual run-to-run
    spread of that check is not a regression.
author:
  - commcheck developers (@clusterops)
positional: history
options:
  _input:
    description: The records of the run to compare (results contract).
    type: list
    elements: dict
    required: true
  history:
    description:
      - History records to build the baselines from, for example from the C(clusterops.commcheck.commcheck_history)
        lookup; each needs C(run_id) and C(time).
    type: list
    elements: dict
    required: true
  k:
    description: Number of most recent passing runs whose median is the baseline.
    type: int
    default: 5
  threshold:
    description: Relative change that counts as a regression (0.2 = 20%).
    type: float
    default: 0.2
  thresholds:
    description:
      - Relative change per metric name, for example C(lat_us=0.3); overrides O(threshold) and
        O(latency_threshold) for that metric.
    type: dict
    default: {}
  latency_threshold:
    description: The least relative rise of a latency/time metric that counts as a regression; small-message
      latency moves much more between healthy runs than bandwidth does.
    type: float
    default: 0.5
  spread_k:
    description: A change must also exceed this many MADs (relative to the median) of the check's earlier runs.
    type: float
    default: 5.0
  baseline_run:
    description: Use the records of this run as the baseline instead.
    type: str
  exclude_runs:
    description: Runs left out of the baselines (normally the current run).
    type: list
    elements: str
    default: []
  min_runs:
    description: Compare only when the baseline has at least this many earlier passing runs.
    type: int
    default: 3
  ignore_params:
    description: Params left out when matching a record with its history (how a check was scheduled).
    type: list
    elements: str
    default: [round, step, tcp_port, server, client, duration, iterations, attempt, retest]
'''

EXAMPLES = r'''
- name: Flag regressions of this run's RDMA bandwidth against the last 5 passing runs
  ansible.builtin.set_fact:
    compared: >-
      {{ commcheck_run_records | clusterops.commcheck.commcheck_compare(
           query('clusterops.commcheck.commcheck_history', 'rdma_bw', since='30d'),
           k=5, threshold=0.15, exclude_runs=[commcheck_run_id]) }}

- name: Name the regressed checks
  ansible.builtin.debug:
    msg: "{{ compared | selectattr('regression') | map(attribute='host') | list }}"
'''

RETURN = r'''
_value:
  description: The input records, each with C(baseline) (dict or null) and C(regression) (dict or null) added.
  type: list
  elements: dict
'''

from ansible.errors import AnsibleFilterError

from ansible_collections.clusterops.commcheck.plugins.module_utils.options import option_rules as rules
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import baseline


def _checked_numbers(k, threshold, min_runs, thresholds, latency_threshold, spread_k):
    """The numeric options, each in its range (a bad one raises ValueError naming it)."""
    per_metric = {}
    for name, value in (thresholds or {}).items():
        rules.check_name("thresholds:", str(name), "word")
        per_metric[str(name)] = float(rules.check_number("thresholds.%s" % name, value, 0, 10))
    return {"k": rules.check_int("k", k, 1, 1000), "threshold": float(rules.check_number("threshold", threshold, 0, 10)),
            "min_runs": rules.check_int("min_runs", min_runs, 1, 1000), "thresholds": per_metric,
            "latency_threshold": float(rules.check_number("latency_threshold", latency_threshold, 0, 10)),
            "spread_k": float(rules.check_number("spread_k", spread_k, 0, 100))}


def commcheck_compare(records, history, k=baseline.DEFAULT_K, threshold=baseline.DEFAULT_THRESHOLD,
                      baseline_run=None, exclude_runs=None, min_runs=baseline.DEFAULT_MIN_RUNS,
                      ignore_params=baseline.DEFAULT_IGNORE_PARAMS, thresholds=None, latency_threshold=baseline.DEFAULT_LATENCY_THRESHOLD,
                      spread_k=baseline.DEFAULT_SPREAD_K):
    if not isinstance(records, list) or not isinstance(history, list):
        raise AnsibleFilterError("commcheck_compare: records and history must be lists of records")
    try:
        numbers = _checked_numbers(k, threshold, min_runs, thresholds, latency_threshold, spread_k)
        return baseline.compare(records, history, baseline_run=baseline_run or None, exclude_runs=exclude_runs or (),
                                ignore_params=ignore_params or (), **numbers)
    except (TypeError, ValueError, AttributeError) as exc:
        raise AnsibleFilterError("commcheck_compare: %s" % exc)


class FilterModule(object):

    def filters(self):
        return {"commcheck_compare": commcheck_compare}
