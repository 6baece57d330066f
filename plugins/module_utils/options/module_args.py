# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A module's or an action's raw arguments, checked against their types before Ansible converts them.

Ansible's own conversion breaks on some values instead of refusing them:
``inf`` for an int option raises OverflowError, ``10**400`` for a float
option too, the string ``1e999999`` makes int() build a number of a million
digits (the module hangs), and a scalar given to an option with sub-options
raises TypeError inside Ansible. Other values it turns silently into what
nobody meant: ``true`` into 1 for a number; ``true``, ``1.5`` or a list into
the text ``True``, ``1.5``, ``['a']`` for a text option.

``args_problem`` finds these with the checks of ``option_rules`` (what an
integer, a finite number or a text is) and names the option;
``checked_module`` fails the task with it before AnsibleModule converts
anything. The ranges and names each option allows stay the module's checks.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible.module_utils import basic
from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.validation import check_type_dict

from ansible_collections.clusterops.commcheck.plugins.module_utils.options import option_rules
from ansible_collections.clusterops.commcheck.plugins.module_utils.options.option_rules import OptionError, fail

# What a C long long holds: every tool reads its numbers into one at most.
INT_LOW, INT_HIGH = -2 ** 63, 2 ** 63 - 1
TEXT_TYPES = ("str", "path")


def checked_module(argument_spec, **kwargs):
    """``AnsibleModule(argument_spec, **kwargs)`` once the raw arguments pass ``args_problem``; else the task fails."""
    # None while ansible-test reads the argument spec (it stubs the loading)
    params = basic._load_params() or {}
    problem = args_problem(argument_spec, params)
    if problem:
        refuse(argument_spec, params, problem)
    return AnsibleModule(argument_spec=argument_spec, **kwargs)


def controller_only(name, argument_spec):
    """Fail the task run on a host: the action plugin ``name`` runs instead of the module of that name.

    Its arguments are checked first, so a bad one is named as the action would name it.
    """
    # The action reads what only the controller has: every host's variables, its directories, the callback's state.
    module = checked_module(argument_spec=argument_spec, supports_check_mode=True)
    module.fail_json(msg="clusterops.commcheck.%s runs as an action plugin on the controller; "
                         "it cannot run as a module on a host" % name)


def refuse(argument_spec, params, problem):
    """Fail the task with ``problem``, hiding what the spec's no_log options hide.

    The module that reports it gives its options no type: a type would
    convert, or trip on, the value refused.
    """
    untyped = dict((name, _untyped(spec)) for name, spec in argument_spec.items())
    module = AnsibleModule(argument_spec=untyped, supports_check_mode=True)
    module.no_log_values.update(hidden_values(argument_spec, params))
    module.fail_json(msg=problem)


def _untyped(spec):
    kept = dict((key, spec[key]) for key in ("aliases", "no_log") if key in spec)
    return dict(kept, type="raw")


def args_problem(argument_spec, params):
    """The first value of ``params`` that its option's type cannot take, as a message naming the option; or None."""
    try:
        check_args(argument_spec, params or {})
    except OptionError as exc:
        return str(exc)
    return None


def check_args(argument_spec, params, prefix=""):
    """Raise OptionError for the first value of ``params`` (a mapping) that its option's type cannot take."""
    for name, spec in argument_spec.items():
        key, value = given(params, name, spec)
        if value is not None:
            check_value(prefix + key, spec, value)
        if spec.get("required") and spec.get("type", "str") in TEXT_TYPES and _named_but_empty(params, name, spec):
            # Ansible takes null and '' for a required option as given; the plugin would go on with nothing
            fail(prefix + name, params.get(name), "is required: give a value that is not empty")


def _named_but_empty(params, name, spec):
    """The option is in ``params`` (under its name or an alias) with null, '' or only blanks."""
    present = [params[key] for key in [name] + list(spec.get("aliases") or []) if key in params]
    return bool(present) and all(value is None or (isinstance(value, str) and not value.strip())
                                 for value in present)


def given(params, name, spec):
    """(the key, the value) of option ``name`` in ``params``, under its name or an alias; (name, None) if unset."""
    for key in [name] + list(spec.get("aliases") or []):
        if params.get(key) is not None:
            return key, params[key]
    return name, None


def check_value(label, spec, value):
    kind = spec.get("type", "str")
    if spec.get("options"):
        for where, item in sub_mappings(label, kind, value):
            check_args(spec["options"], item, where + ".")
        return
    if kind == "list":
        kind, items = spec.get("elements"), list_items(label, value)
    else:
        items = [(label, value)]
    for where, item in items:
        check_scalar(where, kind, item)
        check_choice(where, kind, spec.get("choices"), item)


def check_scalar(label, kind, value):
    """One value of type ``kind``: an integer of a C long long, a finite number, or a text (a string or an integer)."""
    if kind == "int":
        option_rules.check_int(label, value, INT_LOW, INT_HIGH)
    elif kind == "float":
        option_rules.check_number(label, value, float("-inf"), float("inf"))
    elif kind in TEXT_TYPES and not option_rules.takes_as_text(value):
        fail(label, value, "is not a string (quote it if it is meant as text)")
    elif kind == "dict":
        # a mapping, or text Ansible reads as one (JSON, key=value words); Ansible's own message names no item
        _mapping(label, value, "must be a mapping")


def check_choice(label, kind, choices, value):
    """A text one of ``choices`` (Ansible's own message would quote a value of any length)."""
    if choices and kind in TEXT_TYPES and str(value) not in [str(choice) for choice in choices]:
        fail(label, value, "must be one of %s" % ", ".join(str(choice) for choice in choices))


def list_items(label, value):
    """(label[N], item) of a list option's value, read as Ansible reads it (a string splits at commas)."""
    if isinstance(value, str):
        value = value.split(",")
    elif not isinstance(value, list):
        value = [value]
    return [("%s[%d]" % (label, num), item) for num, item in enumerate(value)]


def sub_mappings(label, kind, value):
    """(label or label[N], mapping) of an option with sub-options: a mapping, or for a list a list of them.

    A string is read as Ansible reads it (JSON, or ``key=value`` words).
    """
    if kind != "list":
        return [(label, _mapping(label, value))]
    items = value if isinstance(value, list) else [value]
    return [("%s[%d]" % (label, num), _mapping("%s[%d]" % (label, num), item)) for num, item in enumerate(items)]


def _mapping(label, value, why="must be a mapping of its sub-options"):
    if isinstance(value, str):
        try:
            value = check_type_dict(value)
        except (TypeError, ValueError):
            pass
    if not isinstance(value, dict):
        fail(label, value, why)
    return value


def hidden_values(argument_spec, params):
    """The text of every value of a no_log option in ``params``, sub-options included, whatever its shape."""
    hidden = set()
    for name, spec in argument_spec.items():
        _key, value = given(params, name, spec)
        if value is None:
            continue
        if spec.get("no_log"):
            hidden.update(_texts(value))
        if spec.get("options"):
            for item in value if isinstance(value, list) else [value]:
                if isinstance(item, dict):
                    hidden.update(hidden_values(spec["options"], item))
    return hidden


def _texts(value):
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, list):
        return set(text for item in value for text in _texts(item))
    if value is None or isinstance(value, bool) or value == "":
        return set()
    return set([str(value)])
