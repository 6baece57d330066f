# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A controller action's input named, not templated: the role task gives the name of a variable of the task's host
(``commcheck_pair_perf_fleet.own``: a key of a result a run-once task registered before) and the action reads it
once, in Python (fleet_facts ``hosts_from``, record ``records_from``; issue 35, roles that only call).

``task_value(task_vars, path)`` reads it as fleet_facts reads every host's variables (``host_vars.host_value``),
else from the play's magic variables; ``named(option, path, read, kind)`` refuses a name that is not one, that the
host lacks, or whose value is not of the kind the option takes, naming the option.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import re

from ansible_collections.clusterops.commcheck.plugins.module_utils.options import option_rules as rules
from ansible_collections.clusterops.commcheck.plugins.plugin_utils.host_vars import MISSING, host_value, read_var

# a variable of the task's host (``name`` or ``name.key.key``)
VARIABLE_PATH = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)*$")


def task_value(task_vars, path):
    """The value of ``path`` for the task's host (``inventory_hostname``, also when the task is delegated): its
    variables (a registered result), else the play's magic variables (``ansible_play_hosts_all``), which hostvars
    do not hold; MISSING when neither has it (or it is null)."""
    value = host_value(task_vars.get("hostvars") or {}, task_vars.get("inventory_hostname"), [path], MISSING)
    return read_var(task_vars, path, MISSING) if value is MISSING else value


def named(option, path, read, kind):
    """The value of the variable ``path`` names, read with ``read(path)`` (MISSING when there is none); it must be a
    ``kind`` (list or Mapping). Raises OptionError naming ``option``."""
    rules.check_text(option, path)
    if not VARIABLE_PATH.match(path):
        rules.fail(option, path, "must name a variable of the task's host (name or name.key), e.g. a registered "
                                 "result's key")
    value = read(path)
    if value is MISSING:
        rules.fail(option, path, "names a variable the task's host does not have (a task before registers it)")
    if not isinstance(value, kind):
        rules.fail(option, path, "names a %s, not a %s" % (type(value).__name__,
                                                           "list" if kind is list else "mapping"))
    return value
