# -*- coding: utf-8 -*-
"""ansible_runner.run() against the lab: docs/examples/commcheck_service.py, and the snippet of
docs/ansible-runner.md run exactly as the doc has it.

The service test takes about 40 s (one RDMA ring over 4 lab hosts, then the report); the snippet
runs the one-click playbook (discovery and RDMA) on 2 lab hosts.
"""
import json
import os
import re
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VENV_BIN = os.path.dirname(sys.executable)
PLAYBOOK = os.path.join(REPO, "tests", "integration", "playbooks", "rdma_report.yml")
DOC = os.path.join(REPO, "docs", "ansible-runner.md")
COLLECTIONS = os.path.join(REPO, ".build", "collections")


@pytest.mark.slow
def test_service_runs_the_check_with_ansible_runner_against_the_lab(lab_factory, tmp_path, commcheck_service):
    pytest.importorskip("ansible_runner")
    if not os.path.exists(os.path.join(REPO, "playbooks", "rdma.yml")):
        pytest.fail("playbooks/rdma.yml is missing: the service test runs the RDMA check and the report")
    lab = lab_factory("hrun", hosts=4, rails=1)
    lab.slow(lab.hosts[1], rate="200mbit")   # one bad node, so the summary has something to name
    service = commcheck_service
    old_path = os.environ.get("PATH", "")
    os.environ["PATH"] = VENV_BIN + os.pathsep + old_path   # ansible-runner looks ansible-playbook up on PATH
    try:
        result = service.run_commcheck(
            inventory=lab.inventory, history_dir=str(tmp_path / "history"),
            private_data_dir=str(tmp_path / "runner"), playbook=PLAYBOOK, run_id="svc-lab-1",
            envvars={"ANSIBLE_CONFIG": lab.ansible_cfg},
            extravars={"commcheck_rdma_pattern": "ring", "commcheck_rdma_metrics": ["bw"],
                       "commcheck_rdma_duration": 2, "commcheck_report_dir": str(tmp_path / "reports")})
    finally:
        os.environ["PATH"] = old_path
        lab.heal()
    bad = lab.hosts[1]
    assert result["status"] == "successful", result
    # Ansible's stats, as ansible-runner reports them
    assert sorted(result["stats"]["ok"]) == sorted(lab.hosts + ["localhost"])
    assert not result["stats"]["failures"] and not result["stats"]["dark"]
    # the report role's set_stats summary
    summary = result["summary"]
    assert summary["run_id"] == "svc-lab-1"
    assert summary["bad_hosts"] == [bad]
    assert summary["counts"]["fail"] >= 2
    assert os.path.isfile(summary["files"]["html"])
    assert summary["files"]["html"].startswith(str(tmp_path / "reports" / "svc-lab-1"))
    # the history, read back through the collection's API
    assert result["records"] == summary["total"]
    assert result["history_summary"]["run_id"] == "svc-lab-1"
    assert result["history_summary"]["stats"]["commcheck_summary"]["bad_hosts"] == [bad]
    assert result["history_problems"] == []
    assert {bad} <= set(f["host"] for f in result["failing"]) | set(f["peer"] for f in result["failing"])
    assert result["regressions"] == []   # first run in this history: nothing to compare with


def doc_snippet():
    """The Python block under 'The essentials' in docs/ansible-runner.md, exactly as written."""
    with open(DOC) as handle:
        text = handle.read()
    section = text.split("## The essentials", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"^```python\n(.*?)^```$", section, re.S | re.M)
    assert len(blocks) == 1, "expected one python block under 'The essentials' in %s" % DOC
    return blocks[0]


def test_doc_snippet_is_found_whole():
    code = doc_snippet()
    compile(code, DOC, "exec")   # a syntax error in the doc fails here, before any lab
    assert "os.makedirs(private_data_dir" in code and "sys.path.insert" in code
    assert code.index("sys.path.insert") < code.index("from ansible_collections.clusterops.commcheck")


@pytest.mark.slow
def test_doc_snippet_runs_as_written_against_the_lab(lab_factory, tmp_path):
    pytest.importorskip("ansible_runner")
    lab = lab_factory("hdoc", hosts=2, rails=1)
    script = tmp_path / "snippet.py"
    script.write_text(doc_snippet())
    state = tmp_path / "state"                     # does not exist: the snippet creates what it needs
    env = dict((k, v) for k, v in os.environ.items()
               if k not in ("PYTHONPATH", "COMMCHECK_RUN_ID", "COMMCHECK_HISTORY_DIR", "JOB_ID", "AWX_JOB_ID"))
    env.update({
        "ANSIBLE_COLLECTIONS_PATH": COLLECTIONS,   # the snippet puts it on sys.path itself
        "COMMCHECK_INVENTORY": lab.inventory,
        "COMMCHECK_STATE_DIR": str(state),
        "ANSIBLE_CONFIG": lab.ansible_cfg,         # ansible-runner passes the service's environment on
        "PATH": VENV_BIN + os.pathsep + env.get("PATH", ""),
    })
    # a fresh interpreter in a directory without the collection: only the snippet's sys.path makes the import work
    proc = subprocess.run([sys.executable, "-I", str(script)], cwd=str(tmp_path), env=env, capture_output=True,
                          text=True, timeout=1500, check=False)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    out = json.loads(proc.stdout)
    assert out["status"] == "successful", out
    assert os.path.isdir(str(state / "runner" / "artifacts" / out["run_id"]))
    assert sorted(out["stats"]["ok"]) == sorted(lab.hosts)
    assert not out["stats"]["failures"] and not out["stats"]["dark"]
    # the report, the history's summary line and the reader agree on the run and its verdict
    assert out["verdict"] in ("pass", "warn", "fail")
    assert out["history"] == {"status": "complete", "verdict": out["verdict"]}
    assert out["records"] > 0
    assert os.path.isfile(out["report"]) and out["report"].startswith(str(state / "reports"))
