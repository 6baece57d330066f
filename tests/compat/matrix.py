#!/usr/bin/env python
# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""``make compat``: the collection on every other ansible-core it supports, as collections test it.

For each version (2.16, 2.17, 2.18 by default; the main .venv's 2.19 is
tested by ``make test``), in its own virtual environment under
``.build/compat/<version>/`` (``ansible-core==<version>.*`` plus
tests/compat/requirements.txt, installed once and again only when either
changes):

- ``unit``: the unit tests that use the parts of ansible-core that differ
  between versions (``unit_files``: a test file that imports them, or
  collection code or a test helper that does, or runs one of its
  commands; ``is_core_api`` says which parts), at most ``--cases`` cases of each parametrized test
  function (tests/compat/compat_sample.py); the fast tier's marker;
- ``sanity``: that version's ansible-test on a copy of the tree (as ``make
  sanity``): validate-modules, import, ansible-doc, compile,
  runtime-metadata; with ``--pylint`` also pylint on plugins/ (several
  minutes per version on the 2-core build machine: pylint's findings
  depend on the pylint that version pins, and ``make sanity`` runs it
  on the main core);
- ``lab``: tests/integration/test_compat_lab.py, the one-click check on a
  lab, driven by that version's ansible-playbook with the modules run by
  that environment's Python.

Every stage of every version runs even when one failed; the summary gives
the result and seconds of each, and the exit status is 1 when any stage
failed or was skipped (a lab that cannot run here is not a pass).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import argparse
import ast
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from xml.etree import ElementTree

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
UNIT = os.path.join(REPO, "tests", "unit")
BUILD = os.path.join(REPO, ".build", "compat")
REQUIREMENTS = os.path.join(HERE, "requirements.txt")
GET_PIP = os.path.join(REPO, "tests", "tools", "ansible_test_get_pip.py")
LAB_TEST = "tests/integration/test_compat_lab.py"
COLLECTION = "ansible_collections.clusterops.commcheck."
VERSIONS = ("2.16", "2.17", "2.18")
STAGES = ("unit", "sanity", "lab")
SANITY_TESTS = ("validate-modules", "import", "ansible-doc", "compile", "runtime-metadata")
# the pip versions whose bootstrap script ansible-test 2.16-2.19 asks for (the stand-in serves each)
GET_PIP_VERSIONS = ("23.1.2", "24.2")
# a quoted ansible command a test runs ("ansible-playbook", "ansible"), or ansible-runner
COMMAND_RE = re.compile(r"""["']ansible(-[a-z]+)?["']|\bansible_runner\b""")
VERSION_RE = re.compile(r"^2\.\d+$")
SAME_ON_EVERY_CORE = ("ansible.errors", "ansible.module_utils")
TESTING_API = "ansible.module_utils.testing"


# ------------------------------------------------------------------ which unit tests use ansible-core

def imported_modules(path):
    """Every module name ``path`` imports (absolute imports, anywhere in the file), with ``from`` names."""
    with open(path) as handle:
        tree = ast.parse(handle.read(), path)
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
            names.update("%s.%s" % (node.module, alias.name) for alias in node.names)
    return names


def source_of(module):
    """The file of a collection module or of a helper next to the unit tests; None for anything else."""
    if module.startswith(COLLECTION):
        base = os.path.join(REPO, *module[len(COLLECTION):].split("."))
    elif "." not in module:
        base = os.path.join(UNIT, module)
    else:
        return None
    for path in (base + ".py", os.path.join(base, "__init__.py")):
        if os.path.isfile(path):
            return path
    return None


def is_core_api(module):
    """True for the parts of ansible-core whose behaviour differs between the supported versions.

    Not its exception classes (``ansible.errors``) nor the module side
    (``ansible.module_utils``: AnsibleModule, argument specs), which are
    the same on 2.16-2.19 for what the collection uses; the in-process
    module tests still count through ``ansible.module_utils.testing``
    (2.19's patch_module_args, tests/unit/core_compat.py elsewhere).
    """
    if module != "ansible" and not module.startswith("ansible."):
        return False
    if module.startswith(TESTING_API):
        return True
    return not module.startswith(SAME_ON_EVERY_CORE)


