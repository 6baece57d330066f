# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The nccl-tests result table (parsers/nccl_table.py) part by part: the layout a column-name line gives, the
layout a row implies without one, and what each row of the shapes nccl-tests prints becomes (issue mut34b: each
test pins a behaviour a one-line mistake in nccl_table.py would change)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os

import pytest

from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.nccl_table import (
    Table, default_layout, layout_from_header, may_start_row)
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_nccl_tests import parse_nccl_tests

CORPUS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures", "corpus", "nccl_tests")
FIELDS = ["time_us", "algbw_gbs", "busbw_gbs", "wrong"]
ALL_REDUCE = ("#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   "
              "busbw  #wrong")
OLD_ERROR = "#       size         count      type   redop     time   algbw   busbw  error     time   algbw   busbw  error"


def table():
    return Table({"rows": [], "header": {}}, [])


def feed(lines, layout=None):
    """The rows and warnings of these lines fed one by one (a header layout first when given)."""
    tab = table()
    if layout is not None:
        tab.set_header(layout)
    taken = [tab.feed(line.split()) for line in lines]
    tab.flush()
    return tab.result["rows"], tab.warnings, taken, tab.result["header"]


def header(line):
    return layout_from_header(line.lstrip("#").split())


def test_the_all_reduce_column_line_gives_five_lead_columns_and_two_groups_counting_wrong():
    layout = header(ALL_REDUCE)
    assert layout.columns() == {"lead": ["bytes", "count", "type", "redop", "root"], "groups": [FIELDS, FIELDS],
                                "timestamp": False}
    assert (layout.source, layout.wrong_kind, layout.time_kind, layout.width) == ("header", "count", "time", 13)


def test_an_old_error_column_line_measures_a_max_error_without_a_root():
    layout = header(OLD_ERROR)
    assert layout.columns()["lead"] == ["bytes", "count", "type", "redop"]
    assert (layout.wrong_kind, layout.width) == ("max_error", 12)
    errors = header(OLD_ERROR.replace("error", "errors"))
    assert errors.wrong_kind == "max_error" and errors.columns()["groups"] == [FIELDS, FIELDS]


def test_the_newest_column_line_names_bitdiff_iteration_times_and_a_timestamp():
    line = ("size count type redop root time algbw busbw #wrong #bitdiff i_min i_max i_p99 i_cv% "
            "time algbw busbw #wrong #bitdiff i_min i_max i_p99 i_cv% timestamp")
    layout = layout_from_header(line.split())
    group = FIELDS + ["bitdiff", "iter_min_us", "iter_max_us", "iter_p99_us", "iter_cv_pct"]
    assert layout.columns() == {"lead": ["bytes", "count", "type", "redop", "root"], "groups": [group, group],
                                "timestamp": True}
    assert layout.width == 5 + 18 + 2


def test_a_cputime_column_line_keeps_its_time_kind():
    layout = layout_from_header("size count type redop root cputime algbw busbw #wrong cputime algbw busbw "
                                "#wrong".split())
    assert layout.time_kind == "cputime" and layout.columns()["groups"] == [FIELDS, FIELDS]


def test_lead_names_are_mapped_and_unknown_ones_kept_in_snake_case():
    layout = layout_from_header("Size Count Type Op Root Peer-Rank time algbw busbw #wrong".split())
    assert layout.columns()["lead"] == ["bytes", "count", "type", "redop", "root", "peer_rank"]
    assert layout.columns()["groups"] == [FIELDS]


def test_a_repeated_or_unnamed_group_column_is_numbered():
    layout = layout_from_header("size count type time algbw busbw busbw #wrong %".split())
    assert layout.columns()["groups"] == [["time_us", "algbw_gbs", "busbw_gbs", "busbw_gbs_3", "wrong", "col"]]
    rows, _warnings, _taken, _header = feed(["1024 256 float 20.5 0.05 0.09 0.10 0 7"], layout)
    assert rows[0]["out_of_place"] == {"time_us": 20.5, "algbw_gbs": 0.05, "busbw_gbs": 0.09, "wrong": 0,
                                       "busbw_gbs_3": 0.1, "col": 7.0}


