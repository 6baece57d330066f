# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""gid_text.mapped_ipv4: the one reading of the IPv4 address in a GID, shared by the ibv_devinfo and show_gids
parsers, discovery (gid.gid_ipv4) and the schedule."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import pytest

from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery.gid import gid_ipv4
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.gid_text import mapped_ipv4
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_ibv_devinfo import parse_ibv_devinfo
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_show_gids import parse_show_gids
from ansible_collections.clusterops.commcheck.plugins.module_utils.planning import schedule


@pytest.mark.parametrize("gid,ipv4", [
    ("0000:0000:0000:0000:0000:ffff:0a6c:a424", "10.108.164.36"),
    ("0000:0000:0000:0000:0000:FFFF:C0A8:0101", "192.168.1.1"),
    ("::ffff:10.108.164.36", "10.108.164.36"),
    ("  ::ffff:0a00:0001 \n", "10.0.0.1"),
    ("0:0:0:0:0:ffff:172.16.0.9", "172.16.0.9"),
])
def test_mapped_gids_give_their_ipv4(gid, ipv4):
    assert mapped_ipv4(gid) == ipv4
    assert gid_ipv4(gid) == ipv4
    assert schedule._gid_ipv4(gid) == ipv4  # pylint: disable=protected-access


@pytest.mark.parametrize("gid", [
    None, "", "fe80:0000:0000:0000:0202:c9ff:fe00:0001", "0000:0000:0000:0000:0000:0000:0000:0000",
    "::ffff:999.1.1.1", "::ffff:10.0.0.1%eth0", "not a gid", "10.0.0.1", "0000:0000:0000:0000:0000:fffe:0a00:0001",
])
def test_other_texts_give_none(gid):
    assert mapped_ipv4(gid) is None
    assert gid_ipv4(gid) is None


def test_the_schedule_prefers_a_gid_entry_s_own_ipv4():
    assert schedule._gid_ipv4({"ipv4": "10.9.9.9", "gid": "::ffff:10.0.0.1"}) == "10.9.9.9"  # pylint: disable=W0212
    assert schedule._gid_ipv4({"gid": "::ffff:10.0.0.1"}) == "10.0.0.1"  # pylint: disable=protected-access


def test_both_parsers_read_the_address_through_it():
    devinfo = parse_ibv_devinfo("""hca_id:\tmlx5_0
\ttransport:\t\t\tInfiniBand (0)
\tphys_port_cnt:\t\t\t1
\t\tport:\t1
\t\t\tstate:\t\t\tPORT_ACTIVE (4)
\t\t\tlink_layer:\t\tEthernet
\t\t\tGID[  3]:\t\t::ffff:10.0.0.11, RoCE v2
\t\t\tGID[  4]:\t\t0000:0000:0000:0000:0000:ffff:0a00:010c, RoCE v2
""")
    gids = devinfo[0]["ports"][0]["gids"]
    assert [g.get("ipv4") for g in gids] == ["10.0.0.11", "10.0.1.12"]
    shown = parse_show_gids("""DEV\tPORT\tINDEX\tGID\t\t\t\t\tIPv4  \t\tVER\tDEV
---\t----\t-----\t---\t\t\t\t\t------------  \t---\t---
mlx5_0\t1\t3\t0000:0000:0000:0000:0000:ffff:0a00:000b\t\t\tv2\teth2
""")
    assert shown[0]["ipv4"] == "10.0.0.11"
