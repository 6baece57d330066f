# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Retests of failing collective runs (verdicts/collective_retest.py, issue 36 section 4): which runs run again
in every mode (per_node, pairs, pool without bisection), and what their retests say (flaky, a node, a link)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os
import sys

import pytest
import yaml

from unittest import mock

from ansible.playbook.play_context import PlayContext

from ansible_collections.clusterops.commcheck.plugins.action import collective_plan as action
from ansible_collections.clusterops.commcheck.plugins.module_utils.planning.collective_plan import collective_records
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import (
    report_html,
    report_markdown,
    report_model,
)
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import collective_retest as cr
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import culprits
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts.retest import RetestError
from ansible_collections.clusterops.commcheck.plugins.plugin_utils import collective_steps as steps

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LAB = os.path.join(REPO, "tests", "lab")
for _path in (LAB, os.path.join(LAB, "emulators")):
    if _path not in sys.path:
        sys.path.insert(0, _path)

import faults  # noqa: E402  pylint: disable=wrong-import-position
import nccl_net_emulation as emu  # noqa: E402  pylint: disable=wrong-import-position

THRESHOLD = 10.0


def result(hosts, verdict="pass", busbw=20.0, op="all_reduce", codes=(), bisect=None, bad_nodes=(), threshold=THRESHOLD,
           ran=True):
    """A collective module result of one run on ``hosts``."""
    cause = None if verdict == "pass" else "%s on %s" % (verdict, ",".join(hosts))
    runs = [{"hosts": list(hosts), "cmd": ["mpirun", op], "verdict": verdict, "busbw_gbs": busbw, "cause": cause,
             "round": 1}] if ran else []
    return {"params": {"library": "nccl", "operation": op, "hosts": list(hosts), "nodes": len(hosts)},
            "verdict": verdict, "cause": cause, "fix": None if verdict == "pass" else "look",
            "errors": [{"code": code} for code in codes], "threshold_busbw_gbs": threshold,
            "expected_busbw_gbs": threshold / 0.8 if threshold else None, "runs": runs, "bisect": bisect,
            "bad_nodes": list(bad_nodes), "result": {"rows": [{"bytes": 1 << 20, "busbw_gbs": busbw}] if ran else []}}


def records_of(results, mode):
    return collective_records(results, mode=mode)


def retest_records(plan, outcomes, mode):
    """The records of the planned retests, each run giving ``outcomes[(hosts, attempt)]`` (verdict, busbw)."""
    out = []
    for item in plan["retests"]:
        verdict, busbw = outcomes[(tuple(item["hosts"]), item["attempt"])]
        res = result(item["hosts"], verdict, busbw, op=item["operation"])
        out.extend(cr.tag([r for r in collective_records([res], mode=mode) if r["kind"] == "collective"],
                          item["params"]))
    return out


NODES = ["n1", "n2", "n3", "n4"]


def per_node_results(slow="n3", verdict="fail", codes=()):
    return [result([node], verdict if node == slow else "pass", 2.0 if node == slow else 20.0, codes=codes)
            for node in NODES]


# ---------------------------------------------------------------- per_node

@pytest.mark.parametrize("repeats", [1, 3])
def test_a_failing_node_runs_again_repeats_times_and_only_it(repeats):
    results = per_node_results()
    plan = cr.plan(records_of(results, "per_node"), results, "per_node", repeats=repeats)
    assert [(i["purpose"], i["hosts"], i["attempt"]) for i in plan["retests"]] == [
        ("as_is", ["n3"], attempt) for attempt in range(1, repeats + 1)]
    assert plan["retests"][0]["params"] == {"retest": True, "retest_purpose": "as_is", "attempt": 1,
                                            "origin": "n3-n3", "retest_id": "c1"}
    assert plan["summary"]["failing_runs"] == 1 and plan["summary"]["as_is"] == repeats


def test_no_repeats_no_retests():
    results = per_node_results()
    assert cr.plan(records_of(results, "per_node"), results, "per_node", repeats=0)["retests"] == []


