# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The two-tier lab's plan (tests/lab/two_tier.py) and its lldpctl EMULATOR, read by the product's own parser.

No namespaces: the plan, the neighbour files it writes and the emulator run as a program."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json
import os
import re
import subprocess
import sys

import pytest

from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery import topology
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_lldpctl import parse_lldpctl

from real_outputs import real

LAB = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lab")
EMULATOR = os.path.join(LAB, "emulators", "lldpctl_emulator.py")
if LAB not in sys.path:
    sys.path.insert(0, LAB)

import lab as lablib  # noqa: E402  pylint: disable=wrong-import-position
import two_tier  # noqa: E402  pylint: disable=wrong-import-position


def test_hosts_go_in_order_per_leaf_and_keep_the_one_tier_addresses():
    flat = lablib.plan("lab36u", 7, 2)
    lab = lablib.plan("lab36u", 7, 2, tiers=2, per_leaf=3)
    assert [h["address"] for h in flat["hosts"]] == [h["address"] for h in lab["hosts"]]
    assert [r["subnet"] for r in lab["rails"]] == [r["subnet"] for r in flat["rails"]]
    assert [(leaf["name"], leaf["hosts"]) for leaf in lab["rails"][1]["leaves"]] == [
        ("lab-r1-leaf1", ["h1", "h2", "h3"]), ("lab-r1-leaf2", ["h4", "h5", "h6"]), ("lab-r1-leaf3", ["h7"])]
    h5 = lab["hosts"][4]["rails"][1]
    assert (h5["leaf"], h5["port"], h5["bridge"]) == ("lab-r1-leaf2", "swp2", lab["rails"][1]["leaves"][1]["bridge"])
    # the spine is the rail's bridge (the controller's .1 there); the leaves hang below it
    assert lab["rails"][1]["bridge"] == flat["rails"][1]["bridge"] and lab["uplink_rate"] == "1500000000bit"
    names = two_tier.interfaces(lab)
    assert len(names) == len(set(names)) == 2 * 3 * 3 and all(len(n) <= 15 for n in names)
    assert not set(names) & set(r["bridge"] for r in lab["rails"])


@pytest.mark.parametrize("kwargs, message", [
    ({"tiers": 2}, "--tiers 2 needs --per-leaf"),
    ({"tiers": 2, "per_leaf": 0}, "--per-leaf must be 1..4"),
    ({"tiers": 2, "per_leaf": 5}, "--per-leaf must be 1..4"),
    ({"per_leaf": 2}, "--per-leaf needs --tiers 2"),
    ({"tiers": 3, "per_leaf": 2}, "--tiers must be 1 or 2"),
])
def test_a_two_tier_plan_that_cannot_be_is_refused(kwargs, message):
    with pytest.raises(lablib.LabError, match=message):
        lablib.plan("lab36u", 4, 1, **kwargs)


def test_a_leaf_is_found_by_number_or_name_and_a_one_tier_lab_has_none():
    lab = lablib.plan("lab36u", 4, 2, tiers=2, per_leaf=2)
    assert two_tier.leaf_of(lab, 1, 2) is two_tier.leaf_of(lab, 1, "lab-r1-leaf2")
    with pytest.raises(ValueError, match="no leaf"):
        two_tier.leaf_of(lab, 1, 3)
    with pytest.raises(ValueError, match="with leaves"):
        two_tier.leaf_of(lablib.plan("lab36u", 4, 2), 0, 1)


@pytest.mark.parametrize("ratio, rate", [(1, "1500000000bit"), (2, "750000000bit"), (4, "375000000bit"),
                                         (1.5, "1000000000bit")])
def test_an_oversubscribed_fabric_s_uplink_is_its_leaf_s_host_rate_over_the_ratio(ratio, rate):
    # three hosts a leaf at the lab's 500mbit
    assert two_tier.uplink_rate(3, lablib.parse_rate(lablib.DEFAULT_RATE), ratio) == rate
    assert two_tier.uplink_rate(3, None, ratio) is None


@pytest.mark.parametrize("ratio", [0.5, 65, "x"])
def test_an_oversubscription_the_lab_cannot_make_is_refused(ratio):
    with pytest.raises(ValueError):
        two_tier.uplink_rate(2, 10 ** 9, ratio)


