# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fuzz parse_perftest: mutated real outputs and arbitrary input never raise and keep the contract.

Examples: 700 mutated corpus texts + 400 arbitrary strings + 200 arbitrary bytes/lists
+ 300 perftest-vocabulary soups + 200 layout-invariance checks = 1800 in the full tier, a
tenth of them in the fast tier (see property_budget.py).
Runs derandomized (repeatable in CI); set COMMCHECK_FUZZ_RANDOM=1 to explore new examples.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_perftest import (
    PERFTEST_ERRORS,
    parse_perftest,
)
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.perftest_result import (
    BW_ROW_KEYS,
    LAT_ROW_KEYS,
)

from property_budget import example_budget

CORPUS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures", "corpus")
TEXTS = {}
for _folder in ("perftest_bw", "perftest_lat"):
    for _name in sorted(os.listdir(os.path.join(CORPUS, _folder))):
        with open(os.path.join(CORPUS, _folder, _name), encoding="utf-8") as _handle:
            TEXTS[_folder + "/" + _name] = _handle.read()
NAMES = sorted(TEXTS)

RANDOM = os.environ.get("COMMCHECK_FUZZ_RANDOM") == "1"


def fuzz_settings(examples):
    return settings(max_examples=examples, deadline=None, derandomize=not RANDOM, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def optional(value, kinds):
    return value is None or (isinstance(value, kinds) and not isinstance(value, bool))


def check_contract(result):
    assert isinstance(result, dict)
    assert result["test"] in (None, "write", "read", "send", "atomic")
    assert result["metric"] in (None, "bw", "lat")
    assert isinstance(result["bidirectional"], bool)
    assert result["side"] in (None, "server", "client")
    settings_ = result["settings"]
    assert isinstance(settings_, dict)
    assert settings_["device"] is None or isinstance(settings_["device"], str)
    assert optional(settings_["qps"], int)
    assert optional(settings_["mtu"], int)
    assert optional(settings_["gid_index"], int)
    assert settings_["rdma_cm"] in (None, True, False)
    assert settings_["link_type"] is None or isinstance(settings_["link_type"], str)
    for key in ("transport_type", "connection_type"):
        assert settings_[key] is None or isinstance(settings_[key], str)
    for key in ("local_addresses", "remote_addresses"):
        assert isinstance(result[key], list)
        assert all(isinstance(entry, dict) for entry in result[key])
    assert isinstance(result["rows"], list)
    for row in result["rows"]:
        assert isinstance(row["bytes"], int) and not isinstance(row["bytes"], bool) and row["bytes"] >= 0
        assert optional(row["iterations"], int)
        keys = LAT_ROW_KEYS if result["metric"] == "lat" else BW_ROW_KEYS
        for key in keys[2:]:
            assert optional(row[key], (int, float)), (key, row)
    assert isinstance(result["errors"], list)
    for entry in result["errors"]:
        assert entry["code"] in PERFTEST_ERRORS
        for key in ("message", "cause", "fix"):
            assert isinstance(entry[key], str)
        assert (entry["cause"], entry["fix"]) == PERFTEST_ERRORS[entry["code"]]
        assert isinstance(entry["evidence"], list)
    assert isinstance(result["warnings"], list) and all(isinstance(w, str) for w in result["warnings"])
    assert isinstance(result["ok"], bool)
    assert result["ok"] == (bool(result["rows"]) and not result["errors"])


JUNK = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=80)
PERFTEST_WORDS = [
    "#bytes", "#iterations", "BW peak[MB/sec]", "BW average[Gb/sec]", "MsgRate[Mpps]", "t_min[usec]",
    "t_typical[usec]", "99% percentile[usec]", "tps average", "RDMA_Write BW Test", "Send Latency Test",
    "Atomic FETCH_AND_ADD BW Test", "Bidirectional", " Mtu             : 4096[B]", " GID index       : 3",
    " Link type       : Ethernet", " Number of qps   : 4\t\tTransport type : IB", "local address:", "remote address:",
    "LID 0x01 QPN 0x0048 PSN 0xf5aed1", "GID: 00:00:00:00:00:00:00:00:00:00:255:255:10:0:0:1",
    "* Waiting for client to connect... *", "Couldn't allocate MR", "Port number 1 state is Down",
    "Conflicting CPU frequency values detected: 1.0 != 2.0. CPU Frequency is not max.", "Usage:", "ERRNO: x",
    "-" * 87, "65536", "5000", "0.00", "392.34", "nan", "-1", "1e309", "\t", "  ", ":", "[", "]", "\r", "\x1b[31m",
    "[1,0]<stdout>:", "0: ", "ib_write_bw -d mlx5_0", "Completed: now", "Total run time: 1.5s", "#, cycles",
]


