# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Runs of a ``collective`` check: the pool run, then bisection in rounds of concurrent runs.

``CollectiveRunner`` finds the launcher and the test binary, makes the work
directory, runs ``mpirun`` through the transport (``commands/transport.py``)
and judges each run (``collective_plan.judge_run``); ``pool_run`` fills in the
module result from the pool run and, when asked, bisects the pool
(``bisection.py``): the runs of one round (disjoint subsets) run at the same
time, one thread and one ``mpirun`` each. The transport's ``run`` may be
called from several threads: every command is its own process (group) with
its own output files and deadline (``commands/runner.py``).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os
import re
import shutil
import tempfile
import threading

from ansible_collections.clusterops.commcheck.plugins.module_utils.planning import collective_plan as plan_utils
from ansible_collections.clusterops.commcheck.plugins.module_utils.planning import bisection
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import mpi_cmd
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import srun_cmd
from ansible_collections.clusterops.commcheck.plugins.module_utils.options import option_rules as rules
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_hccl_test import parse_hccl_test
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_nccl_tests import (
    parse_nccl_tests,
    parse_nccl_tests_json,
)
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.collective_stream import collective_line_filter
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.output_capture import filtered_output
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands.side_options import (
    OUTPUT_TOO_LARGE, too_large_entry)
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands.runner import CommandError, ControllerGone
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands.transport import (
    config_file_problem, identity_error)

# What the module itself finds before mpirun runs: code -> (likely cause, fix); the launcher's and the
# tests' own errors are the parsers' (parse_nccl_tests, parse_hccl_test).
COLLECTIVE_ERRORS = {
    "mpirun_not_found": ("The MPI launcher (mpirun) is not installed on the launcher host",
                         "install Open MPI (MPICH for launcher=mpich, Slurm's client for launcher=srun) on the "
                         "launcher host, or set mpirun to its path"),
    "binary_not_found": ("The test binary (nccl-tests' <op>_perf, hccl_test's <op>_test) is not in binary_dir (or on "
                         "PATH) on the launcher host",
                         "install the tests at the same path on every host and set binary_dir"),
    "launcher_not_srun": ("The launcher program given for launcher=srun did not print Slurm's version line to "
                          "srun --version", "set mpirun to Slurm's srun (a command name or its absolute path)"),
    "ssh_config_unusable": ("The ssh configuration for mpirun (ssh_config) is not a readable regular file in the "
                            "launcher pod", "give mpirun's ssh a configuration file that exists in the launcher pod"),
    "output_too_large": OUTPUT_TOO_LARGE,
}
STDOUT_LIMIT = 256 * 1024
STDERR_LIMIT = 64 * 1024
# What the collective module makes on the launcher when no workdir is given (removed afterwards).
TEMP_WORKDIR = re.compile(r"^/tmp/commcheck-collective\.[A-Za-z0-9]{6,}$")


