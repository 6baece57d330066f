# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Hostile and careless values, by class, against the one validator, the report writers and the file writers.

The validator tables are generated from every role's meta/argument_specs.yml,
so a new option is covered the day it is added. The classes:

1. numbers no option can hold (inf, nan, 10**400, "1e999"): a clear problem
   naming the option, never an exception out of the check;
2. values Ansible would silently turn into other text (yes -> 'True', a list
   -> "['a']", 2024.10 -> '2024.1') given to a text option;
3. characters that hide or rewrite text (ESC, CR, NEL, U+2028, bidi
   overrides) in text values: refused by the validator, and made visible by
   every report a person reads (Markdown, HTML, index.html, JUnit, Prometheus,
   the summary lines), which also stay well formed and writable as UTF-8;
4. symbolic links planted where the collection writes (a history month file,
   a report run directory, a slice meeting directory);
5. Jinja in data is written as it is, never evaluated;
6. the AWX surveys offer no answer the validator would refuse, except the
   integer bounds AWX forces on a fraction (refused with a clear message);
7. a node selector is read with the one label selector grammar before
   kubectl sees it.

Valid values keep passing: integers as text, 'yes' / 'false' for booleans,
comma-separated lists, Unicode letters in free text.

Each value of classes 1 to 3 is checked once against the check every option
goes through (the type check ``role_options.check_type``, the rules of the
role-option kit, ``option_rules``); every option then gets one value of each
class, which shows that it goes through them and that the problem names it.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import glob
import itertools
import json
import os
import re
import sys
import xml.etree.ElementTree as ET

import pytest

from ansible_collections.clusterops.commcheck.plugins.action import report as report_action
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import slice_meeting
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import history
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import history_write
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import report_model
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import report_render
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import quarantine
from ansible_collections.clusterops.commcheck.plugins.plugin_utils import role_option_kit as kit
from ansible_collections.clusterops.commcheck.plugins.plugin_utils import role_options as ro

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOLS = os.path.join(REPO, "tests", "tools")
if TOOLS not in sys.path:
    sys.path.insert(0, TOOLS)

import awx_survey_check as awx  # noqa: E402  pylint: disable=wrong-import-position
from test_hostile_launch_and_files import files_under, run_action  # noqa: E402  pylint: disable=wrong-import-position
from test_role_options import SPECS  # noqa: E402  pylint: disable=wrong-import-position


ALL = ro.merge_specs(SPECS, ro.ROLES)
CTX = kit.Context({}, ("n1", "n2"), ALL, ro.check_option)
TEXT_TYPES = ("str", "path")


def _kind(spec):
    """(type, element type): ('int', None) for an int option, ('list', 'str') for a list of strings."""
    kind = spec.get("type", "str")
    return kind, spec.get("elements") if kind == "list" else None


def options_where(test):
    return sorted(option for option, spec in ALL.items() if test(*_kind(spec)))


NUMBER_OPTIONS = options_where(lambda kind, elements: kind in ("int", "float") or elements in ("int", "float"))
TEXT_OPTIONS = options_where(lambda kind, elements: kind in TEXT_TYPES or elements in TEXT_TYPES)
FREE_TEXT_OPTIONS = [o for o in TEXT_OPTIONS if not ALL[o].get("choices")]


def check(option, value):
    """The problem the validator finds with one value of one option (None: taken); it must never raise."""
    return ro.check_option(option, ALL[option], value, CTX)


def assert_refused(option, value, fragment=None):
    problem = check(option, value)
    assert problem, "%s took %r" % (option, value)
    assert problem.startswith(option), problem
    if fragment:
        assert fragment in problem, problem
    return problem


# ---------------------------------------------------------------- 1. numbers no option can hold