@pytest.mark.parametrize("line", [
    "size count type redop root algbw busbw #wrong",             # no time
    "size count type redop root time #wrong",                    # no bandwidth
    "count type redop root time algbw busbw #wrong",             # no size
    "size count redop root time algbw busbw #wrong",             # no type
    "count size type redop root time algbw busbw #wrong",        # size is not first
    "size count type redop root time algbw #wrong time algbw busbw #wrong",   # a group without busbw
])
def test_a_damaged_or_other_column_line_gives_no_layout(line):
    assert layout_from_header(line.split()) is None


def test_an_all_reduce_row_under_its_header_reads_every_cell():
    rows, warnings, taken, head = feed([
        "     1048576        262144     float     sum      -1    50.10   20.93   36.63       0    49.80   21.06   "
        "36.85       3"], header(ALL_REDUCE))
    assert taken == [True] and warnings == []
    assert rows == [{"bytes": 1048576, "count": 262144, "type": "float", "redop": "sum", "root": -1,
                     "out_of_place": {"time_us": 50.1, "algbw_gbs": 20.93, "busbw_gbs": 36.63, "wrong": 0},
                     "in_place": {"time_us": 49.8, "algbw_gbs": 21.06, "busbw_gbs": 36.85, "wrong": 3},
                     "partial": False}]
    assert head == {"wrong_column": "#wrong"}


def test_the_old_k80_capture_reads_its_max_error_as_a_number():
    with open(os.path.join(CORPUS, "all_reduce_perf_old_k80_error_col_nccl_info.txt"), encoding="utf-8") as handle:
        result = parse_nccl_tests(handle.read())
    first = result["rows"][0]
    assert (first["bytes"], first["count"], first["redop"], first["root"]) == (33554432, 8388608, "sum", None)
    assert first["out_of_place"] == {"time_us": 19902.0, "algbw_gbs": 1.69, "busbw_gbs": 2.53, "wrong": 2e-07}
    assert result["header"]["wrong_column"] == "error"
    assert len(result["rows"]) == 7


def test_the_2018_all_gather_capture_has_neither_redop_nor_root():
    with open(os.path.join(CORPUS, "all_gather_perf_old_2018_no_redop_root_oob_failed.txt"),
              encoding="utf-8") as handle:
        result = parse_nccl_tests(handle.read())
    row = [r for r in result["rows"] if r["bytes"] == 2097120][0]
    assert (row["count"], row["type"], row["redop"], row["root"]) == (43690, "float", None, None)
    assert row["out_of_place"]["time_us"] == 106.2 and row["in_place"]["busbw_gbs"] == 16.85
    assert row["in_place"]["wrong"] == 0


@pytest.mark.parametrize("cell, value", [
    ("0", 0), ("12", 12), ("+2", 2), ("-1", -1), ("N/A", None), ("n/a", None), ("3e+00", 3), ("2e-07", 2e-07),
    ("1.5", 1.5), ("nan", None)])
def test_a_wrong_cell_is_a_count_a_max_error_or_unknown(cell, value):
    rows = feed(["1024 256 float sum -1 20.0 0.05 0.09 %s 20.1 0.05 0.09 0" % cell], header(ALL_REDUCE))[0]
    got = rows[0]["out_of_place"]["wrong"]
    assert (got, type(got).__name__) == (value, type(value).__name__)


@pytest.mark.parametrize("cell", ["N/A", "nan", "inf", "-inf", "NaN"])
def test_a_time_or_bandwidth_that_is_no_finite_number_is_unknown(cell):
    rows = feed(["1024 256 float sum -1 %s %s 0.09 0 20.1 0.05 0.09 0" % (cell, cell)], header(ALL_REDUCE))[0]
    assert rows[0]["out_of_place"]["time_us"] is None and rows[0]["out_of_place"]["algbw_gbs"] is None
    assert rows[0]["out_of_place"]["busbw_gbs"] == 0.09 and rows[0]["in_place"]["time_us"] == 20.1


def test_a_bitdiff_cell_is_a_whole_number():
    line = "size count type redop root time algbw busbw #wrong #bitdiff"
    rows = feed(["1024 256 float sum -1 20.0 0.05 0.09 0 5"], layout_from_header(line.split()))[0]
    assert rows[0]["out_of_place"]["bitdiff"] == 5 and isinstance(rows[0]["out_of_place"]["bitdiff"], int)


