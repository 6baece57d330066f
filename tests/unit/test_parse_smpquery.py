# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""parse_smpquery on real smpquery outputs (tests/fixtures/real/smpquery/SOURCES.md) and on what is not one."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import pytest

from ansible_collections.clusterops.commcheck.plugins.filter.parse_smpquery import FilterModule
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_smpquery import parse_smpquery

from real_outputs import codes, real

CA = real("smpquery", "smpquery_nodeinfo_ca_lid4_ompi_users_18737.txt")
SWITCH = real("smpquery", "smpquery_nodeinfo_switch_ibsim_book.txt")
DESCRIPTION = real("smpquery", "smpquery_nd_sm_host_cheatsheet.txt")
FAILED = real("smpquery", "smpquery_nodeinfo_failed_ompi_users_18737.txt")


def test_nodeinfo_of_a_channel_adapter_reads_every_field_with_numbers_as_numbers():
    result = parse_smpquery(CA)
    assert (result["ok"], result["errors"], result["address"], result["is_switch"]) == (True, [], "Lid 4", False)
    assert result["node"] == {
        "base_version": 1, "class_version": 1, "node_type": "Channel Adapter", "num_ports": 2,
        "system_guid": "0x0002c90300336fe3", "guid": "0x0002c90300336fe0", "port_guid": "0x0002c90300336fe1",
        "partition_cap": 128, "device_id": "0x1003", "revision": "0x00000000", "local_port": 1,
        "vendor_id": "0x0002c9"}
    assert result["description"] is None


def test_nodeinfo_of_a_switch_says_it_is_one_and_keeps_the_ibwarn_line_as_a_warning():
    result = parse_smpquery(SWITCH)
    assert (result["is_switch"], result["node"]["num_ports"], result["node"]["guid"], result["errors"]) == (
        True, 8, "0x0000000000200001", [])
    assert result["warnings"] == ['ibwarn: [565056] sim_connect: attached as client 1 at node "Switch1"']


def test_nodedesc_gives_the_description_without_the_padding_dots():
    result = parse_smpquery(DESCRIPTION)
    assert (result["ok"], result["description"], result["node"], result["is_switch"]) == (
        True, "b1nstcx02 HCA-1", {}, None)


def test_a_description_of_32_characters_or_more_has_one_dot_and_keeps_its_own_leading_dots():
    long_name = "..MF0;ib-leaf-07:MQM8700/U1 rack 12 row B"
    assert parse_smpquery("Node Description:." + long_name)["description"] == long_name
    assert parse_smpquery("Node Description:" + "." * 22 + "leaf-07 U1")["description"] == "leaf-07 U1"


def test_nodeinfo_then_nodedesc_read_together_over_a_directed_route():
    # discovery reads both outputs of one port as one text; the header names the directed route
    text = SWITCH.replace("# Node info: Lid 3", "# Node info: DR path slid 0; dlid 0; 0,1").replace(
        "LocalPort:.......................0", "LocalPort:.......................17") + DESCRIPTION
    result = parse_smpquery(text)
    assert (result["address"], result["node"]["local_port"], result["description"], result["is_switch"]) == (
        "DR path slid 0; dlid 0; 0,1", 17, "b1nstcx02 HCA-1", True)


def test_a_failed_query_is_an_error_with_its_line_and_the_ibwarn_a_warning():
    result = parse_smpquery(FAILED)
    assert (codes(result), result["ok"], result["node"]) == (["query_failed"], False, {})
    assert result["errors"][0]["message"] == "smpquery: iberror: failed: operation NodeInfo: node info query failed"
    assert result["errors"][0]["cause"] and result["errors"][0]["fix"]
    assert result["warnings"] == ["ibwarn: [11192] mad_rpc: _do_madrpc failed; dport (Lid 4)"]


def test_a_node_type_printed_as_a_number_is_named():
    assert parse_smpquery("NodeType:........................2\n")["node"]["node_type"] == "Switch"


@pytest.mark.parametrize("text, code", [
    ("", "no_output"), (None, "no_output"), ("  \n\n", "no_output"),
    ("ibpanic: [4242] main: can't open UMAD port (mlx5_0:1)\n", "query_failed"),
])
def test_what_is_no_answer_is_an_error_never_an_exception(text, code):
    result = parse_smpquery(text)
    assert (codes(result), result["ok"]) == ([code], False)


@pytest.mark.parametrize("junk", ["bash: smpquery: command not found", b"\xff\xfe\x00", "Guid:", "::::....", 42])
def test_other_text_reads_nothing_and_says_so(junk):
    result = parse_smpquery(junk)
    assert (result["ok"], result["errors"], result["node"], result["description"]) == (False, [], {}, None)
    assert len(result["warnings"]) == 1


def test_every_prefix_of_a_real_output_parses_without_raising():
    for end in range(0, len(SWITCH) + 1, 7):
        result = parse_smpquery(SWITCH[:end])
        assert result["ok"] or result["errors"] or result["warnings"]


def test_the_filter_reads_a_registered_command_result():
    parse = FilterModule().filters()["parse_smpquery"]
    assert parse({"stdout": DESCRIPTION, "rc": 0})["description"] == "b1nstcx02 HCA-1"
