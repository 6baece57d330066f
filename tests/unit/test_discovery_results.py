# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The discover role's controller step (the discovery_results action): every host's discovery read once."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from unittest import mock

from ansible.playbook.play_context import PlayContext

from ansible_collections.clusterops.commcheck.plugins.action import discovery_results as action


def facts(device, findings=(), records=()):
    return {"devices": [{"name": device, "ports": [{"port": 1, "state": "ACTIVE", "rate_gbps": 400}]}],
            "findings": list(findings), "summary": {"ports": 1}, "records": list(records)}


def run(task_vars):
    task = mock.MagicMock()
    task.args = {}
    task.check_mode = False
    task.async_val = 0
    templar = mock.MagicMock()
    templar.template.side_effect = lambda value, **kwargs: value
    plugin = action.ActionModule(task, mock.MagicMock(), PlayContext(), loader=mock.MagicMock(), templar=templar,
                                 shared_loader_obj=mock.MagicMock())
    return plugin.run(task_vars=task_vars)


ERROR = {"severity": "error", "code": "port_down", "device": "mlx5_1", "port": 1, "message": "mlx5_1 port 1 is DOWN"}
INFO = {"severity": "info", "code": "note", "message": "just so you know"}


def play(**changes):
    hostvars = {
        "n10": {"commcheck_discover_run": {"ansible_facts": {"commcheck_rdma": facts(
            "mlx5_1", [ERROR, INFO], [{"kind": "discover", "verdict": "fail", "host": "wrong"}])}}},
        "n2": {"commcheck_discover_run": {"failed": True, "ansible_facts": {"commcheck_rdma": facts(
            "mlx5_0", [], [{"kind": "discover", "verdict": "pass"}, {"kind": "finding", "verdict": "warn"}])}}},
        # not discovered (unreachable, or a module that failed before it read anything)
        "n3": {"commcheck_discover_run": {"failed": True}},
        "n4": {},
    }
    return dict({"hostvars": hostvars, "ansible_play_hosts_all": ["n10", "n2", "n3", "n4"]}, **changes)


def test_only_hosts_with_facts_are_in_the_table_those_that_failed_included():
    found = action.discovered(lambda host: play()["hostvars"][host].get("commcheck_discover_run", {}).get(
        "ansible_facts", {}).get("commcheck_rdma"), ["n10", "n2", "n3", "n4"])
    assert list(found) == ["n10", "n2"]


def test_the_records_are_named_by_their_host_in_play_order():
    result = run(play())
    assert not result.get("failed"), result.get("msg")
    assert [(r["host"], r["kind"]) for r in result["records"]] == [
        ("n10", "discover"), ("n2", "discover"), ("n2", "finding")]


def test_the_table_sorts_hosts_naturally_and_honours_the_least_severity():
    lines = run(play())["table"]
    assert [line.split()[0] for line in lines[1:3]] == ["n2", "n10"]
    assert any("just so you know" in line for line in lines)
    quiet = run(play(commcheck_discover_min_severity="error"))["table"]
    assert not any("just so you know" in line for line in quiet) and any("port_down" in line for line in quiet)


def test_a_severity_that_is_none_fails_naming_the_choices():
    result = run(play(commcheck_discover_min_severity="loud"))
    assert result["failed"] and "min_severity must be one of" in result["msg"]
