# -*- coding: utf-8 -*-
"""clusterops.commcheck.validate_options: the action plugin in real ansible-playbook runs.

The hosts are unreachable ssh hosts: the action must never connect to them.
"""
import json
import os
import subprocess
import sys

import pytest

from ansible_collections.clusterops.commcheck.plugins.action import validate_options as action

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VENV_BIN = os.path.dirname(sys.executable)

INVENTORY = """
all:
  vars:
    ansible_connection: ssh
    ansible_ssh_timeout: 1
    commcheck_tcp_address: "{{ ansible_host }}"
  hosts:
    ghost1: {ansible_host: 192.0.2.1}
    ghost2: {ansible_host: "-oProxyCommand=touch /tmp/pwned", commcheck_address: 192.0.2.2,
             commcheck_collective_mode: everything}
    ghost3: {ansible_host: 192.0.2.3, commcheck_collective_mode: per_node}
"""

CHECKS = """
- name: Check on the controller only
  hosts: all
  gather_facts: false
  tasks:
    - name: A bad inventory value of one host
      clusterops.commcheck.validate_options:
        roles: clusterops.commcheck.collective
      run_once: true
      ignore_errors: true
      register: per_host
    - name: A template that resolves to a bad value on one host
      clusterops.commcheck.validate_options:
        roles: [discover, tcp_perf]
      run_once: true
      ignore_errors: true
      register: templated
    - name: A value that cannot be evaluated and an extra bad value of the play
      clusterops.commcheck.validate_options:
        roles: [rdma_perf]
      vars:
        commcheck_rdma_center: "{{ nothing_defined_here }}"
        commcheck_rdma_hosts: [ghost1, "--help"]
      run_once: true
      ignore_errors: true
      register: unevaluated
    - name: A role that does not exist
      clusterops.commcheck.validate_options:
        roles: [discover, format_disk]
      run_once: true
      ignore_errors: true
      register: unknown
    - name: Another entry point
      clusterops.commcheck.validate_options:
        roles: [k8s_pods]
        entry_point: cleanup
      vars:
        commcheck_k8s_run_id: "Run 1"
      run_once: true
      ignore_errors: true
      register: cleanup
    - name: Per-test options the planned module calls take, and a size no planned test takes
      clusterops.commcheck.validate_options:
        roles: [rdma_perf]
      vars:
        commcheck_rdma_bidirectional: true
        commcheck_rdma_qps: 4
        commcheck_rdma_ops: [atomic]
        commcheck_rdma_size: 4096
      run_once: true
      ignore_errors: true
      register: planned
    - name: In check mode
      clusterops.commcheck.validate_options:
        roles: [report, quarantine]
      run_once: true
      check_mode: true
      register: check_mode

- name: A play variable is the value of every host
  hosts: all
  gather_facts: false
  vars:
    commcheck_collective_mode: pairs
  tasks:
    - name: The hosts' own values are not used
      clusterops.commcheck.validate_options:
        roles: [collective]
      run_once: true
      register: overridden

- name: Save what the checks returned
  hosts: localhost
  connection: local
  gather_facts: false
  tasks:
    - name: Save
      ansible.builtin.copy:
        content: "{{ dict(names | zip(names | map('extract', hostvars['ghost1']))) | to_json }}"
        dest: "%s"
        mode: "0644"
      vars:
        names: [per_host, templated, unevaluated, unknown, cleanup, check_mode, overridden, planned]
"""

FATAL = """
- name: One bad value stops every host
  hosts: all
  gather_facts: false
  tasks:
    - name: Check
      clusterops.commcheck.validate_options:
        roles: [tcp_perf]
      run_once: true
      any_errors_fatal: true
    - name: Must not run on any host
      ansible.builtin.file:
        path: "%s/ran-{{ inventory_hostname }}"
        state: touch
        mode: "0644"
"""

GOOD_INVENTORY = ("all:\n  vars: {ansible_connection: local, ansible_python_interpreter: %s}\n"
                  "  hosts:\n    h1: {}\n    h2: {commcheck_tcp_parallel: 16}\n" % sys.executable)