def test_oversubscribe_sets_what_heal_puts_back_on_every_uplink(monkeypatch, tmp_path):
    state = lablib.plan("lab36u", 4, 2, tiers=2, per_leaf=2)
    state["dir"] = str(tmp_path)
    lab = lablib.Lab(state)
    shaped = []
    monkeypatch.setattr(lab, "_shape", lambda dev, rate, netns=None: shaped.append((dev, rate)))
    lab.oversubscribe(4)
    uplinks = [dev for rail in state["rails"] for leaf in rail["leaves"]
               for dev in (leaf["uplink_leaf"], leaf["uplink_spine"])]
    assert shaped == [(dev, "250000000bit") for dev in uplinks]
    with open(str(tmp_path / "state.json")) as handle:
        saved = json.load(handle)
    assert (saved["uplink_rate"], saved["oversubscription"]) == ("250000000bit", 4.0)
    del shaped[:]
    lab.slow_uplink(1, 2, "50mbit")
    lab.heal()
    assert [item for item in shaped if item[0] in uplinks] == [
        ("cl%sr1l2" % state["tag"], "50mbit"), ("cs%sr1l2" % state["tag"], "50mbit")] + [
        (dev, "250000000bit") for dev in uplinks]
    with pytest.raises(lablib.LabError, match="two-tier"):
        lablib.Lab(dict(lablib.plan("lab36u", 4, 2), dir=str(tmp_path))).oversubscribe(2)


def lldpctl(root, *args):
    env = dict(os.environ, COMMCHECK_LAB_SYSFS=root)
    return subprocess.run([sys.executable, EMULATOR] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, env=env, timeout=60, check=False)


@pytest.fixture
def host_roots(tmp_path):
    lab = lablib.plan("lab36u", 4, 2, tiers=2, per_leaf=2)
    two_tier.write_neighbors(lab, lambda host: str(tmp_path / host))
    return lab, tmp_path


def test_the_emulator_names_each_rail_netdevs_leaf_and_port_as_the_product_reads_lldpctl(host_roots):
    lab, tmp_path = host_roots
    proc = lldpctl(str(tmp_path / "h3"), "-f", "json")
    assert proc.returncode == 0, proc.stderr
    parsed = parse_lldpctl(proc.stdout)
    assert parsed["ok"] and parsed["errors"] == []
    assert [(n["interface"], n["chassis"], n["port_id"], n["port_id_type"], n["via"]) for n in parsed["neighbors"]] == [
        ("ens1f0np0", "lab-r0-leaf2", "swp1", "ifname", "LLDP"),
        ("ens1f1np1", "lab-r1-leaf2", "swp1", "ifname", "LLDP")]
    devices = [{"name": r["device"], "ports": [{"port": 1, "netdev": r["netdev"]}]} for r in lab["hosts"][2]["rails"]]
    assert topology.from_lldp(parsed["neighbors"], devices) == {
        "mlx5_0": {"leaf": "lab-r0-leaf2", "port": "swp1", "source": "lldp"},
        "mlx5_1": {"leaf": "lab-r1-leaf2", "port": "swp1", "source": "lldp"}}
    # another host, another leaf and port
    other = parse_lldpctl(lldpctl(str(tmp_path / "h2"), "-f", "json").stdout)["neighbors"]
    assert [(n["chassis"], n["port_id"]) for n in other] == [("lab-r0-leaf1", "swp2"), ("lab-r1-leaf1", "swp2")]


def test_the_emulators_json_has_lldpds_shape(host_roots):
    """One interface folds the table to an object, several make a list (lldpd 1.0's json, as the real outputs of
    tests/fixtures/real/lldpctl/ show); every key it prints is one a real lldpctl printed there."""
    _lab, tmp_path = host_roots
    one = json.loads(lldpctl(str(tmp_path / "h1"), "-f", "json", "ens1f1np1").stdout)
    several = json.loads(lldpctl(str(tmp_path / "h1"), "-f", "json").stdout)
    real_one = json.loads(real("lldpctl", "lldpctl_json_one_interface_lldpd_integration_test.json"))
    assert isinstance(one["lldp"]["interface"], dict) and isinstance(several["lldp"]["interface"], list)
    [(name, entry)] = one["lldp"]["interface"].items()
    [(_real_name, real_entry)] = real_one["lldp"]["interface"].items()
    assert name == "ens1f1np1" and set(entry) <= set(real_entry) | {"age"}
    [chassis] = entry["chassis"].values()
    [real_chassis] = real_entry["chassis"].values()
    assert set(chassis) <= set(real_chassis) and set(entry["port"]) <= set(real_entry["port"])
    assert json.loads(lldpctl(str(tmp_path / "h1"), "-f", "json", "eth9").stdout) == {"lldp": {}}


def test_the_emulator_refuses_what_it_does_not_emulate_and_without_lldpd_prints_nothing(host_roots, tmp_path):
    _lab, roots = host_roots
    refused = lldpctl(str(roots / "h1"), "-f", "xml")
    assert refused.returncode == 1 and "EMULATOR" in refused.stderr and refused.stdout == ""
    absent = lldpctl(str(tmp_path / "nowhere"), "-f", "json")
    assert absent.returncode == 1 and absent.stdout == "" and "unable to connect" in absent.stderr
    assert [e["code"] for e in parse_lldpctl(absent.stdout)["errors"]] == ["no_output"]


