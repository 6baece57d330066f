# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action clusterops.commcheck.fleet_facts: the named facts of every host of the check, across slices.

Runs on the controller only. Reads each named variable of each given host
from ``hostvars`` (one Python pass instead of a Jinja ``extract`` chain per
fact); a value that holds no template (a module's registered result, a fact)
is taken from the host's variables as they are, since templating it would
only walk every item of it to give the same value back. When the run is
split over several controllers (``slices`` > 1), posts them where the slices
meet and waits for the other slices' (``module_utils.records.slice_meeting``).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from collections.abc import Mapping

from ansible.errors import AnsibleError

from ansible_collections.clusterops.commcheck.plugins.module_utils.options import option_rules as rules
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import slice_meeting
from ansible_collections.clusterops.commcheck.plugins.plugin_utils.controller_action import ControllerAction
from ansible_collections.clusterops.commcheck.plugins.plugin_utils.host_vars import host_value, plain
from ansible_collections.clusterops.commcheck.plugins.plugin_utils.named_vars import named, task_value

ARGUMENT_SPEC = slice_meeting.FLEET_FACTS_SPEC
# An option not given takes the role variable of the same meaning, so every
# check role meets the same way with one line per meeting point.
FROM_VARS = {"slices": ("commcheck_slices", 1), "directory": ("commcheck_slice_dir", ""),
             "run_id": ("commcheck_run_id", ""), "wait": ("commcheck_slice_wait", 900)}
# the ranges of the numbers, whether given or taken from their variables
COUNTS = {"slices": (1, slice_meeting.SLICES_MAX), "wait": (1, slice_meeting.WAIT_MAX)}
HISTORY_LOOKUP = "clusterops.commcheck.commcheck_history"


def _paths(name, path):
    paths = [path] if isinstance(path, str) else path
    if not isinstance(paths, list) or not paths or not all(isinstance(p, str) and p for p in paths):
        raise ValueError("facts.%s must name a variable or list variables, got %r" % (name, path))
    return paths


def tag_items(value, key, host):
    """A list of mappings, each with ``key`` set to ``host`` (copies; the host's own variable stays as it is)."""
    if not isinstance(value, list):
        return value
    return [dict(item, **{key: host}) if isinstance(item, Mapping) else item for item in value]


def gather(hostvars, hosts, facts, values, missing, host_field=None):
    """{name: {host: value}}: ``facts`` read from each host's variables, ``values`` taken as given (for a name
    in both, a host's given value wins over its variable); the lists named in ``host_field`` get each item
    tagged with its host."""
    host_field = host_field or {}
    paths = {name: _paths(name, path) for name, path in facts.items()}
    for name, by_host in values.items():
        if not isinstance(by_host, Mapping):
            raise ValueError("values.%s must map hosts to values, got %s" % (name, type(by_host).__name__))
    for name, key in host_field.items():
        if not isinstance(key, str) or not key or (name not in facts and name not in values):
            raise ValueError("host_field.%s must be a key name for a result named in facts or values, got %r"
                             % (name, key))
    out = {}
    for name, names in paths.items():
        default = missing.get(name)
        given = values.get(name) or {}
        out[name] = {host: plain(given[host] if given.get(host) is not None
                                 else host_value(hostvars, host, names, default) if host in hostvars else default)
                     for host in hosts}
    for name, by_host in values.items():
        if name in paths:
            continue
        default = missing.get(name)
        out[name] = {host: plain(default if by_host.get(host) is None else by_host[host]) for host in hosts}
    for name, key in host_field.items():
        out[name] = {host: tag_items(value, key, host) for host, value in out[name].items()}
    return out


def named_inputs(args, read):
    """``args`` with what ``hosts_from``, ``unreachable_from`` and each ``values`` entry given as text name read
    through ``read(path)`` (MISSING when the task's host has no such variable): the hosts of a meeting come from
    a result registered before (``commcheck_pair_perf_fleet.own``), so the role passes names, not templates."""
    args = dict(args)
    if (args.get("hosts") is None) == (args.get("hosts_from") is None):
        raise ValueError("give one of hosts and hosts_from (the variable that lists them), not %s"
                         % ("both" if args.get("hosts") is not None else "neither"))
    if args.get("hosts_from") is not None:
        args["hosts"] = named("hosts_from", args["hosts_from"], read, list)
    if args.get("unreachable_from") is not None:
        if args.get("unreachable"):
            raise ValueError("give one of unreachable and unreachable_from, not both")
        args["unreachable"] = named("unreachable_from", args["unreachable_from"], read, list)
    args["values"] = dict((name, named("values.%s" % name, by_host, read, Mapping) if isinstance(by_host, str)
                           else by_host) for name, by_host in (args.get("values") or {}).items())
    return args


def check_host_lists(args):
    """``hosts`` and ``unreachable``: inventory host names, each one line of text and not empty; a bad one is
    refused naming its index (``hosts[2]``), never dropped. They are data (the slices' posts), never a command."""
    for option in ("hosts", "unreachable"):
        for index, host in enumerate(args.get(option) or []):
            label = "%s[%d]" % (option, index)
            rules.check_text(label, host)
            if not host.strip():
                rules.fail(label, host, "is empty: name an inventory host or remove the item")


class ActionModule(ControllerAction):

    NAME = "clusterops.commcheck.fleet_facts"
    ARGUMENT_SPEC = ARGUMENT_SPEC
    FAILURES = (slice_meeting.SliceMeetingError, ValueError, OSError, AnsibleError)

    def decide(self, args, result, task_vars):
        args = named_inputs(args, lambda path: task_value(task_vars, path))
        check_host_lists(args)
        facts = gather(task_vars.get("hostvars") or {}, args["hosts"], args["facts"], args["values"], args["missing"],
                       host_field=args["host_field"])
        new_facts = self._take_defaults(args, task_vars)
        if args["slices"] > 1 and self._task.check_mode:
            # the other slices would wait for posts that check mode does not make
            raise ValueError("a run split into slices (commcheck_slices > 1) cannot run in check mode")
        met = slice_meeting.meet(args["directory"], args["run_id"], args["step"], args["slices"], args["hosts"],
                                 facts, unreachable=args["unreachable"], wait=args["wait"])
        result.update(changed=False, **met)
        if new_facts:
            result["ansible_facts"] = new_facts
        result["msg"] = ("%d host(s) of %d slice(s) at step %s" % (len(met["hosts"]), met["slices"], args["step"]))
        return result

    def _take_defaults(self, args, task_vars):
        labels = dict((option, option) for option in FROM_VARS)
        for option, (variable, default) in FROM_VARS.items():
            if args[option] is None:
                value = self._templar.template(task_vars.get(variable, default))
                args[option] = default if value in (None, "") else value
                labels[option] = variable
        for option, (low, high) in COUNTS.items():
            args[option] = rules.check_int(labels[option], args[option], low, high)
        if args["slices"] > 1 and not args["directory"]:
            args["directory"] = self._history_setting(task_vars, "history_dir").rstrip("/") + "/slices"
        if args["slices"] > 1 and not args["run_id"]:
            # the id every slice shares (COMMCHECK_RUN_ID, the AWX workflow job); set as the
            # commcheck_run_id fact, which the history callback takes for this run's lines
            args["run_id"] = self._history_setting(task_vars, "run_id")
            return {"commcheck_run_id": args["run_id"]}
        return {}

    def _history_setting(self, task_vars, setting):
        """The history lookup's ``setting`` (the slices of a run share their history, so they meet beside it)."""
        lookup = self._shared_loader_obj.lookup_loader.get(HISTORY_LOOKUP, loader=self._loader, templar=self._templar)
        return lookup.run([], variables=task_vars, setting=setting)[0]
