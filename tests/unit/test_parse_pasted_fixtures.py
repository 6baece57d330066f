# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Property: every parser reads a real output pasted the way operators paste it exactly as the output itself.

Every real fixture (tests/fixtures/real, tests/fixtures/corpus, tests/fixtures/iperf3) is decorated with a
random set of paste styles, layered as they nest in practice, innermost first:

- tabs: runs of blanks inside a line (not its indentation) become one tab;
- a note after the line ("# slow one", "<-- this", "<== here", "// check", a left arrow) and a terminal's right
  prompt (a status glyph and a clock, or a bracketed clock, after a wide gap);
- terminal colours around the line, a prompt's window-title escape in front;
- a launcher prefix (mpirun --tag-output, srun --label in both forms, Ray, torch);
- a timestamp (ts, ISO 8601 as kubectl logs --timestamps prints it, journalctl with host and ident, bracketed);
- cat -n line numbers;
- Markdown quote markers or list bullets, then a code fence around it all;
- CRLF line ends.

perftest's table lines are also wrapped at a random width (its header and rows go on on the next lines), and
must read the same table.

The parse of the decorated text must equal the parse of the fixture, key for key: rows, settings, errors,
warnings, everything (with tabs, the messages that quote a line compare with their blanks made one space).
A note is not added to a line that is one word ending in ':' (read as a pdsh host prefix, "node1: #  size ...")
or to a blank line, and cat -n numbers only a text of two lines or more (one tab-separated number in front of
one line is no sure sign of cat -n); every other decoration goes on every line.

The fast tier runs a modest number of examples; the ``full`` variant many more.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os
import textwrap

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_hccl_test import parse_hccl_test
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_ibdev2netdev import (
    parse_ibdev2netdev_full)
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_ibstat import parse_ibstat_full
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_ibv_devinfo import (
    parse_ibv_devices_full, parse_ibv_devinfo_full)
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_iblinkinfo import parse_iblinkinfo
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_ibnetdiscover import (
    parse_ibnetdiscover)
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_iperf3 import parse_iperf3
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_lldpctl import parse_lldpctl
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_smpquery import parse_smpquery
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_nccl_tests import parse_nccl_tests
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_perftest import parse_perftest
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_rdma_link import (
    parse_rdma_link_full, parse_rdma_system)
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_show_gids import (
    parse_show_gids_full)
from real_outputs import codes

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures")

# fixture folder -> parser; corpus/rdma_tools holds several tools, told apart by the file name's start
_BY_FOLDER = {
    "perftest": parse_perftest, "perftest_bw": parse_perftest, "perftest_lat": parse_perftest,
    "nccl_tests": parse_nccl_tests, "hccl_test": parse_hccl_test, "hccl_tests": parse_hccl_test,
    "ibstat": parse_ibstat_full, "ibstatus": parse_ibstat_full, "ibv_devinfo": parse_ibv_devinfo_full,
    "ibdev2netdev": parse_ibdev2netdev_full, "rdma_link": parse_rdma_link_full, "show_gids": parse_show_gids_full,
    "iperf3": parse_iperf3, "lldpctl": parse_lldpctl, "smpquery": parse_smpquery,
    "ibnetdiscover": parse_ibnetdiscover, "iblinkinfo": parse_iblinkinfo,
}
_BY_PREFIX = (("ibv_devices", parse_ibv_devices_full), ("ibv_devinfo", parse_ibv_devinfo_full),
              ("ibdev2netdev", parse_ibdev2netdev_full), ("ibstat", parse_ibstat_full),
              ("rdma_link", parse_rdma_link_full), ("show_gids", parse_show_gids_full),
              ("hiroce3", parse_show_gids_full))


def _parser_of(folder, name):
    if name.startswith("rdma_system"):
        return parse_rdma_system
    if folder == "rdma_tools":
        return next(parse for prefix, parse in _BY_PREFIX if name.startswith(prefix))
    return _BY_FOLDER[folder]