def loads_core(path, memo):
    """True when ``path`` uses ansible-core's API (is_core_api: directly or through collection code or a
    test helper)."""
    if path in memo:
        return memo[path]
    memo[path] = False  # an import cycle adds nothing
    found = False
    for module in imported_modules(path):
        if is_core_api(module):
            found = True
            break
        source = source_of(module)
        if source and loads_core(source, memo):
            found = True
            break
    memo[path] = found
    return found


def runs_core_command(path):
    with open(path) as handle:
        return bool(COMMAND_RE.search(handle.read()))


def unit_files(leave_out=("test_collection_clients.py",)):
    """The unit test files whose results can depend on the ansible-core version, sorted.

    test_collection_clients.py is left out: it runs galaxy-importer and
    ansible-builder, release tools with their own pins, not the collection
    on a core.
    """
    memo = {}
    files = []
    for name in sorted(os.listdir(UNIT)):
        path = os.path.join(UNIT, name)
        if not (name.startswith("test_") and name.endswith(".py")) or name in leave_out:
            continue
        if loads_core(path, memo) or runs_core_command(path):
            files.append(os.path.relpath(path, REPO))
    return files


# ------------------------------------------------------------------ environments

def venv_dir(version):
    return os.path.join(BUILD, version)


def wanted_install(version):
    """What the environment of ``version`` must hold: the core pin and the requirements file's text."""
    with open(REQUIREMENTS) as handle:
        text = handle.read()
    return "ansible-core==%s.*\n%s" % (version, text)


def ensure_venv(version, python, log):
    """Create or update .build/compat/<version>; the stamp records what was installed."""
    path = venv_dir(version)
    stamp = os.path.join(path, ".installed")
    want = hashlib.sha256(wanted_install(version).encode("utf-8")).hexdigest()
    if os.path.isfile(stamp):
        with open(stamp) as handle:
            if handle.read().strip() == want:
                return 0
    bin_python = os.path.join(path, "bin", "python")
    if not os.path.exists(bin_python):
        rc = run([python, "-m", "venv", path], log)
        if rc:
            return rc
    rc = run([bin_python, "-m", "pip", "install", "-q", "--disable-pip-version-check",
              "ansible-core==%s.*" % version, "-r", REQUIREMENTS], log)
    if rc == 0:
        with open(stamp, "w") as handle:
            handle.write(want + "\n")
    return rc


def core_version(version):
    """The ansible-core version installed in the environment of ``version``."""
    out = subprocess.run([os.path.join(venv_dir(version), "bin", "python"), "-c",
                          "import ansible; print(ansible.__version__)"],
                         stdout=subprocess.PIPE, universal_newlines=True, check=False).stdout
    return out.strip() or "?"


# ------------------------------------------------------------------ stages

def run(argv, log, cwd=REPO, env=None):
    """Run argv with its output appended to the open file ``log``; its exit status."""
    log.write("$ %s\n" % " ".join(argv))
    log.flush()
    return subprocess.call(argv, cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT)


def test_env(extra_path=None):
    env = dict(os.environ)
    env["ANSIBLE_COLLECTIONS_PATH"] = os.path.join(REPO, ".build", "collections")
    env.pop("PYTHONPATH", None)
    if extra_path:
        env["PYTHONPATH"] = extra_path
    return env


def junit_counts(path):
    """(tests, failures + errors, skipped) of a pytest JUnit file; None when there is none."""
    if not os.path.isfile(path):
        return None
    root = ElementTree.parse(path).getroot()
    suites = [root] if root.tag == "testsuite" else list(root)
    total = sum(int(s.get("tests", 0)) for s in suites)
    bad = sum(int(s.get("failures", 0)) + int(s.get("errors", 0)) for s in suites)
    skipped = sum(int(s.get("skipped", 0)) for s in suites)
    return total, bad, skipped


