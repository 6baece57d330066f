# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Discovery's topology tools (lldpctl, smpquery) on their own switch (``topology_tools``), apart from the
cross-check tools (``tools``): a host whose sysfs root is not /sys still names its ports' leaf switches when
asked, and nothing else runs."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os
import sys

import pytest

from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery import rdma_discovery as rd
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands.runner import HostTransport

from real_outputs import real

LAB = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lab")
if LAB not in sys.path:
    sys.path.insert(0, LAB)

import sysfs_tree  # noqa: E402  pylint: disable=wrong-import-position

LLDP = real("lldpctl", "lldpctl_json0_gpu_rails_four_sonic_leaves.json")
# a user space that sees no RDMA device: were it run, the cross-check would report verbs_devices_missing
IBV_NONE = "Failed to get IB devices list: Function not implemented\n"


class _Tools(HostTransport):
    """The host transport with lldpctl and ibv_devinfo installed (scripted), recording the tools it runs."""

    def __init__(self):
        HostTransport.__init__(self)
        self.ran = []

    def which(self, name):
        return "/opt/tools/" + name if name in ("lldpctl", "ibv_devinfo") else None

    def run(self, argv, timeout, env=None, cwd=None, capture=None):
        if not argv[0].startswith("/opt/tools/"):
            return HostTransport.run(self, argv, timeout, env=env, cwd=cwd, capture=capture)
        self.ran.append([argv[0].rsplit("/", 1)[-1]] + list(argv[1:]))
        if argv[0].endswith("lldpctl"):
            return {"rc": 0, "stdout": LLDP, "stderr": "", "timed_out": False}
        return {"rc": 255, "stdout": "", "stderr": IBV_NONE, "timed_out": False}


@pytest.fixture
def tree(tmp_path):
    root = str(tmp_path / "sys")
    sysfs_tree.build_sysfs(root, [{"name": "mlx5_0", "ports": [{"netdev": "ens841np0", "ipv4": "10.0.0.3"}]},
                                  {"name": "mlx5_1", "ports": [{"netdev": "ens842np0", "ipv4": "10.0.1.3"}]}])
    return root


def _codes(facts):
    return [f["code"] for f in facts["findings"]]


def test_topology_tools_alone_ask_lldpctl_and_run_no_cross_check_tool(tree):
    transport = _Tools()
    facts = rd.collect(transport, sysfs_root=tree, topology_tools=True, address_source="gids")
    assert transport.ran == [["lldpctl", "-f", "json"]]
    assert facts["topology"] == {"mlx5_0": {"leaf": "LEAF03", "port": "Ethernet184", "source": "lldp"},
                                 "mlx5_1": {"leaf": "LEAF04", "port": "Ethernet184", "source": "lldp"}}
    assert "verbs_devices_missing" not in _codes(facts)
    assert sorted(facts["sources"]["tools"]) == ["iblinkinfo", "ibnetdiscover", "lldpctl", "smpquery"]
    assert facts["sources"]["tools"]["lldpctl"]["entries"] == 5
    assert facts["host"]["versions"]["perftest"] is None      # the version probes ride on the cross-check tools


def test_a_tree_by_default_asks_nothing_and_the_cross_check_alone_asks_no_switch(tree):
    transport = _Tools()
    facts = rd.collect(transport, sysfs_root=tree, address_source="gids")
    assert (transport.ran, facts["topology"], facts["sources"]["tools"]) == ([], {}, {})
    transport = _Tools()
    facts = rd.collect(transport, sysfs_root=tree, tools=True, topology_tools=False, address_source="gids")
    assert transport.ran == [["ibv_devinfo"]]
    assert facts["topology"] == {} and "verbs_devices_missing" in _codes(facts)
    assert "lldpctl" not in facts["sources"]["tools"] and "smpquery" not in facts["sources"]["tools"]


def test_unset_topology_tools_follow_the_cross_check_tools(tree):
    transport = _Tools()
    facts = rd.collect(transport, sysfs_root=tree, tools=True, address_source="gids")
    assert sorted(argv[0] for argv in transport.ran) == ["ibv_devinfo", "lldpctl"]
    assert facts["topology"]["mlx5_1"]["leaf"] == "LEAF04"
