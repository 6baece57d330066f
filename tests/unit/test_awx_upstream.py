# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The AWX surveys judged by AWX's own code (tests/tools/awx_upstream.py runs a verbatim excerpt of it).

- the excerpt is whole, and verbatim when AWX_SOURCE names an AWX checkout;
- tests/tools/awx_survey_check.py never takes a survey or an answer that AWX's
  code refuses (it may be stricter, where its docstring says so);
- every survey of awx/: AWX stores it unchanged; a launch from the form that
  keeps every default starts, and what reaches the playbook -- computed by
  AWX's ``_update_unified_job_kwargs``, typed as AWX passes it -- passes the
  roles' option validator as one run; a launch through the API that answers
  nothing is refused, naming every required question; the API launch example
  of awx/README.md starts and passes the validator; a schedule or workflow
  node without answers runs the roles' defaults, which are the survey's.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import copy
import glob
import json
import os
import random
import re
import sys

import pytest
import yaml

from ansible_collections.clusterops.commcheck.plugins.plugin_utils import role_options as ro

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOLS = os.path.join(REPO, "tests", "tools")
if TOOLS not in sys.path:
    sys.path.insert(0, TOOLS)

import awx_upstream as upstream  # noqa: E402  pylint: disable=wrong-import-position
import awx_survey_check as awx  # noqa: E402  pylint: disable=wrong-import-position
from test_role_options import SPECS  # noqa: E402  pylint: disable=wrong-import-position

SURVEYS = sorted(glob.glob(os.path.join(REPO, "awx", "surveys", "*.json")))
SURVEY_IDS = [os.path.basename(p) for p in SURVEYS]
# the roles each job template's playbook runs, in the order the one-click role checks them
ROLES_OF = {
    "commcheck.json": ro.ONECLICK_ROLES,
    "k8s_commcheck.json": ro.ONECLICK_ROLES + ("k8s_pods",),
    "discover.json": ("discover",),
    "rdma.json": ("rdma_perf",),
    "tcp.json": ("tcp_perf",),
    "nccl.json": ("collective",),
    "hccl.json": ("collective",),
}
# what a launch answers where a survey has no default (the test image of the Kubernetes survey)
NO_DEFAULT = {"k8s_commcheck.json": {"commcheck_k8s_image": "registry.example.com/commcheck-tools:1.0.0"}}
# an answer of the kind each text question's description asks for (every text question has one here)
TEXT_ANSWERS = {
    "commcheck_devices": ["mlx5_0,mlx5_1", "mlx5_0:1, mlx5_1:1"],
    "commcheck_report_dir": ["/var/lib/commcheck/reports", "reports"],
    "commcheck_subnet": ["10.10.0.0/16"],
    "commcheck_k8s_namespace": ["gpu-check"],
    "commcheck_k8s_image": ["registry.example.com/commcheck-tools:1.0.0"],
    "commcheck_k8s_nodes": ["gpu-node-1,gpu-node-2", "gpu-node-1, gpu-node-2"],
    "commcheck_k8s_node_selector": ["nvidia.com/gpu.present=true"],
}


def _survey(path):
    with open(path) as handle:
        return json.load(handle)


def _validator_problems(name, extra_vars):
    """The roles' option validator on one run's variables (every other variable at its role default)."""
    spec = ro.merge_specs(SPECS, ROLES_OF[name])
    values = dict(extra_vars)
    if name == "hccl.json":
        values["commcheck_collective_library"] = "hccl"      # playbooks/hccl.yml sets it
    return ro.check_values(spec, values, known_hosts=("n1", "n2", "n3"))


# ---------------------------------------------------------------- the excerpt

def test_the_excerpt_holds_every_piece():
    commit, pieces = upstream.read_excerpt()
    assert re.match(r"^[0-9a-f]{40}$", commit) and commit == upstream.AWX_COMMIT
    assert [(path, name) for path, name, _body in pieces] == [
        (path, name) for path, names in upstream.PIECES for name in names]
    for _path, _name, body in pieces:
        assert body.strip() and body.endswith("\n")
    assert set(upstream.SURVEY_TYPE_MAPPING) == set(awx.SURVEY_TYPES)


@pytest.mark.skipif(not os.environ.get("AWX_SOURCE"), reason="AWX_SOURCE names no AWX checkout")
def test_the_excerpt_is_verbatim():
    with open(upstream.EXCERPT) as handle:
        assert handle.read() == upstream.extract(os.environ["AWX_SOURCE"], upstream.AWX_COMMIT)


def test_awx_code_runs_here():
    """AWX's messages, from AWX's code (these are the strings of its source)."""
    question = {"question_name": "f", "variable": "f", "type": "float", "required": True, "default": 0.9,
                "min": 0.05, "max": 1}
    error, _stored = upstream.save_survey({"name": "s", "description": "", "spec": [question]})
    assert error == "The min limit in survey question 0 expected to be integer."
    question["min"] = 0
    assert upstream.save_survey({"name": "s", "description": "", "spec": [question]})[0] is None
    assert upstream.answer_errors(question, {"f": "0.5"}) == ["Value 0.5 for 'f' expected to be a numeric type."]
    assert upstream.answer_errors(question, {}) == ["'f' value missing"]


