# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""AWX survey specs and job templates: AWX takes every survey, and every default works.

Static (no lab):

- every survey passes the rules AWX applies when a survey spec is saved and
  when a job is launched (tests/tools/awx_survey_check.py runs AWX's own code
  and re-states its rules; tests/unit/test_awx_survey_check.py and
  tests/unit/test_awx_upstream.py show it refuses what AWX refuses), and no
  question names a program to run;
- every survey variable is an option of a role its playbook runs, and every
  default -- as AWX passes it (computed by AWX's own code, see
  tests/tools/awx_upstream.py): multi-select as a list, integer as an int,
  float as the number stored (an int stays an int), text as a string --
  validates against the argument spec of EVERY role of the collection that
  declares the variable (type and choices).

Lab (root; network-namespace hosts, real ssh, emulated RDMA and collective
test tools, see tests/lab/README.md): every job template's playbook is
launched with its survey's defaults as extra variables, the way AWX passes
them (``launch_vars``), with short tests and the answers and variables the
lab needs, named in ``LAB_ANSWERS`` and ``LAB_NEEDS`` (the report directory
goes to the test's tmp directory instead of /var/lib/commcheck; the links are
judged at half their rate; one collective rank per host with small
messages). Each launch must get past every option validation, run, and on the
healthy lab come out healthy: no failing or errored record.

- fast tier: the one-click template (test_oneclick_lab.py: its launch is the
  healthy run several tests read) and the Kubernetes one
  (test_k8s_lab.py: its launch is the run in pods, against the kubectl
  STAND-IN tests/lab/kubectl_standin.py);
- full tier (``pytest.mark.full``): discover.yml, rdma.yml, tcp.yml, nccl.yml
  and hccl.yml on a 3-host lab, and the collective role on its own with
  commcheck_collective_library=auto.

The static tests take under a second.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import copy
import glob
import json
import os
import re
import sys

import pytest
import yaml

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

import lab as lablib
import oneclick_helpers as oc
from lab_checks import HEALTHY_VERDICTS, LAB_MIN_FRACTION, assert_nothing_left, run_with_history, scratch_dir

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
AWX = os.path.join(REPO, "awx")
TOOLS = os.path.join(REPO, "tests", "tools")
if TOOLS not in sys.path:
    sys.path.insert(0, TOOLS)

import awx_survey_check as awx  # noqa: E402  pylint: disable=wrong-import-position

SURVEYS = sorted(glob.glob(os.path.join(AWX, "surveys", "*.json")))
SURVEY_IDS = [os.path.basename(p) for p in SURVEYS]
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
    """{role: {variable: spec}} of every roles/*/meta/argument_specs.yml, all entry points."""
    specs = {}
    for path in sorted(glob.glob(os.path.join(REPO, "roles", "*", "meta", "argument_specs.yml"))):
        role = path.split(os.sep)[-3]
        with open(path) as handle:
            doc = yaml.safe_load(handle) or {}
        specs[role] = {}
        for entry, body in sorted((doc.get("argument_specs") or {}).items()):
            for variable, spec in ((body or {}).get("options") or {}).items():
                specs[role].setdefault(variable, []).append((entry, spec))
    return specs


SPECS = _load_specs()


def _survey(path):
    with open(path) as handle:
        return json.load(handle)


def _roles_of_playbook(playbook):
    """Every role the playbook runs, including the roles those roles include."""
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
    while todo:
        role = todo.pop().split(".")[-1]
        if role in found or "{{" in role:
            continue
        found.add(role)
        for tasks in glob.glob(os.path.join(REPO, "roles", role, "tasks", "*.yml")):
            with open(tasks) as handle:
                scan(yaml.safe_load(handle))
    return found


