# -*- coding: utf-8 -*-
"""docs/examples/commcheck_service.py: ansible_runner.run() against the lab, summary from stats and history.

Takes about 40 s (one RDMA ring over 4 lab hosts, then the report).
"""
import importlib.util
import os
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VENV_BIN = os.path.dirname(sys.executable)
PLAYBOOK = os.path.join(REPO, "tests", "integration", "playbooks", "rdma_report.yml")


def _service():
    spec = importlib.util.spec_from_file_location(
        "commcheck_service", os.path.join(REPO, "docs", "examples", "commcheck_service.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_service_runs_the_check_with_ansible_runner_against_the_lab(lab_factory, tmp_path):
    pytest.importorskip("ansible_runner")
    if not os.path.exists(os.path.join(REPO, "playbooks", "rdma.yml")):
        pytest.fail("playbooks/rdma.yml is missing: the service test runs the RDMA check and the report")
    lab = lab_factory("hrun", hosts=4, rails=1)
    lab.slow(lab.hosts[1], rate="200mbit")   # one bad node, so the summary has something to name
    service = _service()
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
