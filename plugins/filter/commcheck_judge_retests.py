# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
name: commcheck_judge_retests
short_description: Judge a pair check after its first pass, the same way for RDMA and TCP
version_added: 1.0.0
description:
  - The steps that turn a pair check's first pass into verdicts one can believe, each handed the one before's
    result. The retest sides are judged like the first pass (as C(clusterops.commcheck.commcheck_pair_verdicts)),
    the failing pairs classified flaky or confirmed (C(clusterops.commcheck.commcheck_retest_classify)), the
    thresholds when O(thresholds) is given (C(clusterops.commcheck.commcheck_thresholds) with verdicts set),
    and the most likely faulty components (C(clusterops.commcheck.commcheck_localize)).
  - The RDMA check (C(clusterops.commcheck.rdma_perf)) applies the thresholds here, after the retests; the TCP
    check (C(clusterops.commcheck.tcp_perf)) applies them to its first pass and leaves O(thresholds) out.
options:
  _input:
    description: The first pass's judged pair records.
    type: list
    elements: dict
    required: true
  family:
    description: The pair check.
    type: str
    choices: [rdma, tcp]
    default: rdma
  retest_sides:
    description: The side results of the retest rounds (what the hosts' test tasks returned).
    type: list
    elements: dict
  plan:
    description: The retest plan (C(clusterops.commcheck.commcheck_retest_plan)); empty when nothing was retested.
    type: dict
  min_fraction:
    description: A retest passes at this fraction of O(expected_gbps).
    type: float
    default: 0.9
  expected_gbps:
    description: What a retested link should carry, Gb/s (left out, the link rate the sides report).
    type: float
  outlier_z:
    description:
      - Robust z-score that makes a retest record a fleet outlier, and beyond which localization counts a link
        as an outlier of its rail (C(clusterops.commcheck.commcheck_localize)'s O(outlier_z)).
    type: float
    default: 3.5
  outlier_min_rel:
    description: Relative distance from the median below which no retest record is an outlier.
    type: float
    default: 0.2
  bad_verdicts:
    description: Verdicts that count as failing for the retests (localization names C(fail) and C(error) only).
    type: list
    elements: str
    default: [fail, error]
  fleet_min_fraction:
    description: The fleet threshold's fraction (C(clusterops.commcheck.commcheck_thresholds)), for the retests no
      expectation judges (as in C(clusterops.commcheck.commcheck_retest_classify)).
    type: float
  thresholds:
    description:
      - Options of C(clusterops.commcheck.commcheck_thresholds) to apply after the retests (C(history),
        C(efficiency), C(fleet_min_fraction), C(history_threshold), C(history_k), C(outlier_z),
        C(outlier_min_rel)); left out, no thresholds are applied here.
    type: dict
  counter_deltas:
    description:
      - Port counter changes of the run (C(clusterops.commcheck.commcheck_counter_deltas)), evidence for the
        components localization names.
    type: list
    elements: dict
  first_findings:
    description:
      - The first pass's findings (C(clusterops.commcheck.commcheck_pair_verdicts)). Those localization does not
        name again come back as C(other_findings), the culprits of the check's other pair kinds (RDMA latency)
        named again from their judged records, so that a pair that passed its retest is no longer a bad link.
    type: list
    elements: dict
  topology:
    description:
      - "Which leaf switch each host's rail hangs off, where known, as C(host -> {rail or RDMA device: {leaf, port,
        source}}) (the C(commcheck_topology) inventory variable of each host over what discovery read; C(source)
        C(inventory), C(lldp) or C(smpquery), C(inventory) when left out). With it, localization names a C(leaf) switch whose
        hosts all fail, or the C(uplink) s of one whose hosts pass with each other and fail across; left out,
        nothing changes."
    type: dict
