# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Check AWX survey specs the way AWX itself checks them (no AWX needed).

    python tests/tools/awx_survey_check.py awx/surveys/*.json

prints every problem and exits 1 when there is one.

The verdicts are AWX's own: ``awx_upstream`` (beside this file) runs a
verbatim excerpt of AWX's code (ansible/awx commit e21dd0a0933f): a survey
that AWX's ``JobTemplateSurveySpec._validate_spec_data`` refuses, or whose
defaults AWX's launch refuses, is reported with AWX's message. The rules
below re-state that code so that every problem of a survey is listed at once,
with a message that names the question (AWX stops at the first one); where
they are stricter than AWX it says so, and tests/unit/test_awx_upstream.py
checks that they never take what AWX refuses.

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
    int for integer, an int or a float for float. (AWX's isinstance() takes
    true/false for an int; this checker does not.)
S6  ``min`` and ``max``, when present and not null, are ints -- for EVERY
    question type, float questions included (``0.05``, ``1.0`` or ``""`` is
    refused: "The min limit in survey question N expected to be integer.").
S7  multiplechoice and multiselect questions have ``choices``: a list, or a
    string of one choice per line (blank lines dropped). (This checker also
    asks for at least one choice.)
S8  their default (a string) is split into lines (blank lines dropped); a
    multiplechoice default has at most one line; every line is one of the
    choices. (AWX tests ``line in choices``, a substring test when choices is
    a string; this checker asks for a whole line.)
S9  a default starting with ``$encrypted$`` is only allowed for a password
    question, and only when the saved spec already had an encrypted (or empty)
    default for that variable -- so never in a new spec.

When a job is launched -- ``awx/main/models/mixins.py``,
``SurveyJobTemplateMixin._accept_or_ignore_variables`` checks the answers
with ``_survey_element_validation``; any error refuses the launch
(``JobLaunchSerializer.validate``):

L1  a required question needs an answer -- at EVERY launch through the API
    (``awx.awx.job_launch``, ``awx job_templates launch``, a workflow's or a
    schedule's saved answers): AWX does not fill in a default before this
    check, only the launch form does.
L2  text, textarea, password: the answer is a string, at least ``min`` and at
    most ``max`` characters long (when those are not "" or null); a password
    answer of ``$encrypted$`` stands for the saved default.
L3  integer: the answer is an int (``type(x) == int``: not a bool, not a
    float), ``int(min) <= x <= int(max)``.
L4  float: the answer is an int or a float, ``float(min) <= x <= float(max)``.
L5  multiselect: the answer is a list, each item one of the choices.
L6  multiplechoice: the answer is one of the choices.
L7  variables that are not survey questions are taken only with
    ``ask_variables_on_launch`` (``_accept_or_ignore_variables``); without
    it the launch starts and AWX leaves them out.

What reaches the playbook -- ``_update_unified_job_kwargs``: the template's
variables, then each question's default AS STORED, when that passes
``_survey_element_validation``, then the launch's answers. So:

- a multi-select default (stored as a string) never passes L5: AWX itself
  never passes it on. Only the launch forms do, as a list
  (``awx_upstream.form_answers``). A launch that does not answer the
  question (a schedule or workflow node saved without answers) leaves the
  variable to the role's own default;
- numbers reach the playbook as they were given: a float question's answer
  (or default) of ``1`` or ``0`` arrives as the int 1 or 0, not 1.0;
- a default of "" reaches the playbook for a text question whose ``min`` is 0
  (the forms send nothing, AWX adds the stored default); for an integer,
  float or multi-select question it is no value at all.

This project adds (``project_problems``): variable names are Ansible
identifiers; choices are a list (the current AWX UI, ansible/ansible-ui
frontend/awx/common/SurveyStep.tsx getChoices, offers no choice at all for a
newline-separated string); and no question lets the survey user name a
program to run (a binary, a directory of binaries, kubectl, a script, a
command or the environment with PATH) or a configuration file (a kubeconfig,
mpirun's ssh configuration): such a variable is an inventory or job-template
setting, never a survey answer.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import awx_upstream as upstream  # noqa: E402  pylint: disable=wrong-import-position

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
# Variables that name a program, where programs are looked for, what runs, or a configuration file (a
# kubeconfig, mpirun's ssh configuration): role_options.file_naming_variables() lists the roles' own.
PROGRAM_VARIABLE = re.compile(r"(mpirun|kubectl|binar|_bin$|_bin_|script|command|environment|_env$|kubeconfig|"
                              r"_config$|credential|_vars$|agent_dir|job_collective)")


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
    return list(default) if isinstance(default, list) else []


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
    if isinstance(question.get("default"), str) and question["default"] != "":
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
    """What AWX refuses when the survey spec is saved (S1-S9, and AWX's own verdict); [] when it takes it."""
    problems = _top_level_problems(survey)
    if not problems:
        seen = set()
        for idx, question in enumerate(survey["spec"]):
            problems += _question_problems(idx, question, seen)
    if not problems:
        error, _stored = upstream.save_survey(survey)
        if error:
            problems.append("AWX refuses the survey: %s" % error)
    return problems


def stored(survey):
    """The survey as AWX stores it (choices and defaults of choice questions without blank lines)."""
    return upstream.save_survey(survey)[1]


def _limits(question, convert):
    low, high = question.get("min"), question.get("max")
    return (None if low in ("", None) else convert(low)), (None if high in ("", None) else convert(high))


def answer_problems(question, answers):
    """What AWX refuses in the launch answers for one question (L1-L6); [] when it takes them."""
    variable, qtype = question["variable"], question["type"]
    if qtype == "password" and answers.get(variable) == "$encrypted$":
        # the placeholder of the saved default: nothing to check, unless there is none to stand for
        missing = question.get("default") is None and question.get("required")
        return ["%s: value missing" % variable] if missing else []
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


def form_answer(question):
    """(True, what AWX's launch forms send for the question's default) or (False, None) when they send nothing."""
    return upstream.form_answer(question)


def awx_answers(survey, answers=None):
    """The extra variables of the job that a launch form starts when the user keeps every default.

    AWX's own ``_update_unified_job_kwargs`` computes them, from the forms' answers (``form_answers``: a
    multi-select default as a list, numbers as stored, "" not sent) and the stored defaults that pass
    their question's validation; ``answers`` (for the questions without a default) are added as answered.
    Whether AWX takes the launch at all is ``launch_problems``.
    """
    sent = upstream.form_answers(stored(survey))
    sent.update(answers or {})
    template = upstream.JobTemplate(stored(survey))
    extra_vars = json.loads(template._update_unified_job_kwargs({}, {"extra_vars": sent})["extra_vars"])
    for question in survey["spec"]:           # the job decrypts password answers when it runs
        if question["type"] == "password" and isinstance(extra_vars.get(question["variable"]), str):
            extra_vars[question["variable"]] = upstream.decrypt(extra_vars[question["variable"]])
    return extra_vars


def launch_problems(survey, answers=None):
    """AWX's errors for a launch from the form that keeps every default (plus ``answers``); [] when it starts."""
    sent = upstream.form_answers(stored(survey))
    sent.update(answers or {})
    errors, _extra_vars = upstream.launch(stored(survey), sent)
    return [error for errors_of_key in errors.values() for error in errors_of_key]


def default_problems(survey):
    """Defaults that AWX refuses when the form sends them, or drops at a launch that does not answer.

    A non-empty default must pass the question's own validation (L2-L6) as the launch form sends it and,
    but for a multi-select default (which AWX never passes on itself, see the module docstring), as AWX
    stores it: otherwise a launch through the API that leaves the question out gets nothing for it.
    """
    problems = []
    for question in stored(survey)["spec"]:
        variable = question["variable"]
        sent, value = upstream.form_answer(question)
        if not sent:
            continue
        if question["type"] == "password":      # the form sends $encrypted$; AWX checks the saved default
            value = upstream.decrypt(question["default"])
        found = ["default of %s" % p for p in answer_problems(question, {variable: value})]
        if not found and question["type"] != "multiselect":
            stored_default = value if question["type"] == "password" else question["default"]
            found = ["default of %s is dropped by AWX when a launch does not answer: %s" % (variable, error)
                     for error in upstream.answer_errors(question, {variable: stored_default})]
        problems += found
    return problems


def unanswered_required(survey):
    """Required questions that a launch form keeping every default leaves unanswered: every launch answers them."""
    answers = awx_answers(survey)
    return [q["variable"] for q in survey["spec"] if q.get("required") and q["variable"] not in answers]


def project_problems(survey):
    """This project's own rules: identifiers, choices as lists, and no question that names a program to run."""
    problems = []
    for question in survey["spec"]:
        variable = question["variable"]
        if not IDENTIFIER.match(variable):
            problems.append("%s: not a variable name" % variable)
        if question.get("type") in CHOICE_TYPES and not isinstance(question.get("choices"), list):
            problems.append("%s: choices must be a list: the current AWX UI (ansible-ui) offers no choice for "
                            "choices given as one string" % variable)
        if PROGRAM_VARIABLE.search(variable):
            problems.append("%s: a survey must not let its user name a program to run (binary, its directory, "
                            "kubectl, a script, a command or the environment) or a configuration file (a kubeconfig, "
                            "an ssh configuration); set it in the inventory or the job template" % variable)
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