def test_an_error_is_retested_only_when_the_verdicts_say_so_and_a_launch_refusal_never():
    errored = per_node_results(verdict="error", codes=("rank_failed",))
    assert cr.plan(records_of(errored, "per_node"), errored, "per_node")["retests"] == []
    planned = cr.plan(records_of(errored, "per_node"), errored, "per_node", verdicts=["fail", "error"])
    assert [i["hosts"] for i in planned["retests"]] == [["n3"]]
    refused = per_node_results(verdict="error", codes=("mpirun_not_found",))
    assert cr.plan(records_of(refused, "per_node"), refused, "per_node", verdicts=["fail", "error"])["retests"] == []
    # nothing ran at all (a binary missing before any launch): nothing to run again either
    missing = [result(["n1"], "error", None, ran=False)] + per_node_results(slow="none")[1:]
    assert cr.plan(records_of(missing, "per_node"), missing, "per_node", verdicts=["error"])["retests"] == []


def test_a_warn_from_the_fleet_is_retested_when_asked():
    results = per_node_results(slow="none")
    records = records_of(results, "per_node")
    records[1] = dict(records[1], verdict="warn")
    assert cr.plan(records, results, "per_node")["retests"] == []
    assert [i["hosts"] for i in cr.plan(records, results, "per_node", verdicts=["warn"])["retests"]] == [["n2"]]


def test_bad_options_are_refused_with_a_clear_error():
    results = per_node_results()
    with pytest.raises(RetestError, match="repeats must be an integer from 0 to 10"):
        cr.plan(records_of(results, "per_node"), results, "per_node", repeats=11)
    with pytest.raises(RetestError, match="verdicts must be a list"):
        cr.plan(records_of(results, "per_node"), results, "per_node", verdicts="fail")


def classify_per_node(outcomes, repeats=1):
    results = per_node_results()
    records = records_of(results, "per_node")
    plan = cr.plan(records, results, "per_node", repeats=repeats)
    retests = retest_records(plan, outcomes, "per_node")
    return steps.with_retests(steps.gathered(results, "per_node", []), records, retests, "per_node", ["fail"])


def test_a_node_that_passes_on_retest_is_flaky_with_evidence_and_nobody_is_named():
    checked = classify_per_node({(("n3",), 1): ("pass", 19.0)})
    first = [r for r in checked["records"] if r["kind"] == "collective" and not r["params"].get("retest")]
    n3 = [r for r in first if r["host"] == "n3"][0]
    assert n3["verdict"] == "flaky" and n3["cause"].startswith("flaky: fail on n3, then passed on retest 1 of 1")
    assert "retest as is: pass (19)" in n3["evidence"] and n3["metrics"]["retests"] == 1
    assert [r["verdict"] for r in first if r["host"] != "n3"] == ["pass"] * 3
    assert not [r for r in checked["records"] if r["kind"] == "finding"] and checked["bad_nodes"] == []
    assert checked["verdicts"] == ["pass", "pass", "flaky", "pass"]
    [summary] = [r for r in checked["records"] if r["kind"] == "retest_summary"]
    assert summary["verdict"] == "flaky" and summary["params"]["check"] == "collective"


def test_a_node_that_fails_again_fails_and_is_named():
    checked = classify_per_node({(("n3",), 1): ("fail", 2.1), (("n3",), 2): ("fail", 2.0)}, repeats=2)
    n3 = [r for r in checked["records"] if r["host"] == "n3" and r["kind"] == "collective"
          and not r["params"].get("retest")][0]
    assert n3["verdict"] == "fail" and "retest as is: fail, fail (2.1/2)" in n3["evidence"]
    [finding] = [r for r in checked["records"] if r["kind"] == "finding"]
    assert (finding["host"], finding["verdict"], finding["params"]["code"]) == (
        "n3", "fail", "collective_node_failed_retest")
    assert checked["bad_nodes"] == ["n3"] and checked["retest_counts"]["confirmed_pairs"] == 1


def test_a_node_that_fails_on_most_of_its_runs_is_not_flaky():
    # failed, passed once, failed again: a flapping node fails (retest.fails_most), as a flapping RDMA port does
    checked = classify_per_node({(("n3",), 1): ("pass", 19.0), (("n3",), 2): ("fail", 2.0)}, repeats=2)
    assert [r["host"] for r in checked["records"] if r["kind"] == "finding"] == ["n3"]


def test_the_retest_records_keep_the_first_pass_keys_and_say_what_they_are():
    checked = classify_per_node({(("n3",), 1): ("pass", 19.0)})
    first = [r for r in checked["records"] if r["kind"] == "collective" and r["host"] == "n3"]
    original, again = first
    assert again["params"]["retest"] is True and again["params"]["retest_purpose"] == "as_is"
    assert again["params"]["attempt"] == 1 and again["params"]["mode"] == "per_node"
    assert set(original) == set(again) and set(original["params"]) < set(again["params"])
    assert set(original["metrics"]) | {"retests"} == set(original["metrics"]) and \
        set(again["metrics"]) == set(original["metrics"]) - {"retests"}