'''

EXAMPLES = r'''
- name: Judge the retests, the thresholds and the faulty components of the RDMA check
  ansible.builtin.set_fact:
    judged: >-
      {{ rdma_records | clusterops.commcheck.commcheck_judge_retests(
           family='rdma', retest_sides=retest_sides, plan=retest_plan, min_fraction=0.9,
           thresholds={'efficiency': 0.9, 'fleet_min_fraction': 0.5}) }}

- name: Judge the retests and the faulty components of the TCP check (its thresholds judged the first pass)
  ansible.builtin.set_fact:
    judged: >-
      {{ tcp_records | clusterops.commcheck.commcheck_judge_retests(
           family='tcp', retest_sides=retest_sides, plan=retest_plan, min_fraction=0.5, expected_gbps=9.4) }}
'''

RETURN = r'''
_value:
  description:
    - C(records) (the pair records with their retests, classified, thresholds applied when asked, annotated
      with the component they implicate), C(findings) (the components named, and the thresholds'
      C(latency_tail) warnings), C(localized) (all that C(clusterops.commcheck.commcheck_localize) returns),
      C(retests) (the retest summary of C(clusterops.commcheck.commcheck_retest_classify)), C(summary_records) (the C(retest_summary) record when
      a pair failed, the C(localization) record when a link was bad or flaky) and C(other_findings) (see
      O(first_findings); empty without it).
  type: dict
'''

from ansible.errors import AnsibleFilterError

from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery import topology as topo
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import judgement as jd
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import localization as loc
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import retest as rt
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import thresholds as th

_FLOAT_THRESHOLDS = ("fleet_min_fraction", "history_threshold", "outlier_z", "outlier_min_rel")


def commcheck_judge_retests(records, family="rdma", retest_sides=None, plan=None, min_fraction=0.9,
                            expected_gbps=None, outlier_z=3.5, outlier_min_rel=0.2, bad_verdicts=None,
                            thresholds=None, counter_deltas=None, fleet_min_fraction=None, first_findings=None,
                            topology=None):
    if not isinstance(records, (list, tuple)):
        raise AnsibleFilterError("commcheck_judge_retests: the input must be a list of pair records")
    for name, value in (("retest_sides", retest_sides), ("counter_deltas", counter_deltas),
                        ("first_findings", first_findings)):
        if value is not None and not isinstance(value, (list, tuple)):
            raise AnsibleFilterError("commcheck_judge_retests: %s must be a list" % name)
    for name, value in (("plan", plan), ("thresholds", thresholds), ("topology", topology)):
        if value is not None and not isinstance(value, dict):
            raise AnsibleFilterError("commcheck_judge_retests: %s must be a dict" % name)
    try:
        pair_options = {"min_fraction": float(min_fraction), "outlier_z": float(outlier_z),
                        "outlier_min_rel": float(outlier_min_rel),
                        "expected_gbps": None if expected_gbps in (None, "") else float(expected_gbps)}
        fraction = None if fleet_min_fraction in (None, "") else float(fleet_min_fraction)
        return jd.judge_retests(records, family, retest_sides, plan, pair_options, bad_verdicts,
                                None if thresholds is None else _threshold_options(thresholds), counter_deltas,
                                fraction, first_findings, topo.check_hosts(topology))
    except (jd.JudgementError, rt.RetestError, th.ThresholdError, loc.LocalizationError, topo.TopologyError, TypeError,
            ValueError) as exc:
        raise AnsibleFilterError("commcheck_judge_retests: %s" % exc)


def _threshold_options(options):
    """The thresholds options with their numbers as numbers (templated values arrive as strings)."""
    out = dict(options)
    for name in _FLOAT_THRESHOLDS:
        if out.get(name) is not None:
            out[name] = float(out[name])
    if out.get("history_k") is not None:
        out["history_k"] = int(out["history_k"])
    out["history"] = out.get("history") or []
    out["efficiency"] = out.get("efficiency") or None
    return out


class FilterModule(object):
    def filters(self):
        return {"commcheck_judge_retests": commcheck_judge_retests}