NON_FINITE = [float("inf"), float("-inf"), float("nan"), 10 ** 400, -10 ** 400, "inf", "-Infinity", "NaN", "1e999"]
# Anything at all: the check returns a problem or nothing, whatever the option.
WILD = NON_FINITE + [
    1e308, -1, 0, "", " ", "yes", "false", True, None, [], {}, [None], {"": None}, [[["deep"]]], {"a": {"b": [1]}},
    "-x", ["-x"], {"--x": "y"}, "a\u2028b", "a\x00b", "\u202egnp.exe", "x" * 100000, u"\u00e9\u00e8", b"bytes",
    "{{ lookup('pipe', 'id') }}", "a,,b,", 2 ** 63, -2 ** 63 - 1, 1.5,
]


def test_no_value_breaks_the_validator_of_any_option():
    broken = [(option, value, problem) for option in sorted(ALL) for value in WILD
              for problem in [check(option, value)]
              if not (problem is None or (isinstance(problem, str) and problem.startswith(option)))]
    assert broken == []


def type_problems(spec, values, fragment):
    """The values the shared type check does not refuse with ``fragment`` in a problem that names the option."""
    out = []
    for value in values:
        _converted, problem = ro.check_type("opt", spec, value)
        if not (problem and problem.startswith("opt") and fragment in problem):
            out.append((value, problem))
    return out


@pytest.mark.parametrize("spec", [{"type": "int"}, {"type": "float"}, {"type": "list", "elements": "int"},
                                  {"type": "list", "elements": "float"}], ids=repr)
def test_the_type_check_refuses_every_number_that_is_not_finite(spec):
    items = NON_FINITE if spec["type"] != "list" else [[1, value] for value in NON_FINITE]
    assert type_problems(spec, items, "finite") == []


# One value of each class (a float, a huge integer, a text) for every number option.
NON_FINITE_BY_CLASS = [float("nan"), -10 ** 400, "1e999"]


@pytest.mark.parametrize("option", NUMBER_OPTIONS)
def test_number_options_refuse_numbers_that_are_not_finite(option):
    for value in NON_FINITE_BY_CLASS:
        shown = assert_refused(option, value)
        assert "finite" in shown or "is not" in shown, shown


def test_a_number_problem_says_what_is_wrong():
    assert check("commcheck_rdma_duration", float("inf")) == \
        "commcheck_rdma_duration: inf is not an integer: it must be a finite number"
    assert check("commcheck_min_fraction", 10 ** 400).startswith("commcheck_min_fraction: 1000")
    assert "finite" in check("commcheck_rdma_rail_numbers", [1, float("inf")])


# ---------------------------------------------------------------- 2. values Ansible would turn into other text

NOT_TEXT = [True, False, 2024.10, float("nan"), ["a"], {"a": "b"}]


def as_text_value(option, value):
    """``value`` where the text option takes it: a list option's item."""
    kind, _elements = _kind(ALL[option])
    if kind == "list" and not isinstance(value, (list, dict)):
        return ["ok", value]
    if kind == "list" and isinstance(value, list):
        return [value]
    return value


@pytest.mark.parametrize("spec", [{"type": "str"}, {"type": "path"}, {"type": "list", "elements": "str"},
                                  {"type": "str", "choices": ["True", "1.5"]}], ids=repr)
def test_the_type_check_refuses_every_value_that_is_not_text(spec):
    items = NOT_TEXT if spec["type"] != "list" else [["ok", value] for value in NOT_TEXT]
    assert type_problems(spec, items, "is not a string") == []


# One value of each class (a boolean, a number, a container) for every text option.
NOT_TEXT_BY_CLASS = [True, 2024.10, ["a"]]


@pytest.mark.parametrize("option", TEXT_OPTIONS)
def test_text_options_refuse_values_that_are_not_text(option):
    for value in NOT_TEXT_BY_CLASS:
        assert_refused(option, as_text_value(option, value), "is not a string")


def test_the_text_problem_asks_for_quotes():
    assert check("commcheck_history_dir", False) == \
        "commcheck_history_dir: False is not a string (quote it if it is meant as text)"
    assert check("commcheck_run_id", 2024.10).startswith("commcheck_run_id: 2024.1 is not a string")


