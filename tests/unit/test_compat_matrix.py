# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What ``make compat`` (tests/compat/) runs on each ansible-core: which unit tests, and which of their cases."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os
import sys

import pytest

COMPAT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "compat")
if COMPAT not in sys.path:
    sys.path.insert(0, COMPAT)

import compat_sample  # noqa: E402  pylint: disable=wrong-import-position
import matrix  # noqa: E402  pylint: disable=wrong-import-position


@pytest.mark.parametrize("count, keep, expected", [
    (10, 4, {0, 3, 6, 9}),
    (3, 4, {0, 1, 2}),
    (7, 1, {0}),
    (5, 0, {0, 1, 2, 3, 4}),
])
def test_the_cases_kept_spread_over_the_parameters(count, keep, expected):
    assert compat_sample.spread(count, keep) == expected


def test_the_unit_tests_that_use_ansible_cores_api_are_chosen_through_the_collections_imports():
    chosen = matrix.unit_files()
    # templates with ansible-core's Templar
    assert "tests/unit/test_core_versions.py" in chosen
    # imports only collection code that uses it (fleet_facts -> ansible.plugins.action)
    assert "tests/unit/test_slice_meeting.py" in chosen
    # runs AnsibleModule in-process through ansible.module_utils.testing (a shim before 2.19)
    assert "tests/unit/test_hostile_pair_tools.py" in chosen
    # runs ansible-playbook with this Python's ansible-core
    assert "tests/unit/test_ansible_runner_usage.py" in chosen
    # parsers and verdicts import nothing of ansible-core; filters only its exception classes; modules run
    # through AnsibleModule, which is the same on every supported core: the same on every core
    for same in ("test_parse_iperf3.py", "test_verdict_values.py", "test_schedule.py", "test_pair_module.py"):
        assert "tests/unit/" + same not in chosen, same
    # the release clients have their own pins
    assert "tests/unit/test_collection_clients.py" not in chosen


@pytest.mark.parametrize("module, core", [
    ("ansible.template", True),
    ("ansible.module_utils.testing.patch_module_args", True),
    ("ansible.errors.AnsibleFilterError", False),
    ("ansible.module_utils.basic", False),
    ("ansible_runner", False),
])
def test_which_parts_of_ansible_core_count(module, core):
    assert matrix.is_core_api(module) is core


def test_a_version_is_a_minor_release():
    assert matrix.parse_args(["--versions", "2.16", "2.18"]).versions == ["2.16", "2.18"]
    with pytest.raises(SystemExit):
        matrix.parse_args(["--versions", "2.16; rm -rf /"])


def test_a_failed_stage_names_each_failing_test_with_its_message(tmp_path):
    junit = tmp_path / "lab.junit.xml"
    junit.write_text('<testsuites><testsuite tests="3" failures="1" errors="1"><testcase name="passes"/>'
                     '<testcase name="fails"><failure message="assert 1 == 2">trace</failure></testcase>'
                     '<testcase name="errs"><error message="fixture broke"/></testcase></testsuite></testsuites>')
    assert matrix.junit_failures(str(junit)) == ["fails: assert 1 == 2\ntrace", "errs: fixture broke"]
    assert matrix.junit_failures(str(tmp_path / "none.xml")) == []