@st.composite
def mutated_corpus(draw):
    lines = TEXTS[draw(st.sampled_from(NAMES))].splitlines()
    for _step in range(draw(st.integers(0, 6))):
        op = draw(st.sampled_from(("delete", "duplicate", "insert", "flip", "truncate", "prefix", "swap", "join")))
        if not lines:
            lines = [draw(JUNK)]
            continue
        at = draw(st.integers(0, len(lines) - 1))
        if op == "delete":
            del lines[at]
        elif op == "duplicate":
            lines.insert(at, lines[at])
        elif op == "insert":
            lines.insert(at, draw(JUNK | st.sampled_from(PERFTEST_WORDS)))
        elif op == "flip" and lines[at]:
            pos = draw(st.integers(0, len(lines[at]) - 1))
            lines[at] = lines[at][:pos] + draw(st.characters(blacklist_categories=("Cs",))) + lines[at][pos + 1:]
        elif op == "truncate":
            lines = lines[:at]
            if lines:
                lines[-1] = lines[-1][:draw(st.integers(0, len(lines[-1])))]
        elif op == "prefix":
            prefix = draw(st.sampled_from(("[1,0]<stdout>:", "[3] ", "0: ", "   ", "\t", "host1: ", "$ ")))
            lines = [prefix + line for line in lines]
        elif op == "swap" and len(lines) > 1:
            other = draw(st.integers(0, len(lines) - 1))
            lines[at], lines[other] = lines[other], lines[at]
        elif op == "join" and at + 1 < len(lines):
            lines[at:at + 2] = [lines[at] + lines[at + 1]]
    return "\n".join(lines)


@example_budget(700)
def test_mutated_corpus_keeps_the_contract(examples):
    @fuzz_settings(examples)
    @given(mutated_corpus())
    def mutated_corpus_keeps_the_contract(text):
        check_contract(parse_perftest(text))
    mutated_corpus_keeps_the_contract()


@example_budget(400)
def test_arbitrary_text(examples):
    @fuzz_settings(examples)
    @given(st.text(max_size=2000))
    def arbitrary_text(text):
        check_contract(parse_perftest(text))
    arbitrary_text()


LINE_ITEMS = st.one_of(st.text(max_size=100), st.binary(max_size=50), st.none())


@example_budget(200)
def test_arbitrary_bytes_lists_and_objects(examples):
    @fuzz_settings(examples)
    @given(st.one_of(st.binary(max_size=2000), st.lists(LINE_ITEMS, max_size=30), st.none(), st.integers(), st.floats()))
    def arbitrary_bytes_lists_and_objects(value):
        check_contract(parse_perftest(value))
    arbitrary_bytes_lists_and_objects()


@example_budget(300)
def test_perftest_vocabulary_soup(examples):
    @fuzz_settings(examples)
    @given(st.lists(st.lists(st.sampled_from(PERFTEST_WORDS), min_size=1, max_size=8).map(" ".join), max_size=40))
    def perftest_vocabulary_soup(lines):
        check_contract(parse_perftest("\n".join(lines)))
    perftest_vocabulary_soup()


@example_budget(200)
def test_layout_does_not_change_the_result(examples):
    @fuzz_settings(examples)
    @given(st.sampled_from(NAMES), st.sampled_from(("", "   ", "\t", "        ", "[1,0]<stdout>:", "[12] ", "7: ")),
           st.sampled_from(("", " ", "\t", "   ")), st.sampled_from(("\n", "\r\n")))
    def layout_does_not_change_the_result(name, prefix, suffix, newline):
        original = parse_perftest(TEXTS[name])
        changed = parse_perftest(newline.join(prefix + line + suffix for line in TEXTS[name].splitlines()))
        check_contract(changed)
        assert changed["rows"] == original["rows"]
        assert [e["code"] for e in changed["errors"]] == [e["code"] for e in original["errors"]]
        for key in ("test", "metric", "bidirectional", "side", "settings", "ok"):
            assert changed[key] == original[key], key
    layout_does_not_change_the_result()
