# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""discovery/gid.py: the GID text forms, the subnet option and the one GID choice, whole answers compared
(``gid_index``, ``candidates`` and the ``reason`` an operator reads). Fixtures put the GIDs at indexes that
differ from the kernel's usual 3, and the port's own GIDs after a VLAN's."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import pytest

from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery import gid

LL = "fe80:0000:0000:0000:0e42:a1ff:fe40:29a0"


def roce(index, address, kind="RoCE v2", netdev="ens1f0"):
    """A GID entry as discovery lists it; an IPv4 address is mapped (::ffff:a.b.c.d), without the ipv4 key."""
    text = "::ffff:%s" % address if "." in address else address
    return {"index": index, "gid": text, "type": kind, "netdev": netdev}


# --- text forms -----------------------------------------------------------------------------------

@pytest.mark.parametrize("text, kernel", [
    ("  FE80:0000:0000:0000:0E42:A1FF:FE40:29A0\n", LL),                  # the kernel's form, any case
    ("fe80::e42:a1ff:fe40:29a0", LL),                                      # a tool's compressed form
    ("::ffff:10.1.2.3", "0000:0000:0000:0000:0000:ffff:0a01:0203"),
    ("fe80:0000:0000:0000:0e42:a1ff:fe40", None), ("10.1.2.3", None), ("", None), (None, None),
    ("fe80::e42:a1ff:fe40:29a0%ens1f0", None),                             # an interface's address, scoped
])
def test_normalize_gid_gives_the_kernels_form_or_none(text, kernel):
    assert gid.normalize_gid(text) == kernel


def test_gid_ipv4_reads_only_an_ipv4_mapped_gid():
    assert gid.gid_ipv4("0000:0000:0000:0000:0000:ffff:0a01:0203") == "10.1.2.3"
    assert gid.gid_ipv4("::ffff:192.168.7.9") == "192.168.7.9"
    assert gid.gid_ipv4("0000:0000:0000:0000:0000:fffe:0a01:0203") is None
    assert gid.gid_ipv4(LL) is None and gid.gid_ipv4("not a gid") is None


@pytest.mark.parametrize("spellings, kernel", [
    (("RoCE v2", " roce V2 ", "ROCEV2", "v2", "2"), gid.ROCE_V2),
    (("IB/RoCE v1", "RoCE v1", "v1", "IB", "1"), gid.ROCE_V1),
    (("RoCE v3", "", None), None),
])
def test_gid_types_in_every_tools_spelling(spellings, kernel):
    assert [gid.normalize_gid_type(s) for s in spellings] == [kernel] * len(spellings)


def test_subnet_error_says_what_is_wrong():
    assert gid.subnet_error(None) is None and gid.subnet_error("") is None
    assert gid.subnet_error("10.0.0.0/8") is None and gid.subnet_error("10.1.2.3/16") is None   # host bits: fine
    assert gid.subnet_error("10.0.0.0/33").startswith("subnet '10.0.0.0/33' is not a valid CIDR network: ")
    assert gid.subnet_error("fd00::/64") == \
        "subnet 'fd00::/64' must be an IPv4 network (RoCE v2 GIDs are chosen by IPv4 address)"


# --- the choice: RoCE -----------------------------------------------------------------------------

def test_the_roce_v2_gid_of_the_ports_own_netdev_wins_over_a_vlans_at_a_lower_index():
    gids = [roce(0, LL, "IB/RoCE v1"), roce(1, LL), roce(2, "192.168.100.5", "IB/RoCE v1", "ens1f0.100"),
            roce(3, "192.168.100.5", netdev="ens1f0.100"), roce(6, "10.0.0.5", "IB/RoCE v1"), roce(7, "10.0.0.5")]
    assert gid.select_gid(gids, "Ethernet", netdev="ens1f0") == {
        "gid_index": 7, "candidates": [7], "reason": "RoCE v2 GID of 10.0.0.5"}
    # without a netdev to prefer: every RoCE v2 IPv4 GID qualifies, the lowest index wins
    assert gid.select_gid(gids)["candidates"] == [3, 7] and gid.select_gid(gids)["gid_index"] == 3


