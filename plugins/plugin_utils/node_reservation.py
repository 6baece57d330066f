# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The reservation of the nodes under test, on the controller: kept in a file, undone at the end or by a guard.

``reserve`` writes what it will set and how to undo it into
``<state_dir>/<run>.json`` (0600 in a 0700 directory), starts the guard, then
sets the label or taint; ``release`` (the end of the run, also after a failed
task) undoes it and removes the file.

The guard is a process of its own session (Ctrl-C of ``ansible-playbook``
does not reach it) that watches ``ansible-playbook``, the process that forked
the worker running the action (as the run lock names its controller: pid and
start time). When that process is gone (SIGINT, SIGTERM, even SIGKILL) while
the file is still there, the guard runs the undo commands and removes the
file; once the file is gone (released), it ends.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json
import os
import stat
import subprocess
import sys
import tempfile
import time

from ansible_collections.clusterops.commcheck.plugins.module_utils.commands.run_lock import process_start
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands.runner import HostTransport

GUARD_MODULE = "ansible_collections.clusterops.commcheck.plugins.plugin_utils.node_reservation"
POLL_S = 0.5
UNDO_TIMEOUT_S = 60


class ReservationError(Exception):
    """The reservation's directory or file cannot be used."""


def default_dir():
    """Where reservations are kept when no directory is given: the user's own, under the temporary directory."""
    return os.path.join(tempfile.gettempdir(), "commcheck-reserve-%d" % os.geteuid())


def state_dir(path=None):
    """The directory, made 0700; refused when it is a symlink, another user's, or others may write it."""
    path = path or default_dir()
    try:
        os.makedirs(path, 0o700)
    except OSError:
        pass
    try:
        info = os.lstat(path)
    except OSError as exc:
        raise ReservationError("cannot make the reservation directory %s: %s" % (path, exc.strerror))
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o022:
        raise ReservationError("the reservation directory %s must be a directory of this user that no one else "
                               "may write (not a symlink)" % path)
    return path


def state_path(directory, run_id):
    return os.path.join(directory, "%s.json" % run_id.replace(os.sep, "_"))


def write_state(path, state):
    tmp = "%s.%d.tmp" % (path, os.getpid())
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        json.dump(state, handle)
    os.replace(tmp, path)


def read_state(path):
    try:
        with open(path) as handle:
            return json.load(handle)
    except (IOError, OSError, ValueError):
        return None


def forget(path):
    try:
        os.unlink(path)
    except OSError:
        pass


def controller():
    """The ``ansible-playbook`` process that runs this action: the parent of Ansible's worker."""
    pid = os.getppid()
    return {"pid": pid, "pid_start": process_start(pid)}


def controller_alive(who, start=process_start):
    return who.get("pid_start") is not None and start(who["pid"]) == who["pid_start"]


def run_all(actions, transport=None, timeout=UNDO_TIMEOUT_S):
    """Run each action's argv; every one runs (an undo that fails does not stop the others). Returns the
    actions with ``rc`` and ``stderr`` (its last 500 characters)."""
    transport = transport or HostTransport()
    done = []
    for item in actions:
        res = transport.run(item["argv"], timeout)
        done.append(dict(item, rc=res.get("rc"), stderr=(res.get("stderr") or "").strip()[-500:]))
    return done


def guard_loop(path, who, alive=controller_alive, run=run_all, sleep=time.sleep, poll_s=POLL_S):
    """Wait until the reservation file is gone (released: returns None) or its controller is (runs its undo
    commands, removes the file, returns what ran)."""
    while True:
        state = read_state(path)
        if state is None:
            return None
        if not alive(who):
            done = run(state.get("undo") or [])
            forget(path)
            return done
        sleep(poll_s)


def collection_root():
    """The directory that holds ``ansible_collections`` (this file is
    ansible_collections/clusterops/commcheck/plugins/plugin_utils/node_reservation.py)."""
    here = os.path.abspath(__file__)
    for _level in range(6):
        here = os.path.dirname(here)
    return here


def start_guard(path, who, python=None):
    """Start the guard: a fresh Python (never a fork of Ansible's worker and its threads) in a session of its
    own, its standard streams on /dev/null, no descriptor of Ansible's kept open. Returns its pid."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([collection_root()] + [p for p in [env.get("PYTHONPATH")] if p])
    proc = subprocess.Popen([python or sys.executable, "-m", GUARD_MODULE, path, json.dumps(who)], env=env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            close_fds=True, start_new_session=True, cwd="/")
    return proc.pid


def main(argv):
    """The guard: ``python -m ...node_reservation PATH CONTROLLER_JSON``."""
    guard_loop(argv[0], json.loads(argv[1]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
