# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the lab tests share: run a playbook with the history callback, read
the history back, slow a host, check that no test process is left, and
write the tests' own files (launchers of the lab's EMULATORS, stand-ins) into
a scratch directory of this test process, never into the checkout."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import atexit
import glob
import json
import os
import shutil
import tempfile
import time


# Verdicts of a healthy lab link: on a loaded 2-core machine an emulated link can read low once; the product
# retests a failing pair before it blames anything, and a pair that passes its retest is "flaky" (transient,
# nobody blamed). A fleet outlier is "warn".
HEALTHY_VERDICTS = ("pass", "warn", "flaky")
# Verdicts of a pair that ran and was judged, whatever it measured (an emulated latency is a real socket round
# trip: a busy machine can make one pair far late once, which fails it in the first pass and gets it retested).
MEASURED_VERDICTS = ("pass", "warn", "flaky", "fail")
# The fraction of the lab's link rate that a healthy link must reach. A healthy emulated link has read 60-70 %
# of its rate on a fresh CI machine running two test workers; a slowed one (slow_rate) reads 20 % or less.
# Half the rate leaves a wide margin on both sides.
LAB_MIN_FRACTION = 0.5


_SCRATCH = []


def scratch_dir(*parts):
    """A directory of this test process's own scratch space (created on first use, removed at exit).

    The lab's hosts share this machine's filesystem, so what a test writes here (launchers of the lab's
    EMULATORS under the real tools' names, stand-ins, emulated sysfs trees) is there on every lab host.
    Nothing goes into the checkout: two checkouts, and the two test workers of one, never share a file.
    """
    if not _SCRATCH:
        _SCRATCH.append(tempfile.mkdtemp(prefix="commcheck-lab-%d-" % os.getpid()))
        atexit.register(shutil.rmtree, _SCRATCH[0], True)
    path = os.path.join(_SCRATCH[0], *parts)
    os.makedirs(path, exist_ok=True)
    return path


def write_executable(path, text):
    """Write an executable file (a launcher) whole: readers never see half of it."""
    tmp = "%s.%d.tmp" % (path, os.getpid())
    with open(tmp, "w") as handle:
        handle.write(text)
    os.chmod(tmp, 0o755)
    os.rename(tmp, path)
    return path


def own_ports(base):
    """The first of the 100 TCP ports that a lab named after ``base`` and this test process would have
    (tests/lab/lab.py: a block between 20000 and 31999, below the ephemeral range). A test without a lab that
    still listens on this machine's own addresses takes its ports there, never a well-known port: two
    checkouts run their tests at once."""
    # tests/lab is on sys.path in the lab tests (conftest.py)
    import lab as lablib  # pylint: disable=import-outside-toplevel
    return lablib.plan(("%s%d" % (base, os.getpid()))[:12], 1)["port_base"]


def history_env(history_dir, extra=None):
    """Environment that enables the commcheck_history callback into history_dir (fsync off: speed)."""
    env = {"ANSIBLE_CALLBACKS_ENABLED": "clusterops.commcheck.commcheck_history",
           "COMMCHECK_HISTORY_DIR": str(history_dir), "COMMCHECK_HISTORY_FSYNC": "false"}
    env.update(extra or {})
    return env


def read_history(history_dir):
    """Every history line (parsed); raises on a line that is not JSON."""
    lines = []
    for path in sorted(glob.glob(os.path.join(str(history_dir), "*.jsonl"))):
        with open(path) as handle:
            for num, line in enumerate(handle, 1):
                if line.strip():
                    try:
                        lines.append(json.loads(line))
                    except ValueError:
                        raise AssertionError("%s:%d is not JSON: %r" % (path, num, line[:200]))
    return lines


def run_with_history(lab, playbook, tmp_path, extra_vars, inventory_overlay=None, env=None, timeout=900):
    """ansible-playbook on the lab with the history in tmp_path/history: (CompletedProcess, lines, seconds)."""
    history = tmp_path / "history"
    args = []
    if inventory_overlay:
        overlay = tmp_path / "overlay.json"
        overlay.write_text(json.dumps(inventory_overlay))
        args = ["-i", str(overlay)]
    started = time.monotonic()
    proc = lab.ansible_playbook(playbook, extra_vars=extra_vars, env=history_env(history, env), args=args,
                                timeout=timeout)
    return proc, read_history(history), time.monotonic() - started


def slow_rate(lab, divisor=5, floor_mbit=50):
    """A divisor-th of the lab's nominal link rate (at least floor_mbit), as tc writes it."""
    return "%dmbit" % max(floor_mbit, int(lab.rate_gbps * 1000 / divisor))


def best_reading(measure, floor, tries=3):
    """The highest of up to ``tries`` readings of ``measure()``, stopping at the first one at or above ``floor``.

    The lab's shaping caps a path exactly, so any reading above the cap is a
    fault (the caller's upper bound sees the highest). A reading below the
    floor can also be a loaded machine starving the test tool of CPU, which
    only ever lowers a reading, so only the floor is read again.
    """
    readings = []
    for _attempt in range(max(1, tries)):
        readings.append(measure())
        if readings[-1] >= floor:
            break
    return max(readings)


def assert_nothing_left(lab, wait=5):
    """No process is left on any lab host after wait seconds."""
    deadline = time.monotonic() + wait
    left = lab.pids()
    while left and time.monotonic() < deadline:
        time.sleep(0.2)
        left = lab.pids()
    assert left == [], "processes left on lab hosts: %r" % ([(p["host"], p["cmdline"]) for p in left],)
