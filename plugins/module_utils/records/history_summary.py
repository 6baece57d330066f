# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""How a run ended, for its summary line: the task failure that stopped it, and which hosts are to blame.

A run whose play stopped because a task failed for every host left did not
reach its end: its summary is ``interrupted`` and its ``cause`` names the task
and its message. A task that runs once for the whole run (``run_once``) or on
another machine (``delegate_to``, the controller for the report) fails the run,
not the host it was queued for: that host is not listed as a failed host.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

MESSAGE_LIMIT = 600
TASK_NAME_LIMIT = 120
HOSTS_NAMED = 8


def bounded(text, limit=MESSAGE_LIMIT):
    """One line of at most about ``limit`` characters (a module's message can be a whole tool output): its
    beginning and its end, where a message says why (``...: Read-only file system``)."""
    text = " ".join(str(text if text is not None else "").split())
    if len(text) <= limit:
        return text
    tail = limit // 3
    return "%s ...(%d characters)... %s" % (text[:limit - tail], len(text), text[-tail:])


def task_failure(task, host, message, delegated_to=None, run_once=False, task_id=None):
    """A failed task as the summary keeps it: its name, the host it ran for, where it ran, its message.

    ``task_id`` tells two tasks of one name apart (Ansible's task uuid); it is not kept in the summary.
    """
    delegated = delegated_to if delegated_to and delegated_to != host else None
    return {
        "task": bounded(task or "(unnamed task)", TASK_NAME_LIMIT),
        "task_id": task_id,
        "hosts": [host] if host else [],
        "delegated_to": delegated,
        "run_once": bool(run_once),
        "message": bounded(message or "(no message)"),
    }


def add_failure(last, failure):
    """The run-ending candidate after ``failure``: the same task failing on another host adds that host."""
    if last is not None and (last["task_id"], last["task"]) == (failure["task_id"], failure["task"]):
        hosts = last["hosts"] + [h for h in failure["hosts"] if h not in last["hosts"]]
        return dict(last, hosts=hosts)
    return dict(failure)


def kept_failure(failure):
    """The failure as the summary line keeps it (without the task id)."""
    return dict((key, value) for key, value in failure.items() if key != "task_id")


def blames_host(failure):
    """True when the failure is the host's own: a task that ran for that host, on that host."""
    return not failure["run_once"] and not failure["delegated_to"]


def where(failure):
    hosts = failure["hosts"]
    named = ", ".join(hosts[:HOSTS_NAMED]) + (" and %d more" % (len(hosts) - HOSTS_NAMED)
                                              if len(hosts) > HOSTS_NAMED else "")
    if failure["delegated_to"]:
        return "on %s (for %s)" % (failure["delegated_to"], named or "the run")
    if failure["run_once"]:
        return "run once for the whole run (on %s)" % (named or "one host")
    return "on %s" % (named or "every host")


def failure_cause(failure, records):
    """The summary's cause for a run that a failed task stopped."""
    return ("the run stopped at the failed task '%s' %s: %s; it wrote %d record(s), the tasks after it did not run"
            % (failure["task"], where(failure), failure["message"], records))


def split_hosts(processed, failed, unreachable, own_failures):
    """(ok, failed, unreachable) of the summary: a host Ansible counts as failed is listed failed only when it
    failed a task of its own (``own_failures``); a run-once or delegated task's failure is the run's."""
    failed = sorted(h for h in failed if h in own_failures and h not in unreachable)
    unreachable = sorted(unreachable)
    ok = sorted(h for h in processed if h not in failed and h not in unreachable)
    return ok, failed, unreachable


def stopping_failure(last, went_on, failed_hosts, reported):
    """The failed task that stopped the run, or None when the run went on to its end.

    ``last``: the last failure of the run (add_failure); ``went_on``: True when
    a host went on past that task (it was ok or skipped there); ``failed_hosts``:
    the hosts Ansible counts as failed or unreachable at the end (a failure a
    ``rescue`` handled is not counted); ``reported``: the run's report published
    its summary. A run-once task's failure fails every host, and a task that
    failed for every host that ran it leaves no host to go on: either stops the
    play (only ``always`` sections still run). A failure after the report (the
    run failing as ``commcheck_report_fail_on`` asks) is the verdict of a
    finished run, not an interruption.
    """
    if last is None or reported:
        return None
    if went_on and not last["run_once"]:
        return None
    if not any(host in failed_hosts for host in last["hosts"]):
        return None
    return last
