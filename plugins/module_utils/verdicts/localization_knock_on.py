# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which ``error`` pair records are knock-on effects of an earlier failure, not evidence (pure).

A host whose partner hung, died or refused is never blamed for what followed in the same pass: it waited for
that partner until its deadline, so its next pairs start late, and their partners give up on it (a server
that listened in vain, a client refused). Those errors say when the host was late, not that a NIC or link is
bad. Retests are never dropped: they run after the pass, on a clean schedule, and judge the pairs again.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

# outcomes of a side that do not depend on when its peer came: its own error, its own host stopping it
OWN_OUTCOMES = ("exited", "stuck")


def late_partner_errors(records):
    """Indexes of the ``error`` records of ``records`` that are knock-on effects (:func:`late_in_pipeline`,
    :func:`after_a_failed_partner`)."""
    return late_in_pipeline(records) | after_a_failed_partner(records)


def late_in_pipeline(records):
    """In the pipelined strategy each host runs its steps one after another without a barrier: a host
    whose side errored at step s (a hung or lost peer kept it waiting until its deadline) starts
    step s+1 late, and its next partner may give up on it. An error at step s of a pair with a host
    that already errored at an earlier step is such a knock-on: it says when that host was late, not
    that either side of this pair is broken. (In the rounds strategy every step is 0: nothing is
    dropped here.)"""
    first_error = {}
    for rec in records:
        step = _first_pass_error_step(rec)
        if step is not None:
            for host in (rec["host"], rec["peer"]):
                first_error[host] = min(first_error.get(host, step), step)
    late = set()
    for index, rec in enumerate(records):
        step = _first_pass_error_step(rec)
        if step is not None and any(first_error.get(host, step) < step for host in (rec["host"], rec["peer"])):
            late.add(index)
    return late


def after_a_failed_partner(records):
    """The later errors (a later round or step of the same pass, any rail) of a host whose partner failed it
    (the pair's ``failed_side`` is the partner: it hung, died or ended with its own error; not a client refused,
    whose server's address may be the fault), where no side ended in an error of its own (``exited``,
    ``stuck``): what such a pair shows (a side waiting, refused or silent) depends on when the late host came."""
    victims = {}
    for rec in records:
        when = _first_pass_error_when(rec)
        failed = (rec.get("params") or {}).get("failed_side")
        if when is None or failed not in (rec["host"], rec["peer"]) or _refused(rec):
            continue
        victim = rec["peer"] if failed == rec["host"] else rec["host"]
        victims[victim] = min(victims.get(victim, when), when)
    late = set()
    for index, rec in enumerate(records):
        when = _first_pass_error_when(rec)
        if when is None or not _timing_only(rec):
            continue
        if any(host in victims and victims[host] < when for host in (rec["host"], rec["peer"])):
            late.add(index)
    return late


def _refused(rec):
    """Whether the failed side is a client refused while its server listened: the address or path may be the
    server's as much (a host no connection reaches), so its server is no victim of it."""
    params = rec.get("params") or {}
    role = "server" if params.get("failed_side") == params.get("server", rec["host"]) else "client"
    return params.get("%s_outcome" % role) == "refused"


def _timing_only(rec):
    """Whether both sides' outcomes are known and neither is an error of the side's own."""
    params = rec.get("params") or {}
    outcomes = (params.get("server_outcome"), params.get("client_outcome"))
    return None not in outcomes and not any(outcome in OWN_OUTCOMES for outcome in outcomes)


def _first_pass_error_step(rec):
    """The step of an ``error`` record of the check's own pass (not a retest), else None."""
    params = rec.get("params") or {}
    step = params.get("step")
    if rec.get("verdict") == "error" and isinstance(step, int) and not params.get("retest"):
        return step
    return None


def _first_pass_error_when(rec):
    """(round, step) of an ``error`` record of the check's own pass (not a retest), else None."""
    params = rec.get("params") or {}
    if rec.get("verdict") != "error" or params.get("retest"):
        return None
    when = (params.get("round"), params.get("step"))
    if not all(isinstance(value, int) and not isinstance(value, bool) for value in when):
        return None
    return when
