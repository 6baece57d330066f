# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action clusterops.commcheck.quarantine: the module, with ``role_options`` read on the controller.

With ``role_options: true`` every option the task does not give comes from the
quarantine role's variables (the rule for each is ``role_args``); the
findings, when ``commcheck_quarantine_findings`` is empty, are the culprits of
the records the run published. The module then runs as it would without it.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import culprits
from ansible_collections.clusterops.commcheck.plugins.plugin_utils.host_vars import host_value, overlay_role_values
from ansible_collections.clusterops.commcheck.plugins.plugin_utils.role_options_action import (
    RoleArgsError,
    RoleOptionsAction,
)

MODULE = "clusterops.commcheck.quarantine"
# argument: the role variable it is read from
ROLE_VARIABLES = dict([(name, "commcheck_quarantine_" + name) for name in (
    "backend", "hosts", "reason", "components", "node_names", "state", "dry_run", "taint", "taint_effect",
    "cordon", "drain", "drain_timeout", "kubeconfig")] + [("kube_context", "commcheck_quarantine_context")])
# set, but empty: the argument is not given
EMPTY_IS_UNSET = ("kubeconfig", "kube_context")


def role_findings(role_value, published_records):
    """``commcheck_quarantine_findings`` when it holds any, else the culprits of the run's published records."""
    findings = role_value("commcheck_quarantine_findings")
    if findings:
        return findings
    records = published_records()
    if records is None:
        return culprits.culprits([])
    if not isinstance(records, (list, tuple)):
        raise TypeError("the input must be a list of records, got %s" % type(records).__name__)
    return culprits.culprits(list(records))


def role_args(args, role_value, published_records):
    """``args`` with each argument the role's variables set replaced by their value, as the task's own arguments
    replaced the play's module_defaults; ``role_value(name)`` is a variable's templated value or None,
    ``published_records()`` localhost's ``commcheck_run_records`` or None."""
    full = overlay_role_values(args, ROLE_VARIABLES, role_value, EMPTY_IS_UNSET)
    full["findings"] = role_findings(role_value, published_records)
    return full


class ActionModule(RoleOptionsAction):

    MODULE = MODULE

    def role_args(self, args, task_vars):
        try:
            return role_args(args, lambda name: self.role_value(task_vars, name),
                             lambda: self._published_records(task_vars))
        except (TypeError, ValueError, KeyError) as exc:
            raise RoleArgsError("the culprits of the run's records: %s" % exc)

    @staticmethod
    def _published_records(task_vars):
        return host_value(task_vars.get("hostvars") or {}, "localhost", ["commcheck_run_records"], None)
