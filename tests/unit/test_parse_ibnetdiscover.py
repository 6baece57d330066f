# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""parse_ibnetdiscover on real ibnetdiscover outputs (tests/fixtures/real/ibnetdiscover/SOURCES.md) and on what is
not one."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import pytest

from ansible_collections.clusterops.commcheck.plugins.filter.parse_ibnetdiscover import FilterModule
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.ib_fabric import guid
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_ibnetdiscover import (
    parse_ibnetdiscover,
)

from real_outputs import codes, real

QDR = real("ibnetdiscover", "ibnetdiscover_qdr_infiniscale_notes.txt")
EDR = real("ibnetdiscover", "ibnetdiscover_edr_switchib_cut_flask_app.txt")
SIM = real("ibnetdiscover", "ibnetdiscover_sdr_ibsim_book.txt")
NDR = real("ibnetdiscover", "ibnetdiscover_ndr_qm9700_redacted_blog.txt")
PORTS_EDR = real("ibnetdiscover", "ibnetdiscover_p_edr_infiniband_exporter.txt")
PORTS_HDR = real("ibnetdiscover", "ibnetdiscover_p_hdr_infiniband_exporter.txt")
PORTS_QDR = real("ibnetdiscover", "ibnetdiscover_p_qdr_infiniband_exporter.txt")


def _link(result, lid, port):
    """The link with the end (lid, port), that end first."""
    for link in result["links"]:
        for near, far in ((link["from"], link["to"]), (link["to"], link["from"])):
            if (near["lid"], near["port"]) == (lid, port):
                return near, far, link
    raise AssertionError("no link at lid %s port %s" % (lid, port))


def test_qdr_topology_file_reads_the_switch_its_five_hosts_and_each_link_once_from_both_blocks():
    result = parse_ibnetdiscover(QDR)
    assert (result["ok"], result["format"], result["errors"], result["warnings"]) == (True, "topology", [], [])
    assert result["switches"] == [{"guid": "0x0002c9020046c588", "description": "Infiniscale-IV Mellanox Technologies",
                                   "lid": 2, "ports": 36, "enhanced": False}]
    assert len(result["cas"]) == 5 and len(result["links"]) == 5
    near, far, link = _link(result, 6, 1)
    # the switch's block gives the adapter's port GUID, the adapter's block its node GUID: one link, both known
    assert near == {"type": "CA", "guid": "0x0002c90300293e1e", "port_guid": "0x0002c90300293e1f", "lid": 6,
                    "port": 1, "description": "ip-211 mlx4_0"}
    assert (far["type"], far["guid"], far["port"], far["lid"]) == ("Switch", "0x0002c9020046c588", 1, 2)
    assert (link["width"], link["speed"]) == ("4x", "QDR")
    assert _link(result, 3, 1)[1]["port"] == 36


def test_edr_cut_tab_separated_reads_leaf_and_spine_uplinks_and_a_degraded_4x_ddr_link():
    result = parse_ibnetdiscover(EDR)
    assert (result["ok"], result["errors"], result["warnings"]) == (True, [], [])
    assert [(s["guid"], s["lid"]) for s in result["switches"]] == [
        ("0xec0d9a0300ec8240", 48), ("0xec0d9a0300ec8200", 25)]
    # 36 ports of leaf 48, 24 of spine 25 less the 6 between them, and gpu019 behind leaf 23 (its own block)
    assert len(result["links"]) == 55
    near, far, link = _link(result, 25, 11)
    assert (far["guid"], far["port"], far["lid"], link["speed"]) == ("0xec0d9a0300ec8480", 11, 23, "DDR")
    near, far, _link48 = _link(result, 57, 1)
    assert (near["description"], far["lid"], far["port"]) == ("node015 HCA-1", 48, 34)
    gpu = _link(result, 49, 1)
    assert (gpu[0]["port_guid"], gpu[1]["guid"], gpu[1]["port"]) == ("0x506b4b030043f9e6", "0xec0d9a0300ec8480", 35)


def test_ibsim_output_keeps_the_ibwarn_line_as_a_warning_and_reads_switch_to_switch_links():
    result = parse_ibnetdiscover(SIM)
    assert result["warnings"] == ['ibwarn: [6931] sim_connect: attached as client 1 at node "Switch1"']
    assert [s["description"] for s in result["switches"]] == ["Switch2", "Switch1"]
    near, far, _whole = _link(result, 3, 4)
    assert (near["type"], far["type"], far["description"], far["port"]) == ("Switch", "Switch", "Switch1", 4)
    assert _link(result, 4, 2)[1] == {"type": "Switch", "guid": "0x0000000000200000", "port_guid": None, "lid": 1,
                                      "port": 2, "description": "Switch1"}


