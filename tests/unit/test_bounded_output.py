# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What is kept of a command's output: bounded head and tail, a parser's line filter, documents, the stop."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import io
import os
import sys

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.clusterops.commcheck.plugins.filter.commcheck_task_timeout import commcheck_task_timeout
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import collective_runner as cr
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import iperf3_cmd as ic
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers import output_capture as oc
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import perftest_cmd as pc
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import runner
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands.runner import HostTransport
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands.collective_runner import lost_in_output
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands.side_runner import run_sides, side_result
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.collective_stream import (
    collective_line_filter)
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_nccl_tests import parse_nccl_tests
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_perftest import parse_perftest
from ansible_collections.clusterops.commcheck.plugins.module_utils.planning.task_bound import task_timeout

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "..", "fixtures", "corpus")
KEEP = oc.OUTPUT_KEEP_BYTES
REPORT = "perftest_bw/ib_write_bw_ndr_gbits_cpufreq_warn.txt"   # 392.34 Gb/s


def corpus(name):
    with open(os.path.join(CORPUS, name)) as handle:
        return handle.read()


def bounded(data, capture=None):
    return oc.read_bounded(io.BytesIO(data), capture)


def junk_lines(size):
    line = b"garbage line that no parser reads, printed before the report 0123456789\n"
    return line * (size // len(line) + 1)


def test_small_output_is_kept_whole():
    text, size, cut = bounded(b"one\ntwo\n")
    assert (text, size, cut) == ("one\ntwo\n", 8, False)


def test_large_output_keeps_whole_lines_of_head_and_tail_and_says_its_size():
    data = b"first line\n" + junk_lines(5 * 1024 * 1024) + corpus(REPORT).encode()
    text, size, cut = bounded(data)
    assert cut and size == len(data)
    assert len(text.encode()) <= 2 * KEEP + 200
    assert text.startswith("first line\n")
    assert "[commcheck: output of %d bytes; kept its first" % len(data) in text
    # the tail starts at a line: the report at the end is read as if nothing came before it
    assert pc.summarize(parse_perftest(text))["bw_gbps"] == 392.34


def test_binary_garbage_without_newlines_is_cut_and_decoded():
    data = (b"\x00\xff\xfe\x80" * (3 * 1024 * 1024)) + b"\n" + corpus(REPORT).encode()
    text, size, cut = bounded(data)
    assert cut and size == len(data) and "\x00" in text and "\ufffd" in text
    assert len(text) <= 2 * KEEP + 200
    assert pc.summarize(parse_perftest(text))["bw_gbps"] == 392.34


def test_a_filter_keeps_the_lines_of_the_middle_it_picks_and_cuts_long_lines():
    long_line = b"x" * (10 * oc.FILTER_LINE_BYTES) + b" keep-me-not\n"
    middle = b"keep 1\n" + long_line + b"drop\n" + b"keep 2\n"
    data = junk_lines(KEEP + 10) + middle + junk_lines(KEEP + 10)
    text, _size, cut = bounded(data, oc.filtered_output(lambda line: line.startswith(("keep", "xxx"))))
    assert cut
    assert "keep 1\n" + "x" * oc.FILTER_LINE_BYTES + "\nkeep 2\n" in text
    assert "drop" not in text and "keep-me-not" not in text
    assert "and 3 line(s) between them" in text


def test_a_filter_keeps_kept_lines_bytes_at_most():
    data = junk_lines(KEEP + 10) + b"keep\n" * (oc.KEPT_LINES_BYTES // 2) + junk_lines(KEEP + 10)
    text, _size, _cut = bounded(data, oc.filtered_output(lambda line: line == "keep"))
    kept = text.count("keep\n")
    assert 0 < kept <= oc.KEPT_LINES_BYTES // len("keep\n")
    assert kept * len("keep\n") > oc.KEPT_LINES_BYTES - 100


def test_a_document_is_kept_whole_up_to_its_bound():
    data = b'{"items": [' + b'"pod",' * (KEEP // 2) + b'"last"]}\n'
    assert bounded(data, oc.DOCUMENT) == (data.decode(), len(data), False)
    assert bounded(data)[2] is True


def nccl_info_output(ranks):
    """nccl-tests' output with NCCL_DEBUG=INFO from ``ranks`` ranks: log records around the table."""
    text = corpus("nccl_tests/all_reduce_perf_2node_16gpu_h100_mpirun.txt")
    head, table = text.split("#\n#  ", 1)[0], "#  " + text.split("#\n#  ", 1)[1]

    def host(rank):
        return "node%04d:%d:%d [%d]" % (rank // 8, 1000 + rank, 2000 + rank, rank % 8)

    # every rank's start first (more than the head keeps), so the transport is only in the middle
    records = ["%s NCCL INFO comm 0x%x rank %d nRanks %d - Init START" % (host(r), r, r, ranks) for r in range(ranks)]
    records += ["%s NCCL INFO Channel %02d/0 : %d[%d] -> %d[%d] [send] via NET/IB/%d" % (
        host(r), channel, r, r % 8, (r + 8) % ranks, r % 8, channel % 4) for r in range(ranks) for channel in range(8)]
    after = ["node%04d:%d:%d [%d] NCCL INFO comm 0x%x rank %d - Destroy COMPLETE" % (
        r // 8, 1000 + r, 2000 + r, r % 8, r, r) for r in range(ranks)]
    return (head + "\n".join(records) + "\n" + table + "\n".join(after) + "\n").encode()


def test_the_collective_filter_keeps_table_and_transport_of_thousands_of_ranks():
    data = nccl_info_output(4096)
    assert len(data) > 3 * 1024 * 1024
    whole = parse_nccl_tests(data.decode())
    text, size, cut = bounded(data, oc.filtered_output(collective_line_filter()))
    assert cut and size == len(data) and len(text) < 2 * KEEP + oc.KEPT_LINES_BYTES
    kept = parse_nccl_tests(text)
    assert kept["transport"] == whole["transport"] == "IB"
    assert kept["rows"] == whole["rows"] and len(kept["rows"]) == 31
    assert kept["avg_busbw_gbs"] == whole["avg_busbw_gbs"]
    # without the filter the table in the middle is lost: the filter is what keeps it
    assert parse_nccl_tests(bounded(data)[0])["rows"] != whole["rows"]


def python_argv(code):
    return [sys.executable, "-c", code]


PRINT_JUNK_THEN = ("import sys; out = sys.stdout.buffer; out.write(b'\\x00\\xffjunk' * (%d // 6)); out.write(b'\\n');"
                   " out.write(open(%r, 'rb').read()); sys.stderr.write('e' * %d)")


def test_the_runner_bounds_what_a_command_printed_and_says_how_much():
    path = os.path.join(CORPUS, REPORT)
    res = HostTransport().run(python_argv(PRINT_JUNK_THEN % (8 * 1024 * 1024, path, 300 * 1024)), 120)
    assert res["rc"] == 0 and res["output_too_large"] is True
    assert res["output_bytes"]["stdout"] > 8 * 1024 * 1024 - 6 and res["output_bytes"]["stderr"] == 300 * 1024
    assert len(res["stdout"]) <= 2 * KEEP + 200 and len(res["stderr"]) <= 2 * KEEP + 200
    assert pc.summarize(parse_perftest(res["stdout"]))["bw_gbps"] == 392.34


def test_a_command_whose_output_passes_the_stop_bound_is_stopped(monkeypatch):
    monkeypatch.setattr(runner, "OUTPUT_STOP_BYTES", 2 * 1024 * 1024)
    forever = "import sys\nwhile True: sys.stdout.write('y' * 65536 + '\\n')"
    res = HostTransport().run(python_argv(forever), 300)
    assert not res["timed_out"] and res["output_stopped"] is True and res["output_too_large"] is True
    assert res["output_bytes"]["stdout"] > 2 * 1024 * 1024
    side = {"role": "client", "metric": "bw"}
    verdict = pc.side_verdict(side, res, parse_perftest(res["stdout"]))
    assert verdict["errors"][0]["code"] == "output_too_large"
    assert "it was stopped there" in verdict["errors"][0]["message"]


def test_a_side_of_a_pair_tool_returns_its_output_bounded():
    path = os.path.join(CORPUS, REPORT)
    jobs = [{"argv": python_argv(PRINT_JUNK_THEN % (4 * 1024 * 1024, path, 10)), "role": "client", "timeout": 120,
             "connect_retries": 0, "step": 0, "retryable": lambda res: False}]
    ran = run_sides(HostTransport(), jobs, abandoned=lambda: False)[0]
    item = side_result({"role": "client"}, jobs[0]["argv"], ran)
    assert item["output_too_large"] is True and item["output_bytes"]["stdout"] > 4 * 1024 * 1024 - 6
    assert len(item["stdout"]) <= 2 * KEEP + 200


def too_large(stdout, stdout_bytes=50 * 1024 * 1024):
    return {"rc": 0, "stdout": stdout, "stderr": "", "timed_out": False, "output_too_large": True,
            "output_bytes": {"stdout": stdout_bytes, "stderr": 0}}


def test_perftest_side_too_large_is_output_too_large_only_when_its_report_was_lost():
    side = {"role": "client", "metric": "bw", "expected_gbps": 400}
    lost = pc.side_verdict(side, too_large("junk\n" * 100), parse_perftest("junk\n" * 100))
    assert lost["verdict"] == "error" and lost["errors"][0]["code"] == "output_too_large"
    assert "52428800 bytes on stdout" in lost["errors"][0]["message"] and lost["fix"]
    text = corpus(REPORT)
    assert pc.side_verdict(side, too_large(text), parse_perftest(text))["verdict"] == "pass"


def test_iperf3_side_too_large_is_output_too_large_when_no_result_was_read():
    side = {"role": "client"}
    lost = ic.side_verdict(side, too_large("{ \"start\": {"), {"errors": []})
    assert lost["verdict"] == "error" and lost["errors"][0]["code"] == "output_too_large"
    assert ic.OUTPUT_CAPTURE is oc.DOCUMENT


# --- the whole-task bound -----------------------------------------------------------------------------------

def test_the_task_bound_is_the_steps_times_their_deadline_plus_the_margin():
    assert task_timeout(3, 40) == 3 * 45 + 60
    assert task_timeout(0, 40) == task_timeout(1, 40) == 105      # a task that runs runs one step at least
    # a host's sides: their distinct steps (a side without one is step 0)
    sides = [{"step": 0}, {"step": 0}, {"step": 2}, {"role": "server"}, {"step": 5}]
    assert task_timeout(sides, 40, margin=0) == 3 * 45
    assert task_timeout("discovery", 60) == 10 * 65 + 60


def test_a_collective_that_may_bisect_counts_its_bisection_runs():
    assert task_timeout(1, 100, margin=0, bisect_hosts=8) == (1 + 2 * 8 + 3) * 105
    assert task_timeout(1, 100, margin=0, bisect_hosts=8, bisect_max_runs=4) == 5 * 105
    assert task_timeout(1, 100, margin=0, bisect_hosts=1) == 105      # nothing to bisect


def test_the_task_bound_filter_refuses_what_is_not_a_bound():
    assert commcheck_task_timeout([{"step": 1}], "30") == 95
    for steps, step_timeout in ((2, 0), (2, "soon"), (-1, 10), ({"a": 1}, 10)):
        with pytest.raises(AnsibleFilterError, match="commcheck_task_timeout"):
            commcheck_task_timeout(steps, step_timeout)


def test_a_collective_run_whose_table_was_lost_in_its_output_is_output_too_large():
    judgement = {"verdict": "error", "cause": "no result table", "fix": "read the output",
                 "errors": [{"code": "no_rows"}]}
    res = too_large("x", 80 * 1024 * 1024)
    lost = lost_in_output(judgement, res)
    assert lost["verdict"] == "error" and [e["code"] for e in lost["errors"]] == ["output_too_large", "no_rows"]
    assert "83886080 bytes on stdout" in lost["cause"] and lost["fix"] == cr.COLLECTIVE_ERRORS["output_too_large"][1]
