# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""End to end: the collective launched by Slurm's srun inside an allocation (issue 37 section 4).

``playbooks/commcheck_slurm.yml`` runs on the 4-host lab as from a login node
(``SLURM_JOB_ID`` in the controller's environment), with one host slowed to a
fiftieth of the rate. srun is the lab's EMULATOR (tests/lab/emulators/srun_emulator.py:
srun's command line and refusals, the allocation from an emulated cluster file,
the tasks started by REAL Open MPI mpirun over the lab's ssh); the test binaries
are the nccl-tests EMULATOR (a real MPI allreduce over the lab network).

What it shows: the same records and bisection as with mpirun (the pool run
fails, bisection names the slowed host, every run with it fails and every run
without it passes), each run one srun step over exactly the nodes of its record
(the emulated controller's step log), srun's options on the records' command
line, and no process left on any host.

Full tier (make test's 15 minutes): one playbook run, about a minute on the 2-core build machine.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json
import os
import shutil
import subprocess
import sys

import pytest

import lab as lablib
import oneclick_helpers as oc
from lab_checks import assert_nothing_left, run_with_history, scratch_dir, slow_rate, write_executable

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
EMULATOR = os.path.join(REPO, "tests", "lab", "emulators", "srun_emulator.py")
JOB_ID = "4242"


def mpi_missing():
    if not shutil.which("mpirun"):
        return "Open MPI's mpirun is not installed (apt-get install openmpi-bin libopenmpi-dev)"
    proc = subprocess.run([oc.PYTHON, "-c", "import mpi4py"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          check=False)
    return None if proc.returncode == 0 else "mpi4py is not installed in .venv (pip install mpi4py)"


pytestmark = [pytest.mark.full, pytest.mark.skipif(mpi_missing() is not None, reason=mpi_missing() or "")]


def emulated_cluster(lab, work):
    """The emulated slurm.conf and controller state: the lab's hosts as nodes, one job holding all of them,
    and how the emulated slurmstepd starts tasks (mpirun over the lab's ssh, on the rail-0 subnet)."""
    subnet = lab.lab.state["rails"][0]["subnet"]
    cluster = {"nodes": dict((h, {"addr": lab.address(h), "gpus": 1}) for h in lab.hosts),
               "jobs": {JOB_ID: {"nodes": list(lab.hosts), "gpus_per_node": 1}},
               "launch": {"ssh_config": lab.ssh_config,
                          "mca": dict(lablib.LAB_MPI_MCA, btl_tcp_if_include=subnet, oob_tcp_if_include=subnet)}}
    path = os.path.join(work, "cluster.json")
    with open(path, "w") as handle:
        json.dump(cluster, handle)
    srun = os.path.join(work, "srun")
    write_executable(srun, "#!/bin/sh\n# EMULATOR launcher (commcheck lab): srun runs tests/lab/emulators/"
                           "srun_emulator.py\nexec %s %s --emulator-cluster=%s \"$@\"\n" % (oc.PYTHON, EMULATOR, path))
    return srun, path + ".steps"


@pytest.fixture(scope="module")
def slurm_run(lab4, tmp_path_factory):
    """One run of playbooks/commcheck_slurm.yml with h3 slowed: (process, records, steps, slowed host)."""
    lab = lab4
    lab.heal()
    work = scratch_dir("slurm", str(os.getpid()))
    srun, steps_log = emulated_cluster(lab, work)
    binary_dir = oc.collective_launchers(scratch_dir("slurm", "bin"), "nccl", ("all_reduce",))
    extra = {"commcheck_collective_min_bytes": "1M", "commcheck_collective_max_bytes": "1M",
             "commcheck_collective_iterations": 3, "commcheck_collective_warmup_iterations": 1,
             "commcheck_gpus_per_node": 1, "commcheck_collective_binary_dir": binary_dir,
             "commcheck_collective_mpirun": srun,
             # the emulated collective's pass line in this lab (test_collective_lab.lab_expectation)
             "commcheck_collective_nic_rates_gbps": [lab.rate_gbps], "commcheck_collective_link_efficiency": 0.5,
             "commcheck_collective_min_fraction": 0.15}
    slow = lab.hosts[2]
    with lab.slowed(slow, rate=slow_rate(lab, divisor=50, floor_mbit=10)):
        proc, records, elapsed = run_with_history(lab, "playbooks/commcheck_slurm.yml",
                                                  tmp_path_factory.mktemp("slurm"), extra,
                                                  env={"SLURM_JOB_ID": JOB_ID})
    sys.stderr.write("\nslurm lab run: %.0fs\n" % elapsed)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    with open(steps_log) as handle:
        steps = [json.loads(line) for line in handle]
    yield proc, records, steps, slow
    assert_nothing_left(lab, wait=20)


def test_bisection_through_srun_names_the_slowed_host(slurm_run):
    _proc, records, _steps, slow = slurm_run
    runs = [r for r in records if r["kind"] == "collective"]
    findings = [r for r in records if r["kind"] == "finding" and r["params"].get("check") == "collective"]
    shown = [(r["params"]["hosts"], r["verdict"], r["metrics"].get("busbw_gbs")) for r in runs]
    assert runs[0]["params"]["stage"] == "pool" and runs[0]["verdict"] == "fail", shown
    assert [f["host"] for f in findings] == [slow], (findings, shown)
    for run in runs:
        assert (run["verdict"] == "fail") == (slow in run["params"]["hosts"]), shown
    assert all(r["params"]["launcher"] == "srun" for r in runs)
    sys.stderr.write("\nsrun bisection: %d runs: %s\n" % (len(runs), shown))


def test_each_run_is_one_srun_step_over_its_nodes(slurm_run):
    _proc, records, steps, _slow = slurm_run
    runs = [r for r in records if r["kind"] == "collective"]
    # the emulated controller saw one step per run, in the job of the login node's shell, on the run's nodes
    assert sorted(sorted(s["nodes"]) for s in steps) == sorted(sorted(r["params"]["hosts"]) for r in runs)
    assert set(s["job"] for s in steps) == {JOB_ID} and sorted(s["step"] for s in steps) == list(range(len(steps)))
    pool_cmd = [line for line in runs[0]["evidence"] if "all_reduce_perf" in line]
    assert pool_cmd and " --mpi=pmix " in pool_cmd[0] and " --jobid=%s " % JOB_ID in pool_cmd[0], runs[0]["evidence"]
    assert " --nodelist=h1,h2,h3,h4 " in pool_cmd[0] and " --label " in pool_cmd[0], pool_cmd