# ---------------------------------------------------------------- the checker against AWX's code

VALUES = [None, "", "a", "ring", "mesh\nring", "ring\n", "x\n\nring", "ri", 0, 1, -1, 5, 600, 700, 0.5, 1.0, 1.5,
          True, False, [], ["ring"], ["mesh", "ring"], {"a": 1}, "$encrypted$", "$encrypted$x", "5", "0.9"]
CHOICES = [["mesh", "ring"], "mesh\nring", "mesh\n\nring\n", "ring", ["ring"], "", []]
TYPES = ["text", "textarea", "password", "integer", "float", "multiplechoice", "multiselect"]


def _question_corpus():
    """Survey questions, valid and not, that AWX's code and the checker both judge (seeded: the same each run)."""
    rng = random.Random(20241023)
    corpus = []
    for _question in range(4000):
        question = {"question_name": "q", "variable": "v", "type": rng.choice(TYPES + ["checkbox"]),
                    "required": rng.random() < 0.7}
        for key in ("default", "min", "max", "choices"):
            if rng.random() < 0.6:
                question[key] = rng.choice(CHOICES if key == "choices" and rng.random() < 0.7 else VALUES)
        if rng.random() < 0.05:
            question[rng.choice(["required", "variable", "question_name", "type"])] = rng.choice(VALUES)
        corpus.append(question)
    return corpus


CORPUS = _question_corpus()


def test_the_checker_never_takes_a_survey_awx_refuses():
    disagree = []
    for question in CORPUS:
        survey = {"name": "n", "description": "d", "spec": [question]}
        error, _stored = upstream.save_survey(survey)
        if error and not awx.spec_problems(copy.deepcopy(survey)):
            disagree.append((question, error))
    assert not disagree, disagree[:5]


def test_the_checker_judges_answers_as_awx_does():
    """On every question both take, an answer is refused by the checker exactly when AWX's code refuses it."""
    disagree, judged = [], 0
    for question in CORPUS:
        survey = {"name": "n", "description": "d", "spec": [question]}
        if awx.spec_problems(copy.deepcopy(survey)):
            continue
        stored = awx.stored(survey)["spec"][0]
        for answers in [{}] + [{"v": value} for value in VALUES + ["x" * 700]]:
            judged += 1
            real = upstream.answer_errors(stored, answers)
            ours = awx.answer_problems(stored, answers)
            if bool(real) != bool(ours):
                disagree.append((stored, answers, real, ours))
    assert judged > 3000
    assert not disagree, disagree[:5]


# ---------------------------------------------------------------- our surveys

@pytest.mark.parametrize("path", SURVEYS, ids=SURVEY_IDS)
def test_awx_stores_the_survey_unchanged(path):
    survey = _survey(path)
    error, stored = upstream.save_survey(survey)
    assert error is None
    assert stored == survey, "AWX would store (and show) another survey than the file"
    assert awx.survey_problems(survey) == []


@pytest.mark.parametrize("path", SURVEYS, ids=SURVEY_IDS)
def test_a_form_launch_with_the_defaults_starts_and_the_roles_take_it(path):
    name = os.path.basename(path)
    survey = _survey(path)
    answers = dict(upstream.form_answers(survey), **NO_DEFAULT.get(name, {}))
    errors, extra_vars = upstream.launch(survey, answers)
    assert errors == {}
    # every question reaches the playbook, typed as AWX passes it
    assert sorted(extra_vars) == sorted(q["variable"] for q in survey["spec"]
                                        if q.get("default") not in ("", None) or q["type"] == "text"
                                        or q["variable"] in answers)
    for question in survey["spec"]:
        if question["type"] == "multiselect":
            assert isinstance(extra_vars[question["variable"]], list)
    assert _validator_problems(name, extra_vars) == []


@pytest.mark.parametrize("path", SURVEYS, ids=SURVEY_IDS)
def test_an_api_launch_must_answer_every_required_question(path):
    survey = _survey(path)
    required = [q["variable"] for q in survey["spec"] if q["required"]]
    assert upstream.required_variables(survey) == required
    errors, extra_vars = upstream.launch(survey, {})
    assert extra_vars is None
    assert errors == {"variables_needed_to_start": ["'%s' value missing" % v for v in required]}


