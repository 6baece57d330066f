# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the one-click check decides for each check's role, as that role's variables.

The one-click role (``roles/commcheck``) runs the tasks of the check roles (``rdma_perf``, ``collective``,
``tcp_perf``) with its own decisions: the hosts each check runs on (still in the play), its pattern, operations
and metrics, and every host's rails or mpirun entry. The ``runs`` step of ``check_plan`` returns them under
``role_vars``; the controller steps of those roles (``pair_check``, ``collective_plan``) read them in place of the
role's own variables when they run inside the one-click role (``ROLE``), and nowhere else.

What the user set wins: the one-click check only fills the options of a check's role (``USER_OPTIONS``) that the
user left unset. A pattern, operations or metrics the user gave are passed as given; hosts the user gave are kept
in the user's order, less those the decision left out (their tools are missing: a ``skipped`` record says so) or
that left the play. The rest (``NOTES``) is what the one-click check noted for the role's controller steps, never
an option of the role.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from collections.abc import Mapping

from ansible_collections.clusterops.commcheck.plugins.module_utils.planning.check_plan import as_list

ROLE = "clusterops.commcheck.commcheck"
# the registered result of check_plan's step runs, per check
RUNS_VAR = "commcheck_oneclick_runs_%s"
# the role of each check, and its options the one-click check fills when the user left them unset: how a value the
# user gave is taken (hosts: narrowed to the decision's; list: as a list; value: as it is; library: the plan's, which
# took the user's and the decision resolves when it is auto)
CHECK_ROLES = {"rdma": "rdma_perf", "collective": "collective", "tcp": "tcp_perf"}
USER_OPTIONS = {
    "rdma": {"commcheck_rdma_hosts": "hosts", "commcheck_rdma_pattern": "value", "commcheck_rdma_ops": "list",
             "commcheck_rdma_metrics": "list"},
    "collective": {"commcheck_collective_hosts": "hosts", "commcheck_collective_ops": "list",
                   "commcheck_collective_library": "library"},
    "tcp": {"commcheck_tcp_hosts": "hosts", "commcheck_tcp_pattern": "value"},
}
# what the one-click check notes for the controller steps of a check's role (no option of the role)
NOTES = {
    "rdma": ("commcheck_pair_perf_counters_from_discovery", "commcheck_pair_perf_rails_by_host"),
    "collective": ("commcheck_collective_entry_by_host",),
    "tcp": ("commcheck_pair_perf_rails_by_host",),
}


def _hosts_option(check):
    return next(name for name, how in USER_OPTIONS[check].items() if how == "hosts")


def narrowed(decision, check, given):
    """``decision`` with the hosts of ``check`` narrowed to the hosts the user gave (``given``: the options of its role
    the user set), in the user's order, when the user gave any."""
    decision = dict(decision or {})
    chosen = as_list(given.get(_hosts_option(check)))
    if chosen:
        left, kept = set(decision.get(check + "_hosts") or []), []
        for host in chosen:
            if host in left:
                left.discard(host)
                kept.append(host)
        decision[check + "_hosts"] = kept
    return decision


def role_vars(check, plan, decision, fleet, pattern, play_hosts, given=None):
    """The variables of the role of ``check`` (rdma, collective, tcp), from the run's ``plan``, ``decision`` and
    ``fleet`` (step hosts: every host's rails, TCP rail and mpirun entry); the hosts kept are those in the play.
    ``given``: the options of the check's role the user set ({name: value}), which win."""
    if check not in USER_OPTIONS:
        raise ValueError("no role variables for check %r (rdma, collective or tcp)" % (check,))
    given = given or {}
    values = _decided(check, plan, narrowed(decision, check, given), fleet or {}, pattern, play_hosts)
    for name, how in USER_OPTIONS[check].items():
        # the hosts were narrowed above; the library is the plan's (the user's, else the probe's choice)
        if name in given and how in ("value", "list"):
            values[name] = as_list(given[name]) if how == "list" else given[name]
    return values


def _decided(check, plan, decision, fleet, pattern, play_hosts):

    def in_play(key):
        return [host for host in decision.get(key) or [] if host in play_hosts]

    if check == "rdma":
        return {"commcheck_rdma_hosts": in_play("rdma_hosts"), "commcheck_rdma_pattern": pattern,
                "commcheck_rdma_ops": plan.get("rdma_ops"), "commcheck_rdma_metrics": plan.get("rdma_metrics"),
                # discovery (this run) has read the counters the tests are compared against
                "commcheck_pair_perf_counters_from_discovery": bool(plan.get("need_facts")),
                "commcheck_pair_perf_rails_by_host": fleet.get("rails") or {}}
    if check == "collective":
        return {"commcheck_collective_library": decision.get("library"),
                "commcheck_collective_hosts": in_play("collective_hosts"),
                "commcheck_collective_ops": plan.get("collective_ops"),
                "commcheck_collective_entry_by_host": fleet.get("entries") or {}}
    return {"commcheck_tcp_hosts": in_play("tcp_hosts"), "commcheck_tcp_pattern": pattern,
            "commcheck_pair_perf_rails_by_host": fleet.get("tcp_rails") or {}}


def decided(task_vars, check, template):
    """The one-click role's variables for the role of ``check``, as its step runs registered them; {} when this
    task does not run inside the one-click role (a check role run on its own keeps its own variables).
    ``template(value)`` templates a variable's value."""
    if ROLE not in (task_vars.get("ansible_parent_role_names") or []):
        return {}
    runs = task_vars.get(RUNS_VAR % check)
    if runs is None:
        return {}
    runs = template(runs)
    values = runs.get("role_vars") if isinstance(runs, Mapping) else None
    return dict(values) if isinstance(values, Mapping) else {}
