# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Property tests: parse_ibnetdiscover and parse_iblinkinfo never raise (no parser_error entry either) and keep
their result's shape on their real outputs damaged the way captures get damaged (lines lost or repeated, characters
changed, the output cut), on arbitrary text and on bytes; the leaf lookups of discovery never raise on what they
return."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery import ib_topology
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_iblinkinfo import parse_iblinkinfo
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_ibnetdiscover import (
    parse_ibnetdiscover,
)

from property_budget import example_budget
from real_outputs import REAL

SETTINGS = dict(deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
TEXTS = []
for _tool in ("ibnetdiscover", "iblinkinfo"):
    for _name in sorted(os.listdir(os.path.join(REAL, _tool))):
        if _name.endswith(".txt"):
            with open(os.path.join(REAL, _tool, _name), encoding="utf-8") as _handle:
                TEXTS.append(_handle.read())
GUIDS = {"0xb8cef60300025b90", "0x0002c90300293e1f", "0x7cfe9003003b4b96", "0xec0d9a03003d677a"}


@st.composite
def damaged(draw):
    lines = draw(st.sampled_from(TEXTS)).split("\n")
    for _step in range(draw(st.integers(0, 4))):
        at = draw(st.integers(0, len(lines) - 1))
        action = draw(st.sampled_from(("drop", "repeat", "change", "cut")))
        line = lines[at]
        if action == "drop":
            del lines[at]
        elif action == "repeat":
            lines.insert(at, line)
        elif action == "change" and line:
            where = draw(st.integers(0, len(line) - 1))
            char = draw(st.sampled_from(['"', "[", "]", "(", ")", "#", "'", "x", " ", "\t", "\x00", "9", "=", "-"]))
            lines[at] = line[:where] + char + line[where + 1:]
        elif action == "cut":
            lines[at] = line[:draw(st.integers(0, len(line)))]
        if not lines:
            lines = [""]
    return "\n".join(lines)


def _check(text):
    for parse, keys in ((parse_ibnetdiscover, ("switches", "cas", "links", "unlinked")),
                        (parse_iblinkinfo, ("switches", "ports", "links"))):
        result = parse(text)
        assert [e["code"] for e in result["errors"] if e["code"] == "parser_error"] == []
        assert all(isinstance(result[key], list) for key in keys + ("errors", "warnings"))
        assert isinstance(result["ok"], bool)
        for port in (1, 2):
            leaf = (ib_topology.ibnetdiscover_leaf if parse is parse_ibnetdiscover else ib_topology.iblinkinfo_leaf)(
                result, port, GUIDS)
            assert leaf is None or set(leaf) == {"leaf", "port", "source"}


@example_budget(600)
def test_damaged_real_outputs_keep_the_contract(examples):
    @settings(max_examples=examples, **SETTINGS)
    @given(damaged())
    def property_(text):
        _check(text)
    property_()


@example_budget(300)
def test_arbitrary_text_and_bytes_keep_the_contract(examples):
    @settings(max_examples=examples, **SETTINGS)
    @given(st.one_of(st.text(), st.binary()))
    def property_(text):
        _check(text)
    property_()
