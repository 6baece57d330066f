# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""ib_fabric.scan: the line loop parse_iblinkinfo and parse_ibnetdiscover share (errors, warnings, ok, no output);
ib_fabric.read_scan: the same with a new reader, never raising."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.ib_fabric import read_scan, scan
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.text import error_catalog

CATALOG = error_catalog({
    "no_output": ("fakescan printed nothing.", "Run it again."),
    "scan_failed": ("The scan failed.", "Read its message."),
}, "fakescan")


class _Reader(object):
    """Knows the lines that start with 'node'; finish says ok when it read one and counts the calls."""

    def __init__(self):
        self.result = {"nodes": [], "errors": [], "warnings": [], "ok": False}
        self.seen = []
        self.finished = 0

    def read(self, raw, clean):
        self.seen.append((raw, clean))
        if clean.strip().startswith("node"):
            self.result["nodes"].append(clean.strip())
            return True
        return False

    def finish(self):
        self.finished += 1
        return bool(self.result["nodes"])


def test_known_lines_go_to_the_reader_failures_are_errors_and_unknown_lines_warnings():
    reader = _Reader()
    text = "node a\nibwarn: [123] mad_rpc: _do_madrpc failed\nsomething odd\n\niberror: discover failed\nnode b\n"
    result = scan(text, "fakescan", CATALOG, reader)
    assert result is reader.result
    assert result["nodes"] == ["node a", "node b"]
    assert [e["code"] for e in result["errors"]] == ["scan_failed"]
    assert result["warnings"] == ["ibwarn: [123] mad_rpc: _do_madrpc failed", "something odd"]
    assert result["ok"] is True
    assert reader.finished == 1
    # the error and warning lines never reach the reader; the blank ones do, and are no warnings
    assert [clean for _raw, clean in reader.seen] == ["node a", "something odd", "", "node b", ""]


def test_blank_output_is_the_no_output_error_without_reading_a_line():
    reader = _Reader()
    result = scan("\n  \n", "fakescan", CATALOG, reader)
    assert [e["code"] for e in result["errors"]] == ["no_output"]
    assert result["errors"][0]["message"] == "fakescan printed nothing"
    assert (result["ok"], reader.seen, reader.finished) == (False, [], 0)


def test_nothing_read_says_so_in_a_warning_and_ok_stays_false():
    reader = _Reader()
    result = scan("this is no scan\n", "fakescan", CATALOG, reader)
    assert result["ok"] is False and result["errors"] == []
    assert result["warnings"][0] == "this is no scan"
    assert any("fakescan" in w for w in result["warnings"][1:])


class _BrokenReader(_Reader):
    """Raises on its second line, as a reader with a bug would."""

    def read(self, raw, clean):
        if len(self.seen) == 1:
            raise IndexError("list index out of range")
        return _Reader.read(self, raw, clean)


def test_read_scan_reads_with_a_new_reader_each_call():
    made = []

    def new_reader():
        made.append(_Reader())
        return made[-1]

    first = read_scan("node a\n", "fakescan", CATALOG, new_reader)
    second = read_scan("node b\nnode c\n", "fakescan", CATALOG, new_reader)
    assert (first["nodes"], first["ok"], first["errors"]) == (["node a"], True, [])
    assert (second["nodes"], second["ok"]) == (["node b", "node c"], True)
    assert [r.finished for r in made].count(1) == 2


def test_read_scan_turns_a_reader_that_raises_into_an_empty_result_with_a_parser_error():
    result = read_scan("node a\nnode b\nnode c\n", "fakescan", CATALOG, _BrokenReader)
    assert result["nodes"] == [] and result["ok"] is False
    assert [e["code"] for e in result["errors"]] == ["parser_error"]
    assert result["errors"][0]["message"] == "IndexError: list index out of range"
    assert result["errors"][0]["cause"] == CATALOG["parser_error"][0]
