# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which way the data of a record flows: the report's one convention for 'a->b' and heat-map cells.

A pair record (``rdma_bw``, ``rdma_lat``, ``tcp_bw``, their ``_retest``
kinds and their regressions) is the client's measurement filed under the
server: ``host`` is the server and ``peer`` the client (``params.server``
and ``params.client`` say it too). Who sends the measured data depends on
the op:

- ``write``, ``send``, ``atomic`` and iperf3 (``tcp``): the client sends to
  the server;
- ``read``: the client reads the server's memory, so the data flows from
  the server to the client; iperf3 ``reverse``: the server sends;
- ``bidirectional``, and the ping-pong latency tests (``write``, ``send``
  with ``metric=lat``): both ways.

``a->b`` always means "a sends to b"; ``a<->b`` means both ways, or a link
whose direction the record does not say (findings, kinds not listed above).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

PAIR_KINDS = ("rdma_bw", "rdma_lat", "tcp_bw")
CLIENT, SERVER, BOTH = "client", "server", "both"
_SENDER_BY_OP = {"write": CLIENT, "send": CLIENT, "atomic": CLIENT, "read": SERVER, "tcp": CLIENT}
_PING_PONG_LAT = ("write", "send")
_FLIP = {CLIENT: SERVER, SERVER: CLIENT}
ROLE_TEXT = {CLIENT: "client -> server", SERVER: "server -> client", BOTH: "both ways", None: "direction unknown"}


def measured_kind(record):
    """The pair kind a record measures: ``rdma_bw_retest`` -> ``rdma_bw``; a regression's ``params.check_kind``."""
    kind = str(record.get("kind") or "")
    if kind == "regression":
        kind = str((record.get("params") or {}).get("check_kind") or "")
    return kind[:-len("_retest")] if kind.endswith("_retest") else kind


def server_and_client(record):
    """(server, client) of a pair record, or None when the record is not one."""
    host, peer = record.get("host"), record.get("peer")
    if not peer or measured_kind(record) not in PAIR_KINDS:
        return None
    params = record.get("params") or {}
    if params.get("server") == peer and params.get("client") == host:
        return peer, host
    return host, peer


def sending_role(record):
    """CLIENT, SERVER or BOTH: which side of a pair record sends the measured data; None when the op is unknown."""
    params = record.get("params") or {}
    kind = measured_kind(record)
    op = params.get("op") or params.get("test") or ("tcp" if kind == "tcp_bw" else None)
    metric = params.get("metric") or ("lat" if kind.endswith("_lat") else "bw")
    if params.get("bidirectional") or (metric == "lat" and op in _PING_PONG_LAT):
        return BOTH
    role = _SENDER_BY_OP.get(op)
    return _FLIP[role] if role and params.get("reverse") else role


def flow(record):
    """{sender, receiver, role}: who sends to whom (role BOTH: both ways, listed client first).

    A record with a peer but no known direction (a finding, another kind)
    comes back as BOTH with ``role`` None; a record without a peer as None.
    """
    host, peer = record.get("host"), record.get("peer")
    if not peer:
        return None
    pair = server_and_client(record)
    role = sending_role(record) if pair else None
    if role is None:
        return {"sender": host, "receiver": peer, "role": None, "both": True}
    server, client = pair
    if role == SERVER:
        return {"sender": server, "receiver": client, "role": role, "both": False}
    return {"sender": client, "receiver": server, "role": role, "both": role == BOTH}


def flow_label(record):
    """'a->b' (a sends to b), 'a<->b' (both ways or not known) or the host alone."""
    data = flow(record)
    if data is None:
        return str(record.get("host"))
    return "%s%s%s" % (data["sender"], "<->" if data["both"] else "->", data["receiver"])


def flow_cells(record):
    """The heat-map cells (sender, receiver) a record fills: one, or both of a pair when data flows both ways."""
    data = flow(record)
    if data is None:
        return []
    cell = (data["sender"], data["receiver"])
    return [cell, (cell[1], cell[0])] if data["both"] else [cell]


def flow_text(record):
    """'client -> server', 'server -> client', 'both ways' or 'direction unknown'."""
    data = flow(record)
    return ROLE_TEXT[data["role"] if data else None]
