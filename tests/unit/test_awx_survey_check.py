# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""tests/tools/awx_survey_check.py refuses what AWX refuses, and takes what AWX takes.

The rules (S1-S9 when a spec is saved, L1-L7 at launch) are written down,
with the AWX source functions they come from, in the checker's docstring.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import copy
import json
import os
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOLS = os.path.join(REPO, "tests", "tools")
if TOOLS not in sys.path:
    sys.path.insert(0, TOOLS)

import awx_survey_check as awx  # noqa: E402  pylint: disable=wrong-import-position

GOOD = {
    "name": "s",
    "description": "",
    "spec": [
        {"question_name": "ops", "variable": "ops", "type": "multiselect", "required": True,
         "choices": ["write", "read"], "default": "write\nread"},
        {"question_name": "pattern", "variable": "pattern", "type": "multiplechoice", "required": True,
         "choices": ["mesh", "ring"], "default": "ring"},
        {"question_name": "n", "variable": "n", "type": "integer", "required": True, "default": 5, "min": 1,
         "max": 600},
        {"question_name": "f", "variable": "f", "type": "float", "required": True, "default": 0.9, "min": 0, "max": 1},
        {"question_name": "g", "variable": "g", "type": "float", "required": False, "default": "", "min": 1,
         "max": 3200},
        {"question_name": "dir", "variable": "dir", "type": "text", "required": True, "default": "/var/x", "min": 1,
         "max": 64},
        {"question_name": "devs", "variable": "devs", "type": "text", "required": False, "default": "", "min": 0,
         "max": 64},
        {"question_name": "image", "variable": "image", "type": "text", "required": True, "default": "", "min": 1,
         "max": 64},
        {"question_name": "pw", "variable": "pw", "type": "password", "required": False, "default": "secret"},
    ],
}


def changed(idx, **kw):
    """GOOD with question idx changed (a value None deletes the key)."""
    survey = copy.deepcopy(GOOD)
    for key, value in kw.items():
        if value is None:
            survey["spec"][idx].pop(key, None)
        else:
            survey["spec"][idx][key] = value
    return survey


def test_a_good_survey_is_taken():
    assert awx.spec_problems(GOOD) == []
    assert awx.default_problems(GOOD) == []
    assert awx.project_problems(GOOD) == []


@pytest.mark.parametrize("survey, expected", [
    # S6: min/max must be integers, for float questions too (the defect of 6 of our 7 surveys)
    (changed(3, min=0.05), "min 0.05 must be an integer"),
    (changed(3, max=1.0), "max 1.0 must be an integer"),
    (changed(2, max="600"), "max '600' must be an integer"),
    (changed(5, min=1.5), "min 1.5 must be an integer"),
    # S1
    (dict(GOOD, spec={}), "field 'spec' must be a list"),
    (dict((k, v) for k, v in GOOD.items() if k != "description"), "field 'description' is missing"),
    (dict(GOOD, name=3), "field 'name' must be a string"),
    (dict(GOOD, spec=[]), "'spec' has no questions"),
    # S2
    (changed(0, required="yes"), "'required' must be a boolean"),
    (changed(0, question_name=None), "'question_name' is missing"),
    (changed(0, variable=None), "'variable' is missing"),
    (changed(0, type=None), "'type' is missing"),
    (dict(GOOD, spec=["ops"]), "question 0 is not a JSON object"),
    # S3
    (changed(1, variable="ops"), "variable duplicated"),
    # S4
    (changed(0, type="checkbox"), "type 'checkbox' is not one of"),
    # S5: default type
    (changed(2, default="5"), "default '5' must be an integer"),
    (changed(2, default=5.0), "default 5.0 must be an integer"),
    (changed(3, default="0.9"), "default '0.9' must be a number"),
    (changed(0, default=["write"]), "default ['write'] must be a string (multiselect: one choice per line)"),
    (changed(5, default=7), "default 7 must be a string"),
    # S7, S8
    (changed(0, choices=None), "a multiselect question must have choices"),
    (changed(1, choices={"a": 1}), "choices must be a list or one choice per line"),
    (changed(1, default="mesh\nring"), "a multiplechoice question has one default"),
    (changed(0, default="write\nsend"), "default ['send'] not among the choices"),
    (changed(1, default="star"), "default ['star'] not among the choices"),
    # S9
    (changed(8, default="$encrypted$abc"), "$encrypted$ is reserved"),
    (changed(5, default="$encrypted$"), "$encrypted$ is reserved"),
])
def test_what_awx_refuses_when_saving(survey, expected):
    problems = awx.spec_problems(survey)
    assert any(expected in p for p in problems), problems


@pytest.mark.parametrize("survey, expected", [
    # defaults that pass S1-S9 but that AWX's launch refuses (L2-L4), so it leaves them out
    (changed(2, default=700), "default of n: 700 is above the maximum 600"),
    (changed(2, default=0), "default of n: 0 is below the minimum 1"),
    (changed(3, default=1.5), "default of f: 1.5 is above the maximum 1.0"),
    (changed(5, default="/" + "x" * 70), "is above the maximum 64 characters"),
    (changed(5, default="/", min=2), "is below the minimum 2 characters"),
])
def test_defaults_awx_would_drop_at_launch(survey, expected):
    assert awx.spec_problems(survey) == []
    problems = awx.default_problems(survey)
    assert any(expected in p for p in problems), problems


