#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
module: collective
short_description: Run an NCCL (nccl-tests) or HCCL (hccl_test) collective test through mpirun
version_added: 1.0.0
description:
  - Runs the collective test of O(library) for O(operation) across O(hosts) with C(mpirun), on the host the
    module runs on (the launcher, usually the first host of the pool, or a host given with C(delegate_to)).
  - The launcher command is built from parameters only, as an argv list. Open MPI
    (O(launcher=openmpi)) gets C(mpirun [--allow-run-as-root] -np N -H h1:K,h2:K --map-by ppr:K:node
    -x NAME=value ... --mca key value ... BINARY ...); MPICH / Intel MPI (O(launcher=mpich)) gets
    C(mpirun -f HOSTFILE -n N -genv NAME value ... BINARY ...) with a hostfile of C(host:K) lines written to
    O(workdir). Slurm (O(launcher=srun)) gets one step of the allocation O(slurm_job_id) per run, C(env NAME=value ...
    srun --jobid=JOB --mpi=pmix --nodes=N --ntasks=N*K --ntasks-per-node=K --nodelist=n1,n2 [--gpus-per-node=G]
    --kill-on-bad-exit=1 --label --export=ALL --time=MINUTES BINARY ...), the hosts' addresses being Slurm node names.
  - nccl-tests gets C(<op>_perf -b MIN -e MAX -f FACTOR -g GPUS -n ITERS -w WARMUP -c CHECK -d TYPE [-o OP]
    [-r ROOT] [-J FILE.json]); hccl_test gets C(<op>_test -p NPUS -b MIN -e MAX -f FACTOR -n ITERS -w WARMUP
    -c CHECK -d TYPE [-o OP] [-r ROOT]).
  - Every parameter is validated before anything runs (host names, sizes, datatypes, environment names and
    values, MCA names and values, the launcher and test binaries, paths, number ranges); bad input fails the task
    without starting a process, with a message that names the option.
  - How C(mpirun) starts its daemons on the other hosts (Open MPI's launch agent, C(plm_*), C(orte_*), C(prte_*),
    exec paths, prefixes) is never taken from O(mca) or O(env); the module sets it itself from O(mpi_agent_dir)
    (the Kubernetes agent) or O(ssh_config).
  - When the nccl-tests binary lists C(-J,--output_file) in its C(--help) (nccl-tests 2.16 and later), its JSON
    file is read for full-precision numbers; otherwise its text output is parsed. Either way the output is
    parsed with C(clusterops.commcheck.parse_nccl_tests) / C(clusterops.commcheck.parse_hccl_test).
  - The whole C(mpirun) runs under O(timeout); on timeout its process group is killed, and Open MPI's daemons
    on the other hosts end with it (srun forwards the signal to its tasks; its C(--time) is O(timeout) too).
  - When nobody waits for the result any more (C(ansible-playbook) was interrupted, so the module's output pipe
    closed, or the module got SIGTERM, SIGHUP or SIGINT), C(mpirun) is stopped the same way within about a
    second, its daemons and ranks on every host with it, and no further run (bisection) starts.
  - The run gets a verdict against O(expected_busbw_gbs), or against the bandwidth derived from
    O(nic_rates_gbps) (sum of one node's NIC link rates / 8 x O(link_efficiency)), with a cause and a fix.
    NCCL on the C(Socket) transport (C(NET/Socket)) while O(ib_expected) or O(ib_devices) say RDMA is there is a
    V(fail); the cause names the devices, the fix the NCCL settings to check (C(NCCL_IB_HCA), C(NCCL_SOCKET_IFNAME),
    C(NCCL_IB_GID_INDEX), the IB/RoCE net plugin) and the C(NCCL_DEBUG=INFO) lines to look for. HCCL is not checked.
  - With O(bisect=true), a pool run that fails or is below its threshold is followed by rounds of runs on
    halves, quarters, ... of the pool to name the bad node(s) (RV(runs), RV(bad_nodes)). The runs of a round
    are on disjoint hosts and run at the same time (one C(mpirun) each); every round runs both halves of
    every group that holds a bad node, so one bad node among N takes at most ceil(log2 N) + 2 rounds, the
    pool run and the verify run included (two bad nodes take the same from 8 hosts up, two rounds more below).
    A lone suspect is always run with known-good partners, because a collective across nodes needs two.
  - When every half of the pool passes, no part of it reproduced the failure, and the pool is run once more as
    it was. If that passes, the pool run's verdict becomes V(flaky) (no node blamed); if it fails again, the
    fault needs hosts of both halves together (a shared link, a switch) and the conclusion is
    C(inconsistent).
author:
  - commcheck developers (@clusterops)
extends_documentation_fragment:
  - clusterops.commcheck.transport
  - clusterops.commcheck.planned_run.collective
options:
  library:
    description: The communication library whose test runs.
    type: str
    required: true
    choices: [nccl, hccl]
  operation:
    description:
      - The collective. nccl-tests has V(all_reduce), V(all_gather), V(broadcast), V(reduce_scatter), V(reduce),
        V(alltoall), V(sendrecv), V(gather), V(scatter), V(hypercube) (binaries C(<operation>_perf));
        hccl_test has V(all_reduce), V(all_gather), V(broadcast), V(reduce_scatter), V(reduce), V(alltoall),
        V(alltoallv) (binaries C(<operation>_test)).
    type: str
    default: all_reduce
    choices: [all_gather, all_reduce, alltoall, alltoallv, broadcast, gather, hypercube, reduce,
              reduce_scatter, scatter, sendrecv]
  hosts:
    description:
      - The hosts of the pool, in rank order. Each item is a host name or IP address (C(node1), C(10.0.0.1)),
        optionally with its slots (C(node1:8), C([fe80::1]:8)), or a dict with C(address) (required),
        C(slots) and C(name) (how the host is reported, for example its inventory name; default the address).
      - Rank 0 runs on the first host; nccl-tests writes its JSON file there.
    type: list
    elements: raw
    required: true
  gpus_per_node:
    description: GPUs (NCCL) or NPUs (HCCL, passed as C(-p)) each host uses, 1 to 1024.
    type: int
    default: 1
  gpus_per_process:
    description: GPUs each nccl-tests process drives (C(-g)), 1 to 64. Ignored for hccl_test (one process per NPU).
    type: int
    default: 1
  processes_per_node:
    description: Processes started on each host. Default O(gpus_per_node) / O(gpus_per_process) for nccl-tests and
      O(gpus_per_node) for hccl_test.
    type: int
  min_bytes:
    description: Smallest message size (C(-b)), in bytes or with a K, M or G suffix (powers of 1024).
    type: str
    default: 32M
  max_bytes:
    description: Largest message size (C(-e)), in bytes or with a K, M or G suffix.
    type: str
    default: 8G
  step_factor:
    description: Multiplication factor between sizes (C(-f)).
    type: int
    default: 2
  iterations:
    description: Timed iterations per size (C(-n)).
    type: int
    default: 20
  warmup_iterations:
    description: Untimed warm-up iterations (C(-w)).
    type: int
    default: 5
  check:
    description: Result checking (C(-c)); V(0) turns it off. Wrong results make the verdict V(fail).
    type: int
    default: 1
  datatype:
    description:
      - Element type (C(-d)). Default V(float) for nccl-tests (also V(half), V(bfloat16), V(double), V(f8e4m3), V(f8e5m2), V(int8),
        V(uint8), V(int32), V(uint32), V(int64), V(uint64)) and V(fp32) for hccl_test (also V(fp16), V(bfp16),
        V(fp64), V(int8), V(int16), V(int32), V(int64), V(uint8), V(uint16), V(uint32), V(uint64)).
    type: str
  reduce_op:
    description:
      - Reduction (C(-o)) of V(all_reduce), V(reduce) and V(reduce_scatter). nccl-tests knows V(sum), V(prod),
        V(min), V(max), V(avg); hccl_test V(sum), V(prod), V(min), V(max).
    type: str
    default: sum
  root:
    description: Root rank (C(-r)) of V(broadcast), V(reduce), V(gather) and V(scatter).
    type: int
    default: 0
  env:
    description:
      - Environment variables for every rank, forwarded with C(-x NAME=value) (Open MPI) or
        C(-genv NAME value) (MPICH), for example C(NCCL_IB_HCA), C(NCCL_IB_GID_INDEX), C(NCCL_SOCKET_IFNAME),
        C(HCCL_SOCKET_IFNAME).
      - Names must start with C(NCCL_), C(HCCL_), C(UCX_), C(OMPI_), C(CUDA_), C(NVIDIA_), C(HOROVOD_) or
        C(ASCEND_). Names with a word that loads code, starts a program or writes a file on every host are
        refused (C(PLUGIN), C(PRELOAD), C(LIB), C(LIBRARY), C(PATH), C(DIR), C(FILE), C(HOME), C(PREFIX), C(AGENT),
        C(EXEC), ..., so C(NCCL_NET_PLUGIN), C(NCCL_DEBUG_FILE), C(NCCL_TOPO_FILE), C(UCX_MODULE_DIR)).
      - C(OMPI_MCA_<key>), C(PMIX_MCA_<key>) and C(PRTE_MCA_<key>) set MCA parameters; their C(<key>) obeys the
        rules of O(mca).
      - Values may not contain control characters or start with C(-).
    type: dict
    default: {}
  mca:
    description:
      - Open MPI MCA parameters, passed as C(--mca key value). Not allowed with O(launcher=mpich).
      - "Keys come from an allow-list: C(btl), C(pml), C(osc), C(coll), C(mtl), C(oob),
        C(hwloc_base_binding_policy), C(hwloc_base_use_hwthreads_as_cpus), C(rmaps_base_mapping_policy),
        C(rmaps_base_ranking_policy), C(rmaps_base_oversubscribe) and the families C(btl_tcp_*) (for example
        C(btl_tcp_if_include), C(btl_tcp_if_exclude)), C(oob_tcp_*) (C(oob_tcp_if_include)), C(btl_openib_*),
        C(btl_vader_*), C(btl_sm_*), C(btl_smcuda_*), C(btl_uct_*), C(btl_self_*), C(btl_base_*), C(pml_ucx_*),
        C(pml_ob1_*), C(pml_base_*), C(osc_ucx_*), C(osc_rdma_*), C(osc_base_*), C(coll_hcoll_*), C(coll_tuned_*),
        C(coll_ucc_*), C(coll_base_*), C(mtl_ofi_*), C(mtl_base_*), C(opal_common_ucx_*) and C(mpi_*)."
      - Refused whatever the allow-list says - keys that choose how remote daemons start or where programs, libraries
        and files come from; C(plm_*), C(orte_*), C(prte_*), C(pls_*), C(odls_*), C(ess_*), C(mca_base_*),
        C(pmix_*), any key with C(agent), C(exec), C(prefix), C(launch), C(spawn), C(daemon) in it or with a word
        C(rsh), C(ssh), C(path), C(dir), C(file), C(args), ... (so C(plm_rsh_agent), C(orte_launch_agent),
        C(plm_rsh_args)). Use O(ssh_config) for ssh settings.
      - Values are one word (letters, digits and the characters C(_.,:=/+@%-)), optionally after C(^) (Open MPI's
        all-but, as in C(btl=^openib)).
    type: dict
    default: {}
  launcher:
    description:
      - V(openmpi) for Open MPI's C(mpirun -H); V(mpich) for the MPICH / Intel MPI hydra style
        C(mpirun -f hostfile -n N) that hccl_test's documentation uses; V(srun) for Slurm's C(srun --mpi=pmix)
        inside the allocation O(slurm_job_id) (O(transport=host) only; no O(mca), O(ssh_config)).
    type: str
    default: openmpi
    choices: [openmpi, mpich, srun]
  mpirun:
    description:
      - The launcher binary, a name looked up on E(PATH) of the launcher or an absolute path (no relative path, no
        C(..)). With O(launcher=srun) its file name must be C(srun), and C(srun --version) must print Slurm's
        version line before the first run.
    type: str
    default: mpirun
  slurm_job_id:
    description:
      - With O(launcher=srun), the job id of the allocation the runs are steps of (C(--jobid)); default the
        E(SLURM_JOB_ID) of the module's environment (inside C(salloc) or C(sbatch)). Without either the task fails.
    type: str
  allow_run_as_root:
    description: Add C(--allow-run-as-root) (Open MPI refuses to run as root without it).
    type: bool
    default: false
  binary_dir:
    description:
      - Directory of the test binaries on every host (for example C(/opt/nccl-tests/build)), an absolute path
        without C(..). When omitted the binary is looked up on E(PATH) of the launcher, and that path is used on
        every host.
    type: path
  json_output:
    description: Use nccl-tests' C(-J) JSON file. V(auto) uses it when the binary's C(--help) lists C(-J,--output_file);
      V(always) fails when it does not; V(never) parses the text output only. Ignored for hccl_test.
    type: str
    default: auto
    choices: [auto, always, never]
  detect_transport:
    description: For nccl-tests, add C(NCCL_DEBUG=INFO) and C(NCCL_DEBUG_SUBSYS=INIT,NET) (unless O(env) sets
      C(NCCL_DEBUG)) so the output says which network NCCL used (C(Using network IB) / C(Socket)).
    type: bool
    default: true
  timeout:
    description: Seconds one C(mpirun) may run (each bisection run gets the same), 1 to 604800.
    type: int
    default: 900
  expected_busbw_gbs:
    description: Expected bus bandwidth in GB/s; takes precedence over O(nic_rates_gbps).
    type: float
  nic_rates_gbps:
    description: Link rates (Gb/s) of the NICs one node uses for the collective, for example
      C([400, 400, 400, 400, 400, 400, 400, 400]); the expected bus bandwidth is their sum / 8 x O(link_efficiency).
    type: list
    elements: float
    default: []
  nic_rates_source:
    description:
      - Where O(nic_rates_gbps) came from, shown with the expectation in RV(expectation) and the records' evidence
        (text of at most 200 characters, no control characters). The C(collective) role passes C(rates from discovery, slowest host h3) or
        C(rates configured).
    type: str
  link_efficiency:
    description: Part of the line rate a healthy fabric reaches, used with O(nic_rates_gbps).
    type: float
    default: 0.9
  min_fraction:
    description: A run passes when its bus bandwidth is at least this part of the expected bus bandwidth.
    type: float
    default: 0.8
  busbw_metric:
    description:
      - Which bus bandwidth a run is judged by. V(max) the best size (the plateau of the sweep), V(largest) the
        largest size, V(avg) nccl-tests' C(Avg bus bandwidth) (includes the latency-bound small sizes).
    type: str
    default: max
    choices: [max, largest, avg]
  ib_expected:
    description: RDMA devices are there, so NCCL on its C(Socket) transport is a V(fail).
    type: bool
    default: false
  ib_devices:
    description:
      - RDMA devices found on the hosts (for example from C(clusterops.commcheck.rdma_facts)); any implies
        O(ib_expected).
      - The C(collective) role passes the devices with an active port that discovery found on the hosts of the run.
    type: list
    elements: str
    default: []
  bisect:
    description: After a pool run that fails or is below its threshold, run subsets to name the bad node(s).
    type: bool
    default: false
  bisect_max_runs:
    description: Most runs (not rounds), the pool run included, bisection may make; a round that would go past it is
      not started. Default 2 x hosts + 3.
    type: int
  bisect_confirm:
    description:
      - Name a node bad only after a run of it with known-good hosts only was bad. With V(false) a node is named
        as soon as the runs imply it, which saves a run or two but trusts every single result.
    type: bool
    default: true
  bisect_verify:
    description:
      - When bisection named bad node(s), run the pool without them once more. If that run is bad as well the
        conclusion is C(inconsistent) (a flaky result misled the search, or no single node explains the fault)
        instead of trusting the names.
    type: bool
    default: true
  workdir:
    description:
      - Directory on the launcher for the MPICH hostfile and the JSON files (an absolute path without C(..); the
        module writes only C(hostfile-R-I) and C(run-R-I.json) inside it, R the round and I the run in it);
        a new temporary directory (removed afterwards) when omitted.
    type: path
  mpi_agent_dir:
    description:
      - With O(transport=kubectl), the directory inside the pods where M(clusterops.commcheck.test_pods) installed
        the C(kubexec.sh) agent (its O(clusterops.commcheck.test_pods#module:mpi_agent_dir)). The module then adds
        C(--mca plm_rsh_agent <dir>/kubexec.sh --mca plm_rsh_no_tree_spawn 1), so C(mpirun) in the first pod starts
        its daemons in the other pods with C(kubectl exec).
    type: str
  ssh_config:
    description:
      - An ssh client configuration file on the launcher (absolute path, no spaces) for the ssh that Open MPI starts
        its daemons with (C(--mca plm_rsh_args "-F <file>")), for a port, key or user other than the launcher
        user's C(~/.ssh/config).
    type: path
  fail_on_error:
    description:
      - Fail the task when the verdict is V(error) (nothing could be measured). A V(fail) verdict (measured,
        but too slow or wrong) never fails the task; its cause and fix are in the result.
    type: bool
    default: true
attributes:
  check_mode:
    support: full
    description: In check mode nothing runs; the module validates its input and returns the command it would run.
  platform:
    support: full
    platforms: posix
    description: Runs on the launcher host (or, with the kubectl transport, in its pod).
notes:
  - The binary must exist at the same path on every host, and the launcher must reach every host the way its
    MPI starts remote processes (key-based ssh for Open MPI and hydra).
  - Open MPI refuses to run as root unless O(allow_run_as_root=true).
seealso:
  - module: clusterops.commcheck.perftest
  - plugin: clusterops.commcheck.parse_nccl_tests
    plugin_type: filter
  - plugin: clusterops.commcheck.commcheck_bisect
    plugin_type: filter
'''

EXAMPLES = r'''
- name: All-reduce across two 8-GPU nodes over RoCE
  clusterops.commcheck.collective:
    library: nccl
    operation: all_reduce
    hosts: [gpu-a:8, gpu-b:8]
    gpus_per_node: 8
    min_bytes: 32M
    max_bytes: 8G
    env:
      NCCL_IB_HCA: mlx5_0,mlx5_1,mlx5_2,mlx5_3
      NCCL_IB_GID_INDEX: 3
      NCCL_SOCKET_IFNAME: bond0
    mca:
      btl_tcp_if_include: bond0
      oob_tcp_if_include: bond0
    binary_dir: /opt/nccl-tests/build
    nic_rates_gbps: [200, 200, 200, 200]
    ib_expected: true
  register: allreduce

- name: Whole pool, and name the slow node(s) when it is below 80% of 40 GB/s
  clusterops.commcheck.collective:
    library: nccl
    hosts: "{{ groups['gpu'] | map('extract', hostvars, 'ansible_host') | list }}"
    gpus_per_node: 8
    expected_busbw_gbs: 40
    bisect: true
    fail_on_error: false
  run_once: true
  register: pool

- name: HCCL all-reduce on two Ascend nodes, MPICH style hostfile
  clusterops.commcheck.collective:
    library: hccl
    hosts: [10.78.130.22, 10.78.130.21]
    gpus_per_node: 8
    launcher: mpich
    min_bytes: 8K
    max_bytes: 64M
    datatype: fp32
    binary_dir: /usr/local/Ascend/ascend-toolkit/latest/tools/hccl_test/bin
    env:
      HCCL_SOCKET_IFNAME: eth0
'''

RETURN = r'''
cmd:
  description: The launcher command of the pool run, as an argv list.
  returned: always
  type: list
  elements: str
  sample: [mpirun, -np, "2", -H, "a:1,b:1", --map-by, "ppr:1:node", all_reduce_perf, -b, 32M, -e, 8G]
rc:
  description: Exit status of the pool run (null when it did not run).
  returned: always
  type: int
stdout:
  description:
    - What the pool run printed (the last 256 KiB). Of an output larger than the module keeps (its first and last
      64 KiB, and the lines of the middle the parsers need), C(output_too_large) is true and C(output_bytes) has
      the sizes of C(stdout) and C(stderr).
  returned: always
  type: str
stderr:
  description: What the pool run printed on stderr (the last 64 KiB).
  returned: always
  type: str
timed_out:
  description: The pool run was stopped at O(timeout).
  returned: always
  type: bool
duration_s:
  description: Seconds the pool run took.
  returned: always
  type: float
json_output:
  description: nccl-tests' JSON file was used for the numbers.
  returned: always
  type: bool
result:
  description:
    - The parsed pool run (keys of C(parse_nccl_tests) / C(parse_hccl_test)), without the raw JSON's environment.
  returned: always
  type: dict
verdict:
  description:
    - V(pass), V(warn), V(fail) (measured, below threshold or wrong data), V(error) (nothing measured),
      V(skipped); V(flaky) when bisection found no part of a failing pool at fault and the pool passed on
      retest.
  returned: always
  type: str
  sample: fail
cause:
  description: Why the verdict is not V(pass).
  returned: always
  type: str
fix:
  description: What to do about it.
  returned: always
  type: str
busbw_gbs:
  description: The pool run's bus bandwidth (GB/s) by O(busbw_metric).
  returned: always
  type: float
algbw_gbs:
  description: The pool run's best algorithm bandwidth (GB/s).
  returned: always
  type: float
expected_busbw_gbs:
  description: The expected bus bandwidth (given or derived), or null.
  returned: always
  type: float
threshold_busbw_gbs:
  description: The pass threshold, O(min_fraction) x RV(expected_busbw_gbs), or null.
  returned: always
  type: float
expectation:
  description:
    - How RV(expected_busbw_gbs) was reached, also the last evidence line of every run's record; a slow run's
      cause shows the formula next to the expected value; null without an expectation.
  returned: always
  type: str
  sample: expected 45.0 GB/s = 4 x 100 Gb/s / 8 x 0.9 efficiency (rates from discovery, slowest host h3)
transport:
  description: The network NCCL said it used (C(IB), C(Socket), a plugin name), or null.
  returned: always
  type: str
errors:
  description: Errors found in the pool run's output (code, message, cause, fix, hosts).
  returned: always
  type: list
  elements: dict
params:
  description: What ran (library, operation, hosts, nodes, ranks, sizes, datatype, launcher).
  returned: always
  type: dict
runs:
  description:
    - Every run made, the pool run first, then the bisection runs round by round; each with C(hosts) (names),
      C(round) (1 for the pool run; the runs of one round ran at the same time), C(cmd), C(rc), C(timed_out),
      C(duration_s), C(busbw_gbs), C(algbw_gbs), C(verdict), C(cause), C(fix), C(bad) and C(errors) (codes).
    - A flaky pool run (see RV(bisect)) has the verdict V(flaky), a cause that starts with C(failed once, passed
      on retest) and C(evidence), a line for it and one for its retest, then its command line.
  returned: always
  type: list
  elements: dict
bad_nodes:
  description: Hosts (names) named bad, by bisection or because the launcher's errors name them.
  returned: always
  type: list
  elements: str
bisect:
  description:
    - The bisection plan's C(conclusion) (C(isolated), C(flaky), C(inconsistent), C(unresolved),
      C(max_runs)), C(good_nodes), C(unresolved), C(inferred), C(unexplained) (indexes of bad runs no named
      node explains), C(suspects) (what an C(inconsistent) search would have named; not in RV(bad_nodes)),
      C(runs) (how many), C(rounds) (how many, the pool run's round included), C(retest) (null, or
      C(passed) / C(failed) when the pool was run again because no part of it failed on its own) and, when
      C(flaky), C(evidence); null when no bisection ran.
  returned: always
  type: dict
'''

import os

from ansible_collections.clusterops.commcheck.plugins.module_utils.options.module_args import checked_module

from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import mpi_cmd
from ansible_collections.clusterops.commcheck.plugins.module_utils.options import option_rules as rules
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import collective_spec
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands.collective_runner import (
    CollectiveRunner,
    pool_run,
)
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands.runner import (
    CommandError,
    controller_gone,
    install_cleanup_handlers,
)
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands.transport import (
    TRANSPORT_ARGSPEC,
    get_transport,
)

ARGUMENT_SPEC = dict(
    library=dict(type="str", required=True, choices=["nccl", "hccl"]),
    operation=dict(type="str", default="all_reduce", choices=list(mpi_cmd.OPERATIONS)),
    hosts=dict(type="list", elements="raw", required=True),
    gpus_per_node=dict(type="int", default=1),
    gpus_per_process=dict(type="int", default=1),
    processes_per_node=dict(type="int"),
    min_bytes=dict(type="str", default="32M"),
    max_bytes=dict(type="str", default="8G"),
    step_factor=dict(type="int", default=2),
    iterations=dict(type="int", default=20),
    warmup_iterations=dict(type="int", default=5),
    check=dict(type="int", default=1),
    datatype=dict(type="str"),
    reduce_op=dict(type="str", default="sum"),
    root=dict(type="int", default=0),
    env=dict(type="dict", default={}),
    mca=dict(type="dict", default={}),
    launcher=dict(type="str", default="openmpi", choices=["openmpi", "mpich", "srun"]),
    mpirun=dict(type="str", default="mpirun"),
    slurm_job_id=dict(type="str"),
    allow_run_as_root=dict(type="bool", default=False),
    binary_dir=dict(type="path"),
    json_output=dict(type="str", default="auto", choices=["auto", "always", "never"]),
    detect_transport=dict(type="bool", default=True),
    timeout=dict(type="int", default=900),
    expected_busbw_gbs=dict(type="float"),
    nic_rates_gbps=dict(type="list", elements="float", default=[]),
    nic_rates_source=dict(type="str"),
    link_efficiency=dict(type="float", default=0.9),
    min_fraction=dict(type="float", default=0.8),
    busbw_metric=dict(type="str", default="max", choices=["max", "largest", "avg"]),
    ib_expected=dict(type="bool", default=False),
    ib_devices=dict(type="list", elements="str", default=[]),
    bisect=dict(type="bool", default=False),
    bisect_max_runs=dict(type="int"),
    bisect_confirm=dict(type="bool", default=True),
    bisect_verify=dict(type="bool", default=True),
    workdir=dict(type="path"),
    mpi_agent_dir=dict(type="str"),
    ssh_config=dict(type="path"),
    fail_on_error=dict(type="bool", default=True),
    run=dict(type="dict"),
)
ARGUMENT_SPEC.update(TRANSPORT_ARGSPEC)


def run_checked(module, runner, result):
    """Preflight, then the pool run (and bisection); the work directory is removed whatever happens."""
    try:
        failure = runner.preflight()
        if failure:
            result.update(verdict="error", cause=failure["cause"], fix=failure["fix"], errors=failure["errors"],
                          cmd=runner.planned_cmd())
        else:
            runner.make_workdir()
            pool_run(runner, result, module.warn)
    except CommandError as exc:
        result.update(verdict="error", cause=str(exc), fix="check the launcher host")
    finally:
        runner.cleanup()


def main():
    module = checked_module(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    install_cleanup_handlers()
    if module.params["launcher"] == "srun" and not module.params["slurm_job_id"]:
        module.params["slurm_job_id"] = os.environ.get("SLURM_JOB_ID")
    try:
        spec = collective_spec.validate(module.params)
    except rules.OptionError as exc:
        module.fail_json(msg="collective: %s" % exc)
    transport = get_transport(module)
    # mpirun, its daemons and ranks stop when nobody waits for the module any more (ansible-playbook interrupted)
    transport.abandoned = controller_gone
    result = collective_spec.initial_result(spec, module.params, transport.name)
    runner = CollectiveRunner(module.params, transport, spec)
    if module.check_mode:
        result["cmd"] = runner.planned_cmd()
        result["cause"] = "check mode: nothing ran"
        module.exit_json(failed=False, **result)
    run_checked(module, runner, result)
    if result["verdict"] == "error" and module.params["fail_on_error"]:
        module.fail_json(msg="collective: %s" % result["cause"], **result)
    # A measured failure is a result, not a failed task, whatever mpirun's exit status.
    module.exit_json(failed=False, **result)


if __name__ == "__main__":
    main()
