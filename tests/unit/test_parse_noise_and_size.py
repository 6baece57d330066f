# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every parser: the result decides `ok`, noise is a warning, and pathological input still parses right.

1. Lines a parser does not know -- vendor warnings such as libibverbs' "couldn't
   stat" on SR-IOV pods or mlx4's BlueFlame note, error-looking lines of other
   programs -- inside and around real tables: the rows are the same as without
   them, `ok` stays true and the lines are listed in `warnings`. Progress chatter
   is neither. A recognised error still makes the result fail.
2. Pathological sizes (100,000 blank or blank-looking lines, a megabyte line
   without a newline, thousands of brace lines) around real tables: the same rows.
   Nothing here measures time (benchmarks/bench_parsers.py does).
3. The line readers rewritten for linear time read what the regexes they
   replaced read (the old regexes are kept here as the reference).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers import parse_hccl_test as hccl_mod
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers import parse_ibdev2netdev as ibdev_mod
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_hccl_test import parse_hccl_test
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_ibdev2netdev import parse_ibdev2netdev_full
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_ibstat import parse_ibstat_full
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_ibv_devinfo import parse_ibv_devinfo_full
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_nccl_tests import parse_nccl_tests
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_perftest import parse_perftest
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_rdma_link import parse_rdma_link_full
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_show_gids import parse_show_gids_full
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.text import split_key_value

CORPUS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures", "corpus")

# Real vendor warnings: rdma-core's libibverbs on a pod that sees the PF's sysfs but not all devices
# (SR-IOV), libmlx4 without write-combining, and a driver that is not installed (mentions "error"-ish
# words, stays a warning).
STAT = "libibverbs: Warning: couldn't stat '/sys/class/infiniband/mlx5_3'"
BLUEFLAME = "mlx4: Warning: BlueFlame available, but failed to mmap() BlueFlame page."
DRIVER = ("libibverbs: Warning: couldn't load driver 'libvmw_pvrdma-rdmav34.so': libvmw_pvrdma-rdmav34.so: "
          "cannot open shared object file: No such file or directory")
# An error-looking line no parser knows (another program's), and chatter.
FOREIGN = "rdma-agent[1234]: error: lost contact with the fabric manager, retrying"
CHATTER = "Disabling dynamic polling"
DIAGNOSTIC_NOISE = (STAT, BLUEFLAME, DRIVER, FOREIGN)
NOISE = DIAGNOSTIC_NOISE + (CHATTER,)


def corpus(*parts):
    with open(os.path.join(CORPUS, *parts), encoding="utf-8") as handle:
        return handle.read()