def test_a_row_without_a_column_line_implies_redop_and_root_and_locks_the_layout():
    rows, warnings, taken, head = feed([
        "1024 256 float sum -1 20.0 0.05 0.09 0 20.1 0.05 0.09 0",
        "2048 512 float sum -1 21.0 0.10 0.18 0 21.1 0.10 0.18 0 7"])
    assert taken == [True, True] and warnings == []
    assert [(r["redop"], r["root"]) for r in rows] == [("sum", -1), ("sum", -1)]
    assert rows[1]["extra"] == [7] and rows[1]["in_place"]["time_us"] == 21.1
    assert head == {"wrong_column": "#wrong"}


def test_an_all_gather_row_without_a_column_line_has_neither_redop_nor_root():
    rows = feed(["1024 256 float 20.0 0.05 0.09 0 20.1 0.05 0.09 0",
                 "2048 512 float 21.0 0.10 0.18 0 21.1 0.10 0.18 0"])[0]
    assert [(r["redop"], r["root"], r["out_of_place"]["time_us"]) for r in rows] == [
        (None, None, 20.0), (None, None, 21.0)]


def test_a_reduce_row_without_a_column_line_has_a_root_beside_its_redop():
    rows = feed(["1024 256 float sum 3 20.0 0.05 0.09 0 20.1 0.05 0.09 0"])[0]
    assert (rows[0]["redop"], rows[0]["root"], rows[0]["in_place"]["wrong"]) == ("sum", 3, 0)


def test_a_broadcast_row_without_a_column_line_has_a_root_but_no_redop():
    rows = feed(["1024 256 float 0 20.0 0.05 0.09 0 20.1 0.05 0.09 0"])[0]
    assert (rows[0]["redop"], rows[0]["root"], rows[0]["out_of_place"]["time_us"]) == (None, 0, 20.0)


@pytest.mark.parametrize("last, kind", [("0", "#wrong"), ("N/A", "#wrong"), ("2e-07", "error"), ("0.5", "error"),
                                        ("1E-6", "error")])
def test_the_last_cell_of_an_implied_row_tells_a_count_from_a_max_error(last, kind):
    head = feed(["1024 256 float sum -1 20.0 0.05 0.09 0 20.1 0.05 0.09 %s" % last])[3]
    assert head == {"wrong_column": kind}


def test_a_one_group_row_without_a_column_line_is_read_and_the_next_row_implied_again():
    rows, warnings, _taken, _head = feed([
        "1024 256 float sum -1 20.0 0.05 0.09 0",
        "2048 512 float 21.0 0.10 0.18 0 21.1 0.10 0.18 0"])
    assert (rows[0]["root"], rows[0]["out_of_place"]["busbw_gbs"], rows[0]["in_place"]) == (-1, 0.09, None)
    assert rows[0]["partial"] is True
    assert warnings == ["table row for 1024 bytes is incomplete (output cut or interleaved)"]
    assert (rows[1]["redop"], rows[1]["root"], rows[1]["partial"]) == (None, None, False)


def test_a_one_group_row_of_four_cells_has_no_root():
    rows, _warnings, _taken, head = feed(["1024 256 float sum 20.0 0.05 0.09 0"])
    assert (rows[0]["redop"], rows[0]["root"], rows[0]["out_of_place"]["wrong"]) == ("sum", None, 0)
    assert head == {"wrong_column": "#wrong"}


def test_a_short_row_start_has_a_root_only_beside_a_redop():
    rows = feed(["1024 256 float sum 5 20.0 0.05"])[0]
    assert (rows[0]["redop"], rows[0]["root"], rows[0]["out_of_place"]["algbw_gbs"]) == ("sum", 5, 0.05)
    rows = feed(["1024 256 float 5 20.0 0.05"])[0]
    assert (rows[0]["root"], rows[0]["out_of_place"]["time_us"], rows[0]["out_of_place"]["busbw_gbs"]) == (
        None, 5.0, 0.05)


def test_short_implied_rows_have_no_wrong_column():
    head = feed(["1024 256 float sum 20.0 0.05 0.09"])[3]
    assert head == {}