def test_a_retest_without_a_pass_line_is_judged_against_the_first_pass():
    # no expectation: the fleet failed n3's first run; a retest the module calls 'pass' but as slow fails again
    results = [result([node], "pass", 2.0 if node == "n3" else 20.0, threshold=None) for node in NODES]
    records = records_of(results, "per_node")
    records[2] = dict(records[2], verdict="fail", cause="far below the fleet")
    plan = cr.plan(records, results, "per_node")
    assert [i["hosts"] for i in plan["retests"]] == [["n3"]]
    slow = retest_records(plan, {(("n3",), 1): ("pass", 2.2)}, "per_node")
    slow[0]["metrics"]["threshold_busbw_gbs"] = None
    checked = steps.with_retests(steps.gathered(results, "per_node", []), records, slow, "per_node", ["fail"])
    again = [r for r in checked["records"] if r["params"].get("retest")][0]
    assert again["verdict"] == "fail" and "first pass" in again["cause"]
    assert [r["host"] for r in checked["records"] if r["kind"] == "finding"] == ["n3"]
    fast = retest_records(plan, {(("n3",), 1): ("pass", 19.5)}, "per_node")
    fast[0]["metrics"]["threshold_busbw_gbs"] = None
    checked = steps.with_retests(steps.gathered(results, "per_node", []), records, fast, "per_node", ["fail"])
    assert [r["verdict"] for r in checked["records"] if r["host"] == "n3" and r["kind"] == "collective"] == [
        "flaky", "pass"]


# ---------------------------------------------------------------- pairs

RING = [["a", "b"], ["c", "d"], ["b", "c"], ["d", "a"]]


def pair_results(bad):
    """A ring of four; the pairs in ``bad`` fail."""
    return [result(pair, "fail" if tuple(pair) in bad else "pass", 3.0 if tuple(pair) in bad else 20.0)
            for pair in RING]


def test_a_failing_pair_is_retested_as_is_and_each_side_with_a_known_good_partner():
    results = pair_results({("c", "d"), ("b", "c")})
    plan = cr.plan(records_of(results, "pairs"), results, "pairs")
    got = [(i["purpose"], i["hosts"], i["subject"]) for i in plan["retests"]]
    # a is the only host whose pairs all passed: the known-good partner of every side; c runs with a once for
    # both its failing pairs (a collective has no server and client)
    assert got == [("as_is", ["c", "d"], None), ("partner", ["c", "a"], "c"), ("partner", ["a", "d"], "d"),
                   ("as_is", ["b", "c"], None), ("partner", ["b", "a"], "b")]
    assert plan["retests"][1]["params"]["origins"] == ["c-d", "b-c"]
    assert plan["retests"][1]["params"]["partner"] == "a"
    no_partners = cr.plan(records_of(results, "pairs"), results, "pairs", partners=False)
    assert [i["purpose"] for i in no_partners["retests"]] == ["as_is", "as_is"]


def classify_pairs(bad, outcomes):
    results = pair_results(bad)
    records = records_of(results, "pairs")
    plan = cr.plan(records, results, "pairs")
    retests = retest_records(plan, outcomes, "pairs")
    return steps.with_retests(steps.gathered(results, "pairs", []), records, retests, "pairs", ["fail"])


def test_the_node_whose_pairs_fail_with_good_partners_is_named():
    checked = classify_pairs({("c", "d"), ("b", "c")}, {
        (("c", "d"), 1): ("fail", 3.0), (("c", "a"), 1): ("fail", 3.1), (("a", "d"), 1): ("pass", 20.0),
        (("b", "c"), 1): ("fail", 2.9), (("b", "a"), 1): ("pass", 19.0)})
    findings = [(r["host"], r["params"]["code"]) for r in checked["records"] if r["kind"] == "finding"]
    assert findings == [("c", "collective_node_failed_retest")] and checked["bad_nodes"] == ["c"]
    assert [(c["component"], c["host"]) for c in culprits.culprits(checked["records"]) if c["verdict"] == "fail"] == [
        ("host", "c")]
    pair = [r for r in checked["records"] if r["kind"] == "collective" and r["host"] == "c" and r["peer"] == "d"][0]
    assert pair["verdict"] == "fail" and "also fails with a known-good partner: c" in pair["evidence"]


