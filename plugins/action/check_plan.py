# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action clusterops.commcheck.check_plan: the one-click check's controller steps, for every host at once.

Runs on the controller only and contacts no host. Each step reads the role variables of the run and every
host's own variables once, in Python (``plugin_utils/host_vars.py``), and returns what the one-click role's
tasks take (register it):

- ``plan``: the checks and operations of the run (``planning/check_plan.plan_checks``) and what the tool probe
  looks for (``probe_keys``);
- ``hosts``: each host's rails, TCP rail, mpirun entry and machine identity (``planning/oneclick_hosts.py``);
  fails, naming them, when a device asked for is not on its host or two hosts would test one machine;
- ``decide``: what each check runs on and the "skipped" records of the rest (``check_plan.decide``), from
  each host's tool probe and discovery facts;
- ``runs``: whether check O(check) runs over the hosts still in the play and, when it does, the variables of
  its role that the one-click check decides (``planning/oneclick_role_vars.py``: hosts, pattern, operations,
  every host's rails or mpirun entry), which the role's controller steps take in its place; what the user set
  for the role's own options wins (``plugin_utils/oneclick_user_values.py``): the one-click check fills only
  the options left unset;
- ``lost``: one finding per host that left the run (``records/lost_hosts.py``), from whether its ssh port still
  answers (asked from the controller, or O(probe): the results of a port wait per host).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import functools
import socket
import time

from ansible.module_utils.parsing.convert_bool import boolean

from ansible_collections.clusterops.commcheck.plugins.module_utils.planning import check_plan, oneclick_hosts
from ansible_collections.clusterops.commcheck.plugins.module_utils.planning.oneclick_role_vars import (
    CHECK_ROLES,
    USER_OPTIONS,
    narrowed,
    role_vars,
)
from ansible_collections.clusterops.commcheck.plugins.module_utils.records.lost_hosts import lost_record
from ansible_collections.clusterops.commcheck.plugins.plugin_utils.controller_action import ControllerAction
from ansible_collections.clusterops.commcheck.plugins.plugin_utils.host_vars import MISSING, HostReader
from ansible_collections.clusterops.commcheck.plugins.plugin_utils.oneclick_user_values import user_values

ARGUMENT_SPEC = oneclick_hosts.CHECK_PLAN_SPEC
PLAN_VAR = "commcheck_oneclick_plan"
DECISION_VAR = "commcheck_oneclick_decision"
HOSTS_VAR = "commcheck_oneclick_hosts"


def plan_of(value):
    """The run's plan as ``plan`` registered it (the keys ``check_plan.plan_checks`` gives)."""
    if not isinstance(value, dict) or "rdma" not in value:
        raise ValueError("%s is not a plan of this run: run step plan first" % PLAN_VAR)
    return value


def rdma_address(reader, host, name="commcheck_address"):
    """A host's address: its own ``name``, else the run's, else its ansible_host, else its inventory name."""
    value = reader.own_or_run(host, name, MISSING)
    return value if value is not MISSING else reader.own(host, "ansible_host", host)


def host_part(reader, host, rdma):
    """What ``host`` brings to the run (``oneclick_hosts.host_part``) from its variables; without the RDMA check
    its devices and discovery facts are not read."""
    facts, devices, port = {}, [], 1
    if rdma:
        facts = reader.own(host, "ansible_facts.commcheck_rdma", {})
        devices = reader.own_or_run(host, "commcheck_devices")
        port = reader.own_or_run(host, "commcheck_ib_port")
    return oneclick_hosts.host_part(host, rdma, facts, devices, rdma_address(reader, host), port,
                                    rdma_address(reader, host, "commcheck_tcp_address"))


def run_tools(reader):
    """The run's (not a host's) collective binary directory and mpirun."""
    return (reader.run_value("commcheck_collective_binary_dir", "") or "",
            reader.run_value("commcheck_collective_mpirun", "") or "mpirun")


def host_status(reader, plan, host, binary_dir, mpirun):
    """What ``host`` can run: its probe (the collective role's, else discovery's), its discovery facts (the
    summary and host parts the decision reads) and its own tool settings, else the run's."""
    probe = reader.own(host, "commcheck_oneclick_probe_run.probe", MISSING)
    if probe is MISSING:
        probe = reader.own(host, "commcheck_discover_run.probe", {})
    facts = reader.own(host, "ansible_facts.commcheck_rdma", {}) or {}
    facts = {"summary": facts.get("summary") or {}, "host": facts.get("host") or {}}
    require = reader.own_or_run(host, "commcheck_require_accelerators")
    return check_plan.host_status(
        plan, probe, facts, reader.own_or_run(host, "commcheck_collective_binary_dir", binary_dir, truthy=True),
        reader.own_or_run(host, "commcheck_collective_mpirun", mpirun, truthy=True), boolean(require, strict=False))


def decision_text(decision):
    """One line of what runs where."""
    return ("RDMA on %s; collective (%s) on %s; TCP on %s; %d check(s) skipped"
            % (", ".join(decision["rdma_hosts"]) or "no host", decision["library"] or "no library",
               ", ".join(decision["collective_hosts"]) or "no host", ", ".join(decision["tcp_hosts"]) or "no host",
               len(decision["records"])))


def lost_records(reader, probe):
    """One finding per host the ssh port probe of the hosts that left the run went over (its loop results)."""
    records = []
    for item in (probe or {}).get("results") or []:
        host = item["commcheck_oneclick_lost"]
        asked = not item.get("skipped", False)
        records.append(lost_record(host, reader.own(host, "ansible_host", host), reader.own(host, "ansible_port", 22),
                                   asked, str(item.get("msg", "")) if asked else ""))
    return records


# the connections whose hosts are asked on their ssh port (not local ones, not pods reached with kubectl)
SSH_CONNECTIONS = ("ssh", "smart", "paramiko")
CONNECT_TIMEOUT_S = 3
WAIT_S = 5


def ssh_port_answer(address, port, wait_s=WAIT_S, connect_timeout_s=CONNECT_TIMEOUT_S):
    """'' when ``address``:``port`` takes a connection within ``wait_s`` seconds (tried again until then, each
    try at most ``connect_timeout_s``), else the message of a port wait that timed out."""
    deadline = time.monotonic() + wait_s
    while True:
        left = deadline - time.monotonic()
        try:
            with socket.create_connection((address, port), timeout=max(0.1, min(connect_timeout_s, left))):
                return ""
        except (OSError, ValueError):
            if time.monotonic() + 0.5 >= deadline:
                return "Timeout when waiting for %s:%s" % (address, port)
            time.sleep(0.5)


def probe_lost(reader, hosts, answer=None):
    """Whether each host that left the run still answers on its ssh port, shaped as a loop's results (one item per
    host, ``skipped`` for a host reached without ssh, the answer's message when it did not answer)."""
    answer = answer or ssh_port_answer
    results = []
    for host in hosts:
        if reader.own(host, "ansible_connection", "ssh") not in SSH_CONNECTIONS:
            results.append({"commcheck_oneclick_lost": host, "skipped": True})
            continue
        message = answer(str(reader.own(host, "ansible_host", host)), int(reader.own(host, "ansible_port", 22)))
        results.append({"commcheck_oneclick_lost": host, "failed": bool(message), "msg": message})
    return {"results": results}


class ActionModule(ControllerAction):

    NAME = "clusterops.commcheck.check_plan"
    ARGUMENT_SPEC = ARGUMENT_SPEC
    FAILURES = (ValueError, TypeError)

    def decide(self, args, result, task_vars):
        reader = HostReader(task_vars.get("hostvars"), functools.partial(self._run_value, task_vars))
        play_hosts = list(task_vars.get("ansible_play_hosts") or [])
        step = args["step"]
        result["changed"] = False
        if step == "plan":
            binary_dir, mpirun = run_tools(reader)
            plan = check_plan.plan_checks(*[reader.run_value(name) for name in (
                "commcheck_checks", "commcheck_collective_library", "commcheck_collective_ops", "commcheck_rdma_ops",
                "commcheck_rdma_metrics")])
            result.update(plan, probe_keys=check_plan.probe_keys(plan, mpirun, binary_dir))
            result["msg"] = "checks: %s" % (", ".join(plan["checks"]) or "none")
        elif step == "hosts":
            plan = plan_of(reader.run_value(PLAN_VAR))
            fleet = oneclick_hosts.fleet_parts([(host, host_part(reader, host, plan["rdma"])) for host in play_hosts],
                                               plan["rdma"])
            result.update(fleet)
            if fleet["stop"]:
                result.update(failed=True, msg=fleet["stop"])
                return result
            result["msg"] = "%d host(s)" % len(play_hosts)
        elif step == "decide":
            plan = plan_of(reader.run_value(PLAN_VAR))
            binary_dir, mpirun = run_tools(reader)
            statuses = [(host, host_status(reader, plan, host, binary_dir, mpirun)) for host in play_hosts]
            decision = check_plan.decide(plan, statuses, binary_dir,
                                         reader.run_value("commcheck_rdma_pattern") == "loopback")
            result.update(decision, msg=decision_text(decision))
        elif step == "runs":
            result.update(self._runs(args, reader, play_hosts, task_vars.get("inventory_hostname")))
        else:
            probe = args["probe"]
            if probe is None:
                in_play = set(play_hosts)
                probe = probe_lost(reader, [h for h in task_vars.get("ansible_play_hosts_all") or [] if h not in in_play])
            records = lost_records(reader, probe)
            result.update(records=records, msg="%d host(s) left the run" % len(records))
        return result

    @staticmethod
    def _runs(args, reader, play_hosts, host):
        check = args["check"]
        if not check:
            raise ValueError("step runs needs check (rdma, tcp or collective)")
        plan = plan_of(reader.run_value(PLAN_VAR))
        # what the user set for the check's role wins: its hosts narrow the decision's, the rest is passed as given
        given = user_values(reader, host, CHECK_ROLES[check], USER_OPTIONS[check])
        decision = narrowed(reader.run_value(DECISION_VAR) or {}, check, given)
        runs = oneclick_hosts.check_runs(plan, decision, check, play_hosts)
        hosts = oneclick_hosts.check_hosts(decision, check, play_hosts)
        values = {}
        if runs:
            values = role_vars(check, plan, decision, reader.run_value(HOSTS_VAR) or {},
                               reader.run_value("commcheck_pattern"), play_hosts, given)
        return {"runs": runs, "hosts": hosts, "role_vars": values,
                "msg": "the %s check %s" % (check, "runs on %s" % ", ".join(hosts) if runs else "does not run")}

    def _run_value(self, task_vars, name, default=None):
        """The run's value of a variable (play, role, extra variables), templated; ``default`` when undefined."""
        if name not in task_vars:
            return default
        return self._templar.template(task_vars[name])
