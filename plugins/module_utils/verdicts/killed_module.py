# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A test module killed on its host (signal 9, the OOM killer): said so, never read as a NIC or PCIe fault (pure).

A module killed before it returned leaves its host's sides of every pair without a result, and its peers'
sides in errors of their own (nobody listened, the exchange broke). Those pairs say nothing about the NICs or
links: :func:`mark_records` rewrites them to name the killed module, :func:`involves` keeps them out of the
culprits and the localization, and :func:`findings` publishes one ``module_killed`` finding per host.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts.finding_codes import CULPRIT_FINDINGS

# The exit status of a module process killed by a signal: the shell's 128 + 9, or Python's -9.
KILLED_RCS = (137, -9)


def killed_hosts(module_rcs):
    """The hosts whose test module ended killed by signal 9, from {host: the module task's rc (or None)}."""
    return sorted(host for host, rc in (module_rcs or {}).items() if _int(rc) in KILLED_RCS)


def _int(value):
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def cause(host):
    return ("%s: its module was killed (signal 9, e.g. the OOM killer) before it returned, so this pair has no "
            "result from it" % host)


def involves(record, killed):
    """The killed host of a pair record, or None."""
    for host in (record.get("host"), record.get("peer")):
        if host in killed:
            return host
    return None


def mark_records(records, killed):
    """Pair records (not ``pass`` or ``skipped``) with a killed host become ``error`` records that say so, with
    ``params.module_killed``. Changes ``records`` in place and returns it."""
    for rec in records:
        host = involves(rec, killed) if rec.get("verdict") in ("error", "fail", "warn") else None
        if host:
            rec.update(verdict="error", cause=cause(host), fix=CULPRIT_FINDINGS["module_killed"][1])
            rec.setdefault("params", {}).update(module_killed=host, failed_side=host, failed_how="killed")
    return records


def findings(killed, check, family):
    """One ``module_killed`` finding per host."""
    return [{"kind": "finding", "host": host, "peer": None,
             "params": {"check": check, "finding": "module_killed", "code": "module_killed", "family": family,
                        "rail": None},
             "metrics": {}, "verdict": "error",
             "cause": "%s's test module was killed (signal 9, e.g. the OOM killer) before it returned; its pairs "
                      "have no result, which says nothing about its NICs or links" % host,
             "fix": CULPRIT_FINDINGS["module_killed"][1], "evidence": []} for host in killed]
