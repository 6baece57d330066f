# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one side runner of the pair tools (perftest, iperf3), and the result of a host's sides.

``run_sides(transport, jobs)`` runs the sides of one host at once, step by
step: servers start first, clients right after and retry (short backoff)
while the error says the server is not listening yet, every process under
its own deadline; nothing outlives the call. ``side_result`` and
``sides_outcome`` shape what a module returns.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import re
import time

from ansible_collections.clusterops.commcheck.plugins.module_utils.commands.runner import controller_gone
from ansible_collections.clusterops.commcheck.plugins.module_utils.options.option_rules import withhold_secret_paths

_CONNECT_RE = re.compile(r"Couldn't connect to|Unable to init the socket connection|"
                         r"Failed to connect|Connection refused|unable to connect", re.I)


def is_connect_failure(result, parsed=None):
    """True when a client attempt failed only because nothing listened yet (a job's default ``retryable``).

    ``parsed``: the tool's parsed output, when its parser names a ``connect_failed`` error.
    """
    if result.get("rc") == 0:
        return False
    codes = [e.get("code") for e in (parsed or {}).get("errors") or []]
    if "connect_failed" in codes:
        return True
    text = (result.get("stdout") or "") + "\n" + (result.get("stderr") or "")
    return bool(_CONNECT_RE.search(text)) and not (parsed or {}).get("rows")


BACKOFF_S = (0.05, 0.1, 0.2, 0.3, 0.5)
POLL_S = 0.05


def run_sides(transport, jobs, clock=time.monotonic, sleep=time.sleep, abandoned=controller_gone):
    """Run every job (one side each) of one host; return their results in order.

    A job: ``argv``, ``role`` (server | client), ``timeout`` (seconds, the
    side's whole budget including retries), ``connect_retries`` (max extra
    attempts of a client, None = as many as the deadline allows), ``step``
    (jobs of one step run at the same time, steps one after the other),
    ``retryable(result) -> bool`` (whether a finished client attempt only
    failed to connect). A result: the transport's dict plus ``attempts``,
    ``connect_failed`` and ``started`` / ``ended`` (epoch seconds of the
    side's step). Every process is stopped before this returns.

    When ``abandoned()`` turns true (nobody waits for the module any more:
    ansible-playbook was interrupted) the running sides are stopped and the
    steps not started yet are not run; their results say so.
    """
    results = [None] * len(jobs)
    steps = sorted(set(int(j.get("step") or 0) for j in jobs))
    for step in steps:
        if abandoned():
            break
        idxs = [i for i, j in enumerate(jobs) if int(j.get("step") or 0) == step]
        _run_step(transport, jobs, idxs, results, clock, sleep, abandoned)
    for i, res in enumerate(results):
        if res is None:
            results[i] = {"cmd": list(jobs[i]["argv"]), "rc": None, "stdout": "", "timed_out": False,
                          "stderr": "not run: the controller went away (ansible-playbook was interrupted)",
                          "duration_s": 0.0, "attempts": 0, "connect_failed": False, "abandoned": True}
    return results


VERDICT_RANK = {"pass": 0, "skipped": 0, "fail": 1, "error": 2}
# what a module with one side (role given, not sides) also returns at its top level
SINGLE_SIDE_KEYS = ("cmd", "rc", "stdout", "stderr", "timed_out", "attempts", "metrics", "errors")
# lines a side prints before it talks to anyone (they say nothing about its peer)
STARTUP_LINES = ("WARNING: BW peak won't be measured",)


def spoke(stdout, stderr):
    """True when a side printed anything beyond start-up warnings (a perftest server: its listen banner).

    Kept in every side result as ``spoke``, because the roles drop the output text itself from the
    results they gather (``side_outcome`` reads whether a timed-out side had spoken).
    """
    text = "%s\n%s" % (stdout or "", stderr or "")
    return any(not line.startswith(STARTUP_LINES) for line in (ln.strip() for ln in text.splitlines()) if line)


def side_result(info, argv, result, **outcome):
    """One side as a module returns it: its parameters (``info``), what ran and how it ended (a
    ``run_sides`` result), then ``outcome`` (the parsed output, metrics, verdict, cause, fix...)."""
    item = dict(info)
    # a credential file an argv names (iperf3's --rsa-private-key-path, kubectl's --kubeconfig) is not shown
    item.update(cmd=withhold_secret_paths(argv), exec_cmd=withhold_secret_paths(result.get("cmd") or argv),
                rc=result.get("rc"),
                stdout=result.get("stdout", ""), stderr=result.get("stderr", ""),
                timed_out=bool(result.get("timed_out")), duration_s=result.get("duration_s"),
                started=result.get("started"), ended=result.get("ended"), attempts=result.get("attempts", 0),
                spoke=spoke(result.get("stdout"), result.get("stderr")))
    if result.get("stuck"):
        item["stuck"] = result["stuck"]
    item.update(outcome)
    return item


