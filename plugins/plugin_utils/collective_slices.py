# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The collective check in a run split over several controllers (slices), and the CPU governor of its hosts (pure).

One ``mpirun`` does not need one controller: its launcher reaches the other hosts itself. So after the slices
meet (``collective-hosts``: each slice's hosts of the check, how mpirun reaches each, their RDMA facts) every
slice plans the same runs over every host of every slice, and only the first slice (the meeting's leader)
launches them, bisection and retests included. Every slice holds the CPU governor of its own hosts around the
runs: the slices meet again once all hold it (``collective-held``), and once the first slice's runs ended
(``collective-results``: its results, each host's governor hold); the others wait there for its results and
build the same records from them. Each slice publishes its share of the records (``slice_meeting.my_share``).

With one slice the meetings hand back what was given: the one controller launches its runs as before.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.clusterops.commcheck.plugins.module_utils.records import governor_records
from ansible_collections.clusterops.commcheck.plugins.module_utils.records.slice_meeting import WAIT_MAX

# what the launching slice shares of its runs (``launched``): the registered loops and the retest plan
LAUNCHED_KEYS = ("group_results", "retest_plan", "retest_results")


class Fleet(object):
    """The registered ``collective-hosts`` meeting (``fleet_facts``): every slice's hosts of the check, their
    entries and RDMA facts, this slice's own hosts, and whether this slice is the first (it launches)."""

    def __init__(self, met):
        met = met or {}
        facts = met.get("facts") or {}
        self.hosts = list(met.get("hosts") or [])
        self.own = list(met.get("own") or [])
        self.unreachable = list(met.get("unreachable") or [])
        self.launches = bool(met.get("leader", True))
        self.slices = int(met.get("slices") or 1)
        self.entries = facts.get("entry") or {}
        self.rdma = facts.get("rdma") or {}

    def entry_of(self, host):
        """The entry mpirun reaches ``host`` by (its slice noted it), named after the host unless it names it."""
        found = self.entries.get(host)
        if not found:
            raise ValueError("host %s of the collective check has no entry in the slices' meeting "
                             "(collective-hosts)" % host)
        return dict({"name": host}, **found)


def launched_by_this_slice(runs, node_runs, fleet):
    """(runs, node_runs) this slice starts: the pool or pair runs only in the first slice (over every slice's
    hosts); per-node runs on this slice's own hosts."""
    own = set(fleet.own)
    return (list(runs) if fleet.launches else [],
            dict((host, host_runs) for host, host_runs in (node_runs or {}).items() if host in own))


def results_wait(runs, slice_wait, retest_repeats):
    """How long a slice waits for the first slice's results (``collective-results``): its own wait at a meeting,
    plus every planned run's bound, once for the first pass and once for each as-is retest; at most a week."""
    total = int(slice_wait) + sum(int(run.get("timeout") or 0) for run in runs) * (1 + max(0, int(retest_repeats)))
    return max(1, min(WAIT_MAX, total))


def share_values(fleet, group_results, retest_plan, retest_results):
    """``values`` of this slice's post at ``collective-results``: the first slice posts its runs' results under
    its first own host (``launched``); the others post none."""
    if not fleet.launches or not fleet.own:
        return {}
    launched = dict(zip(LAUNCHED_KEYS, (group_results or {}, retest_plan or {}, retest_results or {})))
    return {"launched": {fleet.own[0]: launched}}


def launched_results(met_results, own_group, own_retest_plan, own_retest_results):
    """(group results, retest plan, retest results) to build the records from: what the first slice posted at
    ``collective-results``, else this slice's own (per-node mode launches nothing over the slices)."""
    posted = [value for _host, value in sorted(((met_results or {}).get("facts") or {}).get("launched", {}).items())
              if isinstance(value, dict)]
    if len(posted) > 1:
        raise ValueError("%d slices posted the collective runs' results: only the first slice launches them"
                         % len(posted))
    if posted:
        return tuple(posted[0].get(key) or {} for key in LAUNCHED_KEYS)
    return own_group or {}, own_retest_plan or {}, own_retest_results or {}


def with_governor_state(records, hold_results, wanted):
    """Each record of a run (``params.hosts``) with ``params.cpu_governor``: the governor asked for and the run's
    hosts by governor state (``held``, ``unmanaged``, ``not_held``: ``governor_records.governor_state``)."""
    out = []
    for rec in records:
        hosts = (rec.get("params") or {}).get("hosts")
        if not isinstance(hosts, list) or not hosts:
            out.append(rec)
            continue
        states = governor_records.governor_state(hold_results or {}, hosts, wanted)
        by_state = dict((state, [host for host in hosts if states[host] == state]) for state in (
            governor_records.HELD, governor_records.UNMANAGED_STATE, governor_records.NOT_HELD))
        out.append(dict(rec, params=dict(rec["params"], cpu_governor=dict(by_state, governor=wanted or None))))
    return out
