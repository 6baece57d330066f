# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The pair tool modules (``perftest``, ``iperf3``) run from the plan their role registered.

With O(planned) (``run``: the whole schedule of ``<facts>_run``, pipelined; ``round``: the round in
``<facts>_round``; ``<facts>`` is ``families.FACTS``), this host's sides, the plan's module options, ``sysfs_root``
and (RDMA) the host's discovery facts are filled in on the controller, as the role's tasks did with one template
each. The plan's options stand where a task's ``module_defaults`` for the collection's group stood: over the play's
group defaults, under the play's defaults for the module itself; an option the task gives itself wins over all of
them. Without O(planned) the module runs with the task's arguments as they are.

``PlannedTestAction`` is the action of each module (its family fixed: ``FAMILY``); ``PairTestsAction`` is the action
``pair_tests``, which runs the module of the family its task names (``row["module"]``): the shared task files of
every pair-check family call it. Ansible merges a play's module_defaults into a task's arguments by the task's own
action, so ``pair_tests`` gets none of the module's: it takes them itself (:func:`module_defaults_for`), as the
module's own task would get them.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from collections.abc import Mapping

from ansible.plugins.action import ActionBase
from ansible.utils.vars import merge_hash

from ansible_collections.clusterops.commcheck.plugins.module_utils.planning import families

PLANNED = ("run", "round")
SYSFS_DEFAULT = "/sys"


def planned_sides(planned, run, this_round, host):
    """This host's sides: of the plan's first round (``run``, the pipelined schedule) or of ``this_round``."""
    source = this_round if planned == "round" else ((run or {}).get("rounds") or [{}])[0]
    sides = (source or {}).get("sides") if isinstance(source, Mapping) else None
    if not isinstance(sides, Mapping) or host not in sides:
        raise ValueError("host %s has no sides in the planned %s" % (host, planned))
    return sides[host]


def default_keys(module_defaults, module, template):
    """(the options a play's module_defaults give ``module`` itself, the options any of its entries names), from the
    task's module_defaults (a list of mappings, outermost first: an inner one's entry replaces an outer one's, as
    Ansible merges them); ``template`` templates an entry given as one."""
    specific, named = set(), set()
    names = (module, module.rsplit(".", 1)[-1])
    merged = {}
    for defaults in module_defaults or []:
        merged.update(defaults or {})
    for entry, values in merged.items():
        values = values if isinstance(values, Mapping) else template(values)
        keys = set(values) if isinstance(values, Mapping) else set()
        named |= keys
        if entry in names:
            specific |= keys
    return specific, named


def module_defaults_for(module, module_defaults, action_groups, template):
    """The options a play's module_defaults give ``module`` (its full name), as Ansible gives them to a task of that
    module: the entries of every group that holds it (``action_groups``: {module: [group]}, the play's), then the
    module's own entry over them; later mappings of ``module_defaults`` (inner blocks) win. ``template`` templates an
    entry given as one."""
    merged = {}
    for defaults in module_defaults or []:
        merged.update(defaults or {})
    groups = action_groups.get(module) or [] if isinstance(action_groups, Mapping) else []
    out = {}
    entries = [entry for entry in merged if entry.startswith("group/") and entry[len("group/"):] in groups]
    for entry in entries + [name for name in (module, module.rsplit(".", 1)[-1]) if name in merged]:
        values = merged[entry] if isinstance(merged[entry], Mapping) else template(merged[entry])
        out.update(values if isinstance(values, Mapping) else {})
    return out


def planned_args(row, planned, task_vars, args, keys, own=None):
    """The module's arguments: ``args`` (the task's, the play's module_defaults merged in) with the plan's options
    over those the collection's group defaults gave, then what the role's templates gave (sides, sysfs_root, the
    RDMA facts); ``keys`` is :func:`default_keys` of the task. What the task gives itself is kept: ``own`` names
    it, else every option no module_defaults entry names."""
    prefix = row["facts"]
    specific, named = keys
    own = set(name for name in args if name not in named) if own is None else set(own)
    run = task_vars.get(prefix + "_run")
    if not isinstance(run, Mapping) or not isinstance(run.get("module_args"), Mapping):
        raise ValueError("%s_run holds no plan (the pair_check step plan or retests registers it)" % prefix)
    full = dict(args)
    for name, value in run["module_args"].items():
        if name not in specific and name not in own:
            full[name] = value
    filled = {"sides": planned_sides(planned, run, task_vars.get(prefix + "_round"),
                                     task_vars["inventory_hostname"]),
              "sysfs_root": task_vars.get("commcheck_sysfs_root", SYSFS_DEFAULT)}
    if row["pair_family"] == "rdma":
        facts = (task_vars.get("ansible_facts") or {}).get("commcheck_rdma")
        if facts is not None:
            filled["rdma_facts"] = facts
    full.update((name, value) for name, value in filled.items() if name not in own)
    return full


class PlannedTestAction(ActionBase):
    """The action of a pair tool module; FAMILY names its row of ``planning/families.py``."""

    _supports_check_mode = True
    _supports_async = True
    FAMILY = None
    NAME = None

    def run(self, tmp=None, task_vars=None):
        result = super(PlannedTestAction, self).run(tmp, task_vars)
        del tmp
        task_vars = task_vars or {}
        try:
            row, args, own = self._module_call(dict(self._task.args), task_vars)
        except families.FamilyError as exc:
            return dict(result, failed=True, msg="%s: %s" % (self.NAME, exc))
        planned = args.pop("planned", None)
        if planned is not None:
            if planned not in PLANNED:
                return dict(result, failed=True, msg="planned must be one of run, round, got %r" % (planned,))
            try:
                args = self._planned(row, planned, args, task_vars, own)
            except ValueError as exc:
                return dict(result, failed=True, msg="%s: %s" % (row["module"], exc))
        # as the normal action does, in the background too (async)
        wrap_async = self._task.async_val and not self._connection.has_native_async
        result = merge_hash(result, self._execute_module(module_name=row["module"], module_args=args,
                                                         task_vars=task_vars, wrap_async=wrap_async))
        if not wrap_async:
            self._remove_tmp_path(self._connection._shell.tmpdir)
        return result

    def _module_call(self, args, task_vars):
        """(the family's row, the module's arguments, the options the task gives itself or None when unknown)."""
        return families.family(self.FAMILY), args, None

    def _planned(self, row, planned, args, task_vars, own=None):
        names = [row["facts"] + "_run", "commcheck_sysfs_root"]
        if planned == "round":
            names.append(row["facts"] + "_round")
        values = dict(task_vars, **dict((name, self._templar.template(task_vars[name]))
                                        for name in names if name in task_vars))
        keys = default_keys(self._task.module_defaults, row["module"], self._templar.template)
        return planned_args(row, planned, values, args, keys, own)


class PairTestsAction(PlannedTestAction):
    """The action ``pair_tests``: the module of the family the task names (O(family), else the role's
    ``commcheck_pair_family``), with the play's module_defaults for that module (its groups', then its own), under
    the options the task gives itself."""

    NAME = "clusterops.commcheck.pair_tests"

    def _module_call(self, args, task_vars):
        row = families.family_of(args.pop("family", None), self._templar.template(task_vars.get(families.FAMILY_VAR)))
        play = getattr(getattr(self._task, "_parent", None), "_play", None)
        # templated for this host, as Ansible templates the arguments it merges them into
        defaults = self._templar.template(module_defaults_for(row["module"], self._task.module_defaults,
                                                              getattr(play, "_action_groups", None),
                                                              self._templar.template))
        own = set(name for name in args if name != "planned")
        return row, dict(defaults, **args), own
