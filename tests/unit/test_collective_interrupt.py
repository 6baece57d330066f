# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A collective whose controller went away stops mpirun (issue 34).

The collective module runs as a real process, as Ansible runs it, with its stdout a pipe; ``mpirun`` is a
DOUBLE first on PATH that records its PID and sleeps far past the test. Closing the pipe's reading end is
what an interrupted ansible-playbook does to a module (its ssh session or worker goes away, no signal); the
module must then stop mpirun's process group long before the run's own deadline, and start no other run.
The same on the lab's hosts with real Open MPI: tests/integration/test_collective_interrupt_lab.py.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
MODULE = os.path.join(REPO, "plugins", "modules", "collective.py")
DEADLINE_S = 900

MPIRUN_DOUBLE = "#!/bin/sh\n# mpirun DOUBLE: one line per start, then a run that outlives the test\n" \
                "echo $$ >> \"$MPIRUN_PIDS\"\nexec sleep %d\n" % (DEADLINE_S * 2)


def alive(pid):
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    with open("/proc/%d/stat" % pid) as handle:
        return handle.read().split(")")[-1].split()[0] != "Z"


def test_mpirun_stops_when_nobody_waits_for_the_module(tmp_path, wait_until):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "mpirun").write_text(MPIRUN_DOUBLE)
    (bindir / "mpirun").chmod(0o755)
    (bindir / "all_reduce_perf").write_text("#!/bin/sh\nexit 0\n")
    (bindir / "all_reduce_perf").chmod(0o755)
    pids = tmp_path / "mpirun.pids"
    args = {"library": "nccl", "hosts": ["n1", "n2", "n3", "n4"], "binary_dir": str(bindir), "json_output": "never",
            "min_bytes": "8", "max_bytes": "8M", "timeout": DEADLINE_S, "bisect": True}
    argfile = tmp_path / "args.json"
    argfile.write_text(json.dumps({"ANSIBLE_MODULE_ARGS": args}))
    env = dict(os.environ, PYTHONPATH=os.path.join(REPO, ".build", "collections"), MPIRUN_PIDS=str(pids),
               PATH=str(bindir) + os.pathsep + os.environ.get("PATH", ""))
    proc = subprocess.Popen([sys.executable, MODULE, str(argfile)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            env=env)
    try:
        started = wait_until(lambda: pids.exists() and pids.read_text().split(), within=120)
        assert started, "mpirun never started"
        mpirun = int(started[0])
        assert alive(mpirun)
        proc.stdout.close()      # ansible-playbook went away: nobody reads the module's result any more
        assert wait_until(lambda: not alive(mpirun), within=DEADLINE_S / 10), "mpirun still runs"
        proc.wait(timeout=DEADLINE_S / 10)
        # the pool run was stopped, and no bisection run started after it
        assert pids.read_text().split() == started
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for pid in (pids.read_text().split() if pids.exists() else []):
            if alive(int(pid)):
                os.kill(int(pid), 9)
