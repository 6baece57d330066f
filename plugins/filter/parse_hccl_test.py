# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r"""
name: parse_hccl_test
short_description: Parse Huawei Ascend hccl_test output into rows and classified errors
version_added: 1.0.0
author: commcheck contributors
description:
  - Reads what a CANN C(hccl_test) binary (C(all_reduce_test), C(all_gather_test), C(alltoall_test), C(broadcast_test),
    C(reduce_scatter_test), ...) printed under mpirun.
  - Understands the C(the minbytes is ..., maxbytes is ..., iters is ..., warmup_iters is ...) line and the
    pipe-separated table, mapped by its header (the binary spells the time column C(aveg_time), the documentation C(avg_time)).
  - HCCL return codes (C(retcode) values and C(HCCL_E_*) names), ACL errors, CANN error codes, failed result checks and
    MPI/ssh launcher errors get a stable code, the original message, a cause and a fix.
  - Never fails on odd input.
extends_documentation_fragment:
  - clusterops.commcheck.tool_output.pasted_text
options:
  _input:
    description: The raw output of the run (stdout, possibly merged with stderr).
    type: raw
    required: true
seealso:
  - plugin: clusterops.commcheck.parse_nccl_tests
    plugin_type: filter
"""

EXAMPLES = r"""
- name: Parse an hccl_test run
  ansible.builtin.set_fact:
    hccl: "{{ hccl_run.stdout | clusterops.commcheck.parse_hccl_test }}"

- name: Fail on a wrong result
  ansible.builtin.assert:
    that: hccl.ok
    fail_msg: "{{ hccl.errors | map(attribute='cause') | join('; ') }}"
"""

RETURN = r"""
_value:
  description: The parsed run.
  type: dict
  contains:
    test:
      description: Test binary, e.g. C(all_reduce_test), when the output names it.
      type: str
    header:
      description: min_bytes, max_bytes, iters, warmup_iters and the table column names.
      type: dict
    rows:
      description: Result rows (bytes, avg_time_us, algbw_gbs, check); check is C(success), C(failed) or null (not checked).
      type: list
      elements: dict
    max_algbw_gbs:
      description: Highest algorithm bandwidth of any row.
      type: float
    errors:
      description: Classified errors (code, message, cause, fix, hint, count, hosts, evidence).
      type: list
      elements: dict
    warnings:
      description: Things worth knowing that are not errors, among them lines no rule knows that report a
        problem (warnings libraries such as libibverbs print, other programs' error lines); they never make
        C(ok) false. A text from which nothing was read says so in a warning that quotes its first line.
      type: list
      elements: str
    ok:
      description: True when result rows were read and no error was found.
      type: bool
"""

from ansible_collections.clusterops.commcheck.plugins.plugin_utils.filter_input import filter_module
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_hccl_test import parse_hccl_test

FilterModule = filter_module("parse_hccl_test", parse_hccl_test)
