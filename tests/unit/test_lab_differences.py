# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The lab (tests/lab) differs where a mix-up would hide.

- GIDs: each host's rails put the rail address's RoCE v2 GID at an index of their own, discovery finds that
  index, the inventory's ``lab_rails`` says the same, and the perftest emulator given a peer's index finds no
  IPv4 GID there (so a side that took its peer's index fails in the lab, as on real NICs);
- latency: the perftest emulator's typical latency (what the product judges) is not its average.

No namespaces: the lab's plan, its emulated sysfs and the emulator's functions only."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os
import sys

import pytest
import yaml

from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery import rdma_discovery
from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery.sysfs_snapshot import snapshot_from_fs

LAB = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lab")
for _path in (LAB, os.path.join(LAB, "emulators")):
    if _path not in sys.path:
        sys.path.insert(0, _path)

import lab as lablib  # noqa: E402  pylint: disable=wrong-import-position
import perftest_emulator  # noqa: E402  pylint: disable=wrong-import-position

HOSTS, RAILS = 5, 2


@pytest.fixture(name="planned", scope="module")
def planned_fixture(tmp_path_factory):
    """A 5-host, 2-rail lab's plan with its emulated sysfs written under a temporary directory."""
    plan = lablib.plan("gidlab", HOSTS, RAILS, subnet_base="10.77")
    plan["dir"] = str(tmp_path_factory.mktemp("gidlab"))
    lablib._sysfs(plan, {})  # pylint: disable=protected-access
    return plan


def _discovered(plan, host):
    root = os.path.join(plan["dir"], "sysfs", host["name"])
    facts = rdma_discovery.discover(snapshot_from_fs(root), {"sysfs_root": root})
    return dict((d["name"], d["ports"][0]["gid_index"]) for d in facts["devices"])


def test_each_rail_of_each_host_has_its_own_gid_index_and_discovery_finds_it(planned):
    indexes = {}
    for host in planned["hosts"]:
        found = _discovered(planned, host)
        for rail in host["rails"]:
            assert found[rail["device"]] == rail["gid_index"], (host["name"], rail)
            indexes[(host["name"], rail["rail"])] = rail["gid_index"]
    for rail in range(RAILS):
        on_rail = [indexes[("h%d" % i, rail)] for i in range(1, HOSTS + 1)]
        assert len(set(on_rail)) == lablib.GID_SPREAD, on_rail          # neighbours never share one
    assert all(indexes[("h%d" % i, 0)] != indexes[("h%d" % i, 1)] for i in range(1, HOSTS + 1))


def test_the_inventory_names_the_gid_index_discovery_finds(planned):
    inventory = yaml.safe_load(lablib._inventory(planned))  # pylint: disable=protected-access
    hostvars = inventory["all"]["children"]["lab"]["hosts"]
    for host in planned["hosts"]:
        found = _discovered(planned, host)
        assert [(r["device"], r["gid_index"]) for r in hostvars[host["name"]]["lab_rails"]] == \
            [(device, found[device]) for device in sorted(found)]


def test_the_emulator_finds_the_rail_address_at_its_own_index_and_none_at_a_peers(planned, monkeypatch):
    h1, h2 = planned["hosts"][0], planned["hosts"][1]
    monkeypatch.setenv("COMMCHECK_LAB_SYSFS", os.path.join(planned["dir"], "sysfs", "h1"))

    def device_at(index):
        params = perftest_emulator.parse("ib_write_bw", ["-d", "mlx5_0", "-x", str(index)])
        return perftest_emulator.Device(params)

    own = device_at(h1["rails"][0]["gid_index"])
    assert (own.address, own.netdev) == (h1["rails"][0]["address"], h1["rails"][0]["netdev"])
    assert device_at(h2["rails"][0]["gid_index"]).address is None


def test_the_emulators_typical_latency_is_not_its_average():
    # round trips of a shared machine: a floor and a long tail, as the lab measures them
    samples = [14.0 + (num % 7) * 0.5 for num in range(1000)] + [95.0, 180.0, 240.0]
    stats = perftest_emulator.lat_stats(samples)
    assert stats["t_min"] == 14.0 and stats["t_max"] == 240.0
    assert stats["t_typical"] == 14.0 < stats["t_avg"]
    assert stats["t_avg"] == pytest.approx(sum(samples) / len(samples))
