# -*- coding: utf-8 -*-
"""AWX survey specs and job templates: AWX's format, and every variable accepted by the roles."""
import glob
import json
import os
import re

import pytest
import yaml

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
AWX = os.path.join(REPO, "awx")
SURVEYS = sorted(glob.glob(os.path.join(AWX, "surveys", "*.json")))
TYPES = ("text", "textarea", "password", "integer", "float", "multiplechoice", "multiselect")
# what a survey answer of each type may feed, by argument-spec type
COMPATIBLE = {
    "text": ("str", "path", "raw", "list", "float", "int"),
    "textarea": ("str", "raw", "list"),
    "password": ("str", "raw"),
    "integer": ("int", "float", "raw"),
    "float": ("float", "raw"),
    "multiplechoice": ("str", "raw"),
    "multiselect": ("list", "raw"),
}
EXPECTED_PLAYBOOKS = ["commcheck.yml", "discover.yml", "rdma.yml", "tcp.yml", "nccl.yml", "hccl.yml",
                      "k8s_commcheck.yml"]


def _load_specs():
    """{role: {variable: spec}} of every roles/*/meta/argument_specs.yml (entry point main)."""
    specs = {}
    for path in sorted(glob.glob(os.path.join(REPO, "roles", "*", "meta", "argument_specs.yml"))):
        role = path.split(os.sep)[-3]
        with open(path) as handle:
            doc = yaml.safe_load(handle) or {}
        specs[role] = ((doc.get("argument_specs") or {}).get("main") or {}).get("options") or {}
    return specs


SPECS = _load_specs()


def _survey(path):
    with open(path) as handle:
        return json.load(handle)


def _answer(question):
    """The extra variable AWX passes for the question's default."""
    default = question.get("default")
    if question["type"] == "multiselect":
        if isinstance(default, list):
            return default
        return [line for line in (default or "").split("\n") if line]
    if question["type"] == "integer":
        return int(default)
    if question["type"] == "float":
        return float(default)
    return default


def _choices(question):
    choices = question.get("choices")
    if isinstance(choices, str):
        choices = [c for c in choices.split("\n") if c]
    return choices


def _roles_of_playbook(playbook):
    """(roles the playbook names itself, all roles it runs including those the roles include)."""
    found, todo = set(), []

    def scan(node):
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "roles" and isinstance(value, list):
                    for entry in value:
                        name = entry.get("role") or entry.get("name") if isinstance(entry, dict) else entry
                        todo.append(str(name))
                elif key in ("include_role", "import_role", "ansible.builtin.include_role",
                             "ansible.builtin.import_role") and isinstance(value, dict):
                    todo.append(str(value.get("name")))
                else:
                    scan(value)
        elif isinstance(node, list):
            for item in node:
                scan(item)

    with open(playbook) as handle:
        scan(yaml.safe_load(handle))
    direct = set(name.split(".")[-1] for name in todo if "{{" not in name)
    while todo:
        role = todo.pop().split(".")[-1]
        if role in found or "{{" in role:
            continue
        found.add(role)
        for tasks in glob.glob(os.path.join(REPO, "roles", role, "tasks", "*.yml")):
            with open(tasks) as handle:
                scan(yaml.safe_load(handle))
    return direct, found


def test_there_is_a_survey_per_playbook():
    names = sorted(os.path.basename(p)[:-5] + ".yml" for p in SURVEYS)
    assert names == sorted(EXPECTED_PLAYBOOKS)


@pytest.mark.parametrize("path", SURVEYS, ids=[os.path.basename(p) for p in SURVEYS])
def test_survey_is_in_awx_format(path):
    survey = _survey(path)
    assert set(survey) == {"name", "description", "spec"}
    assert survey["name"] and isinstance(survey["spec"], list) and survey["spec"]
    variables = [q["variable"] for q in survey["spec"]]
    assert len(variables) == len(set(variables)), "duplicate variables"
    for question in survey["spec"]:
        assert {"question_name", "variable", "type", "required", "default"} <= set(question), question
        assert question["type"] in TYPES
        assert re.match(r"^[a-zA-Z_][a-zA-Z0-9_]*$", question["variable"])
        assert isinstance(question["required"], bool)
        if question["type"] in ("multiplechoice", "multiselect"):
            choices = _choices(question)
            assert choices and len(choices) == len(set(choices))
            answer = _answer(question)
            for value in (answer if isinstance(answer, list) else [answer]):
                assert value in choices, (question["variable"], value)
        if question["type"] in ("integer", "float") and question["default"] not in ("", None):
            value = _answer(question)
            assert question["min"] <= value <= question["max"], question["variable"]
        if question["type"] in ("text", "textarea", "password") and question["default"]:
            assert question.get("min", 0) <= len(question["default"]) <= question.get("max", 1024)
        if question["required"] and question["type"] not in ("text", "textarea", "password"):
            assert question["default"] not in ("", None), "%s: required without default" % question["variable"]


