# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
name: commcheck_thresholds
short_description: Judge bandwidths against hardware, the fleet and history, and say which tripped
version_added: 1.0.0
description:
  - C(hardware); the link rate (the lower of the pair's ports, doubled when bidirectional) x an efficiency per
    operation (write, read, send 0.9 by default; atomics are not judged). For a collective, the run's own pass
    line when the C(clusterops.commcheck.collective) module judged it (C(threshold_busbw_gbs)), else rails x link
    rate / 8 x an efficiency per collective (all_reduce 0.8, alltoall 0.6, ...), else its C(expected_busbw_gbs) x
    that efficiency.
  - C(fleet); a low outlier among comparable records of the run (robust z-score from median and MAD; for latency
    a high one). Collective runs are comparable within the same library, mode, stage, operation, node and rank
    counts and sizes. An outlier beyond O(fleet_min_fraction) of the median is far and fails.
  - C(history); more than O(history_threshold) below the pair's own baseline (median of its passing values in
    the last O(history_k) runs), or the host's baseline when the pair has no history.
  - Adds C(thresholds) (C(tripped) and each check's numbers) and the metrics C(link_rate_gbps),
    C(hw_expected_gbps), C(fleet_median), C(robust_z), C(history_baseline) to each record.
  - C(latency_tail); a latency pair whose median tripped nothing but whose 99th percentile (C(lat_p99_us)) is a
    fleet outlier (robust z beyond O(outlier_z), at least O(outlier_min_rel) and 2 us above the comparable pairs'
    median p99) is a C(latency_tail) finding (verdict warn); its record gains C(thresholds.tail) and the metric
    C(fleet_median_p99_us).
options:
  _input:
    description: Records of the run (pair records, collective records).
    type: list
    elements: dict
    required: true
  history:
    description: Past records (for example from the C(clusterops.commcheck.commcheck_history) lookup).
    type: list
    elements: dict
  efficiency:
    description: Efficiency per operation (dict op -> fraction, C(default) for the rest) or one number for all.
    type: raw
  collective_efficiency:
    description: Efficiency per collective operation (dict) or one number.
    type: raw
  rates:
    description: Host to rail to link rate in Gb/s (default the records' C(expected_gbps)).
    type: dict
  outlier_z:
    description: Robust z-score beyond which a value is a fleet outlier.
    type: float
    default: 3.5
  outlier_min_rel:
    description: Smallest relative distance from the median that counts as an outlier.
    type: float
    default: 0.2
  fleet_min_fraction:
    description:
      - A fleet outlier below this fraction of the fleet median (latency, lower is better, above the median
        divided by it) is I(far) and, with O(set_verdicts), C(fail) rather than C(warn), history or not.
      - Unset, a fleet outlier only warns.
    type: float
  history_threshold:
    description: Relative drop below the history baseline that trips.
    type: float
    default: 0.2
  history_k:
    description: Runs of history in the baseline.
    type: int
    default: 5
  min_runs:
    description: Earlier passing runs of a check needed before the history check applies (see the baseline rule in docs/verdicts.md).
    type: int
    default: 3
  set_verdicts:
    description:
      - Turn a passing record into C(fail) (hardware tripped, or a far fleet outlier, see O(fleet_min_fraction))
        or C(warn) (fleet or history only).
    type: bool
    default: false
  run_id:
    description: The current run's id (left out of the history).
    type: str
'''

EXAMPLES = r'''
- name: Which thresholds tripped
  ansible.builtin.set_fact:
    judged: "{{ pair_records | clusterops.commcheck.commcheck_thresholds(efficiency={'write': 0.92, 'read': 0.88}) }}"
'''

RETURN = r'''
_value:
  description:
    - C(records) (annotated copies), C(findings) (the C(latency_tail) finding records) and C(summary)
      (C(records) judged, C(tripped) counts per check hardware / fleet / history, C(tripped_records),
      C(only_fleet_or_history), C(hosts_below_history), C(latency_tails)).
  type: dict
'''

from ansible.errors import AnsibleFilterError

from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import thresholds as th


def commcheck_thresholds(records, history=None, efficiency=None, collective_efficiency=None, rates=None,
                         outlier_z=3.5, outlier_min_rel=0.2, history_threshold=0.2, history_k=5, min_runs=3,
                         set_verdicts=False, run_id=None, fleet_min_fraction=None):
    if not isinstance(records, (list, tuple)):
        raise AnsibleFilterError("commcheck_thresholds: the input must be a list of records")
    try:
        return th.evaluate(list(records), history or [], efficiency or None, collective_efficiency or None,
                           rates or None, float(outlier_z), float(outlier_min_rel), float(history_threshold),
                           int(history_k), int(min_runs), bool(set_verdicts), run_id,
                           fleet_min_fraction=None if fleet_min_fraction is None else float(fleet_min_fraction))
    except (th.ThresholdError, TypeError, ValueError) as exc:
        raise AnsibleFilterError("commcheck_thresholds: %s" % exc)


class FilterModule(object):
    def filters(self):
        return {"commcheck_thresholds": commcheck_thresholds}