@pytest.mark.parametrize("option,value", [
    ("commcheck_run_id", 20260131),                  # an integer's digits are its text
    ("commcheck_k8s_namespace", 42),
    ("commcheck_rdma_hosts", "n1, n2"),              # a list as comma-separated text (AWX)
    ("commcheck_rdma_ops", "write,read"),
    ("commcheck_rdma_bidirectional", "yes"),         # booleans as text
    ("commcheck_tcp_reverse", "false"),
    ("commcheck_rdma_duration", "5"),                # a number as text
    ("commcheck_min_fraction", "0.5"),
    ("commcheck_quarantine_reason", u"Knoten defekt \u2013 L\u00fcfter (\u98ce\u6247)"),
    ("commcheck_report_dir", u"/var/lib/commcheck/r\u00e9sultats"),
    ("commcheck_rdma_use_cuda", -1),                 # -1: no GPU memory
    ("commcheck_history_dir", ""),
], ids=repr)
def test_valid_values_keep_passing(option, value):
    assert check(option, value) is None


# ---------------------------------------------------------------- 3. characters that hide or rewrite text

HIDDEN = ["\x1b[2J", "\r", "\x85", "\u2028", "\u2029", "\u202e", "\u2066", "\x9b"]


@pytest.mark.parametrize("rule,good", [(kit.text(), "node1x"), (kit.name("word"), "node1x"), (kit.names("word"), ["node1x"]),
                                       (kit.path(), "/node1x"), (kit.binary(), "/usr/bin/node1x"),
                                       (kit.host(), "node1x"), (kit.hosts(), ["node1x"])],
                         ids=["text", "name", "names", "path", "binary", "host", "hosts"])
def test_the_kit_rules_refuse_every_character_that_hides_text(rule, good):
    ctx = kit.Context({}, ("n1", "n2"))
    rule("opt", good, ctx)
    for char in HIDDEN + ["\n", "\x00", "\t"]:
        hidden = [item.replace("node1", "node1" + char) for item in good] if isinstance(good, list) else \
            good.replace("node1", "node1" + char)
        with pytest.raises(kit.OptionError, match="^opt"):
            rule("opt", hidden, ctx)


@pytest.mark.parametrize("option", FREE_TEXT_OPTIONS)
def test_text_options_refuse_characters_that_hide_text(option):
    # one of them (the rules are checked with each above): a direction override, which no line break check finds
    value = "node1" + u"\u202e" + "x"
    kind, _elements = _kind(ALL[option])
    assert_refused(option, [value] if kind == "list" else value)


def test_the_hidden_character_problem_names_it():
    assert "direction override" in check("commcheck_quarantine_reason", u"ok \u202e")


def test_quarantine_reasons_from_findings_lose_hidden_characters():
    assert quarantine.clean_reason(u"slow\u2028NIC \u202emlx5_0\x85 down") == "slow NIC mlx5_0 down"


REPORT_VALUES = dict(HIDDEN=HIDDEN, other=["\x00", "\x07", "\ufffe", "\ud800", "\ufeff"])
HIDDEN_IN_FILES = re.compile(u"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff\ufffe"
                             u"\ud800-\udfff]")
PROM_SAMPLE = re.compile(r'^[a-zA-Z_:][a-zA-Z0-9_:]*(\{[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*"'
                         r'(,[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*")*\})? \S+$')


def _records(field, value):
    value += "x"  # inside the text: history strips the whitespace at its ends
    recs = []
    for host, peer in itertools.permutations(["n1", "n2"], 2):
        rec = {"kind": "rdma_bw", "host": host, "peer": peer, "params": {"op": "write", "device": "mlx5_0"},
               "metrics": {"bw_gbps": 10.0, "expected_gbps": 100.0}, "verdict": "fail", "cause": "slow",
               "fix": "reseat the cable", "evidence": ["ib_write_bw: 10 Gb/s"]}
        if field in ("host", "peer") and host == "n1":
            rec[field] = "n1" + value
        elif field in ("device", "op"):
            rec["params"][field] = "x" + value
        elif field == "cause":
            rec.update(cause="slow" + value, evidence=["line" + value])
        recs.append(rec)
    recs.append({"kind": "finding", "host": "n1", "verdict": "error", "cause": "memlock" + value,
                 "fix": "raise it" + value, "params": {"device": "mlx5_0"}})
    return history.normalize_records(recs)[0]


