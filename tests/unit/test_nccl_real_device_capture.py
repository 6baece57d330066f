# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""parse_nccl_tests on REAL output of a current nccl-tests, captured on a real GPU.

Where the four ``*_real_device.*`` files in tests/fixtures/corpus/nccl_tests come from
(one session on 2026-11-26, 11:05 UTC, on the lab's lent GPU machine, kind 'nvidia-h200', by the script
capture.sh of docs/gpu-captures.md):

- machine: a Firecracker VM (hostname 'vm') with one NVIDIA H200 (143771 MiB, PCI 00000000:00:06.0),
  driver 580.159.04 (cudaDriverVersion 13000), CUDA 13.0 (nvcc V13.0.88); no InfiniBand device.
- nccl-tests: github.com/NVIDIA/nccl-tests commit a0b82b2260cf5152b9f8c061bbf7eaf0ba096432
  ('NCCL_TESTS_VERSION 2.19.6', 2026-07-09), built there with
  ``make -C src MPI=0 NVCC_GENCODE=-gencode=arch=compute_90,code=sm_90 NCCL_HOME=<pip nvidia-nccl-cu13>``.
- NCCL: the pip package nvidia-nccl-cu13 2.28.9 ('NCCL version 2.28.9+cuda13.0', code 22809).
- commands, run in the build folder (each text file starts with its ``$ command`` line):
  ``NCCL_DEBUG=INFO ./all_reduce_perf -b 8 -e 128M -f 2 -g 1``
  -> all_reduce_perf_v2.19.6_1gpu_h200_nccl_info_real_device.txt;
  ``./all_reduce_perf -b 8 -e 128M -f 2 -g 1 -J /root/out/all_reduce.json``
  -> all_reduce_perf_v2.19.6_1gpu_h200_json_run_stdout_real_device.txt (its stdout+stderr) and
  all_reduce_perf_v2.19.6_1gpu_h200_real_device.json (the -J file of that same run, as written, except
  that its "env" list, the capturing machine's whole environment, is cut to the NCCL, CUDA and MPI entries);
  ``./all_gather_perf -b 1M -e 64M -f 2 -g 1`` -> all_gather_perf_v2.19.6_1gpu_h200_real_device.txt.

One rank on one GPU: busbw is 0.00 on every row (the bus factor is 0 for one rank), and an
in-place collective of one rank moves no data, hence the sub-microsecond in-place times and the
huge in-place algbw. The values below are copied from the files as printed.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json

import pytest

from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_nccl_tests import (
    parse_nccl_tests, parse_nccl_tests_json)
from ansible_collections.clusterops.commcheck.plugins.module_utils.planning.collective_plan import (
    merge_json_result)
from nccl_captures import load, parse


INFO_TXT = "all_reduce_perf_v2.19.6_1gpu_h200_nccl_info_real_device.txt"
JSON_RUN_TXT = "all_reduce_perf_v2.19.6_1gpu_h200_json_run_stdout_real_device.txt"
JSON_FILE = "all_reduce_perf_v2.19.6_1gpu_h200_real_device.json"
GATHER_TXT = "all_gather_perf_v2.19.6_1gpu_h200_real_device.txt"

RANK_0 = {"rank": 0, "group": 0, "host": "vm", "device": 0, "bus_id": "0000:00:06", "name": "NVIDIA H200"}

# (size, count, out-of-place time/algbw/busbw, in-place time/algbw/busbw), as printed
INFO_ROWS = [
    (8, 2, 5.14, 0.00, 0.00, 0.18, 0.04, 0.00),
    (16, 4, 4.91, 0.00, 0.00, 0.28, 0.06, 0.00),
    (32, 8, 5.62, 0.01, 0.00, 0.46, 0.07, 0.00),
    (64, 16, 5.81, 0.01, 0.00, 0.50, 0.13, 0.00),
    (128, 32, 6.72, 0.02, 0.00, 0.52, 0.25, 0.00),
    (256, 64, 4.93, 0.05, 0.00, 0.30, 0.86, 0.00),
    (512, 128, 4.78, 0.11, 0.00, 0.42, 1.21, 0.00),
    (1024, 256, 6.81, 0.15, 0.00, 0.44, 2.31, 0.00),
    (2048, 512, 5.04, 0.41, 0.00, 0.19, 10.73, 0.00),
    (4096, 1024, 5.02, 0.82, 0.00, 0.19, 21.42, 0.00),
    (8192, 2048, 4.69, 1.75, 0.00, 0.19, 43.56, 0.00),
    (16384, 4096, 5.07, 3.23, 0.00, 0.30, 54.72, 0.00),
    (32768, 8192, 6.40, 5.12, 0.00, 0.57, 57.47, 0.00),
    (65536, 16384, 5.29, 12.40, 0.00, 0.66, 99.62, 0.00),
    (131072, 32768, 5.10, 25.68, 0.00, 0.89, 147.74, 0.00),
    (262144, 65536, 8.39, 31.25, 0.00, 2.00, 130.87, 0.00),
    (524288, 131072, 7.87, 66.59, 0.00, 0.99, 527.45, 0.00),
    (1048576, 262144, 6.07, 172.86, 0.00, 0.41, 2560.6, 0.00),
    (2097152, 524288, 8.07, 259.82, 0.00, 1.12, 1871.9, 0.00),
    (4194304, 1048576, 5.44, 771.34, 0.00, 1.06, 3965.7, 0.00),
    (8388608, 2097152, 7.21, 1163.8, 0.00, 0.26, 31685, 0.00),
    (16777216, 4194304, 11.02, 1523.1, 0.00, 0.19, 87564, 0.00),
    (33554432, 8388608, 19.43, 1727.3, 0.00, 0.51, 66059, 0.00),
    (67108864, 16777216, 34.86, 1924.9, 0.00, 0.47, 143456, 0.00),
    (134217728, 33554432, 66.22, 2026.8, 0.00, 0.49, 271833, 0.00),
]

JSON_RUN_ROWS = [
    (8, 2, 6.10, 0.00, 0.00, 0.37, 0.02, 0.00),
    (16, 4, 9.16, 0.00, 0.00, 0.43, 0.04, 0.00),
    (32, 8, 6.17, 0.01, 0.00, 0.33, 0.10, 0.00),
    (64, 16, 9.26, 0.01, 0.00, 0.47, 0.14, 0.00),
    (128, 32, 6.19, 0.02, 0.00, 0.34, 0.38, 0.00),
    (256, 64, 6.30, 0.04, 0.00, 0.40, 0.63, 0.00),
    (512, 128, 8.52, 0.06, 0.00, 0.37, 1.39, 0.00),
    (1024, 256, 6.38, 0.16, 0.00, 0.38, 2.72, 0.00),
    (2048, 512, 6.99, 0.29, 0.00, 0.38, 5.44, 0.00),
    (4096, 1024, 6.81, 0.60, 0.00, 0.78, 5.27, 0.00),
    (8192, 2048, 6.11, 1.34, 0.00, 0.30, 27.29, 0.00),
    (16384, 4096, 5.83, 2.81, 0.00, 0.27, 61.64, 0.00),
    (32768, 8192, 6.31, 5.19, 0.00, 0.24, 136.28, 0.00),
    (65536, 16384, 5.95, 11.01, 0.00, 0.49, 133.56, 0.00),
    (131072, 32768, 8.69, 15.08, 0.00, 0.56, 235.76, 0.00),
    (262144, 65536, 5.13, 51.14, 0.00, 2.12, 123.85, 0.00),
    (524288, 131072, 6.33, 82.80, 0.00, 1.00, 525.02, 0.00),
    (1048576, 262144, 5.56, 188.68, 0.00, 0.36, 2931.8, 0.00),
    (2097152, 524288, 5.74, 365.62, 0.00, 0.33, 6348.3, 0.00),
    (4194304, 1048576, 5.87, 714.56, 0.00, 0.32, 13028, 0.00),
    (8388608, 2097152, 7.08, 1184.1, 0.00, 0.47, 17776, 0.00),
    (16777216, 4194304, 10.98, 1528.5, 0.00, 0.30, 56843, 0.00),
    (33554432, 8388608, 19.32, 1736.5, 0.00, 0.20, 168615, 0.00),
    (67108864, 16777216, 35.14, 1909.7, 0.00, 0.19, 354043, 0.00),
    (134217728, 33554432, 66.39, 2021.7, 0.00, 0.38, 356677, 0.00),
]

GATHER_ROWS = [
    (1048576, 262144, 6.84, 153.23, 0.00, 1.13, 925.57, 0.00),
    (2097152, 524288, 6.06, 346.32, 0.00, 0.35, 5986.7, 0.00),
    (4194304, 1048576, 6.22, 674.54, 0.00, 1.23, 3399.4, 0.00),
    (8388608, 2097152, 8.73, 960.78, 0.00, 1.05, 7994.5, 0.00),
    (16777216, 4194304, 11.14, 1505.5, 0.00, 0.42, 39931, 0.00),
    (33554432, 8388608, 19.46, 1723.9, 0.00, 0.43, 77726, 0.00),
    (67108864, 16777216, 34.98, 1918.3, 0.00, 0.24, 277367, 0.00),
]

# the full-precision values of the first and the last row of the JSON file, as written there
JSON_FIRST = {"out_of_place": {"time_us": 6.0965, "algbw_gbs": 0.001312, "busbw_gbs": 0.0, "wrong": 0},
              "in_place": {"time_us": 0.36745, "algbw_gbs": 0.021772, "busbw_gbs": 0.0, "wrong": 0}}
JSON_LAST = {"out_of_place": {"time_us": 66.388, "algbw_gbs": 2021.716696, "busbw_gbs": 0.0, "wrong": 0},
             "in_place": {"time_us": 0.3763, "algbw_gbs": 356677.459474, "busbw_gbs": 0.0, "wrong": 0}}

COMMON_HEADER = {"nthread": 1, "ngpus": 1, "step_factor": 2, "warmup_iters": 1, "iters": 20, "agg_iters": 1,
                 "validation": 1, "graph": 0}


def printed_cells(name):
    """{size: the 13 cells of its table row} as the text file prints them (to know their decimals)."""
    cells = {}
    for line in load(name).decode("utf-8").splitlines():
        tokens = line.split()
        if len(tokens) == 13 and tokens[0].isdigit():
            cells[int(tokens[0])] = tokens
    return cells


def assert_rows(result, expected, redop):
    """Every row, in order, with every value as printed; type float, root -1 and #wrong 0 on each."""
    rows = result["rows"]
    assert [r["bytes"] for r in rows] == [e[0] for e in expected]
    for row, (size, count, o_time, o_alg, o_bus, i_time, i_alg, i_bus) in zip(rows, expected):
        lead = (row["bytes"], row["count"], row["type"], row["redop"], row["root"])
        assert lead == (size, count, "float", redop, -1)
        assert row["out_of_place"] == {"time_us": o_time, "algbw_gbs": o_alg, "busbw_gbs": o_bus, "wrong": 0}, size
        assert row["in_place"] == {"time_us": i_time, "algbw_gbs": i_alg, "busbw_gbs": i_bus, "wrong": 0}, size
        assert row["partial"] is False and "extra" not in row and "split_lines" not in row


def assert_one_gpu_summary(result, pid):
    assert result["ranks"] == [dict(RANK_0, pid=pid)]
    assert result["nranks"] == 1 and result["hosts"] == ["vm"]
    assert result["out_of_bounds"] == 0 and result["out_of_bounds_ok"] is True
    assert result["out_of_bounds_status"] == "OK"
    # '# Avg bus bandwidth    : 0 ' (one rank): 0, with no OK/FAILED after it
    assert result["avg_busbw_gbs"] == 0.0 and result["avg_busbw_source"] == "footer"
    assert result["avg_busbw_status"] is None
    assert result["max_busbw_gbs"] == 0.0 and result["busbw_at_max_bytes_gbs"] == 0.0
    assert result["completed"] is True
    assert result["errors"] == [] and result["ok"] is True


# --- all_reduce_perf with NCCL_DEBUG=INFO ----------------------------------------------

def test_all_reduce_nccl_info_header_versions_and_device():
    r = parse(INFO_TXT)
    assert r["format"] == "text"
    assert r["test"] == "all_reduce_perf" and r["collective"] == "all_reduce"
    assert r["version"] == "2.19.6"
    assert r["nccl_version"] == "2.28.9+cuda13.0"       # 'NCCL INFO NCCL version 2.28.9+cuda13.0'
    h = r["header"]
    assert h["library"] == "NCCL"
    assert (h["nccl_headers_code"], h["nccl_library_code"]) == (22809, 22809)
    assert dict((k, h[k]) for k in COMMON_HEADER) == COMMON_HEADER
    assert (h["min_bytes"], h["max_bytes"], h["unalign"]) == (8, 134217728, 0)
    assert h["wrong_column"] == "#wrong" and h["time_kind"] == "time"
    assert h["columns"] == {"lead": ["bytes", "count", "type", "redop", "root"],
                            "groups": [["time_us", "algbw_gbs", "busbw_gbs", "wrong"]] * 2, "timestamp": False}
    assert "json_output" not in h
    assert_one_gpu_summary(r, pid=833)


def test_all_reduce_nccl_info_every_row():
    r = parse(INFO_TXT)
    assert len(r["rows"]) == 25
    assert_rows(r, INFO_ROWS, "sum")
    assert r["rows"][0]["out_of_place"]["time_us"] == 5.14 and r["rows"][0]["in_place"]["algbw_gbs"] == 0.04
    last = r["rows"][-1]
    assert last["out_of_place"] == {"time_us": 66.22, "algbw_gbs": 2026.8, "busbw_gbs": 0.0, "wrong": 0}
    assert last["in_place"] == {"time_us": 0.49, "algbw_gbs": 271833.0, "busbw_gbs": 0.0, "wrong": 0}


def test_all_reduce_nccl_info_lines():
    """NCCL 2.28.9 INFO lines: no IB device, IB plugin failed, Socket plugin assigned, 'Using network Socket';
    64 'Channel NN/64 : 0' lines (no 'via'), a Trees line NCCL cut at 1023 characters, Destroy after the rows."""
    text = load(INFO_TXT).decode("utf-8")
    assert "NCCL INFO NET/IB : No device found." in text and "Failed to initialize NET plugin IB" in text
    assert "NCCL INFO Using network Socket" in text
    assert max(len(line) for line in text.splitlines()) == 1023
    r = parse(INFO_TXT)
    assert r["transport"] == "Socket" and r["transport_kind"] == "tcp"
    assert r["channel_transports"] == [] and r["gdr"] is None
    assert r["warnings"] == ["NCCL found no usable IB/RoCE device (NET/IB : No device found.)"]
    # IB is no network NCCL could use here: 'NET/IB : No device found.', then 'Failed to initialize
    # NET plugin IB'; the 'NET/IB : Using [RO]; OOB eth0:...' line between them names no IB device.
    assert r["networks"] == ["Socket"]


# --- all_reduce_perf -J: its stdout and its JSON file (one run) ------------------------

def test_all_reduce_json_run_stdout():
    r = parse(JSON_RUN_TXT)
    assert r["format"] == "text"
    assert r["test"] == "all_reduce_perf" and r["collective"] == "all_reduce"
    assert r["version"] == "2.19.6"
    assert r["nccl_version"] == "2.28.9"                 # no INFO line: from nccl-library=22809
    h = r["header"]
    assert h["json_output"] == "/root/out/all_reduce.json"    # '# Writing JSON output to ...'
    assert (h["nccl_headers_code"], h["nccl_library_code"]) == (22809, 22809)
    assert dict((k, h[k]) for k in COMMON_HEADER) == COMMON_HEADER
    assert (h["min_bytes"], h["max_bytes"], h["unalign"]) == (8, 134217728, 0)
    assert len(r["rows"]) == 25
    assert_rows(r, JSON_RUN_ROWS, "sum")
    assert r["transport"] is None and r["networks"] == [] and r["warnings"] == []
    assert_one_gpu_summary(r, pid=851)


@pytest.mark.parametrize("form", ["bytes", "decoded", "json_only"])
def test_all_reduce_json_file(form):
    if form == "bytes":
        r = parse(JSON_FILE)
    elif form == "decoded":
        r = parse_nccl_tests(json.loads(load(JSON_FILE).decode("utf-8")))
    else:
        r = parse_nccl_tests_json(load(JSON_FILE))
    assert r["format"] == "json"
    assert r["test"] == "all_reduce_perf" and r["collective"] == "all_reduce"    # from args[0] './all_reduce_perf'
    assert r["version"] is None               # the JSON names no nccl-tests version ("version": 3 is its format)
    assert r["nccl_version"] == "2.28.9"      # "nccl_version": 22809
    h = r["header"]
    assert h["json_version"] == 3
    assert dict((k, h[k]) for k in COMMON_HEADER) == COMMON_HEADER
    assert (h["min_bytes"], h["max_bytes"]) == (8, 134217728)
    assert (h["blocking"], h["parallel_init"], h["per_iter_timing"], h["per_iter_skip"]) == (False, False, False, 0)
    assert h["wrong_column"] == "#wrong"
    rows = r["rows"]
    assert [(x["bytes"], x["count"]) for x in rows] == [(e[0], e[1]) for e in JSON_RUN_ROWS]
    assert all((x["type"], x["redop"], x["root"]) == ("float", "sum", -1) for x in rows)   # root "    -1"
    assert all(x["actual_iterations"] == 20 and x["partial"] is False for x in rows)
    assert {k: rows[0][k] for k in JSON_FIRST} == JSON_FIRST
    assert {k: rows[-1][k] for k in JSON_LAST} == JSON_LAST
    assert r["warnings"] == []                # "errors": [""]
    assert "LD_LIBRARY_PATH" not in json.dumps(r)     # the "env" list stays out of the result
    assert_one_gpu_summary(r, pid=851)


def test_json_file_agrees_with_the_stdout_of_its_run():
    """Each JSON value, rounded to the decimals the text prints, is the printed value."""
    text, doc = parse(JSON_RUN_TXT), parse(JSON_FILE)
    cells = printed_cells(JSON_RUN_TXT)
    assert len(cells) == 25
    for key in ("nccl_version", "test", "collective", "ranks", "avg_busbw_gbs", "out_of_bounds", "ok"):
        assert doc[key] == text[key], key
    for key in list(COMMON_HEADER) + ["min_bytes", "max_bytes"]:
        assert doc["header"][key] == text["header"][key], key
    for t_row, j_row in zip(text["rows"], doc["rows"]):
        assert [t_row[k] for k in ("bytes", "count", "type", "redop", "root")] == \
            [j_row[k] for k in ("bytes", "count", "type", "redop", "root")]
        printed = cells[t_row["bytes"]]
        for group, first in (("out_of_place", 5), ("in_place", 9)):
            assert j_row[group]["wrong"] == t_row[group]["wrong"] == 0
            for offset, key in enumerate(("time_us", "algbw_gbs", "busbw_gbs")):
                token = printed[first + offset]
                decimals = len(token.split(".")[1]) if "." in token else 0
                assert t_row[group][key] == float(token)
                assert abs(j_row[group][key] - float(token)) <= 0.5 * 10 ** -decimals + 1e-9, (t_row["bytes"], key)


def test_merge_json_with_stdout_of_its_run():
    merged = merge_json_result(parse(JSON_RUN_TXT), parse(JSON_FILE))
    assert merged["format"] == "json" and merged["ok"] is True and merged["errors"] == []
    assert merged["rows"][-1]["out_of_place"]["algbw_gbs"] == 2021.716696      # the JSON's full precision
    assert merged["ranks"] == [dict(RANK_0, pid=851)]


# --- all_gather_perf --------------------------------------------------------------------

def test_all_gather_one_gpu():
    r = parse(GATHER_TXT)
    assert r["format"] == "text"
    assert r["test"] == "all_gather_perf" and r["collective"] == "all_gather"
    assert r["version"] == "2.19.6" and r["nccl_version"] == "2.28.9"
    h = r["header"]
    assert (h["nccl_headers_code"], h["nccl_library_code"]) == (22809, 22809)
    assert dict((k, h[k]) for k in COMMON_HEADER) == COMMON_HEADER
    assert (h["min_bytes"], h["max_bytes"], h["unalign"]) == (1048576, 67108864, 0)
    assert len(r["rows"]) == 7
    assert_rows(r, GATHER_ROWS, "none")
    first, last = r["rows"][0], r["rows"][-1]
    assert first["out_of_place"] == {"time_us": 6.84, "algbw_gbs": 153.23, "busbw_gbs": 0.0, "wrong": 0}
    assert first["in_place"] == {"time_us": 1.13, "algbw_gbs": 925.57, "busbw_gbs": 0.0, "wrong": 0}
    assert last["out_of_place"] == {"time_us": 34.98, "algbw_gbs": 1918.3, "busbw_gbs": 0.0, "wrong": 0}
    assert last["in_place"] == {"time_us": 0.24, "algbw_gbs": 277367.0, "busbw_gbs": 0.0, "wrong": 0}
    assert r["transport"] is None and r["warnings"] == []
    assert_one_gpu_summary(r, pid=864)
