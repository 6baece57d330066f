# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
name: commcheck_localize
short_description: Name the most likely faulty component (host, NIC/rail, link, fabric) from pairwise results
version_added: 1.0.0
description:
  - Reads the per-rail link matrix of a pairwise check (pair records of one kind, rail k of host A against rail
    k of host B, with the retest records of C(clusterops.commcheck.commcheck_retest_classify) among them) and
    decides which component is most likely at fault, with the evidence.
  - C(host) when most of a host's links are bad on every rail it has (with four rails or more, on most of
    them); C(rail) (its NIC, port or cable) when that holds on some of its rails only; C(link) for one bad pair
    on one rail that no host explains (both hosts pass with others and with known-good partners), one C(link)
    with no rail for a pair bad on every rail; C(fabric) for two or more such pairs on one rail that share no
    host when partner retests cleared every host of them (without those retests each pair is a C(link) whose
    cause says C(link or fabric, not separated)), and for hosts that fail with most of their peers on a rail
    but pass with each other (the switch they share); C(fleet) when every host of a rail is bad (and no few
    hosts explain every bad link), one for all rails when every rail is; C(flaky) for pairs that failed and
    then passed on retest, which are never reported as failed.
  - A rail whose links are one tight population at the pass line (chance picks which fail, pass or pass on
    retest) is its C(fleet) too; hosts that split into groups passing among themselves and failing across,
    retests with known-good partners included, are a C(fabric) component (a slow spine in a ring). A host whose
    every link on a rail measures far below the others each time counts them all as bad once one failed; one
    that passed with known-good partners is no suspect.
  - A side of a failing pair that also fails with a known-good partner (partner retest) implicates that
    side's rail, or the whole host when that covers all of its rails.
  - An C(error) pair implicates the side that failed to answer, read from how each side ended (the records'
    C(params.server_outcome), C(params.client_outcome), C(params.failed_side), C(params.failed_how)). A side
    whose process hung implicates its host, one that ended with its own error its rail; when the outcomes
    cannot tell the sides apart no host is blamed for that pair.
  - A host that is blamed explains every bad link it is in, so a link is never called bad while both hosts
    are good when one of them is blamed.
options:
  _input:
    description: Results-contract records (pair records; other kinds and records without a peer are ignored).
    type: list
    elements: dict
    required: true
  kind:
    description: Which records to read.
    type: str
    default: rdma_bw
  check:
    description: The check name put in the finding records' C(params.check).
    type: str
    default: rdma_perf
  bad_verdicts:
    description: Verdicts that make a link bad.
    type: list
    elements: str
    default: [fail, error]
  host_fraction:
    description: A host's rail is bad when more than this share of its links on that rail are bad.
    type: float
    default: 0.5
  min_bad_links:
    description: ... and at least this many.
    type: int
    default: 2
  outlier_z:
    description:
      - The robust z (median and MAD of a rail's links) beyond which a link measures as an outlier of its rail
        (a host far below the rail's others each time, a rail at its pass line, hosts that explain a rail's
        failures). Pass C(commcheck_outlier_z), the fleet threshold's own, so both judge alike.
    type: float
    default: 3.5
  retest_summary:
    description: The C(summary) of C(clusterops.commcheck.commcheck_retest_classify), shown in the summary record.
    type: dict
  counter_deltas:
    description:
      - Port counter deltas of the run (the C(deltas) of the C(counters) step of C(clusterops.commcheck.pair_check),
        every host's); those of a component's host and device are added to its evidence.
    type: list
    elements: dict
'''

EXAMPLES = r'''
- name: Localize the faults of the RDMA check
  ansible.builtin.set_fact:
    commcheck_localization: "{{ pair_records | clusterops.commcheck.commcheck_localize(kind='rdma_bw') }}"

- name: Say what is most likely broken
  ansible.builtin.debug:
    msg: "{{ commcheck_localization.summary.most_likely }}"
'''

RETURN = r'''
_value:
  description:
    - C(components) (most severe first; each with C(component) host|rail|link|fabric|fleet|flaky, C(finding)
      bad_node|bad_nic|bad_link|fabric|fleet|flaky, C(host), C(peer), C(rail), C(rails), C(devices),
      C(confidence) high|medium|low, C(verdict), C(cause), C(fix), C(evidence), C(links)), C(primary) (the
      first component or null), C(links) (status per rail and pair good|bad|flaky|unknown, C(confirmed)),
      C(hosts) (per host and rail C(links), C(bad), C(flaky), C(device)), C(summary) (C(verdict) pass|fail|flaky,
      C(most_likely), C(hosts), C(rails), C(links), C(fabric), C(fleet), C(flaky), link counts).
    - C(findings) (one C(finding) record per component), C(summary_record) (a C(localization) record, host
      C(*)) and C(records) (the input records, with the component that explains each bad one added to their
      C(evidence)).
  type: dict
'''

from ansible.errors import AnsibleFilterError

from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import localization as loc


def commcheck_localize(records, kind="rdma_bw", check="rdma_perf", bad_verdicts=None, host_fraction=0.5,
                       min_bad_links=2, retest_summary=None, counter_deltas=None, outlier_z=3.5):
    if not isinstance(records, (list, tuple)):
        raise AnsibleFilterError("commcheck_localize: the input must be a list of records")
    bad = tuple(bad_verdicts) if bad_verdicts else loc.BAD_VERDICTS
    try:
        result = loc.localize_records(list(records), kind, bad, float(host_fraction), int(min_bad_links),
                                      float(outlier_z))
        loc.attach_counter_evidence(result, counter_deltas or [])
    except (loc.LocalizationError, TypeError, ValueError) as exc:
        raise AnsibleFilterError("commcheck_localize: %s" % exc)
    result["findings"] = loc.finding_records(result, check, kind)
    result["summary_record"] = loc.summary_record(result, check, kind, retest_summary)
    result["records"] = loc.annotate_records(list(records), result, kind)
    return result


class FilterModule(object):
    def filters(self):
        return {"commcheck_localize": commcheck_localize}
