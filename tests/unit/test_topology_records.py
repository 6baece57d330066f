# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where a run that found its leaf switches says so, a healthy run too: the discover record of each host carries
the leaves discovery read, and a pair check's localization summary is kept wherever the topology is known (the
report's leaf table reads it)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery import report
from ansible_collections.clusterops.commcheck.plugins.module_utils.records.report_model import leaf_table
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import judgement

from fault_lab import FLEET_MIN_FRACTION, MIN_FRACTION, Fabric

LLDP_LEAF = {"leaf": "lab-r1-leaf2", "port": "swp1", "source": "lldp"}


def judged(topology, slow=False):
    fabric = Fabric(n=4, rails=2, pattern="ring")
    if slow:
        fabric.slow(0.3, host="h2")
    fabric.run()
    return judgement.judge_retests(
        fabric.first["records"], "rdma", retest_sides=fabric.sides(fabric.plan["rounds"], "retest"),
        plan=fabric.plan, bad_verdicts=["fail"],
        pair_options={"min_fraction": MIN_FRACTION, "outlier_z": 3.5, "outlier_min_rel": 0.2, "expected_gbps": None},
        thresholds={"history": [], "efficiency": MIN_FRACTION, "fleet_min_fraction": FLEET_MIN_FRACTION},
        fleet_min_fraction=FLEET_MIN_FRACTION, topology=topology)


def racked():
    """h1, h2 behind leaf 1 and h3, h4 behind leaf 2 of each rail, rail 1 by device name (as lldp keys it)."""
    return dict((host, {0: {"leaf": "lab-r0-leaf%d" % (num // 2 + 1), "port": "swp%d" % (num % 2 + 1)},
                        "mlx5_1": {"leaf": "lab-r1-leaf%d" % (num // 2 + 1), "port": "swp%d" % (num % 2 + 1),
                                   "source": "lldp"}})
                for num, host in enumerate(("h1", "h2", "h3", "h4")))


def test_a_healthy_check_keeps_its_localization_summary_with_the_topology_only_where_one_is_known():
    assert judged(None)["summary_records"] == []
    [summary] = judged(racked())["summary_records"]
    assert (summary["kind"], summary["verdict"], summary["cause"], summary["metrics"]["bad_links"]) == (
        "localization", "pass", None, 0)
    assert summary["params"]["topology"]["h3"] == {
        "0": {"leaf": "lab-r0-leaf2", "port": "swp1", "source": "inventory"}, "1": LLDP_LEAF}
    table = leaf_table([summary])
    assert [(e["leaf"], e["hosts"]) for e in table["by_leaf"]] == [
        ("lab-r0-leaf1", ["h1", "h2"]), ("lab-r0-leaf2", ["h3", "h4"]),
        ("lab-r1-leaf1", ["h1", "h2"]), ("lab-r1-leaf2", ["h3", "h4"])]


def test_a_failing_check_keeps_its_summaries_as_before():
    kinds = [r["kind"] for r in judged(racked(), slow=True)["summary_records"]]
    without = [r["kind"] for r in judged(None, slow=True)["summary_records"]]
    assert kinds == without == ["retest_summary", "localization"]


def test_the_discover_record_carries_the_leaves_discovery_read_and_nothing_without():
    facts = {"summary": {"devices": 1, "ports": 1, "active_ports": 1, "worst": None}, "findings": [],
             "devices": [{"name": "mlx5_1", "ports": [{"port": 1, "netdev": "ens1f1np1"}]}],
             "host": {"sysfs_root": "/sys"}, "topology": {"mlx5_1": dict(LLDP_LEAF)}}
    record = report.discovery_records("h3", facts)[0]
    assert record["params"] == {"sysfs_root": "/sys", "topology": {"mlx5_1": LLDP_LEAF}}
    assert report.discovery_records("h3", dict(facts, topology={}))[0]["params"] == {"sysfs_root": "/sys"}
