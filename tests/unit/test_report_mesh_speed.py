# -*- coding: utf-8 -*-
"""The speed-ups of the 128-host mesh's report (issue 37 §6) give what the code before them gave.

Each changed step is run beside the way it was computed before (copied here as the reference) on inputs made to
tell them apart: suspects named over rounds with outliers and unknown links, baselines of runs measured once,
the params text of values that are equal but read differently, and a past run read without listing the
history's runs.
"""
import json
import random

import pytest

from ansible.utils.unsafe_proxy import AnsibleUnsafeText

from ansible_collections.clusterops.commcheck.plugins.action import report as report_action
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import history
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import report_model
from ansible_collections.clusterops.commcheck.plugins.module_utils.records.report_values import plain
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import baseline as bl
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import localization as loc
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import localization_fleet as fleet
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts.localization_view import majority
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.text import natural_key

RATE = 100.0


# --- suspects: counts kept per key, not recounted each round ------------------------------------------

def reference_suspects(view, fraction, minimum):
    """suspect_host_rails as it was: every candidate's links recounted in every round."""
    neighbours = fleet._rail_neighbours(view)
    order = sorted((key for key in neighbours if not view.cleared(*key)), key=lambda key: (key[1], natural_key(key[0])))
    outliers = view.outliers()
    candidates = [key for key in order
                  if key in outliers or any(status == "bad" for _other, status in neighbours[key])]
    suspects = set()
    while True:
        best, best_rank = None, None
        for key in candidates:
            if key in suspects:
                continue
            left = [(other, status) for other, status in neighbours[key] if (other, key[1]) not in suspects]
            measured = sum(1 for _other, status in left if status == "bad")
            whole = key in view.outliers() and fleet._outlier_failed(view, key[0], key[1], suspects)
            count = len(neighbours[key]) if whole else len(left)
            bad = count if whole else measured
            rank = (float(bad) / count if count else 0.0, float(measured) / len(left) if left else 0.0, measured, bad)
            if majority(bad, count, fraction, minimum) and (best_rank is None or rank > best_rank):
                best, best_rank = key, rank
        if best is None:
            return suspects | set(key for key in order if key not in suspects and
                                  fleet.hidden_by_suspects(view, key, neighbours[key], suspects, fraction, minimum))
        suspects.add(best)


def random_mesh(seed):
    """A mesh of 5-9 hosts on 1-3 rails: slow hosts and NICs (some only just failing, so outliers), bad and
    unknown links and noise."""
    rnd = random.Random(seed)
    names = ["h%d" % (i + 1) for i in range(rnd.randint(5, 9))]
    rails = rnd.randint(1, 3)
    slow = dict((host, rnd.choice((30.0, 70.0, 88.0))) for host in rnd.sample(names, rnd.randint(1, 3)))
    slow_nic = (rnd.choice(names), rnd.randrange(rails))
    out = []
    for rail in range(rails):
        for i, x in enumerate(names):
            for y in names[i + 1:]:
                value = min([95.0 * rnd.uniform(0.98, 1.02)] + [slow[h] for h in (x, y) if h in slow])
                if slow_nic in ((x, rail), (y, rail)):
                    value = min(value, 60.0)
                if rnd.random() < 0.1:
                    value = 40.0
                verdict = "fail" if value < 90.0 else "pass"
                if rnd.random() < 0.05:
                    verdict, value = "skipped", None
                out.append(loc.observation(x, y, rail, verdict, value, RATE, "write", "mlx5_%d" % rail,
                                           "mlx5_%d" % rail))
    return out


@pytest.mark.parametrize("seed", range(40))
def test_suspects_kept_by_count_are_those_recounted_each_round(seed):
    view = loc.link_view(random_mesh(seed), loc.BAD_VERDICTS, "links")
    for fraction, minimum in ((0.5, 1), (0.5, 2), (0.3, 2)):
        assert fleet.suspect_host_rails(view, fraction, minimum) == reference_suspects(view, fraction, minimum)


def test_the_random_meshes_name_suspects_over_several_rounds():
    """The equality above is no empty claim: the meshes name several suspects, outliers among the candidates."""
    rounds = [len(reference_suspects(loc.link_view(random_mesh(seed), loc.BAD_VERDICTS, "links"), 0.5, 2))
              for seed in range(40)]
    assert max(rounds) >= 3 and sum(1 for count in rounds if count >= 2) >= 10
    assert any(loc.link_view(random_mesh(seed), loc.BAD_VERDICTS, "links").outliers() for seed in range(40))


# --- baselines ---------------------------------------------------------------------------------------

