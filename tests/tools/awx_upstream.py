# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""AWX's own survey code, run here: what AWX stores, refuses and passes on.

``awx_upstream_survey.txt`` (beside this file) is a verbatim excerpt of AWX
(https://github.com/ansible/awx, Apache License 2.0): the functions that
check a survey spec when it is saved and the answers when a job is launched,
and the one that adds a question's default to the job's extra variables.
This module runs them, with stand-ins for the Django pieces they touch
(``Response``, ``status``, ``gettext``, the encryption helpers), so the
surveys of ``awx/`` are judged by AWX's code itself, not by a re-statement:

``save_survey(spec)``
    ``POST /api/v2/job_templates/N/survey_spec/`` (what ``awx.awx.job_template``
    ``survey_spec`` does): ``JobTemplateSurveySpec._validate_spec_data``.
    Returns (error or None, the spec as AWX stores it).
``answer_errors(question, answers)``
    ``SurveyJobTemplateMixin._survey_element_validation``: one question's answer.
``launch(spec, extra_vars)``
    ``POST /api/v2/job_templates/N/launch/`` (the UI's launch button,
    ``awx.awx.job_launch``, ``awx job_templates launch``):
    ``UnifiedJobTemplate.accept_or_ignore_variables`` ->
    ``SurveyJobTemplateMixin._accept_or_ignore_variables`` (any error refuses
    the launch, ``JobLaunchSerializer.validate``), then
    ``_update_unified_job_kwargs``: template variables, then each question's
    default when it passes the question's own validation, then the answers.
    Returns (errors, the job's extra variables or None when refused).
``launch_unprompted(spec)``
    A schedule or workflow node saved without answers: the job gets only what
    ``_update_unified_job_kwargs`` adds (no answer validation runs).

What the two launch forms send when the user keeps every default
(``form_answers``) is JavaScript, so it is re-stated here, from AWX's old UI
(awx/ui/src/components/LaunchPrompt/steps/useSurveyStep.js getInitialValues,
awx/ui/src/util/prompt/getSurveyValues.js, ansible/awx 78f345c486^) and
the current one (ansible/ansible-ui frontend/awx/common/SurveyStep.tsx,
7d6cb1bfd9b6): a multi-select default is split on newlines into a list, a
default of "" is not sent at all, every other default is sent as stored (an
integer-valued float default stays an int).

Refresh the excerpt from an AWX checkout (and check it is still verbatim)::

    python tests/tools/awx_upstream.py --refresh AWX_CHECKOUT COMMIT
    python tests/tools/awx_upstream.py --check AWX_CHECKOUT
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import ast
import copy
import json
import os
import re
import sys

import yaml

EXCERPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "awx_upstream_survey.txt")
# (file in AWX, names in it): a top-level name, or Class.method
PIECES = (
    ("awx/main/constants.py", ("SURVEY_TYPE_MAPPING",)),
    ("awx/main/utils/common.py", ("validate_vars_type", "parse_yaml_or_json")),
    ("awx/main/models/unified_jobs.py", ("UnifiedJobTemplate.accept_or_ignore_variables",)),
    ("awx/main/models/mixins.py", ("SurveyJobTemplateMixin.variables_needed_to_start",
                                   "SurveyJobTemplateMixin._update_unified_job_kwargs",
                                   "SurveyJobTemplateMixin._survey_element_validation",
                                   "SurveyJobTemplateMixin._accept_or_ignore_variables",
                                   "SurveyJobTemplateMixin.pivot_spec")),
    ("awx/api/views/__init__.py", ("JobTemplateSurveySpec._validate_spec_data",)),
)
MARK = "# ==== "
HEADER = """\
# Verbatim excerpt of AWX, https://github.com/ansible/awx, commit {commit}.
# Copyright (c) 2015 Ansible, Inc. Licensed under the Apache License, Version 2.0
# (https://www.apache.org/licenses/LICENSE-2.0); unchanged except that only the
# pieces named on the "{mark}<file> <name>" lines are kept, with their own indentation.
# Written by `python tests/tools/awx_upstream.py --refresh AWX_CHECKOUT COMMIT`; do not edit.
# tests/tools/awx_upstream.py runs it (this is data to this collection, not a plugin).
"""
_ENCRYPTED = "$encrypted$UTF8$AESCBC$"


# ---------------------------------------------------------------- the excerpt

def _node_lines(source, node):
    first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
    return source.splitlines()[first - 1:node.end_lineno]


def _find(tree, name):
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name == name:
            return node
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == name for t in node.targets):
            return node
    raise KeyError(name)