def sides_outcome(results, single, parsed_key):
    """(module result, first error side or None) of a host's sides: the worst verdict with its cause
    and fix; with ``single`` the one side's run keys and ``parsed_key`` at the top level too."""
    worst = max(results, key=lambda r: VERDICT_RANK.get(r["verdict"], 0))
    out = dict(changed=False, sides=results, verdict=worst["verdict"], cause=worst.get("cause"),
               fix=worst.get("fix"))
    if single:
        for key in SINGLE_SIDE_KEYS + (parsed_key,):
            if key in results[0]:
                out[key] = results[0][key]
    errors = [r for r in results if r["verdict"] == "error"]
    return out, (errors[0] if errors else None)


class _Slot(object):
    def __init__(self, job, now):
        self.job = job
        self.deadline = now + float(job["timeout"])
        self.attempts = 0
        self.bg = None
        self.next_start = now
        self.done = None
        self.connect_failed = False
        self.last = None
        self.started = time.time()


def _run_step(transport, jobs, idxs, results, clock, sleep, abandoned):
    now = clock()
    # servers first, so a local client of a loopback pair finds its server
    order = sorted(idxs, key=lambda i: 0 if jobs[i].get("role") == "server" else 1)
    slots = dict((i, _Slot(jobs[i], now)) for i in order)
    gone = False
    try:
        gone = _drive(transport, [slots[i] for i in order], clock, sleep, abandoned)
    finally:
        _stop_running(slots.values(), gone)
    for i in idxs:
        results[i] = slots[i].done


def _drive(transport, slots, clock, sleep, abandoned):
    """Start, poll and retry the slots until every one is done; True when the controller went away."""
    while _pending(slots):
        now = clock()
        for slot in slots:
            _advance(transport, slot, now, clock)
        if _pending(slots):
            if abandoned():
                return True
            sleep(POLL_S)
    return False


def _pending(slots):
    return any(s.done is None for s in slots)


def _advance(transport, slot, now, clock):
    """One look at a slot: start it when due, or take its ended attempt (retried, or its result)."""
    if slot.done is not None:
        return
    if slot.bg is None:
        if now >= slot.next_start:
            _start(transport, slot, now)
        return
    if slot.bg.poll() is None:
        return
    res = slot.bg.result()
    slot.bg = None
    if _refused_client(slot, res):
        if _retry_later(slot, res, clock):
            return
    else:
        slot.connect_failed = slot.connect_failed and bool(res.get("timed_out"))
    slot.done = _finish(res, slot)


def _refused_client(slot, res):
    """A client attempt that ended (not at its deadline) only because nothing listened yet."""
    return (slot.job.get("role") == "client" and not res.get("timed_out")
            and slot.job.get("retryable", is_connect_failure)(res))


def _retry_later(slot, res, clock):
    """Schedule the next attempt after a backoff; False (and timed out when no time is left) when none."""
    slot.connect_failed = True
    retries = slot.job.get("connect_retries")
    left = slot.deadline - clock()
    backoff = BACKOFF_S[min(slot.attempts - 1, len(BACKOFF_S) - 1)]
    if (retries is None or slot.attempts <= retries) and left > backoff + 0.5:
        slot.next_start = clock() + backoff
        slot.last = res
        return True
    if left <= backoff + 0.5:
        res["timed_out"] = True
    return False


def _stop_running(slots, gone):
    """Stop what still runs (at its deadline, or because the controller went away) and keep its result."""
    for slot in slots:
        if slot.bg is not None:
            res = slot.bg.result()
            res["timed_out"] = True
            if gone:
                res["abandoned"] = True
                res["stderr"] = (res.get("stderr") or "") + "\nstopped: the controller went away"
            slot.done = slot.done or _finish(res, slot)
            slot.bg = None


def _start(transport, slot, now):
    left = slot.deadline - now
    if left <= 0.2:
        res = slot.last or {
            "cmd": list(slot.job["argv"]), "rc": None, "stdout": "", "stderr": "",
            "timed_out": True, "duration_s": 0.0}
        res["timed_out"] = True
        slot.done = _finish(res, slot)
        return
    slot.attempts += 1
    try:
        slot.bg = transport.start(slot.job["argv"], left, env=slot.job.get("env"))
    except Exception as exc:  # the runner's CommandError: binary missing or not startable
        # start_error: what the kernel said (not installed, not executable, not a program for this machine,
        # or the kubectl of the transport that could not start): the verdict tells that, not "not installed"
        slot.done = _finish({"cmd": list(slot.job["argv"]), "rc": None, "stdout": "",
                             "stderr": str(exc), "timed_out": False, "duration_s": 0.0,
                             "tool_missing": True, "start_error": str(exc)}, slot)


def _finish(res, slot):
    res = dict(res)
    res["attempts"] = slot.attempts
    res["connect_failed"] = bool(slot.connect_failed)
    res["started"] = round(slot.started, 3)
    res["ended"] = round(time.time(), 3)
    return res
