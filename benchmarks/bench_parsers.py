#!/usr/bin/env python
# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Benchmark (not a test): throughput and linearity of every parser, and its time on adversarial input.

For each parser it builds a realistic input from the real outputs in
tests/fixtures (repeated, and for nccl-tests interleaved with the ``NCCL INFO``
lines an ``NCCL_DEBUG=INFO`` run prints: an init block per run and log lines
between the table rows), parses an input of --mb MB and one ten times larger,
and prints the throughput on the larger one and the time ratio of the two
(a linear parser gives ~10, a quadratic one ~100). Then it times adversarial
inputs of 10,000 and 100,000 lines (blank lines, whitespace-only lines, ``{``
lines), one long line without a newline (1 MB and 10 MB), and --crafted-lines
(and a tenth as many) 4 KB lines crafted against the parser's own line regexes.
Usage::

    .venv/bin/python benchmarks/bench_parsers.py [--mb 2.5] [--parsers nccl_tests perftest_bw ...] [--json out.json]
        [--skip-adversarial] [--crafted-lines 1000] [--code DIR]

Times are CPU seconds of the parsing process (time.process_time), so that
other work on a shared machine does not count. ``--code DIR`` imports the
parsers from DIR/ansible_collections/clusterops/commcheck instead (e.g.
``git archive <commit> plugins`` unpacked there) to compare two versions.

Each row also checks what the parser read (rows, devices, ...) so that a fast
parser that reads nothing does not look good.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import argparse
import json
import os
import re
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# --code DIR: import the parsers from another copy of the collection (DIR holds ansible_collections/), e.g.
# an export of an older commit, to compare before and after on the same inputs.
_CODE = sys.argv[sys.argv.index("--code") + 1] if "--code" in sys.argv[:-1] else os.path.join(REPO, ".build", "collections")
sys.path.insert(0, _CODE)

from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers import (  # noqa: E402
    parse_hccl_test, parse_ibdev2netdev, parse_ibstat, parse_ibv_devinfo, parse_iperf3, parse_nccl_tests,
    parse_perftest, parse_rdma_link, parse_show_gids)

FIXTURES = os.path.join(REPO, "tests", "fixtures")
CORPUS = os.path.join(FIXTURES, "corpus")
MB = 1e6


def fixture(*parts):
    with open(os.path.join(CORPUS, *parts), encoding="utf-8") as handle:
        return handle.read()


def repeat_to(parts, size):
    """Concatenate the texts in turn (newline-separated) until the result has size characters."""
    out = []
    total = 0
    index = 0
    while total < size:
        text = parts[index % len(parts)].rstrip("\n") + "\n"
        out.append(text)
        total += len(text)
        index += 1
    return "".join(out)


# --- nccl-tests with NCCL_DEBUG=INFO ------------------------------------------------

def _nccl_info_lines():
    """The NCCL INFO/WARN records of a real NCCL_DEBUG=INFO run, with '{host}', '{pid}', '{dev}' slots."""
    text = fixture("nccl_tests", "all_reduce_perf_nccl_debug_info_warn_cuda_failure.txt")
    records = []
    for line in text.splitlines():
        match = re.match(r"^GENOA-06:4766:(\d+) \[(\d)\] (.*NCCL (?:INFO|WARN) .*)$", line)
        if match and "Cuda failure" not in match.group(3) and "group.cc" not in match.group(3):
            records.append("{host}:{pid}:%s [{dev}] %s" % (match.group(1), match.group(3)))
    return records


def nccl_run(run, ranks=16):
    """One all_reduce_perf run on 2 x 8 H100 (real table) with an NCCL_DEBUG=INFO log around and inside it."""
    table = fixture("nccl_tests", "all_reduce_perf_2node_16gpu_h100_mpirun.txt").splitlines()
    info = _nccl_info_lines()
    hosts = ["node%03d-a" % (run % 1000), "node%03d-b" % (run % 1000)]
    out = []
    first_row = next(i for i, line in enumerate(table) if re.match(r"^\s+\d+\s+\d+\s+float", line))
    last_rank = max(i for i, line in enumerate(table) if "Rank" in line and " on " in line)
    head, columns = table[:last_rank + 1], table[last_rank + 1:first_row]
    rows = [line for line in table[first_row:] if line.strip()]
    out.extend(head)
    for rank in range(ranks):
        for record in info:
            out.append(record.format(host=hosts[rank // 8], pid=6000 + rank, dev=rank % 8))
    out.extend(columns)
    for index, row in enumerate(rows):
        if row.lstrip()[:1].isdigit():
            size = row.split()[0]
            out.append("%s:%d:%d [%d] NCCL INFO %s Bytes -> Algo 1 proto 2 time 25.874907"
                       % (hosts[0], 6000, 6100, index % 8, size))
            out.append("%s:%d:%d [%d] NCCL INFO Channel %02d/0 : 0[0] -> 8[0] [send] via NET/IB/0/GDRDMA"
                       % (hosts[0], 6000, 6100, index % 8, index % 32))
        out.append(row)
    return "\n".join(out) + "\n"


def nccl_input(size):
    runs = []
    total = 0
    while total < size:
        text = nccl_run(len(runs))
        runs.append(text)
        total += len(text)
    return "".join(runs)


def nccl_expected_rows(text):
    return text.count(" float     sum      -1 ")


def iperf3_input(size):
    """One long iperf3 -J run: the real loopback result with its intervals repeated."""
    with open(os.path.join(FIXTURES, "iperf3", "tcp_loopback.json"), encoding="utf-8") as handle:
        doc = json.load(handle)
    one = len(json.dumps(doc["intervals"][0], indent="\t"))
    doc["intervals"] = doc["intervals"] * max(1, int(size // one))
    return json.dumps(doc, indent="\t")


# name: (parse function, input builder, count of what it read, expected count from the input)
PARSERS = [
    ("nccl_tests", parse_nccl_tests.parse_nccl_tests, nccl_input,
     lambda r: len(r["rows"]), nccl_expected_rows),
    ("perftest_bw", parse_perftest.parse_perftest,
     lambda size: repeat_to([fixture("perftest_bw", n) for n in (
         "ib_write_bw_a_mlx4_fdr_mb.txt", "ib_write_bw_ndr_gbits_cpufreq_warn.txt",
         "ib_read_bw_a_mlx4_cpufreq_mid_table.txt")], size),
     lambda r: len(r["rows"]), None),
    ("perftest_lat", parse_perftest.parse_perftest,
     lambda size: repeat_to([fixture("perftest_lat", n) for n in (
         "ib_write_lat_a_mlx4_fdr.txt", "ib_send_lat_ndr_cpufreq_warn.txt")], size),
     lambda r: len(r["rows"]), None),
    ("hccl_test", parse_hccl_test.parse_hccl_test,
     lambda size: repeat_to([fixture("hccl_tests", "all_reduce_test_official_doc_example_8npu.txt")], size),
     lambda r: len(r["rows"]), lambda text: text.count("| success")),
    ("iperf3", parse_iperf3.parse_iperf3, iperf3_input,
     lambda r: len(r["interval_gbps"]), lambda text: text.count('"sum":')),
    ("ibstat", parse_ibstat.parse_ibstat_full,
     lambda size: repeat_to([fixture("rdma_tools", n) for n in (
         "ibstat_a100_all_active.txt", "ibstat_12ca_roce_some_down_polling.txt")], size),
     lambda r: len(r["cas"]), lambda text: text.count("CA '")),
    ("ibstatus", parse_ibstat.parse_ibstatus_full,
     lambda size: repeat_to([fixture("rdma_tools", "ibstatus_a100_hdr_all_active.txt")], size),
     lambda r: sum(len(ca["ports"]) for ca in r["cas"]), lambda text: text.count("Infiniband device")),
    ("ibv_devinfo", parse_ibv_devinfo.parse_ibv_devinfo_full,
     lambda size: repeat_to([fixture("rdma_tools", n) for n in (
         "ibv_devinfo_v_mlnx_ofed4_exp_cx4lx_roce.txt", "ibv_devinfo_4dev_roce_port_down.txt")], size),
     lambda r: len(r["devices"]), lambda text: text.count("hca_id:")),
    ("ibv_devices", parse_ibv_devinfo.parse_ibv_devices_full,
     lambda size: repeat_to([fixture("rdma_tools", "ibv_devices_4dev.txt")], size),
     lambda r: len(r["devices"]), lambda text: text.count("mlx5_")),
    ("ibdev2netdev", parse_ibdev2netdev.parse_ibdev2netdev_full,
     lambda size: repeat_to([fixture("rdma_tools", n) for n in (
         "ibdev2netdev_10port_ib_two_down.txt", "ibdev2netdev_v_cx4_two_ports.txt")], size),
     lambda r: len(r["devices"]), lambda text: text.count("==>")),
    ("rdma_link", parse_rdma_link.parse_rdma_link_full,
     lambda size: repeat_to([fixture("rdma_tools", "rdma_link_old_format_ib_and_roce.txt")], size),
     lambda r: len(r["links"]), None),
    ("show_gids", parse_show_gids.parse_show_gids_full,
     lambda size: repeat_to([fixture("rdma_tools", "show_gids_4dev_cx4lx_12gids.txt")], size),
     lambda r: len(r["gids"]), lambda text: 12 * text.count("n_gids_found=12")),
]

BLANKS = " " * 4000
# Lines (4 KB, the longest a parser reads of one line) crafted against each parser's own line regexes:
# a long run of blanks or a repeated word where a lazy group, an unbounded run or a ".*" search used to
# backtrack (quadratic in the line, ~8 million steps per line).
CRAFTED = {
    "nccl_tests": ("", "x NCCL " + "a" * 4000),
    "perftest_bw": ("", "no such file or directory " + "ib_" * 1300),
    "perftest_lat": ("", "no such file or directory " + "ib_" * 1300),
    "hccl_test": ("", "a" + BLANKS + "b | x"),
    "iperf3": ("", "iperf3: error -" + BLANKS),
    "ibstat": ("CA 'mlx5_0'\n", "Rate: a" + BLANKS + "b"),
    "ibstatus": ("Infiniband device 'mlx5_0' port 1 status:\n", "state: 4: a" + BLANKS + "b"),
    "ibv_devinfo": ("hca_id: mlx5_0\n", "fw_ver: a" + BLANKS + "b"),
    "ibv_devices": ("", "ibv_devices " * 360),
    "ibdev2netdev": ("", "/sys/class/infiniband/" * 180),
    "rdma_link": ("", "link a/1 x" + BLANKS + "y"),
    "show_gids": ("", "show_gids " * 400),
}

ADVERSARIAL = [
    ("blank lines", lambda n: "\n" * n),
    ("whitespace-only lines", lambda n: " \t  \n" * n),
    ("`{` lines", lambda n: "{\n" * n),
    ("one long line, no newline", lambda n: "8 {" * (n * 33)),   # 100,000 -> 9.9 MB
]


def timed(function, text):
    """CPU seconds of one parse (the machine is shared: wall time would measure the neighbours too)."""
    start = time.process_time()
    result = function(text)
    return time.process_time() - start, result


def run_realistic(names, size):
    rows = []
    for name, function, build, count, expected in PARSERS:
        if names and name not in names:
            continue
        small, large = build(size), build(size * 10)
        t_small, _result = timed(function, small)
        t_large, result = timed(function, large)
        got = count(result)
        want = expected(large) if expected else None
        rows.append({"parser": name, "mb": round(len(large) / MB, 1), "seconds": round(t_large, 3),
                     "mb_per_s": round(len(large) / MB / t_large, 2), "ratio_10x": round(t_large / t_small, 1),
                     "read": got, "expected": want})
        print("  %-13s %6.1f MB %7.2f s %7.2f MB/s  10x ratio %5.1f  read %d%s" % (
            name, len(large) / MB, t_large, len(large) / MB / t_large, t_large / t_small, got,
            "" if want is None else " (expected %d)" % want), file=sys.stderr)
    return rows


def run_adversarial(names, crafted_lines):
    rows = []
    for name, function, _build, _count, _expected in PARSERS:
        if names and name not in names:
            continue
        entry = {"parser": name}
        for label, build in ADVERSARIAL:
            t_small, _res = timed(function, build(10000))
            t_large, _res = timed(function, build(100000))
            entry[label] = (round(t_large, 3), round(t_large / max(t_small, 1e-6), 1))
        head, line = CRAFTED[name]
        t_small, _res = timed(function, head + (line + "\n") * (crafted_lines // 10))
        t_large, _res = timed(function, head + (line + "\n") * crafted_lines)
        entry[CRAFTED_LABEL % crafted_lines] = (round(t_large, 3), round(t_large / max(t_small, 1e-6), 1))
        rows.append(entry)
        print("  %-13s %s" % (name, entry), file=sys.stderr)
    return rows


CRAFTED_LABEL = "%d crafted 4 KB lines"


def markdown(realistic, adversarial):
    lines = ["| parser | input (MB) | time (s) | MB/s | time ratio 10x input | read (expected) |",
             "|---|---|---|---|---|---|"]
    for row in realistic:
        lines.append("| %s | %.1f | %.2f | %.1f | %.1f | %d%s |" % (
            row["parser"], row["mb"], row["seconds"], row["mb_per_s"], row["ratio_10x"], row["read"],
            "" if row["expected"] is None else " (%d)" % row["expected"]))
    if not adversarial:
        return "\n".join(lines)
    lines.append("")
    labels = [label for label in adversarial[0] if label != "parser"] if adversarial else []
    lines.append("| parser | " + " | ".join("%s: s (ratio 10x)" % label for label in labels) + " |")
    lines.append("|---|" + "---|" * len(labels))
    for row in adversarial:
        lines.append("| %s | " % row["parser"] + " | ".join(
            "%.3f (%.1f)" % row[label] for label in labels) + " |")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n", maxsplit=1)[0])
    parser.add_argument("--mb", type=float, default=2.5, help="size of the smaller realistic input (MB); x10 too")
    parser.add_argument("--parsers", nargs="*", default=[], help="only these (names as in the table)")
    parser.add_argument("--skip-adversarial", action="store_true")
    parser.add_argument("--crafted-lines", type=int, default=1000,
                        help="crafted 4 KB lines per parser (and a tenth of them, for the ratio)")
    parser.add_argument("--json", help="also write the numbers to this file")
    parser.add_argument("--code", help="import the parsers from DIR/ansible_collections (default: this checkout)")
    args = parser.parse_args()
    print("realistic inputs (%.1f MB and %.1f MB):" % (args.mb, args.mb * 10), file=sys.stderr)
    realistic = run_realistic(args.parsers, int(args.mb * MB))
    adversarial = []
    if not args.skip_adversarial:
        print("adversarial inputs (10,000 and 100,000 lines; the long line: 1 MB and 10 MB; crafted lines):",
              file=sys.stderr)
        adversarial = run_adversarial(args.parsers, args.crafted_lines)
    print(markdown(realistic, adversarial))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump({"realistic": realistic, "adversarial": adversarial}, handle, indent=1)


if __name__ == "__main__":
    main()
