# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the one-click check decides for each check's role, as that role's variables.

The one-click role (``roles/commcheck``) runs the tasks of the check roles (``rdma_perf``, ``collective``,
``tcp_perf``) with its own decisions: the hosts each check runs on (still in the play), its pattern, operations
and metrics, and every host's rails or mpirun entry. The ``runs`` step of ``check_plan`` returns them under
``role_vars``; the controller steps of those roles (``pair_check``, ``collective_plan``) read them in place of the
role's own variables when they run inside the one-click role (``ROLE``), and nowhere else.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from collections.abc import Mapping

ROLE = "clusterops.commcheck.commcheck"
# the registered result of check_plan's step runs, per check
RUNS_VAR = "commcheck_oneclick_runs_%s"


def role_vars(check, plan, decision, fleet, pattern, play_hosts):
    """The variables of the role of ``check`` (rdma, collective, tcp), from the run's ``plan``, ``decision`` and
    ``fleet`` (step hosts: every host's rails, TCP rail and mpirun entry); the hosts kept are those in the play."""
    decision, fleet = decision or {}, fleet or {}

    def in_play(key):
        return [host for host in decision.get(key) or [] if host in play_hosts]

    if check == "rdma":
        return {"commcheck_rdma_hosts": in_play("rdma_hosts"), "commcheck_rdma_pattern": pattern,
                "commcheck_rdma_ops": plan.get("rdma_ops"), "commcheck_rdma_metrics": plan.get("rdma_metrics"),
                # discovery (this run) has read the counters the tests are compared against
                "commcheck_rdma_perf_counters_from_discovery": bool(plan.get("need_facts")),
                "commcheck_rdma_perf_rails_by_host": fleet.get("rails") or {}}
    if check == "collective":
        return {"commcheck_collective_library": decision.get("library"),
                "commcheck_collective_hosts": in_play("collective_hosts"),
                "commcheck_collective_ops": plan.get("collective_ops"),
                "commcheck_collective_entry_by_host": fleet.get("entries") or {}}
    if check == "tcp":
        return {"commcheck_tcp_hosts": in_play("tcp_hosts"), "commcheck_tcp_pattern": pattern,
                "commcheck_tcp_perf_rails_by_host": fleet.get("tcp_rails") or {}}
    raise ValueError("no role variables for check %r (rdma, collective or tcp)" % (check,))


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
