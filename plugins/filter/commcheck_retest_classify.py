# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
name: commcheck_retest_classify
short_description: Put original pair records and their retests together, confirmed or flaky
version_added: 1.0.0
description:
  - Tags the records measured in the retest rounds (the C(retests) step of C(clusterops.commcheck.pair_check)) with
    C(params.retest), C(retest_purpose), C(attempt), C(origin), C(subject), C(partner).
  - A failing pair whose as-is retest passes is B(flaky), its record's verdict becomes C(flaky), not C(fail);
    one that fails on every retest, or in more of its measurements than it passed (a port that fails again
    after it passed), is B(confirmed). Partner retests say which side (if any) also fails with a known-good
    host.
  - A retest that no expectation judges (latency; a bandwidth without a link rate) is judged against the first
    pass's comparable records (3 x worse than their best quarter fails, or an outlier beyond
    O(fleet_min_fraction) of their median), not among the retests.
options:
  _input:
    description: The original pair records.
    type: list
    elements: dict
    required: true
  retest_records:
    description: The pair records measured in the retest rounds (untagged or tagged).
    type: list
    elements: dict
  rounds:
    description: The C(rounds) of the retest plan (to tag O(retest_records)).
    type: list
    elements: dict
  skipped:
    description:
      - The C(skipped) of the retest plan; a pair left out by its C(per_host) sampling takes the outcome of its bad
        host's retested pairs when those all agree (flaky or confirmed, I(inferred)).
    type: list
    elements: dict
  bad_verdicts:
    description: Verdicts that count as failing.
    type: list
    elements: str
    default: [fail, error]
  check:
    description: The check name of the summary record (V(tcp_perf) for the TCP check).
    type: str
    default: rdma_perf
  kind:
    description: The record kind of the summary record's C(params.family) (V(tcp_bw) for the TCP check).
    type: str
    default: rdma_bw
  fleet_min_fraction:
    description: The fleet threshold's fraction (C(clusterops.commcheck.commcheck_thresholds)), for the retests
      no expectation judges.
    type: float
'''

EXAMPLES = r'''
- name: Judge the retests
  ansible.builtin.set_fact:
    classified: >-
      {{ pair_records | clusterops.commcheck.commcheck_retest_classify(retest_records=retest_records,
                                                                        rounds=retest_plan.rounds) }}

- name: Judge the retests of the TCP check
  ansible.builtin.set_fact:
    classified: >-
      {{ tcp_records | clusterops.commcheck.commcheck_retest_classify(retest_records=tcp_retest_records,
                                                                      rounds=retest_plan.rounds,
                                                                      check='tcp_perf', kind='tcp_bw') }}
'''

RETURN = r'''
_value:
  description:
    - C(records) (originals, flaky ones with verdict C(flaky) and the retest outcome in C(evidence), then the
      tagged retest records), C(pairs) (per failing pair C(id), C(status) confirmed|flaky|not_retested,
      C(as_is) verdicts, C(implicated) / C(cleared) sides, C(evidence)), C(summary) (C(retests), C(as_is),
      C(partner), C(control), C(cross), C(failing_pairs), C(confirmed), C(flaky), C(not_retested)) and
      C(summary_record) (a C(retest_summary) record).
  type: dict
'''

from ansible.errors import AnsibleFilterError

from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import retest as rt


def commcheck_retest_classify(records, retest_records=None, rounds=None, bad_verdicts=None, check="rdma_perf",
                              kind="rdma_bw", skipped=None, fleet_min_fraction=None):
    if not isinstance(records, (list, tuple)):
        raise AnsibleFilterError("commcheck_retest_classify: the input must be a list of pair records")
    if retest_records is not None and not isinstance(retest_records, (list, tuple)):
        raise AnsibleFilterError("commcheck_retest_classify: retest_records must be a list")
    try:
        tagged = rt.tag_retest_records(list(retest_records or []), rounds or [])
        fraction = None if fleet_min_fraction in (None, "") else float(fleet_min_fraction)
        result = rt.classify(list(records), tagged, tuple(bad_verdicts) if bad_verdicts else rt.BAD_VERDICTS,
                             skipped or [], fraction)
    except (rt.RetestError, TypeError, ValueError) as exc:
        raise AnsibleFilterError("commcheck_retest_classify: %s" % exc)
    result["summary_record"] = rt.summary_record(result, check, kind)
    return result


class FilterModule(object):
    def filters(self):
        return {"commcheck_retest_classify": commcheck_retest_classify}
