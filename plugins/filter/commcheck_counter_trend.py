# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
name: commcheck_counter_trend
short_description: Port error counters that keep rising between runs (flapping links, rising bit error rate)
version_added: 1.0.0
description:
  - Reads C(port_counters) records from history (for example the C(clusterops.commcheck.commcheck_history)
    lookup) and, per host, device, port and counter, takes the value at the end of each run in time order.
  - A counter keeps rising when it rose in at least O(min_rises) of the intervals between the last O(min_runs)
    runs; a drop is a reset, and only what follows it counts.
  - By default C(link_downed) / C(link_error_recovery) (a flapping link), C(symbol_error),
    C(port_rcv_remote_physical_errors), C(local_link_integrity_errors) (a rising bit error rate) and
    C(port_rcv_errors).
options:
  _input:
    description: History records (any kinds; only C(port_counters) are read).
    type: list
    elements: dict
    required: true
  min_runs:
    description: How many of the latest runs to look at.
    type: int
    default: 3
  min_rises:
    description: In how many of their intervals the counter must rise (default all).
    type: int
  counters:
    description: Counters to watch instead of the default ones.
    type: list
    elements: str
'''

EXAMPLES = r'''
- name: Counters that keep rising over the last 4 runs
  ansible.builtin.set_fact:
    rising: "{{ history_records | clusterops.commcheck.commcheck_counter_trend(min_runs=4) }}"
'''

RETURN = r'''
_value:
  description:
    - C(trends) (C(host), C(device), C(port), C(counter), C(name) flapping link|rising bit error rate|...,
      C(values), C(runs), C(rises), C(increase)) and C(records) (a C(finding) record with verdict C(warn) for
      each).
  type: dict
'''

from ansible.errors import AnsibleFilterError

from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import counters as ct


def commcheck_counter_trend(records, min_runs=3, min_rises=None, counters=None):
    if not isinstance(records, (list, tuple)):
        raise AnsibleFilterError("commcheck_counter_trend: the input must be a list of history records")
    try:
        items = ct.trend(list(records), int(min_runs), None if min_rises is None else int(min_rises), counters)
    except (ct.CounterError, TypeError, ValueError) as exc:
        raise AnsibleFilterError("commcheck_counter_trend: %s" % exc)
    return {"trends": items, "records": ct.trend_records(items)}


class FilterModule(object):
    def filters(self):
        return {"commcheck_counter_trend": commcheck_counter_trend}
