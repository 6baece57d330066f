#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
module: report
short_description: Compare a commcheck run with its history and write the report files on the controller
version_added: 1.0.0
description:
  - Compares every record of the run with its baseline from the history (the median, per metric, of the
    last O(baseline_runs) passing runs of the same kind, host, peer and params, or the records of the run
    O(baseline_run)) and flags regressions beyond O(threshold) in the record (C(regression)).
  - "Writes into O(report_dir): C(report.md); a self-contained C(report.html) (bandwidth heat map per op as
    inline SVG, latency table, collective bus bandwidth against message size, findings with fixes,
    regressions, retests); C(results.json); C(junit.xml) (one testcase per check); C(commcheck.prom)
    (Prometheus text format for node_exporter's textfile collector)."
  - "With O(run_subdir) and O(index), also writes C(index-entry.json) (the run's entry of the results page: time,
    verdict, culprits in words, regression count, the worst bandwidth of each host and link) into the run's
    directory and rewrites C(index.html) in O(report_dir): every run (the newest O(index_runs)) newest first with a
    link to its C(report.html), and per host and per link a bandwidth trend over the last O(index_points) runs as
    inline SVG (at most O(index_rows) hosts and links, the most dropped and the worst first; no script, no external
    asset). A run directory that was deleted drops out of the page; one without C(index-entry.json) is read from its
    C(results.json) (up to 16 MiB) or its summary line in O(history_dir)."
  - Files are written atomically (temporary file, then rename).
  - It reads and writes the controller's files only.
author:
  - commcheck developers (@clusterops)
options:
  records:
    description:
      - The run's records (results contract, as returned by M(clusterops.commcheck.record)).
      - When empty and O(history_run) is set, the records of that run are read from the history.
    type: list
    elements: dict
    default: []
  report_dir:
    description:
      - Directory to write the report files into; created when missing. No C(..) components, control characters or
        leading C(-); the module writes only its fixed file names (C(report.md), C(report.html), C(results.json),
        C(junit.xml), C(commcheck.prom)) inside it.
    type: path
    required: true
  run_subdir:
    description:
      - Write into a subdirectory of O(report_dir) named after the run id (a new id when there is none). The run id
        must then be one plain file name (no C(/), not C(.) or C(..), not starting with C(-)); anything else is
        refused, so the files stay inside O(report_dir).
    type: bool
    default: false
  run_id:
    description:
      - Id of this run; its own history records are left out of the baselines.
      - Pass the run's C(commcheck_run_id), the id the C(clusterops.commcheck.commcheck_history) callback writes
        into the history (the one-click and report roles set it once per run and pass it here).
    type: str
  history_dir:
    description:
      - History directory to read baselines (and O(history_run)) from (no C(..) components). Without it nothing is
        compared.
    type: path
  history_run:
    description:
      - Render the report of this past run from the history when O(records) is empty; C(last) for the latest
        run with records (other than O(run_id)). Its baselines come from the runs before it.
    type: str
  compare:
    description: Compare records with their baselines from O(history_dir).
    type: bool
    default: true
  baseline_runs:
    description: K, the number of most recent passing runs whose median is the baseline, 1 to 1000.
    type: int
    default: 5
  baseline_run:
    description: Use the records of this run as the baseline instead of the median of the last passing runs.
    type: str
  baseline_max_age:
    description:
      - Only history newer than this is used for baselines; an age such as C(90d), C(12w), or an ISO 8601 time.
      - Without it the whole history may be read when a check has fewer than O(baseline_runs) passing runs.
    type: str
  min_runs:
    description: Compare only when the baseline has at least this many earlier passing runs, 1 to 1000.
    type: int
    default: 3
  threshold:
    description:
      - Relative change that counts as a regression, for example C(0.2) flags bandwidth more than 20% below,
        or latency more than 20% above, its baseline. 0 to 1000.
    type: float
    default: 0.2
  thresholds:
    description: 'Per-metric thresholds that replace O(threshold), for example C({"lat_us": 0.5}).'
    type: dict
    default: {}
  ignore_params:
    description:
      - Params left out when matching a record with its history; the default leaves out how a check was
        scheduled (round, step, port, which side was server or client, duration), not what it measured.
    type: list
    elements: str
    default: [round, step, tcp_port, server, client, duration, iterations, attempt, retest]
  formats:
    description: Which files to write.
    type: list
    elements: str
    choices: [md, html, json, junit, prom]
    default: [md, html, json, junit, prom]
  regression_fails:
    description: Report a regression of a passing check as a C(failure) of type C(regression) in C(junit.xml).
    type: bool
    default: true
  fail_on:
    description:
      - When the run counts as failed, in RV(fail_message) (the report is written either way; the report role
        fails the play with it, C(commcheck_report_fail_on)).
      - V(never); V(fail) when a check failed or errored; V(regression) when a check failed, errored or regressed.
    type: str
    choices: [never, fail, regression]
    default: never
  return_records:
    description:
      - Return the run's records (with their baselines) as RV(records).
      - The report role sets it to false; the records are in C(results.json) and the history. Returning
        100,000 records costs the controller as much time as writing the report.
    type: bool
    default: true
  role_options:
    description:
      - Take the options from the report role's variables, as the report role does
        (O(report_dir) from C(commcheck_report_dir), O(history_dir) from C(commcheck_history_dir), O(compare) from
        C(commcheck_report_compare) and so on, see docs/variables.md); an empty text leaves the option unset. A
        variable that is set replaces the task's own value.
      - O(records) is then C(commcheck_report_records) unless that is null, else the records the run published
        (C(commcheck_run_records) of C(localhost)).
    type: bool
    default: false
  index:
    description:
      - Write the run's C(index-entry.json) and rewrite the results page across runs, C(index.html) in
        O(report_dir). Only with O(run_subdir) (one directory per run); not in check mode.
    type: bool
    default: true
  index_runs:
    description: The results page shows at most this many runs, the newest, 1 to 1000.
    type: int
    default: 50
  index_points:
    description: Points per bandwidth trend on the results page (the newest runs), 2 to 200.
    type: int
    default: 20
  index_rows:
    description:
      - The results page shows at most this many hosts and this many links, 1 to 10000; the most dropped
        (newest run against the median of the runs before it) and then the lowest fraction of expected first.
    type: int
    default: 100
