#!/usr/bin/env python
# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""EMULATOR (commcheck lab only): infiniband-diags' ``smpquery``, as a host of a two-tier lab sees its leaf switches.

The lab's leaves are Linux bridges (tests/lab/two_tier.py), which answer no subnet management packet. This program
prints what ``smpquery -C <device> -P <port> -D nodeinfo 0,<port>`` and ``... nodedesc 0,<port>`` print on a host
whose InfiniBand port is cabled to a switch: the directed route ``0,<port>`` leaves by that port and reaches the
switch, which says it is a ``Switch``, its GUIDs, the port the query came in by (``LocalPort``: the leaf's port the
host is cabled to) and its node description (``MF0;<leaf>:MSB7800/U1``, as Mellanox switches name themselves). The
layout is rdma-core's ``infiniband-diags/smpquery.c`` (see tests/fixtures/real/smpquery/): ``# Node info: DR path
slid 0; dlid 0; 0,<port>``, each NodeInfo field padded with dots to column 33, ``Node Description:`` with dots up
to column 49 (one dot for a description of 32 characters or more). A route the lab has no switch for fails as
smpquery fails (``ibwarn: ... _do_madrpc failed`` and ``smpquery: iberror: failed: operation ...``, rc 255).
What it reports is the host's file ``<COMMCHECK_LAB_SYSFS>/commcheck-lab/lldp_neighbors.json`` (written by
``lab.py up --tiers 2``: each rail netdev's leaf, its RDMA device and its port number on the leaf).

Command line: ``smpquery [-C CA] [-P PORT] [-D] [-G] [-L] [-t MS] OP DEST``; only ``-D`` (directed routes) with
``nodeinfo`` / ``NI`` and ``nodedesc`` / ``ND`` is emulated (another operation or addressing is refused, rc 255).
``-h`` says it is an emulator.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import getopt
import hashlib
import json
import os
import sys

NEIGHBORS_FILE = os.path.join("commcheck-lab", "lldp_neighbors.json")
NUM_PORTS = 36
MODEL = "MSB7800"
OPERATIONS = {"nodeinfo": "NodeInfo", "ni": "NodeInfo", "nodedesc": "NodeDesc", "nd": "NodeDesc"}
FIELD_WIDTH = 33        # a NodeInfo field's name, colon and dots
DESCRIPTION_WIDTH = 32  # a node description and the dots before it
USAGE = """Usage: smpquery [options] <op> <dest dr_path|lid|guid> [op params]
EMULATOR (commcheck lab): answers for the lab's two-tier fabric only; no umad device here.
Supported ops (emulated): nodeinfo (NI), nodedesc (ND), with -D <dr path> 0,<port>
Options: -C <ca>  -P <port>  -D (directed route)  -t <ms>
"""


def description(leaf):
    """A Mellanox switch's node description of the leaf ``leaf``."""
    return "MF0;%s:%s/U1" % (leaf, MODEL)


def node_guid(leaf):
    """A stable node GUID for an emulated switch (Mellanox's OUI, then a digest of its name)."""
    return "0x0002c903" + hashlib.sha1(leaf.encode("utf-8")).hexdigest()[:8]


def field(name, value):
    return name + ":" + "." * max(1, FIELD_WIDTH - len(name) - 1) + str(value)


def nodeinfo_text(route, leaf, local_port):
    guid = node_guid(leaf)
    lines = ["# Node info: DR path slid 0; dlid 0; %s" % route,
             field("BaseVers", 1), field("ClassVers", 1), field("NodeType", "Switch"), field("NumPorts", NUM_PORTS),
             field("SystemGuid", guid), field("Guid", guid), field("PortGuid", guid), field("PartCap", 8),
             field("DevId", "0xcf08"), field("Revision", "0x000000a1"), field("LocalPort", local_port),
             field("VendorId", "0x0002c9")]
    return "\n".join(lines) + "\n"


def nodedesc_text(leaf):
    text = description(leaf)
    dots = "." * (DESCRIPTION_WIDTH - len(text)) if len(text) < DESCRIPTION_WIDTH else "."
    return "Node Description:%s%s\n" % (dots, text)


def failed(operation, why):
    """What smpquery prints when the query gets no answer (``why``: libibmad's warning), rc 255."""
    sys.stderr.write("ibwarn: [%d] %s\n" % (os.getpid(), why))
    sys.stderr.write("smpquery: iberror: failed: operation %s: %s query failed\n" % (
        operation, "node info" if operation == "NodeInfo" else "node desc"))
    return 255


def neighbour_of(root, device):
    """The leaf entry of the rail netdev whose RDMA device is ``device`` (the first device without ``-C``), or
    None."""
    with open(os.path.join(root, NEIGHBORS_FILE)) as handle:
        table = json.load(handle)
    entries = [table[name] for name in sorted(table) if device is None or table[name].get("device") == device]
    return entries[0] if entries else None


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    try:
        opts, args = getopt.getopt(argv, "hdevDGLsC:P:t:")
    except getopt.GetoptError as exc:
        sys.stderr.write("smpquery: %s\n%s" % (exc, USAGE))
        return 255
    device, port, directed = None, 1, False
    for opt, value in opts:
        if opt == "-h":
            sys.stdout.write(USAGE)
            return 0
        if opt == "-C":
            device = value
        elif opt == "-P":
            if not value.isdigit():
                sys.stderr.write("smpquery: iberror: bad port %r\n" % value)
                return 255
            port = int(value)
        elif opt == "-D":
            directed = True
        elif opt in ("-G", "-L"):
            directed = False
    if len(args) < 2 or args[0].lower() not in OPERATIONS:
        sys.stderr.write(USAGE)
        return 255
    operation, route = OPERATIONS[args[0].lower()], args[1]
    if not directed:
        sys.stderr.write("smpquery: EMULATOR (commcheck lab): only directed routes (-D) are emulated\n")
        return 255
    root = os.environ.get("COMMCHECK_LAB_SYSFS") or "/sys"
    try:
        neighbour = neighbour_of(root, device)
    except (IOError, OSError, ValueError):
        neighbour = None
    if neighbour is None:
        return failed(operation, "mad_rpc_open_port: can't open UMAD port (%s:%d)" % (device, port))
    # one hop out of the local port: the switch it is cabled to; any other route is not in the lab
    if route != "0,%d" % port or not neighbour.get("port_number"):
        return failed(operation, "mad_rpc: _do_madrpc failed; dport (DR path slid 0; dlid 0; %s)" % route)
    if operation == "NodeInfo":
        sys.stdout.write(nodeinfo_text(route, neighbour["chassis"], neighbour["port_number"]))
    else:
        sys.stdout.write(nodedesc_text(neighbour["chassis"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