def _spec_problems(question, answers, role, entry, spec):
    """What the argument spec of one role (entry point) says about a survey question and its default."""
    variable = question["variable"]
    spec = dict(spec)
    for key in ("description", "version_added"):
        spec.pop(key, None)
    where = "%s: %s (entry point %s)" % (variable, role, entry)
    problems = []
    if spec.get("type", "str") not in COMPATIBLE[question["type"]]:
        problems.append("%s: survey type %s cannot feed type %s" % (where, question["type"], spec.get("type", "str")))
    if question["type"] in awx.CHOICE_TYPES and spec.get("choices"):
        extra = set(awx.choice_list(question)) - set(str(c) for c in spec["choices"])
        if extra:
            problems.append("%s: survey choices %s are not among the role's %s"
                            % (where, sorted(extra), spec["choices"]))
    if variable in answers:
        result = ArgumentSpecValidator({variable: spec}).validate({variable: copy.deepcopy(answers[variable])})
        if result.error_messages:
            problems.append("%s: default %r refused: %s" % (where, answers[variable], "; ".join(result.error_messages)))
    return problems


# ------------------------------------------------------------------- static

def test_there_is_a_survey_per_playbook():
    names = sorted(os.path.basename(p)[:-5] + ".yml" for p in SURVEYS)
    assert names == sorted(EXPECTED_PLAYBOOKS)


@pytest.mark.parametrize("path", SURVEYS, ids=SURVEY_IDS)
def test_awx_takes_the_survey_and_its_defaults(path):
    survey = _survey(path)
    assert awx.spec_problems(survey) == []
    assert awx.default_problems(survey) == []
    assert awx.project_problems(survey) == []
    answers = awx.awx_answers(survey)
    # a launch that keeps the defaults (and answers what has no default) passes AWX's launch validation
    for variable in awx.unanswered_required(survey):
        answers[variable] = "x"
    for question in survey["spec"]:
        assert awx.answer_problems(question, answers) == []


def test_only_the_image_has_no_default():
    """A required question without a usable default must be answered at every launch: only the k8s image."""
    missing = dict((os.path.basename(p), awx.unanswered_required(_survey(p))) for p in SURVEYS)
    assert missing == dict((name, ["commcheck_k8s_image"] if name == "k8s_commcheck.json" else [])
                           for name in SURVEY_IDS)


def test_no_survey_names_a_program():
    """No survey question sets a binary, its directory, kubectl, a script, a command or the environment."""
    programs = sorted(v for role in SPECS.values() for v in role if awx.PROGRAM_VARIABLE.search(v))
    # the rule bites on real options of the roles (so keeping them out of the surveys means something)
    assert {"commcheck_collective_mpirun", "commcheck_k8s_kubectl_binary", "commcheck_environment"} <= set(programs)
    asked = sorted(q["variable"] for p in SURVEYS for q in _survey(p)["spec"])
    assert sorted(set(asked) & set(programs)) == []


@pytest.mark.parametrize("path", SURVEYS, ids=SURVEY_IDS)
def test_every_default_validates_against_every_role_that_declares_it(path):
    survey = _survey(path)
    playbook = os.path.join(REPO, "playbooks", os.path.basename(path)[:-5] + ".yml")
    runs = _roles_of_playbook(playbook)
    answers = awx.awx_answers(survey)
    problems = []
    for question in survey["spec"]:
        variable = question["variable"]
        declaring = sorted(role for role in SPECS if variable in SPECS[role])
        if not set(declaring) & runs:
            problems.append("%s: no role that %s runs (%s) declares it"
                            % (variable, os.path.basename(playbook), ", ".join(sorted(runs))))
        for role in declaring:
            for entry, spec in SPECS[role][variable]:
                problems += _spec_problems(question, answers, role, entry, spec)
    assert not problems, "\n".join(problems)


def test_the_one_click_default_auto_is_a_choice_of_the_collective_role():
    """The defect that started this: AWX passes commcheck_collective_library=auto to every role of the run."""
    [question] = [q for q in _survey(os.path.join(AWX, "surveys", "commcheck.json"))["spec"]
                  if q["variable"] == "commcheck_collective_library"]
    assert question["default"] == "auto"
    for role in ("commcheck", "collective"):
        [(_entry, spec)] = SPECS[role]["commcheck_collective_library"]
        assert "auto" in spec["choices"], role


