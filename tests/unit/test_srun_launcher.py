# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""launcher=srun (issue 37 section 4): the collective as steps of a Slurm allocation.

The argv is read against srun's documented options, as srun(1) gives them
(https://slurm.schedmd.com/srun.html, the OPTIONS section; also Ubuntu's
slurm-client 23.02 page https://manpages.ubuntu.com/manpages/mantic/en/man1/srun.1.html):
``--jobid=<jobid>``, ``--mpi=<mpi_type>``, ``-N, --nodes=<minnodes>[-maxnodes]``,
``-n, --ntasks=<number>``, ``--ntasks-per-node=<ntasks>``,
``-w, --nodelist={<node_name_list>|<filename>}`` (a list with a '/' is read as a file),
``--gpus-per-node=[type:]<number>``, ``-K, --kill-on-bad-exit[=0|1]``, ``-l, --label``,
``--export={[ALL,]<environment_variables>|ALL|NONE}`` and ``-t, --time=<time>`` ("minutes",
"minutes:seconds", "hours:minutes:seconds", "days-hours", ...). Whatever follows the options is the
executable and its arguments.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import re
import sys
import os

import pytest

from ansible_collections.clusterops.commcheck.plugins.modules import collective
from ansible_collections.clusterops.commcheck.plugins.modules.collective import ARGUMENT_SPEC
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import collective_runner as cr
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import collective_spec
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import srun_cmd
from ansible_collections.clusterops.commcheck.plugins.module_utils.options import option_rules as rules
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_nccl_tests import parse_nccl_tests

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from module_in_process import run_module  # noqa: E402  pylint: disable=wrong-import-position

CORPUS = os.path.join(os.path.dirname(HERE), "fixtures", "corpus", "nccl_tests")
FAST = os.path.join(CORPUS, "all_reduce_perf_2node_16gpu_h100_mpirun.txt")    # ~339 GB/s
SLOW = os.path.join(CORPUS, "all_reduce_perf_2pod_l40s_reducing_maxbytes.txt")  # ~8 GB/s
SLURM_VERSION = "slurm 23.11.4\n"

# srun(1)'s long options this module uses: name -> the form of its value (None: the option takes none).
_COUNT = r"[1-9][0-9]*"
SRUN_OPTIONS = {
    "jobid": _COUNT,
    "mpi": r"(?:none|pmi2|pmix|pmix_v[0-9]+|cray_shasta)",
    "nodes": _COUNT + r"(?:-" + _COUNT + r")?",
    "ntasks": _COUNT,
    "ntasks-per-node": _COUNT,
    "nodelist": r"[^/,\[\]]+(?:,[^/,\[\]]+)*",
    "gpus-per-node": r"(?:[A-Za-z0-9_]+:)?" + _COUNT,
    "kill-on-bad-exit": r"[01]",
    "label": None,
    "export": r"(?:ALL|NONE|(?:ALL,)?[A-Za-z_][A-Za-z0-9_]*(?:=[^,]*)?(?:,[A-Za-z_][A-Za-z0-9_]*(?:=[^,]*)?)*)",
    "time": r"(?:[0-9]+|[0-9]+:[0-9]{1,2}|[0-9]+:[0-9]{1,2}:[0-9]{1,2}|[0-9]+-[0-9]+(?::[0-9]{1,2}){0,2})",
}


def srun_options(argv):
    """(env assignments, {option: value}, program argv) of an ``[env K=V ...] srun --opt[=v] ... PROGRAM`` argv,
    every option checked against srun's documented forms."""
    start = argv.index("srun")
    assert argv[0] == "srun" or argv[0] == "env", argv
    assignments = argv[1:start] if argv[0] == "env" else []
    options = {}
    index = start + 1
    while argv[index].startswith("-"):
        name, equals, value = argv[index][2:].partition("=")
        assert argv[index].startswith("--") and name in SRUN_OPTIONS, argv[index]
        form = SRUN_OPTIONS[name]
        if form is None:
            assert not equals, argv[index]
        else:
            assert equals and re.match(r"^%s$" % form, value), (argv[index], form)
        assert name not in options, name
        options[name] = value if equals else True
        index += 1
    return assignments, options, argv[index:]


HOSTS = [{"address": "gpu-a01", "slots": 8, "name": "a1"}, {"address": "gpu-a02", "slots": 8, "name": "a2"},
         {"address": "gpu-b07", "slots": 8, "name": "b7"}]


def test_the_argv_is_srun_options_as_documented_then_the_program():
    argv = srun_cmd.srun_argv("4242", HOSTS, 8, ["/opt/nccl/all_reduce_perf", "-b", "8", "-g", "1"],
                              env={"NCCL_IB_HCA": "mlx5_0,mlx5_1", "NCCL_DEBUG": "INFO"}, gpus_per_node=8,
                              timeout=901)
    env, options, program = srun_options(argv)
    # the ranks' environment is srun's own (export ALL): a value with a comma cannot go through --export
    assert env == ["NCCL_DEBUG=INFO", "NCCL_IB_HCA=mlx5_0,mlx5_1"] and options["export"] == "ALL"
    assert options == {"jobid": "4242", "mpi": "pmix", "nodes": "3", "ntasks": "24", "ntasks-per-node": "8",
                       "nodelist": "gpu-a01,gpu-a02,gpu-b07", "gpus-per-node": "8", "kill-on-bad-exit": "1",
                       "label": True, "export": "ALL", "time": "16"}
    assert program == ["/opt/nccl/all_reduce_perf", "-b", "8", "-g", "1"]
    # without an environment and without cards: srun first, no --gpus-per-node
    plain = srun_cmd.srun_argv(7, HOSTS[:2], 1, ["all_reduce_test"], srun="/usr/bin/srun")
    assert plain[0] == "/usr/bin/srun" and "gpus-per-node" not in srun_options(["srun"] + plain[1:])[1]


@pytest.mark.parametrize("seconds,minutes", [(1, "1"), (60, "1"), (61, "2"), (900, "15")])
def test_the_step_time_limit_is_the_deadline_rounded_up_to_a_minute(seconds, minutes):
    assert srun_cmd.time_limit(seconds) == minutes


@pytest.mark.parametrize("node,why", [
    ("/etc/passwd", "is not a host name"), ("nodes/list", "is not a host name"), ("gpu[01-04]", "is not a host"),
    ("-w", "is not a host name"), ("fe80::1", "is not a Slurm node name"), ("a,b", "is not a host")])
def test_a_node_name_never_becomes_a_file_a_host_list_or_a_flag(node, why):
    with pytest.raises(rules.OptionError, match=re.escape(why)):
        srun_cmd.srun_argv("1", [{"address": node, "slots": 1, "name": node}], 1, ["x"])


@pytest.mark.parametrize("job", ["", "0", "-1", "12;id", "4242.0", True, "1" * 11])
def test_a_job_id_is_digits(job):
    with pytest.raises(rules.OptionError, match="is not a Slurm job id"):
        srun_cmd.check_job_id(job)


def test_the_launcher_program_must_be_srun():
    assert srun_cmd.check_srun("/opt/slurm/bin/srun") == "/opt/slurm/bin/srun"
    for program in ("mpirun", "/bin/sh", "sbatch"):
        with pytest.raises(rules.OptionError, match="is not srun"):
            srun_cmd.check_srun(program)


def params(**overrides):
    out = dict((key, spec.get("default")) for key, spec in ARGUMENT_SPEC.items())
    out.update(library="nccl", hosts=["n1", "n2", "n3", "n4"], gpus_per_node=8, gpus_per_process=8,
               min_bytes="8", max_bytes="8G", expected_busbw_gbs=300.0, bisect=True, launcher="srun",
               mpirun="srun", slurm_job_id="4242", binary_dir="/opt/nccl-tests/bin", json_output="never")
    out.update(overrides)
    return out


@pytest.mark.parametrize("overrides,message", [
    ({"slurm_job_id": None}, "launcher=srun runs the collective inside an allocation: set slurm_job_id"),
    ({"mpirun": "mpirun"}, "mpirun 'mpirun' is not srun"),
    ({"mca": {"btl": "tcp"}}, "the srun launcher does not take them"),
    ({"ssh_config": "/etc/ssh/ssh_config"}, "takes no mpi_agent_dir or ssh_config"),
    ({"transport": "kubectl", "kubectl": {"pod": "p"}}, "runs on a Slurm node: it needs transport=host"),
    ({"hosts": ["n1", "10.0.0.2", "fe80::1"]}, "hosts[2] 'fe80::1' is not a Slurm node name"),
    ({"launcher": "openmpi", "mpirun": "mpirun"}, "slurm_job_id '4242' is srun's: it needs launcher=srun"),
])
def test_what_srun_cannot_take_is_refused_before_anything_runs(overrides, message):
    with pytest.raises(rules.OptionError) as caught:
        collective_spec.validate(params(**overrides))
    assert message in str(caught.value)


class SlurmTransport(object):
    """Answers srun --version with ``version`` and each step with a slow or a fast nccl-tests output by the
    nodes of its --nodelist; records every argv."""

    name = "host"
    remote = False

    def __init__(self, slow_nodes=(), version=SLURM_VERSION):
        self.slow_nodes = set(slow_nodes)
        self.version = version
        self.argvs = []

    def which(self, name):
        return "/usr/bin/" + os.path.basename(name)

    def run(self, argv, timeout, capture=None):  # pylint: disable=unused-argument
        self.argvs.append(list(argv))
        if argv[1:] == ["--version"]:
            return {"cmd": argv, "rc": 0, "stdout": self.version, "stderr": "", "timed_out": False}
        nodes = set(srun_options(argv)[1]["nodelist"].split(","))
        with open(SLOW if nodes & self.slow_nodes else FAST) as handle:
            text = handle.read()
        return {"cmd": argv, "rc": 0, "stdout": text, "stderr": "", "timed_out": False, "duration_s": 1.0}

    def read_file(self, path, default=None):
        return default


def run_pool(transport, tmp_path, **overrides):
    spec_params = params(**overrides)
    runner = cr.CollectiveRunner(spec_params, transport, collective_spec.validate(spec_params))
    result = collective_spec.initial_result(runner.spec, runner.params, "host")
    failure = runner.preflight()
    if failure:
        return failure
    runner.workdir = str(tmp_path)
    cr.pool_run(runner, result, lambda warning: None)
    return result


def test_each_bisection_step_is_one_srun_over_its_nodes(tmp_path):
    transport = SlurmTransport(slow_nodes=["n3"])
    result = run_pool(transport, tmp_path)
    assert result["bad_nodes"] == ["n3"] and result["bisect"]["conclusion"] == "isolated"
    steps = [a for a in transport.argvs if a[1:] != ["--version"]]
    assert [srun_options(a)[1]["nodelist"] for a in steps] == [",".join(r["hosts"]) for r in result["runs"]]
    assert [r["hosts"] for r in result["runs"]] == [["n1", "n2", "n3", "n4"], ["n1", "n2"], ["n3", "n4"],
                                                    ["n3", "n1"], ["n4", "n2"], ["n1", "n2", "n4"]]
    for argv in steps:
        _env, options, _program = srun_options(argv)
        assert options["nodes"] == str(len(options["nodelist"].split(",")))
        assert options["ntasks"] == options["nodes"] and options["jobid"] == "4242"   # one 8-GPU process a node
    assert result["params"]["launcher"] == "srun" and result["cmd"] == steps[0]


def test_a_program_that_is_not_slurms_srun_starts_no_step(tmp_path):
    transport = SlurmTransport(version="GNU bash, version 5.2.15(1)-release\n")
    failure = run_pool(transport, tmp_path)
    assert failure["errors"][0]["code"] == "launcher_not_srun"
    assert "mpirun '/usr/bin/srun' is not srun" in failure["cause"] and "srun --version" in failure["cause"]
    assert transport.argvs == [["/usr/bin/srun", "--version"]]


def test_the_job_id_defaults_to_the_allocation_the_module_runs_in(monkeypatch, capsys):
    args = dict(library="nccl", hosts=["n1", "n2"], launcher="srun", mpirun="srun")
    monkeypatch.setenv("SLURM_JOB_ID", "5150")
    result = run_module(collective, monkeypatch, capsys, args, check_mode=True)
    assert srun_options(result["cmd"])[1]["jobid"] == "5150", result.get("msg")
    monkeypatch.delenv("SLURM_JOB_ID")
    result = run_module(collective, monkeypatch, capsys, args, check_mode=True)
    assert result["failed"] and "inside an allocation" in result["msg"]


@pytest.mark.parametrize("line,hint", [
    ("srun: error: Unable to create step for job 4242: Requested node configuration is not available",
     "allocation does not hold"),
    ("srun: error: Unable to confirm allocation for job 999: Invalid job id specified", "allocation does not hold"),
    ("srun: error: Task launch for StepId=4242.0 failed on node gpu-a02: Job credential expired", "slurmd runs"),
])
def test_srun_refusing_a_step_says_whether_the_allocation_or_a_node_is_at_fault(line, hint):
    errors = parse_nccl_tests(line + "\n")["errors"]
    assert [e["code"] for e in errors][:1] == ["mpi_launch_failed"] and hint in errors[0]["hint"], errors
