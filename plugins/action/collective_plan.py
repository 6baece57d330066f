# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action clusterops.commcheck.collective_plan: the collective role's controller steps, in Python.

Runs on the controller only, once for all hosts. Reads the role's variables
and every host's (its entry, discovery facts, launcher settings, registered
results) once, and decides with ``plugin_utils.collective_steps``:

- ``probe``: the plan and keys of the tool probe of the role run alone with library ``auto``;
- ``hosts``: the library, this controller's hosts of the check, those lost and how mpirun reaches each (its
  entry), which the slices of a split run share (``collective-hosts``, ``plugin_utils.collective_slices``);
- ``runs``: every run with its module arguments over the hosts of every slice (only the first slice launches
  them), and the hosts that hold the CPU governor around them;
- ``retests``: the first pass's failing runs to run again before anything is blamed
  (``verdicts.collective_retest``): as is, and a failing pair's sides with known-good partners;
- ``share``: what this slice posts when the runs ended (``collective-results``): the first slice its results;
- ``results``: the runs' and retests' results (the first slice's, read through the meeting) gathered, turned into
  records with the governor state of their hosts, judged against the fleet and the history, and classified by
  the retests (flaky or confirmed); ``share``: the records this slice publishes.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible.errors import AnsibleError

from ansible_collections.clusterops.commcheck.plugins.module_utils.planning.oneclick_role_vars import decided
from ansible_collections.clusterops.commcheck.plugins.module_utils.planning.collective_plan import collective_records
from ansible_collections.clusterops.commcheck.plugins.module_utils.planning.schedule import ScheduleError
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import collective_retest
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts.retest import RetestError
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import thresholds as th
from ansible_collections.clusterops.commcheck.plugins.module_utils.records.slice_meeting import my_share
from ansible_collections.clusterops.commcheck.plugins.plugin_utils import collective_slices as slices
from ansible_collections.clusterops.commcheck.plugins.plugin_utils import collective_steps as steps
from ansible_collections.clusterops.commcheck.plugins.plugin_utils.controller_action import ControllerAction
from ansible_collections.clusterops.commcheck.plugins.plugin_utils.host_vars import (
    HostReader,
    has_own,
    host_value,
    plain,
)

ARGUMENT_SPEC = dict(
    step=dict(type="str", required=True, choices=["probe", "hosts", "runs", "retests", "share", "results"]),
)
HISTORY_LOOKUP = "clusterops.commcheck.commcheck_history"
_MISSING = object()


def probe_places(hosts, reader):
    """{runs_from, environment}: per host, where its tool probe runs and with which environment. A pod (the kubectl
    transport) is probed with ``kubectl exec`` from the controller, without the hosts' ``commcheck_environment``;
    any other host on itself, with it. ``reader`` is a HostReader (the host's own variable, else the run's)."""
    kubectl = dict((host, reader.own_or_run(host, "commcheck_transport", "host") == "kubectl") for host in hosts)
    return {"runs_from": dict((host, "localhost" if kubectl[host] else host) for host in hosts),
            "environment": dict((host, {} if kubectl[host] else plain(
                reader.own_or_run(host, "commcheck_environment", {}) or {})) for host in hosts)}


class ActionModule(ControllerAction):

    NAME = "clusterops.commcheck.collective_plan"
    ARGUMENT_SPEC = ARGUMENT_SPEC
    FAILURES = (ValueError, TypeError, KeyError, ScheduleError, th.ThresholdError, RetestError, AnsibleError)

    def decide(self, args, result, task_vars):
        step = {"probe": self._probe, "hosts": self._hosts, "runs": self._runs, "retests": self._retests,
                "share": self._share, "results": self._results}[args["step"]]
        result.update(changed=False)
        result.update(step(task_vars))
        return result

    # ------------------------------------------------------------ variables

    def _var(self, task_vars, name, default=_MISSING):
        """A role or play variable of this task, templated; a missing one without a default fails the step.
        Inside the one-click role, what it decided for the collective check stands for the role's own."""
        own = decided(task_vars, "collective", self._templar.template)
        if name in own:
            return plain(own[name])
        if name not in task_vars:
            if default is _MISSING:
                raise ValueError("%s is not set: this step runs inside the collective role" % name)
            return default
        return plain(self._templar.template(task_vars[name]))

    def _vars(self, task_vars, names):
        return dict((name, self._var(task_vars, name)) for name in names)

    # ------------------------------------------------------------ steps

    def _probe(self, task_vars):
        probe = steps.probe_step(self._var(task_vars, "commcheck_collective_ops"),
                                 self._var(task_vars, "commcheck_collective_mpirun", None),
                                 self._var(task_vars, "commcheck_collective_binary_dir", None))
        reader = HostReader(task_vars.get("hostvars") or {}, lambda name, missing: self._var(task_vars, name, missing))
        probe.update(probe_places(list(task_vars.get("ansible_play_hosts") or []), reader))
        return probe

    def _hosts(self, task_vars):
        _variables, library, chosen, unreachable, entry_of = self._own_context(task_vars)
        return {"library": library, "chosen": chosen, "unreachable": unreachable,
                "entries": dict((host, entry_of(host)) for host in chosen),
                "msg": "%d host(s) of the collective check here, %d lost" % (len(chosen), len(unreachable))}

    def _runs(self, task_vars):
        variables, library, chosen, unreachable, entry_of = self._context(task_vars)
        hostvars = task_vars.get("hostvars") or {}
        fleet = self._fleet(task_vars, chosen)
        mode = variables["commcheck_collective_mode"]
        groups = steps.run_groups(chosen, mode, variables["commcheck_collective_pair_pattern"])
        planned = self._group_runs(hostvars, variables, library, groups, entry_of, fleet.rdma)
        per_node = steps.node_runs(lambda host: self._host_vars(task_vars, hostvars, host, variables), library,
                                   chosen if mode == "per_node" else [], entry_of,
                                   lambda host: plain(host_value(hostvars, host, ["ansible_facts.commcheck_rdma"], {})))
        runs, per_node = slices.launched_by_this_slice(planned, per_node, fleet)
        count = len(runs) + sum(len(host_runs) for host_runs in per_node.values())
        wait = slices.results_wait(planned, self._var(task_vars, "commcheck_slice_wait", 900) or 900,
                                   self._var(task_vars, "commcheck_retest_repeats", 0) or 0)
        return {"library": library, "chosen": chosen, "unreachable": unreachable, "runs": runs, "node_runs": per_node,
                "launches": fleet.launches, "own": [host for host in chosen if host in fleet.own],
                "results_wait": wait,
                "governor_hosts": self._governor_hosts(task_vars, hostvars, [h for h in chosen if h in fleet.own]),
                "msg": "%s %s: %d run(s) on %d host(s)%s" % (
                    library, mode, count, len(chosen),
                    "" if fleet.slices == 1 else (", launched by this slice" if fleet.launches else
                                                  ", launched by the first of %d slices" % fleet.slices))}

    def _fleet(self, task_vars, chosen=()):
        """The slices' ``collective-hosts`` meeting (``commcheck_collective_fleet``); without one (the steps run
        on their own), one controller with ``chosen``."""
        met = host_value(task_vars.get("hostvars") or {}, task_vars.get("inventory_hostname"),
                         ["commcheck_collective_fleet"], None)
        if isinstance(met, dict) and "hosts" in met:
            return slices.Fleet(plain(met))
        return slices.Fleet({"hosts": list(chosen), "own": list(chosen), "leader": True, "slices": 1})

    def _context(self, task_vars):
        """(variables, library, chosen, unreachable, entry_of) over every slice's hosts once the slices met
        (``collective-hosts``); this controller's own before."""
        variables, library, chosen, unreachable, entry_of = self._own_context(task_vars)
        met = host_value(task_vars.get("hostvars") or {}, task_vars.get("inventory_hostname"),
                         ["commcheck_collective_fleet"], None)
        if not isinstance(met, dict) or "hosts" not in met:
            return variables, library, chosen, unreachable, entry_of
        fleet = slices.Fleet(plain(met))
        return variables, library, fleet.hosts, fleet.unreachable, fleet.entry_of

    def _own_context(self, task_vars):
        """(variables, library, chosen, unreachable, entry_of): what every run of the check is made from."""
        variables = self._vars(task_vars, steps.RUN_VARIABLES)
        hostvars = task_vars.get("hostvars") or {}
        library, chosen, unreachable = steps.choose_hosts(
            variables["commcheck_collective_library"], self._var(task_vars, "commcheck_oneclick_decision", None),
            variables["commcheck_collective_hosts"], list(task_vars.get("ansible_play_hosts") or []),
            list(task_vars.get("ansible_play_hosts_all") or []))
        entries = self._var(task_vars, "commcheck_collective_entry_by_host", None)

        def entry_of(host):
            if entries is not None:
                return entries[host]
            # the role's main.yml notes each host's entry (a per-host template of the play gives its address)
            found = host_value(hostvars, host, ["commcheck_collective_entry"], None)
            if not found:
                raise ValueError("host %s has no commcheck_collective_entry (the collective role's main.yml notes it "
                                 "before run.yml, or commcheck_collective_entry_by_host gives every host's)" % host)
            # named after the host unless the entry names it
            return dict({"name": host}, **plain(found))

        return variables, library, chosen, unreachable, entry_of

    def _group_runs(self, hostvars, variables, library, groups, entry_of, fleet_rdma=None):
        in_groups = sorted(set(host for group in groups for host in group))
        # another slice's hosts have their RDMA facts in the slices' meeting only
        facts = dict((host, plain((fleet_rdma or {}).get(host) or host_value(
            hostvars, host, ["ansible_facts.commcheck_rdma"], {}))) for host in in_groups)
        return steps.group_runs(variables, library, groups, entry_of, facts,
                                lambda host: self._launcher_vars(hostvars, host))

    def _first_pass(self, task_vars):
        """(mode, plan, group results, node results, message of a failed run task or None)."""
        hostvars = task_vars.get("hostvars") or {}
        current = task_vars.get("inventory_hostname")
        group_results = host_value(hostvars, current, ["commcheck_collective_group_results"], {})
        plan = host_value(hostvars, current, ["commcheck_collective_plan"], {}) or {}
        mode = self._var(task_vars, "commcheck_collective_mode")
        node_hosts = [host for host in task_vars.get("ansible_play_hosts") or [] if host in (plan.get("chosen") or [])]
        node_results = [host_value(hostvars, host, ["commcheck_collective_node_results"], {})
                        for host in (node_hosts if mode == "per_node" else [])]
        return mode, plan, group_results, node_results, steps.failures(group_results)

    def _retests(self, task_vars):
        mode, plan, group_results, node_results, failed = self._first_pass(task_vars)
        if failed is not None or not plan.get("library"):
            # the results step fails with the runs' message (after the CPU governors are back)
            return {"runs": [], "retests": [], "msg": "no retests: the runs failed as a task"}
        if not plan.get("launches", True) and mode != "per_node":
            return {"runs": [], "retests": [], "msg": "no retests here: the first slice retests its runs"}
        options = self._vars(task_vars, steps.RETEST_VARIABLES)
        results = plain(steps.run_results(group_results, node_results))
        records = self._judged(task_vars, collective_records(results, mode=mode))["records"]
        planned = collective_retest.plan(records, results, mode, int(options["commcheck_retest_repeats"]),
                                         bool(options["commcheck_retest_partners"]),
                                         list(options["commcheck_retest_verdicts"]))
        hostvars = task_vars.get("hostvars") or {}
        context = []

        def pair_runs(hosts, operation):
            if not context:
                context.append(self._context(task_vars))
            variables, library, _chosen, _unreachable, entry_of = context[0]
            made = self._group_runs(hostvars, dict(variables, commcheck_collective_ops=[operation]), library,
                                    [list(hosts)], entry_of, self._fleet(task_vars).rdma)
            return made[0]

        runs = steps.retest_runs(plan.get("runs"), plan.get("node_runs"), planned["retests"], pair_runs)
        return {"runs": runs, "retests": planned["retests"], "skipped": planned["skipped"],
                "summary": planned["summary"],
                "msg": "%d retest(s) of %d failing run(s)" % (len(runs), planned["summary"]["failing_runs"])}

    def _governor_hosts(self, task_vars, hostvars, chosen):
        """The hosts of the check that hold commcheck_cpu_governor around the runs: those where one is set (the
        host's own value, else the run's); a pod holds it through kubectl exec (the cpu_governor module's
        transport, from the play's module_defaults)."""
        run = self._var(task_vars, "commcheck_cpu_governor", "")

        def value(host):
            return plain(host_value(hostvars, host, ["commcheck_cpu_governor"], None)) if has_own(
                hostvars, host, "commcheck_cpu_governor") else run
        return [host for host in chosen if value(host)]

    @staticmethod
    def _launcher_vars(hostvars, host):
        """What the launcher host's own variables say of where mpirun runs (its pod, with the kubectl transport)."""
        names = {"transport": "commcheck_transport", "kubectl": "commcheck_kubectl",
                 "mpi_agent_dir": "commcheck_mpi_agent_dir", "environment": "commcheck_environment"}
        return dict((key, plain(host_value(hostvars, host, [name], None))) for key, name in names.items())

    def _host_vars(self, task_vars, hostvars, host, variables):
        """The run's variables with those ``host`` sets itself (its inventory, facts, extra variables)."""
        own = dict(variables, commcheck_environment=self._var(task_vars, "commcheck_environment", {}))
        for name in own:
            if has_own(hostvars, host, name):
                own[name] = plain(host_value(hostvars, host, [name], None))
        return own

    def _share(self, task_vars):
        hostvars = task_vars.get("hostvars") or {}
        current = task_vars.get("inventory_hostname")
        plan = host_value(hostvars, current, ["commcheck_collective_plan"], {}) or {}
        if self._var(task_vars, "commcheck_collective_mode") == "per_node":
            # each slice ran, retested and builds the records of its own nodes
            return {"values": {}, "msg": "nothing to share: each slice runs its own nodes"}
        values = slices.share_values(
            self._fleet(task_vars, plain(plan.get("chosen") or [])),
            *[plain(host_value(hostvars, current, [name], {})) for name in (
                "commcheck_collective_group_results", "commcheck_collective_retests",
                "commcheck_collective_retest_results")])
        return {"values": values, "msg": "the runs' results shared" if values else "nothing to share"}

    def _launched(self, task_vars, group_results, retest_plan, retest_results):
        """The first slice's results as it posted them (``collective-results``), else this controller's own."""
        met = host_value(task_vars.get("hostvars") or {}, task_vars.get("inventory_hostname"),
                         ["commcheck_collective_fleet_results"], None)
        return slices.launched_results(plain(met) if isinstance(met, dict) else None, plain(group_results),
                                       plain(retest_plan), plain(retest_results))

    def _governor_held(self, task_vars, hosts):
        """{host: its governor hold result}: from the slices' meeting (``collective-results``), else each host's
        registered ``commcheck_collective_governor``."""
        hostvars = task_vars.get("hostvars") or {}
        met = host_value(hostvars, task_vars.get("inventory_hostname"), ["commcheck_collective_fleet_results"], None)
        posted = ((plain(met) or {}).get("facts") or {}).get("governor") if isinstance(met, dict) else None
        if isinstance(posted, dict):
            return posted
        return dict((host, plain(host_value(hostvars, host, ["commcheck_collective_governor"], None)))
                    for host in hosts)

    def _results(self, task_vars):
        hostvars = task_vars.get("hostvars") or {}
        current = task_vars.get("inventory_hostname")
        mode, plan, group_results, node_results, _failed = self._first_pass(task_vars)
        group_results, retest_plan, retest_results = self._launched(
            task_vars, group_results, host_value(hostvars, current, ["commcheck_collective_retests"], {}),
            host_value(hostvars, current, ["commcheck_collective_retest_results"], {}))
        failed = steps.failures(group_results)
        if failed is None:
            failed = steps.failures(retest_results)
        if failed is not None:
            # the runs failed as a task (after the CPU governors were put back): this step fails with their message
            return {"failed": True, "msg": failed}
        unreachable = plan.get("unreachable") or []
        collective = steps.gathered(plain(steps.run_results(group_results, node_results)), mode, unreachable)
        judged = self._judged(task_vars, collective["records"])
        retests = steps.retest_records(plain((retest_plan or {}).get("runs") or []), plain(retest_results), mode)
        collective = steps.with_retests(collective, judged["records"], retests, mode,
                                        list(self._var(task_vars, "commcheck_retest_verdicts")))
        collective["records"] = slices.with_governor_state(
            collective["records"], self._governor_held(task_vars, plan.get("chosen") or []),
            self._var(task_vars, "commcheck_cpu_governor", ""))
        fleet = self._fleet(task_vars, plan.get("chosen") or [])
        collective["share"] = my_share(collective["records"], fleet.own, plan.get("chosen") or [], fleet.launches)
        collective["thresholds"] = judged["summary"]
        collective["outcome"] = steps.outcome(plan.get("library"), mode, collective, unreachable)
        collective["msg"] = collective["outcome"]
        return collective

    def _judged(self, task_vars, records):
        """The records judged against the fleet and their own history (each run's hardware line is its own)."""
        variables = self._vars(task_vars, steps.JUDGE_VARIABLES)
        history = []
        if variables["commcheck_thresholds_history"]:
            history = self._history(task_vars, int(variables["commcheck_history_runs"]))
        return th.evaluate(records, history, None, None, None, float(variables["commcheck_outlier_z"]),
                           float(variables["commcheck_outlier_min_rel"]),
                           float(variables["commcheck_history_threshold"]), int(variables["commcheck_history_runs"]),
                           3, True, None)

    def _history(self, task_vars, last_runs):
        lookup = self._shared_loader_obj.lookup_loader.get(HISTORY_LOOKUP, loader=self._loader, templar=self._templar)
        return list(lookup.run([], variables=task_vars, kind=["collective"], last_runs=last_runs, on_bad_line="ignore",
                               exclude_run_id=self._var(task_vars, "commcheck_run_id", "") or ""))
