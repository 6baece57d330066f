# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The IPv4 address in a GID's text, read one way for the parsers (``ibv_devinfo -v``, ``show_gids``), discovery
(``gid.gid_ipv4``) and the schedule's addresses."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import ipaddress


def mapped_ipv4(gid):
    """The IPv4 address of an IPv4-mapped GID in any IPv6 spelling ('0000:...:ffff:0a6c:a424',
    '::ffff:10.108.164.36', upper case, blanks around), else None (another GID, an interface address with a
    zone such as '%eth0', or no address)."""
    if not gid:
        return None
    try:
        addr = ipaddress.IPv6Address(u"%s" % str(gid).strip().lower())
    except ValueError:
        return None
    if getattr(addr, "scope_id", None) is not None or addr.ipv4_mapped is None:
        return None
    return str(addr.ipv4_mapped)
