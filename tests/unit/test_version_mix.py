# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The version mix across the hosts of a run, its findings and the report's Versions table."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from unittest import mock

from ansible.playbook.play_context import PlayContext

from ansible_collections.clusterops.commcheck.plugins.action import report as report_action
from ansible_collections.clusterops.commcheck.plugins.module_utils.planning import collective_plan as cp
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import history
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import report_html
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import report_markdown
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import report_model
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import version_mix as vm


def _discover(host, perftest="6.10", nccl="2.18.3", fw=None, model="MT4129", driver="mlx5_core 5.8-1.1.2"):
    fw = fw or {"mlx5_0": "28.39.1002"}
    return {"kind": "discover", "host": host, "peer": None, "params": {}, "verdict": "pass",
            "metrics": {"devices": len(fw), "versions": {
                "perftest": perftest, "nccl": nccl, "firmware": fw, "nic_model": dict((d, model) for d in fw),
                "driver": dict((d, driver) for d in fw)}}}


def _collective(hosts, nccl_version, tests_version="2.13.8"):
    return {"kind": "collective", "host": hosts[0], "peer": None, "params": {"hosts": hosts}, "verdict": "pass",
            "metrics": {"busbw_gbs": 180.0, "nccl_version": nccl_version, "nccl_tests_version": tests_version}}


def test_mix_lists_the_hosts_of_each_version_per_tool():
    records = [_discover("h%d" % n) for n in range(1, 5)]
    records.append(_discover("h5", perftest="4.5", fw={"mlx5_0": "28.41.1000"}))
    mix = vm.version_mix(records)
    assert mix["perftest"] == {"6.10": ["h1", "h2", "h3", "h4"], "4.5": ["h5"]}
    assert mix["firmware MT4129"] == {"28.39.1002": ["h1", "h2", "h3", "h4"], "28.41.1000": ["h5"]}
    assert mix["driver"] == {"mlx5_core 5.8-1.1.2": ["h1", "h2", "h3", "h4", "h5"]}
    assert "nic_model" not in mix


def test_one_finding_per_compared_tool_that_differs():
    records = [_discover("node%02d" % n) for n in range(1, 9)]
    records.append(_discover("node09", perftest="4.5", fw={"mlx5_0": "28.41.1000"}, driver="mlx5_core 24.10"))
    found = vm.version_findings(records)
    assert [f["params"]["tool"] for f in found] == ["perftest", "firmware MT4129"]
    perftest = found[0]
    assert perftest["kind"] == "finding" and perftest["host"] == "*" and perftest["verdict"] == "warn"
    assert perftest["params"]["check"] == "versions" and perftest["params"]["code"] == "version_mismatch"
    assert perftest["cause"] == ("the hosts of this run have different perftest versions: "
                                 "6.10 on node01-node08; 4.5 on node09")
    assert "pin" in perftest["fix"]
    assert "28.41.1000 on node09" in found[1]["cause"] and "firmware" in found[1]["fix"]
    # a different driver alone is shown in the table, not a finding
    assert not any("driver" in f["params"]["tool"] for f in found)
    normalized, _removed = history.normalize_records(found)
    assert len(normalized) == 2


def test_firmware_is_compared_per_adapter_model():
    records = [_discover("h1", fw={"mlx5_0": "28.39.1002"}, model="MT4129"),
               _discover("h2", fw={"mlx5_0": "22.38.1002"}, model="MT4125")]
    assert vm.version_findings(records) == []
    assert set(vm.version_mix(records)) >= {"firmware MT4129", "firmware MT4125"}


def test_runtime_nccl_from_collective_runs_replaces_the_header_versions():
    records = [_discover("h1", nccl="2.18.3"), _discover("h2", nccl="2.18.1"),
               _collective(["h1", "h2"], "2.18.3+cuda12.2"), _collective(["h2", "h1"], "2.18.3+cuda12.2")]
    mix = vm.version_mix(records)
    assert mix["nccl"] == {"2.18.3+cuda12.2": ["h1", "h2"]}
    assert mix["nccl_tests"] == {"2.13.8": ["h1", "h2"]}
    assert vm.version_findings(records) == []
    # rank 0 of a bisection run on another host printed another NCCL
    records.append(_collective(["h3", "h4"], "2.21.5+cuda12.4"))
    found = vm.version_findings(records)
    assert [f["params"]["tool"] for f in found] == ["nccl"]
    assert found[0]["cause"].endswith("2.18.3+cuda12.2 on h1, h2; 2.21.5+cuda12.4 on h3")


