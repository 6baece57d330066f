# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""parse_lldpctl on real lldpctl outputs (tests/fixtures/real/lldpctl/SOURCES.md) and on what is not one."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import pytest

from ansible_collections.clusterops.commcheck.plugins.filter.parse_lldpctl import FilterModule
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_lldpctl import parse_lldpctl

from real_outputs import codes, real

RAILS = real("lldpctl", "lldpctl_json0_gpu_rails_four_sonic_leaves.json")


def brief(result):
    return [(n["interface"], n["chassis"], n["port_id"], n["port_id_type"]) for n in result["neighbors"]]


def test_json0_of_a_gpu_server_names_each_rail_nics_leaf_and_port():
    result = parse_lldpctl(RAILS)
    assert result["ok"] and result["errors"] == []
    assert brief(result) == [("ens1np0", "StorageSW", "Ethernet120", "local"),
                             ("ens841np0", "LEAF03", "Ethernet184", "local"),
                             ("ens842np0", "LEAF04", "Ethernet184", "local"),
                             ("ens110np0", "LEAF02", "Ethernet184", "local"),
                             ("ens108np0", "LEAF01", "Ethernet184", "local")]
    first = result["neighbors"][1]
    assert (first["chassis_id"], first["mgmt_ip"], first["rid"], first["age"], first["ttl"], first["via"]) == (
        "70:06:92:6e:32:1c", ["10.193.77.203"], "3", "0 day, 01:48:15", "120", "LLDP")


def test_json0_with_an_ifname_port_two_management_addresses_and_unknown_tlvs():
    result = parse_lldpctl(real("lldpctl", "lldpctl_json0_h3c_access_switch_and_back_to_back_host.json"))
    assert brief(result) == [("enp129s0f0", "DaoCloud_ShangPu_H3C_D01_AccessSwitch", "GigabitEthernet1/0/17", "ifname"),
                             ("enp5s0f0np0", "10-20-1-50", "e8:eb:d3:93:ae:10", "mac"),
                             ("enp11s0f0np0", "10-20-1-50", "b8:3f:d2:9f:09:42", "mac")]
    assert result["neighbors"][1]["mgmt_ip"] == ["10.20.1.50", "fe80::ae1f:6bff:fe25:8664"]
    assert result["neighbors"][0]["port_descr"] == "GigabitEthernet1/0/17 Interface"
    assert result["neighbors"][0]["ttl"] == "121"


def test_json_folds_one_interface_into_an_object_and_the_chassis_under_its_name():
    result = parse_lldpctl(real("lldpctl", "lldpctl_json_one_interface_lldpd_integration_test.json"))
    assert brief(result) == [("eth0", "ns-2.example.com", "00:00:00:00:00:02", "mac")]
    assert (result["neighbors"][0]["mgmt_ip"], result["neighbors"][0]["port_descr"]) == (["fe80::200:ff:fe00:2"], "eth1")


def test_a_cut_output_after_its_prompt_is_truncated_json():
    result = parse_lldpctl(real("lldpctl", "lldpctl_json_sonic_leaf_eth0_prompt_cut.txt"))
    assert (codes(result), result["neighbors"], result["ok"]) == (["truncated_json"], [], False)


def test_the_list_form_of_several_interfaces_and_a_chassis_without_a_name():
    # the cut output made whole: the list of {ifname: entry} objects; a second interface whose chassis has no name
    text = real("lldpctl", "lldpctl_json_sonic_leaf_eth0_prompt_cut.txt").rsplit("\n", 4)[0] + (
        "]}}}}, {\"eth1\": {\"via\": \"LLDP\", \"chassis\": {\"id\": {\"type\": \"mac\", \"value\": \"aa:bb:cc:00:00:01\"}},"
        " \"port\": {\"id\": {\"type\": \"local\", \"value\": \"17\"}}}}]}}")
    result = parse_lldpctl(text)
    assert brief(result) == [("eth0", "c6500-vxlan", "Gi3/36", "ifname"), ("eth1", None, "17", "local")]
    assert result["neighbors"][1]["chassis_id"] == "aa:bb:cc:00:00:01"


@pytest.mark.parametrize("text,code", [
    ("", "no_output"),
    ("   \n", "no_output"),
    ("lldpctl: command not found\n", "no_lldp_json"),
    ("{\"iperf\": 1}", "no_lldp_json"),
    ("{\"lldp\": 7}", "no_lldp_json"),
    ("-------\nLLDP neighbors:\n-------\nInterface:    eth0, via: LLDP\n", "no_lldp_json"),
    ("{\"lldp\": {\"interface\": [", "truncated_json"),
])
def test_what_is_no_neighbour_table_is_an_error_never_an_exception(text, code):
    result = parse_lldpctl(text)
    assert (codes(result), result["ok"], result["neighbors"]) == ([code], False, [])
    assert result["errors"][0]["cause"] and result["errors"][0]["fix"]


@pytest.mark.parametrize("table", ["{}", "[{}]", "{\"interface\": []}", "{\"interface\": null}"])
def test_no_neighbour_is_an_empty_table_not_an_error(table):
    result = parse_lldpctl("{\"lldp\": %s}" % table)
    assert (result["ok"], result["neighbors"], result["errors"]) == (True, [], [])


@pytest.mark.parametrize("junk", [
    {"lldp": {"interface": [1, "x", None, {"eth0": 5}, {"eth1": {"chassis": [3], "port": "Ethernet1"}}]}},
    {"lldp": [{"interface": [{"name": ["x"], "chassis": {"a": 1}}, {"name": None}]}]},
])
def test_odd_shapes_are_read_as_far_as_they_go(junk):
    import json
    result = parse_lldpctl(json.dumps(junk))
    assert result["ok"] and result["errors"] == []
    assert all(isinstance(n["interface"], str) for n in result["neighbors"])


def test_every_prefix_of_a_real_output_parses_without_raising():
    for end in range(0, len(RAILS), 97):
        result = parse_lldpctl(RAILS[:end])
        assert result["ok"] or result["errors"]


def test_the_filter_reads_a_registered_command_result():
    parse = FilterModule().filters()["parse_lldpctl"]
    assert [n["chassis"] for n in parse({"stdout": RAILS, "rc": 0})["neighbors"]][1:] == [
        "LEAF03", "LEAF04", "LEAF02", "LEAF01"]
