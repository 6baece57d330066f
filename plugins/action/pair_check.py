# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action clusterops.commcheck.pair_check: a controller step of a pair check (plan, retests, judge, ...).

Runs on the controller only. Reads the family's role variables once (a value that holds a template is
templated, the others taken as they are) and the results the role registered under the family's fact prefix
(``<facts>_fleet``, ``<facts>_run``, ...), then calls ``plugin_utils/pair_engine.py`` for its ``step``.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import time
from collections.abc import Mapping

from ansible import constants as C
from ansible.errors import AnsibleError

from ansible_collections.clusterops.commcheck.plugins.action.fleet_facts import host_value
from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery.topology import TopologyError
from ansible_collections.clusterops.commcheck.plugins.module_utils.planning import families
from ansible_collections.clusterops.commcheck.plugins.module_utils.planning.gpudirect import GpuDirectError
from ansible_collections.clusterops.commcheck.plugins.module_utils.planning.oneclick_role_vars import decided
from ansible_collections.clusterops.commcheck.plugins.module_utils.planning.schedule import ScheduleError
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts.counters import CounterError
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts.retest import RetestError
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts.roce_consistency import PreflightError
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts.thresholds import ThresholdError
from ansible_collections.clusterops.commcheck.plugins.plugin_utils import pair_engine as engine
from ansible_collections.clusterops.commcheck.plugins.plugin_utils.controller_action import ControllerAction, has_template

ARGUMENT_SPEC = families.PAIR_CHECK_SPEC
HISTORY_LOOKUP = "clusterops.commcheck.commcheck_history"
_MISSING = object()


