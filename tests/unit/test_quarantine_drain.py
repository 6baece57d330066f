# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Quarantine's cordon and drain: argv lists, the dry-run plan, what kubectl's drain said, the records.

The drain messages are kubectl's (k8s.io/kubectl pkg/drain and cmd/drain): an
eviction a PodDisruptionBudget refuses is retried ("will retry after 5s")
until ``--timeout``, then "global timeout reached"; pods kubectl will not
delete are refused at once ("cannot delete Pods ...").
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json
import subprocess

import pytest

from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import quarantine as q
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import quarantine_drain as qd

NODES = [{"host": "n2", "node": "node-2", "reason": "commcheck: slow"},
         {"host": "n3", "node": "node-3", "reason": "commcheck: bad nic"}]
CORDONED = {"kind": "Node", "metadata": {"name": "node-2"}, "spec": {"unschedulable": True}}
SCHEDULABLE = {"kind": "Node", "metadata": {"name": "node-3"}, "spec": {}}

PDB_TIMEOUT_STDERR = """\
Warning: ignoring DaemonSet-managed Pods: kube-system/kube-proxy-x2x9z
error when evicting pods/"db-0" -n "apps" (will retry after 5s): Cannot evict pod as it would violate the \
pod's disruption budget.
error when evicting pods/"db-0" -n "apps" (will retry after 5s): Cannot evict pod as it would violate the \
pod's disruption budget.
There are pending pods in node "node-2" when an error occurred: error when evicting pods/"db-0" -n "apps": \
global timeout reached: 30s
pod/db-0
error: unable to drain node "node-2" due to error: error when evicting pods/"db-0" -n "apps": global timeout \
reached: 30s, continuing command...
There are pending nodes to be drained:
 node-2
error: error when evicting pods/"db-0" -n "apps": global timeout reached: 30s
"""
SLOW_TIMEOUT_STDERR = """\
There are pending pods in node "node-2" when an error occurred: error when evicting pods/"big-7" -n "ml": \
global timeout reached: 30s
pod/big-7
error: unable to drain node "node-2" due to error: error when evicting pods/"big-7" -n "ml": global timeout \
reached: 30s, continuing command...
"""
REFUSED_STDERR = """\
error: unable to drain node "node-2" due to error: cannot delete Pods with local storage (use \
--delete-emptydir-data to override): apps/cache-1, continuing command...
There are pending nodes to be drained:
 node-2
error: cannot delete Pods with local storage (use --delete-emptydir-data to override): apps/cache-1
"""


def test_plan_argv_lists_without_state_plan_everything_and_never_force():
    base = q.kubectl_base("kubectl", None, "lab")
    plan = qd.node_actions(NODES, None, cordon=True, drain=True, drain_timeout=120, base=base)
    # a drain cordons itself: no separate cordon when draining
    assert [(p["node"], p["action"]) for p in plan] == [("node-2", "drain"), ("node-3", "drain")]
    assert plan[0]["argv"] == ["kubectl", "--context", "lab", "drain", "node-2", "--ignore-daemonsets",
                               "--timeout=120s"]
    for item in plan:
        assert not {"--force", "--disable-eviction", "--delete-emptydir-data"} & set(item["argv"])
    cordon = qd.node_actions(NODES, None, cordon=True)
    assert [p["argv"] for p in cordon] == [["kubectl", "cordon", "node-2"], ["kubectl", "cordon", "node-3"]]
    assert qd.node_actions(NODES, None) == []


def test_plan_follows_the_current_state():
    current = {"node-2": CORDONED, "node-3": SCHEDULABLE}
    assert [p["node"] for p in qd.node_actions(NODES, current, cordon=True)] == ["node-3"]
    # a drain runs whether or not the node is cordoned: only kubectl knows the pods left
    assert [p["node"] for p in qd.node_actions(NODES, current, drain=True)] == ["node-2", "node-3"]
    back = qd.node_actions(NODES, current, state="absent", drain=True)
    assert [(p["node"], p["action"], p["argv"][1:]) for p in back] == [("node-2", "uncordon", ["uncordon", "node-2"])]
    assert qd.node_actions(NODES, None, state="absent", cordon=True)[1]["action"] == "uncordon"
    assert qd.node_actions(NODES, current, state="absent") == []


@pytest.mark.parametrize("value", [0, -1, 86401, "30", True, None, 1.5])
def test_drain_timeout_is_checked(value):
    with pytest.raises(q.QuarantineError, match="drain_timeout"):
        qd.node_actions(NODES, None, drain=True, drain_timeout=value)