def test_a_baseline_of_runs_measured_once_or_twice_is_the_median_of_run_medians():
    builder = bl.BaselineBuilder(k=5)
    for run, values in (("r1", [10.0]), ("r2", [20.0, 40.0]), ("r3", [7])):
        for value in values:
            builder.add({"kind": "rdma_bw", "host": "a", "peer": "b", "run_id": run, "verdict": "pass",
                         "time": "2026-12-0%sT00:00:00.000000Z" % run[1], "metrics": {"bw_gbps": value}})
    [base] = list(builder.baselines().values())
    assert base["values"] == {"bw_gbps": [10.0, 30.0, 7.0]} and base["metrics"] == {"bw_gbps": 10.0}
    assert all(isinstance(v, float) and not isinstance(v, bool) for v in base["values"]["bw_gbps"])


# --- the params text, kept per params seen ----------------------------------------------------------

def reference_text(params, skip=()):
    params = params or {}
    return " ".join("%s=%s" % (k, plain(params[k])) for k in sorted(params)
                    if k not in skip and params[k] is not None and not isinstance(params[k], (dict, list)))


def test_params_text_kept_per_params_reads_as_computed_each_time():
    cases = [{"rail": 1}, {"rail": True}, {"rail": 1.0}, {"rail": 0.0}, {"rail": -0.0}, {"rail": "1"},
             {"rail": AnsibleUnsafeText("x")}, {"rail": None, "op": "write"}, {"op": "write", "rail": None},
             {"rail": [1, 2], "op": "read"}, {"rail": {"a": 1}}, {"gpu": 1, "peer_gpu": 2, "round": 5}, {}, None]
    for skip in ((), bl.DEFAULT_IGNORE_PARAMS, ["gpu"]):
        for _twice in range(2):
            for params in cases:
                assert report_model.params_text(params, skip=skip) == reference_text(params, skip), (params, skip)
    assert report_model.params_text({"rail": -0.0}) == "rail=-0.0" and report_model.params_text({"rail": 0.0}) \
        == "rail=0.0" and report_model.params_text({"rail": True}) == "rail=yes"


def test_the_params_texts_kept_stay_bounded():
    report_model._PARAMS_TEXTS.clear()
    for index in range(report_model._PARAMS_TEXTS_KEPT + 10):
        assert report_model.params_text({"size": index}) == "size=%d" % index
    assert len(report_model._PARAMS_TEXTS) <= report_model._PARAMS_TEXTS_KEPT


# --- a named past run, read without listing the runs -------------------------------------------------

def _line(run, when, kind, host="h1", **extra):
    record = {"schema": 1, "run_id": run, "time": when, "kind": kind, "host": host}
    record.update(extra)
    return json.dumps(record, separators=(",", ":"))


def _history(tmp_path):
    directory = tmp_path / "history"
    directory.mkdir()
    lines = [
        _line("r1", "2026-11-30T10:00:00.000000Z", "rdma_bw", peer="h2", verdict="pass"),
        # r2's summary line is its earliest (a history merged by hand) and comes after its records
        _line("r2", "2026-12-01T10:00:02.000000Z", "rdma_bw", peer="h2", verdict="fail"),
        _line("r2", "2026-12-01T10:00:03.000000Z", "regression", verdict="warn"),
        _line("r2", "2026-12-01T10:00:01.000000Z", "summary", host=None, verdict="fail"),
        _line("r1", "2026-11-30T10:00:05.000000Z", "summary", host=None, verdict="pass"),
        _line("only-summary", "2026-12-01T11:00:00.000000Z", "summary", host=None, verdict="pass"),
        _line(7, "2026-12-01T12:00:00.000000Z", "rdma_bw", verdict="pass"),
        "{not json r2",
    ]
    (directory / "history-2026-12.jsonl").write_text("\n".join(lines[1:]) + "\n")
    (directory / "history-2026-11.jsonl").write_text(lines[0] + "\n")
    return str(directory)


def _reference_run(directory, wanted):
    report = history.ReadReport()
    chosen = report_action.past_run(directory, wanted, None, report)
    return chosen["first"], history.query(directory, run_id=chosen["run_id"], report=report)


@pytest.mark.parametrize("wanted", ["r1", "r2"])
def test_a_named_run_is_the_run_and_first_time_that_listing_the_runs_gave(tmp_path, wanted):
    directory = _history(tmp_path)
    chosen, lines, known = report_action.named_run(directory, wanted, history.ReadReport())
    first, reference = _reference_run(directory, wanted)
    assert chosen == {"run_id": wanted, "first": first} and lines == reference
    assert (wanted, first) != ("r2", "2026-12-01T10:00:02.000000Z")  # the summary's earlier time counts