def test_a_pair_whose_sides_pass_with_good_partners_is_the_link():
    checked = classify_pairs({("a", "b")}, {
        (("a", "b"), 1): ("fail", 3.0), (("a", "c"), 1): ("pass", 20.0), (("d", "b"), 1): ("pass", 20.0)})
    [finding] = [r for r in checked["records"] if r["kind"] == "finding"]
    assert (finding["host"], finding["peer"], finding["params"]["code"]) == ("a", "b", "collective_link_failed_retest")
    assert checked["bad_nodes"] == []
    # the run's culprit list names the link, not its first host
    assert [(c["component"], c["host"], c["peer"]) for c in culprits.culprits(checked["records"])] == [
        ("link", "a", "b")]


def test_a_pair_that_passes_as_is_is_flaky():
    checked = classify_pairs({("a", "b")}, {
        (("a", "b"), 1): ("pass", 19.0), (("a", "c"), 1): ("pass", 20.0), (("d", "b"), 1): ("pass", 20.0)})
    assert not [r for r in checked["records"] if r["kind"] == "finding"]
    assert checked["verdicts"] == ["flaky", "pass", "pass", "pass"]


# ---------------------------------------------------------------- pool without bisection

POOL = ["h1", "h2", "h3", "h4"]


def test_a_failing_pool_without_bisection_is_retested_once_as_it_was():
    results = [result(POOL, "fail", 3.0)]
    plan = cr.plan(records_of(results, "pool"), results, "pool", repeats=3)
    assert [(i["purpose"], i["hosts"], i["attempt"]) for i in plan["retests"]] == [("as_is", POOL, 1)]
    assert plan["retests"][0]["params"]["origin"] == "h1-h2,h3,h4"


def test_a_bisected_pool_or_one_whose_launcher_named_its_host_is_not_retested_here():
    bisected = [result(POOL, "fail", 3.0, bisect={"conclusion": "isolated"}, bad_nodes=["h2"])]
    assert cr.plan(records_of(bisected, "pool"), bisected, "pool")["retests"] == []
    named = [result(POOL, "fail", 3.0, bad_nodes=["h4"])]
    assert cr.plan(records_of(named, "pool"), named, "pool")["retests"] == []


@pytest.mark.parametrize("again, verdict", [("pass", "flaky"), ("fail", "fail")])
def test_a_pool_retest_tells_flaky_from_failed_and_names_no_node(again, verdict):
    results = [result(POOL, "fail", 3.0)]
    records = records_of(results, "pool")
    plan = cr.plan(records, results, "pool")
    retests = retest_records(plan, {(tuple(POOL), 1): (again, 20.0 if again == "pass" else 3.0)}, "pool")
    checked = steps.with_retests(steps.gathered(results, "pool", []), records, retests, "pool", ["fail"])
    assert checked["verdicts"] == [verdict] and checked["bad_nodes"] == []
    assert not [r for r in checked["records"] if r["kind"] == "finding"]
    assert steps.outcome("nccl", "pool", checked, []).endswith(
        "; retests 1: %d confirmed, %d flaky" % ((1, 0) if verdict == "fail" else (0, 1)))


def test_nothing_retested_leaves_the_records_as_they_were():
    results = [result(POOL, "pass")]
    records = records_of(results, "pool")
    checked = steps.with_retests(steps.gathered(results, "pool", []), records, [], "pool", ["fail"])
    assert checked["records"] == records and checked["retest_counts"] is None
    assert steps.outcome("nccl", "pool", checked, []) == (
        "NCCL pool: 1 test(s), verdicts ['pass']; bad nodes []; unreachable []")


# ---------------------------------------------------------------- the runs of the retests

