# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action clusterops.commcheck.validate_options: check every variable of roles before anything runs.

Runs on the controller only and never contacts a host. Reads the roles'
meta/argument_specs.yml, takes the values the task sees (the current host's,
every precedence level) plus the host-level values of every other host of the
play, and checks them with ``plugin_utils.role_options`` (types and choices
of the specs, then the rule of each variable, then the module calls the pair
checks would make: ``plugin_utils/planned_call_checks.py``). Any problem fails the task
with one message naming every bad option.

Which value of another host is checked: a variable the current host gets
from the host level (inventory, facts, extra vars) or from a default can
differ per host; for those, every other host's own inventory value (or,
when it has none, the default) is checked in that host's context. A variable
the play, a role or a task sets (above the inventory) is the same for every
host and is checked once.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from collections.abc import Mapping

import yaml

from ansible.errors import AnsibleError
from ansible.module_utils.common.collections import is_sequence

from ansible_collections.clusterops.commcheck.plugins.module_utils.options.option_rules import show
from ansible_collections.clusterops.commcheck.plugins.module_utils.planning.families import FAMILY_VAR
from ansible_collections.clusterops.commcheck.plugins.plugin_utils import planned_call_checks, role_options
from ansible_collections.clusterops.commcheck.plugins.plugin_utils.inventory_check import play_inventory_problems
from ansible_collections.clusterops.commcheck.plugins.plugin_utils.oneclick_user_values import (  # noqa: F401 pylint: disable=unused-import
    ROLES_DIR,
    SPEC_LOADER,
    load_specs,
)
from ansible_collections.clusterops.commcheck.plugins.plugin_utils.controller_action import (
    ControllerAction,
    has_template,
)

ARGUMENT_SPEC = dict(
    roles=dict(type="list", elements="str", required=True),
    entry_point=dict(type="str", default="main"),
)
FQCN_PREFIX = "clusterops.commcheck."
_MISSING = object()


def role_name(name):
    """'clusterops.commcheck.discover' or 'discover' -> 'discover'."""
    return name[len(FQCN_PREFIX):] if name.startswith(FQCN_PREFIX) else name