def junit_failures(path, limit=2000):
    """'test: message' of each failed or erroring test of a pytest JUnit file (its text cut to ``limit``)."""
    if not os.path.isfile(path):
        return []
    out = []
    for case in ElementTree.parse(path).getroot().iter("testcase"):
        for bad in list(case.findall("failure")) + list(case.findall("error")):
            text = (bad.get("message") or "") + "\n" + (bad.text or "")
            out.append("%s: %s" % (case.get("name"), text.strip()[-limit:]))
    return out


def pytest_stage(version, args, log, name, allow_skips):
    """pytest of ``version``'s environment; (result, note)."""
    junit = os.path.join(venv_dir(version), "%s.junit.xml" % name)
    if os.path.exists(junit):
        os.remove(junit)
    argv = [os.path.join(venv_dir(version), "bin", "python"), "-m", "pytest", "-q", "--junitxml", junit] + args
    rc = run(argv, log, env=test_env(HERE))
    counts = junit_counts(junit)
    if counts is None:
        return "FAIL", "no test report (exit %d)" % rc
    total, bad, skipped = counts
    note = "%d tests, %d failed, %d skipped" % (total, bad, skipped)
    if rc or bad or not total:
        # what failed, where CI's output shows it (the log stays on the machine that ran it)
        for failure in junit_failures(junit):
            sys.stdout.write("    %s\n" % failure.replace("\n", "\n    "))
        return "FAIL", note
    if skipped and not allow_skips:
        return "SKIP", note
    return "pass", note


def unit_stage(version, opts, log):
    args = ["-n", str(opts.workers), "-m", "not full", "-p", "compat_sample", "--compat-cases", str(opts.cases)]
    return pytest_stage(version, args + unit_files(), log, "unit", allow_skips=True)


def lab_stage(version, opts, log):
    del opts
    return pytest_stage(version, ["-p", "no:xdist", LAB_TEST], log, "lab", allow_skips=False)


def serve_get_pip():
    """The stand-in get-pip script where each ansible-test looks for its bootstrap (as ``make sanity``)."""
    cache = os.path.expanduser("~/.ansible/test/cache")
    if not os.path.isdir(cache):
        os.makedirs(cache)
    for pip in GET_PIP_VERSIONS:
        target = os.path.join(cache, "get_pip_%s.py" % pip.replace(".", "_"))
        fd, tmp = tempfile.mkstemp(dir=cache, prefix=".get_pip.")
        os.close(fd)
        shutil.copyfile(GET_PIP, tmp)
        os.rename(tmp, target)


def sanity_tree(version):
    """.build/compat/<version>/sanity/ansible_collections/clusterops/commcheck made what git would take of the
    working tree (tracked and not ignored files); its tests/output stays, where ansible-test keeps the
    virtual environment it delegates to (--venv), so only the first run of a version installs it."""
    dest = os.path.join(venv_dir(version), "sanity", "ansible_collections", "clusterops", "commcheck")
    output = os.path.join(dest, "tests", "output")
    if not os.path.isdir(output):
        os.makedirs(output)
    for top in os.listdir(dest):
        if top != "tests":
            remove(os.path.join(dest, top))
    for entry in os.listdir(os.path.join(dest, "tests")):
        if entry != "output":
            remove(os.path.join(dest, "tests", entry))
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=REPO, check=True,
                            stdout=subprocess.PIPE).stdout.decode("utf-8").split("\0")
    for rel in listed:
        source = os.path.join(REPO, rel)
        if not rel or rel.startswith("tests/output/") or not os.path.isfile(source):
            continue
        target = os.path.join(dest, rel)
        if not os.path.isdir(os.path.dirname(target)):
            os.makedirs(os.path.dirname(target))
        shutil.copy2(source, target)
    return dest


def remove(path):
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path)
    else:
        os.remove(path)


