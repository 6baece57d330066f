# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The molecule scenario extensions/molecule/oneclick (default driver, no Docker).

``molecule test -s oneclick``: create brings a 4-host lab up (tests/lab/lab.py),
converge runs the one-click play on it, verify checks the report and the
history, destroy takes the lab down. Skipped with the reason when molecule is
not installed or the lab cannot run here (not root, no network namespaces).
About 1-2 minutes on the 2-core build machine.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os
import re
import shutil
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
VENV_BIN = os.path.join(REPO, ".venv", "bin")
sys.path.insert(0, os.path.join(REPO, "tests", "lab"))

import lab as lablib  # noqa: E402  pylint: disable=wrong-import-position

# The full tier's: the fast tier runs the same healthy one-click play on a 4-host lab (test_oneclick_lab.py).
pytestmark = [pytest.mark.lab, pytest.mark.slow, pytest.mark.full]


def molecule_binary():
    path = os.path.join(VENV_BIN, "molecule")
    return path if os.path.exists(path) else shutil.which("molecule")


@pytest.fixture(scope="module")
def molecule():
    binary = molecule_binary()
    if not binary:
        pytest.skip("molecule is not installed (pip install molecule into .venv)")
    reason = lablib.unavailable()
    if reason:
        pytest.skip(reason)
    return binary


def test_oneclick_scenario_converges_and_verifies(molecule):
    name = ("mol%d" % os.getpid())[:12]
    env = dict(os.environ)
    env["PATH"] = VENV_BIN + os.pathsep + env.get("PATH", "")
    env["COMMCHECK_MOLECULE_LAB"] = name
    env["ANSIBLE_NOCOLOR"] = "1"
    env["NO_COLOR"] = "1"
    env.pop("ANSIBLE_CONFIG", None)
    lablib.down(name)
    try:
        proc = subprocess.run([molecule, "test", "-s", "oneclick"], cwd=REPO, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, universal_newlines=True, timeout=900, check=False)
    finally:
        lablib.down(name)
    out = proc.stdout
    assert proc.returncode == 0, out[-8000:]
    for step in ("create", "converge", "verify", "destroy"):
        # "[oneclick > create] Executed: Successful" without colours, "oneclick ➜ create: ..." with
        assert re.search(r"oneclick\W+%s\W+Executed: Successful" % step, out), step
    # the verify step really checked the report and the history
    assert "Check the report files and records" in out and "Check that the history has the run and its summary" in out
    assert "failed=0" in out and "failed=1" not in out
    # destroy took the lab down
    assert name not in lablib.list_labs()