@pytest.mark.parametrize("kwargs, message", [
    ({"link_layer": "InfiniBand"}, "--link-layer InfiniBand needs --tiers 2"),
    ({"link_layer": "infiniband", "tiers": 2, "per_leaf": 2}, "--link-layer must be one of Ethernet, InfiniBand"),
])
def test_an_infiniband_lab_needs_two_tiers_and_a_known_link_layer(kwargs, message):
    with pytest.raises(lablib.LabError, match=message):
        lablib.plan("lab36u", 4, 1, **kwargs)


def test_an_infiniband_lab_presents_its_rail_ports_as_infiniband_with_a_lid_each(tmp_path):
    lab = lablib.plan("lab36u", 4, 2, tiers=2, per_leaf=2, link_layer="InfiniBand")
    lab["dir"] = str(tmp_path)
    lablib._sysfs(lab, {})  # pylint: disable=protected-access
    lids = []
    for host in lab["hosts"]:
        for hrail in host["rails"]:
            port = tmp_path / "sysfs" / host["name"] / "class" / "infiniband" / hrail["device"] / "ports" / "1"
            assert (port / "link_layer").read_text().strip() == "InfiniBand"
            assert (port / "sm_lid").read_text().strip() == "0x1"
            lids.append((port / "lid").read_text().strip())
            assert os.path.isdir(str(port.parent.parent / "device" / "net" / hrail["netdev"]))
    assert len(set(lids)) == 8 and "0x1" not in lids
    ethernet = lablib.plan("lab36u", 4, 2, tiers=2, per_leaf=2)
    ethernet["dir"] = str(tmp_path / "eth")
    lablib._sysfs(ethernet, {})  # pylint: disable=protected-access
    assert (tmp_path / "eth" / "sysfs" / "h1" / "class" / "infiniband" / "mlx5_0" / "ports" / "1" /
            "link_layer").read_text().strip() == "Ethernet"


def test_the_perftest_emulator_finds_an_infiniband_port_s_address_on_its_netdev(tmp_path):
    """An InfiniBand GID holds no IPv4 address: the data path is the IPoIB netdev's (here the loopback's)."""
    sys.path.insert(0, os.path.dirname(EMULATOR))
    try:
        import perftest_emulator  # pylint: disable=import-outside-toplevel
    finally:
        sys.path.remove(os.path.dirname(EMULATOR))
    net = tmp_path / "net"
    (net / "lo").mkdir(parents=True)
    assert perftest_emulator._netdev_ipv4(str(net)) == "127.0.0.1"  # pylint: disable=protected-access
    assert perftest_emulator._netdev_ipv4(str(tmp_path / "none")) is None  # pylint: disable=protected-access
    # addressed by its LID, as perftest prints an InfiniBand side (tests/fixtures/real/perftest/, mlx4): no GID line
    verb = type("P", (), {"verb": "read", "outs": 16})()
    lines = perftest_emulator.address_lines(verb, [0x215], "10.0.1.3", "local", 11).splitlines()
    assert len(lines) == 1 and lines[0].startswith(" local address: LID 0x0b QPN 0x0215 PSN 0x"), lines
    real_line = [line for line in real("perftest", "ib_read_lat_client_mlx4_cpufreq_after_header.txt").splitlines()
                 if "local address" in line][0]
    assert re.sub(r"0x[0-9a-f]+", "N", lines[0]) == re.sub(r"0x[0-9a-f]+", "N", real_line)
    roce = perftest_emulator.address_lines(verb, [0x215], "10.0.1.3", "local").splitlines()
    assert roce[0].startswith(" local address: LID 0000 QPN") and roce[1].startswith(" GID: ")


def test_an_infiniband_lab_s_inventory_reads_addresses_from_ip_and_its_hosts_have_no_lldpctl(tmp_path):
    lab = lablib.plan("lab36u", 4, 2, tiers=2, per_leaf=2, link_layer="InfiniBand")
    lab["dir"] = str(tmp_path / "ib")
    text = lablib._inventory(lab)  # pylint: disable=protected-access
    assert 'commcheck_discover_address_source: "ip"' in text and "lab_tiers: 2" in text
    lablib._launchers(lab)  # pylint: disable=protected-access
    assert os.path.exists(str(tmp_path / "ib" / "bin" / "smpquery"))
    assert not os.path.exists(str(tmp_path / "ib" / "bin" / "lldpctl"))
    ethernet = lablib.plan("lab36u", 4, 2, tiers=2, per_leaf=2)
    ethernet["dir"] = str(tmp_path / "eth")
    assert "commcheck_discover_address_source" not in lablib._inventory(ethernet)  # pylint: disable=protected-access
    lablib._launchers(ethernet)  # pylint: disable=protected-access
    assert all(os.path.exists(str(tmp_path / "eth" / "bin" / tool)) for tool in ("lldpctl", "smpquery"))