def _env(tmp_path):
    env = dict(os.environ)
    env["ANSIBLE_COLLECTIONS_PATH"] = os.path.join(REPO, ".build", "collections")
    env["ANSIBLE_LOCAL_TEMP"] = str(tmp_path / "tmp")
    env["ANSIBLE_NOCOLOR"] = "1"
    env["ANSIBLE_HOST_KEY_CHECKING"] = "false"
    env["ANSIBLE_LOCALHOST_WARNING"] = "false"
    env.pop("ANSIBLE_CALLBACKS_ENABLED", None)
    return env


def _playbook(tmp_path, name, text, inventory, *extra):
    path = tmp_path / name
    path.write_text(text)
    inv = tmp_path / ("inventory-%s.yml" % name)
    inv.write_text(inventory)
    return subprocess.run([os.path.join(VENV_BIN, "ansible-playbook"), "-i", str(inv), str(path)] + list(extra),
                          env=_env(tmp_path), capture_output=True, text=True, check=False, timeout=300)


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("validate-options")
    out_file = tmp_path / "out.json"
    proc = _playbook(tmp_path, "checks.yml", CHECKS % out_file, INVENTORY)
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-3000:]
    return json.loads(out_file.read_text())


def test_a_bad_value_of_one_host_names_the_option_and_the_host(results):
    res = results["per_host"]
    assert res["failed"] is True
    assert res["msg"] == ("Bad option(s), nothing was run: commcheck_collective_mode: 'everything' is not one of "
                          "pool, per_node, pairs (on ghost2)")
    assert res["hosts"] == 3
    assert res["roles"] == ["collective"]


def test_a_template_is_checked_as_each_host_resolves_it(results):
    res = results["templated"]
    assert res["failed"] is True
    assert res["problems"] == [
        "commcheck_tcp_address: '-oProxyCommand=touch /tmp/pwned' must not start with '-' (it would be read as "
        "an option) (on ghost2)"]


def test_a_value_that_cannot_be_evaluated_is_a_problem_and_all_are_named(results):
    res = results["unevaluated"]
    assert res["failed"] is True
    assert res["msg"].startswith("Bad option(s), nothing was run: ")
    assert any(p.startswith("commcheck_rdma_center: cannot be evaluated") for p in res["problems"]), res
    assert "commcheck_rdma_hosts[1]: '--help' must not start with '-' (it would be read as an option)" in res["problems"]


def test_an_unknown_role_is_refused(results):
    res = results["unknown"]
    assert res["failed"] is True and "format_disk" in res["msg"] and "roles[" in res["msg"] and "must be one of" in res["msg"]


def test_another_entry_point_checks_its_own_options(results):
    res = results["cleanup"]
    assert res["failed"] is True
    # the wording after the option is k8s_pods.validate_params'
    assert len(res["problems"]) == 1, res
    assert res["problems"][0].startswith("commcheck_k8s_run_id: ") and "'Run 1'" in res["problems"][0], res


def test_good_values_pass_in_check_mode_and_list_what_was_checked(results):
    res = results["check_mode"]
    assert not res.get("failed") and res["changed"] is False
    assert "commcheck_report_dir" in res["checked"] and "commcheck_quarantine_backend" in res["checked"]
    assert res["msg"].endswith("checked on 3 host(s)")


def test_an_option_no_planned_test_takes_is_a_warning_naming_the_variable(results):
    res = results["planned"]
    assert not res.get("failed") and res["warnings"] == [
        "commcheck_rdma_size: 4096 applies to every test but atomic ones (fixed 8 bytes); none of the tests planned "
        "from commcheck_rdma_ops and commcheck_rdma_metrics is one (it is not used in this run)"], res


def test_a_play_variable_replaces_the_hosts_own_values(results):
    res = results["overridden"]
    assert not res.get("failed"), res
    assert res["hosts"] == 3


