# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A short command that reads a document on its stdin (``kubectl apply -f -``), as an argv, under a deadline.

The runner (``runner.py``) gives its commands no stdin; this runs one that needs it, in its own process group,
killed with its group at the deadline, with its output bounded like a document's (``output_capture``).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os
import signal
import subprocess
import time

from ansible_collections.clusterops.commcheck.plugins.module_utils.commands.runner import CommandError, check_argv
from ansible_collections.clusterops.commcheck.plugins.module_utils.options.option_rules import withhold_secret_paths
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.output_capture import OUTPUT_KEEP_BYTES


def _bounded(data):
    text = data.decode("utf-8", "replace")
    if len(text) <= 2 * OUTPUT_KEEP_BYTES:
        return text
    return text[:OUTPUT_KEEP_BYTES] + "\n...\n" + text[-OUTPUT_KEEP_BYTES:]


def run_with_input(argv, data, timeout):
    """Run ``argv`` with ``data`` (str) on its stdin; a result dict like the runner's (cmd, rc, stdout, stderr,
    timed_out, duration_s). CommandError when the program cannot start."""
    argv = check_argv(argv)
    started = time.monotonic()
    try:
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=True, close_fds=True)
    except OSError as exc:
        raise CommandError("cannot start %s: %s" % (argv[0], exc.strerror or exc), argv, exc.strerror)
    timed_out = False
    try:
        out, err = proc.communicate(data.encode("utf-8"), timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        _kill_group(proc)
        out, err = proc.communicate()
    except BaseException:
        # a signal's SystemExit: the command goes with the module
        _kill_group(proc)
        raise
    return {"cmd": withhold_secret_paths(argv), "rc": proc.returncode, "stdout": _bounded(out),
            "stderr": _bounded(err), "timed_out": timed_out, "duration_s": round(time.monotonic() - started, 3)}


def _kill_group(proc):
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        pass