def test_job_templates():
    with open(os.path.join(AWX, "job_templates.yml")) as handle:
        doc = yaml.safe_load(handle)
    templates = doc["commcheck_awx_job_templates"]
    assert sorted(os.path.basename(t["playbook"]) for t in templates) == sorted(EXPECTED_PLAYBOOKS)
    assert len(set(t["name"] for t in templates)) == len(templates)
    for template in templates:
        assert set(template) >= {"name", "description", "playbook", "survey", "job_type", "timeout"}
        assert template["job_type"] in ("run", "check")
        # variables beyond the survey (inventory-like settings of the lab or the site) need this (AWX rule L7)
        assert template["ask_variables_on_launch"] is True
        assert os.path.exists(os.path.join(AWX, template["survey"])), template["survey"]
        assert os.path.basename(template["survey"])[:-5] == os.path.basename(template["playbook"])[:-4]
        assert os.path.exists(os.path.join(REPO, template["playbook"])), template["playbook"]


def test_role_spec_validation_catches_bad_input():
    """The role-spec half of the check can fail: a wrong type and an unknown choice are found."""
    question = {"variable": "x", "type": "multiselect", "choices": ["write", "read"]}
    both = {"type": "list", "elements": "str", "choices": ["write", "read"]}
    assert _spec_problems(question, {"x": ["write"]}, "r", "main", both) == []
    assert _spec_problems(question, {"x": ["write"]}, "r", "main", dict(both, choices=["read"]))
    assert _spec_problems(question, {"x": ["write"]}, "r", "main", {"type": "int"})
    question = {"variable": "lib", "type": "multiplechoice", "choices": ["auto", "nccl"]}
    problems = _spec_problems(question, {"lib": "auto"}, "collective", "main",
                              {"type": "str", "choices": ["nccl", "hccl"]})
    assert any("survey choices ['auto']" in p for p in problems)
    assert any("default 'auto' refused" in p for p in problems)


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
    # `make ee` copies the built tarball (its version from galaxy.yml) to a name without the
    # version, so that this file never repeats the version.
    assert galaxy["version"] not in collection["name"] and collection["type"] == "file"
    tarball = "%s-%s.tar.gz" % (galaxy["namespace"], galaxy["name"])
    assert collection["name"] == "dist/" + tarball
    [copied] = [f for f in ee["additional_build_files"] if f["dest"] == "dist"]
    assert copied["src"] == ".build/ee/" + tarball
    with open(os.path.join(REPO, "Makefile")) as handle:
        assert "EE_TARBALL := $(EE_DIR)/%s" % tarball in handle.read()
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


# ---------------------------------------------------------------------- lab

# The lab's tests are short (the surveys ask 5 s a test, a real cluster's length).
SHORT_TESTS = {"commcheck_rdma_duration": oc.FAST["commcheck_rdma_duration"],
               "commcheck_tcp_duration": oc.FAST["commcheck_tcp_duration"]}
# Survey questions the lab answers otherwise than the defaults: its links are judged at half their rate (two
# shared CPU cores, lab_checks.LAB_MIN_FRACTION), its collective runs one CPU rank of the EMULATOR per host
# (the survey's 8 per host would be 8 ranks per host on the same two cores) against the lab's own pass line,
# and its tests are short.
LAB_ANSWERS = {
    "commcheck.yml": {"commcheck_gpus_per_node": 1, "commcheck_min_fraction": LAB_MIN_FRACTION},
    "discover.yml": {},
    "rdma.yml": {"commcheck_rdma_duration": SHORT_TESTS["commcheck_rdma_duration"],
                 "commcheck_min_fraction": LAB_MIN_FRACTION},
    "tcp.yml": {"commcheck_tcp_duration": SHORT_TESTS["commcheck_tcp_duration"],
                "commcheck_min_fraction": LAB_MIN_FRACTION},
    "nccl.yml": {"commcheck_gpus_per_node": 1,
                 "commcheck_collective_min_fraction": lablib.LAB_COLLECTIVE["commcheck_collective_min_fraction"]},
    "hccl.yml": {"commcheck_gpus_per_node": 1,
                 "commcheck_collective_min_fraction": lablib.LAB_COLLECTIVE["commcheck_collective_min_fraction"]},
    "k8s_commcheck.yml": {"commcheck_min_fraction": LAB_MIN_FRACTION},
}
# What the lab needs beyond the survey (the templates ask for variables on launch, AWX rule L7): short tests
# where the survey does not ask their length, and the collective's message sizes (the survey leaves them to
# the role: 32M to 8G) and time limit. Everything else comes from the lab's inventory (tests/lab/lab.py):
# mpirun as root, the collective's binary directory, the hosts' emulated sysfs.
COLLECTIVE_IN_THE_LAB = {
    "commcheck_collective_min_bytes": "1M",
    "commcheck_collective_max_bytes": "1M",
    "commcheck_collective_iterations": 3,
    "commcheck_collective_warmup_iterations": 1,
    "commcheck_collective_timeout": 300,
}
LAB_NEEDS = {
    "commcheck.yml": SHORT_TESTS,
    "discover.yml": {},
    "rdma.yml": {},
    "tcp.yml": {},
    "nccl.yml": COLLECTIVE_IN_THE_LAB,
    "hccl.yml": COLLECTIVE_IN_THE_LAB,
    "k8s_commcheck.yml": SHORT_TESTS,
}
BAD_VERDICTS = ("fail", "error")


