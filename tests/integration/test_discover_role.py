# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""playbooks/discover.yml for real: two local hosts, each with its own emulated sysfs tree."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import glob
import json
import os
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LAB = os.path.join(REPO, "tests", "lab")
COLLECTIONS = os.path.join(REPO, ".build", "collections")
VENV_BIN = os.path.join(REPO, ".venv", "bin")
if LAB not in sys.path:
    sys.path.insert(0, LAB)

import sysfs_tree  # noqa: E402  pylint: disable=wrong-import-position

# The full tier's: the one-click runs of the fast tier discover every host (test_oneclick_lab.py).
pytestmark = pytest.mark.full

HEALTHY = [
    {"name": "mlx5_0", "hca_type": "MT4129",
     "ports": [{"netdev": "ens1f0np0", "ipv4": "10.0.0.1/24", "rate_gbps": 400}]},
    {"name": "mlx5_1", "hca_type": "MT4129",
     "ports": [{"link_layer": "InfiniBand", "netdev": "ib0", "lid": 5, "sm_lid": 1, "rate_gbps": 400}]},
]
BROKEN = [
    {"name": "mlx5_0", "hca_type": "MT4129",
     "ports": [{"netdev": "ens1f0np0", "ipv4": "10.0.0.2/24", "rate_gbps": 400}]},
    {"name": "mlx5_1", "hca_type": "MT4129",
     "ports": [{"link_layer": "InfiniBand", "netdev": "ib0", "state": "DOWN", "phys_state": "Polling",
                "rate_gbps": 40}]},
]
NET = {"ens1f0np0": {"mtu": 9000}}

WRAPPER = """---
- name: Discover
  ansible.builtin.import_playbook: {playbook}

- name: Save what the discover role kept for the report
  hosts: localhost
  gather_facts: false
  tasks:
    - name: Write commcheck_run_records
      ansible.builtin.copy:
        dest: {out}
        content: "{{{{ commcheck_run_records | default([]) | to_json }}}}"
        mode: "0644"
"""


@pytest.fixture
def lab_inventory(tmp_path):
    roots = {}
    for host, devices in (("node1", HEALTHY), ("node2", BROKEN)):
        roots[host] = str(tmp_path / host / "sys")
        sysfs_tree.build_sysfs(roots[host], devices, cpus=["performance", "performance"], net=NET,
                               modules={"ib_core": {"netns_mode": "Y"}})
    inventory = {"all": {"hosts": dict(
        (host, {"ansible_connection": "local", "ansible_python_interpreter": sys.executable,
                "commcheck_sysfs_root": root}) for host, root in roots.items())}}
    path = tmp_path / "inventory.json"
    path.write_text(json.dumps(inventory))
    return str(path)


def _play(tmp_path, inventory, extra_vars=None):
    out = tmp_path / "records.json"
    wrapper = tmp_path / "wrapper.yml"
    wrapper.write_text(WRAPPER.format(playbook=os.path.join(REPO, "playbooks", "discover.yml"), out=out))
    history = tmp_path / "history"
    env = dict(os.environ)
    env.update({"ANSIBLE_COLLECTIONS_PATH": COLLECTIONS, "ANSIBLE_NOCOLOR": "1", "LC_ALL": "C.UTF-8",
                "ANSIBLE_CALLBACKS_ENABLED": "clusterops.commcheck.commcheck_history",
                "COMMCHECK_HISTORY_DIR": str(history), "ANSIBLE_LOCALHOST_WARNING": "0"})
    argv = [os.path.join(VENV_BIN, "ansible-playbook"), "-i", inventory, str(wrapper),
            "-e", json.dumps(dict({"ansible_python_interpreter": sys.executable}, **(extra_vars or {})))]
    proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                          env=env, cwd=REPO, timeout=300, check=False)
    output = proc.stdout + proc.stderr
    assert "Traceback" not in output, output
    records = json.loads(out.read_text()) if out.exists() else None
    lines = []
    for path in glob.glob(str(history / "*")):
        with open(path) as handle:
            lines += [json.loads(line) for line in handle if line.strip()]
    return proc.returncode, output, records, lines


def test_discover_playbook_prints_table_and_keeps_records(tmp_path, lab_inventory):
    rc, output, records, history = _play(tmp_path, lab_inventory)
    assert rc == 0, output
    table = [line.strip().strip('",') for line in output.splitlines()]
    assert any(line.split() == ["node1", "mlx5_0", "1", "ACTIVE", "LinkUp", "400G", "Ethernet", "ens1f0np0", "3"]
               for line in table), output
    assert any(line.split() == ["node2", "mlx5_1", "1", "DOWN", "Polling", "40G", "InfiniBand", "ib0", "-"]
               for line in table), output
    assert any(line.startswith("ERROR   node2 mlx5_1/1 port_down:") for line in table), output
    # records: one discover per host plus one per finding, host filled in
    kinds = sorted((r["kind"], r["host"], (r.get("params") or {}).get("code")) for r in records)
    assert ("discover", "node1", None) in kinds and ("discover", "node2", None) in kinds
    assert ("finding", "node2", "port_down") in kinds and ("finding", "node2", "phys_state_polling") in kinds
    verdicts = dict((r["host"], r["verdict"]) for r in records if r["kind"] == "discover")
    assert verdicts["node2"] == "fail"
    # the history callback wrote the same records
    hist = sorted((r["kind"], r["host"]) for r in history if r.get("kind") in ("discover", "finding"))
    assert hist == sorted((r["kind"], r["host"]) for r in records)


def test_fail_on_error_fails_only_the_broken_host(tmp_path, lab_inventory):
    rc, output = _play(tmp_path, lab_inventory, {"commcheck_fail_on": "error"})[:2]
    assert rc != 0
    assert "node2                      : ok=" in output and "failed=1" in output
    recap = [line for line in output.splitlines() if line.startswith("node1 ")]
    assert recap and "failed=0" in recap[0], output
    assert "finding(s) at or above 'error': phys_state_polling, port_down" in output


def test_bad_role_argument_is_refused(tmp_path, lab_inventory):
    rc, output = _play(tmp_path, lab_inventory, {"commcheck_fail_on": "sometimes"})[:2]
    assert rc != 0
    assert "commcheck_fail_on" in output and "sometimes" in output
