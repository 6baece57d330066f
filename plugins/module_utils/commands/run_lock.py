# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""One run at a time on a host: the run lock, the process groups a run's tools run in, and what they mean.

The lock is a JSON file, ``run.lock``, in a directory the run names (``commcheck_lock_dir``) on each host.
It says which run holds the host: its run id, and its controller (host name, boot id, the pid of
``ansible-playbook`` and that process's start time, the user), when it was taken and how long its lease
lasts. Every command a test module starts renews the lease (the lock file's modification time) and notes its
process group in ``procs/<pgid>.json`` with its deadline, so a later run can tell that the tools of a run
killed with ``kill -9`` still run on the host.

Pure decisions: :func:`decide` (free, ours, held, stale), :func:`controller_alive` (with an injected ``/proc``),
:func:`live_leftovers` and :func:`leftover_wait`. File access: :class:`LockDir` (created ``0700``, never
through a symlink, file names fixed here so no path leaves it). The module side of the runner calls
:func:`note_group` / :func:`forget_group` (a no-op unless the run set ``COMMCHECK_LOCK_DIR``).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import contextlib
import errno
import json
import os
import stat
import time

LOCK_NAME = "run.lock"
GUARD_NAME = ".guard"
PROCS_DIR = "procs"
ENV_LOCK_DIR = "COMMCHECK_LOCK_DIR"
# The most a lock file or a process-group note may hold; anything larger is not ours.
MAX_NOTE_BYTES = 65536

FREE, OURS, HELD, STALE = "free", "ours", "held", "stale"
# The ranges of a lease and of the wait for a killed run's leftovers, in seconds.
LEASE_RANGE = (60, 86400)
LEFTOVERS_WAIT_RANGE = (0, 3600)


class LockError(Exception):
    """The lock directory cannot be used safely (a symlink, another owner, writable by others, not a directory)."""


# ---------------------------------------------------------------------------------------------------------------
# pure decisions

def lock_record(run_id, controller, now, lease_s):
    """What a run writes into the lock of a host it takes."""
    return {"run_id": run_id, "controller": dict(controller), "taken_at": now, "renewed_at": now,
            "lease_s": lease_s, "expires_at": now + lease_s}


def expires_at(lock, mtime=None):
    """When the holder's lease ends: its last renewal (the file's mtime, renewed by every command it starts)
    plus its lease."""
    renewed = max(float(lock.get("renewed_at") or 0), float(mtime or 0))
    return renewed + float(lock.get("lease_s") or 0)


def decide(lock, run_id, now, mtime=None, dead_runs=()):
    """(``free`` | ``ours`` | ``held`` | ``stale``, why) for a run ``run_id`` that finds ``lock`` (None: no lock).

    ``stale``: the holder's lease ended (it renews it with every command), or its controller process is known
    gone (``dead_runs``: run ids the controller found dead with :func:`controller_alive`).
    """
    if lock is None:
        return FREE, "no run holds the host"
    if lock.get("run_id") == run_id and run_id:
        return OURS, "this run holds the host already"
    if lock.get("run_id") in dead_runs:
        return STALE, "its controller process %s is gone" % describe_controller(lock.get("controller"))
    end = expires_at(lock, mtime)
    if end <= now:
        return STALE, "its lease ended at %s (%d s ago) with no command of it since" % (
            stamp(end), int(now - end))
    return HELD, "its lease lasts until %s" % stamp(end)


def controller_alive(controller, me, proc_root="/proc"):
    """True / False when ``controller`` (a lock's) is this controller (``me``: same host name and boot) and
    its ``ansible-playbook`` process is alive / gone (a pid reused by another process counts as gone); None
    when it cannot be told from here (another controller, or the lock does not say)."""
    controller = controller or {}
    if not controller.get("pid") or controller.get("host") != me.get("host") or \
            controller.get("boot_id") != me.get("boot_id"):
        return None
    started = process_start(controller["pid"], proc_root)
    if started is None:
        return False
    return controller.get("pid_start") in (None, started)


def process_start(pid, proc_root="/proc"):
    """The start time of process ``pid`` (clock ticks after boot, /proc/<pid>/stat field 22), None if none."""
    try:
        with open(os.path.join(proc_root, str(int(pid)), "stat"), "rb") as handle:
            text = handle.read().decode("ascii", "replace")
    except (IOError, OSError, ValueError):
        return None
    fields = text.rsplit(")", 1)[-1].split()
    if len(fields) < 20 or fields[0] == "Z":
        return None
    return int(fields[19])


def live_leftovers(notes, run_id, alive):
    """The notes of process groups of other runs that still run (``alive(pgid)``), by deadline."""
    return sorted((n for n in notes if n.get("run_id") != run_id and alive(n.get("pgid"))),
                  key=lambda n: (n.get("deadline") or 0, n.get("pgid")))


def leftover_modules(leftovers):
    """{pid: run id} of the modules that started ``leftovers`` and still live (they may start more tools)."""
    return dict((int(n["module_pid"]), n.get("run_id")) for n in leftovers
                if isinstance(n.get("module_pid"), int) and n["module_pid"] > 1 and module_alive(n["module_pid"]))


def module_alive(pid):
    """True while process ``pid`` lives (a zombie does not: its /proc state is Z)."""
    return process_start(pid) is not None


def leftover_wait(leftovers, now, wait_limit_s):
    """How long to wait for ``leftovers`` to end: until the last deadline, at most ``wait_limit_s``; 0 when
    there are none or waiting is off (then a run with leftovers refuses at once)."""
    if not leftovers or wait_limit_s <= 0:
        return 0
    last = max(float(n.get("deadline") or now) for n in leftovers)
    return max(0.0, min(float(wait_limit_s), last - now))


def describe_controller(controller):
    """'pid 4242 of ansible-playbook on ctl1 (user alice)'."""
    controller = controller or {}
    return "pid %s of ansible-playbook on %s (user %s)" % (
        controller.get("pid", "?"), controller.get("host", "?"), controller.get("user", "?"))


def describe_holder(lock, mtime=None):
    """'run 20260101-x (pid 42 of ansible-playbook on ctl1 (user a)), since <time>, lease until <time>'."""
    return "run %s (%s), since %s, lease until %s" % (
        lock.get("run_id", "?"), describe_controller(lock.get("controller")), stamp(lock.get("taken_at")),
        stamp(expires_at(lock, mtime)))


def describe_leftovers(leftovers, now):
    """'pgid 311 (ib_write_bw of run X, deadline in 12 s), ...'."""
    return ", ".join("pgid %s (%s of run %s, deadline %s)" % (
        n.get("pgid"), n.get("program", "?"), n.get("run_id", "?"),
        "in %d s" % (n["deadline"] - now) if (n.get("deadline") or 0) > now else "passed")
        for n in leftovers)


def stamp(epoch):
    """An epoch as UTC ISO text; '?' when unknown."""
    try:
        return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(float(epoch)))
    except (TypeError, ValueError):
        return "?"


# ---------------------------------------------------------------------------------------------------------------
# the directory and its files

def _read_small(path):
    """The JSON object in ``path`` (opened without following a symlink); None when absent; {} when unreadable."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError as exc:
        if exc.errno == errno.ENOENT:
            return None
        return {}
    with os.fdopen(fd, "rb") as handle:
        data = handle.read(MAX_NOTE_BYTES + 1)
    try:
        value = json.loads(data.decode("utf-8"))
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _write_new(path, value):
    """Write ``value`` as JSON into a new file ``path`` (0600, never through a symlink), synced."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    with os.fdopen(fd, "w") as handle:
        json.dump(value, handle, sort_keys=True)
        handle.flush()
        os.fsync(handle.fileno())


def _unlink(path):
    try:
        os.unlink(path)
    except OSError as exc:
        if exc.errno != errno.ENOENT:
            raise


class LockDir(object):
    """The lock directory of a host. The names inside are this module's own; a directory that is a symlink,
    belongs to another user or others may write is refused (:class:`LockError`)."""

    def __init__(self, path):
        self.path = path

    def ensure(self):
        """Create the directory (0700, and its missing parents) unless it exists, then check it is safe."""
        if not os.path.isabs(self.path) or ".." in self.path.split(os.sep):
            raise LockError("%s is not an absolute path without '..'" % self.path)
        try:
            os.makedirs(self.path, 0o700)
        except OSError as exc:
            if exc.errno != errno.EEXIST:
                raise LockError("cannot create %s: %s" % (self.path, exc.strerror or exc))
        self.check()
        try:
            os.mkdir(self._file(PROCS_DIR), 0o700)
        except OSError as exc:
            if exc.errno != errno.EEXIST:
                raise LockError("cannot create %s: %s" % (self._file(PROCS_DIR), exc.strerror or exc))
        return self

    def check(self):
        """Raise LockError unless the directory is a real directory of this user that no one else may write."""
        for path in (self.path, self._file(PROCS_DIR)):
            try:
                info = os.lstat(path)
            except OSError as exc:
                if path != self.path and exc.errno == errno.ENOENT:
                    continue
                raise LockError("cannot use %s: %s" % (path, exc.strerror or exc))
            if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
                raise LockError("%s is not a directory (a symlink or a file is never followed)" % path)
            if info.st_uid != os.geteuid():
                raise LockError("%s belongs to uid %d, not to this user (uid %d)" % (path, info.st_uid, os.geteuid()))
            if info.st_mode & 0o022:
                raise LockError("%s may be written by others (mode %o): make it 0700" % (path, info.st_mode & 0o777))

    def exists(self):
        return os.path.lexists(self.path)

    def checked(self):
        """This directory, once :meth:`check` found it safe."""
        self.check()
        return self

    def _file(self, name):
        return os.path.join(self.path, name)

    @contextlib.contextmanager
    def guarded(self):
        """Hold the directory's guard (flock) while a lock is read, decided on and written."""
        import fcntl
        fd = os.open(self._file(GUARD_NAME), os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)

    def read(self):
        """(lock dict or None, mtime or None); an unreadable lock file reads as {} (no holder known)."""
        path = self._file(LOCK_NAME)
        lock = _read_small(path)
        try:
            mtime = os.lstat(path).st_mtime if lock is not None else None
        except OSError:
            mtime = None
        return lock, mtime

    def write(self, lock):
        """Replace the lock with ``lock`` at once (a new file renamed over the old)."""
        self.write_note(LOCK_NAME, lock)

    def remove(self):
        _unlink(self._file(LOCK_NAME))

    def read_note(self, name):
        """The JSON object of the file ``name`` of this directory (a fixed name), or None."""
        return _read_small(self._file(os.path.basename(name))) or None

    def write_note(self, name, value):
        """Replace the file ``name`` of this directory (a fixed name) with ``value`` at once."""
        self.checked()
        path = self._file(os.path.basename(name))
        tmp = "%s.%d.tmp" % (path, os.getpid())
        _unlink(tmp)
        _write_new(tmp, value)
        os.rename(tmp, path)

    def remove_note(self, name):
        _unlink(self._file(os.path.basename(name)))

    def notes(self):
        """The process-group notes of every run, each with its ``pgid``."""
        out = []
        try:
            names = os.listdir(self._file(PROCS_DIR))
        except OSError:
            return out
        for name in sorted(names):
            stem = name[:-5] if name.endswith(".json") else ""
            if stem.isdigit():
                note = _read_small(self._file(os.path.join(PROCS_DIR, name))) or {}
                note["pgid"] = int(stem)
                out.append(note)
        return out

    def forget(self, pgid):
        _unlink(self._file(os.path.join(PROCS_DIR, "%d.json" % int(pgid))))


def group_alive(pgid):
    """True while process group ``pgid`` has a process (a zombie leader counts until it is reaped)."""
    try:
        os.killpg(int(pgid), 0)
    except (OSError, ValueError, TypeError):
        return False
    return True


# ---------------------------------------------------------------------------------------------------------------
# the module side of a run: renew the lease, note the process groups

def run_dir_path():
    """The lock directory of the run this module is part of (``COMMCHECK_LOCK_DIR``, absolute), or None."""
    path = os.environ.get(ENV_LOCK_DIR) or ""
    return path if os.path.isabs(path) and ".." not in path.split(os.sep) else None


def _run_dir():
    """The LockDir of the run this module is part of, or None."""
    path = run_dir_path()
    if not path:
        return None
    lock_dir = LockDir(path)
    try:
        lock_dir.check()
    except LockError:
        return None
    return lock_dir


def note_group(pgid, timeout_s, argv):
    """Renew the run's lease and note process group ``pgid`` (deadline, program) next to the lock. Never raises:
    a run without a lock (or whose directory went away) runs its tools all the same."""
    lock_dir = _run_dir()
    if lock_dir is None:
        return
    try:
        lock, _mtime = lock_dir.read()
        if lock is None or not os.path.isdir(lock_dir._file(PROCS_DIR)):
            return
        os.utime(lock_dir._file(LOCK_NAME), None)
        path = lock_dir._file(os.path.join(PROCS_DIR, "%d.json" % int(pgid)))
        _unlink(path)
        _write_new(path, {"run_id": lock.get("run_id"), "program": os.path.basename(str(argv[0]))[:64],
                          "deadline": time.time() + float(timeout_s), "module_pid": os.getpid()})
    except (OSError, IOError, ValueError):
        pass


def forget_group(pgid):
    """Drop the note of process group ``pgid`` once it has ended. Never raises."""
    lock_dir = _run_dir()
    if lock_dir is None:
        return
    try:
        lock_dir.forget(pgid)
    except (OSError, IOError, ValueError):
        pass


# ---------------------------------------------------------------------------------------------------------------
# a run takes and gives back a host

def acquire(lock_dir, run_id, controller, lease_s, stale_runs=(), leftovers_wait_s=0,
            clock=time.time, sleep=time.sleep, alive=group_alive):
    """Take the host for ``run_id``: a dict with ``acquired``, ``state`` (:func:`decide`'s), ``why``, and
    ``holder`` (the lock that keeps it, or that was ``took_over``), ``leftovers`` (process groups of another
    run still running: waited for up to ``leftovers_wait_s``, by their deadlines, then refused) and ``msg``."""
    with lock_dir.guarded():
        lock, mtime = lock_dir.read()
        if lock == {}:
            # an unreadable lock: nobody can be named; it is stale once its file is older than a lease
            lock = {"run_id": None, "renewed_at": 0, "lease_s": lease_s}
        now = clock()
        state, why = decide(lock, run_id, now, mtime, stale_runs)
        out = {"acquired": False, "state": state, "why": why, "holder": lock, "leftovers": [], "waited_s": 0}
        if state == HELD:
            out["msg"] = "the host is being tested by %s: %s; wait for that run to end, then run again" % (
                describe_holder(lock, mtime), why)
            return out
        record = lock_record(run_id, controller, now, lease_s)
        if state == OURS:
            record["taken_at"] = lock.get("taken_at", now)
        lock_dir.write(record)
    out.update(acquired=True, lock=record, took_over=lock if state == STALE else None)
    if state != STALE:
        out["holder"] = None
    return _await_leftovers(lock_dir, out, run_id, leftovers_wait_s, clock, sleep, alive)


def _await_leftovers(lock_dir, out, run_id, wait_limit_s, clock, sleep, alive):
    """Wait (holding the lock) for another run's tools still running here; refuse and give the lock back when
    some outlive the wait."""
    started = clock()
    leftovers = live_leftovers(lock_dir.notes(), run_id, alive)
    out["leftovers_found"] = [dict(n) for n in leftovers]
    modules = leftover_modules(leftovers)
    budget = leftover_wait(leftovers, started, wait_limit_s)
    if modules and wait_limit_s > 0:
        # a killed run's module goes on to its next round's tools when these end: wait for the module itself
        budget = float(wait_limit_s)
    while (leftovers or modules) and clock() - started < budget:
        sleep(min(1.0, max(0.05, budget - (clock() - started))))
        leftovers = live_leftovers(lock_dir.notes(), run_id, alive)
        modules = dict((pid, run) for pid, run in modules.items() if module_alive(pid))
        modules.update(leftover_modules(leftovers))
    out["waited_s"] = round(clock() - started, 1)
    if modules and not leftovers:
        leftovers = [{"pgid": "-", "program": "module (pid %d)" % pid, "run_id": run, "deadline": None}
                     for pid, run in sorted(modules.items())]
    for note in lock_dir.notes():
        if note.get("run_id") != run_id and not alive(note["pgid"]):
            lock_dir.forget(note["pgid"])
    out["leftovers"] = leftovers
    if leftovers:
        release(lock_dir, run_id)
        out.update(acquired=False, msg="tools of an earlier run still run on the host: %s; %s" % (
            describe_leftovers(leftovers, clock()),
            "they outlived the %d s waited for them" % out["waited_s"] if wait_limit_s > 0
            else "waiting for them is off (leftovers_wait 0)"))
    return out


def release(lock_dir, run_id):
    """Remove the lock if ``run_id`` holds it; True when removed. A lock another run took over stays."""
    with lock_dir.guarded():
        lock, _mtime = lock_dir.read()
        if not lock or lock.get("run_id") != run_id:
            return False
        lock_dir.remove()
        return True
