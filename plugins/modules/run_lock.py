#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
module: run_lock
short_description: Hold a host for one commcheck run at a time
version_added: 1.1.0
description:
  - Takes (O(state=present)) or gives back (O(state=absent)) the run lock of the host, a file C(run.lock) in
    O(dir) that names the run holding the host (its run id) and its controller (host name, boot id, the pid of
    C(ansible-playbook) and its start time, the user), since when, and until when its lease lasts.
  - A host held by another run is refused at once, naming that run. A lock is stale, and taken over with a
    warning, when its lease ended (every command a test module of the holding run starts renews it), or when
    its holder ran on this controller and its C(ansible-playbook) process is gone (the action plugin on the
    controller checks that, so a run killed with C(kill -9) does not keep its hosts for a whole lease).
  - Test tools a run starts note their process group and deadline in C(procs/) next to the lock. A run that
    finds tools of another run still running (what C(kill -9) of C(ansible-playbook) leaves) waits for them up
    to O(leftovers_wait) seconds (and no longer than their deadlines), then refuses, naming them.
  - O(dir) is created with mode C(0700); a directory that is a symlink, belongs to another user or that others
    may write is refused. File names inside it are fixed; nothing is written elsewhere.
author:
  - commcheck developers (@clusterops)
options:
  state:
    description:
      - V(present) takes the host for O(run_id), V(absent) gives it back if O(run_id) holds it.
      - V(held), run once after the hosts were taken (each host's result registered as C(commcheck_run_lock),
        as the one-click role does), contacts no host and fails naming the runs that hold hosts of the play
        (the message of each host that could not be taken), and passes when none does.
    type: str
    choices: [present, absent, held]
    default: present
  run_id:
    description: The run that takes or gives back the host.
    type: str
    required: true
  dir:
    description:
      - The lock directory on the host; an absolute path without C(..) components. Every run on the host must
        use the same one. A C(tmpfs) such as C(/run/lock) forgets the locks of a host that rebooted.
    type: path
    default: /run/lock/commcheck
  lease:
    description:
      - Seconds after its last command that a lock of a silent run is stale (V(60) to V(86400)).
    type: int
    default: 3600
  leftovers_wait:
    description:
      - Seconds to wait for the test tools of another run still running on the host (a run killed with
        C(kill -9)) to reach their deadlines; V(0) refuses at once (V(0) to V(3600)).
    type: int
    default: 600
  controller:
    description:
      - Who takes the host, written into the lock (C(host), C(boot_id), C(pid), C(pid_start), C(user)). The
        action plugin fills it in on the controller; a value given in the task is replaced.
    type: dict
    default: {}
  transport:
    description:
      - How the run reaches the host. A test pod (V(kubectl)) is not locked (the module would run on the
        controller, not in the pod); the result says so.
    type: str
    choices: [host, kubectl]
    default: host
  role_options:
    description:
      - Take the options from the one-click role's variables, each host's own value
        (O(run_id) from C(commcheck_run_id), O(dir) from C(commcheck_lock_dir), O(lease) from
        C(commcheck_lock_lease), O(leftovers_wait) from C(commcheck_lock_leftovers_wait), O(transport) from
        C(commcheck_transport)); a variable that is not set leaves the task's value or the default; one that is set replaces it. The action plugin
        reads them.
    type: bool
    default: false
  stale_runs:
    description:
      - Run ids whose controller process the controller found gone; their locks are taken over. The action
        plugin fills it in.
    type: list
    elements: str
    default: []
attributes:
  check_mode:
    support: full
    description: Takes and gives back nothing; says who holds the host.
  diff_mode:
    support: none
    description: The lock is a run's own file; there is nothing to show as a diff.
  platform:
    support: full
    platforms: posix
    description: Linux hosts (the lock directory on the host the module runs on).
notes:
  - The one-click playbook takes every host right after its option check and gives them back in an C(always)
    section (success or a failed task); a run interrupted or killed leaves its locks, which the next run finds
    stale (its controller process gone, or its lease ended). C(commcheck_lock=false) turns the lock off for
    operators who keep runs apart otherwise.
seealso:
  - module: clusterops.commcheck.cpu_governor
'''

EXAMPLES = r'''
- name: Take the hosts for this run
  clusterops.commcheck.run_lock:
    run_id: "{{ commcheck_run_id }}"
  any_errors_fatal: true

- name: Give them back
  clusterops.commcheck.run_lock:
    run_id: "{{ commcheck_run_id }}"
    state: absent
'''

RETURN = r'''
acquired:
  description: True when the run holds the host now.
  returned: state is present
  type: bool
state:
  description: What the lock was when the run came; V(free), V(ours) (this run held it), V(held) or V(stale).
  returned: state is present
  type: str
  sample: stale
