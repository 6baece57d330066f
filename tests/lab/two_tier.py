# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""THE LAB's two-tier fabric (tests only): EMULATED leaf and spine switches as Linux bridges.

``lab.py up --tiers 2 --per-leaf K``: per rail, one bridge per leaf (the hosts in order, K per leaf) and the
rail's bridge as its spine (it keeps the rail's ``.1`` address, so the controller reaches every host through it);
each leaf joins the spine through a veth pair, its uplink, shaped like a non-blocking fabric (K times the host
rate) and shapeable lower (``Lab.slow_uplink``). A rail stays one /24: the bridges are joined at layer 2.
Each host gets a file naming the leaf and port of each of its rail netdevs, which the ``lldpctl`` EMULATOR
(tests/lab/emulators/lldpctl_emulator.py) prints as lldpd would, and the ``smpquery`` EMULATOR
(tests/lab/emulators/smpquery_emulator.py) as an InfiniBand switch answers a directed route out of the port.
Nothing under plugins/ knows about any of this.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import hashlib
import json
import os

LEAF_NAME = "lab-r%d-leaf%d"      # what the leaf says it is over LLDP (its sysName)
SPINE_NAME = "lab-r%d-spine"
PORT_NAME = "swp%d"               # the leaf's host ports (ifName), numbered from 1 in host order
# in the host's emulated sysfs root (COMMCHECK_LAB_SYSFS), read by the lldpctl EMULATOR
NEIGHBORS_FILE = os.path.join("commcheck-lab", "lldp_neighbors.json")
MAX_LEAVES = 200
MAX_OVERSUBSCRIPTION = 64


