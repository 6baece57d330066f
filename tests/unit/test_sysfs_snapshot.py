# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""sysfs snapshots: the os reader and the constant shell dump give the same dict."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os
import sys

import pytest

from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery import sysfs_snapshot as ss
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands.runner import HostTransport

HERE = os.path.dirname(os.path.abspath(__file__))
LAB = os.path.join(os.path.dirname(HERE), "lab")
FIXTURES = os.path.join(os.path.dirname(HERE), "fixtures", "sysfs")
if LAB not in sys.path:
    sys.path.insert(0, LAB)

import sysfs_tree  # noqa: E402  pylint: disable=wrong-import-position

MIXED = [
    {"name": "mlx5_0", "hca_type": "MT4129", "ports": [{"netdev": "ens1f0np0", "ipv4": "10.0.0.2/24"}]},
    {"name": "mlx5_1", "ports": [{"link_layer": "InfiniBand", "netdev": "ib0", "lid": 12, "sm_lid": 1,
                                  "rate_gbps": 400}]},
    {"name": "mlx5_2", "ports": [{"netdev": "ens3", "state": "DOWN", "phys_state": "Polling"}]},
    {"name": "mlx5_bond_0", "ports": [{"netdev": "bond0", "ipv4": "192.168.1.5",
                                       "gids": [{"index": 5, "gid": "192.168.1.5", "type": "RoCE v2"}]}]},
    {"name": "mlx4_0", "ports": [
        {"port": 1, "link_layer": "InfiniBand", "netdev": "ib1", "lid": 3, "sm_lid": 1, "rate_gbps": 40},
        {"port": 2, "link_layer": "InfiniBand", "netdev": "ib2", "state": "DOWN", "rate_gbps": 40}]},
]


def _dump(root):
    res = HostTransport().run(ss.dump_argv(root), 30)
    assert res["rc"] == 0, res["stderr"]
    return res


def _same(root):
    snap_fs = ss.snapshot_from_fs(root)
    snap_dump, errors = ss.snapshot_from_dump(_dump(root)["stdout"])
    assert errors == []
    assert snap_fs == snap_dump
    return snap_fs


@pytest.mark.parametrize("style", ["unreadable", "einval_text", "missing"])
def test_fs_and_dump_agree_on_a_mixed_tree(tmp_path, style):
    root = str(tmp_path / "sys")
    sysfs_tree.build_sysfs(root, MIXED, cpus=["performance", "powersave", None],
                           modules={"ib_core": {"netns_mode": "Y"}, "nvidia_peermem": {}},
                           net={"bond0": {"slaves": ["ens2f0np0", "ens2f1np1"]}}, gpus=1,
                           unused_gid_style=style)
    snap = _same(root)
    assert snap["class/infiniband/mlx5_0/ports/1/state"] == "4: ACTIVE"
    assert snap["class/infiniband/mlx5_1/ports/1/lid"] == "0xc"
    assert snap["class/infiniband/mlx5_0/device"] == {"link": "../../../0000:17:00.0"}
    assert snap["class/net/ens2f0np0/master"]["link"].endswith("virtual/net/bond0")
    assert snap["class/net/bond0/bonding/slaves"] == "ens2f0np0 ens2f1np1"
    assert snap["devices/system/cpu/cpu1/cpufreq/scaling_governor"] == "powersave"
    assert "devices/system/cpu/cpu2/cpufreq/scaling_governor" not in snap
    assert snap["module/ib_core/parameters/netns_mode"] == "Y"
    assert snap["module/nvidia_peermem/initstate"] == "live"
    assert any(k.startswith("bus/pci/devices/") and v == "0x10de" for k, v in snap.items())
    types5 = "class/infiniband/mlx5_bond_0/ports/1/gid_attrs/types/5"
    assert snap[types5] == "RoCE v2"
    unused = "class/infiniband/mlx5_bond_0/ports/1/gid_attrs/types/0"
    if style == "missing":
        assert unused not in snap
    elif style == "einval_text":
        assert snap[unused] == "Invalid argument"
    elif os.geteuid() == 0:
        assert snap[unused] == ""        # root reads the empty mode-000 file
    else:
        assert unused not in snap        # others cannot open it: absent in both readers


def test_fs_and_dump_agree_on_the_procfs_ttar_tree(tmp_path):
    root = str(tmp_path / "sys")
    with open(os.path.join(FIXTURES, "procfs_fixtures_class_infiniband.ttar.txt")) as handle:
        written = sysfs_tree.extract_ttar(handle.read(), root)
    assert len(written) > 100
    snap = _same(root)
    # the fixture's two-line link_layer keeps its first line
    assert snap["class/infiniband/mlx4_0/ports/2/link_layer"] == "InfiniBand"
    assert snap["class/infiniband/mlx5_0/ports/1/rate"] == "25 Gb/sec (1X EDR)"
    assert snap["class/infiniband/hfi1_0/ports/1/counters/symbol_error"] == "0"


