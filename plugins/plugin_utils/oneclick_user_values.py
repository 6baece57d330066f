# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The roles' declared options, and which of a check role's own variables the user set (issue 35: what the user
set wins over what the one-click check decides).

A variable counts as set by the user when the host the step runs for has it at the host level (its inventory,
facts or an extra variable: ``hostvars.raw_get``), or when the run's value (play variables, role parameters...)
differs from the default the check's role declares in its ``meta/argument_specs.yml``: a play variable equal to
that default cannot be told from the default, and is the default's to fill.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import functools
import os

import yaml

from ansible_collections.clusterops.commcheck.plugins.plugin_utils.host_vars import MISSING, has_own

ROLES_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "roles")
# libyaml's loader where PyYAML has it: the pure-Python one takes most of validate_options' CPU (docs/benchmarks.md)
SPEC_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_specs(roles, roles_dir=ROLES_DIR):
    """{role: the argument_specs mapping of its meta/argument_specs.yml}."""
    specs = {}
    for role in roles:
        path = os.path.join(roles_dir, role, "meta", "argument_specs.yml")
        with open(path) as handle:
            specs[role] = (yaml.load(handle, Loader=SPEC_LOADER) or {}).get("argument_specs") or {}
    return specs


@functools.lru_cache(maxsize=None)
def declared_defaults(role, entry_point="main"):
    """{option: its declared default} of ``role``'s entry point (options without a default are left out)."""
    options = ((load_specs([role])[role].get(entry_point) or {}).get("options") or {})
    return dict((name, spec["default"]) for name, spec in options.items() if "default" in (spec or {}))


def _same(left, right):
    try:
        return bool(left == right)
    except Exception:  # pylint: disable=broad-except
        return False


def user_values(reader, host, role, names):
    """{name: value} of the variables ``names`` of ``role`` that the user set, read for ``host`` (a ``HostReader``:
    the run's value first, else the host's own)."""
    defaults = declared_defaults(role)
    given = {}
    for name in names:
        own = has_own(reader.hostvars, host, name)
        value = reader.run_value(name, MISSING)
        if value is MISSING and own:
            value = reader.own(host, name)
        if value is MISSING:
            continue
        if own or not _same(value, defaults.get(name, MISSING)):
            given[name] = value
    return given
