# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
name: commcheck_slice_share
short_description: The records one slice of a split run publishes
version_added: 1.0.0
description:
  - When a run is split over several controllers (C(commcheck_slices) above 1), every slice judges the whole
    fleet alike from the facts the slices share (C(clusterops.commcheck.fleet_facts)), so every slice holds
    every record. Each publishes only its share, so the common history holds each record once.
  - A slice's share is the records whose C(host) is one of its own hosts; the leader slice also publishes the
    records whose C(host) is no host of the fleet (fleet-wide records, unreachable hosts).
  - With one slice (the result of C(fleet_facts) says C(slices=1)) every record is returned.
options:
  _input:
    description: The records of the whole fleet.
    type: list
    elements: dict
    required: true
  fleet:
    description: The result of C(clusterops.commcheck.fleet_facts) (C(hosts), C(own), C(leader), C(slices)).
    type: dict
    required: true
'''

EXAMPLES = r'''
- name: Publish this slice's records only
  clusterops.commcheck.record:
    records: "{{ all_records | clusterops.commcheck.commcheck_slice_share(fleet=fleet) }}"
  run_once: true
'''

RETURN = r'''
_value:
  description: The records this slice publishes, in the order given.
  type: list
  elements: dict
'''

from ansible.errors import AnsibleFilterError

from ansible_collections.clusterops.commcheck.plugins.module_utils.records import slice_meeting


def commcheck_slice_share(records, fleet):
    if not isinstance(records, (list, tuple)) or not isinstance(fleet, dict):
        raise AnsibleFilterError("commcheck_slice_share: the input must be a list of records and fleet the result "
                                 "of clusterops.commcheck.fleet_facts")
    records = [rec for rec in records if isinstance(rec, dict)]
    if int(fleet.get("slices") or 1) <= 1:
        return records
    return slice_meeting.my_share(records, fleet.get("own") or [], fleet.get("hosts") or [], bool(fleet.get("leader")))


class FilterModule(object):
    def filters(self):
        return {"commcheck_slice_share": commcheck_slice_share}