class CollectiveRunner(object):
    """Runs subsets of the pool through the transport and judges them (``run`` is safe from several threads)."""

    def __init__(self, params, transport, spec):
        self.params = params
        self.transport = transport
        self.spec = spec
        self.by_name = dict((h["name"], h) for h in spec["hosts"])
        self.workdir = None
        self.own_workdir = False
        self.json_file = False

    # -- setup / teardown
    def make_workdir(self):
        if self.params["workdir"]:
            self.workdir = rules.check_path("workdir", self.params["workdir"])
            if not self.transport.remote:
                if not os.path.isdir(self.workdir):
                    os.makedirs(self.workdir)
            return
        if self.transport.remote:
            res = self.transport.run(["mktemp", "-d", "/tmp/commcheck-collective.XXXXXX"], 30)
            made = (res["stdout"] or "").strip().splitlines()
            if res["rc"] != 0 or not made or not TEMP_WORKDIR.match(made[-1]):
                raise CommandError("cannot make a work directory on the launcher: %s" % rules.show(
                    (res["stderr"] or res["stdout"] or "").strip()[-500:]))
            self.workdir = made[-1]
        else:
            self.workdir = tempfile.mkdtemp(prefix="commcheck-collective.")
        self.own_workdir = True

    def cleanup(self):
        if not self.own_workdir or not self.workdir:
            return
        if self.transport.remote:
            self.transport.run(["rm", "-rf", "--", self.workdir], 30)
        else:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def work_file(self, name):
        """A file of this run, inside the work directory."""
        return rules.check_inside("workdir", name, self.workdir)

    def write_file(self, path, lines):
        if self.transport.remote:
            # The script is constant; the path and the lines are positional arguments.
            res = self.transport.run(["sh", "-c", 'f=$1; shift; printf "%s\\n" "$@" > "$f"', "sh", path] + lines, 30)
            if res["rc"] != 0:
                raise CommandError("cannot write %s on the launcher: %s" % (path, res["stderr"].strip()))
            return
        with open(path, "w") as handle:
            handle.write("\n".join(lines) + "\n")

    # -- commands
    def argv(self, hosts, tag):
        """The argv of one run; ``tag`` (``<round>-<index>``) names its work files, unique per run."""
        spec = self.spec
        json_file = None
        if self.json_file:
            json_file = self.work_file("run-%s.json" % tag)
        program = mpi_cmd.binary_argv(spec["binary"], spec["test"], json_file=json_file)
        hostfile = None
        if self.params["launcher"] == "mpich":
            hostfile = self.work_file("hostfile-%s" % tag)
        layout = dict(spec["layout"], np=spec["layout"]["processes_per_node"] * len(hosts))
        if self.params["launcher"] == "srun":
            # nccl-tests drives GPUs, which Slurm hands out; hccl_test's NPUs are no Slurm GPUs
            gpus = self.params["gpus_per_node"] if spec["library"] == "nccl" else None
            argv = srun_cmd.srun_argv(spec["slurm_job_id"], hosts, layout["processes_per_node"], program,
                                      env=spec["env"], srun=self.params["mpirun"], gpus_per_node=gpus,
                                      timeout=self.params["timeout"])
            return argv, None, json_file, layout
        argv = mpi_cmd.launcher_argv(self.params["launcher"], hosts, layout, program, env=spec["env"],
                                     mca=spec["mca"], mpirun=self.params["mpirun"],
                                     allow_run_as_root=self.params["allow_run_as_root"], hostfile=hostfile,
                                     launch=spec["launch"])
        return argv, hostfile, json_file, layout

    def planned_cmd(self):
        """The pool run's argv, for check mode and for runs that never started."""
        saved = self.workdir
        self.workdir = saved or self.params["workdir"] or "/tmp/commcheck-collective.XXXXXX"
        try:
            return self.argv(self.spec["hosts"], run_tag(1, 1))[0]
        finally:
            self.workdir = saved

    def preflight(self):
        """Find mpirun and the binary on the launcher; decide on JSON. Returns an error judgement or None."""
        mpirun = self.params["mpirun"]
        if not self.transport.which(mpirun):
            return {"verdict": "error", "cause": "the launcher %s is not installed on the launcher host" % rules.show(mpirun),
                    "fix": COLLECTIVE_ERRORS["mpirun_not_found"][1],
                    "errors": [{"code": "mpirun_not_found", "message": mpirun}]}
        if self.params["launcher"] == "srun":
            # srun acts on the cluster: it says it is Slurm's before it starts a step
            problem = identity_error(self.transport, self.transport.which(mpirun), "srun", "mpirun")
            if problem:
                return {"verdict": "error", "cause": problem, "fix": COLLECTIVE_ERRORS["launcher_not_srun"][1],
                        "errors": [{"code": "launcher_not_srun", "message": problem}]}
        if self.params["ssh_config"] and self.transport.remote:
            problem = config_file_problem(self.transport, "ssh_config", self.params["ssh_config"], sensitive=False,
                                          text=None)
            if problem:
                return {"verdict": "error", "cause": problem, "fix": COLLECTIVE_ERRORS["ssh_config_unusable"][1],
                        "errors": [{"code": "ssh_config_unusable", "message": problem}]}
        binary = self.spec["binary"]
        found = self.transport.which(binary)
        if not found:
            where = "in %s" % self.params["binary_dir"] if self.params["binary_dir"] else "on PATH"
            return {"verdict": "error",
                    "cause": "the test binary %s was not found %s on the launcher host" % (
                        os.path.basename(binary), where),
                    "fix": "install %s at the same path on every host and set binary_dir" % (
                        "nccl-tests (built with MPI=1)" if self.spec["library"] == "nccl" else "hccl_test"),
                    "errors": [{"code": "binary_not_found", "message": binary}]}
        self.spec["binary"] = found if os.sep in found and is_program_path(found) else binary
        mode = self.params["json_output"]
        if self.spec["library"] == "nccl" and mode != "never":
            res = self.transport.run([self.spec["binary"], "--help"], 30)
            supported = mpi_cmd.nccl_json_supported(res["stdout"] + "\n" + res["stderr"])
            if mode == "always" and not supported:
                return {"verdict": "error",
                        "cause": "json_output=always but %s has no -J/--output_file (nccl-tests older than 2.16)"
                                 % os.path.basename(binary),
                        "fix": "update nccl-tests or use json_output=auto", "errors": []}
            self.json_file = supported
        return None

    def run(self, names, round_number=1, index=1):
        """One collective on the hosts named, run ``index`` of round ``round_number``; returns the run record."""
        hosts = [self.by_name[n] for n in names]
        argv, hostfile, json_file, layout = self.argv(hosts, run_tag(round_number, index))
        if hostfile:
            self.write_file(hostfile, mpi_cmd.hostfile_lines(hosts, layout["processes_per_node"]))
        # the output is bounded: its head and tail, and of its middle the lines the parsers need
        res = self.transport.run(argv, self.params["timeout"], capture=filtered_output(collective_line_filter()))
        if res.get("abandoned"):
            # ansible-playbook was interrupted: mpirun, its daemons and ranks were stopped; nothing more runs
            raise ControllerGone("stopped: the controller went away (ansible-playbook was interrupted)", argv)
        text = res["stdout"] + "\n" + res["stderr"]
        if self.spec["library"] == "nccl":
            parsed = parse_nccl_tests(text)
            if json_file:
                raw = self.transport.read_file(json_file)
                if raw:
                    parsed = plan_utils.merge_json_result(parsed, parse_nccl_tests_json(raw))
        else:
            parsed = parse_hccl_test(text)
        nranks = layout["np"] * (self.spec["test"]["gpus_per_process"] if self.spec["library"] == "nccl" else 1)
        judgement = plan_utils.judge_run(
            self.spec["library"], self.params["operation"], nranks, res["rc"], res["timed_out"], parsed,
            expected_busbw_gbs=self.spec["expected"], min_fraction=self.params["min_fraction"],
            busbw_metric=self.params["busbw_metric"],
            ib_expected=self.params["ib_expected"] or bool(self.params["ib_devices"]),
            timeout=self.params["timeout"], ib_devices=self.params["ib_devices"],
            expected_formula=self.spec.get("formula"))
        if res.get("output_too_large") and (res.get("output_stopped") or not parsed.get("rows")):
            judgement = lost_in_output(judgement, res)
        record = {
            "hosts": list(names), "round": round_number, "cmd": argv, "rc": res["rc"], "timed_out": res["timed_out"],
            "duration_s": res.get("duration_s"), "busbw_gbs": judgement["busbw_gbs"],
            "algbw_gbs": judgement["algbw_gbs"], "verdict": judgement["verdict"], "cause": judgement["cause"],
            "fix": judgement["fix"], "bad": judgement["verdict"] in ("fail", "error"),
            "transport": judgement["transport"],
            "errors": [e.get("code") for e in judgement["errors"]], "json_output": bool(json_file and parsed.get(
                "format") == "json"),
        }
        return record, res, parsed, judgement