holder:
  description: The lock of the run that holds the host (V(held)) or that was taken over (V(stale)); null otherwise.
  returned: state is present
  type: dict
  sample: {run_id: 20260101T000000-ab12, controller: {host: ctl1, pid: 4242, user: alice}, taken_at: 1767225600}
took_over:
  description: The stale lock this run took over, with RV(why); null otherwise.
  returned: state is present
  type: dict
why:
  description: Why the lock was free, held or stale.
  returned: state is present
  type: str
  sample: its controller process pid 4242 of ansible-playbook on ctl1 (user alice) is gone
leftovers:
  description: Process groups of another run still running when the run gave up waiting (C(pgid), C(program), C(run_id), C(deadline)).
  returned: state is present
  type: list
  elements: dict
leftovers_found:
  description: Process groups of another run that were running when the run came (waited for, then gone).
  returned: state is present
  type: list
  elements: dict
waited_s:
  description: Seconds waited for leftovers.
  returned: state is present
  type: float
released:
  description: True when the lock of O(run_id) was removed.
  returned: state is absent
  type: bool
'''

from ansible_collections.clusterops.commcheck.plugins.module_utils.options.module_args import checked_module
from ansible_collections.clusterops.commcheck.plugins.module_utils.options.option_rules import (
    OptionError,
    check_path,
    check_text,
)
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands.run_lock import (
    HELD,
    LEASE_RANGE,
    LEFTOVERS_WAIT_RANGE,
    LockDir,
    LockError,
    acquire,
    describe_holder,
    release,
)

ARGUMENT_SPEC = dict(
    state=dict(type="str", choices=["present", "absent", "held"], default="present"),
    run_id=dict(type="str", required=True),
    dir=dict(type="path", default="/run/lock/commcheck"),
    lease=dict(type="int", default=3600),
    leftovers_wait=dict(type="int", default=600),
    controller=dict(type="dict", default={}),
    stale_runs=dict(type="list", elements="str", default=[]),
    transport=dict(type="str", choices=["host", "kubectl"], default="host"),
    role_options=dict(type="bool", default=False),
)
RANGES = {"lease": LEASE_RANGE, "leftovers_wait": LEFTOVERS_WAIT_RANGE}


def options_error(params):
    """Why the options cannot be used, or None."""
    try:
        check_text("run_id", params["run_id"], 128)
        if not params["run_id"].strip():
            return "run_id is empty: give the id of the run"
        params["dir"] = check_path("dir", params["dir"])
        for index, run_id in enumerate(params["stale_runs"]):
            label = "stale_runs[%d]" % index
            check_text(label, run_id, 128)
            if not run_id.strip() or run_id.startswith("-"):
                return "%s %r is not a run id (one word of text, not empty, not a flag)" % (label, run_id)
    except OptionError as exc:
        return str(exc)
    for name, (low, high) in RANGES.items():
        if not low <= params[name] <= high:
            return "%s %d is out of range (%d to %d)" % (name, params[name], low, high)
    return None


def check_mode_result(lock_dir, run_id):
    """What check mode says: nothing taken, and who holds the host now."""
    lock, mtime = lock_dir.checked().read() if lock_dir.exists() else (None, None)
    held = bool(lock) and lock.get("run_id") != run_id
    return dict(changed=False, acquired=False, state=HELD if held else "free", holder=lock if held else None,
                msg="check mode takes no lock%s" % (
                    "; the host is held by %s" % describe_holder(lock, mtime) if held else ""))


def main():
    module = checked_module(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    params = module.params
    error = options_error(params)
    if error:
        module.fail_json(msg=error)
    if params["state"] == "held":
        module.fail_json(msg="state=held is decided on the controller by the run_lock action plugin, from the "
                             "results of the hosts taken; it cannot run as a module on a host")
    if params["transport"] != "host":
        module.exit_json(changed=False, acquired=False, state="free", holder=None,
                         msg="a test pod is not locked (the %s transport)" % params["transport"])
    lock_dir = LockDir(params["dir"])
    try:
        if module.check_mode:
            module.exit_json(**check_mode_result(lock_dir, params["run_id"]))
        if params["state"] == "absent":
            released = lock_dir.exists() and release(lock_dir.checked(), params["run_id"])
            module.exit_json(changed=bool(released), released=bool(released))
        result = acquire(lock_dir.ensure(), params["run_id"], params["controller"], params["lease"],
                         stale_runs=params["stale_runs"], leftovers_wait_s=params["leftovers_wait"])
    except LockError as exc:
        module.fail_json(msg="lock directory: %s" % exc)
    except (IOError, OSError) as exc:
        module.fail_json(msg="lock directory %s: %s" % (params["dir"], exc))
    if not result["acquired"]:
        module.fail_json(changed=False, **result)
    if result.get("took_over"):
        module.warn("took over the stale lock of run %s: %s" % (result["took_over"].get("run_id"), result["why"]))
    module.exit_json(changed=result["state"] != "ours", **result)


if __name__ == "__main__":
    main()
