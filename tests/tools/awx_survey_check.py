# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Check AWX survey specs the way AWX itself checks them (no AWX needed).

    python tests/tools/awx_survey_check.py awx/surveys/*.json

prints every problem and exits 1 when there is one. The rules below were read
from AWX's source (ansible/awx, commit e21dd0a0933f of 2024-10-23); this file
re-states them, it copies no AWX code.

When a survey spec is saved -- ``awx/api/views/__init__.py``,
``JobTemplateSurveySpec._validate_spec_data`` (what the survey_spec endpoint,
and so ``awx.awx.job_template``'s ``survey_spec``, goes through):

S1  ``name`` and ``description`` are present and strings, ``spec`` is present
    and a list, with at least one item.
S2  every item is a JSON object with ``type``, ``question_name`` and
    ``variable`` (strings) and ``required`` (a boolean).
S3  no ``variable`` appears twice.
S4  ``type`` is one of the keys of ``SURVEY_TYPE_MAPPING``
    (``awx/main/constants.py``): text, textarea, password, multiplechoice,
    multiselect, integer, float.
S5  a ``default`` other than "" has the type ``SURVEY_TYPE_MAPPING`` gives:
    a string for text, textarea, password, multiplechoice and multiselect, an
    int for integer, an int or a float for float.
S6  ``min`` and ``max``, when present and not null, are ints -- for EVERY
    question type, float questions included (``0.05`` or ``1.0`` is refused:
    "The min limit in survey question N expected to be integer.").
S7  multiplechoice and multiselect questions have ``choices``: a list, or a
    string of one choice per line (blank lines dropped).
S8  their default (a string) is split into lines (blank lines dropped); a
    multiplechoice default has at most one line; every line is one of the
    choices. (AWX tests ``line in choices``, a substring test when choices is
    a string; this checker asks for a whole line.)
S9  a default starting with ``$encrypted$`` is only allowed for a password
    question, and only when the saved spec already had an encrypted (or empty)
    default for that variable -- so never in a new spec.

When a job is launched -- ``awx/main/models/mixins.py``,
``SurveyJobTemplateMixin._survey_element_validation`` (the answers, called by
``_accept_or_ignore_variables``) and ``_update_unified_job_kwargs`` (a
question's default becomes an extra variable only when it passes that same
validation; the answers given at launch override it):

L1  a required question needs an answer.
L2  text, textarea, password: the answer is a string, at least ``min`` and at
    most ``max`` characters long (when those are not "" or null).
L3  integer: the answer is an int (``type(x) == int``: not a bool, not a
    float), ``int(min) <= x <= int(max)``.
L4  float: the answer is an int or a float, ``float(min) <= x <= float(max)``.
L5  multiselect: the answer is a list, each item one of the choices.
L6  multiplechoice: the answer is one of the choices.
L7  variables that are not survey questions are taken only with
    ``ask_variables_on_launch`` (``_accept_or_ignore_variables``).

What AWX's launch form sends for a default (``awx_answers``): multiselect as
a list of its lines, integer as an int, float as a float, the rest as the
string; a default of "" (or none) of an integer, float or multi-select question
is no answer, and a default that fails L2-L6 is left out, as
``_update_unified_job_kwargs`` leaves it out.

This project adds (``project_problems``): variable names are Ansible
identifiers, and no question lets the survey user name a program to run
(a binary, a directory of binaries, kubectl, a script, a command or the
environment with PATH): such a variable is an inventory or job-template
setting, never a survey answer.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json
import re
import sys

# awx/main/constants.py SURVEY_TYPE_MAPPING (bool is left out of the numbers here: AWX's isinstance() would take
# True for an int, which no survey of ours should rely on)
SURVEY_TYPES = {
    "text": (str,),
    "textarea": (str,),
    "password": (str,),
    "multiplechoice": (str,),
    "multiselect": (str,),
    "integer": (int,),
    "float": (float, int),
}
TEXT_TYPES = ("text", "textarea", "password")
CHOICE_TYPES = ("multiplechoice", "multiselect")
REQUIRED_KEYS = (("type", str), ("question_name", str), ("variable", str), ("required", bool))
IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# Variables that name a program, where programs are looked for, or what runs.
PROGRAM_VARIABLE = re.compile(r"(mpirun|kubectl|binar|_bin$|_bin_|script|command|environment|_env$)")


def _is_int(value):
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def choice_list(question):
    """The choices of a multiplechoice/multiselect question as a list (a string is one choice per line)."""
    choices = question.get("choices")
    if isinstance(choices, str):
        return [line for line in choices.splitlines() if line.strip()]
    return list(choices or [])


def default_lines(question):
    """A choice question's default as the list of its non-blank lines."""
    default = question.get("default")
    if isinstance(default, str):
        return [line for line in default.splitlines() if line.strip()]
    return list(default or [])


def _top_level_problems(survey):
    """S1."""
    if not isinstance(survey, dict):
        return ["the survey is not a JSON object"]
    problems = []
    for field, kind, label in (("name", str, "string"), ("description", str, "string"), ("spec", list, "list")):
        if field not in survey:
            problems.append("field %r is missing from the survey spec" % field)
        elif not isinstance(survey[field], kind):
            problems.append("field %r must be a %s, not %s" % (field, label, type(survey[field]).__name__))
    if isinstance(survey.get("spec"), list) and not survey["spec"]:
        problems.append("'spec' has no questions")
    return problems


def _default_type_problems(where, question):
    """S5."""
    if "default" not in question or question["default"] == "":
        return []
    default, qtype = question["default"], question["type"]
    if qtype == "integer":
        good = _is_int(default)
    elif qtype == "float":
        good = _is_number(default)
    else:
        good = isinstance(default, SURVEY_TYPES[qtype])
    if good:
        return []
    return ["%s: default %r must be %s" % (where, default, {"integer": "an integer", "float": "a number"}.get(
        qtype, "a string (multiselect: one choice per line)" if qtype == "multiselect" else "a string"))]


def _limit_problems(where, question):
    """S6."""
    return ["%s: %s %r must be an integer (AWX takes no other limit, also for a float question)"
            % (where, key, question[key]) for key in ("min", "max")
            if key in question and question[key] is not None and not _is_int(question[key])]


def _choice_problems(where, question):
    """S7, S8."""
    if "choices" not in question:
        return ["%s: a %s question must have choices" % (where, question["type"])]
    choices = question["choices"]
    if not isinstance(choices, (list, str)):
        return ["%s: choices must be a list or one choice per line" % where]
    problems = []
    listed = choice_list(question)
    if not listed:
        problems.append("%s: no choices" % where)
    if "default" in question and question["default"] not in ("", None):
        lines = default_lines(question)
        if question["type"] == "multiplechoice" and len(lines) > 1:
            problems.append("%s: a multiplechoice question has one default, not %r" % (where, question["default"]))
        missing = [line for line in lines if line not in listed]
        if missing:
            problems.append("%s: default %s not among the choices %s" % (where, missing, listed))
    return problems


def _encrypted_problems(where, question):
    """S9: a new spec (job template created from this file) cannot carry an $encrypted$ default."""
    default = question.get("default")
    if isinstance(default, str) and default.startswith("$encrypted$"):
        return ["%s: $encrypted$ is reserved for password defaults AWX already holds" % where]
    return []


def _question_problems(idx, question, seen):
    where = "question %d" % idx
    if not isinstance(question, dict):
        return ["%s is not a JSON object" % where]
    problems = []
    for key, kind in REQUIRED_KEYS:
        if key not in question:
            problems.append("%s: %r is missing" % (where, key))
        elif not isinstance(question[key], kind):
            problems.append("%s: %r must be a %s" % (where, key, "boolean" if kind is bool else "string"))
    if problems:
        return problems
    where = "question %d (%s)" % (idx, question["variable"])
    if question["variable"] in seen:
        problems.append("%s: variable duplicated" % where)
    seen.add(question["variable"])
    if question["type"] not in SURVEY_TYPES:
        return problems + ["%s: type %r is not one of %s" % (where, question["type"], ", ".join(SURVEY_TYPES))]
    problems += _default_type_problems(where, question)
    problems += _limit_problems(where, question)
    if question["type"] in CHOICE_TYPES:
        problems += _choice_problems(where, question)
    problems += _encrypted_problems(where, question)
    return problems


def spec_problems(survey):
    """What AWX refuses when the survey spec is saved (S1-S9); [] when it takes it."""
    problems = _top_level_problems(survey)
    if problems:
        return problems
    seen = set()
    for idx, question in enumerate(survey["spec"]):
        problems += _question_problems(idx, question, seen)
    return problems


def _limits(question, convert):
    low, high = question.get("min"), question.get("max")
    return (None if low in ("", None) else convert(low)), (None if high in ("", None) else convert(high))


def answer_problems(question, answers):
    """What AWX refuses in the launch answers for one question (L1-L6); [] when it takes them."""
    variable, qtype = question["variable"], question["type"]
    if variable not in answers:
        return ["%s: value missing" % variable] if question.get("required") else []
    value = answers[variable]
    if qtype in TEXT_TYPES:
        if not isinstance(value, str):
            return ["%s: %r must be a string" % (variable, value)]
        low, high = _limits(question, int)
        measure = len(value)
    elif qtype == "integer":
        if type(value) is not int:  # pylint: disable=unidiomatic-typecheck
            return ["%s: %r must be an integer" % (variable, value)]
        low, high = _limits(question, int)
        measure = value
    elif qtype == "float":
        if type(value) not in (int, float):  # pylint: disable=unidiomatic-typecheck
            return ["%s: %r must be a number" % (variable, value)]
        low, high = _limits(question, float)
        measure = value
    elif qtype == "multiselect":
        if not isinstance(value, list):
            return ["%s: %r must be a list" % (variable, value)]
        return ["%s: %r is not one of %s" % (variable, item, choice_list(question))
                for item in value if item not in choice_list(question)]
    else:
        if value not in choice_list(question):
            return ["%s: %r is not one of %s" % (variable, value, choice_list(question))]
        return []
    unit = " characters" if qtype in TEXT_TYPES else ""
    problems = []
    if low is not None and measure < low:
        problems.append("%s: %r is below the minimum %s%s" % (variable, value, low, unit))
    if high is not None and measure > high:
        problems.append("%s: %r is above the maximum %s%s" % (variable, value, high, unit))
    return problems


def typed_default(question):
    """(True, the answer AWX's launch form sends for the question's default) or (False, None) for no answer."""
    if "default" not in question or question["default"] is None:
        return False, None
    default, qtype = question["default"], question["type"]
    if qtype == "multiselect":
        lines = default_lines(question)
        return (True, lines) if lines else (False, None)
    if qtype in ("integer", "float"):
        if default == "":
            return False, None
        return True, (int(default) if qtype == "integer" else float(default))
    return True, default


def awx_answers(survey):
    """The extra variables a launch that keeps every default sends (see the module docstring)."""
    answers = {}
    for question in survey["spec"]:
        present, value = typed_default(question)
        if present and not answer_problems(question, {question["variable"]: value}):
            answers[question["variable"]] = value
    return answers


def default_problems(survey):
    """Defaults that AWX's launch would refuse or drop: a non-empty default must pass L2-L6."""
    problems = []
    for question in survey["spec"]:
        present, value = typed_default(question)
        if present and not (question["type"] in TEXT_TYPES and value == ""):
            problems += ["default of %s" % p for p in answer_problems(question, {question["variable"]: value})]
    return problems


def unanswered_required(survey):
    """Required questions whose default gives no answer: every launch must answer them."""
    answers = awx_answers(survey)
    return [q["variable"] for q in survey["spec"] if q.get("required") and q["variable"] not in answers]


def project_problems(survey):
    """This project's own rules: identifiers, and no question that names a program to run."""
    problems = []
    for question in survey["spec"]:
        variable = question["variable"]
        if not IDENTIFIER.match(variable):
            problems.append("%s: not a variable name" % variable)
        if PROGRAM_VARIABLE.search(variable):
            problems.append("%s: a survey must not let its user name a program to run (binary, its directory, "
                            "kubectl, a script, a command or the environment); set it in the inventory or the job "
                            "template" % variable)
    return problems


def survey_problems(survey):
    """Everything: what AWX refuses when saving, what its launch refuses or drops, and the project's rules."""
    problems = spec_problems(survey)
    if problems:
        return problems
    return default_problems(survey) + project_problems(survey)


def main(argv):
    status = 0
    for path in argv:
        with open(path) as handle:
            survey = json.load(handle)
        for problem in survey_problems(survey):
            print("%s: %s" % (path, problem))
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
