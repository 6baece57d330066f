# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Reading the variables of every host, and of the run, in a controller action (one Python pass over hostvars).

``HostReader(hostvars, run_value)``: ``own(host, name)`` is a host's own variable (inventory, facts, registered
results: what ``hostvars[host]`` holds), templated in the host's context only when it holds a template (a fact
or a module's result is taken as it is: templating it would walk every item to give it back unchanged);
``own_or_run(host, name, default)`` is a host's own value, else the run's (play, role, extra variables, from
``run_value``), else ``default``: the ``hostvars[host].x | default(x | default(d))`` of a role's Jinja.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from collections.abc import Mapping

from ansible_collections.clusterops.commcheck.plugins.plugin_utils.controller_action import has_template

MISSING = object()


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
        raw_get = getattr(self.hostvars, "raw_get", None)
        raw = raw_get(host) if raw_get is not None else None
        name = path.split(".")[0]
        if isinstance(raw, Mapping) and name in raw and not has_template(raw.get(name)):
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
