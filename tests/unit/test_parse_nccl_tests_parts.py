# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The parts of parse_nccl_tests.py the capture tests pass by: which texts are read as JSON (whole, pasted,
embedded, JSON lines), what an undecodable or non-JSON input reports, the last-error warnings' limits, and a
parser that raises."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json

from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers import parse_nccl_tests as pnt
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_nccl_tests import (
    parse_nccl_tests, parse_nccl_tests_json)

from test_parse_nccl_tests import NCCL_JSON

HEADER = ("# nThread 1 nGpus 1 minBytes 8 maxBytes 16 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 "
          "validation: 1 graph: 0\n")
ROW = "           8             2     float     sum      -1    10.50    0.00    0.00      0    10.10    0.00    0.00      0\n"


def rccl_line(size):
    return json.dumps({"numCycle": 0, "name": "AllReduce", "gpus": 4, "size": size, "type": "float", "redop": "sum",
                       "inPlace": 0, "time": 19.18, "algBw": 0.053, "busBw": 0.080, "wrong": "0"})


def errors_of(result):
    return [(e["code"], e["message"]) for e in result["errors"]]


def test_json_behind_quote_markers_and_before_prose_is_read():
    text = json.dumps(NCCL_JSON, indent=1)
    quoted = "\n".join("> " + line for line in text.splitlines())
    for paste in (quoted, quoted + "\n> that was the file"):
        result = parse_nccl_tests(paste)
        assert result["format"] == "json" and len(result["rows"]) == 2 and result["errors"] == []


def test_json_after_blank_lines_is_whole_json():
    result = pnt._whole_json("\n\n  " + json.dumps([json.loads(rccl_line(1024))]))
    assert result["format"] == "json" and len(result["rows"]) == 1


def test_a_launcher_rank_prefix_alone_is_no_json():
    result = parse_nccl_tests("[1,0]")
    assert result["format"] == "text" and [code for code, _m in errors_of(result)] == ["no_table"]


def test_a_text_with_a_header_or_rows_of_its_own_is_not_read_for_embedded_json():
    """The text's own table (its header, or rows without one) wins over a JSON document further down."""
    result = parse_nccl_tests(HEADER + json.dumps(NCCL_JSON, indent=1))
    assert result["format"] == "text" and result["header"]["nthread"] == 1 and result["rows"] == []
    result = parse_nccl_tests(ROW + json.dumps(NCCL_JSON, indent=1))
    assert result["format"] == "text" and [row["bytes"] for row in result["rows"]] == [8]


def test_an_undecodable_json_start_says_so():
    result = parse_nccl_tests('{"version": 1, "config": ')
    assert result["format"] == "json"
    assert errors_of(result) == [("json_invalid", "the input starts like JSON but cannot be decoded"),
                                 ("no_table", "no result rows in the input")]


def test_json_input_that_is_no_object_or_list_is_invalid():
    for text in ("not json", "5"):
        assert errors_of(parse_nccl_tests_json(text)) == [
            ("json_invalid", "input is not a JSON object or list"), ("no_table", "no nccl-tests result rows in the output")]


def test_json_lines_with_blank_lines_between_are_read_whole():
    result = parse_nccl_tests_json(rccl_line(1024) + "\n\n" + rccl_line(2048) + "\n")
    assert [row["bytes"] for row in result["rows"]] == [1024, 2048] and result["errors"] == []


def test_last_errors_of_the_json_are_warnings_a_hundred_listed_each_cut_at_1000_characters():
    doc = dict(NCCL_JSON, errors=["x" * 1200] + ["odd thing %d" % i for i in range(120)])
    result = parse_nccl_tests_json(doc)
    assert result["errors"] == []
    assert result["warnings"][0] == "NCCL last error: " + "x" * (1000 - len("NCCL last error: "))
    assert result["warnings"][1] == "NCCL last error: odd thing 0"
    assert len([w for w in result["warnings"] if w.startswith("NCCL last error")]) == 100


def test_an_error_the_json_reports_is_kept():
    doc = dict(NCCL_JSON, average_bus_bandwidth={"bandwidth": 0.0075, "okay": "false"})
    assert [code for code, _m in errors_of(parse_nccl_tests_json(doc))] == ["bandwidth_below_min"]


def test_a_parser_that_raises_reports_an_unknown_error(monkeypatch):
    def boom(*_args):
        raise RuntimeError("boom")

    monkeypatch.setattr(pnt, "read_nccl_json", boom)
    result = parse_nccl_tests_json(NCCL_JSON)
    assert errors_of(result) == [("unknown", "parser error: boom"),
                                 ("no_table", "no nccl-tests result rows in the output")]
    monkeypatch.setattr(pnt.TextParser, "parse", boom)
    result = parse_nccl_tests("# nThread 1\n")
    assert errors_of(result) == [("unknown", "parser error: boom")]
    assert result["errors"][0]["cause"] and result["rows"] == [] and result["format"] == "text"


def test_a_pasted_rccl_list_is_read_whole_and_a_paste_without_json_stays_text():
    rccl = json.dumps([json.loads(rccl_line(1024)), json.loads(rccl_line(2048))], indent=1)
    result = parse_nccl_tests("\n".join("> " + line for line in rccl.splitlines()))
    assert result["format"] == "json" and [row["bytes"] for row in result["rows"]] == [1024, 2048]
    result = parse_nccl_tests("> the run printed {nothing}\n> and stopped")
    assert result["format"] == "text" and [code for code, _m in errors_of(result)] == ["no_table"]