def extract(awx_root, commit):
    """The excerpt's text, taken from an AWX checkout."""
    out = [HEADER.format(commit=commit, mark=MARK)]
    for path, names in PIECES:
        with open(os.path.join(awx_root, path)) as handle:
            source = handle.read()
        tree = ast.parse(source)
        for name in names:
            if "." in name:
                cls, method = name.split(".")
                node = _find(_find(tree, cls), method)
            else:
                node = _find(tree, name)
            out.append("%s%s %s\n" % (MARK, path, name))
            out.append("\n".join(_node_lines(source, node)) + "\n")
    return "".join(out)


def read_excerpt(path=EXCERPT):
    """(commit, [(file, name, source)]) of the excerpt."""
    with open(path) as handle:
        text = handle.read()
    commit = re.search(r"commit ([0-9a-f]{40})", text).group(1)
    pieces = []
    for chunk in text.split("\n" + MARK)[1:]:
        head, _sep, body = chunk.partition("\n")
        path, name = head.split(" ")
        pieces.append((path, name, body.rstrip("\n") + "\n"))
    return commit, pieces


# ---------------------------------------------------------------- stand-ins for Django and AWX's helpers

class Response(dict):
    """rest_framework's Response: the error dict and the status."""

    def __init__(self, data=None, status=None):
        dict.__init__(self, data or {})
        self.status_code = status


class ParseError(Exception):
    """rest_framework.exceptions.ParseError."""


def _gettext(text):
    return text


def _encrypt_value(value, pk=None):
    return _ENCRYPTED + value


def _decrypt_value(_key, value):
    return value[len(_ENCRYPTED):] if value.startswith(_ENCRYPTED) else value


def decrypt(value):
    """A value save_survey encrypted (a password default), in clear."""
    return _decrypt_value(None, value)


def _load():
    commit, pieces = read_excerpt()
    env = {
        "__name__": "awx_upstream_excerpt", "copy": copy.copy, "deepcopy": copy.deepcopy, "json": json,
        "yaml": yaml, "_": _gettext, "Response": Response, "ParseError": ParseError,
        "status": type("status", (), {"HTTP_400_BAD_REQUEST": 400}),
        "encrypt_value": _encrypt_value, "decrypt_value": _decrypt_value,
        "get_encryption_key": lambda *args, **kwargs: None,
        "is_encrypted": lambda value: isinstance(value, str) and value.startswith(_ENCRYPTED),
    }
    classes = {}
    for path, name, body in pieces:
        if "." in name:
            classes.setdefault(name.split(".")[0], []).append(body)
        else:
            exec(compile(body, "%s (AWX %s)" % (path, commit[:12]), "exec"), env)  # pylint: disable=exec-used
    for cls, bodies in classes.items():
        source = "class %s(object):\n%s" % (cls, "".join(bodies))
        exec(compile(source, "%s (AWX %s)" % (cls, commit[:12]), "exec"), env)  # pylint: disable=exec-used
    # the views reach the model class through awx.main.models
    env["models"] = type("models", (), {"JobTemplate": env["SurveyJobTemplateMixin"]})
    return commit, env


AWX_COMMIT, _AWX = _load()
SURVEY_TYPE_MAPPING = _AWX["SURVEY_TYPE_MAPPING"]


