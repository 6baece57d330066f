# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""plugin_utils.filter_input: what the tool-text parse_* filters accept, and the filter they are made of."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import importlib

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.clusterops.commcheck.plugins.plugin_utils.filter_input import (
    filter_input_text, filter_module, tool_text_filter, tool_text_filter_module)


def _parse(text):
    """List of lines."""
    return text.splitlines()


def _parse_full(text):
    return {"lines": text.splitlines(), "errors": []}


def test_command_result_is_stdout_then_stderr():
    assert filter_input_text({"stdout": "a", "stderr": "b"}, "parse_x") == "a\nb"
    assert filter_input_text({"stdout": "a", "stderr": ""}, "parse_x") == "a"


def test_dict_without_stdout_and_other_types_fail():
    with pytest.raises(AnsibleFilterError, match="parse_x"):
        filter_input_text({"rc": 0}, "parse_x")
    with pytest.raises(AnsibleFilterError, match="got int"):
        filter_input_text(3, "parse_x")


def test_tool_text_filter_with_full_form():
    parse_filter = tool_text_filter("parse_x", _parse, _parse_full)
    assert parse_filter.__name__ == "parse_x_filter"
    assert parse_filter({"stdout": "a\nb"}) == ["a", "b"]
    assert parse_filter("a", full=True) == {"lines": ["a"], "errors": []}


def test_tool_text_filter_without_full_form_takes_no_full():
    parse_filter = tool_text_filter("parse_x", _parse)
    assert parse_filter("a\nb") == ["a", "b"]
    with pytest.raises(TypeError):
        parse_filter("a", full=True)     # pylint: disable=unexpected-keyword-arg


def test_filter_module_offers_the_one_filter():
    filters = tool_text_filter_module("parse_x", _parse, _parse_full)().filters()
    assert list(filters) == ["parse_x"]
    assert filters["parse_x"]("a", full=True)["lines"] == ["a"]


def test_filter_module_offers_the_function_itself_under_its_name():
    module_class = filter_module("parse_y", _parse_full)
    assert module_class().filters() == {"parse_y": _parse_full}
    assert module_class.__name__ == "FilterModule" and module_class.__doc__ == "parse_y filter."


@pytest.mark.parametrize("name", ["parse_hccl_test", "parse_nccl_tests", "parse_perftest"])
def test_parsers_that_read_their_own_input_are_offered_as_they_are(name):
    """These three take what their parser takes (nccl-tests JSON as a dict, a list of lines), not a command result:
    the filter is the parser function itself."""
    plugin = importlib.import_module("ansible_collections.clusterops.commcheck.plugins.filter." + name)
    parser = importlib.import_module("ansible_collections.clusterops.commcheck.plugins.module_utils.parsers." + name)
    assert plugin.FilterModule().filters() == {name: getattr(parser, name)}