def test_a_gid_whose_netdev_is_unknown_counts_as_the_ports_own():
    gids = [roce(3, "192.168.100.5", netdev="ens1f0.100"), roce(9, "10.0.0.5", netdev=None)]
    assert gid.select_gid(gids, netdev="ens1f0")["gid_index"] == 9


def test_the_primary_address_wins_then_the_lowest_index():
    gids = [roce(5, "10.0.0.9"), roce(7, "10.0.0.5"), roce(11, "10.0.0.7")]
    chosen = gid.select_gid(gids, netdev="ens1f0", addresses=["10.0.0.7/24", "10.0.0.5/24"])
    assert chosen == {"gid_index": 11, "candidates": [7, 11], "reason": "RoCE v2 GID of 10.0.0.7"}
    # the primary address without a GID of its own: the next address's GID
    assert gid.select_gid(gids, netdev="ens1f0", addresses=["10.0.0.1/24", "10.0.0.9"])["gid_index"] == 5


def test_a_subnet_chooses_among_every_netdevs_gids_and_says_so():
    gids = [roce(3, "10.0.0.5"), roce(5, "192.168.100.5", netdev="ens1f0.100"),
            roce(9, "192.168.100.9", netdev="ens1f0.100")]
    assert gid.select_gid(gids, netdev="ens1f0", addresses=["192.168.100.9/24"], subnet="192.168.100.0/24") == {
        "gid_index": 9, "candidates": [9], "reason": "RoCE v2 GID of 192.168.100.9 in 192.168.100.0/24"}
    assert gid.select_gid(gids, netdev="ens1f0", subnet="172.16.0.0/12") == {
        "gid_index": None, "candidates": [], "reason": "no RoCE v2 GID with an IPv4 address in 172.16.0.0/12"}
    assert gid.select_gid(gids, subnet="not-a-network")["gid_index"] is None


def test_a_subnet_written_with_a_hosts_address_means_that_hosts_network():
    # subnet_error accepts 192.168.100.1/24 (host bits set): the choice takes it as 192.168.100.0/24
    gids = [roce(3, "10.0.0.5"), roce(5, "192.168.100.5", netdev="ens1f0.100")]
    assert gid.select_gid(gids, netdev="ens1f0", subnet="192.168.100.1/24") == {
        "gid_index": 5, "candidates": [5], "reason": "RoCE v2 GID of 192.168.100.5 in 192.168.100.1/24"}


def test_a_scoped_address_among_the_gids_is_passed_over():
    gids = [roce(1, "fe80::e42:a1ff:fe40:29a0%ens1f0"), roce(3, "10.0.0.5")]
    assert gid.select_gid(gids, netdev="ens1f0")["gid_index"] == 3


def test_only_roce_v2_gids_with_an_ipv4_address_and_an_index_qualify():
    gids = [roce(2, "10.0.0.5", "IB/RoCE v1"), roce(4, "fd00::5"), dict(roce(6, "10.0.0.6"), index=None),
            {"index": 8, "gid": LL, "type": "RoCE v2", "ipv4": "10.0.0.8"}, "not a dict", roce(10, "10.0.0.10")]
    # an entry's own ipv4 key counts (show_gids lists it) even when its GID is not IPv4-mapped
    assert gid.select_gid(gids) == {"gid_index": 8, "candidates": [8, 10], "reason": "RoCE v2 GID of 10.0.0.8"}
    assert gid.select_gid([roce(2, "10.0.0.5", "IB/RoCE v1")]) == {
        "gid_index": None, "candidates": [], "reason": "no RoCE v2 GID with an IPv4 address"}
    assert gid.select_gid(None)["gid_index"] is None


