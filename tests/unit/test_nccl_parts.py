# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The pieces of parse_nccl_tests: column layout, transport detection, result summary, shared line handling."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.collective_lines import (
    MAX_UNKNOWN_LISTED, CollectiveLines)
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.mpi_errors import ErrorCollector
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.nccl_errors import (
    NCCL_TESTS_ERRORS, classify_warn, result_code)
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.nccl_result import (
    collective_of, empty_result, finish)
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.nccl_table import layout_from_header
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.nccl_transport import (
    TransportSeen, net_kind)
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.text import Notes


def test_layout_from_a_column_line():
    tokens = "size count type redop root time algbw busbw #wrong time algbw busbw #wrong".split()
    layout = layout_from_header(tokens)
    assert layout.lead == ["bytes", "count", "type", "redop", "root"]
    assert layout.groups == [["time_us", "algbw_gbs", "busbw_gbs", "wrong"]] * 2
    assert layout.wrong_kind == "count" and layout.source == "header"


def test_no_layout_from_a_line_without_time_or_bandwidth():
    assert layout_from_header("size count type redop root".split()) is None
    assert layout_from_header("size count type time algbw".split()) is None   # no busbw in the group


def test_named_network_wins_over_channels_and_plugin_lines():
    seen = TransportSeen()
    warnings = Notes()
    seen.info("NET/IB : Using [0]mlx5_0:1/RoCE", warnings)
    seen.info("Channel 00/0 : 0[0] -> 8[0] [send] via NET/Socket/0", warnings)
    seen.info("Using network IB", warnings)
    result = empty_result()
    seen.finish(result)
    assert result["transport"] == "IB" and result["transport_kind"] == "rdma"
    assert result["networks"] == ["IB", "Socket"]
    assert result["channel_transports"] == ["NET/Socket"] and result["gdr"] is False


def _networks(*messages):
    seen, warnings, result = TransportSeen(), Notes(), empty_result()
    for message in messages:
        seen.info(message, warnings)
    seen.finish(result)
    return result["transport"], result["networks"]


def test_a_plugin_line_counts_only_with_a_device_listed_and_not_once_that_plugin_failed():
    # NCCL 2.28 without an RDMA device (real: tests/fixtures/corpus/nccl_tests/*_nccl_info_real_device.txt)
    assert _networks("NET/IB : No device found.", "NET/IB : Using [RO]; OOB eth0:192.0.2.2<0>",
                     "Failed to initialize NET plugin IB", "NET/Socket : Using [0]eth0:192.0.2.2<0>") == (
        "Socket", ["Socket"])
    assert _networks("NET/IB : Using [RO]; OOB eth0:10.0.0.1<0>") == (None, [])
    assert _networks("NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_1:1/RoCE [RO]; OOB eth0:10.0.0.1<0>") == (
        "IB", ["IB"])
    assert _networks("NET/IB : Using [0]mlx5_0:1/IB [RO]; OOB ib0:10.0.0.1<0>", "Failed to initialise NET plugin IB",
                     "NET/Socket : Using [0]ib0:10.0.0.1<0>") == ("Socket", ["Socket"])
    # what the channels or "Using network" say stands whatever the plugin lines said
    assert _networks("Failed to initialize NET plugin IB", "Using network IB") == ("IB", ["IB"])


def test_net_kind():
    assert (net_kind("Socket"), net_kind("AWS Libfabric"), net_kind("custom"), net_kind(None)) == (
        "tcp", "rdma", "other", None)


def test_warn_and_result_codes():
    assert classify_warn("NET/IB : Got completion from peer 10.0.0.2 with error 12") == "ib_transport_error"
    assert classify_warn("nothing known here") is None
    assert result_code("unhandled cuda error") == "nccl_cuda_failure"
    assert result_code("something new") == "nccl_error"


def test_collective_of():
    assert collective_of("/opt/bin/all_reduce_perf_mpi") == "all_reduce"
    assert collective_of(None) is None


def test_finish_summarises_rows_and_judges_wrong_data():
    result = empty_result()
    result["warnings"] = Notes()
    group = {"time_us": 1.0, "algbw_gbs": 1.0, "busbw_gbs": 2.0, "wrong": 0}
    result["rows"] = [{"bytes": 8, "out_of_place": dict(group), "in_place": dict(group, wrong=3)},
                      {"bytes": 16, "out_of_place": dict(group, busbw_gbs=4.0), "in_place": None}]
    errors = ErrorCollector(NCCL_TESTS_ERRORS)
    finish(result, errors, False)
    assert (result["max_busbw_gbs"], result["max_busbw_bytes"]) == (4.0, 16)
    assert result["busbw_at_max_bytes_gbs"] == 4.0
    assert (result["avg_busbw_gbs"], result["avg_busbw_source"]) == (round(8.0 / 3, 6), "rows")
    assert [e["code"] for e in result["errors"]] == ["wrong_results"]
    assert result["errors"][0]["sizes"] == [8]
    assert result["ok"] is False


class _Lines(CollectiveLines):
    def __init__(self):
        CollectiveLines.__init__(self)
        self.errors = ErrorCollector(NCCL_TESTS_ERRORS)
        self.warnings = Notes()


def test_only_the_headline_of_an_open_mpi_frame_is_a_warning():
    lines = _Lines()
    text = ["-" * 30, "mpirun was unable to launch the specified application as it could not access", "x failed",
            "-" * 30, "libibverbs: Warning: couldn't load driver 'libmlx4-rdmav34.so'"]
    for index, line in enumerate(text):
        if not lines._frame(line):
            lines._unknown(index, line)
    assert lines.warnings.as_list() == [text[1], text[4]]


def test_unknown_lines_beyond_the_limit_are_counted():
    lines = _Lines()
    for index in range(MAX_UNKNOWN_LISTED + 3):
        lines._unknown(index, "error: thing %d failed" % index)
    lines._count_unlisted()
    assert len(lines.warnings) == MAX_UNKNOWN_LISTED + 1
    assert lines.warnings.as_list()[-1] == "3 more output lines not understood (not listed)"
