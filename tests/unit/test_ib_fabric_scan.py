# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""ib_fabric.scan: the line loop parse_iblinkinfo and parse_ibnetdiscover share (errors, warnings, ok, no output)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.ib_fabric import scan
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
