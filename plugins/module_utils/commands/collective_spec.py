# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a ``collective`` run will be, checked before anything runs.

``validate(params)`` turns the module's parameters into the run's spec
(test parameters, hosts, rank layout, environment, MCA, launch options,
binary, expected bus bandwidth), raising ``option_rules.OptionError`` with
the option's name; ``initial_result`` is the module result before any run.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.clusterops.commcheck.plugins.module_utils.planning import collective_plan as plan_utils
from ansible_collections.clusterops.commcheck.plugins.module_utils.planning import collective_expectation
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import kubexec
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import mpi_cmd
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import srun_cmd
from ansible_collections.clusterops.commcheck.plugins.module_utils.options import option_rules as rules

MAX_TIMEOUT_S = 7 * 24 * 3600
MAX_BUSBW_GBS = 100000.0
MAX_NIC_GBPS = 100000.0


def check_positive(name, value, high):
    """A positive number up to ``high``: (0, 1] for a part of a whole."""
    value = rules.check_number(name, value, 0, high)
    if value <= 0:
        rules.fail(name, value, "must be greater than 0")
    return value


def check_counts(params):
    """Every count and duration has a range; negative numbers are errors, never dropped."""
    for name, low, high in (("gpus_per_node", 1, 1024), ("gpus_per_process", 1, 64), ("timeout", 1, MAX_TIMEOUT_S)):
        rules.check_int(name, params[name], low, high)
    for name, low, high in (("processes_per_node", 1, 4096), ("bisect_max_runs", 1, 1000)):
        if params[name] is not None:
            rules.check_int(name, params[name], low, high)
    for name in ("min_fraction", "link_efficiency"):
        check_positive(name, params[name], 1)
    if params["expected_busbw_gbs"] is not None:
        check_positive("expected_busbw_gbs", params["expected_busbw_gbs"], MAX_BUSBW_GBS)
    if len(params["nic_rates_gbps"]) > 64:
        rules.fail("nic_rates_gbps", params["nic_rates_gbps"], "lists more than 64 NICs")
    for index, rate in enumerate(params["nic_rates_gbps"]):
        check_positive("nic_rates_gbps[%d]" % index, rate, MAX_NIC_GBPS)


def check_launch(params):
    """How mpirun reaches the other hosts: the Kubernetes agent or an ssh configuration, set here only."""
    agent = ssh_config = None
    if params["mpi_agent_dir"] is not None:
        if params["transport"] != "kubectl":
            rules.fail("mpi_agent_dir", params["mpi_agent_dir"], "needs transport=kubectl (the agent runs in the pods)")
        directory = rules.check_path("mpi_agent_dir", params["mpi_agent_dir"])
        try:
            agent = kubexec.mca_options(directory)["plm_rsh_agent"]
        except kubexec.KubexecError as exc:
            rules.fail("mpi_agent_dir", params["mpi_agent_dir"], "is not usable: %s" % exc)
    if params["ssh_config"] is not None:
        # a regular file the run's user can read on the launcher host (in a pod: the runner's preflight checks it)
        check = rules.check_config_file if params["transport"] == "host" else rules.check_config_path
        ssh_config = check("ssh_config", params["ssh_config"])
    if (agent or ssh_config) and params["launcher"] != "openmpi":
        rules.fail("launcher", params["launcher"], "takes no mpi_agent_dir or ssh_config (they are Open MPI's)")
    return mpi_cmd.launch_mca(agent=agent, ssh_config=ssh_config)


