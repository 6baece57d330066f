# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Import this collection's filter plugins once, in the controller's main process.

Ansible forks a worker process for every task and host. In a fresh worker, the
first use of any filter of a collection makes Ansible's Jinja2 plugin loader
import every file of the collection's plugins/filter (a file may hold many
filters), about 0.2 s of CPU per worker on the 2-core build machine, paid again
by the next worker. Modules imported before the fork are inherited, and the
loader takes a module that is already in sys.modules as it is. So the history
callback, which runs in the main process, imports them when a playbook starts
(docs/benchmarks.md has the figures).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import importlib
import pkgutil

FILTER_PACKAGE = "ansible_collections.clusterops.commcheck.plugins.filter"


def preload_filters(package=FILTER_PACKAGE, import_module=importlib.import_module):
    """Import every module of the filter package: ([module names imported], {module name: error text}).

    A module that fails to import is reported, not raised: a worker that needs it then says why, as
    without this."""
    loaded, failed = [], {}
    try:
        pkg = import_module(package)
    except Exception as exc:  # pylint: disable=broad-except
        return loaded, {package: "%s: %s" % (type(exc).__name__, exc)}
    for _finder, name, is_package in pkgutil.iter_modules(getattr(pkg, "__path__", []), prefix=package + "."):
        if is_package:
            continue
        try:
            import_module(name)
        except Exception as exc:  # pylint: disable=broad-except
            failed[name] = "%s: %s" % (type(exc).__name__, exc)
            continue
        loaded.append(name)
    return loaded, failed
