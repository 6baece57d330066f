# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The two-tier lab's smpquery EMULATOR (tests/lab/emulators/smpquery_emulator.py), read by the product's own parser
and by discovery itself: a host whose rail ports are InfiniBand names each port's leaf by the switch's node
description. No namespaces: the plan's neighbour files and an emulated sysfs tree in a temporary folder."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os
import re
import subprocess
import sys

import pytest

from ansible_collections.clusterops.commcheck.plugins.module_utils.commands.runner import HostTransport
from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery import rdma_discovery as rd
from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery import topology
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_smpquery import parse_smpquery

from real_outputs import real

LAB = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lab")
EMULATOR = os.path.join(LAB, "emulators", "smpquery_emulator.py")
if LAB not in sys.path:
    sys.path.insert(0, LAB)

import lab as lablib  # noqa: E402  pylint: disable=wrong-import-position
import sysfs_tree  # noqa: E402  pylint: disable=wrong-import-position
import two_tier  # noqa: E402  pylint: disable=wrong-import-position

SWITCH = real("smpquery", "smpquery_nodeinfo_switch_ibsim_book.txt")
DESCRIPTION = real("smpquery", "smpquery_nd_sm_host_cheatsheet.txt")


def smpquery(root, *args):
    env = dict(os.environ, COMMCHECK_LAB_SYSFS=str(root))
    return subprocess.run([sys.executable, EMULATOR] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, env=env, timeout=60, check=False)


@pytest.fixture
def lab_roots(tmp_path):
    """Six hosts, two a leaf, two rails: each host's emulated root with its neighbour file and an InfiniBand sysfs
    tree (the rails' devices, each port up)."""
    lab = lablib.plan("lab36s", 6, 2, tiers=2, per_leaf=2)
    two_tier.write_neighbors(lab, lambda host: str(tmp_path / host))
    for host in lab["hosts"]:
        sysfs_tree.build_sysfs(str(tmp_path / host["name"]), [
            {"name": r["device"], "ports": [{"port": 1, "state": "ACTIVE", "link_layer": "InfiniBand", "lid": 10 + n,
                                            "sm_lid": 1, "netdev": "ib%d" % r["rail"], "rate_gbps": 100}]}
            for n, r in enumerate(host["rails"])])
    return lab, tmp_path


@pytest.mark.parametrize("host, device, leaf, port", [
    ("h3", "mlx5_1", "lab-r1-leaf2", 1), ("h4", "mlx5_1", "lab-r1-leaf2", 2), ("h6", "mlx5_0", "lab-r0-leaf3", 2)])
def test_a_directed_route_out_of_a_port_reaches_its_leaf_switch(lab_roots, host, device, leaf, port):
    _lab, tmp_path = lab_roots
    texts = []
    for operation in ("nodeinfo", "nodedesc"):
        proc = smpquery(tmp_path / host, "-C", device, "-P", "1", "-D", operation, "0,1")
        assert proc.returncode == 0 and proc.stderr == "", proc.stderr
        texts.append(proc.stdout)
    answer = parse_smpquery("\n".join(texts))
    assert answer["ok"] and answer["is_switch"] and answer["errors"] == [] and answer["warnings"] == []
    assert answer["address"] == "DR path slid 0; dlid 0; 0,1"
    assert answer["description"] == "MF0;%s:MSB7800/U1" % leaf
    assert (answer["node"]["local_port"], answer["node"]["num_ports"]) == (port, 36)
    answer["port"] = 1
    assert topology.from_smpquery({device: [answer]}, [{"name": device}]) == {
        device: {"leaf": "MF0;%s:MSB7800/U1" % leaf, "port": str(port), "source": "smpquery"}}