@pytest.mark.parametrize("path", SURVEYS, ids=[os.path.basename(p) for p in SURVEYS])
def test_every_survey_variable_is_accepted_by_the_roles_and_defaults_validate(path):
    survey = _survey(path)
    playbook = os.path.join(REPO, "playbooks", os.path.basename(path)[:-5] + ".yml")
    if os.path.exists(playbook):
        direct, every = _roles_of_playbook(playbook)
        direct = sorted(r for r in direct if r in SPECS)
        roles = sorted(r for r in every if r in SPECS)
        scope = "the roles of %s (%s)" % (os.path.basename(playbook), ", ".join(roles) or "none with a spec")
    else:
        direct, roles = [], sorted(SPECS)
        scope = "any role (playbook %s does not exist yet)" % os.path.basename(playbook)
    problems = []
    for question in survey["spec"]:
        variable = question["variable"]
        # the role the playbook runs takes the answer first (it may translate it for the roles it includes)
        owners = [r for r in direct if variable in SPECS[r]] or [r for r in roles if variable in SPECS[r]]
        if not owners:
            problems.append("%s: not in the argument specs of %s" % (variable, scope))
            continue
        for role in owners:
            spec = dict(SPECS[role][variable])
            spec.pop("description", None)
            spec.pop("version_added", None)
            if spec.get("type", "str") not in COMPATIBLE[question["type"]]:
                problems.append("%s: survey type %s cannot feed %s's type %s"
                                % (variable, question["type"], role, spec.get("type", "str")))
            if question["type"] in ("multiplechoice", "multiselect") and spec.get("choices"):
                extra = set(_choices(question)) - set(str(c) for c in spec["choices"])
                if extra:
                    problems.append("%s: survey choices %s are not in %s's choices" % (variable, sorted(extra), role))
            if question.get("default") in ("", None):
                continue
            result = ArgumentSpecValidator({variable: spec}).validate({variable: _answer(question)})
            if result.error_messages:
                problems.append("%s: default %r rejected by %s: %s" % (
                    variable, question["default"], role, "; ".join(result.error_messages)))
    assert not problems, "\n".join(problems)


def test_job_templates():
    with open(os.path.join(AWX, "job_templates.yml")) as handle:
        doc = yaml.safe_load(handle)
    templates = doc["commcheck_awx_job_templates"]
    assert sorted(os.path.basename(t["playbook"]) for t in templates) == sorted(EXPECTED_PLAYBOOKS)
    assert len(set(t["name"] for t in templates)) == len(templates)
    missing = []
    for template in templates:
        assert set(template) >= {"name", "description", "playbook", "survey", "job_type", "timeout"}
        assert template["job_type"] in ("run", "check")
        assert os.path.exists(os.path.join(AWX, template["survey"])), template["survey"]
        assert os.path.basename(template["survey"])[:-5] == os.path.basename(template["playbook"])[:-4]
        if not os.path.exists(os.path.join(REPO, template["playbook"])):
            missing.append(template["playbook"])
    assert not missing, "job templates name playbooks that do not exist: %s" % ", ".join(missing)


def test_survey_validation_catches_bad_input():
    """The check itself can fail: a wrong type, an unknown choice and an unknown variable are found."""
    spec = {"type": "int"}
    assert ArgumentSpecValidator({"x": spec}).validate({"x": "many"}).error_messages
    spec = {"type": "list", "elements": "str", "choices": ["write", "read"]}
    assert ArgumentSpecValidator({"x": spec}).validate({"x": ["write", "bogus"]}).error_messages
    assert not ArgumentSpecValidator({"x": spec}).validate({"x": "write,read"}).error_messages


def test_execution_environment_definition():
    """ansible-builder v3 layout; the files it names exist; bindep has the test tools."""
    with open(os.path.join(REPO, "execution-environment.yml")) as handle:
        ee = yaml.safe_load(handle)
    assert ee["version"] == 3
    assert ee["images"]["base_image"]["name"]
    deps = ee["dependencies"]
    assert "ansible-core" in deps["ansible_core"]["package_pip"]
    assert "ansible-runner" in deps["ansible_runner"]["package_pip"]
    for key in ("python", "system"):
        assert os.path.isfile(os.path.join(REPO, deps[key])), deps[key]
    [collection] = deps["galaxy"]["collections"]
    with open(os.path.join(REPO, "galaxy.yml")) as handle:
        galaxy = yaml.safe_load(handle)
    tarball = "%s-%s-%s.tar.gz" % (galaxy["namespace"], galaxy["name"], galaxy["version"])
    assert collection["name"].endswith(tarball) and collection["type"] == "file"
    assert any(f["src"].endswith(tarball) for f in ee["additional_build_files"])
    with open(os.path.join(REPO, "requirements.txt")) as handle:
        python = [line.split("#")[0].strip() for line in handle if line.split("#")[0].strip()]
    assert "jmespath" in python
    with open(os.path.join(REPO, "bindep.txt")) as handle:
        lines = [line.split("#")[0].strip() for line in handle if line.split("#")[0].strip()]
    names = set()
    for line in lines:
        match = re.match(r"^([A-Za-z0-9][A-Za-z0-9+._-]*)(?:\s+\[([a-z0-9:!_ -]+)\])?$", line)
        assert match, "not a bindep line: %r" % line
        names.add(match.group(1))
    for tool in ("perftest", "openmpi-bin", "openmpi", "iperf3"):
        assert tool in names, tool
