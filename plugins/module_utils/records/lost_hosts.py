# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""One finding record per host that left the run, from whether it still answers on its ssh port (pure).

A host reached without ssh (local connection, kubectl pods) was not asked: it left the run ("lost"). One whose
ssh port did not answer in time is unreachable; one that answers left because a task failed on it or its
connection broke.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

TIMEOUT_TEXT = "Timeout when waiting"
CODE_PREFIX = "host_"
# code -> (likely cause, fix); a record's params.finding is its code without "host_"
LOST_HOST_FINDINGS = {
    "host_lost": ("The host left the run (unreachable, or a task failed on it) and is not reached over ssh "
                  "(local connection, a pod): checks after that have no results for it",
                  "Read the play output for this host (unreachable or failed task) and fix its cause"),
    "host_unreachable": ("The host's ssh port does not answer: it was down from the start or stopped answering "
                         "during the run, so checks after that have no results for it",
                         "Make the host reachable (power, network, sshd, inventory address and credentials) and run "
                         "the check again"),
    "host_failed": ("The host answers on ssh but left the run: a task failed on it or its connection broke",
                    "Read the failed task of this host in the play output and fix its cause"),
}


def _finding(host, code, cause, fix, evidence):
    return {"kind": "finding", "host": host, "peer": None,
            "params": {"check": "commcheck", "finding": code[len(CODE_PREFIX):], "code": code},
            "metrics": {}, "verdict": "error", "cause": cause, "fix": fix, "evidence": evidence}


def lost_record(host, address, port, asked, answer):
    """The finding of ``host`` (reached at ``address``:``port``): ``asked`` whether its ssh port was tried,
    ``answer`` the message of that try ('' when it answered)."""
    if not asked:
        return _finding(host, "host_lost",
                        "%s left the run: it was unreachable or a task failed on it, so checks after that have no "
                        "results for it" % host,
                        "read the play output for this host (unreachable or failed task) and fix its cause", [])
    if TIMEOUT_TEXT in (answer or ""):
        return _finding(host, "host_unreachable",
                        "%s is unreachable (ssh to %s:%s does not answer): it was down from the start or stopped "
                        "answering during the run, so checks after that have no results for it" % (host, address, port),
                        "make the host reachable (power, network, sshd, inventory address and credentials) and run "
                        "the check again", [str(answer)])
    return _finding(host, "host_failed",
                    "%s answers on ssh (%s:%s), but it left the run: a task failed on it or its connection broke, so "
                    "checks after that have no results for it" % (host, address, port),
                    "read the failed task of this host in the play output and fix its cause", [])