@pytest.mark.parametrize("question, answer, expected", [
    (GOOD["spec"][0], "write", "must be a list"),                  # L5: a multiselect answer is a list
    (GOOD["spec"][0], ["write", "send"], "'send' is not one of"),
    (GOOD["spec"][1], "star", "'star' is not one of ['mesh', 'ring']"),
    (GOOD["spec"][2], 5.0, "must be an integer"),                 # L3: type() == int
    (GOOD["spec"][2], True, "must be an integer"),
    (GOOD["spec"][2], "5", "must be an integer"),
    (GOOD["spec"][3], "0.9", "must be a number"),                 # L4
    (GOOD["spec"][3], -0.1, "below the minimum 0.0"),
    (GOOD["spec"][5], 5, "must be a string"),                     # L2
    (GOOD["spec"][7], "", "below the minimum 1 characters"),
])
def test_what_awx_refuses_at_launch(question, answer, expected):
    problems = awx.answer_problems(question, {question["variable"]: answer})
    assert any(expected in p for p in problems), problems


def test_a_required_question_needs_an_answer():
    assert awx.answer_problems(GOOD["spec"][7], {}) == ["image: value missing"]
    assert awx.answer_problems(GOOD["spec"][6], {}) == []
    assert awx.answer_problems(GOOD["spec"][2], {"n": 1}) == []
    assert awx.answer_problems(GOOD["spec"][3], {"f": 1}) == []          # an int answers a float question


def test_answers_are_typed_the_way_awx_passes_them():
    answers = awx.awx_answers(GOOD)
    assert answers == {"ops": ["write", "read"], "pattern": "ring", "n": 5, "f": 0.9, "dir": "/var/x", "devs": "",
                       "pw": "secret"}
    # "" of a float question is no answer; "" of a text question with min 1 does not pass L2, so AWX drops it
    assert "g" not in answers and "image" not in answers
    assert awx.unanswered_required(GOOD) == ["image"]
    assert awx.launch_problems(GOOD) == ["'image' value missing"]
    assert awx.launch_problems(GOOD, {"image": "registry/x:1"}) == []
    # AWX passes a number on as it was given: a float question's default 1 reaches the playbook as the int 1
    assert type(awx.awx_answers(changed(3, default=1))["f"]) is int  # pylint: disable=unidiomatic-typecheck


def test_string_choices_are_awx_s_but_not_this_project_s():
    """AWX takes choices as one string of lines; the current AWX UI offers no choice for them."""
    survey = changed(1, choices="mesh\nring\n\n")
    assert awx.spec_problems(survey) == []
    assert awx.stored(survey)["spec"][1]["choices"] == "mesh\nring"
    assert awx.project_problems(survey) == [
        "pattern: choices must be a list: the current AWX UI (ansible-ui) offers no choice for choices given as one "
        "string"]


def test_a_default_of_the_wrong_type_is_reported_not_a_crash():
    """A multi-select default that is not a string: the type problem (S5), not an exception."""
    for default in (5, ["write"], {"a": 1}, True):
        problems = awx.spec_problems(changed(0, default=default))
        assert any("must be a string (multiselect: one choice per line)" in p for p in problems), problems


@pytest.mark.parametrize("variable", ["commcheck_collective_mpirun", "commcheck_collective_binary_dir",
                                      "commcheck_k8s_kubectl_binary", "commcheck_k8s_mpi_kubectl",
                                      "commcheck_environment", "commcheck_quarantine_script", "tool_bin"])
def test_a_question_that_names_a_program_is_refused(variable):
    problems = awx.project_problems(changed(5, variable=variable))
    assert len(problems) == 1 and "must not let its user name a program" in problems[0]


def test_a_question_must_set_a_variable_name():
    assert "not a variable name" in awx.project_problems(changed(5, variable="report-dir"))[0]


def test_command_line(tmp_path):
    good, bad = tmp_path / "good.json", tmp_path / "bad.json"
    good.write_text(json.dumps(GOOD))
    bad.write_text(json.dumps(changed(3, min=0.05)))
    script = os.path.join(TOOLS, "awx_survey_check.py")
    ok = subprocess.run([sys.executable, script, str(good)], stdout=subprocess.PIPE, universal_newlines=True,
                        check=False, timeout=60)
    assert ok.returncode == 0 and ok.stdout == ""
    refused = subprocess.run([sys.executable, script, str(good), str(bad)], stdout=subprocess.PIPE,
                             universal_newlines=True, check=False, timeout=60)
    assert refused.returncode == 1
    assert refused.stdout == "%s: question 3 (f): min 0.05 must be an integer (AWX takes no other limit, also for " \
                             "a float question)\n" % bad