def test_a_row_split_by_log_lines_is_assembled_and_counted():
    rows, warnings, taken, _head = feed(["1024 256 float sum -1 20.0", "0.05 0.09 0 20.1", "0.05 0.09 0"],
                                        header(ALL_REDUCE))
    assert taken == [True, True, True] and warnings == []
    assert rows[0]["split_lines"] == 3 and rows[0]["partial"] is False
    assert rows[0]["in_place"] == {"time_us": 20.1, "algbw_gbs": 0.05, "busbw_gbs": 0.09, "wrong": 0}


def test_a_row_on_one_line_has_no_split_count():
    rows = feed(["1024 256 float sum -1 20.0 0.05 0.09 0 20.1 0.05 0.09 0"], header(ALL_REDUCE))[0]
    assert "split_lines" not in rows[0] and "extra" not in rows[0] and "timestamp" not in rows[0]


def test_numbers_without_a_row_start_are_a_fragment_warning():
    rows, warnings, taken, _head = feed(["20.0 0.05 0.09", "0.05 0.09", "20.0 0.05 note"], header(ALL_REDUCE))
    assert rows == [] and taken == [True, False, False]
    assert warnings == ["table fragment without its row start ignored: 20.0 0.05 0.09"]


def test_a_long_fragment_is_cut_in_its_warning():
    warnings = feed([" ".join(["12345.5"] * 60)], header(ALL_REDUCE))[1]
    assert warnings == ["table fragment without its row start ignored: " + " ".join(["12345.5"] * 60)[:200]]


def test_a_three_token_line_before_any_table_is_no_row():
    rows, _warnings, taken, _head = feed(["8 16 float"])
    assert rows == [] and taken == [False]
    rows, warnings, taken, _head = feed(["8 16 float"], header(ALL_REDUCE))
    assert taken == [True] and rows == []
    assert warnings == ["incomplete table row dropped (no measurement): 8 16 float"]


def test_a_three_token_row_start_after_rows_begins_a_row():
    rows, warnings, taken, _head = feed([
        "1024 256 float 20.0 0.05 0.09 0 20.1 0.05 0.09 0",
        "2048 512 float", "21.0 0.10 0.18 0 21.1 0.10 0.18 0"])
    assert taken == [True, True, True] and warnings == []
    assert [r["bytes"] for r in rows] == [1024, 2048] and rows[1]["split_lines"] == 2


def test_a_word_line_while_a_row_is_open_is_not_the_rows():
    rows, _warnings, taken, _head = feed([
        "1024 256 float sum -1 20.0 0.05 0.09 0", "1 comm 0x55 rank 0 nranks 2", "20.1 0.05 0.09 0"],
        header(ALL_REDUCE))
    assert taken == [True, False, True]
    assert rows[0]["in_place"]["time_us"] == 20.1 and rows[0]["split_lines"] == 2


def test_a_new_row_start_ends_the_open_row_as_partial():
    rows, warnings, _taken, _head = feed(["1024 256 float sum -1 20.0 0.05 0.09 0 20.1",
                                          "2048 512 float sum -1 21.0 0.10 0.18 0 21.1 0.10 0.18 0"],
                                         header(ALL_REDUCE))
    assert [(r["bytes"], r["partial"]) for r in rows] == [(1024, True), (2048, False)]
    assert rows[0]["in_place"] == {"time_us": 20.1, "algbw_gbs": None, "busbw_gbs": None, "wrong": None}
    assert warnings == ["table row for 1024 bytes is incomplete (output cut or interleaved)"]


def test_a_column_line_ends_the_open_row():
    tab = table()
    tab.set_header(header(ALL_REDUCE))
    tab.feed("1024 256 float sum -1 20.0 0.05".split())
    tab.set_header(header(OLD_ERROR))
    assert [(r["bytes"], r["partial"]) for r in tab.result["rows"]] == [(1024, True)]
    tab.feed("2048 512 float sum 21.0 0.10 0.18 1e-07 21.1 0.10 0.18 2e-07".split())
    assert tab.result["rows"][1]["root"] is None and tab.result["rows"][1]["in_place"]["wrong"] == 2e-07


