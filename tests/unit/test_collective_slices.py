# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The collective check in a run split over two controllers: after the slices meet, only the first slice launches
the pool run over every host of every slice; the other waits for its results (read through the meeting) and
builds the same records; each publishes its share. And each run's records say the governor state of its hosts."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os
import threading

import pytest
import yaml

from ansible_collections.clusterops.commcheck.plugins.action import collective_plan
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import cpu_governor as cg
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import slice_meeting
from ansible_collections.clusterops.commcheck.plugins.plugin_utils import collective_slices as cs

from test_roles_only_call import REPO, make

HOSTS = ["h1", "h2", "h3", "h4"]
HALVES = [["h3", "h4"], ["h1", "h2"]]


def fleet(own, hosts=None, leader=True, slices=2):
    hosts = HOSTS if hosts is None else hosts
    return {"hosts": hosts, "own": own, "leader": leader, "slices": slices, "unreachable": [],
            "facts": {"entry": dict((h, {"name": h, "address": "10.0.0.%s" % h[1:]}) for h in hosts),
                      "rdma": dict((h, {}) for h in hosts)}}


def pool_result(hosts=None, verdict="pass"):
    hosts = HOSTS if hosts is None else hosts
    return {"params": {"library": "nccl", "operation": "all_reduce", "hosts": [{"name": h} for h in hosts]},
            "verdict": verdict, "expected_busbw_gbs": 0.06,
            "runs": [{"hosts": list(hosts), "cmd": ["mpirun", "-np", str(len(hosts))], "busbw_gbs": 0.05,
                      "verdict": verdict, "duration_s": 3.0}], "bad_nodes": []}


# ---------------------------------------------------------------- pure


def test_only_the_first_slice_launches_the_pool_but_every_slice_its_own_per_node_runs():
    runs = [{"hosts": HOSTS, "timeout": 60}]
    nodes = {"h1": ["r1"], "h3": ["r3"]}
    first, other = cs.Fleet(fleet(["h1", "h2"], leader=True)), cs.Fleet(fleet(["h3", "h4"], leader=False))
    assert cs.launched_by_this_slice(runs, nodes, first) == (runs, {"h1": ["r1"]})
    assert cs.launched_by_this_slice(runs, nodes, other) == ([], {"h3": ["r3"]})
    alone = cs.Fleet({"hosts": HOSTS, "own": HOSTS})
    assert alone.launches and alone.slices == 1


def test_the_waiting_slice_waits_for_every_run_and_its_retests():
    runs = [{"timeout": 100}, {"timeout": 50}]
    assert cs.results_wait(runs, 900, 0) == 1050
    assert cs.results_wait(runs, 900, 2) == 900 + 3 * 150
    assert cs.results_wait([{"timeout": 10 ** 9}], 900, 1) == slice_meeting.WAIT_MAX


def test_the_first_slice_posts_its_results_and_the_others_read_them():
    first, other = cs.Fleet(fleet(["h1", "h2"], leader=True)), cs.Fleet(fleet(["h3", "h4"], leader=False))
    posted = cs.share_values(first, {"results": [1]}, {"runs": []}, {"results": [2]})
    assert posted == {"launched": {"h1": {"group_results": {"results": [1]}, "retest_plan": {"runs": []},
                                          "retest_results": {"results": [2]}}}}
    assert cs.share_values(other, {"results": ["own"]}, {}, {}) == {}
    met = {"facts": {"launched": {"h1": posted["launched"]["h1"], "h2": None, "h3": None, "h4": None}}}
    assert cs.launched_results(met, {"skipped": True}, {}, {}) == ({"results": [1]}, {"runs": []},
                                                                   {"results": [2]})
    # nothing posted (per-node mode, or the steps on their own): this controller's own
    assert cs.launched_results({"facts": {}}, {"results": ["own"]}, None, None) == ({"results": ["own"]}, {}, {})
    with pytest.raises(ValueError, match="2 slices posted"):
        cs.launched_results({"facts": {"launched": {"h1": {}, "h3": {}}}}, {}, {}, {})


def test_each_run_record_says_its_hosts_governor_state():
    records = [{"kind": "collective", "host": "h1", "params": {"hosts": ["h1", "h2", "h3"]}},
               {"kind": "finding", "host": "h9", "params": {"code": "collective_host_unreachable"}}]
    unmanaged = cg.unmanaged_finding("ns/p", {}, ["read-only /sys"], "performance", "x")
    held = {"h1": {"changed": True}, "h2": {"skipped_reason": "x", "unmanaged": unmanaged}, "h3": None}
    out = cs.with_governor_state(records, held, "performance")
    assert out[0]["params"]["cpu_governor"] == {"governor": "performance", "held": ["h1"], "unmanaged": ["h2"],
                                                "not_held": ["h3"]}
    assert out[1] == records[1] and "cpu_governor" not in records[0]["params"]
    assert cs.with_governor_state(records, held, "")[0]["params"]["cpu_governor"] == {
        "governor": None, "held": [], "unmanaged": [], "not_held": ["h1", "h2", "h3"]}


# ---------------------------------------------------------------- the collective_plan steps in two slices


@pytest.fixture(scope="module")
def defaults():
    with open(os.path.join(REPO, "roles", "collective", "defaults", "main.yml")) as handle:
        return yaml.safe_load(handle)


def step(name, task_vars):
    result = make(collective_plan, {"step": name}).run(task_vars=task_vars)
    assert not result.get("failed"), result
    return result


def slice_vars(defaults, own, hostvars):
    return dict(defaults, hostvars=hostvars, ansible_play_hosts=own, ansible_play_hosts_all=own,
                inventory_hostname=own[0], commcheck_collective_library="nccl", commcheck_cpu_governor="performance",
                commcheck_collective_mode="pool", commcheck_thresholds_history=False, commcheck_slice_wait=30,
                commcheck_retest_repeats=0)