@pytest.mark.parametrize("field", ["host", "peer", "device", "op", "cause"])
def test_reports_show_hidden_characters_and_stay_well_formed(field):
    # every character at once, each between letters: one report per field
    chars = HIDDEN + REPORT_VALUES["other"]
    recs = _records(field, "".join(char + "y" for char in chars))
    summary = report_model.summarize(recs, run_id="r1")
    texts = report_render.render_formats(["md", "html", "json", "junit", "prom"], recs, summary)
    for fmt, text in texts.items():
        text.encode("utf-8")  # every file can be written
        if fmt != "json":
            assert not HIDDEN_IN_FILES.search(text), (fmt, HIDDEN_IN_FILES.search(text).group(0))
    # nothing is lost: each character is there, as its escape, in what people read
    for char in chars:
        code = ord(char[0])
        escape = "\\x%02x" % code if code < 0x100 else "\\u%04x" % code
        assert escape in texts["md"] and escape in texts["html"], escape
    assert json.loads(texts["json"])["records"]
    ET.fromstring(texts["junit"].encode("utf-8"))
    for line in texts["prom"].splitlines():
        assert line.startswith("#") or PROM_SAMPLE.match(line), line
    for line in report_render.summary_lines(summary):
        assert not HIDDEN_IN_FILES.search(line), line


def test_the_report_action_writes_hidden_characters_visibly_into_every_file(tmp_path):
    reports = tmp_path / "reports"
    recs = _records("host", "\x1b]0;pwned\x07\u202e")
    result = run_action(report_action.ActionModule, {"report_dir": str(reports), "run_subdir": True,
                                                     "run_id": "r1", "records": recs})
    assert not result.get("failed"), result
    written = files_under(reports)
    assert str(reports / "index.html") in written
    for path in written:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
        if not path.endswith(".json"):
            assert not HIDDEN_IN_FILES.search(text), path
    for line in result["summary_lines"]:
        assert not HIDDEN_IN_FILES.search(line), line


# ---------------------------------------------------------------- 4. symbolic links where the collection writes

def test_history_is_never_appended_through_a_link(tmp_path):
    victim = tmp_path / "victim"
    victim.write_text("keep\n")
    directory = tmp_path / "history"
    directory.mkdir()
    when = history.utc_now()
    os.symlink(str(victim), history_write.history_file(str(directory), when))
    with pytest.raises(OSError, match="symbolic link"):
        history_write.append_records(str(directory), [{"kind": "x", "host": "a", "verdict": "pass"}], "r1", when=when)
    assert victim.read_text() == "keep\n"


def test_history_still_appends_to_its_plain_files(tmp_path):
    directory = str(tmp_path / "history")
    for run in ("r1", "r2"):
        history_write.append_records(directory, [{"kind": "x", "host": "a", "verdict": "pass"}], run)
    assert [r["run_id"] for r in history.query(directory)] == ["r1", "r2"]


def test_report_run_directory_is_never_a_link(tmp_path):
    reports, elsewhere = tmp_path / "reports", tmp_path / "elsewhere"
    reports.mkdir()
    elsewhere.mkdir()
    os.symlink(str(elsewhere), str(reports / "r1"))
    result = run_action(report_action.ActionModule, {"report_dir": str(reports), "run_subdir": True, "run_id": "r1",
                                                     "records": [{"kind": "x", "host": "a", "verdict": "pass"}]})
    assert result.get("failed") and "run_id" in result["msg"] and "symbolic link" in result["msg"], result
    assert files_under(elsewhere) == [] and not os.path.exists(str(reports / "index.html"))


