# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action clusterops.commcheck.collective: the module, with a planned run's arguments filled in on the controller.

With ``run`` (a run the collective_plan step planned), its ``args`` are the module's options, over the task's
(its module_defaults included), as a task's own arguments stand over module_defaults. This replaces templating
the whole ``args`` of the task, which Ansible warns against. The module then runs as it would without it.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from collections.abc import Mapping

from ansible.plugins.action import ActionBase

MODULE = "clusterops.commcheck.collective"


def run_args(args):
    """``args`` without ``run``, with the planned run's ``args`` over them; ValueError for a run without them."""
    full = dict(args)
    run = full.pop("run", None)
    if run is None:
        return full
    planned = run.get("args") if isinstance(run, Mapping) else None
    if not isinstance(planned, Mapping):
        raise ValueError("run is not a run the collective_plan step planned (it has no args)")
    full.update(planned)
    return full


class ActionModule(ActionBase):

    _supports_check_mode = True

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        try:
            args = run_args(self._task.args)
        except ValueError as exc:
            return dict(result, failed=True, msg="%s: %s" % (MODULE, exc))
        result.update(self._execute_module(module_name=MODULE, module_args=args, task_vars=task_vars))
        self._remove_tmp_path(self._connection._shell.tmpdir)
        return result