@pytest.mark.parametrize("prefix", ["node1:", "[1,0]<stdout>:", "<stdout>:", "[node-a:12]", "pod-7.ns@x: [1,0]<stdout>:"])
def test_a_row_behind_a_launcher_prefix_is_read(prefix):
    rows, _warnings, taken, _head = feed([prefix + " 1024 256 float sum -1 20.0 0.05 0.09 0 20.1 0.05 0.09 0"],
                                         header(ALL_REDUCE))
    assert taken == [True] and rows[0]["bytes"] == 1024 and rows[0]["in_place"]["wrong"] == 0


def test_three_prefixes_are_dropped_but_a_fourth_is_no_row():
    line = "a: b: c: 1024 256 float sum -1 20.0 0.05 0.09 0 20.1 0.05 0.09 0"
    assert feed([line], header(ALL_REDUCE))[0][0]["bytes"] == 1024
    assert feed(["d: " + line], header(ALL_REDUCE))[2] == [False]


def test_a_prefix_alone_is_nothing():
    assert feed(["node1:"], header(ALL_REDUCE))[2] == [False]


def test_a_word_where_a_lead_number_belongs_drops_the_row():
    rows, warnings, taken, _head = feed(["1024 256 float sum top 20.0 0.05 0.09 0 20.1 0.05 0.09 0",
                                         "2048 512 float sum -1 21.0 0.10 0.18 0 21.1 0.10 0.18 0"],
                                        header(ALL_REDUCE))
    assert taken == [True, True] and warnings == []
    assert [r["bytes"] for r in rows] == [2048]


def test_an_alltoall_row_leaves_its_named_redop_blank():
    rows = feed(["1024 256 float -1 20.0 0.05 0.09 0 20.1 0.05 0.09 0"], header(ALL_REDUCE))[0]
    assert (rows[0]["redop"], rows[0]["root"], rows[0]["out_of_place"]["time_us"]) == (None, -1, 20.0)
    assert rows[0]["in_place"]["wrong"] == 0 and rows[0]["partial"] is False


def test_a_row_that_leaves_redop_and_root_blank_before_a_fractional_time():
    rows = feed(["1024 256 float 20.5 0.05 0.09 0 20.1 0.05 0.09 0"], header(ALL_REDUCE))[0]
    assert (rows[0]["redop"], rows[0]["root"], rows[0]["out_of_place"]["time_us"]) == (None, None, 20.5)
    assert rows[0]["in_place"] == {"time_us": 20.1, "algbw_gbs": 0.05, "busbw_gbs": 0.09, "wrong": 0}


def test_a_blank_root_before_a_whole_time_reads_the_time_as_the_root():
    rows = feed(["1024 256 float sum 20 0.05 0.09 0 20.1 0.05 0.09 0"], header(ALL_REDUCE))[0]
    assert (rows[0]["root"], rows[0]["out_of_place"]["time_us"], rows[0]["partial"]) == (20, 0.05, True)


def test_a_word_where_a_type_or_redop_belongs_is_a_row_only_with_a_word():
    rows = feed(["1024 256 float sum -1 20.0 0.05 0.09 0 20.1 0.05 0.09 0"],
                layout_from_header("size count type redop root peer time algbw busbw #wrong".split()))[0]
    assert rows[0]["peer"] == "20.0" and rows[0]["out_of_place"]["time_us"] == 0.05


def test_cells_after_the_last_column_are_kept_as_extra_numbers_and_words():
    rows = feed(["1024 256 float sum -1 20.0 0.05 0.09 0 20.1 0.05 0.09 0 17 2.5 N/A OK"], header(ALL_REDUCE))[0]
    assert rows[0]["extra"] == [17, 2.5, None, "OK"]
    assert [type(v) for v in rows[0]["extra"][:2]] == [int, float]


def test_a_group_cell_that_is_no_number_is_extra_and_the_next_fills_the_column():
    rows = feed(["1024 256 float sum -1 20.0 fast 0.05 0.09 0 20.1 0.05 0.09 0"], header(ALL_REDUCE))[0]
    assert rows[0]["extra"] == ["fast"] and rows[0]["out_of_place"]["algbw_gbs"] == 0.05


def test_a_timestamp_is_the_date_and_clock_after_the_groups():
    layout = layout_from_header("size count type redop root time algbw busbw #wrong timestamp".split())
    rows = feed(["1024 256 float sum -1 20.0 0.05 0.09 0 2025-06-01 10:00:01.5 spare"], layout)[0]
    assert rows[0]["timestamp"] == "2025-06-01 10:00:01.5" and rows[0]["extra"] == ["spare"]
    assert rows[0]["partial"] is False