class ActionModule(ControllerAction):

    NAME = "clusterops.commcheck.pair_check"
    ARGUMENT_SPEC = ARGUMENT_SPEC
    _vars, _read, _row, _decided = None, None, None, None
    FAILURES = (families.FamilyError, ScheduleError, RetestError, ThresholdError, PreflightError, CounterError,
                GpuDirectError, TopologyError, AnsibleError, ValueError, TypeError)

    def decide(self, args, result, task_vars):
        self._vars, self._read, self._decided = task_vars, {}, {}
        # the family the task names, else the one the role running the shared task files (pair_perf) set
        self._row = families.family_of(args.get("family"), self.opts(families.FAMILY_VAR))
        # inside the one-click role, what it decided for this check stands for the role's own variables
        self._decided = decided(task_vars, self._row["pair_family"], self._templar.template)
        out = getattr(self, "_" + args["step"])()
        result.update(out, changed=False)
        return result

    # -------------------------------------------------------------- what the step reads

    def opts(self, name):
        """A variable's value (templated when it holds a template), read once per task; None when not set."""
        if name in self._decided:
            return self._decided[name]
        if name not in self._read:
            value = self._vars.get(name, _MISSING)
            if value is _MISSING:
                value = None
            elif has_template(value):
                value = self._templar.template(value)
            self._read[name] = value
        return self._read[name]

    def registered(self, suffix, default=None):
        """What the role registered as ``<facts>_<suffix>`` (``<facts>`` itself for an empty suffix)."""
        value = self.opts("%s_%s" % (self._row["facts"], suffix) if suffix else self._row["facts"])
        return value if isinstance(value, Mapping) and value.get("skipped") is not True else default

    def host_var(self, host, paths, missing=None):
        hostvars = self._vars.get("hostvars") or {}
        return host_value(hostvars, host, paths, missing) if host in hostvars else missing

    def forks(self):
        return int(C.config.get_config_value("DEFAULT_FORKS", variables=self._vars))

    def history(self, kinds, last_runs):
        lookup = self._shared_loader_obj.lookup_loader.get(HISTORY_LOOKUP, loader=self._loader, templar=self._templar)
        return lookup.run([], variables=self._vars, kind=list(kinds), last_runs=int(last_runs), on_bad_line="ignore",
                          exclude_run_id=self.opts("commcheck_run_id") or "")

    def chosen(self):
        return engine.choose_hosts(self._row, self.opts, self._vars.get("ansible_play_hosts") or [],
                                   self._vars.get("ansible_play_hosts_all") or [])

    # -------------------------------------------------------------- the steps

    def _hosts(self):
        # every host's rails as the one-click check noted them in one task, else none (each host's own fact)
        return dict(self.chosen(), rails_by_host=self.opts(self._row["facts"] + "_rails_by_host") or {})

    def _plan(self):
        fleet = self.registered("fleet", {})
        return engine.plan(self._row, self.opts, fleet, self.chosen()["timeout"], self.forks(),
                           rdma_facts=(fleet.get("facts") or {}).get("rdma"))

    def _wait(self):
        """Sleeps the expected test time of the plan, less what starting its jobs already took (at least 1 s)."""
        seconds = engine.wait_left(self.registered("run", {}))
        time.sleep(seconds)
        return {"waited_s": seconds}

    def _first(self):
        sides = self.registered("fleet_sides", {}).get("facts") or {}
        return engine.first_pass(self._row, self.opts, self.registered("run", {}), sides.get("sides") or {},
                                 sides.get("module_rc") or {})

    def _retests(self):
        return engine.retests(self._row, self.opts, self.registered("", {}), self.registered("fleet", {}),
                              self.registered("run", {}), self.forks())

    def _retest_again(self):
        """The next retest pass, from the pass before (registered as ``<facts>_retest_plan``) and the retest sides
        every host of the check measured so far (gathered as ``<facts>_fleet_retested``, from every slice)."""
        sides = []
        for measured in ((self.registered("fleet_retested", {}).get("facts") or {}).get("retest_sides") or {}).values():
            sides += [side for side in measured if isinstance(side, Mapping)] if isinstance(measured, list) else []
        return engine.retest_again(self._row, self.opts, self.registered("", {}), self.registered("fleet", {}),
                                   self.registered("run", {}), self.registered("retest_plan", {}), sides, self.forks())

    def _counters(self):
        """The port counter changes of this controller's hosts still in the play: before the tests (this run's
        discovery, or the role's own reading), after them (what the host's last test task read)."""
        if not self._row.get("counters") or not engine.truthy(self.opts(families.option(self._row, "counters"))):
            return {"counters": {}}
        facts = self._row["facts"]
        from_discovery = engine.truthy(self.opts(facts + "_counters_from_discovery") or False)
        play = self._vars.get("ansible_play_hosts") or []
        out = {}
        for host in [h for h in self.registered("fleet", {}).get("own") or [] if h in play]:
            if from_discovery:
                before = self.host_var(host, ["ansible_facts.commcheck_rdma"])
            else:
                before = self.host_var(host, [facts + "_counters_before.commcheck_rdma",
                                              facts + "_counters_before.ansible_facts.commcheck_rdma"])
            after = self.host_var(host, [facts + "_counters_latest"])
            if not isinstance(after, Mapping):
                after = self.host_var(host, [facts + "_job.port_counters"])
            deltas = engine.counter_deltas(self._row, host, before, after)
            if deltas is not None:
                out[host] = deltas
        return {"counters": out}

    def _gpu_states(self):
        run, fleet = self.registered("run", {}), self.registered("fleet", {})
        hosts = [h for h in fleet.get("own") or [] if h in (run.get("hosts") or [])]
        rails = (fleet.get("facts") or {}).get("rails") or {}
        facts = dict((h, self.host_var(h, ["ansible_facts.commcheck_rdma"])) for h in hosts)
        kernels = dict((h, self.host_var(h, ["ansible_facts.kernel"])) for h in hosts)
        return {"states": engine.gpu_states(self._gpu_row(), self.opts, hosts, rails, facts, kernels)}

    def _gpu_plan(self):
        run, fleet = self.registered("run", {}), self.registered("fleet", {})
        states = (self.registered("fleet_gpu", {}).get("facts") or {}).get("states") or {}
        return engine.gpu_rounds(self._gpu_row(), self.opts, run.get("hosts") or [],
                                 (fleet.get("facts") or {}).get("rails") or {}, states, run["timeout"], self.forks(),
                                 topology=engine.fleet_topology(fleet))

    def _gpu_retests(self):
        sides = (self.registered("fleet_gpu_sides", {}).get("facts") or {}).get("sides") or {}
        return engine.gpu_retests(self._gpu_row(), self.opts, sum(sides.values(), []), self.registered("gpu_run", {}),
                                  self.registered("fleet", {}), self.registered("run", {}), self.forks())

    def _gpu_judge(self):
        row = self._gpu_row()
        sides = (self.registered("fleet_gpu_retested", {}).get("facts") or {}).get("retest_sides") or {}
        history = []
        if engine.truthy(self.opts("commcheck_thresholds_history")):
            history = self.history(row["kinds"], engine.number(self.opts("commcheck_history_runs")))
        retested = [side for measured in sides.values() if isinstance(measured, list)
                    for side in measured if isinstance(side, Mapping)]
        return engine.gpu_judge(row, self.opts, self.registered("", {}).get("records") or [],
                                self.registered("gpu_retest_plan", {}), retested, self.registered("gpu_run", {}),
                                history)

    def _gpu_row(self):
        return families.family(self._row["gpudirect"]) if self._row.get("gpudirect") else self._row

    def _judge(self):
        row, opts = self._row, self.opts
        first, run, fleet = self.registered("", {}), self.registered("run", {}), self.registered("fleet", {})
        after = self.registered("fleet_after", {}).get("facts") or {}
        # a plan left by an earlier run of the role in the same playbook is not this run's
        retest_plan = self.registered("retest_plan", {}) if engine.number(opts("commcheck_retest_repeats")) > 0 else {}
        history = []
        if row["thresholds"] == "after_retests" and engine.truthy(opts("commcheck_thresholds_history")):
            history = self.history(row["kinds"], engine.number(opts("commcheck_history_runs")))
        trend_history = []
        if engine.trend_asked(row, opts):
            trend_history = self.history(["port_counters"], engine.number(opts("commcheck_counter_trend_runs")) - 1)
        extras = {"preflight": run.get("preflight"),
                  "sides": sum(((self.registered("fleet_sides", {}).get("facts") or {}).get("sides") or {}).values(), []),
                  "gpudirect": self.registered("gpudirect") if run.get("gpudirect") else None}
        out = engine.judge(row, opts, first, retest_plan, sum((after.get("retest_sides") or {}).values(), []),
                           list((after.get("counters") or {}).values()), history, trend_history,
                           self.topology(fleet.get("own") or []), extras)
        out["share"] = engine.share(out["publish"], fleet)
        return out

    def topology(self, hosts):
        """Each host's leaf switches: what its discovery read, under its inventory's commcheck_topology; for TCP
        the leaf of its one path (``pair_engine.path_topology``)."""
        out, facts = {}, {}
        for host in hosts:
            facts[host] = self.host_var(host, ["ansible_facts.commcheck_rdma"], {})
            discovered = (facts[host] if isinstance(facts[host], Mapping) else {}).get("topology")
            given = self.host_var(host, ["commcheck_topology"], {})
            # keys as text: an inventory's YAML gives rail numbers as integers ({0: {leaf: ...}})
            out[host] = dict((str(key), value) for key, value in (
                list(discovered.items() if isinstance(discovered, Mapping) else [])
                + list(given.items() if isinstance(given, Mapping) else [])))
        if not (self._row or {}).get("path_topology"):
            return out
        rails = (self.registered("fleet", {}).get("facts") or {}).get("rails") or {}
        return engine.path_topology(self._row, engine.topo.check_hosts(out), facts, rails)
