# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The pair_check action: what it reads of each host (port counters before and after, topology) and of what the
role registered, in place of the Jinja loops over hostvars the rdma_perf role had."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from unittest import mock

from ansible.playbook.play_context import PlayContext

from ansible_collections.clusterops.commcheck.plugins.action import pair_check

from fault_lab import Fabric


def run_step(family, step, task_vars):
    task = mock.MagicMock()
    task.args = {"step": step} if family is None else {"family": family, "step": step}
    task.check_mode = False
    task.async_val = 0
    templar = mock.MagicMock()
    templar.template.side_effect = lambda item, **kwargs: item
    action = pair_check.ActionModule(task, mock.MagicMock(), PlayContext(), loader=mock.MagicMock(), templar=templar,
                                     shared_loader_obj=mock.MagicMock())
    return action.run(task_vars=task_vars)


def counter_vars(from_discovery):
    fabric = Fabric(n=3, rails=1)
    fabric.counters[("h2", 0)] = {"symbol_error": 40}
    before, after = fabric.rdma_facts(), fabric.rdma_facts(after=True)
    hostvars = {
        # the role's own reading before the tests (a registered rdma_facts result), the latest after them
        "h1": {"commcheck_pair_perf_counters_before": {"ansible_facts": {"commcheck_rdma": before["h1"]}},
               "commcheck_pair_perf_counters_latest": after["h1"]},
        # discovery's facts before, the pipelined run's own reading after
        "h2": {"ansible_facts": {"commcheck_rdma": before["h2"]},
               "commcheck_pair_perf_counters_before": {"commcheck_rdma": before["h2"]},
               "commcheck_pair_perf_counters_latest": None, "commcheck_pair_perf_job": {"port_counters": after["h2"]}},
        # no reading after its tests: no deltas
        "h3": {"commcheck_pair_perf_counters_before": {"commcheck_rdma": before["h3"]}},
    }
    return {"hostvars": hostvars, "ansible_play_hosts": ["h1", "h2", "h3"], "commcheck_rdma_counters": True,
            "commcheck_pair_perf_counters_from_discovery": from_discovery,
            "commcheck_pair_perf_fleet": {"own": ["h1", "h2", "h3", "gone"], "hosts": ["h1", "h2", "h3"]}}


def test_the_counters_step_takes_before_and_after_from_where_each_host_has_them():
    result = run_step("rdma", "counters", counter_vars(False))
    assert not result.get("failed"), result
    assert sorted(result["counters"]) == ["h1", "h2"]
    rose = [d for d in result["counters"]["h2"]["deltas"] if d.get("delta")]
    assert [(d["host"], d["counter"], d["delta"]) for d in rose] == [("h2", "symbol_error", 40)]
    assert not [d for d in result["counters"]["h1"]["deltas"] if d.get("delta")]


def test_with_discovery_s_reading_a_host_without_facts_has_no_counter_deltas():
    result = run_step("rdma", "counters", counter_vars(True))
    assert sorted(result["counters"]) == ["h2"]


def test_the_counters_step_reads_nothing_when_the_check_counts_nothing():
    task_vars = dict(counter_vars(False), commcheck_rdma_counters=False)
    assert run_step("rdma", "counters", task_vars)["counters"] == {}


def test_a_family_without_port_counters_counts_none_whatever_the_rdma_variables_say():
    """The shared task files run the counters step for every family: TCP's reads no host, even with the RDMA
    check's counters on and the RDMA check's readings left on the hosts."""
    task_vars = dict(counter_vars(False), commcheck_tcp_counters=True)
    assert run_step("tcp", "counters", task_vars) == {"counters": {}, "changed": False}


def test_a_step_without_family_takes_the_one_its_role_set_and_fails_naming_both_without_it():
    """The shared task files name no family: the step takes commcheck_pair_family (rdma_perf and tcp_perf set it)."""
    by_role = run_step(None, "counters", dict(counter_vars(False), commcheck_pair_family="rdma"))
    assert by_role["counters"] == run_step("rdma", "counters", counter_vars(False))["counters"] != {}
    assert run_step(None, "counters", dict(counter_vars(False), commcheck_pair_family="tcp"))["counters"] == {}
    # the task's family wins over the role's
    assert run_step("tcp", "counters", dict(counter_vars(False), commcheck_pair_family="rdma"))["counters"] == {}
    failed = run_step(None, "counters", counter_vars(False))
    assert failed["failed"] and "give family, or set commcheck_pair_family" in failed["msg"], failed
    failed = run_step(None, "counters", dict(counter_vars(False), commcheck_pair_family="udp"))
    assert failed["failed"] and "family must be one of rdma, rdma_gpu, tcp, got 'udp'" in failed["msg"], failed


