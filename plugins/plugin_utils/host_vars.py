# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Reading hosts' variables on the controller, once, in Python (fleet_facts, collective_plan, discovery_results).

A value that holds no template (a module's registered result, a fact) is
taken from the host's variables as they are (``hostvars.raw_get``): templating
it would only walk every item of it to give the same value back. A value that
holds a template is templated in the host's own context (``hostvars[host]``).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json
from collections.abc import Mapping

from ansible_collections.clusterops.commcheck.plugins.plugin_utils.controller_action import has_template

_MISSING = object()


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
        value = read_var(host_vars, path, _MISSING)
        if value is not _MISSING:
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