@pytest.mark.parametrize("path", SURVEYS, ids=SURVEY_IDS)
def test_every_answer_awx_takes_the_roles_take(path):
    """Each choice, bound, default and typical text AWX lets through, one question at a time, in the run of the
    defaults."""
    name = os.path.basename(path)
    survey = _survey(path)
    base = dict(upstream.form_answers(survey), **NO_DEFAULT.get(name, {}))
    refused = []
    for question in survey["spec"]:
        variable, candidates = question["variable"], []
        if question["type"] in ("integer", "float"):
            candidates += [question["min"], question["max"], question["default"]]
            if question["type"] == "float":
                candidates += [float(question["max"]), (question["min"] + question["max"]) / 2.0]
        elif question["type"] == "multiplechoice":
            candidates += question["choices"]
        elif question["type"] == "multiselect":
            candidates += [[choice] for choice in question["choices"]]
        elif question["type"] in ("text", "textarea"):
            assert variable in TEXT_ANSWERS, "give %s typical answers in TEXT_ANSWERS" % variable
            candidates += TEXT_ANSWERS[variable]
        for candidate in candidates:
            errors, extra_vars = upstream.launch(survey, dict(base, **{variable: candidate}))
            if errors:
                continue        # AWX refuses it: no role sees it
            problems = _validator_problems(name, extra_vars)
            if problems:
                refused.append((variable, candidate, problems))
    # the one answer the roles refuse on purpose: a fraction of 0 (AWX's integer bound), with a message saying why
    unexpected = [(v, c, p) for v, c, p in refused
                  if not (v.endswith("min_fraction") and c == 0 and p == ["%s: 0.0 must be above 0 (at most 1)" % v])]
    assert unexpected == []
    if any(q["variable"].endswith("min_fraction") for q in survey["spec"]):
        assert refused, "the fraction bound 0 must be among the answers tried"


def test_an_int_answer_to_a_float_question_reaches_the_roles_as_an_int():
    survey = _survey(os.path.join(REPO, "awx", "surveys", "commcheck.json"))
    answers = dict(upstream.form_answers(survey), commcheck_min_fraction=1, commcheck_regression_threshold=0)
    errors, extra_vars = upstream.launch(survey, answers)
    assert errors == {}
    assert type(extra_vars["commcheck_min_fraction"]) is int  # pylint: disable=unidiomatic-typecheck
    assert _validator_problems("commcheck.json", extra_vars) == []


def _readme_launch_example():
    with open(os.path.join(REPO, "awx", "README.md")) as handle:
        text = handle.read()
    section = text.split("## 4. Launching without the form", 1)[1].split("\n## ", 1)[0]
    [block] = re.findall(r"```yaml\n(.*?)```", section, re.S)
    [task] = yaml.safe_load(block)
    return task["awx.awx.job_launch"]


def test_the_readme_api_launch_starts_and_the_roles_take_it():
    launch = _readme_launch_example()
    with open(os.path.join(REPO, "awx", "job_templates.yml")) as handle:
        templates = yaml.safe_load(handle)["commcheck_awx_job_templates"]
    [template] = [t for t in templates if t["name"] == launch["job_template"]]
    survey = _survey(os.path.join(REPO, "awx", template["survey"]))
    # the module sends extra_vars as given; AWX checks them against the survey
    errors, extra_vars = upstream.launch(survey, launch["extra_vars"], template["ask_variables_on_launch"])
    assert errors == {}
    assert _validator_problems(os.path.basename(template["survey"]), extra_vars) == []
    # it answers exactly the required questions, with the survey's defaults
    required = [q for q in survey["spec"] if q["required"]]
    assert sorted(launch["extra_vars"]) == sorted(q["variable"] for q in required)
    assert dict((v, launch["extra_vars"][v]) for v in launch["extra_vars"]) == dict(
        (q["variable"], upstream.form_answer(q)[1]) for q in required)


def test_the_slices_extra_variable_of_the_readme_is_taken():
    """awx/README.md: commcheck_slices as an extra variable beside the survey (ask_variables_on_launch)."""
    survey = _survey(os.path.join(REPO, "awx", "surveys", "commcheck.json"))
    answers = dict(upstream.form_answers(survey), commcheck_slices=4)
    errors, extra_vars = upstream.launch(survey, answers, ask_variables_on_launch=True)
    assert errors == {} and extra_vars["commcheck_slices"] == 4
    assert _validator_problems("commcheck.json", extra_vars) == []
    # without ask_variables_on_launch AWX leaves it out, and the launch starts (rule L7)
    errors, extra_vars = upstream.launch(survey, answers, ask_variables_on_launch=False)
    assert errors == {} and "commcheck_slices" not in extra_vars


@pytest.mark.parametrize("path", SURVEYS, ids=SURVEY_IDS)
def test_a_run_without_answers_runs_the_defaults_of_the_survey(path):
    """A schedule or workflow node saved without answers: AWX passes on only the defaults that pass their own
    check, never a multi-select one; the roles' defaults fill the rest, and they are the survey's."""
    name = os.path.basename(path)
    survey = _survey(path)
    extra_vars = upstream.launch_unprompted(survey)
    spec = ro.merge_specs(SPECS, ROLES_OF[name])
    differ = []
    for question in survey["spec"]:
        variable = question["variable"]
        sent, form_value = upstream.form_answer(question)
        if not sent or variable in extra_vars:
            continue
        role_default = spec[variable].get("default")
        if role_default != form_value:
            differ.append((variable, form_value, role_default))
        # and every role that declares it has that default
        for role in ROLES_OF[name]:
            option = ((SPECS.get(role) or {}).get("main") or {}).get("options", {}).get(variable)
            if option is not None and option.get("default") != form_value:
                differ.append((variable, form_value, role, option.get("default")))
    assert differ == []
    assert all(q["type"] != "multiselect" or q["variable"] not in extra_vars for q in survey["spec"])