def sprinkle(text, noise=NOISE, every=2):
    """The noise lines in front, behind, and after every `every`-th line of the text (in turn)."""
    out = list(noise)
    for index, line in enumerate(text.splitlines()):
        out.append(line)
        if index % every == every - 1:
            out.append(noise[(index // every) % len(noise)])
    return "\n".join(out + list(noise)) + "\n"


def codes(result):
    return [e["code"] for e in result["errors"]]


# --- 1. noise is a warning, a recognised error still fails ---------------------------------------------

@pytest.mark.parametrize("name", ["perftest_bw/ib_write_bw_a_mlx4_fdr_mb.txt", "perftest_lat/ib_write_lat_a_mlx4_fdr.txt",
                                  "perftest_bw/ib_write_bw_ndr_gbits_cpufreq_warn.txt"])
def test_perftest_noise_in_and_around_the_table(name):
    text = corpus(*name.split("/"))
    clean, noisy = parse_perftest(text), parse_perftest(sprinkle(text))
    assert clean["ok"] is True and clean["rows"]
    assert noisy["rows"] == clean["rows"] and noisy["settings"] == clean["settings"]
    assert noisy["errors"] == [] and noisy["ok"] is True
    for line in DIAGNOSTIC_NOISE:
        assert line in noisy["warnings"], line
    assert CHATTER not in noisy["warnings"]


def test_perftest_recognised_errors_still_fail_and_unknown_ones_explain_a_missing_table():
    text = corpus("perftest_bw", "ib_write_bw_a_mlx4_fdr_mb.txt")
    failed = parse_perftest(sprinkle(text) + "Couldn't allocate MR\n")
    assert codes(failed) == ["mr_alloc_failed"] and failed["ok"] is False and failed["rows"]
    crashed = parse_perftest(text + BLUEFLAME + "\nSegmentation fault (core dumped)\n")
    assert codes(crashed) == ["crashed"] and BLUEFLAME in crashed["warnings"]
    # no table: the line no rule knows is all there is to say why, so it is the (unknown) error
    no_table = parse_perftest(STAT + "\n" + FOREIGN + "\n")
    assert codes(no_table) == ["unknown"] and no_table["errors"][0]["message"] == FOREIGN
    assert no_table["warnings"] == [STAT] and no_table["ok"] is False


NCCL_INFO = [
    "node1:6000:6100 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/0/GDRDMA",
    "node1:6000:6100 [0] NCCL INFO 4096 Bytes -> Algo 1 proto 2 time 25.874907",
    "node1:6000:6100 [0] NCCL INFO Using network IB",
]


def test_nccl_tests_noise_and_info_lines_in_and_around_the_table():
    text = corpus("nccl_tests", "all_reduce_perf_2node_16gpu_h100_mpirun.txt")
    clean = parse_nccl_tests(text)
    noisy = parse_nccl_tests(sprinkle(text, NOISE + tuple(NCCL_INFO)))
    assert clean["ok"] is True and len(clean["rows"]) == 31
    assert noisy["rows"] == clean["rows"] and noisy["avg_busbw_gbs"] == clean["avg_busbw_gbs"]
    assert noisy["errors"] == [] and noisy["ok"] is True and noisy["transport"] == "IB"
    for line in DIAGNOSTIC_NOISE:
        assert line in noisy["warnings"], line
    assert CHATTER not in noisy["warnings"]


def test_nccl_tests_benign_open_mpi_warning_frame_is_one_warning():
    frame = ("-" * 74 + "\nWARNING: There was an error initializing an OpenFabrics device.\n\n"
             "  Local host:   node1\n  Local device: mlx5_0\n" + "-" * 74 + "\n")
    text = corpus("nccl_tests", "all_reduce_perf_2node_16gpu_h100_mpirun.txt")
    result = parse_nccl_tests(frame + text)
    assert result["ok"] is True and len(result["rows"]) == 31
    assert result["warnings"] == ["WARNING: There was an error initializing an OpenFabrics device."]


@pytest.mark.parametrize("error,code", [
    ("node1: Test NCCL failure common.cu:1005 'unhandled cuda error (run with NCCL_DEBUG=INFO for details)'",
     "nccl_cuda_failure"),
    ("node1:1:2 [0] enqueue.cc:1 NCCL WARN Cuda failure 'out of memory'", "nccl_cuda_failure"),
    ("mpirun noticed that process rank 3 with PID 0 on node node2 exited on signal 9 (Killed).", "process_killed"),
    ("# Out of bounds values : 3 FAILED", "wrong_results"),
])
def test_nccl_tests_recognised_errors_still_fail_among_noise(error, code):
    text = sprinkle(corpus("nccl_tests", "all_reduce_perf_2node_16gpu_h100_mpirun.txt")) + error + "\n"
    result = parse_nccl_tests(text)
    assert code in codes(result) and result["ok"] is False and len(result["rows"]) == 31


def test_hccl_test_noise_in_and_around_the_table():
    text = corpus("hccl_tests", "all_reduce_test_official_doc_example_8npu.txt")
    clean, noisy = parse_hccl_test(text), parse_hccl_test(sprinkle(text))
    assert clean["ok"] is True and len(clean["rows"]) == 14
    assert noisy["rows"] == clean["rows"] and noisy["header"] == clean["header"]
    assert noisy["errors"] == [] and noisy["ok"] is True
    for line in DIAGNOSTIC_NOISE:
        assert line in noisy["warnings"], line
    assert CHATTER not in noisy["warnings"]
    failed = parse_hccl_test(sprinkle(text) + "hccl interface return err ./common/src/hccl_test_common.cc:538, "
                                              "retcode: 7\n")
    assert codes(failed) == ["hccl_e_unavail"] and failed["ok"] is False


def test_rdma_tool_noise_is_no_error_and_no_field():
    ibstat = corpus("rdma_tools", "ibstat_a100_all_active.txt")
    clean, noisy = parse_ibstat_full(ibstat), parse_ibstat_full(sprinkle(ibstat))
    assert noisy["cas"] == clean["cas"] and noisy["errors"] == clean["errors"] == []
    assert STAT in noisy["warnings"] and BLUEFLAME in noisy["warnings"] and DRIVER in noisy["warnings"]

    devinfo = corpus("rdma_tools", "ibv_devinfo_4dev_roce_port_down.txt")
    clean, noisy = parse_ibv_devinfo_full(devinfo), parse_ibv_devinfo_full(sprinkle(devinfo))
    assert noisy["devices"] == clean["devices"] and noisy["errors"] == clean["errors"] == []
    assert set([STAT, BLUEFLAME, DRIVER]) <= set(w["message"] for w in noisy["warnings"])

    for name, parse, key in (("ibdev2netdev_roce_one_down.txt", parse_ibdev2netdev_full, "devices"),
                             ("ibdev2netdev_v_cx4_two_ports.txt", parse_ibdev2netdev_full, "devices"),
                             ("rdma_link_old_format_ib_and_roce.txt", parse_rdma_link_full, "links"),
                             ("show_gids_4dev_cx4lx_12gids.txt", parse_show_gids_full, "gids")):
        text = corpus("rdma_tools", name)
        clean, noisy = parse(text), parse(sprinkle(text))
        assert clean[key] and noisy[key] == clean[key], name
        assert noisy["errors"] == clean["errors"] == [], name
    gids = parse_show_gids_full(sprinkle(corpus("rdma_tools", "show_gids_4dev_cx4lx_12gids.txt")))
    assert STAT in gids["warnings"]


def test_a_vendor_warning_naming_a_missing_sysfs_path_is_not_no_device():
    line = "libibverbs: Warning: couldn't stat '/sys/class/infiniband/mlx5_3': No such file or directory"
    for name, parse in (("ibdev2netdev_roce_one_down.txt", parse_ibdev2netdev_full),
                        ("show_gids_4dev_cx4lx_12gids.txt", parse_show_gids_full)):
        assert parse(line + "\n" + corpus("rdma_tools", name))["errors"] == []
    # the real message still is
    assert [e["code"] for e in parse_show_gids_full(
        "ls: cannot access '/sys/class/infiniband': No such file or directory\n")["errors"]] == ["no_device"]


# --- 2. pathological sizes: the same rows ------------------------------------------------------------

def _rows(name, parse, text):
    result = parse(text)
    if name.startswith("rdma_tools/ibstat"):
        return result["cas"]
    if name.startswith("rdma_tools/ibv_devinfo"):
        return result["devices"]
    if name.startswith("rdma_tools/ibdev2netdev"):
        return result["devices"]
    if name.startswith("rdma_tools/rdma_link"):
        return result["links"]
    if name.startswith("rdma_tools/show_gids"):
        return result["gids"]
    return result["rows"], result["ok"]


TABLES = [
    ("nccl_tests/all_reduce_perf_2node_16gpu_h100_mpirun.txt", parse_nccl_tests),
    ("nccl_tests/all_reduce_perf_nccl_debug_info_warn_cuda_failure.txt", parse_nccl_tests),
    ("perftest_bw/ib_write_bw_a_mlx4_fdr_mb.txt", parse_perftest),
    ("perftest_lat/ib_send_lat_ndr_cpufreq_warn.txt", parse_perftest),
    ("hccl_tests/all_reduce_test_official_doc_example_8npu.txt", parse_hccl_test),
    ("rdma_tools/ibstat_a100_all_active.txt", parse_ibstat_full),
    ("rdma_tools/ibv_devinfo_4dev_roce_port_down.txt", parse_ibv_devinfo_full),
    ("rdma_tools/ibdev2netdev_v_cx4_two_ports.txt", parse_ibdev2netdev_full),
    ("rdma_tools/rdma_link_old_format_ib_and_roce.txt", parse_rdma_link_full),
    ("rdma_tools/show_gids_4dev_cx4lx_12gids.txt", parse_show_gids_full),
]
PADDING = {
    "blank lines": "\n" * 100000,
    "whitespace-only lines": " \t  \n" * 100000,
    "brace lines": "{\n" * 20000,
    "a 1 MB line": "8 {" * 350000 + "\n",
}


@pytest.mark.parametrize("padding", sorted(PADDING))
@pytest.mark.parametrize("name,parse", TABLES, ids=[t[0] for t in TABLES])
def test_pathological_padding_around_a_table_gives_the_same_rows(name, parse, padding):
    text = corpus(*name.split("/"))
    pad = PADDING[padding]
    assert _rows(name, parse, pad + text + pad) == _rows(name, parse, text)


def test_nccl_tests_blank_lines_between_rows_and_no_table():
    text = corpus("nccl_tests", "all_reduce_perf_2node_16gpu_h100_mpirun.txt")
    spread = "\n".join(line + "\n" * 3000 for line in text.splitlines())
    assert parse_nccl_tests(spread)["rows"] == parse_nccl_tests(text)["rows"]
    # no rows: the search for an embedded JSON result runs over all of it (it was quadratic in blank lines)
    for junk in ("\n" * 100000, " \n" * 100000, "{\n" * 50000 + "\n" * 50000):
        result = parse_nccl_tests(junk)
        assert codes(result) == ["no_table"] and result["ok"] is False


# --- 3. the linear line readers read what the regexes they replaced read -----------------------------

OLD_IBSTAT_KV = re.compile(r"^\s*(?P<key>[A-Za-z][A-Za-z0-9 ./_-]*?)\s*:\s*(?P<value>.*?)\s*$")
OLD_HCCL_COLUMN = re.compile(r"^(.*?)\s*\(([^)]*)\)\s*:?\s*$")
OLD_TAIL = re.compile(
    r"^(?P<head>.*?)\bport\s+(?P<port>\d+)\s*"
    r"(?:\(\s*(?P<port_state>[^)]*?)\s*\)\s*)?"
    r"=+>\s*(?P<netdev>[^\s()]+)?\s*(?:\(\s*(?P<state>[^)]*?)\s*\)(?:\s.*)?)?\s*$")
OLD_VERBOSE_HEAD = re.compile(
    r"(?:(?P<pci>\b[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f])\s+)?"
    r"(?P<device>[^\s()]+)\s*\(\s*(?P<hca_type>[^\s()]+)\s*(?:-\s*(?P<part_id>[^()]*?))?\s*\)"
    r"\s*(?P<product>.*?)\s*\bfw\s+(?P<fw>\S+)\s*$")

PIECES = st.lists(st.sampled_from(["port", " ", "  ", "1", "(", ")", "==>", "=", ">", "fw", "x", "-", " - ", ":",
                                   "\t", "mlx5_0", "0000:3b:00.0", "ACTIVE", "Up", "_", "a.b", " note"]), max_size=14)


@settings(max_examples=400, deadline=None, derandomize=True, database=None)
@given(PIECES)
def test_key_value_split_reads_what_the_lazy_regex_read(pieces):
    line = "".join(pieces)
    old = OLD_IBSTAT_KV.match(line)
    assert split_key_value(line, re.compile(r"[A-Za-z][A-Za-z0-9 ./_-]*")) == (
        (old.group("key"), old.group("value")) if old else None)


@settings(max_examples=400, deadline=None, derandomize=True, database=None)
@given(PIECES)
def test_hccl_column_name_reads_what_the_lazy_regex_read(pieces):
    cell = "".join(pieces)
    stripped = cell.strip().rstrip(":").strip()
    old = OLD_HCCL_COLUMN.match(stripped)
    expected = (hccl_mod.snake_case(old.group(1)), old.group(2).strip()) if old else (
        hccl_mod.snake_case(stripped), None)
    assert hccl_mod._column_name(cell) == expected


@settings(max_examples=600, deadline=None, derandomize=True, database=None)
@given(PIECES)
def test_ibdev2netdev_line_reader_reads_what_the_regexes_read(pieces):
    line = "".join(pieces)
    old = OLD_TAIL.match(line)
    new = ibdev_mod._split_tail(line)
    if old is None:
        assert new is None
        return
    assert new is not None
    head, port, port_state, netdev, state = new
    assert (head, port, netdev) == (old.group("head"), old.group("port"), old.group("netdev"))
    assert (port_state, state) == (old.group("port_state"), old.group("state"))
    old_head = OLD_VERBOSE_HEAD.search(head.rstrip())
    new_head = ibdev_mod._split_verbose_head(head.rstrip())
    if old_head is None:
        assert new_head is None
    else:
        assert new_head == dict((key, old_head.group(key)) for key in (
            "pci", "device", "hca_type", "part_id", "product", "fw"))
