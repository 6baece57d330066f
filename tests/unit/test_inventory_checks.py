# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The inventory checks: names are labels, every test host is one machine of its own (issue 39)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import pytest

from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery import inventory_checks as checks
from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery.host_facts import machine_identity

SPACED = u"nœud 01 ü"


def _one(problems):
    assert len(problems) == 1, problems
    return problems[0]


def test_a_name_with_a_space_and_non_ascii_letters_is_a_label_when_the_host_has_an_address():
    hosts = {SPACED: {"ansible_host": "10.0.0.11"}, "h2": {"ansible_host": "10.0.0.12"}}
    assert checks.inventory_problems(hosts) == []


def test_a_name_that_would_be_its_own_address_must_be_one():
    problem = _one(checks.inventory_problems({SPACED: {}, "h2": {"ansible_host": "10.0.0.12"}}))
    assert repr(SPACED) in problem and "set ansible_host" in problem and "not a host name or an IP address" in problem


def test_a_name_with_a_control_character_is_refused_whatever_its_address():
    problem = _one(checks.inventory_problems({"h1\x1b[2J": {"ansible_host": "10.0.0.11"},
                                              "h2": {"ansible_host": "10.0.0.12"}}))
    assert "control character" in problem and "rename the host" in problem and "h1\\x1b[2J" in problem


def test_two_names_with_one_ansible_host_are_refused_naming_both_and_the_address():
    hosts = {"h1": {"ansible_host": "10.0.0.11"}, "h1b": {"ansible_host": "10.0.0.11"},
             "h2": {"ansible_host": "10.0.0.12"}}
    problem = _one(checks.inventory_problems(hosts))
    assert "'h1', 'h1b'" in problem and "'10.0.0.11'" in problem and "'h2'" not in problem
    assert "against itself" in problem and "remove the extra name" in problem
    assert "RDMA and collective address and TCP address" in problem


def test_one_address_spelled_two_ways_is_one_address():
    hosts = {"a": {"ansible_host": "Node1.example.com."}, "b": {"ansible_host": "node1.example.com"},
             "c": {"ansible_host": "fd00:0::1"}, "d": {"ansible_host": "FD00::1"}}
    problems = checks.inventory_problems(hosts)
    assert len(problems) == 2 and "'a', 'b'" in problems[0] and "'c', 'd'" in problems[1], problems


def test_test_addresses_win_over_a_shared_ansible_host():
    """Hosts reached through one jump address (different ports) are tested at their own addresses."""
    hosts = dict((name, {"ansible_host": "192.0.2.1", "commcheck_address": "10.0.0.%d" % num,
                         "commcheck_tcp_address": "10.1.0.%d" % num}) for num, name in enumerate(("h1", "h2")))
    assert checks.inventory_problems(hosts) == []
    for own in hosts.values():
        own.pop("commcheck_tcp_address")
    problem = _one(checks.inventory_problems(hosts))
    assert "'192.0.2.1'" in problem and "TCP address" in problem and "RDMA" not in problem


def test_an_address_the_play_sets_for_every_host_is_shared():
    hosts = {"h1": {"ansible_host": "10.0.0.11"}, "h2": {"ansible_host": "10.0.0.12"}}
    problem = _one(checks.inventory_problems(hosts, play_values={"commcheck_address": "10.9.9.9"}))
    assert "commcheck_address" in problem and "RDMA and collective address" in problem
    assert "TCP address" not in problem


def test_a_loopback_address_is_refused_only_where_the_host_has_peers():
    assert checks.inventory_problems({"solo": {"ansible_host": "127.0.0.1"}}) == []
    hosts = {"h1": {"ansible_host": "127.0.0.2"}, "h2": {"ansible_host": "10.0.0.12"}}
    problem = _one(checks.inventory_problems(hosts))
    assert "'h1'" in problem and "loopback" in problem and "commcheck_address" in problem
    # hosts that are all on loopback addresses of their own are one machine's processes (one node's pods)
    assert checks.inventory_problems({"p1": {"ansible_host": "127.0.20.1"}, "p2": {"ansible_host": "127.0.20.2"}}) == []
    problem = _one(checks.inventory_problems({"p1": {"ansible_host": "127.0.0.1"}, "p2": {"ansible_host": "127.0.0.1"}}))
    assert "'p1', 'p2'" in problem and "share" in problem


