# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Classes of hostile values, and the split of a table of cases into the fast tier and the full tier.

The rules that refuse hostile values are tested value by value where they live
(option_rules, the tools' option grammars, the kubectl settings' check, the
role-option kit). What a plugin test adds is that each option is wired to its
rule and that the failure names the option: one value of each class shows it.
The fast tier runs the first value of each class of each option, the full tier
(``pytest -m full``) every other value of the table.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import collections
import re

import pytest

from ansible_collections.clusterops.commcheck.plugins.module_utils.options import option_rules

SHELL_OR_BLANK = re.compile(r"[;$`|&()<>\s]")


def value_class(value):
    """The class of a hostile value: empty, huge, control character, flag, shell or blank, traversal, malformed
    (text); negative, zero, positive (numbers); a list or mapping by the classes of what it holds."""
    if isinstance(value, dict):
        return "mapping of %s" % "+".join(sorted(set(value_class(v) for item in value.items() for v in item)))
    if isinstance(value, (list, tuple)):
        return "list of %s" % "+".join(sorted(set(value_class(v) for v in value)))
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, (int, float)):
        return "negative" if value < 0 else "zero" if value == 0 else "positive"
    checks = [("empty", value == ""), ("huge", len(value) > 1000),
              ("control character", option_rules.CONTROL_CHARACTERS.search(value)), ("flag", value.startswith("-")),
              ("shell or blank", SHELL_OR_BLANK.search(value)), ("traversal", ".." in value)]
    return next((name for name, hit in checks if hit), "malformed")


def tiers(cases, ids=str):
    """``cases`` ((option, case, value): ``case`` what a test runs, ``value`` the hostile value in it) as
    (option, [case, ...]) parameters: per option the first case of each class of value in the fast tier, and
    one more parameter, marked ``full``, with the option's other cases (the exhaustive crossing)."""
    fast, full, seen = collections.OrderedDict(), collections.OrderedDict(), set()
    for option, case, value in cases:
        key = (option, value_class(value))
        (full if key in seen else fast).setdefault(option, []).append(case)
        seen.add(key)
    return [pytest.param(option, found, id=ids(option)) for option, found in fast.items()] + [
        pytest.param(option, found, id=ids(option) + "-all", marks=pytest.mark.full) for option, found in full.items()]