def lost_in_output(judgement, res):
    """The judgement of a run whose result table was lost in an output too large to keep: an error that says so."""
    entry = too_large_entry(COLLECTIVE_ERRORS, res)
    return dict(judgement, verdict="error", cause=entry["cause"], fix=entry["fix"],
                errors=[entry] + list(judgement.get("errors") or []))


def run_tag(round_number, index):
    """What names a run's work files: its round and its index in the round."""
    return "%d-%d" % (round_number, index)


def is_program_path(path):
    """True for an absolute program path without '..' or control characters (what `which` should answer)."""
    try:
        return rules.check_binary("binary", path, must_exist=False).startswith("/")
    except rules.OptionError:
        return False


def compact(parsed):
    """The parsed result without bulky or environment-revealing parts."""
    out = dict(parsed or {})
    out.pop("env", None)
    return out


def tail(text, limit):
    text = text or ""
    return text if len(text) <= limit else "...[%d bytes cut]...\n%s" % (len(text) - limit, text[-limit:])


def pool_run(runner, result, warn):
    """The pool run into ``result``; then the bad nodes, from the launcher's errors or by bisection."""
    names = [h["name"] for h in runner.spec["hosts"]]
    record, res, parsed, judgement = runner.run(names)
    result.update(
        cmd=record["cmd"], rc=res["rc"], stdout=tail(res["stdout"], STDOUT_LIMIT),
        stderr=tail(res["stderr"], STDERR_LIMIT), timed_out=res["timed_out"], duration_s=res.get("duration_s"),
        json_output=record["json_output"], result=compact(parsed), verdict=judgement["verdict"],
        cause=judgement["cause"], fix=judgement["fix"], busbw_gbs=judgement["busbw_gbs"],
        algbw_gbs=judgement["algbw_gbs"], transport=judgement["transport"], errors=judgement["errors"],
        runs=[record])
    if res.get("output_too_large"):
        result.update(output_too_large=True, output_bytes=res.get("output_bytes"))
    for warning in judgement["warnings"]:
        warn(warning)
    if not record["bad"]:
        return
    named = plan_utils.named_hosts(judgement, runner.spec["hosts"])
    if named:
        # The launcher's own errors name the host(s): ssh to it failed, a rank died there.
        result["bad_nodes"] = named
        return
    if runner.params["bisect"] and len(names) >= 2 and not plan_utils.global_error(judgement):
        bisect_runs(runner, names, result)


