# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ansible_runner.run() usage docs/ansible-runner.md and docs/examples/commcheck_service.py give, on the
installed ansible-runner, without the lab.

- the snippet under "The essentials", as written, twice with the same state directory: ansible-runner takes
  every keyword it passes, finds the one-click playbook by its name, and each run gets its OWN run id and
  extra variables (ansible-runner 2.4 writes env/envvars and env/extravars into private_data_dir unless
  told not to, and applies them to every later run there). The only change to the snippet: ansible-playbook
  runs with --syntax-check (the playbook is parsed, nothing runs);
- run_commcheck() of the example service, twice with one private_data_dir, on a two-task playbook run on
  localhost: each run's summary carries its own run id and only its own extra variables;
- an inventory path that does not exist, or stale env files, are refused before ansible-runner turns them
  into something else (ansible-runner writes a string that is not a path into inventory/hosts as the
  inventory's text).

Each ansible-runner run takes a few seconds (ansible-playbook starting).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json
import os
import re
import sys

import pytest

import ansible_runner

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DOC = os.path.join(REPO, "docs", "ansible-runner.md")
COLLECTIONS = os.path.join(REPO, ".build", "collections")
BIN = os.path.dirname(sys.executable)


def _doc_snippet():
    with open(DOC) as handle:
        text = handle.read()
    section = text.split("## The essentials", 1)[1].split("\n## ", 1)[0]
    [block] = re.findall(r"^```python\n(.*?)^```$", section, re.S | re.M)
    return block


@pytest.fixture
def runner_env(monkeypatch, tmp_path):
    """The service's environment: ansible-playbook on PATH, the collection found, no run id of the caller's."""
    monkeypatch.setenv("PATH", BIN + os.pathsep + os.environ.get("PATH", ""))
    monkeypatch.setenv("ANSIBLE_COLLECTIONS_PATH", COLLECTIONS)
    for name in ("COMMCHECK_RUN_ID", "COMMCHECK_HISTORY_DIR", "JOB_ID", "AWX_JOB_ID", "ANSIBLE_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    inventory = tmp_path / "inventory.ini"
    inventory.write_text("localhost ansible_connection=local ansible_python_interpreter=%s\n" % sys.executable)
    return inventory


def test_the_doc_snippet_runs_twice_on_one_state_dir(runner_env, monkeypatch, tmp_path, capsys):
    real_run = ansible_runner.run
    seen = []

    def syntax_check_run(**kwargs):
        runner = real_run(cmdline="--syntax-check", **kwargs)
        seen.append((kwargs, runner))
        return runner

    monkeypatch.setattr(ansible_runner, "run", syntax_check_run)
    monkeypatch.setenv("COMMCHECK_INVENTORY", str(runner_env))
    monkeypatch.setenv("COMMCHECK_STATE_DIR", str(tmp_path / "state"))
    outputs = []
    for _run in range(2):
        exec(compile(_doc_snippet(), DOC, "exec"), {"__name__": "__main__"})  # pylint: disable=exec-used
        outputs.append(json.loads(capsys.readouterr().out))
    assert len(seen) == 2
    for (kwargs, runner), out in zip(seen, outputs):
        assert runner.status == "successful" and runner.rc == 0, runner.stdout.read()
        assert kwargs["playbook"] == "clusterops.commcheck.commcheck"
        # the run's own id, not the first run's
        assert runner.config.env["COMMCHECK_RUN_ID"] == kwargs["envvars"]["COMMCHECK_RUN_ID"] == out["run_id"]
        assert runner.config.env["COMMCHECK_HISTORY_DIR"] == str(tmp_path / "state" / "history")
        # the inventory ansible-playbook reads is the file itself
        assert runner.config.inventory == str(runner_env)
    assert outputs[0]["run_id"] != outputs[1]["run_id"]
    assert not os.path.exists(str(tmp_path / "state" / "runner" / "env"))


PLAYBOOK = """\
- name: What a run of the service sees
  hosts: localhost
  gather_facts: false
  tasks:
    - name: Publish the run id and the extra variables, as the report role publishes its summary
      ansible.builtin.set_stats:
        data:
          commcheck_summary:
            run_id: "{{ lookup('ansible.builtin.env', 'COMMCHECK_RUN_ID') }}"
            first: "{{ first | default('unset') | string }}"
            second: "{{ second | default('unset') | string }}"
"""


def test_run_commcheck_twice_with_one_private_data_dir(runner_env, tmp_path, commcheck_service):
    service = commcheck_service
    playbook = tmp_path / "service.yml"
    playbook.write_text(PLAYBOOK)
    private = str(tmp_path / "runner")
    common = dict(history_dir=str(tmp_path / "history"), private_data_dir=private, playbook=str(playbook),
                  limit="localhost", forks=1, timeout=300)
    one = service.run_commcheck(str(runner_env), run_id="svc-one", extravars={"first": 1, "second": 1}, **common)
    two = service.run_commcheck(str(runner_env), run_id="svc-two", extravars={"first": 2}, **common)
    assert one["status"] == two["status"] == "successful"
    assert one["summary"] == {"run_id": "svc-one", "first": "1", "second": "1"}
    # neither the first run's id nor its extra variable "second" reaches the second run
    assert two["summary"] == {"run_id": "svc-two", "first": "2", "second": "unset"}
    assert sorted(os.listdir(os.path.join(private, "artifacts"))) == ["svc-one", "svc-two"]


def test_run_commcheck_refuses_what_ansible_runner_would_misread(runner_env, tmp_path, commcheck_service):
    service = commcheck_service
    common = dict(history_dir=str(tmp_path / "history"), private_data_dir=str(tmp_path / "runner"))
    with pytest.raises(ValueError, match="no inventory at"):
        service.run_commcheck(str(tmp_path / "missing.yml"), **common)
    os.makedirs(str(tmp_path / "runner" / "env"))
    (tmp_path / "runner" / "env" / "envvars").write_text('{"COMMCHECK_RUN_ID": "old"}')
    with pytest.raises(ValueError, match="envvars: ansible-runner would apply it"):
        service.run_commcheck(str(runner_env), **common)


def test_ansible_runner_reads_a_missing_inventory_path_as_inventory_text(tmp_path):
    """Why the path must exist: ansible-runner's own dump_artifacts writes the string into inventory/hosts."""
    from ansible_runner.utils import dump_artifacts
    kwargs = {"private_data_dir": str(tmp_path), "inventory": "inventory.yml", "suppress_env_files": True}
    dump_artifacts(kwargs)
    assert kwargs["inventory"] == str(tmp_path / "inventory" / "hosts")
    assert (tmp_path / "inventory" / "hosts").read_text() == "inventory.yml"
