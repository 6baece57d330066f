# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The full result of an RDMA tool parser (``ibdev2netdev``, ``rdma link``, ``show_gids``, ``ibstatus``,
``ibv_devinfo``, ``ibv_devices``), built one way: the parse never raises and never comes back silently empty."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.text import (
    holds_any,
    note_if_unread,
    parse_or_report,
)


def tool_result(parse, text, tool, empty, catalog, settle=None, warning_entries=False):
    """``parse(text)``, or ``empty`` with a ``parser_error`` when it raises (a bug); ``settle(result)``, when
    given, then adjusts it; when none of ``empty``'s keys holds anything, a warning quoting the text says that
    ``tool``'s output was not recognised (an entry of ``catalog`` with ``warning_entries``, else a string)."""
    result = parse_or_report(parse, text, dict(empty), catalog)
    if settle is not None:
        settle(result)
    return note_if_unread(result, text, tool, holds_any(result, *sorted(empty)), catalog if warning_entries else None)
