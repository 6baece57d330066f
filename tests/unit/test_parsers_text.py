# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The reading helpers the parsers share (module_utils/parsers/text.py) and the perftest line handlers."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.perftest_lines import process_line
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.perftest_result import State
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.text import (
    MAX_LINE,
    PARSER_ERROR,
    bounded_lines,
    error_catalog,
    nonblank_lines,
    parse_or_report,
    to_float,
    to_int,
)


def test_bounded_lines_cut_long_lines_and_keep_blank_ones():
    lines = bounded_lines("a\r\n\n" + "x" * (MAX_LINE + 10))
    assert lines == ["a", "", "x" * MAX_LINE]


def test_nonblank_lines_drop_lines_blank_within_the_bound():
    assert nonblank_lines("a\n  \n\t\n" + " " * MAX_LINE + "late\nb") == ["a", "b"]


def test_error_catalog_ends_with_parser_error_and_unknown():
    catalog = error_catalog({"no_device": ("cause", "fix")}, "ibstat")
    assert list(catalog) == ["no_device", "parser_error", "unknown"]
    assert catalog["parser_error"] == PARSER_ERROR
    assert catalog["unknown"][0] == "ibstat printed an error this parser does not know."
    assert error_catalog({}, "iperf3", verb="reported")["unknown"][0].startswith("iperf3 reported ")


def test_parse_or_report_returns_the_parse_or_the_empty_result_with_the_failure():
    catalog = error_catalog({}, "tool")
    assert parse_or_report(lambda text: {"rows": [text], "errors": []}, "x", {"rows": [], "errors": []}, catalog) == {
        "rows": ["x"], "errors": []}

    def broken(text):
        raise KeyError("k")

    result = parse_or_report(broken, "x", {"rows": [], "errors": []}, catalog)
    assert result["rows"] == []
    assert [(e["code"], e["message"]) for e in result["errors"]] == [("parser_error", "KeyError: 'k'")]


def test_numbers_are_finite_or_the_default():
    assert to_int("0x10") == 16 and to_int("4.0") == 4 and to_int("4.5") is None and to_int("nan", 7) == 7
    assert to_float(" 2.5 ") == 2.5 and to_float("inf") is None and to_float(None, 0.0) == 0.0


def test_perftest_line_handlers_take_result_fields_and_skip_blank_lines():
    state = State()
    for line in ("", "   ", "Connected:  Mon Jan 1 ", "Total run time: 5.00 s", "Completed: later"):
        process_line(state, line)
    result = state.result
    assert (result["connected_at"], result["completed_at"], result["total_run_time_s"]) == (
        "Mon Jan 1", "later", 5.0)
    assert state.warnings == [] and result["errors"] == []