def test_ndr_redacted_guids_are_kept_as_printed_and_the_omitted_line_is_a_warning():
    result = parse_ibnetdiscover(NDR)
    assert result["switches"] == [{"guid": "9c05<redacted>", "description": "MF0;CNTSN-POD229-QM97-IB-02:MQM9700/U1",
                                   "lid": 1, "ports": 129, "enhanced": True}]
    assert result["warnings"] == ["...omitted"]
    near, far, link = _link(result, 11, 1)
    assert (near["description"], far["port"], link["width"], link["speed"]) == ("tj01-4090-node009 mlx5_2", 6,
                                                                                "2x", "NDR")
    assert len(result["links"]) == 5


def test_ports_report_reads_ca_and_switch_links_once_and_ports_without_a_peer():
    result = parse_ibnetdiscover(PORTS_EDR)
    assert (result["format"], result["errors"], len(result["links"])) == ("ports", [], 4)
    near, far, link = _link(result, 133, 1)
    assert near == {"type": "CA", "guid": None, "port_guid": "0x7cfe9003003b4b96", "lid": 133, "port": 1,
                    "description": "o0002 HCA-1"}
    assert (far["description"], far["port"], far["guid"], link["speed"]) == (
        "ib-i1l1s01", 11, "0x7cfe9003009ce5b0", "EDR")
    assert _link(result, 1719, 1)[1]["description"] == "ib-i1l2s01"
    assert [(u["end"]["lid"], u["end"]["port"], u["speed"]) for u in result["unlinked"]] == [
        (2052, 37, None), (1781, 80, "SDR")]
    assert {s["description"] for s in result["switches"]} == {"ib-i1l1s01", "ib-i1l2s01", "ib-i4l1s01", "ib-i7l2s01"}


def test_ports_report_keeps_the_blanks_inside_the_quotes_of_a_name():
    result = parse_ibnetdiscover(PORTS_HDR)
    near, far, _whole = _link(result, 88, 1)
    assert (near["description"], far["description"], far["port"]) == ("worker20 mlx5_3", "5FB0405-leaf-IB01 ", 79)
    assert result["unlinked"][1]["end"]["description"] == " 5FB0406-spine-IB02 "


def test_ports_report_line_with_an_unquoted_name_and_no_peer():
    result = parse_ibnetdiscover(PORTS_QDR)
    assert result["unlinked"] == [{"end": {"type": "Switch", "guid": "0x0002c9020040f161",
                                           "port_guid": "0x0002c9020040f161", "lid": 479, "port": 22,
                                           "description": "Infiniscale-IV Mellanox Technologies"},
                                   "width": "4x", "speed": "QDR"}]
    assert result["links"] == [] and result["ok"]


@pytest.mark.parametrize("text, code", [
    ("", "no_output"), (None, "no_output"), ("\n \n", "no_output"), ("\x00" * 1000, "no_output"),
    ("ibpanic: [2231] main: discover failed\n", "scan_failed"),
    ("src/ibnetdisc.c:811; Failed to resolve self\nibnetdiscover: iberror: failed: discover failed\n", "scan_failed"),
])
def test_what_is_no_scan_is_an_error_never_an_exception(text, code):
    result = parse_ibnetdiscover(text)
    assert (codes(result), result["ok"]) == ([code], False)


@pytest.mark.parametrize("junk", ["bash: ibnetdiscover: command not found", b"\xff\xfe\x00\x01", "[1]", 'Switch "x"',
                                  42])
def test_other_text_reads_nothing_and_says_so(junk):
    result = parse_ibnetdiscover(junk)
    assert (result["ok"], result["errors"], result["links"]) == (False, [], [])
    assert result["warnings"]


def test_every_prefix_of_a_real_output_parses_without_raising():
    for text in (QDR, PORTS_EDR):
        for cut in range(0, len(text) + 1, 5):
            result = parse_ibnetdiscover(text[:cut])
            assert result["ok"] or result["errors"] or result["warnings"]


def test_a_huge_fabric_reads_in_one_pass_and_lists_a_bounded_number_of_warnings():
    # hand-made: a 40 000-port ports report and 5 000 unknown lines
    lines = ["CA %5d  1 0x%016x 4x HDR - SW    51 %d 0x946dae0300630bf6 ( 'h%d mlx5_0' - 'leaf-1' )"
             % (i + 100, i + 1, i % 40 + 1, i) for i in range(40000)]
    result = parse_ibnetdiscover("\n".join(lines + ["noise %d" % i for i in range(5000)]))
    assert len(result["links"]) == 40000 and len(result["switches"]) == 1
    assert len(result["warnings"]) == 101 and result["warnings"][-1] == "... 4900 more warnings"


def test_guids_take_one_form():
    assert guid("2c90300293e1f") == guid("0x0002C90300293E1F") == guid("0002:c903:0029:3e1f") == "0x0002c90300293e1f"
    assert guid("fe80:0000:0000:0000:0002:c903:0029:3e1f") == "0x0002c90300293e1f"
    assert (guid("9c05<redacted>"), guid(""), guid(None)) == ("9c05<redacted>", None, None)


def test_the_filter_reads_a_registered_command_result():
    parse = FilterModule().filters()["parse_ibnetdiscover"]
    assert parse({"stdout": PORTS_QDR, "rc": 0})["unlinked"][0]["end"]["lid"] == 479
