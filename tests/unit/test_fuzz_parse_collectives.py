# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fuzz parse_nccl_tests and parse_hccl_test with mutated corpus text and arbitrary text.

1650 examples in all in the full tier, a tenth of them in the fast tier (see
property_budget.py). The parsers catch every exception and report it as a
'parser error' entry, so 'no exception' is checked as 'no such entry' (and
no exception escaping); the contract keys and their types are checked on
every result, and every result must be JSON-serializable.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json
import os

from hypothesis import HealthCheck, given, settings, strategies as st

from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_hccl_test import (
    HCCL_TEST_ERRORS, parse_hccl_test)
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_nccl_tests import (
    NCCL_TESTS_ERRORS, parse_nccl_tests)

from property_budget import example_budget

CORPUS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures", "corpus")


def _texts(folder):
    path = os.path.join(CORPUS, folder)
    out = []
    for name in sorted(os.listdir(path)):
        with open(os.path.join(path, name), encoding="utf-8") as handle:
            out.append(handle.read())
    return out


NCCL_TEXTS = _texts("nccl_tests")
HCCL_TEXTS = _texts("hccl_tests")
ALL_TEXTS = NCCL_TEXTS + HCCL_TEXTS

INFO_LINES = [
    "host-1:12:34 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/IB/0/GDRDMA",
    "[0] h100clust-worker-1:497888:497888 [0] NCCL INFO 4096 Bytes -> Algo 0 proto 0 time 25.874907",
    "GENOA-06:4766:4781 [1] graph/search.cc:1135 NCCL WARN Could not find a path for pattern 4",
    "node:1:2 [3] NCCL INFO Using network Socket",
]
PREFIXES = ["[1,0]<stdout>:", "[1,3]<stderr>: ", "0: ", "12: ", "[0] ", "node-a: ", "$ ", "\t", "#"]

NUMBER = (int, float)
SETTINGS = dict(deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])


def _mutate(text, ops):
    lines = text.split("\n")
    for kind, where, value in ops:
        if kind == "truncate":
            joined = "\n".join(lines)
            lines = joined[:where % (len(joined) + 1)].split("\n")
            continue
        if not lines:
            lines = [""]
        at = where % len(lines)
        line = lines[at]
        if kind == "delete":
            del lines[at]
        elif kind == "duplicate":
            lines.insert(at, line)
        elif kind == "info":
            lines.insert(at, INFO_LINES[value % len(INFO_LINES)])
        elif kind == "info_inside":
            cut = value % (len(line) + 1)
            lines[at] = line[:cut] + INFO_LINES[value % len(INFO_LINES)] + "\n" + line[cut:]
        elif kind == "prefix":
            lines[at] = PREFIXES[value % len(PREFIXES)] + line
        elif kind == "flip" and line:
            cut = value % len(line)
            lines[at] = line[:cut] + chr(32 + (value * 7919) % 0x2FF0) + line[cut + 1:]
        elif kind == "swap" and len(lines) > 1:
            other = value % len(lines)
            lines[at], lines[other] = lines[other], lines[at]
    return "\n".join(lines)


OPS = st.lists(st.tuples(
    st.sampled_from(["delete", "duplicate", "info", "info_inside", "prefix", "flip", "swap", "truncate"]),
    st.integers(min_value=0, max_value=10 ** 6), st.integers(min_value=0, max_value=10 ** 6)), max_size=12)


def _check_common(result, catalog):
    assert isinstance(result, dict)
    json.dumps(result)
    assert isinstance(result["header"], dict)
    assert isinstance(result["rows"], list)
    assert isinstance(result["warnings"], list) and all(isinstance(w, str) for w in result["warnings"])
    assert isinstance(result["errors"], list)
    for entry in result["errors"]:
        assert set(("code", "message", "cause", "fix")) <= set(entry)
        assert entry["code"] in catalog, entry["code"]
        assert isinstance(entry["message"], str) and isinstance(entry["cause"], str) and isinstance(entry["fix"], str)
        assert not entry["message"].startswith("parser error"), entry["message"]
    assert isinstance(result["ok"], bool)
    assert result["ok"] == (bool(result["rows"]) and not result["errors"])


