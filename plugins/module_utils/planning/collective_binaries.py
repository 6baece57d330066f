# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The collective libraries' test binaries, one per operation (pure data).

The plan decides which binaries a host needs (``check_plan``: the tool probe looks for them) and the command
builder runs them (``commands/mpi_cmd.py``): both read this one table.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

# operation -> binary name, as each library names its binaries.
NCCL_BINARIES = {
    "all_reduce": "all_reduce_perf",
    "all_gather": "all_gather_perf",
    "broadcast": "broadcast_perf",
    "reduce_scatter": "reduce_scatter_perf",
    "reduce": "reduce_perf",
    "alltoall": "alltoall_perf",
    "sendrecv": "sendrecv_perf",
    "gather": "gather_perf",
    "scatter": "scatter_perf",
    "hypercube": "hypercube_perf",
}
HCCL_BINARIES = {
    "all_reduce": "all_reduce_test",
    "all_gather": "all_gather_test",
    "broadcast": "broadcast_test",
    "reduce_scatter": "reduce_scatter_test",
    "reduce": "reduce_test",
    "alltoall": "alltoall_test",
    "alltoallv": "alltoallv_test",
}
BINARIES = {"nccl": NCCL_BINARIES, "hccl": HCCL_BINARIES}
