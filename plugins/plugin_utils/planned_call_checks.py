# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The up-front check of the planned module calls: what passes it cannot fail later for the same reason.

``problems(spec, values, hosts)`` plans the calls every pair check of the roles checked would make
(``plugin_utils/planned_calls.py``) and runs each through its module's own checks: the module's argument
spec (as AnsibleModule applies it), then the same function the module runs on its arguments before anything
starts (``checked_call`` of the perftest and iperf3 modules: every side merged with the options its test
takes, then normalized). A refusal names the role variables that fed the refused argument. An option that
applies to only some tests and that none of the planned tests takes is not refused (a site's group_vars may set
it for the runs that have such tests): it is a note the caller shows as a warning (``unhonoured``).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import re

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

from ansible_collections.clusterops.commcheck.plugins.module_utils.options.option_rules import OptionError, show
from ansible_collections.clusterops.commcheck.plugins.module_utils.planning import per_test_options
from ansible_collections.clusterops.commcheck.plugins.module_utils.planning.schedule import ScheduleError
from ansible_collections.clusterops.commcheck.plugins.modules import iperf3 as iperf3_module
from ansible_collections.clusterops.commcheck.plugins.modules import perftest as perftest_module
from ansible_collections.clusterops.commcheck.plugins.plugin_utils import planned_calls as pc
from ansible_collections.clusterops.commcheck.plugins.plugin_utils import role_options

MODULES = {"perftest": perftest_module, "iperf3": iperf3_module}
FAMILIES = ("rdma", "gpudirect", "tcp")
_PAIR = dict(mutually_exclusive=[("role", "sides")], required_one_of=[("role", "sides")])


def module_problem(module_name, args):
    """What the module would refuse in ``args`` before running anything (its message), or None."""
    module = MODULES[module_name]
    result = ArgumentSpecValidator(module.argument_spec(), **_PAIR).validate(args)
    if result.error_messages:
        return result.error_messages[0]
    try:
        module.checked_call(result.validated_parameters)
    except OptionError as exc:
        return str(exc)
    return None


def _named(message, used):
    """The role variables behind the arguments ``message`` names (every variable of the call when none).

    ``sides[N]:`` only says which side; the sides' own variables count when the message names no argument.
    """
    text = re.sub(r"^sides\[\d+\]: ", "", message)
    named = [variables for argument, variables in sorted(used.items())
             if argument != "sides" and re.search(r"(?<![\w-])%s(?![\w-])" % re.escape(argument), text)]
    if not named:
        named = list(used.values())
    out = []
    for variables in named:
        out += [v for v in variables if v not in out]
    return out


def _shown(variables, values):
    return ", ".join("%s: %s" % (v, show(values.get(v))) for v in variables)


def _unhonoured(family, args, used, options, spec):
    """Per-test options the user set (not the default) that none of the planned tests takes."""
    problems = []
    for argument, applies_to in per_test_options.unhonoured(family, args, args.get("sides") or []):
        for variable in used.get(argument, []):
            if options.get(variable) != (spec.get(variable) or {}).get("default"):
                problems.append("%s: %s applies to %s; none of the tests planned from %s is one" % (
                    variable, show(options[variable]), applies_to, " and ".join(pc.PERFTEST_SIDE_VARIABLES[:2])))
    return problems


def converted(spec, values):
    """The variables of ``spec`` the calls are planned from, as the roles see them: given or default, converted
    by their type."""
    out = {}
    wanted = dict((option, spec[option]) for option in pc.VARIABLES if option in spec)
    for option, value in role_options.effective_values(wanted, values).items():
        good, problem = role_options.check_type(option, spec[option], value) if value is not None else (None, None)
        if problem is None:
            out[option] = good
    return out


def _planner_variables(family):
    """{the planner's word: [variable]} for the variables the sides of ``family`` are planned from."""
    variables = pc.IPERF3_SIDE_VARIABLES if family == "tcp" else pc.PERFTEST_SIDE_VARIABLES
    return dict((v.split("_", 2)[-1], [v]) for v in variables)


def problems(spec, values, hosts=None, notes=None):
    """The problems ("<variable>: <why>") of the calls the roles of ``spec`` plan with ``values``; []: none.

    ``notes`` (a list), when given, gets the per-test options the user set that no planned test takes."""
    options = converted(spec, values)
    out = []
    notes = [] if notes is None else notes
    for family in FAMILIES:
        if family == "gpudirect" and out:
            continue  # the same arguments as the rdma check's, from GPU memory: refused once
        try:
            calls = pc.planned_calls(family, options, hosts)
        except ScheduleError as exc:
            variables = _named(str(exc), _planner_variables(family))
            out.append("%s: the %s check cannot be planned: %s" % (_shown(variables, options), family, exc))
            continue
        for module_name, args, used in calls:
            message = module_problem(module_name, args)
            if message:
                out.append("%s: the %s module would refuse it in the planned %s check: %s" % (
                    _shown(_named(message, used), options), module_name, family, message))
            else:
                notes.extend(note for note in _unhonoured(family, args, used, options, spec) if note not in notes)
    return out