def run_round(runner, subsets, number):
    """The runs of one bisection round at the same time: one thread (one ``mpirun``) per subset.

    Returns the run records in the order of ``subsets``. Every run is waited
    for; then the first exception a run raised (a file that could not be
    written, a signal held back while a command started) is raised here.
    """
    records = [None] * len(subsets)
    raised = []

    def run_one(index):
        try:
            records[index] = runner.run(subsets[index], number, index + 1)[0]
        except BaseException as exc:   # pylint: disable=broad-except
            raised.append(exc)

    if len(subsets) == 1:
        run_one(0)
    else:
        threads = [threading.Thread(target=run_one, args=(i,), name="commcheck-round-%d-%d" % (number, i + 1))
                   for i in range(len(subsets))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    if raised:
        raise raised[0]
    return records


def bisect_runs(runner, names, result):
    """Bisect the bad pool in rounds: every run goes into ``result['runs']``, the outcome into the result."""
    params = runner.params

    def run_subsets(subsets, number):
        records = run_round(runner, subsets, number)
        result["runs"].extend(records)
        return [record["bad"] for record in records]

    plan = bisection.bisect_pool(names, run_subsets, confirm=params["bisect_confirm"],
                                 verify=params["bisect_verify"],
                                 max_runs=params["bisect_max_runs"] or 2 * len(names) + 3)
    first_cause = result["cause"]
    result["bad_nodes"], result["cause"], result["bisect"] = bisection.bisect_outcome(
        plan, first_cause, len(result["runs"]))
    if plan["conclusion"] == "flaky":
        mark_flaky(result, first_cause)


def run_evidence(record):
    """One line of evidence for a run: its round, hosts, verdict and bus bandwidth."""
    return "round %s: %s: %s%s" % (record.get("round"), ",".join(record["hosts"]), record["verdict"],
                                   " (%s GB/s)" % record["busbw_gbs"] if record.get("busbw_gbs") is not None else "")


def mark_flaky(result, first_cause):
    """No part of the pool failed and the pool passed on retest: the pool run is flaky, nobody is blamed."""
    pool, retest = result["runs"][0], result["runs"][-1]
    evidence = [run_evidence(pool), run_evidence(retest)]
    # the command line stays, so the operator can run the pool again as it ran
    command = [" ".join(pool["cmd"])] if pool.get("cmd") else []
    pool.update(verdict="flaky", cause="failed once, passed on retest (%s)" % first_cause,
                evidence=evidence + command,
                fix="run the check again; a pool that is flaky run after run has a failing part")
    result["bisect"]["evidence"] = evidence
    result.update(verdict="flaky", fix=pool["fix"])
