# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""When a run counts as failed (the report module's fail_on, the report role's commcheck_report_fail_on): the rule,
and the role failing a real play as asked after writing the report (make compat runs it on every core)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os
import subprocess
import sys

import pytest

from ansible_collections.clusterops.commcheck.plugins.module_utils.records import report_render as rr


@pytest.mark.parametrize("counts, regressions, asked", [
    # (fail, error), regressions -> the modes that fail the run
    ((1, 0), 0, {"fail", "regression"}),
    ((0, 2), 0, {"fail", "regression"}),
    ((0, 0), 3, {"regression"}),
    ((0, 0), 0, set()),
])
def test_the_run_fails_as_fail_on_asks_with_its_counts(counts, regressions, asked):
    summary = {"run_id": "r7", "counts": {"pass": 4, "fail": counts[0], "error": counts[1]},
               "regressions": regressions}
    for mode in ("never", "fail", "regression"):
        message = rr.failed_as_asked(summary, mode, "/reports/r7")
        assert bool(message) is (mode in asked), (mode, message)
        if message:
            assert message == "commcheck run r7: %d failed, %d errored, %d regressed; report in /reports/r7" % (
                counts[0], counts[1], regressions)


FAIL_ON_PLAYBOOK = """
- hosts: localhost
  gather_facts: false
  roles:
    - role: clusterops.commcheck.report
      vars:
        commcheck_run_id: fail-on-7
        commcheck_report_records:
          - {kind: tcp_bw, host: a, peer: b, verdict: pass, metrics: {bw_gbps: 9.0}}
          - {kind: tcp_bw, host: b, peer: c, verdict: %(second)s, metrics: {bw_gbps: 1.0}}
        commcheck_report_dir: "%(reports)s"
        commcheck_report_formats: [json]
        commcheck_report_fail_on: %(fail_on)s
"""


@pytest.mark.parametrize("second, fail_on, fails", [
    ("fail", "fail", True), ("fail", "never", False), ("pass", "regression", False)])
def test_the_report_role_fails_the_play_as_fail_on_asks_after_writing_the_report(tmp_path, second, fail_on, fails):
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    reports = tmp_path / "reports"
    playbook = tmp_path / "play.yml"
    playbook.write_text(FAIL_ON_PLAYBOOK % {"reports": reports, "second": second, "fail_on": fail_on})
    env = dict((k, v) for k, v in os.environ.items() if not k.startswith(("ANSIBLE_", "COMMCHECK_")))
    env.update(ANSIBLE_COLLECTIONS_PATH=os.path.join(repo, ".build", "collections"),
               ANSIBLE_LOCAL_TEMP=str(tmp_path / "tmp"), ANSIBLE_NOCOLOR="1",
               COMMCHECK_HISTORY_DIR=str(tmp_path / "history"))
    proc = subprocess.run([os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", "localhost,",
                           "-c", "local", "-e", "ansible_python_interpreter=%s" % sys.executable, str(playbook)],
                          env=env, capture_output=True, text=True, check=False, timeout=120)
    assert (proc.returncode != 0) is fails, proc.stdout + proc.stderr
    assert (reports / "fail-on-7" / "results.json").is_file()
    message = "commcheck run fail-on-7: 1 failed, 0 errored, 0 regressed; report in %s" % (reports / "fail-on-7")
    assert (message in proc.stdout) is fails, proc.stdout