def check_nccl(result):
    _check_common(result, NCCL_TESTS_ERRORS)
    for key in ("test", "version", "nccl_version", "transport"):
        assert result[key] is None or isinstance(result[key], str), key
    for key in ("avg_busbw_gbs", "max_busbw_gbs"):
        assert result[key] is None or isinstance(result[key], float), key
    assert result["out_of_bounds"] is None or isinstance(result["out_of_bounds"], int)
    for rank in result["ranks"]:
        assert set(rank) == set(("rank", "group", "pid", "host", "device", "bus_id", "name"))
        assert isinstance(rank["rank"], int) and (rank["host"] is None or isinstance(rank["host"], str))
    for row in result["rows"]:
        assert isinstance(row["bytes"], int) and row["bytes"] >= 0
        assert row["count"] is None or isinstance(row["count"], int)     # rccl-tests JSON has no count
        assert row["type"] is None or isinstance(row["type"], str)
        assert row["redop"] is None or isinstance(row["redop"], str)
        assert row["root"] is None or isinstance(row["root"], int)
        assert row["out_of_place"] is not None or row["in_place"] is not None
        for side in ("out_of_place", "in_place"):
            group = row[side]
            if group is None:
                continue
            for key in ("time_us", "algbw_gbs", "busbw_gbs"):
                assert group[key] is None or isinstance(group[key], float), (key, group)
            assert group["wrong"] is None or isinstance(group["wrong"], NUMBER)


def check_hccl(result):
    _check_common(result, HCCL_TEST_ERRORS)
    assert result["test"] is None or isinstance(result["test"], str)
    for row in result["rows"]:
        assert isinstance(row["bytes"], int)
        assert row["avg_time_us"] is None or isinstance(row["avg_time_us"], float)
        assert row["algbw_gbs"] is None or isinstance(row["algbw_gbs"], float)
        assert row["avg_time_us"] is not None or row["algbw_gbs"] is not None
        assert row["check"] in ("success", "failed", None) or isinstance(row["check"], str)


@example_budget(600)
def test_nccl_parser_on_mutated_corpus(examples):
    @settings(max_examples=examples, **SETTINGS)
    @given(st.sampled_from(ALL_TEXTS), OPS)
    def nccl_parser_on_mutated_corpus(text, ops):
        check_nccl(parse_nccl_tests(_mutate(text, ops)))
    nccl_parser_on_mutated_corpus()


@example_budget(400)
def test_hccl_parser_on_mutated_corpus(examples):
    @settings(max_examples=examples, **SETTINGS)
    @given(st.sampled_from(ALL_TEXTS), OPS)
    def hccl_parser_on_mutated_corpus(text, ops):
        check_hccl(parse_hccl_test(_mutate(text, ops)))
    hccl_parser_on_mutated_corpus()


@example_budget(250)
def test_nccl_parser_on_arbitrary_input(examples):
    @settings(max_examples=examples, **SETTINGS)
    @given(st.one_of(st.text(), st.binary(), st.none(),
                     st.lists(st.sampled_from(["#", "|", " ", "\n", "NCCL INFO", "NCCL WARN", "Rank", "size", "time",
                                               "busbw", "8", "-1", "float", "sum", "N/A", "1e+00", "[0] ", "0: ",
                                               "h:1:2 [0] ", "data_size(Bytes):", "success", "retcode: 7", "{", "}",
                                               "\"results\"", ":", "\r", "\t", "Out of bounds values", "nThread 1 nGpus"]),
                              max_size=80).map("".join)))
    def nccl_parser_on_arbitrary_input(value):
        check_nccl(parse_nccl_tests(value))
    nccl_parser_on_arbitrary_input()


@example_budget(250)
def test_hccl_parser_on_arbitrary_input(examples):
    @settings(max_examples=examples, **SETTINGS)
    @given(st.one_of(st.text(), st.binary(), st.none(),
                     st.lists(st.sampled_from(["|", " ", "\n", "8192", "1.5", "success", "failed", "NULL",
                                               "data_size(Bytes):", "aveg_time(us):", "alg_bandwidth(GB/s):",
                                               "check_result:", "the minbytes is 8", "retcode: 7", "[1,0]<stdout>:",
                                               "HCCL_E_TIMEOUT", "rank id 1, check result failed", "\t"]),
                              max_size=80).map("".join)))
    def hccl_parser_on_arbitrary_input(value):
        check_hccl(parse_hccl_test(value))
    hccl_parser_on_arbitrary_input()


@example_budget(150)
def test_nccl_parser_on_arbitrary_json(examples):
    @settings(max_examples=examples, **SETTINGS)
    @given(st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=20),
                        lambda children: st.lists(children, max_size=5)
                        | st.dictionaries(st.sampled_from(["results", "config", "devices", "size", "out_of_place",
                                                           "in_place", "time", "bus_bw", "nwrong", "root", "args",
                                                           "average_bus_bandwidth", "out_of_bounds", "errors", "inPlace",
                                                           "busBw", "name", "count", "okay", "bandwidth"]),
                                          children, max_size=6), max_leaves=30))
    def nccl_parser_on_arbitrary_json(doc):
        check_nccl(parse_nccl_tests(doc))
        check_nccl(parse_nccl_tests(json.dumps(doc)))
    nccl_parser_on_arbitrary_json()