def test_a_host_s_topology_is_what_discovery_read_under_what_its_inventory_says():
    task_vars = {"hostvars": {
        "h1": {"ansible_facts": {"commcheck_rdma": {"topology": {"0": {"leaf": "lldp-leaf"}, "1": {"leaf": "b"}}}},
               "commcheck_topology": {"0": {"leaf": "inventory-leaf"}}},
        "h2": {}}}
    action = pair_check.ActionModule(mock.MagicMock(), mock.MagicMock(), PlayContext(), loader=mock.MagicMock(),
                                     templar=mock.MagicMock(), shared_loader_obj=mock.MagicMock())
    action._vars = task_vars  # pylint: disable=protected-access
    assert action.topology(["h1", "h2"]) == {"h1": {"0": {"leaf": "inventory-leaf"}, "1": {"leaf": "b"}}, "h2": {}}


def test_an_inventory_topology_keyed_by_integer_rails_stands_over_discovery_s():
    # YAML inventories give {0: {leaf: ...}}: integer keys, which a merge by keyword arguments refused
    task_vars = {"hostvars": {"h1": {
        "ansible_facts": {"commcheck_rdma": {"topology": {"0": {"leaf": "lldp-leaf"}, "mlx5_1": {"leaf": "b"}}}},
        "commcheck_topology": {0: {"leaf": "inventory-leaf"}}}}}
    action = pair_check.ActionModule(mock.MagicMock(), mock.MagicMock(), PlayContext(), loader=mock.MagicMock(),
                                     templar=mock.MagicMock(), shared_loader_obj=mock.MagicMock())
    action._vars = task_vars  # pylint: disable=protected-access
    assert action.topology(["h1"]) == {"h1": {"0": {"leaf": "inventory-leaf"}, "mlx5_1": {"leaf": "b"}}}


def test_the_tcp_check_s_topology_is_the_leaf_of_the_port_holding_each_host_s_address():
    from ansible_collections.clusterops.commcheck.plugins.module_utils.planning import families

    def facts(address):
        return {"devices": [{"name": "mlx5_0", "ports": [{"port": 1, "ipv4": ["10.0.0.%s" % address]}]},
                            {"name": "mlx5_1", "ports": [{"port": 1, "ipv4": ["10.0.1.%s" % address]}]}],
                "topology": {"mlx5_0": {"leaf": "r0-leaf", "source": "lldp"},
                             "mlx5_1": {"leaf": "r1-leaf", "source": "lldp"}}}
    task_vars = {"hostvars": {
        "h1": {"ansible_facts": {"commcheck_rdma": facts(1)}},
        # the inventory's rail 0 says nothing of the TCP path; its tcp entry does
        "h2": {"ansible_facts": {"commcheck_rdma": facts(2)}, "commcheck_topology": {0: {"leaf": "inv-r0"}}},
        "h3": {"ansible_facts": {"commcheck_rdma": facts(3)}, "commcheck_topology": {"tcp": {"leaf": "front-3"}}}},
        "commcheck_pair_perf_fleet": {"facts": {"rails": dict(
            (host, [{"rail": 0, "address": "10.0.1.%d" % num}]) for num, host in ((1, "h1"), (2, "h2"), (3, "h3")))}}}
    action = pair_check.ActionModule(mock.MagicMock(), mock.MagicMock(), PlayContext(), loader=mock.MagicMock(),
                                     templar=mock.MagicMock(), shared_loader_obj=mock.MagicMock())
    # pylint: disable=protected-access
    action._vars, action._row, action._decided, action._read = task_vars, families.family("tcp"), {}, {}
    assert action.topology(["h1", "h2", "h3"]) == {
        "h1": {0: {"leaf": "r1-leaf", "port": None, "source": "lldp"}},
        "h2": {0: {"leaf": "r1-leaf", "port": None, "source": "lldp"}},
        "h3": {0: {"leaf": "front-3", "port": None, "source": "inventory"}}}


def test_an_unknown_family_or_step_fails_the_task_naming_it():
    result = run_step("infiniband", "plan", {})
    assert result["failed"] and "family" in result["msg"] and "infiniband" in result["msg"]