def _fixtures():
    found = []
    for top in ("real", "corpus", "iperf3"):
        base = os.path.join(FIXTURES, top)
        for folder, _dirs, names in sorted(os.walk(base)):
            for name in sorted(names):
                if not name.endswith((".txt", ".json")):
                    continue
                parse = _parser_of(os.path.basename(folder), name)
                with open(os.path.join(folder, name), encoding="utf-8") as handle:
                    found.append((os.path.relpath(os.path.join(folder, name), FIXTURES), parse, handle.read()))
    return found


FIXTURE_LIST = _fixtures()
CLEAN = {}


def _clean_parse(index):
    if index not in CLEAN:
        _name, parse, text = FIXTURE_LIST[index]
        CLEAN[index] = parse(text)
    return CLEAN[index]


# --- the paste styles ------------------------------------------------------------------------------------

NOTES = ("# slow one", "<-- this", "<== here", "// check", "\u2190 look")
RIGHT_PROMPTS = ("      \u2714  10:32:01", "   \u2718 1  took 3s", "        [10:32:01]")
PREFIXES = ("[1,0]<stdout>:", "[3] ", "0: ", "(pid=1234) ", "[rank 1] ",
            "(worker1, rank=1, pid=33870, ip=192.168.0.15) ")
STAMPS = ("Jan 02 10:11:12 ", "2024-05-01T10:11:12.123456789Z ", "Mar  9 07:01:02 node7 ib_write_bw[4242]: ",
          "[2024-05-01 10:11:12] ", "00:00:03.123 ")


def _blank(line):
    return not line.strip()


def _takes_a_note(line):
    """A note goes on a line that is not blank and not one word ending in ':' (a pdsh prefix, kept whole)."""
    words = line.split()
    return bool(words) and not (len(words) == 1 and words[0].endswith(":"))


def _interior_tabs(line):
    body = line.lstrip(" \t")
    indent = line[:len(line) - len(body)]
    out = []
    run = 0
    for char in body:
        if char == " ":
            run += 1
            continue
        out.append("\t" if run >= 2 else " " * run)
        run = 0
        out.append(char)
    out.append(" " * run if run < 2 else "\t")
    return indent + "".join(out)


def decorate(text, style):
    """The text pasted with the drawn style (a dict, see STYLE)."""
    lines = text.split("\n")
    if style["tabs"]:
        lines = [_interior_tabs(line) for line in lines]
    if style["note"] is not None:
        lines = [line + "   " + style["note"] if _takes_a_note(line) else line for line in lines]
    if style["right_prompt"] is not None:
        lines = [line + style["right_prompt"] if not _blank(line) else line for line in lines]
    if style["colour"]:
        lines = ["\x1b[1;32m" + line + "\x1b[0m" if not _blank(line) else line for line in lines]
        lines[0] = "\x1b]0;root@node1: ~\x07" + lines[0]
    if style["prefix"] is not None:
        lines = [style["prefix"] + line for line in lines]
    if style["stamp"] is not None:
        lines = [style["stamp"] + line for line in lines]
    if style["cat_n"] and len(lines) > 1:
        lines = ["%6d\t%s" % (number, line) for number, line in enumerate(lines, 1)]
    if style["markdown"] == "quote":
        lines = ["> " + line if line else ">" for line in lines]
    elif style["markdown"] == "bullets":
        lines = ["- " + line if not _blank(line) else line for line in lines]
    if style["fence"]:
        lines = ["```text"] + lines + ["```"]
    return ("\r\n" if style["crlf"] else "\n").join(lines)


STYLE = st.fixed_dictionaries({
    "tabs": st.booleans(),
    "note": st.none() | st.sampled_from(NOTES),
    "right_prompt": st.none() | st.sampled_from(RIGHT_PROMPTS),
    "colour": st.booleans(),
    "prefix": st.none() | st.sampled_from(PREFIXES),
    "stamp": st.none() | st.sampled_from(STAMPS),
    "cat_n": st.booleans(),
    "markdown": st.sampled_from((None, "quote", "bullets")),
    "fence": st.booleans(),
    "crlf": st.booleans(),
})


