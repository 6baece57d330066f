# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Controller work run beside the caller's, in a forked child process, on a controller with a CPU to spare.

The report of a 128-host mesh spends 12 CPU s comparing the run with its
history while the controller's second CPU waits, and then 4-5 s finding the
run's culprits, which read the run's own records only. A child forked once
the run is read sees those records without copying them (the pages are
shared until written), finds the culprits and sends them back (pickled)
while the caller compares.

What the child raised, the caller raises when it waits for it (the same
exception, with its message: the child is a fork of this process, its classes
are these); a child killed by a signal is an ``OSError``. A caller that fails
or is interrupted first stops and reaps its child, and a child whose caller
is killed outright ends with it: none outlives the task.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import contextlib
import os
import pickle
import signal
import warnings

# the first byte of what the child sends: its result, or its failure (both pickled)
RESULT, FAILURE = b"R", b"F"
# the most a pickled exception may take: a longer one is sent as a ChildFailed with its text cut
FAILURE_BYTES = 8192
# prctl(2): the signal the child gets when its parent ends
PR_SET_PDEATHSIG = 1


def spare_cpus():
    """The CPUs this process may run on, less the one it runs on."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return max(0, cpus - 1)


def can_fork():
    return hasattr(os, "fork") and spare_cpus() > 0


class ChildFailed(RuntimeError):
    """The child's failure, when it was none of KNOWN_FAILURES."""


class Beside(object):
    """A forked child running ``work()``. ``wait()`` returns what it returned (also kept as ``value``) once it
    ended, and raises what it raised."""

    def __init__(self, pid, read_fd, what):
        self.pid = pid
        self.read_fd = read_fd
        self.what = what
        self.ended = False
        self.value = None

    def wait(self):
        try:
            message = _read_all(self.read_fd)
        except BaseException:
            self.stop()
            raise
        _pid, status = os.waitpid(self.pid, 0)
        self.ended = True
        os.close(self.read_fd)
        if os.WIFSIGNALED(status):
            raise OSError("%s: the child process was ended by signal %d" % (self.what, os.WTERMSIG(status)))
        code = os.WEXITSTATUS(status)
        if code == 0 and message[:1] == RESULT:
            self.value = pickle.loads(message[1:])
            return self.value
        if code != 0 and message[:1] == FAILURE:
            raise failure_in(message[1:]) or ChildFailed("%s: the child process sent no reason" % self.what)
        raise ChildFailed("%s: the child process exited with %d" % (self.what, code))

    def stop(self):
        """Stop the child and reap it (the caller failed first; what the child would say no longer matters)."""
        if self.ended:
            return
        try:
            os.kill(self.pid, signal.SIGKILL)
        except OSError:
            pass
        os.waitpid(self.pid, 0)
        self.ended = True
        os.close(self.read_fd)


def failure_in(message):
    """The exception the child sent, as it raised it (the child is a fork of this process: its classes are
    these); None when it sent none."""
    try:
        failure = pickle.loads(message)
    except Exception:  # pylint: disable=broad-except
        return None
    return failure if isinstance(failure, BaseException) else None


def start(work, what):
    """Fork a child that runs ``work()``, sends what it returned (pickled) or what it raised, and exits (0 or
    1). ``what``: the work's name, for the messages."""
    read_fd, write_fd = os.pipe()
    parent = os.getpid()
    with warnings.catch_warnings():
        # Python 3.12+ warns of fork() beside threads: the child touches no lock another thread may hold (it
        # neither logs nor uses Ansible's queues) and ends with os._exit
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid == 0:  # pragma: no cover - the child's lines run in the child, where coverage is not collected
        os.close(read_fd)
        _run_child(work, write_fd, what, parent)
    os.close(write_fd)
    return Beside(pid, read_fd, what)


def _run_child(work, write_fd, what, parent):  # pragma: no cover - runs in the forked child only
    code = 1
    try:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        _end_with(parent)
        data = RESULT + pickle.dumps(work(), pickle.HIGHEST_PROTOCOL)
        code = 0
    except BaseException as exc:  # pylint: disable=broad-except
        data = FAILURE + _pickled_failure(exc, what)
    try:
        _write_all(write_fd, data)
    except OSError:
        code = 1
    finally:
        # no atexit handler, no buffered output of the parent's written twice, no Ansible cleanup
        os._exit(code)


@contextlib.contextmanager
def beside(work, what):
    """Run ``work()`` in a forked child while the block runs; after the block, wait for it (its result is then
    the yielded child's ``value``) and raise what it raised. When the block raises, the child is stopped and the
    block's exception goes on."""
    child = start(work, what)
    try:
        yield child
    except BaseException:
        child.stop()
        raise
    child.wait()


def _pickled_failure(exc, what):  # pragma: no cover - runs in the forked child only
    try:
        data = pickle.dumps(exc)
        if len(data) <= FAILURE_BYTES:
            pickle.loads(data)
            return data
    except Exception:  # pylint: disable=broad-except
        pass
    return pickle.dumps(ChildFailed("%s: %s: %s" % (what, type(exc).__name__, str(exc)[:1000])))


def _write_all(fd, data):  # pragma: no cover - runs in the forked child only
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _read_all(fd):
    chunks = []
    while True:
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def _end_with(parent):  # pragma: no cover - runs in the forked child only
    """The child is killed when its parent dies (Linux): Ansible kills a worker it interrupts, and the child must
    not go on writing a report after the run ended."""
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except (ImportError, OSError, AttributeError):
        return
    if os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(1)