def meet_all(tmp_path, step_name, posts):
    """Every slice's post at ``step_name``, each slice in a thread of its own as its controller would; their
    meeting results in the order given."""
    out = [None] * len(posts)

    def one(index, hosts, facts):
        out[index] = slice_meeting.meet(str(tmp_path), "run-1", step_name, len(posts), hosts, facts, wait=60)
    threads = [threading.Thread(target=one, args=(i, hosts, facts)) for i, (hosts, facts) in enumerate(posts)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return out


def test_two_slices_one_launch_over_every_host_and_the_same_records(defaults, tmp_path):
    hostvars = [dict((h, {"commcheck_collective_entry": {"address": "10.0.0.%s" % h[1:]}}) for h in half)
                for half in HALVES]
    chosen = [step("hosts", slice_vars(defaults, half, hv)) for half, hv in zip(HALVES, hostvars)]
    assert [c["chosen"] for c in chosen] == HALVES
    met = meet_all(tmp_path, "collective-hosts", [
        (c["chosen"], {"entry": c["entries"], "rdma": dict((h, {}) for h in c["chosen"])}) for c in chosen])
    assert [m["hosts"] for m in met] == [HOSTS, HOSTS] and sorted(m["leader"] for m in met) == [False, True]
    for hv, m in zip(hostvars, met):
        for host in hv:
            hv[host]["commcheck_collective_fleet"] = m
    plans = [step("runs", slice_vars(defaults, half, hv)) for half, hv in zip(HALVES, hostvars)]
    first = [m["leader"] for m in met].index(True)
    launcher, waiter = plans[first], plans[1 - first]
    # one mpirun over every host of both slices, from the pool's first host, started by the first slice only
    assert [(run["launcher"], [e["name"] for e in run["args"]["hosts"]]) for run in launcher["runs"]] == [
        ("h1", HOSTS)]
    assert launcher["runs"][0]["args"]["hosts"][2] == {"name": "h3", "address": "10.0.0.3"}
    assert launcher["launches"] is True and waiter["launches"] is False and waiter["runs"] == []
    assert launcher["results_wait"] == waiter["results_wait"] > 30
    # each slice holds the governor of its own hosts
    assert [p["governor_hosts"] for p in plans] == HALVES
    for plan, hv in zip(plans, hostvars):
        for host in hv:
            hv[host].update(commcheck_collective_plan=plan, commcheck_collective_governor={"changed": True})
    launcher_vars = hostvars[first]
    for host in launcher_vars:
        launcher_vars[host]["commcheck_collective_group_results"] = {"results": [pool_result()], "changed": True}
    for hv in hostvars:
        for host in hv:
            hv[host].setdefault("commcheck_collective_group_results", {"results": [], "skipped": True})
    assert step("retests", slice_vars(defaults, HALVES[1 - first], hostvars[1 - first]))["runs"] == []
    shares = [step("share", slice_vars(defaults, half, hv))["values"] for half, hv in zip(HALVES, hostvars)]
    assert shares[1 - first] == {} and list(shares[first]["launched"]) == [HALVES[first][0]]
    results_met = meet_all(tmp_path, "collective-results", [
        (half, dict(shares[i], governor=dict((h, {"changed": True}) for h in half))) for i, half in enumerate(HALVES)])
    for hv, m in zip(hostvars, results_met):
        for host in hv:
            hv[host]["commcheck_collective_fleet_results"] = m
    outcomes = [step("results", slice_vars(defaults, half, hv)) for half, hv in zip(HALVES, hostvars)]
    assert outcomes[0]["records"] == outcomes[1]["records"]
    [pool] = [r for r in outcomes[0]["records"] if r["kind"] == "collective"]
    assert pool["params"]["hosts"] == HOSTS and pool["verdict"] == "pass"
    assert pool["params"]["cpu_governor"] == {"governor": "performance", "held": HOSTS, "unmanaged": [],
                                              "not_held": []}
    # the pool's record is h1's: published once, by the slice that has h1
    owner = [i for i, half in enumerate(HALVES) if "h1" in half][0]
    assert [len(o["share"]) for o in outcomes] == [1 if i == owner else 0 for i in range(2)]


def test_one_controller_launches_as_before(defaults):
    hostvars = dict((h, {"commcheck_collective_entry": {"address": "10.0.0.%s" % h[1:]}}) for h in HOSTS)
    chosen = step("hosts", slice_vars(defaults, HOSTS, hostvars))
    one = slice_meeting.meet("", "", "collective-hosts", 1, chosen["chosen"], {"entry": chosen["entries"]})
    for host in hostvars:
        hostvars[host]["commcheck_collective_fleet"] = one
    plan = step("runs", slice_vars(defaults, HOSTS, hostvars))
    assert plan["launches"] is True and [r["launcher"] for r in plan["runs"]] == ["h1"]
    assert plan["governor_hosts"] == HOSTS


def test_per_node_slices_share_no_runs_and_keep_their_own_retests(defaults):
    hostvars = dict((h, {"commcheck_collective_group_results": {"results": [], "skipped": True},
                         "commcheck_collective_retests": {"runs": [{"label": "own retest"}]},
                         "commcheck_collective_plan": {"chosen": HALVES[1]},
                         "commcheck_collective_fleet": fleet(HALVES[1], leader=True)}) for h in HALVES[1])
    task_vars = dict(slice_vars(defaults, HALVES[1], hostvars), commcheck_collective_mode="per_node")
    assert step("share", task_vars)["values"] == {}
    assert step("share", dict(task_vars, commcheck_collective_mode="pool"))["values"]["launched"]["h1"][
        "retest_plan"] == {"runs": [{"label": "own retest"}]}
