# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
name: commcheck_check_verdict
short_description: The verdict of one check from the records it publishes
version_added: 1.0.0
description:
  - The worst verdict (C(error), C(fail), C(flaky), C(warn), C(pass), in that order) of the records of the given
    kinds; C(skipped) when none of them has one of those.
options:
  _input:
    description: The records the check publishes.
    type: list
    elements: dict
    required: true
  kinds:
    description: The record kinds that make the check's verdict (its pair records and findings).
    type: list
    elements: str
    required: true
'''

EXAMPLES = r'''
- name: The verdict of the TCP check
  ansible.builtin.debug:
    msg: "{{ tcp_publish | clusterops.commcheck.commcheck_check_verdict(kinds=['tcp_bw', 'finding']) }}"
'''

RETURN = r'''
_value:
  description: C(error), C(fail), C(flaky), C(warn), C(pass) or C(skipped).
  type: str
'''

from ansible.errors import AnsibleFilterError

from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts.judgement import check_verdict


def commcheck_check_verdict(records, kinds=None):
    if not isinstance(records, (list, tuple)):
        raise AnsibleFilterError("commcheck_check_verdict: the input must be a list of records")
    if not isinstance(kinds, (list, tuple)) or not kinds:
        raise AnsibleFilterError("commcheck_check_verdict: kinds must be a non-empty list of record kinds")
    return check_verdict(records, kinds)


class FilterModule(object):
    def filters(self):
        return {"commcheck_check_verdict": commcheck_check_verdict}
