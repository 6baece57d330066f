# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
name: commcheck_culprits
short_description: The culprits of a run, one per fault (host, nic, link, fabric, config), from all its records
version_added: 1.0.0
description:
  - Reads the records of one run (every check's pair records and C(finding) records) and names one culprit per
    fault, the list that results.json's C(summary.culprits), the report's "What to do" list, the history summary
    and quarantine all use.
  - Sources are the localization findings of each pair check (C(clusterops.commcheck.commcheck_localize)); the
    localization of pair checks that published none; failing discovery findings (a port's fault is its C(nic),
    a host-wide one such as memlock its C(config)); RoCE GID / MTU mismatches (C(config) of the host that
    differs from its peers); collective findings (bisection, launcher errors, unreachable hosts).
  - One fault seen by several checks is one culprit with their evidence; a failing host explains its NICs and
    links, a failing NIC the links of its rail, so those are not named again. A setting explains what was
    measured through it (a RoCE mismatch the NIC and links of its host on that rail, a host-wide discovery
    error the host's failures). A host that only the collective or the TCP check named (they see a node through
    one path) is folded into a failing NIC of it that the RDMA check found.
  - A port whose C(link_downed) counter rose during the tests (a failing C(port_counters) record) is its
    C(nic), every port of a host at once that C(host).
  - Flaky components (failed, then passed on retest) are culprits with C(verdict=flaky), never counted as bad.
options:
  _input:
    description: Results-contract records of one run.
    type: list
    elements: dict
    required: true
'''

EXAMPLES = r'''
- name: Name the culprits of this run
  ansible.builtin.set_fact:
    culprits: "{{ hostvars['localhost'].commcheck_run_records | clusterops.commcheck.commcheck_culprits }}"

- name: Say what to do
  ansible.builtin.debug:
    msg: "{{ item.component }} {{ item.host }}: {{ item.fix }}"
  loop: "{{ culprits }}"
'''

RETURN = r'''
_value:
  description:
    - One entry per fault, failing ones first, then by component (host, nic, gpu, link, fabric, config) and host.
    - Each has C(component), C(host) (C(*) for a rail's fabric), C(peer) (links, config pairs), C(rail),
      C(device), C(verdict) (fail or flaky), C(confidence) (high, medium, low), C(checks) (which checks saw
      it), C(cause), C(fix) and C(evidence) (at most 12 lines; what it explains is listed there).
  type: list
  elements: dict
'''

from ansible.errors import AnsibleFilterError

from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import culprits as _culprits


def commcheck_culprits(records):
    if not isinstance(records, (list, tuple)):
        raise AnsibleFilterError("commcheck_culprits: the input must be a list of records, got %s"
                                 % type(records).__name__)
    try:
        return _culprits.culprits(list(records))
    except (TypeError, ValueError, KeyError) as exc:
        raise AnsibleFilterError("commcheck_culprits: %s" % exc)


class FilterModule(object):
    def filters(self):
        return {"commcheck_culprits": commcheck_culprits}