extends_documentation_fragment:
  - clusterops.commcheck.controller
attributes:
  check_mode:
    support: full
    description: In check mode everything is computed and returned, and no file is written.
seealso:
  - module: clusterops.commcheck.record
  - plugin: clusterops.commcheck.commcheck_history
    plugin_type: lookup
'''

EXAMPLES = r'''
- name: Write the report of this run, compared with the last 5 passing runs
  clusterops.commcheck.report:
    records: "{{ hostvars['localhost'].commcheck_run_records | default([]) }}"
    run_id: "{{ commcheck_run_id }}"
    report_dir: /var/lib/commcheck/reports/{{ commcheck_run_id }}
    history_dir: /var/lib/commcheck/history
    threshold: 0.15
  delegate_to: localhost
  run_once: true
  register: commcheck_report

- name: Re-render the latest run from the history alone
  clusterops.commcheck.report:
    history_dir: /var/lib/commcheck/history
    history_run: last
    report_dir: /tmp/commcheck-last
  delegate_to: localhost
  run_once: true

- name: One directory per run, and a results page across the last 30 runs (index.html in the parent)
  clusterops.commcheck.report:
    records: "{{ hostvars['localhost'].commcheck_run_records | default([]) }}"
    run_id: "{{ commcheck_run_id }}"
    report_dir: /var/lib/commcheck/reports
    run_subdir: true
    history_dir: /var/lib/commcheck/history
    index_runs: 30
    index_points: 15
    index_rows: 50
  delegate_to: localhost
  run_once: true
'''

RETURN = r'''
run_id:
  description: Id of the rendered run.
  returned: success
  type: str
  sample: 20260131T020000Z-1a2b3c
report_dir:
  description: Absolute path of the report directory.
  returned: success
  type: str
  sample: /var/lib/commcheck/reports/20260131T020000Z-1a2b3c
files:
  description: Path of each file written (or that would be written in check mode), by format.
  returned: success
  type: dict
  sample: {html: /r/report.html, md: /r/report.md, json: /r/results.json, junit: /r/junit.xml, prom: /r/commcheck.prom}
index:
  description: >-
    Path of the results page across runs (C(index.html) in O(report_dir)) when it was written; null when O(index)
    or O(run_subdir) is off, in check mode, or when the page could not be written (a warning says why; the run's
    report files are written all the same). The run's C(index-entry.json) is beside its report files.
  returned: success
  type: str
  sample: /var/lib/commcheck/reports/index.html
summary:
  description: >-
    The run's summary, also published with C(set_stats) by the report role (so the history's summary line has
    it): verdict, total, counts by verdict, by_kind, culprits (one per fault, see
    C(clusterops.commcheck.commcheck_culprits)), bad_hosts, bad_nics, bad_links (derived from the failing
    culprits; the links of a bad host are not listed again), flaky, regressions, regressed_hosts,
    regressed_links (neither names the checks of a regression the whole test shares), regressed_together (one
    line per such test), files.
  returned: success
  type: dict
  sample: {"verdict": "fail", "total": 12, "counts": {"pass": 10, "fail": 2}, "bad_hosts": ["node-c"],
           "bad_nics": [], "bad_links": [], "flaky": [],
           "culprits": [{"component": "host", "host": "node-c", "verdict": "fail", "confidence": "medium",
                         "checks": ["rdma_perf"], "cause": "most of its links are bad on every rail",
                         "fix": "take the host out of the pool", "evidence": ["node-a-node-c rail 0: fail"],
                         "peer": null, "rail": null, "device": null}]}
summary_lines:
  description: A short fixed-width summary table, one line per item.
  returned: success
  type: list
  elements: str
fail_message:
  description: Why the run counts as failed by O(fail_on) (counts and the report's directory); empty when it does not.
  returned: success
  type: str
  sample: "commcheck run 20261203T052610Z-63c488: 2 failed, 0 errored, 0 regressed; report in /var/lib/commcheck/reports/20261203T052610Z-63c488"
records:
  description: The run's records with C(baseline) and C(regression) (null or the check's regression) set.
  returned: success, when O(return_records) is true
  type: list
  elements: dict
regressions:
  description:
    - One entry per regressed check (check, its worst metric, value, baseline, change, threshold, baseline_runs)
      and C(metrics), every regressed metric of the check.
  returned: success
  type: list
  elements: dict
regression_records:
  description: One C(kind=regression) record per regressed check, ready for M(clusterops.commcheck.record).
  returned: success
  type: list
  elements: dict
history_problems:
  description: Torn or corrupt history lines that were skipped (file, line, reason).
  returned: success
  type: list
  elements: dict
'''

from ansible_collections.clusterops.commcheck.plugins.module_utils.options.module_args import controller_only

from ansible_collections.clusterops.commcheck.plugins.module_utils.records.report_index import INDEX_ARGUMENT_SPEC
from ansible_collections.clusterops.commcheck.plugins.module_utils.records.report_render import REPORT_ARGUMENT_SPEC


def main():
    controller_only("report", dict(REPORT_ARGUMENT_SPEC, **INDEX_ARGUMENT_SPEC))


if __name__ == "__main__":
    main()
