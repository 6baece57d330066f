#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
module: record
short_description: Publish commcheck check records (validated, normalized, without secrets)
version_added: 1.0.0
description:
  - Checks each record against the commcheck results contract, normalizes it and returns the list as
    RV(commcheck_records). The C(clusterops.commcheck.commcheck_history) callback appends every item of a
    task result's C(commcheck_records) to the history, and the C(clusterops.commcheck.report) role renders them.
  - A record needs C(kind) and C(host) (non-empty strings) and a C(verdict) out of
    C(pass), C(fail), C(error), C(skipped), C(flaky), C(warn).
  - Normalization sets C(peer) to null when missing or empty, C(params) and C(metrics) to dicts,
    C(cause) and C(fix) to a string or null, and C(evidence) to a list of strings. Other keys are kept.
    C(schema), C(run_id) and C(time) are dropped; the history callback sets them.
  - >-
    Anything that looks secret is removed before the record leaves the task; keys such as C(password),
    C(token), C(secret), C(kubeconfig), C(api_key) or C(key) at any depth are dropped, and values such as
    C(password=...), C(--token ...) or C(Authorization: Bearer ...) in strings are masked.
author:
  - commcheck developers (@clusterops)
options:
  records:
    description:
      - The records to publish, each a dict with C(kind), C(host), C(peer), C(params), C(metrics),
        C(verdict), C(cause), C(fix), C(evidence) (see the results contract in C(docs/DEVELOPING.md)).
      - Exactly one of O(records) and O(records_from) is required.
    type: list
    elements: dict
  records_from:
    description:
      - The variable of the task's host that holds the records, as C(name) or C(name.key), read on the controller by
        the action plugin; typically a key of a result a run-once task registered before
        (C(commcheck_pair_perf_verdicts.share)). Read from the task's own host also when the task is delegated to
        C(localhost). A name the host lacks, or one that is not a list, fails the task.
    type: str
extends_documentation_fragment:
  - clusterops.commcheck.controller
attributes:
  check_mode:
    support: full
    description: Nothing changes in either mode; records are returned in check mode too.
notes:
  - Run it once (C(run_once=true)) with every record of a check, or per host; the callback writes
    one history line per record in either case.
  - A task with C(no_log=true) keeps its records out of the history (the callback sees a censored result).
seealso:
  - plugin: clusterops.commcheck.commcheck_history
    plugin_type: callback
  - plugin: clusterops.commcheck.commcheck_history
    plugin_type: lookup
'''

EXAMPLES = r'''
- name: Publish the TCP bandwidth results of this run
  clusterops.commcheck.record:
    records:
      - kind: tcp_bw
        host: node-a
        peer: node-b
        params: {op: tcp, streams: 4}
        metrics: {bw_gbps: 23.1, expected_gbps: 25.0}
        verdict: pass
        cause:
        fix:
        evidence: ["iperf3 -c 10.0.0.2 -P 4 -J"]
  run_once: true
  delegate_to: localhost
  register: published

- name: Keep them for the report
  ansible.builtin.set_fact:
    commcheck_run_records: "{{ (hostvars['localhost'].commcheck_run_records | default([])) + published.commcheck_records }}"
  delegate_to: localhost
  delegate_facts: true
  run_once: true

- name: Publish what a check's run-once step registered, named rather than templated
  clusterops.commcheck.record:
    records_from: judged.share
  run_once: true
  delegate_to: localhost
  register: published_share
'''

RETURN = r'''
commcheck_records:
  description: The normalized records, in the order given.
  returned: success
  type: list
  elements: dict
  sample:
    - {kind: rdma_bw, host: node-a, peer: node-c, verdict: fail, rail: 1,
       params: {op: write, device: mlx5_1, peer_device: mlx5_1},
       metrics: {bw_gbps: 182.4, expected_gbps: 400.0},
       cause: write bandwidth below 90% of the expected, fix: check the link of mlx5_1 on both hosts,
       evidence: []}
redacted:
  description: Paths of the keys removed or values masked because they looked secret.
  returned: success
  type: list
  elements: str
  sample: ["records[0].params.token"]
'''

from ansible_collections.clusterops.commcheck.plugins.module_utils.options.module_args import checked_module

from ansible_collections.clusterops.commcheck.plugins.module_utils.records.history import (
    RecordError,
    normalize_records,
)
from ansible_collections.clusterops.commcheck.plugins.module_utils.options.option_rules import QUOTE_LIMIT


def main():
    # Normally the action plugin of the same name runs instead of this module;
    # run as a module (for example by ansible-test), it does the same work.
    module = checked_module(
        argument_spec=dict(records=dict(type="list", elements="dict"), records_from=dict(type="str")),
        supports_check_mode=True,
    )
    if module.params["records_from"] is not None or module.params["records"] is None:
        # the variables of the task's host are the controller's: only the action plugin reads them
        module.fail_json(msg="clusterops.commcheck.record: give records (records_from is read by the action "
                             "plugin on the controller)")
    try:
        records, redacted = normalize_records(module.params["records"])
    except RecordError as exc:
        text = str(exc)
        if len(text) > 2 * QUOTE_LIMIT:
            text = "%s...(%d characters)" % (text[:2 * QUOTE_LIMIT], len(text))
        module.fail_json(msg="clusterops.commcheck.record: %s" % text)
    module.exit_json(changed=False, commcheck_records=records, redacted=redacted,
                     msg="%d record(s)" % len(records))


if __name__ == "__main__":
    main()