def _templates():
    with open(os.path.join(AWX, "job_templates.yml")) as handle:
        return yaml.safe_load(handle)["commcheck_awx_job_templates"]


def _survey_answers(template):
    return awx.awx_answers(_survey(os.path.join(AWX, template["survey"])))


def template_of(playbook):
    """The job template that runs playbooks/<playbook>."""
    [template] = [t for t in _templates() if os.path.basename(t["playbook"]) == playbook]
    return template


def launch_vars(template, report_dir, answers=None, lab_needs=None):
    """The extra variables of the template's launch in the lab: its survey's defaults as AWX passes them
    (multi-select as a list, integer as an int ...), the questions the lab answers otherwise (LAB_ANSWERS, then
    ``answers``), the report directory under the test's own, and what the lab needs beyond the survey
    (LAB_NEEDS, then ``lab_needs``)."""
    playbook = os.path.basename(template["playbook"])
    extra_vars = dict(_survey_answers(template))
    extra_vars.update(LAB_ANSWERS[playbook])
    extra_vars.update(answers or {})
    if "commcheck_report_dir" in extra_vars:
        extra_vars["commcheck_report_dir"] = report_dir
    extra_vars.update(LAB_NEEDS[playbook])
    extra_vars.update(lab_needs or {})
    return extra_vars


# The one-click template is launched in test_oneclick_lab.py (the healthy run of the fast tier), the
# Kubernetes one in test_k8s_lab.py (the run in pods); these are the others.
HOST_TEMPLATES = [t for t in _templates()
                  if os.path.basename(t["playbook"]) not in ("commcheck.yml", "k8s_commcheck.yml")]


@pytest.fixture(scope="module")
def lab(lab_factory):
    handle = lab_factory("awx", hosts=3, rails=1)
    handle.heal()
    return handle


def _kinds(records):
    kinds = {}
    for record in records:
        kinds.setdefault(record.get("kind"), []).append(record)
    return kinds


def _verdicts(records):
    return sorted(set(r["verdict"] for r in records))


def _check_collective(lab, kinds, library):
    runs = kinds["collective"]
    assert runs and all(r["params"]["library"] == library for r in runs), runs
    assert runs[0]["params"]["hosts"] == lab.hosts and runs[0]["params"]["stage"] == "pool"
    # healthy: the pool passed, or a busy machine slowed it and every bisection rerun passed (flaky)
    assert runs[0]["verdict"] in HEALTHY_VERDICTS, [(r["verdict"], r["cause"]) for r in runs]
    assert set(_verdicts(runs[1:])) <= {"pass"}, [(r["verdict"], r["cause"]) for r in runs]


def _check_launch(lab, playbook, kinds):
    if playbook == "discover.yml":
        assert sorted(r["host"] for r in kinds["discover"]) == sorted(lab.hosts)
    elif playbook == "rdma.yml":               # mesh of 3: 3 pairs, bandwidth and latency
        assert len(kinds["rdma_bw"]) == 3 and set(_verdicts(kinds["rdma_bw"])) <= set(HEALTHY_VERDICTS), \
            kinds["rdma_bw"]
        # a latency is a real socket round trip here: judged, and at worst retested and flaky
        assert len(kinds["rdma_lat"]) == 3 and set(_verdicts(kinds["rdma_lat"])) <= set(HEALTHY_VERDICTS), \
            kinds["rdma_lat"]
    elif playbook == "tcp.yml":
        assert len(kinds["tcp_bw"]) == 3 and set(_verdicts(kinds["tcp_bw"])) <= set(HEALTHY_VERDICTS), \
            kinds["tcp_bw"]
    else:
        _check_collective(lab, kinds, playbook[:-4])


