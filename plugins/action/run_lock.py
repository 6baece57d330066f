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

``state: held`` runs on the controller only: run once after every host was
taken, it fails naming the runs that hold hosts of the play (the message of
each host's registered ``commcheck_run_lock`` that failed).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import getpass
import os
import socket

from ansible.module_utils.parsing.convert_bool import boolean
from ansible.plugins.action import ActionBase

from ansible_collections.clusterops.commcheck.plugins.module_utils.commands.run_lock import (
    HELD,
    controller_alive,
    process_start,
)
from ansible_collections.clusterops.commcheck.plugins.plugin_utils.host_vars import HostReader, overlay_role_values

MODULE = "clusterops.commcheck.run_lock"
TAKEN_VAR = "commcheck_run_lock"


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


def held_messages(hostvars, hosts, taken=TAKEN_VAR):
    """The message of each of ``hosts`` whose taking (its registered ``taken`` result) failed, in play order."""
    reader = HostReader(hostvars, None)
    out = []
    for host in hosts:
        result = reader.own(host, taken, None)
        if isinstance(result, dict) and result.get("failed"):
            out.append(result.get("msg"))
    return out


# argument: the one-click role's variable it is read from with role_options (each host's own value)
ROLE_VARIABLES = {
    "run_id": "commcheck_run_id",
    "dir": "commcheck_lock_dir",
    "lease": "commcheck_lock_lease",
    "leftovers_wait": "commcheck_lock_leftovers_wait",
    "transport": "commcheck_transport",
}


def role_args(args, role_value):
    """``args`` with each argument the role's variables set replaced by their value, as the task's own arguments
    replaced the play's module_defaults; ``role_value(name)`` is the host's templated value of a variable or None
    (then the task's value or the module's default)."""
    return overlay_role_values(args, ROLE_VARIABLES, role_value)


class ActionModule(ActionBase):

    _supports_check_mode = True

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        args = dict(self._task.args)
        if boolean(args.get("role_options", False), strict=False):
            variables = task_vars or {}
            args = role_args(args, lambda name: self._templar.template(variables[name]) if name in variables else None)
        if args.get("state") == "held":
            task_vars = task_vars or {}
            held = held_messages(task_vars.get("hostvars") or {}, task_vars.get("ansible_play_hosts") or [])
            if held:
                result.update(failed=True, msg="; ".join(str(msg) for msg in held))
            else:
                result.update(changed=False, msg="no host of the play is held by another run")
            return result
        me = this_controller()
        args["controller"] = me
        result.update(self._execute_module(module_name=MODULE, module_args=args, task_vars=task_vars))
        holder = result.get("holder") or {}
        if result.get("state") == HELD and holder.get("run_id") and \
                controller_alive(holder.get("controller"), me) is False:
            args["stale_runs"] = [holder.get("run_id")]
            result = self._execute_module(module_name=MODULE, module_args=args, task_vars=task_vars)
        return result