@pytest.mark.parametrize("wanted", ["only-summary", "nowhere", "7"])
def test_a_named_run_without_records_is_not_found_as_before(tmp_path, wanted):
    directory = _history(tmp_path)
    with pytest.raises(ValueError, match="history_run .* not found in") as named:
        report_action.named_run(directory, wanted, history.ReadReport())
    with pytest.raises(ValueError, match="history_run .* not found in") as listed:
        report_action.past_run(directory, wanted, None, history.ReadReport())
    assert str(named.value) == str(listed.value)


def test_a_named_run_without_a_history_dir_is_refused():
    with pytest.raises(ValueError, match="history_run needs history_dir"):
        report_action.named_run(None, "r1", history.ReadReport())


# --- results.json, encoded without the encoder's check for cycles ---------------------------------------

def test_results_json_reads_as_before_and_a_cyclic_record_still_raises():
    from ansible_collections.clusterops.commcheck.plugins.module_utils.records import report_json
    records = [{"kind": "rdma_bw", "host": "b", "peer": "a", "params": {"z": 1, "a": [1, {"y": 2, "x": None}]},
                "metrics": {"bw_gbps": 1.5}, "verdict": "pass", "when": report_json}]
    summary = {"run_id": "r", "generated": "t"}
    text = report_json.render_results_json(records, summary)
    document = {"schema": report_json.RESULTS_SCHEMA, "run_id": "r", "generated": "t", "summary": summary,
                "baseline": None, "records": records, "regressions": []}
    assert text == json.dumps(document, separators=(",", ":"), sort_keys=True, default=str) + "\n"
    records[0]["params"]["self"] = records[0]
    with pytest.raises((RecursionError, ValueError)):
        report_json.render_results_json(records, summary)


# --- junit.xml, written as text --------------------------------------------------------------------------

def tree_junit(view, regression_fails=True):
    """junit.xml as it was written: an ElementTree, indented by ET.indent."""
    import xml.etree.ElementTree as ET
    from ansible_collections.clusterops.commcheck.plugins.module_utils.records import report_junit as rj

    def testcase(suite, kind, name, record, counts):
        metrics = record.get("metrics") or {}
        duration = rj.num(metrics.get("duration_s")) or 0.0
        case = ET.SubElement(suite, "testcase", classname="commcheck.%s" % kind, name=rj._xml_text(name),
                             time=rj._seconds(duration))
        counts["tests"] += 1
        counts["time"] += max(0.0, duration)
        detail = rj._detail(record, metrics)
        verdict = record.get("verdict")
        counter = None
        if verdict in ("fail", "error"):
            node = ET.SubElement(case, "failure" if verdict == "fail" else "error", message=rj._xml_text(
                record.get("cause") or "check %s" % ("failed" if verdict == "fail" else "error")), type=verdict)
            node.text = rj._xml_text(detail)
            counter = "failures" if verdict == "fail" else "errors"
        elif verdict == "skipped":
            ET.SubElement(case, "skipped", message=rj._xml_text(record.get("cause") or "skipped"))
            counter = "skipped"
        elif record.get("regression") and regression_fails:
            node = ET.SubElement(case, "failure", message=rj._xml_text(rj._regression_message(record["regression"])),
                                 type="regression")
            node.text = rj._xml_text(detail)
            counter = "failures"
        if counter:
            counts[counter] += 1
        if verdict in ("flaky", "warn"):
            ET.SubElement(case, "system-out").text = rj._xml_text("%s: %s" % (verdict, detail))

    suites = {}
    for record in view.checks:
        suites.setdefault(str(record.get("kind")), []).append(record)
    root = ET.Element("testsuites", name="commcheck")
    totals = {"tests": 0, "failures": 0, "errors": 0, "time": 0.0}
    for kind in sorted(suites):
        suite = ET.SubElement(root, "testsuite", name="commcheck.%s" % kind)
        if len(root) == 1:
            ET.SubElement(ET.SubElement(suite, "properties"), "property", name="run_id",
                          value=rj._xml_text(view.summary.get("run_id")))
        counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0, "time": 0.0}
        seen = {}
        for record in suites[kind]:
            name = report_model.check_name(record)
            seen[name] = seen.get(name, 0) + 1
            testcase(suite, kind, "%s #%d" % (name, seen[name]) if seen[name] > 1 else name, record, counts)
        for key in ("tests", "failures", "errors", "skipped"):
            suite.set(key, str(counts[key]))
        suite.set("time", rj._seconds(counts["time"]))
        for key in totals:
            totals[key] += counts[key]
    for key in ("tests", "failures", "errors"):
        root.set(key, str(totals[key]))
    root.set("time", rj._seconds(totals["time"]))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def junit_records():
    nasty = 'a & b < c > d "q" \'s\'\r\n\ttab \x07bell'
    regression = {"metrics": {"bw_gbps": {"change": -0.3, "baseline": 400.0}}}
    out = []
    for index, verdict in enumerate(("pass", "fail", "error", "skipped", "flaky", "warn", "pass", "fail")):
        out.append({"kind": "rdma_bw" if index % 3 else "tcp_bw", "host": "h%d" % (index % 2), "peer": "h9",
                    "params": {"rail": index % 2, "device": nasty if index == 1 else "mlx5_0"},
                    "metrics": {"bw_gbps": 100.0 + index, "duration_s": index * 1.5} if index != 3 else {},
                    "verdict": verdict, "cause": nasty if index in (1, 2, 3) else None, "fix": "fix it" if index else None,
                    "evidence": [nasty, "line two"] if index in (1, 4, 5) else [],
                    "regression": regression if index in (0, 6) else None})
    out.append({"kind": "fail_empty", "host": "h1", "verdict": "fail", "params": {}, "metrics": {}})
    out.append({"kind": "collective", "host": "h1", "peer": None, "verdict": "pass",
                "params": {"hosts": ["h1", "h2"], "library": "nccl", "op": "all_reduce"},
                "metrics": {"busbw_gbs": 300.0, "duration_s": 93.4}})
    return out