def plain(value):
    """A templated value as builtin types (dict, list, str, int, float, bool, None)."""
    if isinstance(value, Mapping):
        return dict((plain(k), plain(v)) for k, v in value.items())
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, str):
        return str(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if is_sequence(value):
        return [plain(v) for v in value]
    return value


def internal_variable_problems(task_vars):
    """The variable the pair-check roles set for the task files they share, given by the user: above every role's
    value (extra vars), it would run every pair check as its family."""
    if FAMILY_VAR not in task_vars:
        return []
    return ["%s: is set by the roles rdma_perf and tcp_perf for the task files they share and is not an option; "
            "remove it (given, it would run every pair check as one family)" % FAMILY_VAR]


def _same(left, right):
    try:
        return bool(left is right or left == right)
    except Exception:  # pylint: disable=broad-except
        return False


class ActionModule(ControllerAction):

    NAME = "clusterops.commcheck.validate_options"
    ARGUMENT_SPEC = ARGUMENT_SPEC

    def decide(self, args, result, task_vars):
        roles = [role_name(r) for r in args["roles"]]
        unknown = [(index, r) for index, r in enumerate(roles) if r not in role_options.ROLES]
        if not roles or unknown:
            # the first role that is not one, named by its index
            where, shown = ("roles[%d]" % unknown[0][0], show(args["roles"][unknown[0][0]])) if unknown \
                else ("roles", "none")
            result.update(failed=True, msg="clusterops.commcheck.validate_options: %s must be one of %s, got %s"
                          % (where, ", ".join(role_options.ROLES), shown))
            return result
        try:
            specs = load_specs(role_options.ROLES)
        except (OSError, IOError, ValueError, yaml.YAMLError) as exc:  # ValueError: UnicodeDecodeError
            result.update(failed=True, msg="clusterops.commcheck.validate_options: cannot read the argument specs: %s"
                          % exc)
            return result
        spec = role_options.merge_specs(specs, roles, args["entry_point"])
        if not spec:
            result.update(failed=True, msg="clusterops.commcheck.validate_options: the roles %s have no entry point %s"
                          % (", ".join(roles), show(args["entry_point"])))
            return result
        all_specs = role_options.merge_specs(specs, role_options.ROLES)
        notes = []
        problems, hosts = self._problems(spec, all_specs, task_vars, notes)
        problems += play_inventory_problems(roles, task_vars, lambda value: plain(self._templar.template(value)))
        problems = internal_variable_problems(task_vars) + problems
        result.update(changed=False, roles=roles, hosts=len(hosts))
        if problems:
            result.update(failed=True, msg=role_options.message(problems), problems=problems)
        else:
            result.update(checked=sorted(spec),
                          msg="%d option(s) of %s checked on %d host(s)" % (len(spec), ", ".join(roles), len(hosts)))
            if notes:
                result["warnings"] = ["%s (it is not used in this run)" % note for note in notes]
        return result

    # ------------------------------------------------------------ values

    def _template(self, option, value, problems):
        try:
            return plain(self._templar.template(value))
        except AnsibleError as exc:
            problems.append("%s: cannot be evaluated: %s" % (option, str(exc).splitlines()[0][:300]))
            return _MISSING

    def _current_values(self, spec, task_vars, problems):
        values = {}
        for option in spec:
            if option in task_vars:
                value = self._template(option, task_vars[option], problems)
                if value is not _MISSING:
                    values[option] = value
        return values

    @staticmethod
    def _host_level(option, spec, task_vars, raw_current):
        """True when the current host's value of ``option`` is host level (or a default), so others may differ."""
        given = task_vars.get(option, _MISSING)
        if option in raw_current:
            return _same(given, raw_current[option])
        return given is _MISSING or _same(given, spec[option].get("default"))

    def _other_hosts(self, spec, task_vars):
        """{host: {option: value (or _MISSING: the default)}} for the hosts whose own values differ."""
        hostvars = task_vars.get("hostvars")
        current = task_vars.get("inventory_hostname")
        hosts = [h for h in (task_vars.get("ansible_play_hosts_all") or []) if h != current]
        if not hosts or hostvars is None or not hasattr(hostvars, "raw_get"):
            return {}
        raw_current = hostvars.raw_get(current)
        if not isinstance(raw_current, Mapping):
            return {}
        options = [o for o in spec if self._host_level(o, spec, task_vars, raw_current)]
        differ = {}
        for host in hosts:
            raw = hostvars.raw_get(host)
            if not isinstance(raw, Mapping):
                continue
            own = {}
            for option in options:
                mine, theirs = raw_current.get(option, _MISSING), raw.get(option, _MISSING)
                if theirs is _MISSING and mine is _MISSING:
                    continue
                if theirs is _MISSING:
                    own[option] = _MISSING
                elif mine is _MISSING or not _same(mine, theirs) or has_template(theirs):
                    own[option] = theirs
            if own:
                differ[host] = own
        return differ

    def _host_values(self, host, own, base, spec, task_vars, problems):
        values = dict(base)
        host_vars = None
        for option, raw in own.items():
            if raw is _MISSING:
                values.pop(option, None)
                if role_options.has_plain_default(spec[option]):
                    values[option] = spec[option]["default"]
                continue
            try:
                if host_vars is None:
                    host_vars = task_vars["hostvars"][host]
                values[option] = plain(host_vars[option])
            except (AnsibleError, KeyError) as exc:
                values.pop(option, None)
                problems.append("%s: cannot be evaluated: %s" % (option, str(exc).splitlines()[0][:300]))
        return values

    # ------------------------------------------------------------ problems

    def _problems(self, spec, all_specs, task_vars, notes):
        current = task_vars.get("inventory_hostname", "localhost")
        hosts = list(task_vars.get("ansible_play_hosts_all") or [])
        if current not in hosts:
            hosts.insert(0, current)
        known = list(((task_vars.get("groups") or {}).get("all")) or []) + hosts

        memo = {}
        base_problems = []
        base = self._current_values(spec, task_vars, base_problems)
        base_problems += role_options.check_values(spec, base, known, all_specs, memo)
        base_problems = base_problems or planned_call_checks.problems(spec, base, hosts, notes)
        by_host = {current: base_problems}
        seen = {}
        for host, own in self._other_hosts(spec, task_vars).items():
            problems = []
            values = self._host_values(host, own, base, spec, task_vars, problems)
            key = repr(sorted((k, v) for k, v in values.items() if not _same(v, base.get(k, _MISSING))))
            if key not in seen:
                seen[key] = (role_options.check_values(spec, values, known, all_specs, memo)
                             or planned_call_checks.problems(spec, values, hosts, notes))
            by_host[host] = problems + seen[key]
        for host in hosts:
            by_host.setdefault(host, base_problems)
        return role_options.merge_host_problems(by_host, hosts), hosts