def test_indexes_compare_as_numbers():
    gids = [roce("10", "10.0.0.10"), roce("9", "10.0.0.9")]
    assert gid.select_gid(gids) == {"gid_index": 9, "candidates": [9, 10], "reason": "RoCE v2 GID of 10.0.0.9"}


def test_a_link_layer_neither_infiniband_nor_ethernet_has_no_gid_to_choose():
    assert gid.select_gid([roce(3, "10.0.0.5")], "Unspecified") == {
        "gid_index": None, "candidates": [],
        "reason": "link layer Unspecified: neither InfiniBand nor Ethernet (e.g. AWS EFA), no GID index to choose"}
    # a port that does not say its link layer is taken as RoCE
    assert gid.select_gid([roce(3, "10.0.0.5")], None)["gid_index"] == 3


# --- the choice: InfiniBand -----------------------------------------------------------------------

def test_infiniband_uses_the_default_gid_unless_an_index_in_use_is_asked_for():
    gids = [{"index": 0, "gid": LL, "type": "IB/RoCE v1", "netdev": None},
            {"index": "2", "gid": LL.replace("29a0", "29a2"), "type": "IB/RoCE v1", "netdev": None}]
    assert gid.select_gid(gids, "InfiniBand") == {
        "gid_index": None, "candidates": [], "reason": "InfiniBand: no GID index needed"}
    assert gid.select_gid(gids, "InfiniBand", ib_gid_index="2") == {
        "gid_index": 2, "candidates": [2], "reason": "InfiniBand: GID index 2 as asked"}
    assert gid.select_gid(gids, "InfiniBand", ib_gid_index=1) == {
        "gid_index": None, "candidates": [], "reason": "InfiniBand: GID index 1 asked for is not in use"}


# --- the choice: no IPv4 GID (perftest's gid_index auto) ------------------------------------------

def test_without_ipv4_a_global_ipv6_gid_of_the_ports_netdev_is_taken():
    gids = [roce(0, LL, "IB/RoCE v1"), roce(1, LL), roce(4, "fd00:1::5", netdev="ens1f0.100"),
            roce(5, "fd00::5", "IB/RoCE v1"), roce(7, "fd00::5")]
    assert gid.select_gid(gids, netdev="ens1f0", ipv6_fallback=True) == {
        "gid_index": 7, "candidates": [1, 4, 7], "reason": "RoCE v2 global IPv6 GID (no IPv4 GID)"}
    # without the port's netdev known, the lowest global one
    assert gid.select_gid(gids, ipv6_fallback=True)["gid_index"] == 4


def test_without_ipv4_or_global_ipv6_the_link_local_gid_is_taken():
    # an unused (all-zero) slot, a GID that does not parse or has no index is passed over, not the end
    gids = [{"index": 0, "gid": "0000:0000:0000:0000:0000:0000:0000:0000", "type": "RoCE v2", "netdev": "ens1f0"},
            roce(8, "not a gid"), dict(roce(9, LL), index=None),
            roce(1, LL.replace("29a0", "29a1"), netdev="ens1f0.100"), roce(3, LL), roce(5, LL, netdev=None)]
    assert gid.select_gid(gids, netdev="ens1f0", ipv6_fallback=True) == {
        "gid_index": 3, "candidates": [1, 3, 5], "reason": "RoCE v2 link-local IPv6 GID (no IPv4 GID)"}


def test_no_ipv6_fallback_without_asking_or_with_a_subnet_or_without_a_roce_v2_gid():
    gids = [roce(0, LL, "IB/RoCE v1"), roce(1, LL)]
    assert gid.select_gid(gids)["gid_index"] is None
    assert gid.select_gid(gids, subnet="10.0.0.0/8", ipv6_fallback=True) == {
        "gid_index": None, "candidates": [], "reason": "no RoCE v2 GID with an IPv4 address"}
    assert gid.select_gid(gids[:1], ipv6_fallback=True) == {
        "gid_index": None, "candidates": [], "reason": "no RoCE v2 GID"}