def test_the_layout_is_smpquerys(lab_roots):
    """Every field of the real switch's NodeInfo, in its order, its value at the same column; the description
    right-aligned by dots as smpquery pads it."""
    _lab, tmp_path = lab_roots
    emulated = smpquery(tmp_path / "h1", "-C", "mlx5_0", "-P", "1", "-D", "NI", "0,1").stdout.splitlines()
    real_lines = [line for line in SWITCH.splitlines() if not line.startswith("ibwarn")]
    assert [re.sub(r"\.+.*", "", line) for line in emulated[1:]] == [
        re.sub(r"\.+.*", "", line) for line in real_lines[1:]]
    assert [len(re.match(r"^[^.]*\.+", line).group(0)) for line in emulated[1:]] == [
        len(re.match(r"^[^.]*\.+", line).group(0)) for line in real_lines[1:]]
    desc = smpquery(tmp_path / "h1", "-C", "mlx5_0", "-P", "1", "-D", "ND", "0,1").stdout.rstrip("\n")
    real_desc = DESCRIPTION.strip()
    assert len(desc) == len("Node Description:") + 32 == len(real_desc)
    assert desc == "Node Description:" + "." * (32 - len("MF0;lab-r0-leaf1:MSB7800/U1")) + "MF0;lab-r0-leaf1:MSB7800/U1"


@pytest.mark.parametrize("args, says", [
    (["-C", "mlx5_0", "-P", "1", "-D", "nodeinfo", "0,1,3"],
     "_do_madrpc failed; dport (DR path slid 0; dlid 0; 0,1,3)"),
    (["-C", "mlx5_0", "-P", "1", "-D", "nodeinfo", "0,2"], "_do_madrpc failed"),
    (["-C", "mlx5_7", "-P", "1", "-D", "nodedesc", "0,1"], "can't open UMAD port (mlx5_7:1)"),
])
def test_a_route_the_lab_has_no_switch_for_fails_as_smpquery_fails(lab_roots, args, says):
    _lab, tmp_path = lab_roots
    proc = smpquery(tmp_path / "h2", *args)
    assert proc.returncode == 255 and proc.stdout == "" and says in proc.stderr, proc.stderr
    answer = parse_smpquery(proc.stderr)
    assert not answer["ok"] and [e["code"] for e in answer["errors"]] == ["query_failed"]


def test_what_it_does_not_emulate_is_refused_and_help_says_it_is_an_emulator(lab_roots, tmp_path):
    _lab, roots = lab_roots
    assert smpquery(roots / "h1", "-C", "mlx5_0", "nodeinfo", "4").returncode == 255
    assert smpquery(roots / "h1", "-D", "portinfo", "0,1").returncode == 255
    assert "EMULATOR" in smpquery(roots / "h1", "-h").stdout
    # a host without the lab's file: no switch to ask
    assert "can't open UMAD port" in smpquery(tmp_path / "nowhere", "-D", "nodeinfo", "0,1").stderr


class _LabHost(HostTransport):
    """The host transport with smpquery installed: the lab's EMULATOR for one host's root."""

    def __init__(self, root):
        HostTransport.__init__(self)
        self.root = str(root)
        self.ran = []

    def which(self, name):
        return "/opt/lab/smpquery" if name == "smpquery" else None

    def run(self, argv, timeout, env=None, cwd=None, capture=None):
        if argv[0] != "/opt/lab/smpquery":
            return HostTransport.run(self, argv, timeout, env=env, cwd=cwd, capture=capture)
        self.ran.append(list(argv[1:]))
        proc = smpquery(self.root, *argv[1:])
        return {"rc": proc.returncode, "stdout": proc.stdout, "stderr": proc.stderr, "timed_out": False}


def test_discovery_names_each_infiniband_ports_leaf_by_the_switch_s_node_description(lab_roots):
    _lab, tmp_path = lab_roots
    root = tmp_path / "h4"
    transport = _LabHost(root)
    facts = rd.collect(transport, sysfs_root=str(root), topology_tools=True, address_source="gids")
    assert transport.ran == [["-C", device, "-P", "1", "-D", operation, "0,1"]
                             for device in ("mlx5_0", "mlx5_1") for operation in ("nodeinfo", "nodedesc")]
    assert facts["topology"] == {
        "mlx5_0": {"leaf": "MF0;lab-r0-leaf2:MSB7800/U1", "port": "2", "source": "smpquery"},
        "mlx5_1": {"leaf": "MF0;lab-r1-leaf2:MSB7800/U1", "port": "2", "source": "smpquery"}}
    assert facts["sources"]["tools"]["smpquery"]["switches"] == 2