def test_fs_and_dump_agree_on_the_h100_tree(tmp_path):
    root = str(tmp_path / "sys")
    with open(os.path.join(FIXTURES, "gpud_sys_class_infiniband_h100_attrs.txt")) as handle:
        written = sysfs_tree.build_from_head_dump(handle.read(), root)
    assert len(written) == 9 * 7
    snap = _same(root)
    assert snap["class/infiniband/mlx5_bond_0/ports/1/rate"] == "200 Gb/sec (2X NDR)"
    assert snap["class/infiniband/mlx5_9/hca_type"] == "MT4129"


def test_root_is_a_positional_argument_never_interpolated(tmp_path):
    odd = tmp_path / "sys $(touch PWNED) `id` ;x"
    sysfs_tree.build_sysfs(str(odd), MIXED[:1])
    snap = _same(str(odd))
    assert snap["class/infiniband/mlx5_0/ports/1/link_layer"] == "Ethernet"
    assert not (tmp_path / "PWNED").exists()
    assert not os.path.exists("PWNED")
    argv = ss.dump_argv(str(odd))
    assert argv[:2] == ["sh", "-c"] and argv[2] == ss.DUMP_SCRIPT and argv[4] == str(odd)
    assert str(odd) not in ss.DUMP_SCRIPT


def test_script_is_constant_and_patterns_are_plain():
    assert ss.DUMP_SCRIPT == ss._build_script()
    for pattern in ss.FILE_PATTERNS + ss.LINK_PATTERNS:
        assert not pattern.startswith("/") and ".." not in pattern
    with pytest.raises(ValueError):
        ss._sh_quote_pattern("class/$(reboot)")


def test_missing_root_dump_fails_cleanly(tmp_path):
    res = HostTransport().run(ss.dump_argv(str(tmp_path / "nope")), 30)
    assert res["rc"] == 2
    assert "cannot enter" in res["stderr"]
    snap, errors = ss.snapshot_from_dump(res["stdout"])
    assert snap == {} and errors[0]["code"] == "no_header"


def test_dump_parser_edge_cases():
    text = "\n".join([
        "kubectl noise before",
        ss.HEADER,
        "F\tclass/infiniband/x/fw_ver",
        "L\t1.2.3",
        "F\tclass/infiniband/x/node_desc",
        "L\tline one",
        "L\t",
        "L\tline\twith tab",
        "L\t",
        "F\tclass/infiniband/x/ports/1/gid_attrs/types/7",
        "S\tclass/infiniband/x/device\t../../../0000:3b:00.0",
        "garbage",
        "end",
    ])
    snap, errors = ss.snapshot_from_dump(text)
    assert errors == []
    assert snap == {
        "class/infiniband/x/fw_ver": "1.2.3",
        "class/infiniband/x/node_desc": "line one\n\nline\twith tab",
        "class/infiniband/x/ports/1/gid_attrs/types/7": "",
        "class/infiniband/x/device": {"link": "../../../0000:3b:00.0"},
    }
    snap, errors = ss.snapshot_from_dump(ss.HEADER + "\nF\ta/b\nL\tx\n")
    assert snap == {"a/b": "x"} and errors[0]["code"] == "truncated"
    no_header = [{"code": "no_header", "message": "the text is not a commcheck sysfs dump"}]
    assert ss.snapshot_from_dump(None) == ({}, no_header)


class _RemoteLocal(HostTransport):
    """A transport that claims to be remote but runs locally: exercises the dump path."""
    remote = True
    name = "fake-remote"


def test_snapshot_picks_reader_by_transport(tmp_path):
    root = str(tmp_path / "sys")
    sysfs_tree.build_sysfs(root, MIXED)
    local, info_local = ss.snapshot(HostTransport(), root)
    remote, info_remote = ss.snapshot(_RemoteLocal(), root)
    assert info_local["source"] == "fs" and info_remote["source"] == "dump"
    assert local == remote
    assert info_remote["rc"] == 0 and info_remote["errors"] == []
    empty, info = ss.snapshot(HostTransport(), str(tmp_path / "absent"))
    assert empty == {} and info["errors"][0]["code"] == "no_root"
    empty, info = ss.snapshot(_RemoteLocal(), str(tmp_path / "absent"))
    assert empty == {} and {e["code"] for e in info["errors"]} == {"no_header", "dump_failed"}


def test_dump_of_real_sys_is_parseable():
    """The build machine's own /sys: whatever is there, both readers agree."""
    if not os.path.isdir("/sys/class"):
        pytest.skip("no /sys here")
    snap_fs = ss.snapshot_from_fs("/sys")
    snap_dump, errors = ss.snapshot_from_dump(_dump("/sys")["stdout"])
    assert errors == []
    # counters may move between the two reads; compare the keys and the stable files
    assert set(snap_fs) == set(snap_dump)
    for key, value in snap_fs.items():
        if "/counters/" not in key and "hw_counters" not in key and "operstate" not in key \
                and "carrier" not in key:
            assert snap_dump[key] == value, key
