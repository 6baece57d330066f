# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
name: commcheck_pair_verdicts
short_description: Verdicts, bandwidth matrices and named bad nodes / links from pairwise test results
version_added: 1.0.0
description:
  - Takes the side results of a pairwise check (the C(sides) items C(clusterops.commcheck.perftest) or
    C(clusterops.commcheck.iperf3) return, each with C(host) and C(round) added) and returns one record per
    pair, rail and test, in the commcheck results contract (C(kind), C(host), C(peer), C(params), C(metrics),
    C(verdict), C(cause), C(fix), C(evidence)).
  - Verdicts; V(error) when a side could not run (the root cause is the side that failed first), V(fail) below
    O(min_fraction) of the expected bandwidth (the lower link rate of the two ports, a port below its like
    ports counted at their rate, or O(expected_gbps)),
    V(warn) for a fleet outlier (robust z-score from the median and MAD beyond O(outlier_z) and at least
    O(outlier_min_rel) from the median), even when every value passes, compared by the fraction of each pair's
    own expected rate where every pair has one (a fleet of mixed NIC speeds); V(fail) for a value no
    expectation judges (latency, a bandwidth without a link rate) that is 3 x worse than the best quarter of its
    comparable records (latency also 5 us above it), or an outlier beyond O(fleet_min_fraction) of their
    median, so that it is retested.
  - Names culprits as C(finding) records; a node with more than half of its links bad is a bad node (or a bad
    NIC when that holds on some of its rails only), a bad link that no bad node explains is a bad link, and when
    every node is bad the finding is fleet-wide.
options:
  _input:
    description: Side results (dicts with C(host), C(round), C(role), C(peer), C(rail), C(step), C(metrics), C(verdict)...).
    type: list
    elements: dict
    required: true
  jobs:
    description:
      - The planned jobs (the C(jobs) of C(clusterops.commcheck.commcheck_round_plan), all rounds); a planned pair
        without results gets an V(error) record instead of vanishing.
    type: list
    elements: dict
  family:
    description: V(rdma) (records C(rdma_bw) / C(rdma_lat)) or V(tcp) (C(tcp_bw)).
    type: str
    choices: [rdma, tcp]
    default: rdma
  min_fraction:
    description: Share of the expected bandwidth a pair must reach.
    type: float
    default: 0.9
  expected_gbps:
    description: Expected bandwidth for every pair instead of the ports' link rates.
    type: float
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
      - The fleet threshold's fraction (C(clusterops.commcheck.commcheck_thresholds)); an outlier with no
        expectation beyond it of the group's median fails here already, so that it is retested before the
        thresholds fail it.
    type: float
  unreachable:
    description: Hosts that could not be reached at all (each gets an V(error) finding).
    type: list
    elements: str
  module_rcs:
    description:
      - The rc of each host's test module task, by host (null where it returned). A host whose module was
        killed by signal 9 (rc 137 or -9, e.g. the OOM killer) gets a V(module_killed) finding, and its pairs
        say so instead of naming its NICs or links.
    type: dict
    version_added: 1.1.0
  skipped:
    description:
      - Planned pairs that could not run (the C(skipped) items of C(clusterops.commcheck.commcheck_round_plan), with
        C(server), C(client), C(reason)); each gets a V(skipped) record.
    type: list
    elements: dict
'''

EXAMPLES = r'''
- name: Analyse every side result of the run
  ansible.builtin.set_fact:
    analysis: "{{ all_sides | clusterops.commcheck.commcheck_pair_verdicts(jobs=all_jobs, min_fraction=0.9) }}"

- name: Show the bad nodes
  ansible.builtin.debug:
    msg: "{{ analysis.summary.bad_nodes }}"
'''

RETURN = r'''
_value:
  description:
    - C(records) (one per pair / rail / test), C(findings) (C(kind=finding) records naming bad nodes, NICs, links,
      fleet-wide problems, unreachable hosts), C(matrices) (one per kind / op / metric / size / rail, with C(hosts),
      C(values) as a grid with the server as row and the client as column, C(verdicts), C(unit)) and C(summary)
      (C(records), C(verdicts) counts, C(bad_nodes), C(bad_nics), C(bad_links), C(fleet), C(unreachable),
      C(node_outliers), overall C(verdict)).
  type: dict
'''

from ansible.errors import AnsibleFilterError

from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts.killed_module import killed_hosts
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts.pair_analysis import analyze_pairs


def commcheck_pair_verdicts(sides, jobs=None, family="rdma", min_fraction=0.9, expected_gbps=None, outlier_z=3.5,
                            outlier_min_rel=0.2, unreachable=None, skipped=None, fleet_min_fraction=None,
                            module_rcs=None):
    if not isinstance(sides, (list, tuple)):
        raise AnsibleFilterError("commcheck_pair_verdicts: the input must be a list of side results")
    if family not in ("rdma", "tcp"):
        raise AnsibleFilterError("commcheck_pair_verdicts: family must be rdma or tcp, got %r" % (family,))
    try:
        min_fraction = float(min_fraction)
        expected_gbps = None if expected_gbps in (None, "") else float(expected_gbps)
        outlier_z = float(outlier_z)
        outlier_min_rel = float(outlier_min_rel)
        fleet_min_fraction = None if fleet_min_fraction in (None, "") else float(fleet_min_fraction)
    except (TypeError, ValueError) as exc:
        raise AnsibleFilterError("commcheck_pair_verdicts: %s" % exc)
    try:
        return analyze_pairs(list(sides), jobs=jobs, family=family, min_fraction=min_fraction,
                             expected_gbps=expected_gbps, outlier_z=outlier_z, outlier_min_rel=outlier_min_rel,
                             unreachable=unreachable, skipped=skipped, fleet_min_fraction=fleet_min_fraction,
                             killed=killed_hosts(module_rcs if isinstance(module_rcs, dict) else {}))
    except ValueError as exc:
        raise AnsibleFilterError("commcheck_pair_verdicts: %s" % exc)


class FilterModule(object):
    def filters(self):
        return {"commcheck_pair_verdicts": commcheck_pair_verdicts}