def test_a_timestamp_cell_that_is_no_date_is_extra():
    layout = layout_from_header("size count type redop root time algbw busbw #wrong timestamp".split())
    rows = feed(["1024 256 float sum -1 20.0 0.05 0.09 0 Jun 7 2025-06-01 10:00:01"], layout)[0]
    assert rows[0]["timestamp"] == "2025-06-01 10:00:01" and rows[0]["extra"] == ["Jun", 7]


def test_a_row_cut_before_its_timestamp_has_none():
    layout = layout_from_header("size count type redop root time algbw busbw #wrong timestamp".split())
    rows = feed(["1024 256 float sum -1 20.0 0.05 0.09 0 2025-06-01"], layout)[0]
    assert "timestamp" not in rows[0] and rows[0]["partial"] is True


def test_a_third_group_is_named_by_its_number_and_a_missing_group_is_none():
    line = "size count type time algbw busbw #wrong time algbw busbw #wrong time algbw busbw #wrong"
    layout = layout_from_header(line.split())
    rows = feed(["1024 256 float 1.0 2.0 3.0 0 4.0 5.0 6.0 0 7.0 8.0 9.0 1"], layout)[0]
    assert rows[0]["group_3"] == {"time_us": 7.0, "algbw_gbs": 8.0, "busbw_gbs": 9.0, "wrong": 1}
    assert rows[0]["out_of_place"]["time_us"] == 1.0 and rows[0]["in_place"]["time_us"] == 4.0
    rows = feed(["1024 256 float 1.0 2.0 3.0 0"], layout)[0]
    assert (rows[0]["in_place"], rows[0]["group_3"]) == (None, None)


def test_a_group_without_some_usual_columns_has_them_unknown():
    layout = layout_from_header("size count type time busbw i_max".split())
    rows = feed(["1024 256 float 20.0 0.09 25.5"], layout)[0]
    assert rows[0]["out_of_place"] == {"time_us": 20.0, "algbw_gbs": None, "busbw_gbs": 0.09, "wrong": None,
                                       "iter_max_us": 25.5}
    assert rows[0]["in_place"] is None


def test_a_named_lead_column_holds_its_text():
    layout = layout_from_header("size count type redop root peer time algbw busbw #wrong".split())
    rows = feed(["1024 256 float sum -1 node-b 20.0 0.05 0.09 0"], layout)[0]
    assert rows[0]["peer"] == "node-b" and rows[0]["root"] == -1 and rows[0]["count"] == 256


def test_the_first_wrong_column_a_table_names_stays():
    tab = table()
    tab.set_header(header(OLD_ERROR))
    tab.feed("1024 256 float sum 20.0 0.05 0.09 1e-07 20.1 0.05 0.09 2e-07".split())
    tab.set_header(header(ALL_REDUCE))
    tab.feed("2048 512 float sum -1 21.0 0.10 0.18 0 21.1 0.10 0.18 0".split())
    tab.flush()
    assert tab.result["header"] == {"wrong_column": "error"} and len(tab.result["rows"]) == 2


def test_default_layouts():
    full = default_layout()
    assert full.columns() == {"lead": ["bytes", "count", "type", "redop", "root"], "groups": [FIELDS, FIELDS],
                              "timestamp": False}
    assert (full.source, full.wrong_kind, full.time_kind) == ("default", None, "time")
    assert default_layout(False, False, "max_error").columns()["lead"] == ["bytes", "count", "type"]
    assert default_layout(False, True).columns()["lead"] == ["bytes", "count", "type", "root"]
    assert default_layout(True, False).wrong_kind is None


@pytest.mark.parametrize("token, starts", [
    ("1024", True), ("-1", True), ("+5", True), (".5", True), ("nan", True), ("N/A", True), ("inf", True),
    ("Inf", True), ("node1:", True), ("[1,0]", True), ("#", False), ("NCCL", True), ("Using", False),
    ("host", False), ("x]", True)])
def test_which_first_tokens_may_start_a_row(token, starts):
    assert may_start_row(token) is starts