def validate(params):
    """Everything the runs need, checked before anything runs; raises option_rules.OptionError."""
    library = params["library"]
    mpi_cmd.binary_name(library, params["operation"])
    check_counts(params)
    test = mpi_cmd.test_params(
        library, params["operation"], min_bytes=params["min_bytes"], max_bytes=params["max_bytes"],
        step_factor=params["step_factor"], iterations=params["iterations"],
        warmup_iterations=params["warmup_iterations"], check=params["check"], datatype=params["datatype"],
        reduce_op=params["reduce_op"], root=params["root"], gpus_per_process=params["gpus_per_process"],
        gpus_per_node=params["gpus_per_node"])
    default_slots = params["processes_per_node"] or (
        params["gpus_per_node"] // max(1, params["gpus_per_process"]) if library == "nccl" else params["gpus_per_node"])
    hosts = mpi_cmd.normalize_hosts(params["hosts"], max(1, default_slots))
    names = [h["name"] for h in hosts]
    if len(set(names)) != len(names):
        raise mpi_cmd.MpiCmdError("hosts: names are not unique: %s" % rules.show(names))
    layout = mpi_cmd.ranks_layout(library, hosts, params["gpus_per_node"], params["gpus_per_process"],
                                  params["processes_per_node"])
    env = mpi_cmd.check_env(params["env"])
    if library == "nccl" and params["detect_transport"] and "NCCL_DEBUG" not in env:
        env["NCCL_DEBUG"] = "INFO"
        env.setdefault("NCCL_DEBUG_SUBSYS", "INIT,NET")
    mca = mpi_cmd.check_mca(params["mca"])
    if params["launcher"] != "openmpi" and mca:
        raise mpi_cmd.MpiCmdError("mca options are Open MPI's; the %s launcher does not take them" % params["launcher"])
    launch = check_launch(params)
    job_id = check_launcher(params, hosts)
    binary = mpi_cmd.binary_path(library, params["operation"], params["binary_dir"])
    for index, device in enumerate(params["ib_devices"]):
        rules.check_name("ib_devices[%d]" % index, device, "rdma_device")
    if params["workdir"] is not None:
        rules.check_path("workdir", params["workdir"])
    if params.get("nic_rates_source") is not None:
        rules.check_text("nic_rates_source", params["nic_rates_source"], 200)
    expected, formula, expectation = expectation_of(params)
    return {"library": library, "test": test, "hosts": hosts, "layout": layout, "env": env, "mca": mca,
            "launch": launch, "binary": binary, "expected": expected, "formula": formula,
            "expectation": expectation, "slurm_job_id": job_id}


def check_launcher(params, hosts):
    """The launcher program is the launcher's; srun's allocation (its job id) and node names. Returns the job id
    (None for mpirun)."""
    if params["launcher"] != "srun":
        mpi_cmd.check_mpirun(params["mpirun"])
        if params.get("slurm_job_id") not in (None, ""):
            rules.fail("slurm_job_id", params["slurm_job_id"], "is srun's: it needs launcher=srun")
        return None
    srun_cmd.check_srun(params["mpirun"])
    if params["transport"] != "host":
        rules.fail("launcher", "srun", "runs on a Slurm node: it needs transport=host")
    for index, host in enumerate(hosts):
        srun_cmd.check_node(host["address"], "hosts[%d]" % index)
    if params.get("slurm_job_id") in (None, ""):
        raise mpi_cmd.MpiCmdError("launcher=srun runs the collective inside an allocation: set slurm_job_id, or run "
                                  "the module where SLURM_JOB_ID is set (inside salloc or sbatch)")
    return srun_cmd.check_job_id(params["slurm_job_id"])


def expectation_of(params):
    """(expected busbw GB/s, its formula, the evidence line): expected_busbw_gbs wins over nic_rates_gbps."""
    if params["expected_busbw_gbs"] is not None:
        expected = params["expected_busbw_gbs"]
        return expected, None, collective_expectation.expectation_text(expected, None, "configured")
    rates, efficiency = params["nic_rates_gbps"], params["link_efficiency"]
    expected = plan_utils.expected_busbw(rates, efficiency)
    formula = collective_expectation.busbw_formula(rates, efficiency)
    source = params.get("nic_rates_source") or "rates configured"
    return expected, formula, collective_expectation.expectation_text(expected, formula, source)


def run_params(spec, params, transport_name):
    """What ran, as the result's ``params`` and the records' params."""
    names = [h["name"] for h in spec["hosts"]]
    test = spec["test"]
    return {
        "library": spec["library"], "operation": params["operation"], "hosts": names, "nodes": len(names),
        "processes_per_node": spec["layout"]["processes_per_node"], "ranks": spec["layout"]["ranks"],
        "gpus_per_node": params["gpus_per_node"], "min_bytes": test["min_bytes"], "max_bytes": test["max_bytes"],
        "datatype": test["datatype"], "launcher": params["launcher"], "transport": transport_name,
    }


def initial_result(spec, params, transport_name):
    """The module result before any run: verdict skipped, the expectation and threshold filled in."""
    return {
        "changed": False, "cmd": [], "rc": None, "stdout": "", "stderr": "", "timed_out": False,
        "duration_s": None, "json_output": False, "result": {}, "verdict": "skipped", "cause": None,
        "fix": None, "busbw_gbs": None, "algbw_gbs": None, "expected_busbw_gbs": spec["expected"],
        "threshold_busbw_gbs": round(spec["expected"] * params["min_fraction"], 6) if spec["expected"] else None,
        "expectation": spec["expectation"],
        "transport": None, "errors": [], "params": run_params(spec, params, transport_name), "runs": [],
        "bad_nodes": [], "bisect": None,
    }