@pytest.mark.lab
@pytest.mark.full
@pytest.mark.parametrize("template", HOST_TEMPLATES, ids=[os.path.basename(t["playbook"]) for t in HOST_TEMPLATES])
def test_job_template_launch_with_survey_defaults(lab, tmp_path, template):
    """The launch gets past every option validation and runs, and on the healthy lab its verdict is healthy."""
    playbook = os.path.basename(template["playbook"])
    extra_vars = launch_vars(template, str(tmp_path / "reports"))
    proc, records, elapsed = run_with_history(lab, template["playbook"], tmp_path, extra_vars, timeout=900)
    sys.stderr.write("\n%s with the survey defaults: %.0f s\n" % (playbook, elapsed))
    output = proc.stdout[-5000:] + proc.stderr[-2000:]
    assert proc.returncode == 0, output
    assert not [r for r in records if r.get("verdict") in BAD_VERDICTS], [
        (r.get("kind"), r.get("host"), r.get("cause")) for r in records if r.get("verdict") in BAD_VERDICTS]
    _check_launch(lab, playbook, _kinds(records))
    assert_nothing_left(lab, wait=20)


# ---------------------------------------------- the collective role alone, auto

def _emulator_dir(library):
    """A directory with only one library's all_reduce test: the lab's EMULATOR launcher under the real name."""
    return oc.collective_launchers(scratch_dir("awx", library), library, ["all_reduce"])


@pytest.mark.lab
@pytest.mark.full
def test_collective_role_alone_resolves_auto(lab, tmp_path):
    """playbooks/nccl.yml with commcheck_collective_library=auto: the library of the binaries the hosts have."""
    extra_vars = dict(COLLECTIVE_IN_THE_LAB, commcheck_collective_library="auto", commcheck_gpus_per_node=1,
                      commcheck_require_accelerators=False, commcheck_collective_binary_dir=_emulator_dir("hccl"))
    proc, records, _elapsed = run_with_history(lab, "playbooks/nccl.yml", tmp_path / "hccl", extra_vars)
    assert proc.returncode == 0, proc.stdout[-5000:] + proc.stderr[-2000:]
    kinds = _kinds(records)
    _check_collective(lab, kinds, "hccl")
    assert "HCCL pool: 1 test(s)" in proc.stdout

    # without accelerators required (the default), hosts without a GPU / NPU are skipped with the reason
    extra_vars.pop("commcheck_require_accelerators")
    proc, records, _elapsed = run_with_history(lab, "playbooks/nccl.yml", tmp_path / "gpu", extra_vars)
    assert proc.returncode == 0, proc.stdout[-5000:] + proc.stderr[-2000:]
    runs = _kinds(records)["collective"]
    assert sorted(r["host"] for r in runs) == sorted(lab.hosts), runs
    assert all(r["verdict"] == "skipped" and r["params"]["reason"] == "no_accelerator" for r in runs), runs

    # no test binary of either library: skipped with the reason, nothing run, not an error
    empty = tmp_path / "no-binaries"
    empty.mkdir()
    extra_vars.update(commcheck_require_accelerators=False, commcheck_collective_binary_dir=str(empty))
    proc, records, _elapsed = run_with_history(lab, "playbooks/nccl.yml", tmp_path / "none", extra_vars)
    assert proc.returncode == 0, proc.stdout[-5000:] + proc.stderr[-2000:]
    runs = _kinds(records)["collective"]
    assert sorted(r["host"] for r in runs) == sorted(lab.hosts) and _verdicts(runs) == ["skipped"], runs
    assert all("neither nccl-tests (all_reduce_perf) nor hccl_test (all_reduce_test)" in r["cause"] for r in runs)
    assert "NO LIBRARY pool: 0 test(s)" in proc.stdout
    assert_nothing_left(lab, wait=20)
