# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""How each side of a pair test ended, and which side (if any) an ``error`` pair blames (pure).

A pair test errors when one side hung, died or never met its peer; both
sides then usually end in an error, so the side to blame is read from how
each one ended (:func:`side_outcome`), never from its role or its place in
the schedule:

- ``ok``: the side has no error of its own;
- ``missing``: no result at all (host unreachable, task failed);
- ``exited``: the process ended before its deadline with an error of its
  own (no device, bad option, crash);
- ``refused``: a client that never got connected (every attempt refused or
  failed to connect);
- ``silent``: killed at its deadline without a word, not even the listen
  banner a live perftest server prints first thing: the process never ran
  (stopped, hung at start). Only for tools that speak before their peer
  comes (perftest); an iperf3 server (``-J``) is silent until the end;
- ``waiting``: a server killed at its deadline after its listen banner (or
  a server of a tool without one), with no client ever reaching it;
- ``stalled``: killed at its deadline after it had spoken (connected, or
  mid-test);
- ``stuck``: found stopped or in uninterruptible sleep (``runner``'s
  ``stuck``) when its deadline came: it was not waiting for its peer, it
  hung on its own host. Outranks what it printed.

:func:`failed_side` turns the two outcomes into the side to blame, and
whether it ``hung`` (the host's process never answered: the host) or ended
in an ``error`` of its own (that side's rail).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os

from ansible_collections.clusterops.commcheck.plugins.module_utils.commands.side_runner import spoke as _printed

OK, MISSING, EXITED, REFUSED, SILENT, WAITING, STALLED, STUCK = (
    "ok", "missing", "exited", "refused", "silent", "waiting", "stalled", "stuck")

NO_SIDE_FIX = ("both sides waited for each other: check the path between the two hosts on that rail (cable, "
               "switch ports, filters) and rerun the pair; a host that hangs again with other peers is the culprit")
STUCK_FIX = ("look at that host: a stopped process (a debugger, a job control stop) or one wedged in the kernel "
             "(dmesg for driver or firmware errors, the adapter's health), then rerun the pair")
_SAYS = {
    MISSING: "no result",
    EXITED: "ended with its own error",
    REFUSED: "never got connected",
    SILENT: "timed out without a word (not even its listen banner)",
    WAITING: "listened until its deadline and no client reached it",
    STALLED: "timed out after it had connected",
    STUCK: "was stopped or stuck in the kernel when its deadline came",
}


def _codes(side):
    return [e.get("code") for e in side.get("errors") or [] if isinstance(e, dict)]


def _speaks_first(side):
    """True for the tools whose every side prints before its peer comes (perftest, ``ib_*``: the server its
    listen banner); not iperf3 with ``-J``, silent until it ends."""
    cmd = side.get("cmd") or []
    return bool(cmd) and os.path.basename(str(cmd[0])).startswith("ib_")


def _spoke(side):
    """True when the side printed anything beyond start-up warnings (its ``spoke``, kept by the module because
    the roles drop the output text; else read from the text); True too when that is not known or its tool
    says nothing before its peer comes."""
    if not _speaks_first(side):
        return True
    if "spoke" in side:
        return bool(side["spoke"])
    if "stdout" not in side and "stderr" not in side:
        return True
    return _printed(side.get("stdout"), side.get("stderr"))


def side_outcome(side):
    """One of ``ok``, ``missing``, ``exited``, ``refused``, ``silent``, ``waiting``, ``stalled`` (see module doc)."""
    if side is None:
        return MISSING
    if side.get("verdict") != "error":
        return OK
    codes = _codes(side)
    client = side.get("role") == "client"
    if client and "connect_failed" in codes:
        return REFUSED
    waited = side.get("timed_out") or "server_no_client" in codes
    if not waited:
        return EXITED
    if side.get("timed_out") and side.get("stuck"):
        return STUCK
    if side.get("timed_out") and not _spoke(side):
        return SILENT
    if "server_no_client" in codes:
        return WAITING
    return STALLED


def failed_side(server, client):
    """(``server`` | ``client`` | None, ``hung`` | ``error`` | None) from the two sides' outcomes.

    - one side fine (or missing) and the other not: the other (missing: the missing one);
    - one side ``stuck`` (stopped or wedged in the kernel at its deadline): that side;
    - a server silent at its deadline: it never ran, so the server (its client waiting, refused, or exited
      because the exchange broke is what a live client does);
    - else one side ended with its own error: that side;
    - a server that saw its client connect, and a client silent ever after: the client;
    - a server that listened until its deadline and a client refused all along: the client reached somewhere
      else (its address, port or path; ``error``);
    - anything else (a server waiting and a client silent: a server hung after its banner and a client hung
      before it connected look alike; both stalled mid-test; both exited): no side, the path between them or
      either host.
    """
    pair = (("server", server), ("client", client))
    missing = [role for role, out in pair if out == MISSING]
    if missing:
        return (missing[0], "error") if len(missing) == 1 else (None, None)
    bad = [(role, out) for role, out in pair if out != OK]
    if len(bad) == 1:
        return bad[0][0], _how(bad[0][1])
    stuck = [role for role, out in pair if out == STUCK]
    if stuck:
        # a process its own host stopped or wedged; its peer waiting for it is what a live peer does
        return (stuck[0], "hung") if len(stuck) == 1 else (None, None)
    if server == SILENT:
        # a live server prints its banner at once, whatever its client does: a client that then exits
        # (the exchange broke, nobody answered) only reports the silent server
        return "server", "hung"
    exited = [role for role, out in pair if out == EXITED]
    if exited:
        return (exited[0], "error") if len(exited) == 1 else (None, None)
    if server == STALLED and client == SILENT:
        return "client", "hung"
    if server == WAITING and client == REFUSED:
        return "client", "error"
    return None, None


def _how(outcome):
    return "error" if outcome in (EXITED, MISSING, REFUSED) else "hung"


def says(role, host, outcome):
    """'server on h1 timed out without a word (...)': one side's outcome in words."""
    return "%s on %s %s" % (role, host, _SAYS.get(outcome, outcome))


def outcome_params(sides):
    """The record params of an ``error`` pair: ``server_outcome``, ``client_outcome``, ``failed_side`` (the host
    that failed to answer, or None) and ``failed_how`` (``hung`` | ``error`` | None).

    ``sides``: ((server host, server side or None), (client host, client side or None)).
    """
    (server, server_side), (client, client_side) = sides
    outcomes = (side_outcome(server_side), side_outcome(client_side))
    role, how = failed_side(*outcomes)
    return {"server_outcome": outcomes[0], "client_outcome": outcomes[1],
            "failed_side": {"server": server, "client": client}.get(role), "failed_how": how}


def error_cause(sides):
    """(cause, fix) of an ``error`` pair whose sides both ran: ``<role> side on <host>: <its cause>`` for the side
    :func:`failed_side` blames; else a cause that names no side (the link, or either host)."""
    (server, server_side), (client, client_side) = sides
    outcomes = (side_outcome(server_side), side_outcome(client_side))
    role, _how = failed_side(*outcomes)
    if role:
        host, root = (server, server_side) if role == "server" else (client, client_side)
        host = root.get("host") or host
        if outcomes[0 if role == "server" else 1] == STUCK:
            return ("%s side on %s: its process was %s when its deadline came (its peer only waited for it)"
                    % (role, host, root.get("stuck")), STUCK_FIX)
        return "%s side on %s: %s" % (role, host, root.get("cause")), root.get("fix")
    first = server_side if server_side.get("verdict") == "error" else client_side
    return "neither side can be singled out (%s; %s): %s" % (
        says("server", server, outcomes[0]), says("client", client, outcomes[1]), first.get("cause")), NO_SIDE_FIX