def test_an_as_is_retest_repeats_its_planned_run_and_a_partner_retest_gets_a_pair_run_of_its_own():
    results = pair_results({("a", "b")})
    plan = cr.plan(records_of(results, "pairs"), results, "pairs")
    planned = [{"hosts": pair, "operation": "all_reduce", "launcher": pair[0], "label": "all_reduce on %s" % ",".join(
        pair), "args": {"hosts": pair}, "environment": {}, "timeout": 300} for pair in RING]
    made = []

    def pair_runs(hosts, operation):
        made.append((list(hosts), operation))
        return {"hosts": list(hosts), "operation": operation, "launcher": hosts[0], "label": "new", "args": {},
                "environment": {}, "timeout": 1}

    runs = steps.retest_runs(planned, {}, plan["retests"], pair_runs)
    assert runs[0] == dict(planned[0], retest=plan["retests"][0]["params"], label="retest as is 1 of all_reduce on a,b")
    # the partners are spread over the known-good hosts (retest_plan's least used first)
    assert made == [(["a", "c"], "all_reduce"), (["d", "b"], "all_reduce")]
    assert [r["retest"]["retest_purpose"] for r in runs] == ["as_is", "partner", "partner"]
    with pytest.raises(ValueError, match="no planned run of all_reduce on a,b"):
        steps.retest_runs([], {}, plan["retests"][:1], pair_runs)


# ---------------------------------------------------------------- the action's steps

def run_step(step, task_vars):
    task = mock.MagicMock()
    task.args = {"step": step}
    task.check_mode = False
    task.async_val = 0
    templar = mock.MagicMock()
    templar.template.side_effect = lambda value, **kwargs: value
    plugin = action.ActionModule(task, mock.MagicMock(), PlayContext(), loader=mock.MagicMock(), templar=templar,
                                 shared_loader_obj=mock.MagicMock())
    return plugin.run(task_vars=task_vars)


def role_defaults():
    with open(os.path.join(REPO, "roles", "collective", "defaults", "main.yml")) as handle:
        return yaml.safe_load(handle)


def pairs_play(hostvars, **changes):
    entries = dict((host, {"name": host, "address": "10.0.0.%d" % (n + 1)}) for n, host in enumerate("abcd"))
    task_vars = dict(role_defaults(), commcheck_collective_mode="pairs", commcheck_thresholds_history=False,
                     commcheck_collective_entry_by_host=entries, hostvars=hostvars,
                     ansible_play_hosts=list("abcd"), ansible_play_hosts_all=list("abcd"), inventory_hostname="a",
                     commcheck_collective_library="nccl")
    task_vars.update(changes)
    return task_vars


def test_the_retests_step_plans_the_runs_of_a_failing_pair_from_the_first_pass():
    plan = run_step("runs", pairs_play({}))
    assert not plan.get("failed"), plan.get("msg")
    assert [run["hosts"] for run in plan["runs"]] == RING
    first = {"results": pair_results({("a", "b")})}
    hostvars = {"a": {"commcheck_collective_plan": plan, "commcheck_collective_group_results": first}}
    retests = run_step("retests", pairs_play(hostvars))
    assert not retests.get("failed"), retests.get("msg")
    assert [(r["hosts"], r["retest"]["retest_purpose"]) for r in retests["runs"]] == [
        (["a", "b"], "as_is"), (["a", "c"], "partner"), (["d", "b"], "partner")]
    # an as-is retest is the planned run again; a partner retest a pair run made as the planner makes them
    assert retests["runs"][0]["args"] == plan["runs"][0]["args"]
    partner = retests["runs"][2]
    assert partner["launcher"] == "d" and [h["name"] for h in partner["args"]["hosts"]] == ["d", "b"]
    assert partner["args"]["operation"] == "all_reduce" and partner["args"]["bisect"] is False
    assert retests["msg"] == "3 retest(s) of 1 failing run(s)"
    off = run_step("retests", pairs_play(hostvars, commcheck_retest_repeats=0))
    assert off["runs"] == [] and off["msg"] == "0 retest(s) of 1 failing run(s)"


def test_the_retests_step_plans_nothing_when_the_runs_failed_as_a_task():
    failed = {"failed": True, "results": [{"failed": True, "msg": "timed out"}]}
    hostvars = {"a": {"commcheck_collective_plan": {"library": "nccl"}, "commcheck_collective_group_results": failed}}
    assert run_step("retests", pairs_play(hostvars))["runs"] == []


