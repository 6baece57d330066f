# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""parse_nccl_tests on REAL nccl-tests output of failing runs and of more format variants, captured on a real GPU.

Where the nineteen files named below (tests/fixtures/corpus/nccl_tests/*_v2.19.6_1gpu_h200_*_real_device.txt)
come from: one session on 2026-11-26, 11:22-11:23 UTC, on the lab's lent GPU machine, kind 'nvidia-h200',
by the script capture2.sh of docs/gpu-captures.md (see also test_nccl_real_device_capture.py):

- machine: a Firecracker VM (hostname 'vm') with one NVIDIA H200 (143771 MiB, PCI 00000000:00:06.0),
  driver 580.159.04 (cudaDriverVersion 13000), CUDA 13.0 (nvcc V13.0.88); no InfiniBand device
  (/sys/class/infiniband empty), one network interface eth0 (192.0.2.2, as NCCL printed it).
- nccl-tests: github.com/NVIDIA/nccl-tests commit a0b82b2260cf5152b9f8c061bbf7eaf0ba096432
  ('NCCL_TESTS_VERSION 2.19.6'), built there in 26 s with the make command of capture.sh, for the seven
  binaries all_reduce_perf, all_gather_perf, broadcast_perf, reduce_scatter_perf, alltoall_perf,
  sendrecv_perf, reduce_perf: ``make -C src -j16 MPI=0 NVCC_GENCODE=-gencode=arch=compute_90,code=sm_90
  NCCL_HOME=<pip nvidia-nccl-cu13> BUILDDIR=/tmp/nccltests-build <the 7 binaries>``.
- NCCL: the pip package nvidia-nccl-cu13 2.28.9 ('NCCL version 2.28.9+cuda13.0', code 22809), put first
  in LD_LIBRARY_PATH (not shown in the command lines).
- each case ran in the build folder as ``timeout 60 env <VARS> ./<binary> <args>``, stdout and stderr
  into one file (so, as through a pipe, stdout is block-buffered and stderr is not).

The FIRST line of each file (``$ <command with its env vars>``) and its LAST line (``# exit status N``,
the status the shell saw) are written by the capture script, not by nccl-tests. Nothing was cut: no
file holds the machine's environment or anything of the workplace (the host name is 'vm'; 192.0.2.2 is
the address NCCL printed there).

Cases (file suffix: command -> exit status):

- ``minmax_invalid``: ./all_reduce_perf -b 8 -e 4 -g 1 -> 255
- ``bogus_option``: ./all_reduce_perf --bogus -> 0 (getopt's complaint, nccl-tests' usage text, and exit 0!)
- ``g2_invalid_device``: ./all_reduce_perf -b 1M -e 8M -f 2 -g 2 (one GPU) -> 5 (testNotImplemented)
- ``no_visible_gpu``: CUDA_VISIBLE_DEVICES= ./all_reduce_perf -b 1M -e 8M -f 2 -g 1 -> 2 (testCudaError)
- ``socket_ifname_nosuchif``: NCCL_SOCKET_IFNAME=nosuchif0 NCCL_DEBUG=WARN ./all_reduce_perf ... -g 1 -> 3
- ``net_ib_forced_info``: NCCL_NET=IB NCCL_DEBUG=INFO ./all_reduce_perf ... -g 1 -> 3: with one rank NCCL
  still needs a net plugin; IB has no device, so 'Failed to initialize any NET plugin' and ncclInvalidUsage.
- ``net_ib_forced``: the same without NCCL_DEBUG -> 3 (only 'Test NCCL failure ... invalid usage').
- broadcast_perf, reduce_scatter_perf, alltoall_perf, sendrecv_perf, reduce_perf -b 1M -e 8M -f 2 -g 1 -> 0
  (files named <op>_perf_v2.19.6_1gpu_h200_real_device.txt).
- ``check0``: ./all_reduce_perf -b 1M -e 8M -f 2 -g 1 -c 0 -> 0 (validation 0: every #wrong is N/A)
- ``run_cycles``: ./all_reduce_perf -b 1M -e 8M -f 2 -g 1 -n 5 -w 1 -N 2 -> 0 (the sizes twice, one table)
- ``op_all_type_all``: ./all_reduce_perf -b 1M -e 4M -f 2 -g 1 -o all -d all -> 3: 192 rows (10 types x
  6 ops x 3 sizes, then f8e4m3 sum/prod/max/min), then ncclAllReduce of f8e4m3 with avg fails
  ('invalid argument', all_reduce.cu:507) and the run stops without a footer.
- ``info_subsys_init_net``: NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET ./all_reduce_perf ... -g 1 -> 0
- ``size_200g``: ./all_reduce_perf -b 1G -e 200G -f 2 -g 1 -> 0: nccl-tests does not run out of memory,
  it reduces maxBytes to 48247057066 and measures 1G..32G; in-place algbw is printed as '2e+06' and so on.
- ``oom_buffers``: ./all_reduce_perf -b 4G -e 4G -g 1 while another process (a PyTorch tensor the script
  made) held all but 3 GiB of the GPU -> 3: ncclMemAlloc of the buffers fails, 'unhandled cuda error'.
- ``oom_nccl_init``: NCCL_DEBUG=WARN ./all_reduce_perf -b 1M -e 8M -f 2 -g 1 while two such processes
  held all but about 0.25 GiB -> 2: cudaSetDevice (the context) fails with 'out of memory' (common.cu:1569).

The parser misread three of them when they were captured; these tests hold its fixes:
test_bogus_option_names_the_option (getopt's 'unrecognized option' line was taken for a command line and
dropped), test_bogus_option_usage_text_is_no_warning (a usage line became a warning) and
test_net_ib_forced_info_net_plugin_failure_is_the_error (the WARN 'Failed to initialize any NET plugin' was
only a warning; it is now the error nccl_net_unavailable).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import re

import pytest

from nccl_captures import codes, error, load, parse


MINMAX = "all_reduce_perf_v2.19.6_1gpu_h200_minmax_invalid_real_device.txt"
BOGUS = "all_reduce_perf_v2.19.6_1gpu_h200_bogus_option_real_device.txt"
G2 = "all_reduce_perf_v2.19.6_1gpu_h200_g2_invalid_device_real_device.txt"
NO_GPU = "all_reduce_perf_v2.19.6_1gpu_h200_no_visible_gpu_real_device.txt"
NO_IF = "all_reduce_perf_v2.19.6_1gpu_h200_socket_ifname_nosuchif_real_device.txt"
IB_INFO = "all_reduce_perf_v2.19.6_1gpu_h200_net_ib_forced_info_real_device.txt"
IB = "all_reduce_perf_v2.19.6_1gpu_h200_net_ib_forced_real_device.txt"
OOM_BUFFERS = "all_reduce_perf_v2.19.6_1gpu_h200_oom_buffers_real_device.txt"
OOM_INIT = "all_reduce_perf_v2.19.6_1gpu_h200_oom_nccl_init_real_device.txt"
ALL_OPS = "all_reduce_perf_v2.19.6_1gpu_h200_op_all_type_all_real_device.txt"
CHECK0 = "all_reduce_perf_v2.19.6_1gpu_h200_check0_real_device.txt"
CYCLES = "all_reduce_perf_v2.19.6_1gpu_h200_run_cycles_real_device.txt"
SUBSYS = "all_reduce_perf_v2.19.6_1gpu_h200_info_subsys_init_net_real_device.txt"
SIZE_200G = "all_reduce_perf_v2.19.6_1gpu_h200_size_200g_real_device.txt"
BROADCAST = "broadcast_perf_v2.19.6_1gpu_h200_real_device.txt"
REDUCE_SCATTER = "reduce_scatter_perf_v2.19.6_1gpu_h200_real_device.txt"
ALLTOALL = "alltoall_perf_v2.19.6_1gpu_h200_real_device.txt"
SENDRECV = "sendrecv_perf_v2.19.6_1gpu_h200_real_device.txt"
REDUCE = "reduce_perf_v2.19.6_1gpu_h200_real_device.txt"

# the exit status the capture noted at the end of each file
EXIT_STATUS = {
    MINMAX: 255, BOGUS: 0, G2: 5, NO_GPU: 2, NO_IF: 3, IB_INFO: 3, IB: 3, OOM_BUFFERS: 3, OOM_INIT: 2,
    ALL_OPS: 3, CHECK0: 0, CYCLES: 0, SUBSYS: 0, SIZE_200G: 0,
    BROADCAST: 0, REDUCE_SCATTER: 0, ALLTOALL: 0, SENDRECV: 0, REDUCE: 0,
}
# runs that stopped before the table: no row, no footer
NO_TABLE = [MINMAX, BOGUS, G2, NO_GPU, NO_IF, IB_INFO, IB, OOM_BUFFERS, OOM_INIT]

HEADER_1M_8M = {"nccl_headers_code": 22809, "nccl_library_code": 22809, "nthread": 1, "ngpus": 1,
                "min_bytes": 1048576, "max_bytes": 8388608, "step_factor": 2, "warmup_iters": 1, "iters": 20,
                "agg_iters": 1, "validation": 1, "graph": 0, "unalign": 0}
COLUMNS = {"lead": ["bytes", "count", "type", "redop", "root"],
           "groups": [["time_us", "algbw_gbs", "busbw_gbs", "wrong"]] * 2, "timestamp": False}


def rank_0(pid):
    return {"rank": 0, "group": 0, "pid": pid, "host": "vm", "device": 0, "bus_id": "0000:00:06",
            "name": "NVIDIA H200"}


def printed_rows(name):
    """The 13 cells of each table row, as the file prints them."""
    return [line.split() for line in load(name).decode("utf-8").splitlines()
            if len(line.split()) == 13 and line.split()[0].isdigit()]


# --- what the capture wrote around the tool's output ------------------------------------

@pytest.mark.parametrize("name", sorted(EXIT_STATUS))
def test_capture_lines_and_exit_status(name):
    lines = load(name).decode("utf-8").splitlines()
    assert lines[0].startswith("$ ") and "_perf" in lines[0]
    assert lines[-1] == "# exit status %d" % EXIT_STATUS[name]


# --- failures: never a passing result ------------------------------------------------------

@pytest.mark.parametrize("name", NO_TABLE)
def test_failed_run_is_never_a_pass(name):
    r = parse(name)
    assert r["ok"] is False and r["rows"] == [] and r["completed"] is False
    assert r["errors"] and r["errors"][-1]["code"] == "no_table"
    assert r["test"] == "all_reduce_perf" and r["collective"] == "all_reduce"
    assert r["avg_busbw_gbs"] is None and r["out_of_bounds"] is None


def test_min_bytes_above_max_bytes():
    r = parse(MINMAX)
    assert codes(r) == ["invalid_arguments", "no_table"]
    assert r["errors"][0]["message"] == "invalid sizes for 'minbytes' and 'maxbytes': 8 > 4"
    assert r["version"] is None and r["header"] == {} and r["warnings"] == []


def test_bogus_option_is_a_failure_though_it_exits_0():
    """nccl-tests 2.19.6 prints its usage and exits 0 on an unknown option: only the parser sees the failure."""
    r = parse(BOGUS)
    assert r["ok"] is False and r["rows"] == []
    assert codes(r) == ["invalid_arguments", "no_table"]
    assert r["version"] is None and r["header"] == {}


def test_bogus_option_names_the_option():
    """The line that names the bad option is getopt's "./all_reduce_perf: unrecognized option '--bogus'";
    nccl-tests then prints "invalid option '?'" (the '?' getopt returned) and its usage text."""
    text = load(BOGUS).decode("utf-8")
    assert "./all_reduce_perf: unrecognized option '--bogus'\ninvalid option '?'\nUSAGE: all_reduce_perf" in text
    r = parse(BOGUS)
    entry = error(r, "invalid_arguments")
    # MISREAD: the getopt line is taken for a command line (it starts with './' and names the binary) and
    # dropped; 'unrecognized option' is not an invalid_arguments pattern. Only "invalid option '?'" is kept.
    assert any("unrecognized option '--bogus'" in evidence for evidence in entry["evidence"]), entry["evidence"]


def test_bogus_option_usage_text_is_no_warning():
    """The usage text nccl-tests prints after a bad option reports no problem of the run."""
    r = parse(BOGUS)
    # MISREAD: the usage line '[-T,--timeout <time in seconds>]' holds the word 'timeout', so
    # CollectiveLines._unknown lists it as a warning.
    assert r["warnings"] == []


def test_two_gpus_asked_one_present():
    r = parse(G2)
    assert codes(r) == ["gpu_count_mismatch", "test_failure", "no_table"]
    assert r["errors"][0]["message"] == "Invalid number of GPUs: 2 requested but only 1 were found."
    trace = error(r, "test_failure")
    assert trace["message"] == ".. vm pid 1100: Test failure common.cu:1454" and trace["hosts"] == ["vm"]
    assert r["ranks"] == [] and r["header"]["ngpus"] == 2       # no Rank line: it failed listing the devices
    assert r["version"] == "2.19.6" and r["nccl_version"] == "2.28.9"


def test_no_visible_gpu():
    r = parse(NO_GPU)
    assert codes(r) == ["nccl_cuda_failure", "no_table"]
    first = r["errors"][0]
    assert first["message"] == "vm: Test CUDA failure util.cu:674 'no CUDA-capable device is detected'"
    assert first["hosts"] == ["vm"]
    assert "CUDA_VISIBLE_DEVICES" in first["hint"]
    assert r["ranks"] == [] and r["warnings"] == []


def test_socket_ifname_matches_no_interface():
    r = parse(NO_IF)
    assert codes(r) == ["nccl_bootstrap_failed", "nccl_invalid_usage", "no_table"]
    boot = r["errors"][0]
    assert boot["message"] == "Bootstrap : no socket interface found" and boot["hosts"] == ["vm"]
    assert "NCCL_SOCKET_IFNAME" in boot["fix"]
    usage = error(r, "nccl_invalid_usage")
    assert usage["message"] == ("vm: Test NCCL failure common.cu:1550 "
                                "'invalid usage (run with NCCL_DEBUG=WARN for details) / '")
    assert r["ranks"] == [rank_0(1117)] and r["warnings"] == []


def test_net_ib_forced_without_debug():
    """Without NCCL_DEBUG only the result string is printed: invalid usage, at ncclGroupEnd (common.cu:222)."""
    r = parse(IB)
    assert codes(r) == ["nccl_invalid_usage", "no_table"]
    assert r["errors"][0]["message"] == ("vm: Test NCCL failure common.cu:222 "
                                         "'invalid usage (run with NCCL_DEBUG=WARN for details) / '")
    assert r["ranks"] == [rank_0(1139)] and r["transport"] is None and r["warnings"] == []


def test_net_ib_forced_info_lines():
    r = parse(IB_INFO)
    assert r["ok"] is False and r["rows"] == []
    assert r["nccl_version"] == "2.28.9+cuda13.0" and r["ranks"] == [rank_0(1127)]
    assert "nccl_invalid_usage" in codes(r) and codes(r)[-1] == "no_table"
    assert error(r, "nccl_invalid_usage")["message"] == (
        "vm: Test NCCL failure common.cu:222 'invalid usage (run with NCCL_DEBUG=WARN for details) / '")
    # IB was forced and has no device: NCCL used no network at all
    assert r["transport"] is None and r["networks"] == []
    assert "NCCL found no usable IB/RoCE device (NET/IB : No device found.)" in r["warnings"]


def test_net_ib_forced_info_net_plugin_failure_is_the_error():
    """The cause an operator must act on is NCCL's WARN 'Failed to initialize any NET plugin' (NCCL_NET=IB
    on a node without an IB device), printed before the 'invalid usage' result that follows from it."""
    text = load(IB_INFO).decode("utf-8")
    assert "plugin/net.cc:379 NCCL WARN Failed to initialize any NET plugin" in text
    r = parse(IB_INFO)
    # its own code (not nccl_invalid_usage, whose cause and fix speak of two ranks on one GPU)
    first = r["errors"][0]
    assert first["message"] == "Failed to initialize any NET plugin", codes(r)
    assert first["code"] == "nccl_net_unavailable" and first["hosts"] == ["vm"]
    assert "NCCL_NET" in first["fix"] and "RDMA" in first["cause"]
    assert codes(r) == ["nccl_net_unavailable", "nccl_invalid_usage", "no_table"]


def test_oom_while_allocating_the_buffers():
    """Another process held all but 3 GiB: ncclMemAlloc of the 4 GiB buffers (common.cu:1107) fails; without
    NCCL_DEBUG NCCL says only 'unhandled cuda error'."""
    r = parse(OOM_BUFFERS)
    assert codes(r) == ["nccl_cuda_failure", "no_table"]
    first = r["errors"][0]
    assert first["message"] == ("vm: Test NCCL failure common.cu:1107 "
                                "'unhandled cuda error (run with NCCL_DEBUG=INFO for details) / '")
    assert first["hosts"] == ["vm"]
    h = r["header"]
    assert (h["min_bytes"], h["max_bytes"], h["step_bytes"]) == (4294967296, 4294967296, 1048576)
    assert "step_factor" not in h                 # 'step: 1048576(bytes)'
    assert r["ranks"] == [rank_0(1353)] and r["warnings"] == []


def test_oom_creating_the_context():
    r = parse(OOM_INIT)
    assert codes(r) == ["nccl_cuda_failure", "no_table"]
    first = r["errors"][0]
    assert first["message"] == "vm: Test CUDA failure common.cu:1569 'out of memory'"
    assert "GPU memory is exhausted" in first["hint"]
    assert r["ranks"] == [rank_0(1398)] and r["warnings"] == []


# --- a failure in the middle of the table (-o all -d all) ----------------------------------

ALL_TYPES = ["int8", "uint8", "int32", "uint32", "int64", "uint64", "half", "float", "double", "bfloat16"]
ALL_OPS_NAMES = ["sum", "prod", "max", "min", "avg", "mulsum"]
ELEMENT_BYTES = {"int8": 1, "uint8": 1, "int32": 4, "uint32": 4, "int64": 8, "uint64": 8, "half": 2, "float": 4,
                 "double": 8, "bfloat16": 2, "f8e4m3": 1}


def test_op_all_type_all_rows_then_invalid_argument():
    r = parse(ALL_OPS)
    assert r["ok"] is False and r["completed"] is False
    assert codes(r) == ["nccl_invalid_argument"]
    assert r["errors"][0]["message"] == ("vm: Test NCCL failure all_reduce.cu:507 "
                                         "'invalid argument (run with NCCL_DEBUG=WARN for details) / '")
    assert r["warnings"] == ["no result footer (Avg bus bandwidth): the output may be cut or the run unfinished"]
    expected = [(t, op) for t in ALL_TYPES for op in ALL_OPS_NAMES] + [("f8e4m3", op) for op in ALL_OPS_NAMES[:4]]
    rows = r["rows"]
    assert len(rows) == 192 == 3 * len(expected)
    sizes = [1048576, 2097152, 4194304]
    assert [(x["type"], x["redop"]) for x in rows] == [pair for pair in expected for _size in sizes]
    assert [x["bytes"] for x in rows] == sizes * len(expected)
    assert all(x["count"] == x["bytes"] // ELEMENT_BYTES[x["type"]] and x["root"] == -1 for x in rows)
    assert all(x["out_of_place"]["wrong"] == 0 and x["in_place"]["wrong"] == 0 for x in rows)
    assert all(x["partial"] is False and "extra" not in x for x in rows)
    first, last = rows[0], rows[-1]
    assert (first["bytes"], first["count"], first["type"], first["redop"]) == (1048576, 1048576, "int8", "sum")
    assert first["out_of_place"] == {"time_us": 7.40, "algbw_gbs": 141.63, "busbw_gbs": 0.0, "wrong": 0}
    assert first["in_place"] == {"time_us": 0.99, "algbw_gbs": 1063.8, "busbw_gbs": 0.0, "wrong": 0}
    assert (last["bytes"], last["count"], last["type"], last["redop"]) == (4194304, 4194304, "f8e4m3", "min")
    assert last["out_of_place"] == {"time_us": 6.18, "algbw_gbs": 679.10, "busbw_gbs": 0.0, "wrong": 0}
    assert last["in_place"] == {"time_us": 0.48, "algbw_gbs": 8719.1, "busbw_gbs": 0.0, "wrong": 0}
    # no footer: the average is that of the rows, and the out-of-bounds count is unknown
    assert r["avg_busbw_gbs"] == 0.0 and r["avg_busbw_source"] == "rows"
    assert r["out_of_bounds"] is None and r["out_of_bounds_ok"] is None
    assert r["header"]["max_bytes"] == 4194304 and r["ranks"] == [rank_0(1260)]


# --- tables of the other collectives and all_reduce variants --------------------------------

# (size, count, type, redop, root, out-of-place time/algbw/busbw/#wrong, in-place time/algbw/busbw/#wrong),
# as printed; None for N/A
TABLES = {
    BROADCAST: (1151, 4666.49, [
        (1048576, 262144, "float", "none", 0, 6.69, 156.83, 156.83, 0, 0.67, 1575.6, 1575.6, 0),
        (2097152, 524288, "float", "none", 0, 6.82, 307.70, 307.70, 0, 0.56, 3730.3, 3730.3, 0),
        (4194304, 1048576, "float", "none", 0, 7.22, 581.09, 581.09, 0, 0.45, 9394.8, 9394.8, 0),
        (8388608, 2097152, "float", "none", 0, 6.30, 1330.6, 1330.6, 0, 0.41, 20255, 20255, 0),
    ]),
    REDUCE_SCATTER: (1166, 0.0, [
        (1048576, 262144, "float", "sum", -1, 5.14, 204.04, 0.00, 0, 0.46, 2295.2, 0.00, 0),
        (2097152, 524288, "float", "sum", -1, 6.51, 321.91, 0.00, 0, 0.34, 6173.5, 0.00, 0),
        (4194304, 1048576, "float", "sum", -1, 5.24, 800.29, 0.00, 0, 0.18, 22857, 0.00, 0),
        (8388608, 2097152, "float", "sum", -1, 5.77, 1454.1, 0.00, 0, 0.21, 39541, 0.00, 0),
    ]),
    # in-place #wrong is N/A for alltoall and sendrecv
    ALLTOALL: (1181, 0.0, [
        (1048576, 262144, "float", "none", -1, 7.81, 134.27, 0.00, 0, 1.01, 1038.9, 0.00, None),
        (2097152, 524288, "float", "none", -1, 7.30, 287.24, 0.00, 0, 0.59, 3565.7, 0.00, None),
        (4194304, 1048576, "float", "none", -1, 7.21, 581.69, 0.00, 0, 0.28, 14892, 0.00, None),
        (8388608, 2097152, "float", "none", -1, 6.58, 1274.3, 0.00, 0, 0.29, 28817, 0.00, None),
    ]),
    # sendrecv_perf prints redop 'sum'
    SENDRECV: (1196, 951.419, [
        (1048576, 262144, "float", "sum", -1, 9.96, 105.30, 105.30, 0, 1.36, 773.40, 773.40, None),
        (2097152, 524288, "float", "sum", -1, 10.26, 204.40, 204.40, 0, 1.94, 1081.1, 1081.1, None),
        (4194304, 1048576, "float", "sum", -1, 8.18, 512.58, 512.58, 0, 2.94, 1427.2, 1427.2, None),
        (8388608, 2097152, "float", "sum", -1, 11.76, 713.39, 713.39, 0, 3.00, 2794.0, 2794.0, None),
    ]),
    REDUCE: (1211, 6398.57, [
        (1048576, 262144, "float", "sum", 0, 5.48, 191.28, 191.28, 0, 0.80, 1310.9, 1310.9, 0),
        (2097152, 524288, "float", "sum", 0, 5.71, 367.43, 367.43, 0, 1.05, 1993.7, 1993.7, 0),
        (4194304, 1048576, "float", "sum", 0, 5.65, 742.19, 742.19, 0, 0.21, 19554, 19554, 0),
        (8388608, 2097152, "float", "sum", 0, 6.91, 1214.2, 1214.2, 0, 0.32, 25815, 25815, 0),
    ]),
    # -c 0: validation 0, #wrong N/A everywhere
    CHECK0: (1226, 0.0, [
        (1048576, 262144, "float", "sum", -1, 4.98, 210.72, 0.00, None, 0.25, 4197.7, 0.00, None),
        (2097152, 524288, "float", "sum", -1, 4.61, 454.96, 0.00, None, 0.34, 6149.1, 0.00, None),
        (4194304, 1048576, "float", "sum", -1, 5.38, 779.99, 0.00, None, 0.33, 12618, 0.00, None),
        (8388608, 2097152, "float", "sum", -1, 5.39, 1555.0, 0.00, None, 0.34, 24796, 0.00, None),
    ]),
    # -N 2: the sizes twice in one table, one footer
    CYCLES: (1245, 0.0, [
        (1048576, 262144, "float", "sum", -1, 8.26, 126.95, 0.00, 0, 3.52, 298.26, 0.00, 0),
        (2097152, 524288, "float", "sum", -1, 5.81, 360.73, 0.00, 0, 4.08, 513.78, 0.00, 0),
        (4194304, 1048576, "float", "sum", -1, 6.90, 607.85, 0.00, 0, 3.06, 1369.6, 0.00, 0),
        (8388608, 2097152, "float", "sum", -1, 6.04, 1389.6, 0.00, 0, 0.35, 23872, 0.00, 0),
        (1048576, 262144, "float", "sum", -1, 7.36, 142.56, 0.00, 0, 0.31, 3402.3, 0.00, 0),
        (2097152, 524288, "float", "sum", -1, 5.96, 351.99, 0.00, 0, 0.97, 2152.7, 0.00, 0),
        (4194304, 1048576, "float", "sum", -1, 6.07, 691.35, 0.00, 0, 0.32, 13298, 0.00, 0),
        (8388608, 2097152, "float", "sum", -1, 6.29, 1332.7, 0.00, 0, 0.28, 29558, 0.00, 0),
    ]),
    SUBSYS: (1275, 0.0, [
        (1048576, 262144, "float", "sum", -1, 6.28, 166.90, 0.00, 0, 0.58, 1806.8, 0.00, 0),
        (2097152, 524288, "float", "sum", -1, 8.48, 247.32, 0.00, 0, 0.56, 3737.2, 0.00, 0),
        (4194304, 1048576, "float", "sum", -1, 7.77, 539.76, 0.00, 0, 0.29, 14276, 0.00, 0),
        (8388608, 2097152, "float", "sum", -1, 7.53, 1114.2, 0.00, 0, 0.29, 28792, 0.00, 0),
    ]),
    # in-place algbw printed in %g form ('2e+06')
    SIZE_200G: (1294, 0.0, [
        (1073741824, 268435456, "float", "sum", -1, 507.85, 2114.3, 0.00, 0, 0.47, 2e+06, 0.00, 0),
        (2147483648, 536870912, "float", "sum", -1, 1011.64, 2122.8, 0.00, 0, 1.02, 2e+06, 0.00, 0),
        (4294967296, 1073741824, "float", "sum", -1, 2015.32, 2131.2, 0.00, 0, 0.24, 2e+07, 0.00, 0),
        (8589934592, 2147483648, "float", "sum", -1, 4023.85, 2134.8, 0.00, 0, 0.27, 3e+07, 0.00, 0),
        (17179869184, 4294967296, "float", "sum", -1, 8039.19, 2137.0, 0.00, 0, 0.36, 5e+07, 0.00, 0),
        (34359738368, 8589934592, "float", "sum", -1, 16075.5, 2137.4, 0.00, 0, 1.03, 3e+07, 0.00, 0),
    ]),
}


def group(time_us, algbw, busbw, wrong):
    return {"time_us": time_us, "algbw_gbs": algbw, "busbw_gbs": busbw, "wrong": wrong}


@pytest.mark.parametrize("name", sorted(TABLES))
def test_table_every_row_as_printed(name):
    pid, avg, expected = TABLES[name]
    r = parse(name)
    assert r["format"] == "text" and r["version"] == "2.19.6"
    assert r["test"] == name.split("_v2.19.6")[0]
    assert r["collective"] == r["test"][:-len("_perf")]
    assert r["ranks"] == [rank_0(pid)] and r["nranks"] == 1 and r["hosts"] == ["vm"]
    assert r["header"]["columns"] == COLUMNS and r["header"]["wrong_column"] == "#wrong"
    rows = r["rows"]
    assert len(rows) == len(expected)
    for row, e in zip(rows, expected):
        assert (row["bytes"], row["count"], row["type"], row["redop"], row["root"]) == e[:5]
        assert row["out_of_place"] == group(*e[5:9]), e[0]
        assert row["in_place"] == group(*e[9:13]), e[0]
        assert row["partial"] is False and "extra" not in row and "split_lines" not in row
    # the same values as the text prints them
    for row, cells in zip(rows, printed_rows(name)):
        assert row["out_of_place"]["algbw_gbs"] == float(cells[6]) and row["in_place"]["time_us"] == float(cells[9])
    assert r["avg_busbw_gbs"] == avg and r["avg_busbw_source"] == "footer" and r["avg_busbw_status"] is None
    assert r["out_of_bounds"] == 0 and r["out_of_bounds_status"] == "OK" and r["out_of_bounds_ok"] is True
    assert r["completed"] is True and r["errors"] == [] and r["ok"] is True


@pytest.mark.parametrize("name", [BROADCAST, REDUCE_SCATTER, ALLTOALL, SENDRECV, REDUCE, CHECK0, CYCLES, SUBSYS])
def test_table_header_and_versions(name):
    r = parse(name)
    header = dict(HEADER_1M_8M)
    if name == CHECK0:
        header["validation"] = 0
    if name == CYCLES:
        header["iters"] = 5
    assert dict((k, r["header"][k]) for k in header) == header
    assert r["nccl_version"] == ("2.28.9+cuda13.0" if name == SUBSYS else "2.28.9")


def test_rooted_collectives_busbw_is_algbw():
    """broadcast and reduce name root 0; with one rank their bus factor is 1 (busbw = algbw), so the
    footer's average is not 0 as it is for all_reduce, reduce_scatter and alltoall."""
    for name, top in ((BROADCAST, 20255.0), (REDUCE, 25815.0)):
        r = parse(name)
        assert all(x["root"] == 0 for x in r["rows"])
        assert r["max_busbw_gbs"] == top and r["max_busbw_bytes"] == 8388608
        assert r["busbw_at_max_bytes_gbs"] == top


def test_plain_tables_have_no_warnings_and_no_network():
    for name in (BROADCAST, REDUCE_SCATTER, ALLTOALL, SENDRECV, REDUCE, CHECK0, CYCLES):
        r = parse(name)
        assert r["warnings"] == [] and r["transport"] is None and r["networks"] == [], name


def test_size_200g_reduces_max_bytes():
    r = parse(SIZE_200G)
    h = r["header"]
    assert (h["min_bytes"], h["max_bytes"], h["max_bytes_reduced_to"]) == (1073741824, 214748364800, 48247057066)
    assert r["warnings"] == ["maxBytes reduced to 48247057066 bytes due to GPU memory limitation"]
    assert r["rows"][-1]["bytes"] == 34359738368       # 64 GiB would be above the reduced maximum
    assert r["rows"][0]["in_place"]["algbw_gbs"] == 2000000.0      # '2e+06'


def test_info_subsys_init_net_lines():
    """NCCL_DEBUG_SUBSYS=INIT,NET: no 'Bootstrap: Using' (BOOTSTRAP) line, but the NET lines and the
    libmlx5 dlvsym notes; the Socket plugin is used, IB has no device."""
    text = load(SUBSYS).decode("utf-8")
    assert "NCCL INFO Bootstrap: Using" not in text and "dlvsym failed on mlx5dv_reg_dmabuf_mr" in text
    assert re.search(r"NCCL INFO Using network Socket\n", text)
    r = parse(SUBSYS)
    assert r["transport"] == "Socket" and r["transport_kind"] == "tcp" and r["networks"] == ["Socket"]
    assert r["channel_transports"] == [] and r["gdr"] is None
    assert r["warnings"] == ["NCCL found no usable IB/RoCE device (NET/IB : No device found.)"]