class JobTemplate(_AWX["UnifiedJobTemplate"], _AWX["SurveyJobTemplateMixin"]):
    """The fields of a job template that AWX's survey code reads."""

    class _meta:  # pylint: disable=invalid-name,too-few-public-methods
        verbose_name = "job template"

    def __init__(self, survey_spec, ask_variables_on_launch=True, extra_vars=None, survey_enabled=True):
        self.survey_spec = survey_spec
        self.survey_enabled = survey_enabled
        self.ask_variables_on_launch = ask_variables_on_launch
        self.extra_vars = extra_vars or {}

    @property
    def extra_vars_dict(self):
        return copy.deepcopy(self.extra_vars)


# ---------------------------------------------------------------- what AWX does

def save_survey(spec, old_spec=None):
    """(AWX's error or None, the spec as AWX stores it): POST survey_spec."""
    stored = copy.deepcopy(spec)
    try:
        response = _AWX["JobTemplateSurveySpec"]._validate_spec_data(stored, copy.deepcopy(old_spec or {}))
    except Exception as exc:  # pylint: disable=broad-except
        return "AWX fails on it (HTTP 500): %s: %s" % (type(exc).__name__, exc), stored
    return (response.get("error") or json.dumps(dict(response))) if response else None, stored


def answer_errors(question, answers, validate_required=True):
    """AWX's errors for one question's answer (answers: {variable: value}); [] when it takes it."""
    return _AWX["SurveyJobTemplateMixin"]._survey_element_validation(
        None, question, answers, validate_required=validate_required)


def launch(spec, extra_vars=None, ask_variables_on_launch=True, template_extra_vars=None):
    """(errors, the job's extra variables or None): POST launch with these extra_vars (dict, JSON or YAML)."""
    template = JobTemplate(spec, ask_variables_on_launch, template_extra_vars)
    try:
        accepted, _rejected, errors = template.accept_or_ignore_variables(
            {} if extra_vars is None else extra_vars, _exclude_errors=["prompts"])
    except ParseError as exc:
        return {"extra_vars": [str(exc)]}, None
    if errors:
        return errors, None
    kwargs = {"extra_vars": accepted} if accepted else {}
    return {}, json.loads(template._update_unified_job_kwargs({}, kwargs)["extra_vars"])


def launch_unprompted(spec, template_extra_vars=None):
    """The extra variables of a job a schedule or workflow node starts without answers."""
    template = JobTemplate(spec, True, template_extra_vars)
    return json.loads(template._update_unified_job_kwargs({}, {})["extra_vars"])


def required_variables(spec):
    """AWX's variables_needed_to_start: what every launch through the API must answer."""
    return JobTemplate(spec).variables_needed_to_start


# ---------------------------------------------------------------- what the launch forms send

def form_answer(question):
    """(True, what AWX's launch forms send for the question's default) or (False, None): nothing sent."""
    default = question.get("default")
    if default is None or default == "":
        return False, None
    if question["type"] == "password":     # AWX shows the forms a saved password as $encrypted$ only
        return True, "$encrypted$"
    if question["type"] == "multiselect":
        return True, default.split("\n")
    return True, default


def form_answers(spec):
    """The extra variables a launch form sends when the user keeps every default."""
    answers = {}
    for question in spec["spec"]:
        sent, value = form_answer(question)
        if sent:
            answers[question["variable"]] = value
    return answers


def main(argv):
    if len(argv) >= 2 and argv[0] == "--refresh":
        commit = argv[2] if len(argv) > 2 else AWX_COMMIT
        with open(EXCERPT, "w") as handle:
            handle.write(extract(argv[1], commit))
        return 0
    if len(argv) == 2 and argv[0] == "--check":
        with open(EXCERPT) as handle:
            same = handle.read() == extract(argv[1], AWX_COMMIT)
        print("%s is %s" % (EXCERPT, "verbatim" if same else "NOT what %s holds" % argv[1]))
        return 0 if same else 1
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
