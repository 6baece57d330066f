#!/usr/bin/env python
# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""EMULATOR (commcheck lab only): lldpd's ``lldpctl``, as a host of a two-tier lab sees its leaf switches.

The lab has no lldpd and its leaf switches are Linux bridges (tests/lab/two_tier.py), which send no LLDP. This
program prints what ``lldpctl -f json`` prints on a host whose rail ports are cabled to LLDP-speaking leaves: one
entry per rail netdev, the leaf's system name as the chassis (its id a MAC address), the leaf's port as an
``ifname`` port id (``swp<n>``), in lldpd 1.0's ``json`` shape (the ``interface`` table folded to an object for
one interface, a list of ``{ifname: entry}`` for several; see tests/fixtures/real/lldpctl/). What it reports is
the host's file ``<COMMCHECK_LAB_SYSFS>/commcheck-lab/lldp_neighbors.json`` (written by ``lab.py up --tiers 2``).

Command line: ``lldpctl [-d] [-u SOCKET] [-f FORMAT] [INTERFACE ...]``; only ``-f json`` is emulated (another
format is refused, rc 1); interfaces limit the table to those. ``-h`` says it is an emulator.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import getopt
import json
import os
import sys
import time

NEIGHBORS_FILE = os.path.join("commcheck-lab", "lldp_neighbors.json")
SOCKET = "/run/lldpd.socket"
TTL = "120"
USAGE = """Usage:   lldpctl [OPTIONS ...] [INTERFACES ...]
EMULATOR (commcheck lab): no lldpd here; prints the neighbours the lab's two-tier fabric defines.
-d          Enable more debugging information.
-u socket   Specify the Unix-domain socket used for communication with lldpd(8).
-f format   Choose output format (only json is emulated).
"""


def age_text(seconds):
    """lldpd's age of a neighbour: ``0 day, 01:48:15``."""
    seconds = max(0, int(seconds))
    days, rest = divmod(seconds, 86400)
    return "%d day%s, %02d:%02d:%02d" % (days, "s" if days > 1 else "", rest // 3600, rest % 3600 // 60, rest % 60)


def entry(rid, neighbor, age):
    """One interface's neighbour as lldpd's json prints it."""
    return {
        "via": "LLDP",
        "rid": str(rid),
        "age": age,
        "chassis": {
            neighbor["chassis"]: {
                "id": {"type": "mac", "value": neighbor["chassis_mac"]},
                "descr": "commcheck lab EMULATED leaf switch (Linux bridge %s, spine %s)" % (
                    neighbor.get("bridge"), neighbor.get("spine")),
                "capability": [{"type": "Bridge", "enabled": True}, {"type": "Router", "enabled": False}],
            },
        },
        "port": {
            "id": {"type": "ifname", "value": neighbor["port"]},
            "descr": neighbor["port"],
            "ttl": TTL,
        },
    }


def table(neighbors, wanted, age):
    """lldpd's ``{"lldp": ...}`` of the netdevs (all, or those ``wanted``), in interface order."""
    names = [name for name in sorted(neighbors) if not wanted or name in wanted]
    rows = [{name: entry(num, neighbors[name], age)} for num, name in enumerate(names, 1)]
    if not rows:
        return {"lldp": {}}
    return {"lldp": {"interface": rows[0] if len(rows) == 1 else rows}}


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    try:
        opts, args = getopt.getopt(argv, "hdvu:f:c:")
    except getopt.GetoptError as exc:
        sys.stderr.write("lldpctl: %s\n%s" % (exc, USAGE))
        return 1
    fmt = "plain"
    for opt, value in opts:
        if opt == "-h":
            sys.stdout.write(USAGE)
            return 0
        if opt == "-f":
            fmt = value
    if fmt != "json":
        sys.stderr.write("lldpctl: EMULATOR (commcheck lab): format %r is not emulated, only json\n" % fmt)
        return 1
    root = os.environ.get("COMMCHECK_LAB_SYSFS") or "/sys"
    path = os.path.join(root, NEIGHBORS_FILE)
    try:
        with open(path) as handle:
            neighbors = json.load(handle)
        age = age_text(time.time() - os.stat(path).st_mtime)
    except (IOError, OSError, ValueError):
        # what lldpctl says where no lldpd listens
        sys.stderr.write("[lldpctl] unable to connect to socket %s: No such file or directory\n" % SOCKET)
        return 1
    sys.stdout.write(json.dumps(table(neighbors, set(args), age), indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
