# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r"""
name: parse_nccl_tests
short_description: Parse NVIDIA nccl-tests output (text or JSON) into results, transport and classified errors
version_added: 1.0.0
author: commcheck contributors
description:
  - Reads what an nccl-tests binary (C(all_reduce_perf), C(all_gather_perf), C(broadcast_perf), C(reduce_scatter_perf),
    C(reduce_perf), C(alltoall_perf), C(sendrecv_perf), C(scatter_perf), C(gather_perf), C(hypercube_perf), ...) printed,
    old and new formats, with or without the C(redop)/C(root) columns, C(#wrong) or C(error) columns.
  - Tolerates launcher prefixes (C(mpirun --tag-output), C(srun --label)), prompts and command lines, kubectl/ssh noise,
    and NCCL INFO/WARN lines anywhere, also in the middle of a table row.
  - Also accepts the JSON file nccl-tests writes with C(-J/--output_file <name>.json) (text or already decoded) and the
    rccl-tests JSON list.
  - Errors of NCCL, CUDA, RDMA, MPI/ssh launchers and signals get a stable code, the original message, a cause and a fix.
  - Never fails on odd input; what could not be read is reported in RV(_value.errors) and RV(_value.warnings).
extends_documentation_fragment:
  - clusterops.commcheck.tool_output.pasted_text
options:
  _input:
    description: The raw output (stdout, possibly merged with stderr), or the nccl-tests JSON document.
    type: raw
    required: true
seealso:
  - plugin: clusterops.commcheck.parse_hccl_test
    plugin_type: filter
"""

EXAMPLES = r"""
- name: Run all_reduce_perf across the pool
  ansible.builtin.command:
    argv: [mpirun, -np, "16", /opt/nccl-tests/build/all_reduce_perf, -b, "8", -e, 8G, -f, "2"]
  register: nccl_run
  changed_when: false
  failed_when: false

- name: Parse the result
  ansible.builtin.set_fact:
    nccl: "{{ nccl_run.stdout | clusterops.commcheck.parse_nccl_tests }}"

- name: Report the bus bandwidth and the transport NCCL used
  ansible.builtin.debug:
    msg: "{{ nccl.avg_busbw_gbs }} GB/s over {{ nccl.transport }}; errors: {{ nccl.errors | map(attribute='code') }}"
"""

RETURN = r"""
_value:
  description: The parsed run.
  type: dict
  contains:
    test:
      description: Test binary, e.g. C(all_reduce_perf) (from the header or the command line); null if unknown.
      type: str
    collective:
      description: The collective, e.g. C(all_reduce).
      type: str
    version:
      description: nccl-tests version (C(2.18.5)) when the header prints it.
      type: str
    nccl_version:
      description: NCCL version, e.g. C(2.27.3+cuda12.9).
      type: str
    header:
      description: Run parameters (nthread, ngpus, min_bytes, max_bytes, step_factor or step_bytes, warmup_iters, iters,
        agg_iters, validation, graph, ...) and the table columns.
      type: dict
    ranks:
      description: One entry per rank of the "Using devices" block (rank, group, pid, host, device, bus_id, name).
      type: list
      elements: dict
    rows:
      description: Result rows (bytes, count, type, redop, root, out_of_place and in_place with time_us, algbw_gbs,
        busbw_gbs, wrong); redop/root are null when the format has no such column, wrong is null for N/A.
      type: list
      elements: dict
    avg_busbw_gbs:
      description: Average bus bandwidth from the footer, else computed from the rows.
      type: float
    max_busbw_gbs:
      description: Highest bus bandwidth of any row.
      type: float
    out_of_bounds:
      description: Out-of-bounds (wrong) value count from the footer.
      type: int
    out_of_bounds_ok:
      description: Whether the footer said OK.
      type: bool
    transport:
      description: Network NCCL used between nodes (C(IB), C(Socket) or the net plugin name); null if unknown.
      type: str
    errors:
      description: Classified errors (code, message, cause, fix, hint, count, hosts, evidence).
      type: list
      elements: dict
    warnings:
      description: Things worth knowing that are not errors, among them lines no rule knows that report a
        problem (warnings libraries such as libibverbs print, other programs' error lines); they never make
        C(ok) false. A text from which nothing was read says so in a warning that quotes its first line.
      type: list
      elements: str
    ok:
      description: True when result rows were read and no error was found.
      type: bool
"""

from ansible_collections.clusterops.commcheck.plugins.plugin_utils.filter_input import filter_module
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_nccl_tests import parse_nccl_tests

FilterModule = filter_module("parse_nccl_tests", parse_nccl_tests)
