# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The argv of a collective launched by Slurm's ``srun`` inside an allocation (pure; nothing runs here).

``env NAME=value ... srun --jobid=JOB --mpi=pmix --nodes=N --ntasks=N*K
--ntasks-per-node=K --nodelist=n1,n2 [--gpus-per-node=G] --kill-on-bad-exit=1
--label --export=ALL --time=MINUTES BINARY ARGS`` (options as srun(1) documents
them). The ranks' environment goes through ``env`` because srun hands its own
environment to the tasks (``--export=ALL``) while ``--export=NAME=value``
cannot carry a value with a comma (``NCCL_IB_HCA=mlx5_0,mlx5_1``). Every value
is bound to its option with ``=``, so none can become a flag, and a node name
holds no ``/`` (srun reads a ``--nodelist`` with one as a file) nor hostlist
syntax.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import re

from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import mpi_cmd
from ansible_collections.clusterops.commcheck.plugins.module_utils.options import option_rules as rules

# A Slurm job id (what SLURM_JOB_ID holds; also an array or heterogeneous job's own id).
_JOB_ID = re.compile(r"^[1-9][0-9]{0,9}$")
# Characters srun reads as something else than one node's name: a file (/), hostlist ranges ([ ] ,), IPv6 (:).
_NOT_IN_NODE = re.compile(r"[/\[\],:]")
# Slurm keeps time limits in whole minutes.
SECONDS_PER_MINUTE = 60


def check_srun(srun, option="mpirun"):
    """The srun program: a command name or an absolute path whose file name is srun's (srun, srun-23.11)."""
    return mpi_cmd.rule(rules.check_program, option, srun, "srun", must_exist=False)


def check_job_id(job_id, option="slurm_job_id"):
    """The allocation's job id, digits only (``SLURM_JOB_ID``)."""
    text = str(job_id) if isinstance(job_id, int) and not isinstance(job_id, bool) else job_id
    if not isinstance(text, str) or not _JOB_ID.match(text):
        raise mpi_cmd.MpiCmdError("%s %s is not a Slurm job id (digits, as SLURM_JOB_ID holds)"
                                  % (option, rules.show(job_id)))
    return text


def check_node(node, option="hosts"):
    """One Slurm node name: a host name that srun cannot read as a file, a hostlist or a flag."""
    mpi_cmd.check_host(node, option)
    if _NOT_IN_NODE.search(node):
        raise mpi_cmd.MpiCmdError("%s %s is not a Slurm node name (no '/', ',', ':', '[' or ']': srun would read "
                                  "it as a file or a host list)" % (option, rules.show(node)))
    return node


def time_limit(timeout):
    """srun's ``--time`` in minutes: the run's deadline, rounded up to a whole minute."""
    seconds = mpi_cmd.check_int("timeout", timeout, 1)
    return str(-(-seconds // SECONDS_PER_MINUTE))


def srun_argv(job_id, hosts, processes_per_node, program, env=None, srun="srun", gpus_per_node=None, timeout=900):
    """The argv of one srun step over ``hosts`` (``normalize_hosts`` items: their ``address`` is the node name).

    ``gpus_per_node``: the cards each task's node is asked for (``--gpus-per-node``); None asks for none.
    """
    nodes = [check_node(h["address"], "hosts[%d]" % index) for index, h in enumerate(hosts)]
    per_node = mpi_cmd.check_int("processes_per_node", processes_per_node, 1, 4096)
    argv = []
    env = mpi_cmd.check_env(env)
    if env:
        argv += ["env"] + ["%s=%s" % (key, value) for key, value in env.items()]
    argv += [check_srun(srun), "--jobid=%s" % check_job_id(job_id), "--mpi=pmix",
             "--nodes=%d" % len(nodes), "--ntasks=%d" % (per_node * len(nodes)),
             "--ntasks-per-node=%d" % per_node, "--nodelist=%s" % ",".join(nodes)]
    if gpus_per_node is not None:
        argv.append("--gpus-per-node=%d" % mpi_cmd.check_int("gpus_per_node", gpus_per_node, 1, 1024))
    argv += ["--kill-on-bad-exit=1", "--label", "--export=ALL", "--time=%s" % time_limit(timeout)]
    return argv + list(program)
