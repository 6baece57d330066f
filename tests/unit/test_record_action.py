# -*- coding: utf-8 -*-
"""clusterops.commcheck.record: validation, normalization, secret stripping (pure + one real run)."""
import json
import os
import subprocess
import sys

import pytest

from ansible_collections.clusterops.commcheck.plugins.module_utils.records import history

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VENV_BIN = os.path.dirname(sys.executable)


def test_minimal_record_is_normalized():
    records, removed = history.normalize_records([{"kind": "tcp_bw", "host": "a", "verdict": "pass"}])
    assert removed == []
    assert records == [{
        "kind": "tcp_bw", "host": "a", "peer": None, "params": {}, "metrics": {}, "verdict": "pass",
        "cause": None, "fix": None, "evidence": [],
    }]


def test_full_record_keeps_values_and_extra_keys():
    rec = {"kind": "rdma_bw", "host": " n1 ", "peer": "n2", "params": {"op": "write", "device": "mlx5_0", "size": 65536},
           "metrics": {"bw_gbps": 97.5, "expected_gbps": 100}, "verdict": "fail", "cause": "low rate",
           "fix": "reseat the cable", "evidence": "ib_write_bw -d mlx5_0", "regression": None,
           "schema": 99, "run_id": "evil", "time": "x"}
    [out], _removed = history.normalize_records([rec])
    assert out["host"] == "n1" and out["peer"] == "n2"
    assert out["params"] == {"op": "write", "device": "mlx5_0", "size": 65536}
    assert out["metrics"]["bw_gbps"] == 97.5
    assert out["evidence"] == ["ib_write_bw -d mlx5_0"]
    assert "regression" in out
    for stamp in ("schema", "run_id", "time"):
        assert stamp not in out  # the callback sets them


@pytest.mark.parametrize("bad, message", [
    ("nope", "must be a dict"),
    ({"host": "a", "verdict": "pass"}, "'kind' is required"),
    ({"kind": "x", "host": "", "verdict": "pass"}, "'host' is required"),
    ({"kind": "x", "host": "a"}, "'verdict' must be one of"),
    ({"kind": "x", "host": "a", "verdict": "ok"}, "'verdict' must be one of"),
    ({"kind": "x", "host": "a", "verdict": "pass", "params": [1]}, "'params' must be a dict"),
    ({"kind": "x", "host": "a", "verdict": "pass", "metrics": "1"}, "'metrics' must be a dict"),
    ({"kind": "x", "host": "a", "verdict": "pass", "peer": 3}, "'peer' must be a string"),
    ({"kind": "x", "host": "a", "verdict": "pass", "cause": 3}, "'cause' must be a string"),
    ({"kind": "x", "host": "a", "verdict": "pass", "evidence": 3}, "'evidence' must be a list"),
])
def test_bad_records_are_rejected_with_a_clear_message(bad, message):
    with pytest.raises(history.RecordError) as err:
        history.normalize_records([{"kind": "ok", "host": "h", "verdict": "pass"}, bad])
    assert message in str(err.value)
    assert "records[1]" in str(err.value)


def test_records_must_be_a_list():
    with pytest.raises(history.RecordError):
        history.normalize_records({"kind": "x"})


def test_secrets_are_stripped_at_any_depth():
    rec = {"kind": "collective", "host": "a", "verdict": "pass",
           "params": {"op": "all_reduce", "kubeconfig": "/root/.kube/config", "pkey_index": 0,
                      "env": {"NCCL_IB_HCA": "mlx5", "HF_TOKEN": "hf_abc", "ssh_key": "----BEGIN"},
                      "api_key": "k", "Password": "p", "client_secret": "s", "keys": ["a"]},
           "metrics": {"busbw_gbs": 10.0},
           "evidence": ["curl -H 'Authorization: Bearer abc.def' https://u:pw@example/x",
                        "mpirun -x DB_PASSWORD=hunter2 --token tok123 ./all_reduce_perf"],
           "cause": "password=hunter2 leaked", "extra": {"nested": [{"access_token": "t"}]}}
    [out], removed = history.normalize_records([rec])
    text = json.dumps(out)
    for secret in ("hf_abc", "----BEGIN", "/root/.kube/config", "hunter2", "tok123", "abc.def", ":pw@", '"k"', '"p"', '"s"'):
        assert secret not in text, secret
    assert out["params"]["pkey_index"] == 0
    assert out["params"]["env"] == {"NCCL_IB_HCA": "mlx5"}
    assert out["extra"] == {"nested": [{}]}
    assert "records[0].params.kubeconfig" in removed
    assert any(p.startswith("records[0].evidence") for p in removed)
    assert "********" in out["evidence"][1]


def test_is_secret_key_word_rules():
    for key in ("password", "api_key", "apiKey", "ssh-key", "key", "KUBECONFIG", "my_token", "keyfile", "SECRET_X"):
        assert history.is_secret_key(key), key
    for key in ("pkey_index", "monkey", "kind", "op", "device", "bw_gbps", "keyboard_layout"):
        assert not history.is_secret_key(key), key


def _ansible_env(tmp_path):
    env = dict(os.environ)
    env["ANSIBLE_COLLECTIONS_PATH"] = os.path.join(REPO, ".build", "collections")
    env["ANSIBLE_LOCAL_TEMP"] = str(tmp_path / "tmp")
    env["ANSIBLE_NOCOLOR"] = "1"
    env.pop("ANSIBLE_CALLBACKS_ENABLED", None)
    return env


def test_action_runs_on_the_controller_only(tmp_path):
    """A real task against an unreachable host: the action must not connect to it."""
    out_file = tmp_path / "out.json"
    playbook = tmp_path / "pb.yml"
    playbook.write_text("""
- name: Publish for a host that cannot be reached
  hosts: ghost
  gather_facts: false
  tasks:
    - name: Publish
      clusterops.commcheck.record:
        records:
          - {kind: tcp_bw, host: "{{ inventory_hostname }}", peer: b, metrics: {bw_gbps: 1.5}, verdict: pass, params: {token: x}}
      register: out
- name: Collect
  hosts: localhost
  connection: local
  gather_facts: false
  tasks:
    - name: Bad verdict
      block:
        - name: Publish a bad record
          clusterops.commcheck.record:
            records: [{kind: tcp_bw, host: a, verdict: great}]
      rescue:
        - name: Keep the failure
          ansible.builtin.set_fact:
            bad: "{{ ansible_failed_result }}"
    - name: Save
      ansible.builtin.copy:
        content: "{{ {'good': hostvars['ghost'].out, 'bad': bad} | to_json }}"
        dest: "%s"
        mode: "0644"
""" % out_file)
    inventory = tmp_path / "inv.ini"
    inventory.write_text("ghost ansible_host=192.0.2.1 ansible_connection=ssh ansible_ssh_timeout=1\n")
    proc = subprocess.run([os.path.join(VENV_BIN, "ansible-playbook"), "-i", str(inventory), str(playbook)],
                          env=_ansible_env(tmp_path), capture_output=True, text=True, check=False, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads(out_file.read_text())
    good = data["good"]
    assert good["changed"] is False
    assert good["commcheck_records"][0]["metrics"] == {"bw_gbps": 1.5}
    assert good["commcheck_records"][0]["params"] == {}
    assert good["redacted"] == ["records[0].params.token"]
    assert data["bad"]["failed"] is True
    assert "'verdict' must be one of" in data["bad"]["msg"]
