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
  - Returns the records with C(baseline) (medians, runs used, relative changes) and C(regression) (null, or
    the metrics that moved beyond O(threshold) in the bad direction) set.
  - Bandwidth-like metrics (C(*_gbps), C(*_gbs), C(busbw)) regress when they drop; latency/time-like metrics
    (C(*_us), C(*_ms), C(lat*)) regress when they rise; other metrics are not compared.
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
  baseline_run:
    description: Use the records of this run as the baseline instead.
    type: str
  exclude_runs:
    description: Runs left out of the baselines (normally the current run).
    type: list
    elements: str
    default: []
  min_runs:
    description: Compare only when the baseline has at least this many runs.
    type: int
    default: 1
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

from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import baseline


def commcheck_compare(records, history, k=5, threshold=0.2, baseline_run=None, exclude_runs=None, min_runs=1,
                      ignore_params=baseline.DEFAULT_IGNORE_PARAMS):
    if not isinstance(records, list) or not isinstance(history, list):
        raise AnsibleFilterError("commcheck_compare: records and history must be lists of records")
    try:
        return baseline.compare(records, history, k=int(k), threshold=float(threshold),
                                baseline_run=baseline_run or None, exclude_runs=exclude_runs or (),
                                min_runs=int(min_runs), ignore_params=ignore_params or ())
    except (TypeError, ValueError, AttributeError) as exc:
        raise AnsibleFilterError("commcheck_compare: %s" % exc)


class FilterModule(object):

    def filters(self):
        return {"commcheck_compare": commcheck_compare}
