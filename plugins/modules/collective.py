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
    O(workdir).
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
    on the other hosts end with it.
  - The run gets a verdict against O(expected_busbw_gbs), or against the bandwidth derived from
    O(nic_rates_gbps) (sum of one node's NIC link rates / 8 x O(link_efficiency)), with a cause and a fix.
    NCCL on the C(Socket) transport while O(ib_expected) or O(ib_devices) say RDMA is there is a V(warn)
    (or part of the cause of a V(fail)).
  - With O(bisect=true), a pool run that fails or is below its threshold is followed by runs on halves,
    quarters, ... of the pool to name the bad node(s) in about log2(N) runs (RV(runs), RV(bad_nodes)).
    A lone suspect is always run with a known-good partner, because a collective across nodes needs two.
author:
  - commcheck developers (@clusterops)
extends_documentation_fragment:
  - clusterops.commcheck.transport
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
    description:
      - Processes started on each host. Default O(gpus_per_node) / O(gpus_per_process) for nccl-tests and
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
        C(mpirun -f hostfile -n N) that hccl_test's documentation uses.
    type: str
    default: openmpi
    choices: [openmpi, mpich]
  mpirun:
    description:
      - The launcher binary, a name looked up on E(PATH) of the launcher or an absolute path (no relative path, no
        C(..)).
    type: str
    default: mpirun
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
    description:
      - Use nccl-tests' C(-J) JSON file. V(auto) uses it when the binary's C(--help) lists C(-J,--output_file);
        V(always) fails when it does not; V(never) parses the text output only. Ignored for hccl_test.
    type: str
    default: auto
    choices: [auto, always, never]
  detect_transport:
    description:
      - For nccl-tests, add C(NCCL_DEBUG=INFO) and C(NCCL_DEBUG_SUBSYS=INIT,NET) (unless O(env) sets
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
    description:
      - Link rates (Gb/s) of the NICs one node uses for the collective, for example
        C([400, 400, 400, 400, 400, 400, 400, 400]); the expected bus bandwidth is their sum / 8 x
        O(link_efficiency).
    type: list
    elements: float
    default: []
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
    description: RDMA devices are there, so NCCL on its C(Socket) transport is reported.
    type: bool
    default: false
  ib_devices:
    description: RDMA devices found on the hosts (for example from C(clusterops.commcheck.rdma_facts)); any implies O(ib_expected).
    type: list
    elements: str
    default: []
  bisect:
    description: After a pool run that fails or is below its threshold, run subsets to name the bad node(s).
    type: bool
    default: false
  bisect_max_runs:
    description: Most runs, the pool run included, bisection may make. Default 2 x hosts + 3.
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
        module writes only C(hostfile-N) and C(run-N.json) inside it); a new temporary directory (removed
        afterwards) when omitted.
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
  diff_mode:
    support: none
    description: Nothing to diff.
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
  description: What the pool run printed (the last 256 KiB).
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
  description: V(pass), V(warn), V(fail) (measured, below threshold or wrong data), V(error) (nothing measured), V(skipped).
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
    - Every run made, the pool run first, then the bisection runs; each with C(hosts) (names), C(cmd), C(rc),
      C(timed_out), C(duration_s), C(busbw_gbs), C(algbw_gbs), C(verdict), C(cause), C(fix), C(bad) and C(errors)
      (codes).
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
    - The bisection plan's C(conclusion) (C(isolated), C(inconsistent), C(unresolved), C(max_runs)),
      C(good_nodes), C(unresolved), C(inferred), C(unexplained) (indexes of bad runs no named node explains),
      C(suspects) (what an C(inconsistent) search would have named; not in RV(bad_nodes)) and C(runs); null
      when no bisection ran.
  returned: always
  type: dict
'''

import os
import re
import shutil
import tempfile

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.clusterops.commcheck.plugins.module_utils.planning import collective_plan as plan_utils
from ansible_collections.clusterops.commcheck.plugins.module_utils.kubernetes import kubexec
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import mpi_cmd
from ansible_collections.clusterops.commcheck.plugins.module_utils.options import option_rules as rules
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_hccl_test import parse_hccl_test
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_nccl_tests import (
    parse_nccl_tests,
    parse_nccl_tests_json,
)
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands.runner import (
    CommandError,
    install_cleanup_handlers,
)
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands.transport import (
    TRANSPORT_ARGSPEC,
    get_transport,
)

STDOUT_LIMIT = 256 * 1024
STDERR_LIMIT = 64 * 1024
MAX_TIMEOUT_S = 7 * 24 * 3600
MAX_BUSBW_GBS = 100000.0
MAX_NIC_GBPS = 100000.0
# What this module makes on the launcher when no workdir is given (removed afterwards).
TEMP_WORKDIR = re.compile(r"^/tmp/commcheck-collective\.[A-Za-z0-9]{6,}$")

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
    launcher=dict(type="str", default="openmpi", choices=["openmpi", "mpich"]),
    mpirun=dict(type="str", default="mpirun"),
    allow_run_as_root=dict(type="bool", default=False),
    binary_dir=dict(type="path"),
    json_output=dict(type="str", default="auto", choices=["auto", "always", "never"]),
    detect_transport=dict(type="bool", default=True),
    timeout=dict(type="int", default=900),
    expected_busbw_gbs=dict(type="float"),
    nic_rates_gbps=dict(type="list", elements="float", default=[]),
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
)
ARGUMENT_SPEC.update(TRANSPORT_ARGSPEC)


def check_fraction(name, value):
    """A part of a whole, in (0, 1]."""
    value = rules.check_number(name, value, 0, 1)
    if value <= 0:
        rules.fail(name, value, "must be greater than 0")
    return value


def check_rate(name, value, high):
    """A positive number up to ``high``."""
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
        check_fraction(name, params[name])
    if params["expected_busbw_gbs"] is not None:
        check_rate("expected_busbw_gbs", params["expected_busbw_gbs"], MAX_BUSBW_GBS)
    if len(params["nic_rates_gbps"]) > 64:
        rules.fail("nic_rates_gbps", params["nic_rates_gbps"], "lists more than 64 NICs")
    for index, rate in enumerate(params["nic_rates_gbps"]):
        check_rate("nic_rates_gbps[%d]" % index, rate, MAX_NIC_GBPS)


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
        ssh_config = rules.check_path("ssh_config", params["ssh_config"])
        if params["transport"] == "host" and not os.path.isfile(ssh_config):
            rules.fail("ssh_config", params["ssh_config"], "is not a file on the launcher host")
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
    if params["launcher"] == "mpich" and mca:
        raise mpi_cmd.MpiCmdError("mca options are Open MPI's; the mpich launcher does not take them")
    launch = check_launch(params)
    mpi_cmd.check_mpirun(params["mpirun"])
    binary = mpi_cmd.binary_path(library, params["operation"], params["binary_dir"])
    for index, device in enumerate(params["ib_devices"]):
        rules.check_name("ib_devices[%d]" % index, device, "rdma_device")
    if params["workdir"] is not None:
        rules.check_path("workdir", params["workdir"])
    expected = params["expected_busbw_gbs"]
    if expected is None:
        expected = plan_utils.expected_busbw(params["nic_rates_gbps"], params["link_efficiency"])
    return {"library": library, "test": test, "hosts": hosts, "layout": layout, "env": env, "mca": mca,
            "launch": launch, "binary": binary, "expected": expected}


class CollectiveRunner(object):
    """Runs one subset of the pool at a time through the transport and judges it."""

    def __init__(self, module, transport, spec):
        self.module = module
        self.params = module.params
        self.transport = transport
        self.spec = spec
        self.by_name = dict((h["name"], h) for h in spec["hosts"])
        self.workdir = None
        self.own_workdir = False
        self.json_file = False
        self.count = 0

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
    def argv(self, hosts, seq):
        spec = self.spec
        json_file = None
        if self.json_file:
            json_file = self.work_file("run-%d.json" % seq)
        program = mpi_cmd.binary_argv(spec["binary"], spec["test"], json_file=json_file)
        hostfile = None
        if self.params["launcher"] == "mpich":
            hostfile = self.work_file("hostfile-%d" % seq)
        layout = dict(spec["layout"], np=spec["layout"]["processes_per_node"] * len(hosts))
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
            return self.argv(self.spec["hosts"], 1)[0]
        finally:
            self.workdir = saved

    def preflight(self):
        """Find mpirun and the binary on the launcher; decide on JSON. Returns an error judgement or None."""
        mpirun = self.params["mpirun"]
        if not self.transport.which(mpirun):
            return {"verdict": "error", "cause": "the launcher %s is not installed on the launcher host" % rules.show(mpirun),
                    "fix": "install Open MPI (or MPICH for launcher=mpich) on the launcher host, or set mpirun to "
                           "its path", "errors": [{"code": "mpirun_not_found", "message": mpirun}]}
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

    def run(self, names):
        """One collective on the hosts named; returns the run record."""
        self.count += 1
        hosts = [self.by_name[n] for n in names]
        argv, hostfile, json_file, layout = self.argv(hosts, self.count)
        if hostfile:
            self.write_file(hostfile, mpi_cmd.hostfile_lines(hosts, layout["processes_per_node"]))
        res = self.transport.run(argv, self.params["timeout"])
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
            timeout=self.params["timeout"])
        record = {
            "hosts": list(names), "cmd": argv, "rc": res["rc"], "timed_out": res["timed_out"],
            "duration_s": res.get("duration_s"), "busbw_gbs": judgement["busbw_gbs"],
            "algbw_gbs": judgement["algbw_gbs"], "verdict": judgement["verdict"], "cause": judgement["cause"],
            "fix": judgement["fix"], "bad": judgement["verdict"] in ("fail", "error"),
            "errors": [e.get("code") for e in judgement["errors"]], "json_output": bool(json_file and parsed.get(
                "format") == "json"),
        }
        return record, res, parsed, judgement


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


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    install_cleanup_handlers()
    params = module.params
    try:
        spec = validate(params)
    except rules.OptionError as exc:
        module.fail_json(msg="collective: %s" % exc)
    transport = get_transport(module)
    names = [h["name"] for h in spec["hosts"]]
    test = spec["test"]
    run_params = {
        "library": spec["library"], "operation": params["operation"], "hosts": names, "nodes": len(names),
        "processes_per_node": spec["layout"]["processes_per_node"], "ranks": spec["layout"]["ranks"],
        "gpus_per_node": params["gpus_per_node"], "min_bytes": test["min_bytes"], "max_bytes": test["max_bytes"],
        "datatype": test["datatype"], "launcher": params["launcher"], "transport": transport.name,
    }
    result = {
        "changed": False, "cmd": [], "rc": None, "stdout": "", "stderr": "", "timed_out": False,
        "duration_s": None, "json_output": False, "result": {}, "verdict": "skipped", "cause": None,
        "fix": None, "busbw_gbs": None, "algbw_gbs": None, "expected_busbw_gbs": spec["expected"],
        "threshold_busbw_gbs": round(spec["expected"] * params["min_fraction"], 6) if spec["expected"] else None,
        "transport": None, "errors": [], "params": run_params, "runs": [], "bad_nodes": [], "bisect": None,
    }
    runner = CollectiveRunner(module, transport, spec)
    if module.check_mode:
        result["cmd"] = runner.planned_cmd()
        result["cause"] = "check mode: nothing ran"
        module.exit_json(failed=False, **result)
    try:
        failure = runner.preflight()
        if failure:
            result.update(verdict="error", cause=failure["cause"], fix=failure["fix"], errors=failure["errors"],
                          cmd=runner.planned_cmd())
        else:
            runner.make_workdir()
            pool_run(module, runner, spec, result)
    except CommandError as exc:
        result.update(verdict="error", cause=str(exc), fix="check the launcher host")
    finally:
        runner.cleanup()
    if result["verdict"] == "error" and params["fail_on_error"]:
        module.fail_json(msg="collective: %s" % result["cause"], **result)
    # A measured failure is a result, not a failed task, whatever mpirun's exit status.
    module.exit_json(failed=False, **result)


def pool_run(module, runner, spec, result):
    params = module.params
    names = [h["name"] for h in spec["hosts"]]
    record, res, parsed, judgement = runner.run(names)
    result.update(
        cmd=record["cmd"], rc=res["rc"], stdout=tail(res["stdout"], STDOUT_LIMIT),
        stderr=tail(res["stderr"], STDERR_LIMIT), timed_out=res["timed_out"], duration_s=res.get("duration_s"),
        json_output=record["json_output"], result=compact(parsed), verdict=judgement["verdict"],
        cause=judgement["cause"], fix=judgement["fix"], busbw_gbs=judgement["busbw_gbs"],
        algbw_gbs=judgement["algbw_gbs"], transport=judgement["transport"], errors=judgement["errors"],
        runs=[record])
    for warning in judgement["warnings"]:
        module.warn(warning)
    if not record["bad"]:
        return
    named = plan_utils.named_hosts(judgement, spec["hosts"])
    if named:
        # The launcher's own errors name the host(s): ssh to it failed, a rank died there.
        result["bad_nodes"] = named
        return
    if not params["bisect"] or len(names) < 2 or plan_utils.global_error(judgement):
        return
    max_runs = params["bisect_max_runs"] or 2 * len(names) + 3
    runs = [{"hosts": names, "bad": True}]
    while True:
        plan = plan_utils.bisect_plan(names, runs, confirm=params["bisect_confirm"], verify=params["bisect_verify"],
                                      max_runs=max_runs)
        if plan["done"]:
            break
        record = runner.run(plan["next"])[0]
        result["runs"].append(record)
        runs.append({"hosts": record["hosts"], "bad": record["bad"]})
    keys = ("conclusion", "good_nodes", "unresolved", "inferred", "unexplained", "runs")
    result["bisect"] = dict((k, plan[k]) for k in keys)
    result["bisect"]["suspects"] = []
    count = len(result["runs"])
    if plan["conclusion"] == "isolated":
        result["bad_nodes"] = plan["bad_nodes"]
        result["cause"] = "%s; bisection names %s (%d runs)" % (result["cause"], ", ".join(plan["bad_nodes"]), count)
    elif plan["conclusion"] == "inconsistent":
        # Names from a search that does not add up are suspects, not findings.
        result["bisect"]["suspects"] = plan["bad_nodes"]
        result["cause"] = (
            "%s; bisection does not add up (%d runs): a run without any node it would name was bad as well%s. "
            "A flaky result or a fault that needs many hosts at once (a shared link or switch) is likely; "
            "run the check again" % (result["cause"], count,
                                     " (suspects: %s)" % ", ".join(plan["bad_nodes"]) if plan["bad_nodes"] else ""))
    else:
        result["bad_nodes"] = plan["bad_nodes"]
        result["cause"] = "%s; bisection could not separate %s (%d runs)%s" % (
            result["cause"], ", ".join(plan["unresolved"]) or "the hosts", count,
            "; named %s" % ", ".join(plan["bad_nodes"]) if plan["bad_nodes"] else "")


if __name__ == "__main__":
    main()