@pytest.mark.parametrize("regression_fails", [True, False])
def test_junit_written_as_text_is_what_the_element_tree_wrote(regression_fails):
    from ansible_collections.clusterops.commcheck.plugins.module_utils.records import report_junit
    records = junit_records()
    for summary in ({"run_id": 'run "1" & <2>'}, {"run_id": None}):
        view = report_model.ReportView(records, summary)
        assert report_junit.render(view, regression_fails) == tree_junit(view, regression_fails)
    empty = report_model.ReportView([], {"run_id": "r"})
    assert report_junit.render(empty) == tree_junit(empty) == (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<testsuites name="commcheck" tests="0" failures="0" errors="0" time="0.000" />\n')


def test_a_metric_judged_with_its_median_given_is_judged_as_before():
    rule = bl.RegressionRule()
    rnd = random.Random(5)
    for _case in range(300):
        runs = [round(rnd.uniform(50, 150), 1) for _run in range(rnd.randint(1, 6))]
        value = round(rnd.uniform(20, 160), 1)
        for name in ("bw_gbps", "lat_us"):
            verdict = rule.judge(name, value, runs, min_runs=1)
            base = bl.median(runs)
            assert verdict["spread"] == round(bl.relative_spread(runs), 4)
            assert bl.relative_spread(runs, base) == bl.relative_spread(runs)
    assert bl.relative_spread([None, 10.0, 12.0, 20.0]) == bl.relative_spread([10.0, 12.0, 20.0]) == 2.0 / 12.0


# --- commcheck.prom: a check's labels from its group's, not built again -------------------------------------

def test_the_latest_record_of_each_check_has_the_labels_built_from_the_record():
    from ansible_collections.clusterops.commcheck.plugins.module_utils.records import report_identity
    from ansible_collections.clusterops.commcheck.plugins.module_utils.records import report_prometheus as rp
    checks = []
    for size in (4096, 65536, 4096):
        for rail in (0, 1):
            checks.append({"kind": "rdma_bw", "host": "h1", "peer": "h2", "verdict": "pass",
                           "params": {"op": "write", "rail": rail, "size": size, "round": len(checks)},
                           "metrics": {"bw_gbps": 100.0 + len(checks)}})
    checks.append({"kind": "rdma_bw", "host": "h1", "peer": "h2", "verdict": "pass",
                   "params": {"op": "write", "rail": 0, "memory": "cuda"}, "metrics": {"bw_gbps": 1.0}})
    for max_bytes in (2 ** 20, 2 ** 30):
        checks.append({"kind": "collective", "host": "h1", "peer": None, "verdict": "pass",
                       "params": {"library": "nccl", "op": "all_reduce", "hosts": ["h1", "h2"], "max_bytes": max_bytes},
                       "metrics": {"busbw_gbs": 10.0}})
    links, collectives, own = rp.latest_checks(checks)

    def reference(groups, labels_of, named):
        return dict((labels_of(records[-1], variant), records[-1])
                    for (_key, variant), records in report_identity.split_by_variant(groups, skip=named).items())

    link_groups, collective_groups = {}, {}
    for record in checks:
        if record["kind"] == "collective":
            collective_groups.setdefault(rp.collective_labels(record), []).append(record)
        else:
            link_groups.setdefault(rp.link_labels(record), []).append(record)
    assert links == reference(link_groups, rp.link_labels, rp._LINK_NAMED)
    assert collectives == reference(collective_groups, rp.collective_labels, rp._COLLECTIVE_NAMED)
    assert own == [] and set(label[-1] for label in links) == set(["", "size=4096", "size=65536"])
    assert len(collectives) == 2
    assert links[rp.link_labels(checks[4], "size=4096")] is checks[4]