def test_one_bad_value_stops_the_play_before_anything_runs(tmp_path):
    marks = tmp_path / "marks"
    marks.mkdir()
    inventory = ("all:\n  vars: {ansible_connection: local, ansible_python_interpreter: %s}\n"
                 "  hosts:\n    h1: {}\n    h2: {commcheck_tcp_parallel: 1000}\n" % sys.executable)
    proc = _playbook(tmp_path, "fatal.yml", FATAL % marks, inventory)
    assert proc.returncode == 2, proc.stdout[-4000:]
    assert "Bad option(s), nothing was run: commcheck_tcp_parallel: 1000 must be between 1 and 128 (on h2)" \
        in proc.stdout
    assert sorted(os.listdir(str(marks))) == []


def test_two_inventory_names_with_one_address_stop_the_play_before_anything_runs(tmp_path):
    marks = tmp_path / "marks"
    marks.mkdir()
    inventory = ("all:\n  vars: {ansible_connection: local, ansible_python_interpreter: %s}\n"
                 "  hosts:\n    h1: {ansible_host: 192.0.2.1}\n    h1b: {ansible_host: 192.0.2.1}\n"
                 "    h2: {ansible_host: 192.0.2.1, commcheck_tcp_address: 192.0.2.2}\n" % sys.executable)
    proc = _playbook(tmp_path, "fatal.yml", FATAL % marks, inventory)
    assert proc.returncode == 2, proc.stdout[-4000:]
    assert "Bad option(s), nothing was run: hosts 'h1', 'h1b' share the address '192.0.2.1' (ansible_host, as " \
        "their TCP address)" in proc.stdout
    assert sorted(os.listdir(str(marks))) == []


def test_the_shared_task_files_family_given_by_the_user_stops_the_play_naming_it(tmp_path):
    # rdma_perf and tcp_perf set commcheck_pair_family on their import of pair_perf; an extra var would win over
    # both and run the RDMA check as TCP's
    marker = tmp_path / "ran"
    marker.mkdir()
    proc = _playbook(tmp_path, "family.yml", FATAL % marker, GOOD_INVENTORY, "-e", "commcheck_pair_family=tcp")
    assert proc.returncode != 0
    assert "commcheck_pair_family: is set by the roles rdma_perf and tcp_perf" in proc.stdout
    assert not os.listdir(str(marker))
    assert action.internal_variable_problems({"commcheck_rdma_qps": 4}) == []


def test_the_same_hosts_with_good_values_run_on(tmp_path):
    marks = tmp_path / "marks"
    marks.mkdir()
    proc = _playbook(tmp_path, "fatal.yml", FATAL % marks, GOOD_INVENTORY)
    assert proc.returncode == 0, proc.stdout[-4000:]
    assert sorted(os.listdir(str(marks))) == ["ran-h1", "ran-h2"]


# ---------------------------------------------------------------- helpers of the action (pure)

def test_role_names_may_be_fully_qualified():
    assert action.role_name("clusterops.commcheck.discover") == "discover"
    assert action.role_name("discover") == "discover"


def test_every_role_spec_loads():
    specs = action.load_specs(action.role_options.ROLES)
    assert sorted(specs) == sorted(action.role_options.ROLES)
    assert all("main" in spec for spec in specs.values())


def test_the_specs_read_by_libyaml_are_those_the_python_loader_reads():
    import yaml
    assert action.SPEC_LOADER is getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    for role in action.role_options.ROLES:
        path = os.path.join(action.ROLES_DIR, role, "meta", "argument_specs.yml")
        with open(path) as handle:
            python = yaml.load(handle, Loader=yaml.SafeLoader)["argument_specs"]
        assert action.load_specs([role])[role] == python


def test_templates_are_found_at_any_depth():
    assert action.has_template({"a": ["{{ x }}"]})
    assert action.has_template("{% if x %}y{% endif %}")
    assert not action.has_template({"a": ["b", 1, None]})


def test_plain_turns_containers_into_builtins():
    assert action.plain(({"a": (1, 2.5, True)},)) == [{"a": [1, 2.5, True]}]