def test_one_machine_behind_two_names_is_refused_by_its_identity():
    one = {"boot_id": "b-1", "netns": "net:[4026531840]", "hostname": "node1", "machine_id": "m-1"}
    identities = {"h1": one, "h1b": dict(one), "h2": dict(one, boot_id="b-2", hostname="node2")}
    problem = _one(checks.same_machine_problems(identities))
    assert "'h1', 'h1b'" in problem and "'b-1'" in problem and "'node1'" in problem and "'h2'" not in problem


def test_namespaces_of_one_kernel_and_clones_of_one_image_are_different_machines():
    identities = {
        "ns1": {"boot_id": "b-1", "netns": "net:[1]", "hostname": "same", "machine_id": "m"},
        "ns2": {"boot_id": "b-1", "netns": "net:[2]", "hostname": "same", "machine_id": "m"},
        "clone": {"boot_id": "b-3", "netns": "net:[1]", "hostname": "same", "machine_id": "m"},
    }
    assert checks.same_machine_problems(identities) == []


def test_without_the_namespace_the_host_name_tells_machines_of_one_kernel_apart():
    identities = {"h1": {"boot_id": "b", "hostname": "h1"}, "h2": {"boot_id": "b", "hostname": "h2"},
                  "h2b": {"boot_id": "b", "hostname": "h2"}, "unread": {}, "unread2": None}
    assert "'h2', 'h2b'" in _one(checks.same_machine_problems(identities))


def test_rails_of_two_hosts_that_share_an_address_are_refused_per_rail():
    rails = {"h1": [{"rail": 0, "address": "10.0.0.11"}, {"rail": 1, "address": "10.0.1.11"}],
             "h2": [{"rail": 0, "address": "10.0.0.12"}, {"rail": 1, "address": "10.0.1.11"}],
             "h3": [{"rail": 0, "address": "10.0.1.11"}]}
    problem = _one(checks.discovery_problems({}, rails))
    assert "'h1', 'h2'" in problem and "'10.0.1.11'" in problem and "rail 1 address" in problem


def test_machine_identity_reads_the_first_line_and_keeps_what_is_unread_unknown():
    identity = machine_identity("abc\n", "b-1\n", "node 1\n", "net:[4026531840]\n")
    assert identity == {"machine_id": "abc", "boot_id": "b-1", "hostname": "node 1", "netns": "net:[4026531840]"}
    assert machine_identity(None, "", "  \n", None) == {"machine_id": None, "boot_id": None, "hostname": None,
                                                        "netns": None}


# ---------------------------------------------------------------- a name is a label, never tool input

def test_a_peer_name_with_a_space_and_non_ascii_letters_is_a_label_of_the_pair_tools():
    from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import iperf3_cmd, perftest_cmd
    for build, side in ((perftest_cmd.build_argv, {"role": "client", "server": "10.0.0.11", "peer": SPACED}),
                        (iperf3_cmd.build_argv, {"role": "client", "server": "10.0.0.11", "peer": SPACED})):
        argv = build(side)
        assert "10.0.0.11" in argv and not any(u"nœud" in arg for arg in argv), argv
    assert perftest_cmd.normalize({"role": "server", "peer": "h2;id"})["role"] == "server"


def test_a_collective_host_name_is_a_label_and_only_its_address_reaches_mpirun():
    from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import mpi_cmd
    hosts = mpi_cmd.normalize_hosts([{"name": SPACED, "address": "10.0.0.11"}, {"name": "h2", "address": "h2"}], 1)
    assert [(h["name"], h["address"]) for h in hosts] == [(SPACED, "10.0.0.11"), ("h2", "h2")]
    with pytest.raises(mpi_cmd.MpiCmdError, match="control character"):
        mpi_cmd.normalize_hosts([{"name": "h1\n", "address": "10.0.0.11"}], 1)


def test_a_target_that_matches_no_host_says_so_and_lists_the_groups_bounded():
    sizes = dict([("all", 30), ("ungrouped", 0), ("empty", 0)] + [("g%02d" % n, 1) for n in range(25)])
    problem = checks.target_problem("gpus", [], sizes, limit="h9")
    assert problem.startswith("no hosts matched commcheck_target='gpus' within --limit 'h9'")
    assert "30 host(s)" in problem and "empty (0 hosts)" in problem and "g00 (1 host)" in problem
    assert "g18" in problem and "g19" not in problem and "and 6 more" in problem and "ungrouped" not in problem
    assert checks.target_problem("gpus", ["h1"], sizes) is None
