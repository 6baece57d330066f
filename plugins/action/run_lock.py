# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action clusterops.commcheck.run_lock: the module, with who takes the host filled in on the controller.

The module runs on the host and cannot see the controller. This plugin
writes the controller into the lock (host name, boot id, the pid of
``ansible-playbook`` and its start time, the user) and, when the host is
held by a run of this controller whose ``ansible-playbook`` is gone (killed
with ``kill -9``), runs the module once more telling it that run is dead, so
its lock is taken over at once instead of after its lease.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import getpass
import os
import socket

from ansible.plugins.action import ActionBase

from ansible_collections.clusterops.commcheck.plugins.module_utils.commands.run_lock import (
    HELD,
    controller_alive,
    process_start,
)

MODULE = "clusterops.commcheck.run_lock"


def _boot_id(path="/proc/sys/kernel/random/boot_id"):
    try:
        with open(path) as handle:
            return handle.read().strip()
    except (IOError, OSError):
        return None


def this_controller():
    """Who runs this play: Ansible's worker processes are forked by ``ansible-playbook``, their parent."""
    pid = os.getppid()
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = str(os.geteuid())
    return {"host": socket.gethostname(), "boot_id": _boot_id(), "pid": pid, "pid_start": process_start(pid),
            "user": user}


class ActionModule(ActionBase):

    _supports_check_mode = True

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        args = dict(self._task.args)
        me = this_controller()
        args["controller"] = me
        result.update(self._execute_module(module_name=MODULE, module_args=args, task_vars=task_vars))
        holder = result.get("holder") or {}
        if result.get("state") == HELD and holder.get("run_id") and \
                controller_alive(holder.get("controller"), me) is False:
            args["stale_runs"] = [holder.get("run_id")]
            result = self._execute_module(module_name=MODULE, module_args=args, task_vars=task_vars)
        return result
