# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""parse_iblinkinfo on real iblinkinfo outputs (tests/fixtures/real/iblinkinfo/SOURCES.md) and on what is not one."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import pytest

from ansible_collections.clusterops.commcheck.plugins.filter.parse_iblinkinfo import FilterModule
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_iblinkinfo import parse_iblinkinfo

from real_outputs import codes, real

HDR = real("iblinkinfo", "iblinkinfo_hdr_quantum_sharp_notes.txt")
SWITCH = real("iblinkinfo", "iblinkinfo_hdr_qm8700_switch_S_notes.txt")
QDR = real("iblinkinfo", "iblinkinfo_qdr_infiniscale_notes.txt")
GREP = real("iblinkinfo", "iblinkinfo_edr_sb7700_grep_up.txt")


def _port(result, lid, port):
    return next(p for p in result["ports"] if (p["node"]["lid"], p["port"]) == (lid, port))


def test_hdr_fabric_reads_every_port_of_the_switch_and_each_host_link_once():
    result = parse_iblinkinfo(HDR)
    assert (result["ok"], result["errors"], result["warnings"]) == (True, [], [])
    assert result["switches"] == [{"guid": "0x0c42a103008982a4", "description": "Quantum Mellanox Technologies",
                                   "lid": 3}]
    assert len(result["ports"]) == 22 + 41 and len(result["links"]) == 22
    cu02 = _port(result, 17, 1)
    assert cu02["node"] == {"type": "CA", "guid": None, "port_guid": "0xb8cef60300025b90", "lid": 17,
                            "description": "cu02 HCA-1"}
    assert (cu02["width"], cu02["speed_gbps"], cu02["state"], cu02["phys_state"]) == ("4X", 53.125, "Active", "LinkUp")
    assert cu02["peer"] == {"type": "Switch", "guid": "0x0c42a103008982a4", "port_guid": None, "lid": 3, "port": 39,
                            "description": "Quantum Mellanox Technologies"}
    down = _port(result, 3, 5)
    assert (down["peer"], down["width"], down["state"], down["phys_state"]) == (None, None, "Down", "Polling")
    # the switch's line for port 39 names cu02 and its port GUID: the same link as cu02's line
    assert _port(result, 3, 39)["peer"]["port_guid"] == "0xb8cef60300025b90"


def test_a_switch_scan_reads_the_inter_switch_port_and_the_could_be_remark():
    result = parse_iblinkinfo(SWITCH)
    uplink = _port(result, 10, 40)
    assert uplink["peer"] == {"type": None, "guid": None, "port_guid": None, "lid": 4, "port": 40,
                              "description": "MF0;d32-03-1:MQM8700/U1"}
    assert (uplink["speed_gbps"], uplink["remark"]) == (53.125, None)
    slow = _port(result, 10, 22)
    assert (slow["speed_gbps"], slow["remark"], slow["peer"]["description"]) == (25.78125, "Could be 53.125 Gbps",
                                                                                 "node4 HCA-2")
    assert sum(1 for p in result["ports"] if p["peer"] is None) == 35 and len(result["links"]) == 6


def test_qdr_output_peer_types_come_from_the_lids_of_the_output():
    result = parse_iblinkinfo(QDR)
    ip210 = _port(result, 3, 1)
    assert (ip210["node"]["port_guid"], ip210["peer"]["port"], ip210["speed_gbps"]) == ("0x0002c903000cc89b", 36, 10.0)
    assert _port(result, 2, 36)["peer"]["type"] == "CA"
    assert [s["lid"] for s in result["switches"]] == [2]


def test_grepped_lines_without_headers_are_ca_lines_with_a_guid_and_switch_lines_without():
    result = parse_iblinkinfo(GREP)
    n01 = _port(result, 1, 1)
    assert (n01["node"]["type"], n01["node"]["port_guid"], n01["peer"]["port"], n01["peer"]["description"]) == (
        "CA", "0xec0d9a03003d677a", 18, "MF0;SB7700:MSB7700/U1")
    assert n01["peer"]["type"] == "Switch"
    assert result["switches"] == [{"guid": None, "description": "MF0;SB7700:MSB7700/U1", "lid": 2}]
    assert len(result["links"]) == 3


def test_line_mode_reads_both_guids_hand_made():
    # hand-made from iblinkinfo.8's -l description (no real -l output was found): node GUID and padded description
    # on the line, the peer's GUID before its LID
    line = ('0xf452140300f55051 "              ib-test-7 mlx4_0"     37    1[  ] ==( 4X       14.0625 Gbps Active/'
            '  LinkUp)==>  0xf45214030067c630      5   16[  ] "MF0;switch-e1be74:SX6036/U1" ( )')
    port = parse_iblinkinfo(line)["ports"][0]
    assert (port["node"]["guid"], port["node"]["description"], port["node"]["lid"]) == (
        "0xf452140300f55051", "ib-test-7 mlx4_0", 37)
    assert (port["peer"]["guid"], port["peer"]["lid"], port["peer"]["port"]) == ("0xf45214030067c630", 5, 16)


@pytest.mark.parametrize("text, code", [
    ("", "no_output"), (None, "no_output"), ("\n\n", "no_output"),
    ("ibwarn: [4242] mad_rpc_open_port: can't open UMAD port ((null):0)\n"
     "iblinkinfo: iberror: failed: Failed to open '(null)' port '0'\n", "scan_failed"),
])
def test_what_is_no_scan_is_an_error_never_an_exception(text, code):
    result = parse_iblinkinfo(text)
    assert (codes(result), result["ok"]) == ([code], False)


@pytest.mark.parametrize("junk", ["bash: iblinkinfo: command not found", b"\xff\xfe\x00\x01", "==(", "CA: x:", 7,
                                  "1 2[ ] ==( 4X 1 Gbps"])
def test_other_text_reads_no_port_and_says_so(junk):
    result = parse_iblinkinfo(junk)
    assert (result["ok"], result["errors"], result["ports"]) == (False, [], [])
    assert result["warnings"]


def test_every_prefix_of_a_real_output_parses_without_raising():
    for cut in range(0, len(QDR) + 1, 7):
        result = parse_iblinkinfo(QDR[:cut])
        assert result["ok"] or result["errors"] or result["warnings"]


def test_a_huge_switch_reads_every_port():
    # hand-made: 20 000 port lines of one switch
    row = '%12d %4d[  ] ==( 4X        53.125 Gbps Active/  LinkUp)==>  %6d    1[  ] "h%d HCA-1" ( )'
    lines = ["Switch: 0x0c42a103008982a4 big:"] + [row % (3, i, 100 + i, i) for i in range(1, 20001)]
    result = parse_iblinkinfo("\n".join(lines))
    assert len(result["ports"]) == 20000 and len(result["links"]) == 20000


def test_the_filter_reads_a_registered_command_result():
    parse = FilterModule().filters()["parse_iblinkinfo"]
    assert parse({"stdout": GREP, "rc": 0})["switches"][0]["lid"] == 2
