# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""ansible-playbook's worker processes, when the controller stops: none of them may be left behind.

Ansible forks one worker per host and task in flight; a worker sends its result
to the main process through one pipe that every worker holds open for
reading too. When the main process is gone, a worker's write blocks once the
pipe is full, and it holds the pipe's lock while it waits, so every other
worker blocks on that lock: all of them stay, deadlocked, for good, and their
ssh sessions keep the hosts' tests going until each test's own deadline.
Ansible stops its workers on SIGINT and SIGTERM only. These helpers stop them
on SIGHUP as on SIGTERM (``stop_workers``), and, on Linux, when the main
process is killed outright (``workers_end_with_controller``: the kernel sends
each worker SIGTERM when the process that forked it dies).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import ctypes
import ctypes.util
import multiprocessing
import os
import signal
import sys
import threading

PR_SET_PDEATHSIG = 1
_GUARD = {"owner": None, "prctl": None, "arm": False, "parent": None}


def stop_workers(signum=signal.SIGTERM):
    """Send ``signum`` to every live child process that multiprocessing started here (Ansible's workers): each
    worker then stops its own process group (its connections) and exits. Returns the pids signalled."""
    pids = []
    for child in multiprocessing.active_children():
        try:
            os.kill(child.pid, signum)
        except OSError:
            continue
        pids.append(child.pid)
    return pids


def _libc_prctl():
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
        return libc.prctl
    except (OSError, AttributeError):
        return None


def _before_fork():
    # only forks of the process that asked, from its main thread (the kernel ties the signal to the forking
    # thread: a worker forked by a thread that ends first would be stopped with it)
    _GUARD["arm"] = (os.getpid() == _GUARD["owner"] and threading.current_thread() is threading.main_thread())
    _GUARD["parent"] = os.getpid()


def _after_fork_in_child():
    if not _GUARD["arm"]:
        return
    _GUARD["arm"] = False
    _GUARD["owner"] = None          # this child's own forks are not armed
    if _GUARD["prctl"](PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0) != 0:
        return
    if os.getppid() != _GUARD["parent"]:
        # the controller died between the fork and the prctl: the signal will never come
        os.kill(os.getpid(), signal.SIGTERM)


def workers_end_with_controller():
    """From now on every process this process forks from its main thread gets SIGTERM when this process dies,
    even by SIGKILL (Linux; elsewhere nothing changes). Returns True when it is in place."""
    if _GUARD["owner"] == os.getpid():
        return True
    prctl = _libc_prctl()
    if prctl is None or not hasattr(os, "register_at_fork"):
        return False
    first = _GUARD["prctl"] is None
    _GUARD.update(owner=os.getpid(), prctl=prctl)
    if first:
        os.register_at_fork(before=_before_fork, after_in_child=_after_fork_in_child)
    return True