def test_header_versions_count_when_no_collective_ran():
    found = vm.version_findings([_discover("h1", nccl="2.18.3"), _discover("h2", nccl="2.19.3")])
    assert [f["params"]["tool"] for f in found] == ["nccl"]


def test_junk_records_give_no_mix():
    junk = [None, 3, "x", {}, {"kind": "discover"}, {"kind": "discover", "host": "h1", "metrics": {"versions": 5}},
            {"kind": "discover", "host": "h1", "metrics": {"versions": {"perftest": 6, "firmware": ["x"]}}},
            {"kind": "collective", "metrics": None}]
    assert vm.version_mix(junk) == {} and vm.version_findings(junk) == []


def test_report_findings_are_replaced_not_repeated():
    records = [_discover("h1"), _discover("h2", perftest="4.5")]
    once = vm.with_version_findings(records)
    assert len(once) == 3
    assert vm.with_version_findings(once) == once


def test_host_ranges():
    assert vm.host_ranges(["h4", "h2", "h3", "h1", "x"]) == "h1-h4, x"
    assert vm.host_ranges(["h1", "h2"]) == "h1, h2"
    assert vm.host_ranges(["node09", "node10", "node11"]) == "node09-node11"
    assert vm.host_ranges(["h9", "h10", "h11"]) == "h9-h11"
    # zero-padded and not padded alike are different names
    assert vm.host_ranges(["n08", "n9", "n10"]) == "n08, n9, n10"
    assert vm.host_ranges(["a%d" % (2 * n) for n in range(12)], limit=3) == "a0, a2, a4, +9 more"
    assert vm.host_ranges([]) == ""


def test_collective_records_carry_what_rank_0_printed():
    res = {"params": {"library": "nccl", "hosts": ["h1", "h2"]}, "verdict": "pass",
           "result": {"nccl_version": "2.18.3+cuda12.2", "version": "2.13.8"},
           "runs": [{"hosts": ["h1", "h2"], "verdict": "pass"}, {"hosts": ["h2"], "verdict": "pass"}]}
    pool, bisect = cp.collective_records([res])
    assert pool["metrics"]["nccl_version"] == "2.18.3+cuda12.2" and pool["metrics"]["nccl_tests_version"] == "2.13.8"
    assert bisect["metrics"]["nccl_version"] is None
    res["params"]["library"] = "hccl"
    assert cp.collective_records([res])[0]["metrics"]["nccl_version"] is None


def _view(records):
    return report_model.ReportView(records, report_model.summarize(records, run_id="r1"))


def test_the_report_shows_a_versions_table_and_the_finding():
    records = vm.with_version_findings([_discover("h1"), _discover("h2"), _discover("h3", perftest="4.5")])
    page = report_html.render(_view(records))
    assert '<h2 id="versions">Versions</h2>' in page
    assert "<td>perftest</td><td>6.10</td><td>h1, h2</td><td>2</td>" in page
    assert "<td>NIC firmware MT4129</td><td>28.39.1002</td><td>h1-h3</td><td>3</td>" in page
    text = report_markdown.render(_view(records))
    assert "## Versions" in text
    assert "| perftest (mixed) | 4.5 | h3 | 1 |" in text
    assert "| NIC driver | mlx5_core 5.8-1.1.2 | h1-h3 | 3 |" in text
    assert "different perftest versions" in text.split("## Versions", maxsplit=1)[0]


def test_no_versions_section_without_versions():
    records = [{"kind": "collective", "host": "h1", "peer": None, "params": {}, "metrics": {}, "verdict": "pass"}]
    assert "Versions" not in report_markdown.render(_view(records))
    assert 'id="versions"' not in report_html.render(_view(records))


def test_the_report_action_adds_the_finding_to_the_records_it_reports(tmp_path):
    task = mock.MagicMock()
    task.args = {"report_dir": str(tmp_path), "records": [_discover("h1"), _discover("h2", nccl="2.19.3")]}
    task.check_mode = True
    task.async_val = 0
    task.diff = False
    action = report_action.ActionModule(task, mock.MagicMock(), PlayContext(), loader=mock.MagicMock(),
                                        templar=mock.MagicMock(), shared_loader_obj=mock.MagicMock())
    result = action.run(task_vars={})
    assert not result.get("failed"), result
    found = [r for r in result["records"] if r.get("kind") == "finding"]
    assert [f["params"]["tool"] for f in found] == ["nccl"]
    assert result["summary"]["counts"].get("warn") == 1
