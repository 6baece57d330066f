# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where several controllers (slices) of one run meet and share their hosts' facts (controller only).

A cluster too large for one controller is split into slices: AWX job slicing,
or several ansible-playbook processes over disjoint parts of the inventory,
all with the same run id. Each slice runs only its own hosts, yet the pair
schedule, the verdicts and the culprits need every host. So at a few fixed
steps of a check (the hosts and their rails before planning, the test
results before judging, the retest results after them) every slice posts
its hosts' facts as one file in a directory all controllers share, and waits
until every slice has posted. Each then holds the same facts of the whole
fleet and computes the same plan and the same verdicts; it runs only its own
sides of each pair and publishes only its share of the records.

Layout: ``<directory>/<run_id>/<step>/<slice>.json``; ``<slice>`` is a digest
of the slice's first host (slices are disjoint, so it is unique and needs no
number from the operator). Files are written whole (temporary file, fsync,
rename), so a reader never sees half a post.

With one slice nothing is written or read: the facts given are the fleet's.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import hashlib
import json
import os
import re
import time

from ansible_collections.clusterops.commcheck.plugins.module_utils.options import option_rules as rules
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.text import natural_key
from ansible_collections.clusterops.commcheck.plugins.module_utils.records.atomic_file import write_atomic
from ansible_collections.clusterops.commcheck.plugins.module_utils.records.history_records import (
    RUN_ID_PATTERN,
    check_history_dir,
)

SCHEMA = 1
STEP_PATTERN = re.compile(r"^[a-z][a-z0-9_-]{0,63}$")
SLICES_MAX = 4096
# the longest a slice waits for the others at one step (a week)
WAIT_MAX = 7 * 24 * 3600
POLL_SECONDS = 0.5


# The arguments of clusterops.commcheck.fleet_facts (its action plugin and its module share them).
FLEET_FACTS_SPEC = dict(
    step=dict(type="str", required=True),
    # exactly one of hosts and hosts_from; the *_from options and a values entry given as text name a variable
    hosts=dict(type="list", elements="str"),
    hosts_from=dict(type="str"),
    unreachable_from=dict(type="str"),
    facts=dict(type="dict", default={}),
    values=dict(type="dict", default={}),
    missing=dict(type="dict", default={}),
    host_field=dict(type="dict", default={}),
    unreachable=dict(type="list", elements="str", default=[]),
    slices=dict(type="int"),
    directory=dict(type="str"),
    run_id=dict(type="str"),
    wait=dict(type="int"),
)


class SliceMeetingError(Exception):
    """A meeting that cannot go on: bad arguments, a late or missing slice, overlapping slices."""


def slice_name(hosts):
    """The file name of a slice: a digest of its first host in natural order (slices are disjoint)."""
    first = min(hosts, key=natural_key)
    return hashlib.sha256(first.encode("utf-8")).hexdigest()[:16]


def meeting_dir(directory, run_id, step):
    """``<directory>/<run_id>/<step>``, after checking that none of the three can leave ``directory``
    (by name or through a symbolic link)."""
    base = check_history_dir(directory, "commcheck_slice_dir")
    if not isinstance(run_id, str) or not RUN_ID_PATTERN.match(run_id):
        raise SliceMeetingError("slices meet under the run id, and %r is not one (letters, digits and _ . : + -, "
                                "no '/', at most 128): give every slice the same commcheck_run_id" % (run_id,))
    if not isinstance(step, str) or not STEP_PATTERN.match(step):
        raise SliceMeetingError("bad meeting step name %r" % (step,))
    try:
        return rules.check_not_linked("commcheck_slice_dir", os.path.join(base, run_id, step), base)
    except rules.OptionError as exc:
        raise SliceMeetingError(str(exc))


def _post(path, payload):
    write_atomic(path, json.dumps(payload, sort_keys=True, separators=(",", ":")))


def _read_posts(folder):
    posts = {}
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".json") or name.startswith("."):
            continue
        with open(os.path.join(folder, name)) as handle:
            try:
                posts[name[:-5]] = json.load(handle)
            except ValueError as exc:
                raise SliceMeetingError("unreadable post %s in %s: %s" % (name, folder, exc))
    return posts