def plan_fabric(lab, per_leaf, rate_bps):
    """Add the leaves of every rail to a lab plan (``lab.plan``'s dict, changed in place).

    Each rail gets ``spine`` (its name) and ``leaves``: ``[{leaf, name, bridge, uplink_leaf, uplink_spine,
    hosts}]`` (``uplink_leaf`` is the uplink's end on the leaf bridge, ``uplink_spine`` its end on the spine);
    each host rail its leaf's ``bridge``, ``leaf`` (name), ``leaf_num``, ``port`` and ``port_number``.
    ``uplink_rate``: K times the host rate (None when the lab is unshaped; ``Lab.oversubscribe`` lowers it)."""
    per_leaf = int(per_leaf)
    hosts = lab["hosts"]
    if not 1 <= per_leaf <= len(hosts):
        raise ValueError("--per-leaf must be 1..%d (the number of hosts), got %d" % (len(hosts), per_leaf))
    count = (len(hosts) + per_leaf - 1) // per_leaf
    if count > MAX_LEAVES:
        raise ValueError("at most %d leaves per rail (hosts / --per-leaf), got %d" % (MAX_LEAVES, count))
    tag = lab["tag"]
    lab["tiers"] = 2
    lab["per_leaf"] = per_leaf
    lab["uplink_rate"] = uplink_rate(per_leaf, rate_bps)
    lab["oversubscription"] = 1
    for rail in lab["rails"]:
        num = rail["rail"]
        rail["spine"] = SPINE_NAME % num
        rail["leaves"] = [{
            "leaf": leaf,
            "name": LEAF_NAME % (num, leaf),
            "bridge": "cb%sr%dl%d" % (tag, num, leaf),
            "uplink_leaf": "cl%sr%dl%d" % (tag, num, leaf),
            "uplink_spine": "cs%sr%dl%d" % (tag, num, leaf),
            "hosts": [],
        } for leaf in range(1, count + 1)]
    for idx, host in enumerate(hosts):
        for hrail in host["rails"]:
            leaf = lab["rails"][hrail["rail"]]["leaves"][idx // per_leaf]
            leaf["hosts"].append(host["name"])
            hrail.update({"bridge": leaf["bridge"], "leaf": leaf["name"], "leaf_num": leaf["leaf"],
                          "port": PORT_NAME % (idx % per_leaf + 1), "port_number": idx % per_leaf + 1})
    return lab


def uplink_rate(per_leaf, rate_bps, oversubscription=1):
    """The rate of each uplink (tc units) of a fabric ``oversubscription``:1 (a leaf's host rate over its uplink
    rate): ``per_leaf`` times the host rate over it; None when the lab is unshaped (``rate_bps`` None)."""
    ratio = float(oversubscription)
    if not 1 <= ratio <= MAX_OVERSUBSCRIPTION:
        raise ValueError("oversubscription must be 1 to %d, got %r" % (MAX_OVERSUBSCRIPTION, oversubscription))
    return "%dbit" % int(rate_bps * int(per_leaf) / ratio) if rate_bps else None


def interfaces(lab):
    """Every root-namespace interface the fabric adds (leaf bridges, both ends of each uplink)."""
    out = []
    for rail in lab.get("rails", []):
        for leaf in rail.get("leaves", []):
            out += [leaf["bridge"], leaf["uplink_leaf"], leaf["uplink_spine"]]
    return out


def leaf_of(lab, rail, leaf):
    """The leaf entry of ``rail`` (a number) numbered ``leaf`` (from 1) or named ``leaf``; ValueError else."""
    leaves = lab["rails"][int(rail)].get("leaves") if 0 <= int(rail) < len(lab["rails"]) else None
    if not leaves:
        raise ValueError("the lab has no rail %s with leaves (up --tiers 2)" % rail)
    for entry in leaves:
        if str(leaf) in (str(entry["leaf"]), entry["name"]):
            return entry
    raise ValueError("rail %s has no leaf %r (leaves: %s)" % (rail, leaf, ", ".join(e["name"] for e in leaves)))


def build_fabric(lab, make_bridge, run, shape, sysctl_write):
    """Make the leaf bridges and the uplinks (after the rails' spine bridges, before the hosts)."""
    for rail in lab["rails"]:
        for leaf in rail.get("leaves", []):
            make_bridge(leaf["bridge"])
            run(["ip", "link", "add", leaf["uplink_spine"], "type", "veth", "peer", "name", leaf["uplink_leaf"]])
            run(["ip", "link", "set", leaf["uplink_spine"], "master", rail["bridge"], "up"])
            run(["ip", "link", "set", leaf["uplink_leaf"], "master", leaf["bridge"], "up"])
            for dev in (leaf["uplink_spine"], leaf["uplink_leaf"]):
                sysctl_write("net/ipv6/conf/%s/disable_ipv6" % dev, "1")
                if lab.get("uplink_rate"):
                    shape(dev, lab["uplink_rate"])


def chassis_mac(name):
    """A stable, locally administered MAC for an emulated switch (its LLDP chassis id)."""
    digest = hashlib.sha1(name.encode("utf-8")).hexdigest()
    return ":".join(["02"] + [digest[i:i + 2] for i in range(0, 10, 2)])


def write_neighbors(lab, sysfs_root_of):
    """Write each host's ``NEIGHBORS_FILE``: ``{netdev: {chassis, chassis_mac, port, spine, bridge, device,
    port_number}}`` (``device``: the netdev's RDMA device; ``port_number``: the leaf's port as a number, which the
    smpquery EMULATOR reports as the switch's ``LocalPort``)."""
    for host in lab["hosts"]:
        table = {}
        for hrail in host["rails"]:
            if hrail.get("leaf"):
                table[hrail["netdev"]] = {"chassis": hrail["leaf"], "chassis_mac": chassis_mac(hrail["leaf"]),
                                          "port": hrail["port"], "spine": lab["rails"][hrail["rail"]]["spine"],
                                          "bridge": hrail["bridge"], "device": hrail["device"],
                                          "port_number": hrail["port_number"]}
        path = os.path.join(sysfs_root_of(host["name"]), NEIGHBORS_FILE)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as handle:
            json.dump(table, handle, indent=1, sort_keys=True)


def inventory_leaves(hrails):
    """``lab_leaves`` of a host (a lab fact for tests): ``{rail: {leaf, port}}``."""
    return dict((str(r["rail"]), {"leaf": r["leaf"], "port": r["port"]}) for r in hrails if r.get("leaf"))