def test_a_lead_column_whose_name_has_no_letters_is_named_by_its_place():
    layout = layout_from_header("size count type - time algbw busbw #wrong".split())
    assert layout.columns()["lead"] == ["bytes", "count", "type", "col3"]


def test_a_column_line_that_starts_with_the_time_gives_no_layout():
    assert layout_from_header("time size count type algbw busbw #wrong".split()) is None


def test_a_column_after_the_timestamp_still_belongs_to_the_last_group():
    layout = layout_from_header("size count type time algbw busbw #wrong timestamp i_cv%".split())
    assert layout.columns() == {"lead": ["bytes", "count", "type"],
                                "groups": [FIELDS + ["iter_cv_pct"]], "timestamp": True}


def test_a_size_and_count_before_n_a_are_no_row_start():
    rows, warnings, taken, _head = feed(["1024 256 N/A 20.0 0.05"], header(ALL_REDUCE))
    assert rows == [] and taken == [True]
    assert warnings == ["table fragment without its row start ignored: 1024 256 N/A 20.0 0.05"]


def test_no_tokens_are_no_table_content():
    assert feed([""])[2] == [False]


def test_the_layout_a_whole_row_implied_reads_the_next_rows_split_start():
    rows, warnings, taken, _head = feed(["1024 256 float 0 20.0 0.05 0.09 0 20.1 0.05 0.09 0",
                                         "2048 512 float 1 21.0", "0.10 0.18 0 21.1 0.10 0.18 0"])
    assert taken == [True, True, True] and warnings == []
    assert (rows[1]["root"], rows[1]["out_of_place"]["time_us"], rows[1]["in_place"]["wrong"]) == (1, 21.0, 0)


def test_a_row_start_cut_after_its_redop_keeps_a_root_for_the_next_line():
    rows, warnings, _taken, _head = feed(["8192 2048 float sum", "-1 75.38 0.05 0.10 0 75.10 0.05 0.10 0"])
    assert warnings == []
    assert (rows[0]["redop"], rows[0]["root"], rows[0]["out_of_place"]["time_us"]) == ("sum", -1, 75.38)
    assert rows[0]["split_lines"] == 2 and rows[0]["partial"] is False


def test_a_row_start_cut_after_its_type_has_neither_redop_nor_root():
    rows = feed(["8192 2048 float", "75.38 0.05 0.10 0 75.10 0.05 0.10 0"], header(
        "size count type time algbw busbw #wrong time algbw busbw #wrong"))[0]
    assert (rows[0]["redop"], rows[0]["root"], rows[0]["in_place"]["time_us"]) == (None, None, 75.1)


def test_a_row_cut_inside_a_group_keeps_the_columns_it_lacks_as_unknown():
    line = "size count type redop root time algbw busbw #wrong #bitdiff i_min i_max i_p99 i_cv%"
    rows = feed(["1048576 262144 float sum -1 50.10 20.93"], layout_from_header(line.split()))[0]
    assert rows[0]["out_of_place"] == {"time_us": 50.1, "algbw_gbs": 20.93, "busbw_gbs": None, "wrong": None,
                                       "bitdiff": None, "iter_min_us": None, "iter_max_us": None,
                                       "iter_p99_us": None, "iter_cv_pct": None}


def test_a_column_line_without_a_wrong_column_has_no_wrong_kind():
    layout = layout_from_header("size count type time algbw busbw".split())
    assert layout.wrong_kind is None and layout.columns()["groups"] == [["time_us", "algbw_gbs", "busbw_gbs"]]


@pytest.mark.parametrize("line, row", [
    # a redop that is neither a word nor a number
    ("size count type redop root time algbw busbw #wrong", "1024 256 float (none) 20.0 0.05 0.09 0"),
    # a number where the type belongs
    ("size count peer type time algbw busbw #wrong", "1024 256 node-b 20.0 0.05 0.09 0"),
    # a word where the count belongs
    ("size peer type count time algbw busbw #wrong", "1024 256 float many 20.0 0.05 0.09 0"),
    # a word where a size belongs
    ("size count type bytes time algbw busbw #wrong", "1024 256 float many 20.0 0.05 0.09 0"),
])
def test_a_lead_cell_of_the_wrong_kind_drops_the_row(line, row):
    rows, warnings, taken, _head = feed([row], layout_from_header(line.split()))
    assert rows == [] and warnings == [] and taken == [True]


