# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""tool_result: the full result of the RDMA tool parsers, built one way (never raising, never silently empty)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.text import error_catalog
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.tool_result import tool_result
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers import (
    parse_ibdev2netdev, parse_ibstat, parse_ibv_devinfo, parse_rdma_link, parse_show_gids)

CATALOG = error_catalog({}, "demo")
EMPTY = {"rows": [], "count": None, "errors": [], "warnings": []}


def test_what_the_parse_read_comes_back_as_it_is():
    result = tool_result(lambda text: {"rows": [text], "count": 1, "errors": [], "warnings": []}, "x", "demo",
                         EMPTY, CATALOG)
    assert result == {"rows": ["x"], "count": 1, "errors": [], "warnings": []}


def test_a_parse_that_raises_gives_the_empty_result_with_a_parser_error():
    def broken(_text):
        raise KeyError("gid")
    result = tool_result(broken, "some text", "demo", EMPTY, CATALOG)
    assert [e["code"] for e in result["errors"]] == ["parser_error"]
    assert "KeyError" in result["errors"][0]["message"]
    assert result["rows"] == [] and result["count"] is None
    assert EMPTY == {"rows": [], "count": None, "errors": [], "warnings": []}


def test_nothing_read_adds_a_warning_a_string_or_an_entry():
    def nothing(_text):
        return {"rows": [], "count": None, "errors": [], "warnings": []}
    plain = tool_result(nothing, "hello there\n", "demo", EMPTY, CATALOG)
    assert len(plain["warnings"]) == 1 and "demo" in plain["warnings"][0] and "hello there" in plain["warnings"][0]
    entry = tool_result(nothing, "hello there\n", "demo", EMPTY, CATALOG, warning_entries=True)
    assert entry["warnings"][0]["code"] == "not_recognised"


def test_a_key_of_the_empty_result_that_holds_something_counts_as_read():
    counted = tool_result(lambda text: {"rows": [], "count": 0, "errors": [], "warnings": []}, "n=0", "demo",
                          EMPTY, CATALOG)
    assert counted["warnings"] == []


def test_settle_runs_before_the_unread_check():
    seen = []

    def settle(result):
        seen.append(dict(result))
        result["rows"].append("settled")
    result = tool_result(lambda text: {"rows": [], "count": None, "errors": [], "warnings": []}, "x", "demo",
                         EMPTY, CATALOG, settle=settle)
    assert seen and result["rows"] == ["settled"] and result["warnings"] == []


def test_the_tool_parsers_say_when_they_read_nothing():
    text = "hello there\n"
    for full, tool in ((parse_ibdev2netdev.parse_ibdev2netdev_full, "ibdev2netdev"),
                       (parse_rdma_link.parse_rdma_link_full, "rdma link"),
                       (parse_show_gids.parse_show_gids_full, "show_gids"),
                       (parse_ibstat.parse_ibstatus_full, "ibstatus"),
                       (parse_ibv_devinfo.parse_ibv_devices_full, "ibv_devices")):
        warnings = full(text)["warnings"]
        assert len(warnings) == 1, tool
        assert tool in str(warnings[0])
