# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the tests of the nccl-tests corpus share (test_parse_nccl_tests.py, test_nccl_real_device_*.py):
where the files are, reading and parsing one, and picking its errors. Which file came from which command
is in each test file's docstring; test_parse_nccl_tests.py checks that every corpus file has a test."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os

from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_nccl_tests import parse_nccl_tests

CORPUS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures", "corpus", "nccl_tests")


def load(name):
    """The file's bytes, as captured."""
    with open(os.path.join(CORPUS, name), "rb") as handle:
        return handle.read()


def lines_of(name):
    return load(name).decode("utf-8").splitlines()


def parse(name):
    return parse_nccl_tests(load(name))


def codes(result):
    return [e["code"] for e in result["errors"]]


def error(result, code):
    """The one error of ``code`` in a parse result."""
    found = [e for e in result["errors"] if e["code"] == code]
    assert len(found) == 1, (code, codes(result))
    return found[0]