@pytest.mark.parametrize("name", ["-o", "--force", "node_2", "Node-2", "", "a b"])
def test_a_node_name_never_becomes_a_flag(name):
    with pytest.raises(q.QuarantineError, match="not a valid Kubernetes node name"):
        qd.node_actions([{"node": name}], None, drain=True)


def test_drain_outcomes_from_kubectl_messages():
    assert qd.drain_outcome(0, "node/node-2 cordoned\nnode/node-2 drained\n", "")["outcome"] == "drained"
    pdb = qd.drain_outcome(1, "node/node-2 cordoned\nevicting pod apps/db-0\n", PDB_TIMEOUT_STDERR)
    assert pdb["outcome"] == "pdb_blocked" and pdb["pods"] == ["apps/db-0"]
    assert "PodDisruptionBudget" in pdb["message"]
    slow = qd.drain_outcome(1, "", SLOW_TIMEOUT_STDERR)
    assert slow["outcome"] == "timeout" and slow["pods"] == ["ml/big-7"]
    refused = qd.drain_outcome(1, "", REFUSED_STDERR)
    assert refused["outcome"] == "refused" and "apps/cache-1" in refused["message"]
    assert "local storage" in refused["message"]
    other = qd.drain_outcome(1, "", 'Error from server (NotFound): nodes "node-9" not found\n')
    assert other["outcome"] == "failed" and "NotFound" in other["message"]
    assert qd.drain_outcome(None, "", "")["outcome"] == "failed"


def test_records_say_what_the_drain_came_to_never_drained_when_blocked():
    nodes = [dict(NODES[0], components=["host"])]
    drain = {"node": "node-2", "action": "drain", "argv": ["kubectl", "drain", "node-2", "--ignore-daemonsets",
                                                           "--timeout=30s"], "rc": 1}
    drain["outcome"] = qd.drain_outcome(1, "", PDB_TIMEOUT_STDERR)
    records = qd.with_node_actions(q.quarantine_records(nodes, [drain], "kubernetes", False), [drain], False)
    assert records[0]["params"]["drain"]["outcome"] == "pdb_blocked"
    assert records[0]["params"]["node_actions"] == ["drain"]
    assert "blocked by a PodDisruptionBudget" in records[0]["cause"] and "drained" not in records[0]["cause"]
    assert qd.drain_problems([drain]) == [qd.outcome_line("node-2", drain["outcome"])]
    planned = dict(drain)
    del planned["outcome"], planned["rc"]
    dry = qd.with_node_actions(q.quarantine_records(nodes, [planned], "kubernetes", True), [planned], True)
    assert dry[0]["cause"].startswith("dry run: ") and dry[0]["cause"].endswith("(would also drain)")
    assert "drain" not in dry[0]["params"] and qd.drain_problems([planned]) == []
    # Slurm's own "drain" action is its quarantine, not a Kubernetes drain
    slurm = q.slurm_argvs(nodes)
    assert qd.with_node_actions(q.quarantine_records(nodes, slurm, "slurm", True), slurm, True) == \
        q.quarantine_records(nodes, slurm, "slurm", True)


def test_real_kubectl_parses_cordon_drain_and_uncordon(tmp_path):
    """Real kubectl accepts every command line (it fails only for want of a cluster, loopback port 1)."""
    config = tmp_path / "kubeconfig"
    config.write_text(json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "none",
        "clusters": [{"name": "none", "cluster": {"server": "https://127.0.0.1:1"}}],
        "users": [{"name": "none", "user": {"token": "not-a-secret"}}],
        "contexts": [{"name": "none", "context": {"cluster": "none", "user": "none"}}]}))
    base = q.kubectl_base("kubectl", str(config))
    plans = qd.node_actions(NODES[:1], None, cordon=True, base=base) + \
        qd.node_actions(NODES[:1], None, drain=True, drain_timeout=30, base=base) + \
        qd.node_actions(NODES[:1], None, state="absent", cordon=True, base=base)
    assert [p["action"] for p in plans] == ["cordon", "drain", "uncordon"]
    for item in plans:
        argv = item["argv"][:1] + ["--request-timeout=5s"] + item["argv"][1:]
        proc = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True, timeout=60, check=False)
        assert proc.returncode != 0
        assert "refused" in proc.stderr, (item["action"], proc.stderr)
        assert "unknown" not in proc.stderr and "invalid" not in proc.stderr.lower(), (item["action"], proc.stderr)


def test_every_outcome_but_drained_has_a_documented_cause_and_fix():
    assert sorted(qd.DRAIN_CODES) == sorted(o for o in qd.OUTCOMES if o != "drained")
    with open(__file__.replace("tests/unit/test_quarantine_drain.py", "docs/troubleshooting.md")) as handle:
        doc = handle.read()
    for code in qd.DRAIN_CODES:
        assert "| `%s` |" % code in doc
