# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The CPU governor in the history (pure): the ``governor_unmanaged`` finding of a module result as a finding
record, and the governor state of the hosts of a collective run.

A module that could not switch the governor (``perftest``, ``iperf3``: ``cpu_governor.unmanaged``; the
``cpu_governor`` module the collective role holds with: ``unmanaged``) says so in its result, and the run goes on
at the governors the node has. The history callback turns that into one ``kind: finding`` record per host and
check (:func:`finding_records`), so that the history and its reports show which runs measured at unmanaged
governors.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.clusterops.commcheck.plugins.module_utils.commands.cpu_governor import UNMANAGED
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts.finding_codes import CULPRIT_FINDINGS

# the module (the last part of the task's action) -> the check whose tests ran at the governors it found
CHECK_OF_MODULE = {"perftest": "rdma", "iperf3": "tcp", "cpu_governor": "collective"}
# the governor state of a host of a collective run (``governor_state``)
HELD, UNMANAGED_STATE, NOT_HELD = "held", "unmanaged", "not_held"


def unmanaged_of(result):
    """The ``governor_unmanaged`` finding a module result carries, or None."""
    if not isinstance(result, dict):
        return None
    found = result.get("unmanaged")
    if found is None and isinstance(result.get("cpu_governor"), dict):
        found = result["cpu_governor"].get("unmanaged")
    return found if isinstance(found, dict) and found.get("code") == UNMANAGED else None


def check_of(action):
    """The check of a task's action (``clusterops.commcheck.perftest`` -> ``rdma``); the module's name otherwise."""
    module = str(action or "").rsplit(".", 1)[-1]
    return CHECK_OF_MODULE.get(module, module or "unknown")


def finding_records(result, host, action):
    """[the ``governor_unmanaged`` finding record of ``host`` (the inventory host)] when ``result`` carries one,
    else []. ``params.where`` names the node or ``namespace/pod`` the module saw."""
    found = unmanaged_of(result)
    if found is None:
        return []
    governors = found.get("governors") if isinstance(found.get("governors"), dict) else {}
    why = [str(item) for item in found.get("why") or []]
    return [{"kind": "finding", "host": host, "peer": None,
             "params": {"check": check_of(action), "finding": UNMANAGED, "code": UNMANAGED, "family": "host",
                        "rail": None, "where": found.get("host") or host, "why": why, "governors": governors},
             "metrics": {}, "verdict": "warn",
             "cause": "%s: %s" % (host, found.get("message") or CULPRIT_FINDINGS[UNMANAGED][0]),
             "fix": found.get("fix") or CULPRIT_FINDINGS[UNMANAGED][1],
             "evidence": ["%d CPU(s) at %s" % (count, name) for name, count in sorted(governors.items())]}]


def governor_state(hold_results, hosts, wanted):
    """{host: state} of the hosts of a collective run, from the hold task's result on each (``hold_results``:
    {host: the ``cpu_governor`` result or None}): ``held`` (at ``wanted`` for the run: switched, or already there),
    ``unmanaged`` (the governor could not be switched: ``governor_unmanaged``) or ``not_held`` (no governor
    asked for, or no hold ran on the host)."""
    out = {}
    for host in hosts:
        result = hold_results.get(host)
        if not wanted or not isinstance(result, dict) or result.get("skipped") or result.get("failed"):
            out[host] = NOT_HELD
        elif unmanaged_of(result) is not None or result.get("skipped_reason"):
            out[host] = UNMANAGED_STATE
        else:
            out[host] = HELD
    return out