def _merge(posts):
    """(hosts in natural order, {fact: {host: value}}, unreachable hosts); refuses a host in two slices."""
    owner, facts, unreachable = {}, {}, []
    for name in sorted(posts):
        post = posts[name]
        for host in post.get("hosts", []):
            if host in owner:
                raise SliceMeetingError("host %s is in two slices (%s and %s): slices must be disjoint parts "
                                        "of the inventory" % (host, owner[host], name))
            owner[host] = name
        for fact, values in post.get("facts", {}).items():
            facts.setdefault(fact, {}).update(values)
        unreachable.extend(post.get("unreachable", []))
    hosts = sorted(owner, key=natural_key)
    return hosts, facts, sorted(set(unreachable), key=natural_key)


def meet(directory, run_id, step, slices, hosts, facts, unreachable=(), wait=900,
         clock=time.monotonic, sleep=time.sleep):
    """Post this slice's ``facts`` ({fact: {host: value}}) for ``hosts`` and wait for every other slice.

    Returns a dict: ``hosts`` (every slice's hosts, natural order), ``facts``
    ({fact: {host: value}} over all of them), ``unreachable`` (every slice's),
    ``own`` (this slice's hosts), ``leader`` (whether this slice publishes the
    records that belong to no host) and ``slices`` (how many met).
    Raises SliceMeetingError when the other slices do not all post within
    ``wait`` seconds, when more slices post than ``slices``, when this slice
    posted at this step before (a run id used twice) or when two slices share
    a host.
    """
    hosts = list(hosts)
    if not isinstance(slices, int) or isinstance(slices, bool) or not 1 <= slices <= SLICES_MAX:
        raise SliceMeetingError("commcheck_slices must be 1 to %d, got %r" % (SLICES_MAX, slices))
    if slices == 1:
        return {"hosts": hosts, "facts": facts, "unreachable": list(unreachable), "own": hosts, "leader": True,
                "slices": 1}
    if not hosts:
        raise SliceMeetingError("this slice has no reachable host of the check at step %s: the other slices "
                                "would wait for it in vain" % step)
    folder = meeting_dir(directory, run_id, step)
    os.makedirs(folder, mode=0o755, exist_ok=True)
    name = slice_name(hosts)
    path = os.path.join(folder, name + ".json")
    if os.path.exists(path):
        raise SliceMeetingError("this slice already met at step %s of run %s (%s exists): a run id must be new "
                                "for each run" % (step, run_id, path))
    _post(path, {"schema": SCHEMA, "run_id": run_id, "step": step, "slice": name, "slices": slices,
                 "hosts": hosts, "facts": facts, "unreachable": list(unreachable)})
    deadline = clock() + wait
    while True:
        posts = _read_posts(folder)
        if len(posts) > slices:
            raise SliceMeetingError("%d slices met at step %s of run %s, %d expected: two runs share the run id, or "
                                    "commcheck_slices is not the number of slices" % (len(posts), step, run_id, slices))
        if len(posts) == slices:
            break
        if clock() >= deadline:
            raise SliceMeetingError("only %d of %d slices reached step %s of run %s within %d s (in %s): start every "
                                    "slice at once (AWX: capacity for all slices) or raise commcheck_slice_wait"
                                    % (len(posts), slices, step, run_id, wait, folder))
        sleep(POLL_SECONDS)
    all_hosts, merged, all_unreachable = _merge(posts)
    return {"hosts": all_hosts, "facts": merged, "unreachable": all_unreachable, "own": hosts,
            "leader": name == min(posts), "slices": len(posts)}


def my_share(records, own_hosts, fleet_hosts, leader):
    """The records this slice publishes: those of its own hosts, and (the leader only) those of no fleet host."""
    own, fleet = set(own_hosts), set(fleet_hosts)
    return [rec for rec in records
            if rec.get("host") in own or (leader and rec.get("host") not in fleet)]