def sanity_stage(version, opts, log):
    serve_get_pip()
    dest = sanity_tree(version)
    ansible_test = os.path.join(venv_dir(version), "bin", "ansible-test")
    base = [ansible_test, "sanity", "--venv", "--python", "%d.%d" % sys.version_info[:2], "--color", "no"]
    tests = []
    for name in SANITY_TESTS:
        tests += ["--test", name]
    env = test_env()
    env.pop("ANSIBLE_COLLECTIONS_PATH")
    # the copy is the content, not a part of this git checkout (as make sanity)
    env["ANSIBLE_TEST_CONTENT_ROOT"] = dest
    runs = [("subset", base + tests)]
    if opts.pylint:
        runs.append(("pylint plugins/", base + ["--test", "pylint", "plugins/"]))
    failed = [what for what, argv in runs if run(argv, log, cwd=dest, env=env)]
    tests_run = ", ".join(SANITY_TESTS + (("pylint plugins/",) if opts.pylint else ()))
    if failed:
        return "FAIL", "%s failed (%s)" % (" and ".join(failed), tests_run)
    return "pass", tests_run


STAGE_RUNNERS = {"unit": unit_stage, "sanity": sanity_stage, "lab": lab_stage}


# ------------------------------------------------------------------ main

def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n", maxsplit=1)[0])
    parser.add_argument("--versions", nargs="+", default=list(VERSIONS), help="ansible-core minor versions")
    parser.add_argument("--stages", nargs="+", default=list(STAGES), choices=STAGES)
    parser.add_argument("--python", default=sys.executable,
                        help="the Python the environments are made with (default: this one)")
    parser.add_argument("--cases", type=int, default=4, help="cases of each parametrized unit test function")
    parser.add_argument("--workers", type=int, default=2, help="pytest-xdist workers of the unit stage")
    parser.add_argument("--pylint", action="store_true", help="the sanity stage runs pylint on plugins/ too")
    parser.add_argument("--list-unit", action="store_true", help="print the unit test files of the unit stage")
    opts = parser.parse_args(argv)
    bad = [v for v in opts.versions if not VERSION_RE.match(v)]
    if bad:
        parser.error("versions are ansible-core minor versions such as 2.16, got %s" % ", ".join(bad))
    if opts.cases < 0 or opts.workers < 1:
        parser.error("--cases must be 0 (all) or more, --workers 1 or more")
    return opts


def main(argv=None):
    opts = parse_args(sys.argv[1:] if argv is None else argv)
    if opts.list_unit:
        sys.stdout.write("\n".join(unit_files()) + "\n")
        return 0
    if not os.path.isdir(BUILD):
        os.makedirs(BUILD)
    rows = []
    for version in opts.versions:
        log_path = os.path.join(BUILD, "%s.log" % version)
        with open(log_path, "w") as log:
            started = time.monotonic()
            if ensure_venv(version, opts.python, log):
                rows.append((version, "venv", "FAIL", time.monotonic() - started, "see %s" % log_path))
                continue
            rows.append((version, "venv", "pass", time.monotonic() - started, "ansible-core %s" % core_version(version)))
            for stage in opts.stages:
                sys.stdout.write("==> ansible-core %s: %s\n" % (version, stage))
                sys.stdout.flush()
                started = time.monotonic()
                log.write("==> %s\n" % stage)
                result, note = STAGE_RUNNERS[stage](version, opts, log)
                rows.append((version, stage, result, time.monotonic() - started, note))
                if result != "pass":
                    sys.stdout.write("    %s: %s (log: %s)\n" % (result, note, log_path))
    return summarize(rows)


def summarize(rows):
    out = ["", "make compat summary:", "%-8s %-8s %-6s %8s  %s" % ("version", "stage", "result", "time", "")]
    totals = {}
    for version, stage, result, seconds, note in rows:
        out.append("%-8s %-8s %-6s %7.0fs  %s" % (version, stage, result, seconds, note))
        totals[version] = totals.get(version, 0.0) + seconds
    for version in sorted(totals):
        out.append("%-8s %-8s %-6s %7.0fs" % (version, "total", "", totals[version]))
    failed = [r for r in rows if r[2] != "pass"]
    out.append("make compat: %s" % ("all stages passed" if not failed else "%d stage(s) did not pass" % len(failed)))
    sys.stdout.write("\n".join(out) + "\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
