#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
module: check_outputs
short_description: Check that a commcheck run's report and history can be written, and were
version_added: 1.0.0
description:
  - With O(step=start), before anything runs, checks that the report directory O(report_dir) and the directory of
    the C(clusterops.commcheck.commcheck_history) callback (when it is enabled) can be written, by writing one byte
    into a new file there (or in the nearest existing parent of a directory the run will create) and removing it.
    A directory that cannot be written (read-only, not a directory, no permission, full) fails the task with one
    message that says nothing was run and names the setting (C(commcheck_report_dir), C(COMMCHECK_HISTORY_DIR)).
  - With O(step=end), the play's last task, checks that every history line the callback had to write so far was
    written. When some were not (a full disk, a quota, a lost mount), the task fails with how many records of
    which kinds were not written, why, and the file that keeps them (the callback's C(spill_dir)), so that
    ansible-playbook exits non-zero (a callback cannot set the exit status itself). The summary line is written
    after the last task; when only it is lost, the error at the end of the run says so.
  - The one-click role C(clusterops.commcheck.commcheck) runs C(step=start) after its option check and
    C(step=end) as its last task; the report role, run on its own, runs C(step=end) as its last task.
author:
  - commcheck developers (@clusterops)
options:
  step:
    description:
      - V(start) checks that the outputs can be written; V(end) checks that the history was written whole.
    type: str
    required: true
    choices: [start, end]
  report_dir:
    description:
      - The report directory to check at O(step=start) (the roles pass C(commcheck_report_dir)); a relative path
        is relative to the directory ansible-playbook runs in. Not checked when not given.
    type: path
extends_documentation_fragment:
  - clusterops.commcheck.controller
attributes:
  check_mode:
    support: full
    description: In check mode O(step=start) writes nothing and asks access(2) only.
notes:
  - O(step=end) reads the callback's state as ansible-playbook's main process had it when the task started (its
    workers are forked from it); it sees every line of the tasks that finished before it.
  - Run it with C(run_once=true); O(step=start) also with C(any_errors_fatal=true).
seealso:
  - plugin: clusterops.commcheck.commcheck_history
    plugin_type: callback
'''

EXAMPLES = r'''
- name: Check before anything runs that the report and the history can be written
  clusterops.commcheck.check_outputs:
    step: start
    report_dir: "{{ commcheck_report_dir }}"
  run_once: true
  any_errors_fatal: true

# ... the checks ...

- name: Check that the history of this run was written whole (fails the run when it was not)
  clusterops.commcheck.check_outputs:
    step: end
  run_once: true
'''

RETURN = r'''
report_dir:
  description: The report directory checked (absolute), or null (O(step=start)).
  returned: success and O(step=start)
  type: str
  sample: /var/lib/commcheck/reports
history_dir:
  description: The history directory checked, or null when the history is off (O(step=start)).
  returned: success and O(step=start)
  type: str
  sample: /var/lib/commcheck/history
history:
  description: What the history callback wrote in this run (O(step=end)).
  returned: O(step=end)
  type: dict
  contains:
    enabled:
      description: Whether the history is written in this run.
      type: bool
    off_reason:
      description: Why the history is not written in this run (null when it is).
      type: str
    summary_not_written:
      description: Whether the summary line could not be written.
      type: bool
    spill_error:
      description: Why the lines not written could not be kept, if they could not.
      type: str
    directory:
      description: The history directory.
      type: str
    file:
      description: The month file written (or tried) last.
      type: str
    run_id:
      description: The run id of the lines.
      type: str
    records_written:
      description: Record lines written.
      type: int
    records_not_written:
      description: Record lines that could not be written.
      type: int
    not_written_by_kind:
      description: Record lines not written, by kind.
      type: dict
    error:
      description: The first write error.
      type: str
    spill:
      description: The file that keeps the lines not written.
      type: str
  sample: {enabled: true, off_reason: null, file: /var/lib/commcheck/history/history-2026-03.jsonl, run_id: 20260301T020000Z-8c1d2e,
           records_written: 28, records_not_written: 20, not_written_by_kind: {rdma_bw: 12, tcp_bw: 8},
           error: "No space left on device", spill: /tmp/commcheck-history-20260301T020000Z-8c1d2e-k2j1.jsonl}
'''

from ansible_collections.clusterops.commcheck.plugins.module_utils.options.module_args import controller_only


def main():
    controller_only("check_outputs", dict(
        step=dict(type="str", required=True, choices=["start", "end"]),
        report_dir=dict(type="path"),
    ))


if __name__ == "__main__":
    main()
