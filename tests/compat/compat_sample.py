# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""pytest plugin of ``make compat``: at most N cases of each parametrized test function.

The version matrix (tests/compat/matrix.py) runs the unit tests that use
ansible-core on every supported core. What differs between cores is how a
class of values goes through Ansible (a null, a number given as text, a
template), not each option the hostile-value tests try it on, so a few cases
of each test function, spread over its parameter list, find what a core does
differently; ``make test`` runs every case on the main core. Unparametrized
tests always run. The cases left out are reported as deselected, never as
passed.

Load it with ``-p compat_sample --compat-cases N`` (tests/compat on the path).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type


def pytest_addoption(parser):
    parser.addoption("--compat-cases", type=int, default=0, metavar="N",
                     help="run at most N cases of each parametrized test function, spread over its parameters "
                          "(0: all)")


def spread(count, keep):
    """The indexes of ``keep`` of ``count`` cases, first and last included, evenly apart."""
    if keep <= 0 or count <= keep:
        return set(range(count))
    if keep == 1:
        return {0}
    return set(round(i * (count - 1) / float(keep - 1)) for i in range(keep))


def function_id(item):
    """The test function an item runs (its node id without the parameters)."""
    return item.nodeid.split("[", 1)[0]


def pytest_collection_modifyitems(config, items):
    keep = config.getoption("--compat-cases")
    if not keep:
        return
    cases = {}
    for item in items:
        cases.setdefault(function_id(item), []).append(item)
    kept_items = set()
    for group in cases.values():
        kept_items.update(id(group[i]) for i in spread(len(group), keep))
    selected = [item for item in items if id(item) in kept_items]
    deselected = [item for item in items if id(item) not in kept_items]
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = selected