def test_the_results_step_classifies_the_first_pass_with_its_retests():
    plan = run_step("runs", pairs_play({}))
    first = {"results": pair_results({("a", "b")})}
    hostvars = {"a": {"commcheck_collective_plan": plan, "commcheck_collective_group_results": first}}
    retests = run_step("retests", pairs_play(hostvars))
    again = {"results": [result(run["hosts"], "fail" if run["hosts"] == ["a", "b"] else "pass",
                                3.0 if run["hosts"] == ["a", "b"] else 20.0) for run in retests["runs"]]}
    hostvars["a"].update(commcheck_collective_retests=retests, commcheck_collective_retest_results=again)
    out = run_step("results", pairs_play(hostvars))
    assert not out.get("failed"), out.get("msg")
    kinds = [(r["kind"], r["verdict"], bool(r["params"].get("retest"))) for r in out["records"]]
    assert kinds == [("collective", "fail", False)] + [("collective", "pass", False)] * 3 + [
        ("collective", "fail", True), ("collective", "pass", True), ("collective", "pass", True),
        ("finding", "fail", False), ("retest_summary", "fail", False)]
    assert out["records"][7]["params"]["code"] == "collective_link_failed_retest"
    assert out["outcome"].endswith("; retests 3: 1 confirmed, 0 flaky")
    # a retest run that failed as a task fails the step, as a first run does
    hostvars["a"]["commcheck_collective_retest_results"] = {"failed": True, "results": [{"failed": True,
                                                                                        "msg": "killed"}]}
    failed = run_step("results", pairs_play(hostvars))
    assert failed["failed"] and failed["msg"] == "killed"


# ---------------------------------------------------------------- the report

def test_the_report_tells_a_flaky_collective_from_a_failed_one_and_lists_the_retests():
    flaky = classify_per_node({(("n3",), 1): ("pass", 19.0)})["records"]
    failed = [dict(r, host=r["host"].replace("n", "m"), params=dict(r["params"], hosts=[
        h.replace("n", "m") for h in r["params"]["hosts"]])) for r in classify_per_node(
        {(("n3",), 1): ("fail", 2.0)})["records"] if r["kind"] == "collective"]
    records = flaky + failed
    series = dict((s["name"], s["verdict"]) for s in report_model.collective_series(records))
    # one line per node (the retest is not a point of it), the verdict its first run's after the retests
    assert series == {"nccl all_reduce n1": "pass", "nccl all_reduce n2": "pass", "nccl all_reduce n3": "flaky",
                      "nccl all_reduce n4": "pass", "nccl all_reduce m1": "pass", "nccl all_reduce m2": "pass",
                      "nccl all_reduce m3": "fail", "nccl all_reduce m4": "pass"}
    summary = report_model.summarize(records)
    markdown = report_markdown.render_markdown(records, summary)
    assert "| series | verdict |\n|---|---|\n| nccl all_reduce m3 | fail |\n| nccl all_reduce n3 | flaky |" in markdown
    assert "## Retests" in markdown and "flaky: fail on n3, then passed on retest 1 of 1" in markdown
    page = report_html.render_html(records, summary)
    assert '<td>nccl all_reduce n3</td><td>-</td><td><span class="flaky">flaky</span></td>' in page
    assert '<td>nccl all_reduce m3</td><td>-</td><td><span class="fail">fail</span></td>' in page


# ---------------------------------------------------------------- the lab's fault (EMULATOR)

class FakeLab(object):
    def __init__(self, root):
        self.root = root
        self.healed = 0

    def sysfs_root(self, host):
        return os.path.join(self.root, host)

    def heal(self):
        self.healed += 1


def test_the_emulators_slow_node_fault_holds_and_its_once_only_fault_is_met_by_one_run(tmp_path):
    lab = FakeLab(str(tmp_path))
    for path in ("h1", "h2", "h3"):
        os.makedirs(os.path.join(str(tmp_path), path))
    steady = faults.SlowCollectiveRuns(lab, "h1", 300)
    once = faults.SlowCollectiveRuns(lab, "h2", 50, once=True)
    steady.inject()
    once.inject()
    assert [emu.local_slow_factor(lab.sysfs_root("h1")) for _n in range(2)] == [300.0, 300.0]
    assert not once.claimed()
    assert [emu.local_slow_factor(lab.sysfs_root("h2")) for _n in range(2)] == [50.0, 1.0]
    assert once.claimed() and emu.local_slow_factor(lab.sysfs_root("h3")) == 1.0
    assert emu.local_slow_factor(None) == 1.0
    steady.heal()
    once.heal()
    assert os.listdir(os.path.join(str(tmp_path), "h1", "commcheck-lab")) == []
    assert os.listdir(os.path.join(str(tmp_path), "h2", "commcheck-lab")) == [] and lab.healed == 2
    assert emu.local_slow_factor(lab.sysfs_root("h1")) == 1.0
