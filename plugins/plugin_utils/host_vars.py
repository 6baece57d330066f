# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Reading hosts' variables, and the run's, on the controller, once, in Python (fleet_facts, check_plan,
collective_plan, discovery_results, run_lock).

A value that holds no template (a module's registered result, a fact) is
taken from the host's variables as they are (``hostvars.raw_get``): templating
it would only walk every item of it to give the same value back. A value that
holds a template is templated in the host's own context (``hostvars[host]``).

``host_value(hostvars, host, paths, missing)`` reads the first of several variables a host has;
``HostReader(hostvars, run_value)`` reads one host's own variable (``own``) or, where the host has none, the
run's (``own_or_run``: play, role and extra variables, from ``run_value``), as a role's
``hostvars[host].x | default(x | default(d))`` did.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json
from collections.abc import Mapping

from ansible_collections.clusterops.commcheck.plugins.plugin_utils.controller_action import has_template

MISSING = object()


def read_var(host_vars, path, missing=None):
    """The value of ``path`` (``name`` or ``name.key.key``) in one host's variables; ``missing`` when it has none."""
    value = host_vars
    for part in path.split("."):
        if isinstance(value, Mapping) or hasattr(value, "__getitem__"):
            try:
                value = value[part]
                continue
            except (KeyError, TypeError, IndexError):
                pass
        return missing
    return missing if value is None else value


def read_first(host_vars, paths, missing=None):
    """The value of the first of ``paths`` that the host has (not None); ``missing`` when it has none."""
    for path in paths:
        value = read_var(host_vars, path, MISSING)
        if value is not MISSING:
            return value
    return missing


def raw_vars(hostvars, host):
    """The host's own variables untemplated (inventory, facts, registered results, extra variables), or None."""
    raw_get = getattr(hostvars, "raw_get", None)
    raw = raw_get(host) if raw_get is not None else None
    return raw if isinstance(raw, Mapping) else None


def host_value(hostvars, host, paths, missing):
    """The value of the first of ``paths`` that ``host`` has; read from its untemplated variables when none of
    the variables named holds a template, else templated in the host's own context. ``missing`` when it has none."""
    raw = raw_vars(hostvars, host)
    if raw is not None and not any(has_template(raw.get(path.split(".")[0])) for path in paths):
        return read_first(raw, paths, missing)
    if host not in hostvars:
        return missing
    return read_first(hostvars[host], paths, missing)


def has_own(hostvars, host, name):
    """True when ``host`` sets ``name`` itself (its inventory, a fact, an extra variable), not only the play."""
    raw = raw_vars(hostvars, host)
    if raw is not None:
        return name in raw
    return host in hostvars and name in hostvars[host]


def plain(value):
    """Templated values as JSON types (what a post to another controller can carry)."""
    return json.loads(json.dumps(value, default=str))


def dig(value, path):
    """The value at ``path`` (``name`` or ``name.key.key``) inside ``value``; MISSING when a key is not there."""
    for part in path.split("."):
        if not isinstance(value, Mapping) and not hasattr(value, "__contains__"):
            return MISSING
        try:
            if part not in value:
                return MISSING
            value = value[part]
        except (KeyError, TypeError):
            return MISSING
    return value


class HostReader(object):

    def __init__(self, hostvars, run_value):
        self.hostvars = hostvars if hostvars is not None else {}
        self.run_value = run_value

    def own(self, host, path, default=MISSING):
        """``host``'s own variable at ``path`` (None is a value); ``default`` when it has none."""
        raw = raw_vars(self.hostvars, host)
        name = path.split(".")[0]
        if raw is not None and name in raw and not has_template(raw.get(name)):
            value = dig(raw, path)
        elif host in self.hostvars:
            value = dig(self.hostvars[host], path)
        else:
            value = MISSING
        return default if value is MISSING else value

    def own_or_run(self, host, name, default=None, truthy=False):
        """``host``'s own ``name``, else the run's, else ``default``; with ``truthy``, an empty or false value
        counts as not given (Jinja's ``default(x, true)``)."""
        for value in (self.own(host, name), self.run_value(name, MISSING)):
            if value is not MISSING and (value or not truthy):
                return value
        return default


def overlay_role_values(args, table, role_value, empty_is_unset=()):
    """``args`` (without ``role_options``) with each argument of ``table`` (argument -> variable name, or a tuple of
    names, the first set one wins) replaced by the role's value where that is set, as a task's own arguments replace
    the play's module_defaults; ``role_value(name)`` is a variable's templated value or None. An argument of
    ``empty_is_unset`` whose value is empty keeps the task's value (or the module's default)."""
    full = dict((name, value) for name, value in args.items() if name != "role_options")
    for argument, names in table.items():
        names = (names,) if isinstance(names, str) else names
        value = next((found for found in (role_value(name) for name in names) if found is not None), None)
        if value is not None and not (argument in empty_is_unset and not value):
            full[argument] = value
    return full