def test_report_dir_itself_may_be_a_link(tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    os.symlink(str(real), str(tmp_path / "reports"))
    result = run_action(report_action.ActionModule, {"report_dir": str(tmp_path / "reports"), "run_subdir": True,
                                                     "run_id": "r1",
                                                     "records": [{"kind": "x", "host": "a", "verdict": "pass"}]})
    assert not result.get("failed"), result
    assert os.path.isfile(str(real / "r1" / "report.html"))


def test_slices_never_meet_through_a_link(tmp_path):
    base, elsewhere = tmp_path / "slices", tmp_path / "elsewhere"
    base.mkdir()
    elsewhere.mkdir()
    os.symlink(str(elsewhere), str(base / "run-1"))
    with pytest.raises(slice_meeting.SliceMeetingError, match="symbolic link"):
        slice_meeting.meet(str(base), "run-1", "rdma-rails", 2, ["h1"], {}, wait=1)
    assert files_under(elsewhere) == []


# ---------------------------------------------------------------- 5. Jinja in data stays data

def test_jinja_in_records_is_written_as_it_is():
    recs = history.normalize_records([{"kind": "tcp_bw", "host": "{{ 7 * 7 }}", "peer": "b", "verdict": "fail",
                                       "cause": "{% raw %}x{{ lookup('pipe', 'id') }}"}])[0]
    texts = report_render.render_formats(["md", "html", "json"], recs, report_model.summarize(recs))
    assert "{{ 7 * 7 }}" in texts["md"] and "{{ 7 * 7 }}" in texts["html"] and "49" not in texts["md"]
    assert "lookup('pipe', 'id')" in json.loads(texts["json"])["records"][0]["cause"]


# ---------------------------------------------------------------- 6. AWX surveys

def _survey_answers():
    """(survey, variable, answer) for every choice, default and integer bound the surveys offer."""
    out = []
    for path in sorted(glob.glob(os.path.join(REPO, "awx", "surveys", "*.json"))):
        with open(path) as handle:
            survey = json.load(handle)
        name = os.path.basename(path)
        for question in survey["spec"]:
            answers = []
            if question["type"] == "integer":
                answers += [int(question[b]) for b in ("min", "max") if question.get(b) not in (None, "")]
            if question["type"] == "float" and question.get("max") not in (None, ""):
                # AWX passes a number on as it was given: a float question answered 1 gives the role the int 1
                # (the lower bound, 0 for a fraction, is the one below)
                answers.append(int(question["max"]))
            if question["type"] == "multiplechoice":
                answers += awx.choice_list(question)
            if question["type"] == "multiselect":
                answers += [[choice] for choice in awx.choice_list(question)]
            present, default = awx.form_answer(question)
            answers += [default] if present else []
            out += [(name, question["variable"], answer) for answer in answers]
    return out


@pytest.mark.parametrize("survey", sorted(set(survey for survey, _variable, _answer in _survey_answers())))
def test_surveys_offer_only_answers_the_validator_takes(survey):
    answers = [(variable, answer) for name, variable, answer in _survey_answers() if name == survey]
    assert answers
    assert [variable for variable, _answer in answers if variable not in ALL] == [], "variables no role has"
    assert [(variable, answer, check(variable, answer)) for variable, answer in answers
            if check(variable, answer) is not None] == []


def test_a_fraction_at_the_integer_bound_awx_forces_is_refused_clearly():
    assert check("commcheck_min_fraction", 0.0) == "commcheck_min_fraction: 0.0 must be above 0 (at most 1)"
    # AWX passes the answer 0 on as the int 0
    assert check("commcheck_min_fraction", 0) == "commcheck_min_fraction: 0.0 must be above 0 (at most 1)"


# ---------------------------------------------------------------- 7. one grammar for a label selector

@pytest.mark.parametrize("value", ["../../etc/x", "a,--b", " -x", "a=b=c", "/etc/cron.d/x", "a in b", "=x",
                                   "a b", "(a)", "k=" + "v" * 64, "a" * 2000], ids=repr)
def test_node_selector_is_refused_before_kubectl_reads_it(value):
    assert_refused("commcheck_k8s_node_selector", value, "label selector")


@pytest.mark.parametrize("value", ["nvidia.com/gpu.present=true", "a=b,c!=d", "!spot", "zone in (a, b)",
                                   "tier notin (x)", "role==worker", "gpu", ""], ids=repr)
def test_node_selectors_kubectl_reads_keep_passing(value):
    assert check("commcheck_k8s_node_selector", value) is None
