# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""An interrupted collective (issue 34): ansible-playbook stopped with Ctrl-C while REAL Open MPI mpirun runs
the nccl-tests EMULATOR across three lab hosts over real ssh. The collective module notices that nobody waits
for it (its stdout pipe closed, as the pair modules do) and stops mpirun, its daemons and every rank on every
host, long before the run's own deadline.

Run time on the 2-core build machine: about 1 minute (lab up, the ranks start, the stop).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json
import os
import signal
import subprocess
import sys
import time

import pytest

import oneclick_helpers as oc
# binary_dir: a fixture (the emulators under the real binaries' names)
from test_collective_lab import MODULE_PLAYBOOK, binary_dir, lab_args, mpi_missing  # noqa: F401  pylint: disable=unused-import

pytestmark = pytest.mark.skipif(mpi_missing() is not None, reason=mpi_missing() or "")
# The run's own deadline; everything must be gone within a tenth of it.
DEADLINE_S = 900


def test_an_interrupted_collective_stops_mpirun_and_its_ranks_on_every_host(lab_factory, binary_dir, tmp_path,
                                                                            wait_until):
    lab = lab_factory("ocint", hosts=3, rails=1)
    playbook = tmp_path / "collective.yml"
    playbook.write_text(MODULE_PLAYBOOK)
    # 64 MiB x 1000 iterations at the lab's rate: far longer than the test waits
    args = lab_args(lab, binary_dir, min_bytes="64M", max_bytes="64M", iterations=1000, timeout=DEADLINE_S)
    variables = tmp_path / "vars.json"
    variables.write_text(json.dumps({"target": lab.hosts[0], "module_args": args,
                                     "result_file": str(tmp_path / "result.json")}))
    log = tmp_path / "play.log"
    with open(str(log), "w") as out:
        proc = subprocess.Popen([os.path.join(oc.REPO, ".venv", "bin", "ansible-playbook"), "-i", lab.inventory,
                                 "-e", "@%s" % variables, str(playbook)], stdout=out, stderr=subprocess.STDOUT,
                                env=lab.env(), cwd=oc.REPO)
    try:
        def every_host_runs_its_rank():
            return set(oc.tool_processes(lab, "nccl_tests_emulator").values()) == set(lab.hosts)

        assert wait_until(every_host_runs_its_rank, within=300), \
            (oc.leftover_test_processes(lab), log.read_text()[-3000:])
        interrupted = time.monotonic()
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=120)
        left = oc.wait_no_test_processes(lab, timeout=DEADLINE_S / 10)
        assert not left, left
        sys.stderr.write("\nmpirun, its daemons and ranks gone %.1fs after Ctrl-C\n" % (time.monotonic() - interrupted))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
