# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
name: commcheck_history
short_description: Query the commcheck JSON-lines history
version_added: 1.0.0
description:
  - Reads the history that the C(clusterops.commcheck.commcheck_history) callback writes and returns the
    records that match every filter given, oldest first.
  - Streams the month files line by line and only opens the months that the time range can touch, so a
    year of history (a million records) is queried in seconds.
  - A torn last line (a writer that died mid-line) or a corrupt line is skipped and reported as a warning
    (or an error, see O(on_bad_line)).
  - Positional terms, when given, are kinds (the same as O(kind)).
  - With O(setting), returns one setting of this run instead of records (see there).
author:
  - commcheck developers (@clusterops)
extends_documentation_fragment:
  - clusterops.commcheck.history
options:
  _terms:
    description: Kinds of records to return (for example C(rdma_bw), C(tcp_bw)); the same as O(kind).
    required: false
  history_dir:
    description:
      - Directory of the history files, an absolute path, or one that starts with C(~/).
      - An empty value (an empty C(COMMCHECK_HISTORY_DIR)), a relative path, a C(..) component, a NUL byte
        or a line break is an error.
  kind:
    description: Only records of this kind (or of any kind in the list).
    type: list
    elements: str
  host:
    description: Only records of this host (or any host in the list).
    type: list
    elements: str
  peer:
    description: Only records with this peer (or any in the list); C(null) matches records without a peer.
    type: list
    elements: str
  run_id:
    description: Only records of this run (or any run in the list).
    type: list
    elements: str
  exclude_run_id:
    description:
      - Leave out the records of this run (an empty value leaves out nothing). The check roles pass the current
        run, whose records another slice of a split run may already have written, so that every slice judges
        against the same past runs.
    type: str
  verdict:
    description: Only records with this verdict (or any in the list).
    type: list
    elements: str
  since:
    description:
      - Only records at or after this time; ISO 8601 (C(2026-01-31T12:00:00Z), C(2026-01-31)), epoch seconds,
        or an age such as C(7d), C(12h), C(30m), C(2w).
    type: str
  until:
    description: Only records at or before this time; the same forms as O(since).
    type: str
  last_runs:
    description: Only the records of the N most recent runs (among the matching records).
    type: int
  limit:
    description: At most this many records (the most recent ones).
    type: int
  include_summary:
    description: Also return the C(kind=summary) lines; they are left out unless O(kind) asks for C(summary).
    type: bool
    default: false
  query:
    description: A JMESPath expression applied to the list of matching records (needs the C(jmespath) package).
    type: str
  on_bad_line:
    description: What to do with torn or corrupt lines; they are always skipped.
    type: str
    choices: [warn, ignore, fail]
    default: warn
  setting:
    description:
      - Return a one-item list with a setting of this run instead of records; the other filters are not used.
      - C(run_id) is the id of this run, decided from the same settings as the history callback's run id
        O(configured_run_id) (C(COMMCHECK_RUN_ID)), else C(awx-<JOB_ID>) under AWX, else a new
        C(YYYYmmddTHHMMSSZ-xxxxxx). A run split into slices (the variable C(commcheck_slices) above 1) takes
        O(configured_run_id), else C(awx-wf-<awx_workflow_job_id>) (AWX job slices run in one workflow job), and
        fails when there is neither, since each slice would get an id of its own.
        The C(clusterops.commcheck.commcheck) and C(clusterops.commcheck.report)
        roles call it once, when the caller gave no C(commcheck_run_id), and set the result as the
        C(commcheck_run_id) fact, which they pass to the report and which the callback takes for the history.
      - C(history_dir) is O(history_dir), normalised (as the callback writes it) when it is a valid directory,
        else as given.
    type: str
    choices: [run_id, history_dir]
  configured_run_id:
    description:
      - The run id a service or C(ansible.cfg) sets for the run (the history callback's O(run_id) setting);
        only read by O(setting=run_id).
    type: str
    env:
      - name: COMMCHECK_RUN_ID
    ini:
      - section: commcheck_history
        key: run_id
notes:
  - The lookup runs on the controller and reads the controller's history directory.
seealso:
  - plugin: clusterops.commcheck.commcheck_history
    plugin_type: callback
'''

EXAMPLES = r'''
- name: RDMA write bandwidth of node-a over the last week
  ansible.builtin.debug:
    msg: "{{ lookup('clusterops.commcheck.commcheck_history', 'rdma_bw', host='node-a', since='7d') }}"

- name: Failing links of the last three runs, as host/peer/value
  ansible.builtin.debug:
    msg: >-
      {{ lookup('clusterops.commcheck.commcheck_history', kind=['rdma_bw', 'tcp_bw'], verdict='fail', last_runs=3,
                query='[].{host: host, peer: peer, gbps: metrics.bw_gbps}') }}

- name: The id of this run, once (what the one-click role does when no commcheck_run_id is given)
  ansible.builtin.set_fact:
    commcheck_run_id: "{{ commcheck_run_id | default('', true) or lookup('clusterops.commcheck.commcheck_history', setting='run_id') }}"
  run_once: true

- name: Summaries of every run this month
  ansible.builtin.set_fact:
    runs: "{{ query('clusterops.commcheck.commcheck_history', 'summary', since='2026-01-01') }}"
'''

RETURN = r'''
_list:
  description:
    - The matching records (dicts with C(schema), C(run_id), C(time), C(kind), C(host), C(peer), C(params),
      C(metrics), C(verdict), C(cause), C(fix), C(evidence)), oldest first; or the result of O(query).
  type: list
  elements: raw
'''

from ansible.errors import AnsibleError
from ansible.plugins.lookup import LookupBase
from ansible.utils.display import Display

from ansible_collections.clusterops.commcheck.plugins.module_utils.records import history

display = Display()


class LookupModule(LookupBase):

    def run(self, terms, variables=None, **kwargs):
        self.set_options(var_options=variables, direct=kwargs)
        setting = self.get_option("setting")
        if setting == "run_id":
            return [self._run_id(variables or {})]
        if setting == "history_dir":
            return [self._configured_history_dir()]
        directory = self._history_dir()
        report = history.ReadReport()
        try:
            result = history.query(directory, report=report, **self._filters(terms))
        except (ValueError, OSError) as exc:
            raise AnsibleError("commcheck_history lookup: %s" % exc)
        self._tell_bad_lines(directory, report.problems)
        if self.get_option("query"):
            return result if isinstance(result, list) else [result]
        return result

    def _run_id(self, variables):
        """The run id (slice-aware: a split run takes the id every slice shares, see resolve_run_id)."""
        try:
            slices = int(self._templar.template(variables.get("commcheck_slices", 1)) or 1)
            workflow = self._templar.template(variables.get("awx_workflow_job_id") or "")
            return history.resolve_run_id([self.get_option("configured_run_id")], slices=slices,
                                          workflow_job_id=workflow)
        except (TypeError, ValueError) as exc:
            raise AnsibleError("commcheck_history lookup: %s" % exc)

    def _configured_history_dir(self):
        value = self.get_option("history_dir")
        try:
            return history.check_history_dir(value, "history_dir")
        except ValueError:
            return value

    def _history_dir(self):
        try:
            return history.check_history_dir(self.get_option("history_dir"), "history_dir")
        except ValueError as exc:
            raise AnsibleError("commcheck_history lookup: %s" % exc)

    def _filters(self, terms):
        kinds = list(self.get_option("kind") or [])
        for term in terms or []:
            if isinstance(term, (list, tuple)):
                kinds.extend(str(t) for t in term)
            elif term:
                kinds.append(str(term))
        filters = dict((name, self.get_option(name))
                       for name in ("host", "peer", "run_id", "exclude_run_id", "verdict", "since", "until",
                                    "last_runs", "limit"))
        filters.update(kind=kinds or None, include_summary=True if self.get_option("include_summary") else None,
                       jmespath_query=self.get_option("query"))
        return filters

    def _tell_bad_lines(self, directory, problems):
        if not problems:
            return
        message = "commcheck_history lookup: skipped %d bad line(s) in %s: %s" % (
            len(problems), directory,
            "; ".join("%s:%s %s" % (p["file"], p["line"], p["reason"]) for p in problems[:5]))
        mode = self.get_option("on_bad_line")
        if mode == "fail":
            raise AnsibleError(message)
        if mode == "warn":
            display.warning(message)