def _is_json(text):
    return text.lstrip()[:1] in ("{", "[") and not text.lstrip().startswith("[1,")


def _blanks_as_one(value):
    """The value with every run of blanks in its strings made one space."""
    if isinstance(value, str):
        return " ".join(value.split())
    if isinstance(value, dict):
        return dict((key, _blanks_as_one(item)) for key, item in value.items())
    if isinstance(value, list):
        return [_blanks_as_one(item) for item in value]
    return value


def _check(index, style):
    name, parse, text = FIXTURE_LIST[index]
    if _is_json(text):
        style = dict(style, tabs=False)   # a tab in place of blanks inside a JSON string changes the string
    pasted, clean = parse(decorate(text, style)), _clean_parse(index)
    if style["tabs"]:
        # the messages quote the lines as pasted: the same words, other blanks between them
        pasted, clean = _blanks_as_one(pasted), _blanks_as_one(clean)
    assert pasted == clean, (name, style)


SETTINGS = dict(deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@settings(max_examples=120, **SETTINGS)
@given(st.integers(0, len(FIXTURE_LIST) - 1), STYLE)
def test_a_pasted_real_output_reads_as_the_output(index, style):
    _check(index, style)


@pytest.mark.full
@settings(max_examples=3000, **SETTINGS)
@given(st.integers(0, len(FIXTURE_LIST) - 1), STYLE)
def test_a_pasted_real_output_reads_as_the_output_many_examples(index, style):
    _check(index, style)


@pytest.mark.parametrize("index", range(len(FIXTURE_LIST)), ids=[name for name, _p, _t in FIXTURE_LIST])
def test_every_real_output_reads_the_same_with_every_paste_style_at_once(index):
    style = {"tabs": True, "note": "# slow one", "right_prompt": RIGHT_PROMPTS[0], "colour": True,
             "prefix": PREFIXES[0], "stamp": STAMPS[0], "cat_n": True, "markdown": "quote", "fence": True,
             "crlf": True}
    _check(index, style)


PERFTEST = [index for index, (_name, parse, _text) in enumerate(FIXTURE_LIST) if parse is parse_perftest]
_GLUED = ("run together", "result rows on one line")


def _wrapped(text, width):
    """The text with its table lines (perftest's "#bytes" header and its rows) wrapped at blanks when longer than
    width, the way a wiki or a mail client wraps them."""
    return "\n".join(textwrap.fill(line, width, drop_whitespace=True, break_long_words=False, break_on_hyphens=False)
                     if len(line) > width and line.lstrip()[:1] in "#0123456789" else line
                     for line in text.split("\n"))


@settings(max_examples=40, **SETTINGS)
@given(st.sampled_from(PERFTEST), st.integers(40, 110))
def test_a_perftest_output_wrapped_at_a_width_reads_the_same_table(index, width):
    """perftest's header and rows (a latency row is 130 columns wide) wrapped onto the next line are read whole:
    the same rows, settings and errors. (A line that holds two processes' rows, or a row whose values ran
    together, is no whole row: its wrapped halves can not be told apart from two short rows.)"""
    name, parse, text = FIXTURE_LIST[index]
    clean = _clean_parse(index)
    if any(glued in warning for warning in clean["warnings"] for glued in _GLUED):
        return
    pasted = parse(_wrapped(text, width))
    assert (pasted["rows"], pasted["settings"], codes(pasted)) == (clean["rows"], clean["settings"], codes(clean)), (
        name, width)


def test_the_fixture_list_holds_every_tool():
    parsers = set(parse for _name, parse, _text in FIXTURE_LIST)
    assert len(FIXTURE_LIST) > 200
    assert parsers == {parse_perftest, parse_nccl_tests, parse_hccl_test, parse_ibstat_full, parse_ibv_devinfo_full,
                       parse_ibv_devices_full, parse_ibdev2netdev_full, parse_rdma_link_full, parse_rdma_system,
                       parse_show_gids_full, parse_iperf3, parse_lldpctl, parse_smpquery,
                       parse_ibnetdiscover, parse_iblinkinfo}