def test_a_word_ending_in_a_colon_that_is_no_launcher_prefix_keeps_the_line_from_the_table():
    assert feed(["size/count: 1024 256 float sum -1 20.0 0.05 0.09 0 20.1 0.05 0.09 0"], header(ALL_REDUCE))[2] == [
        False]


def test_numbers_after_a_complete_row_are_a_fragment():
    rows, warnings, _taken, _head = feed(["1024 256 float sum -1 20.0 0.05 0.09 0 20.1 0.05 0.09 0",
                                          "20.2 0.05 0.09 0"], header(ALL_REDUCE))
    assert len(rows) == 1 and warnings == ["table fragment without its row start ignored: 20.2 0.05 0.09 0"]


def test_numbers_after_a_dropped_row_are_a_fragment():
    rows, warnings, _taken, _head = feed(["1024 256 float sum top 20.0 0.05 0.09 0",
                                          "20.2 0.05 0.09 0"], header(ALL_REDUCE))
    assert rows == [] and warnings == ["table fragment without its row start ignored: 20.2 0.05 0.09 0"]


def test_a_long_row_without_measurements_is_cut_in_its_warning():
    kind = "f" + "loat" * 80
    warnings = feed(["1024 256 %s" % kind], header(ALL_REDUCE))[1]
    assert warnings == ["incomplete table row dropped (no measurement): " + ("1024 256 %s" % kind)[:200]]


def test_a_word_where_the_first_time_belongs_is_extra():
    rows = feed(["1024 256 float sum -1 slow 20.0 0.05 0.09 0 20.1 0.05 0.09 0"], header(ALL_REDUCE))[0]
    assert rows[0]["extra"] == ["slow"] and rows[0]["root"] == -1 and rows[0]["out_of_place"]["time_us"] == 20.0


def test_a_three_token_row_start_after_a_row_that_locked_no_layout():
    rows, warnings, _taken, _head = feed(["1024 256 float sum -1 20.0 0.05 0.09 0", "2048 512 float"])
    assert [r["bytes"] for r in rows] == [1024]
    assert warnings[-1] == "incomplete table row dropped (no measurement): 2048 512 float"


def test_the_layout_an_all_gather_row_implied_reads_a_whole_time_after_a_split_start():
    tab = table()
    tab.feed("1024 256 float 20.0 0.05 0.09 0 20.1 0.05 0.09 0".split())
    assert tab.layout.source == "inferred" and tab.layout.columns()["lead"] == ["bytes", "count", "type"]
    tab.feed("2048 512 float 21".split())
    tab.feed("0.10 0.18 0 21.1 0.10 0.18 0".split())
    tab.flush()
    row = tab.result["rows"][1]
    assert (row["root"], row["out_of_place"]["time_us"], row["in_place"]["time_us"]) == (None, 21.0, 21.1)


def test_a_broadcast_row_of_one_group_implies_a_root():
    tab = table()
    tab.feed("1024 256 float 0 20.0 0.05 0.09 0".split())
    tab.flush()
    row = tab.result["rows"][0]
    assert (row["redop"], row["root"], row["out_of_place"]["time_us"]) == (None, 0, 20.0)
    assert tab.layout is None and tab.pending_layout.source == "inferred"


def test_a_reduce_row_of_one_group_without_a_root_reads_a_whole_time_as_the_time():
    rows = feed(["1024 256 float sum 20 0.05 0.09 0"])[0]
    assert (rows[0]["redop"], rows[0]["root"], rows[0]["out_of_place"]["time_us"]) == ("sum", None, 20.0)
    assert rows[0]["out_of_place"]["wrong"] == 0


def test_a_timestamp_on_a_line_of_its_own_completes_the_row():
    layout = layout_from_header("size count type redop root time algbw busbw #wrong timestamp".split())
    rows, _warnings, taken, _head = feed(["1024 256 float sum -1 20.0 0.05 0.09 0", "2025-06-01 10:00:01"], layout)
    assert taken == [True, True]
    assert rows[0]["timestamp"] == "2025-06-01 10:00:01" and rows[0]["partial"] is False
