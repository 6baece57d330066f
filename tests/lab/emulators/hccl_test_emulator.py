#!/usr/bin/env python
# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""EMULATOR (commcheck lab only): Huawei hccl_test's ``<op>_test`` without NPUs.

Takes hccl_test's command line (``all_reduce_test -p 8 -b 8K -e 64M -f 2
-d fp32 -o sum -n 20 -w 5 -c 1``; flags of the CANN hccl_test README and
hccl_test_common.cc), is launched by real Open MPI ``mpirun`` across lab
hosts, performs the collective for real with MPI (mpi4py) over the lab
network, and prints hccl_test's output: the root rank's ``the minbytes is
..., maxbytes is ..., iters is ..., warmup_iters is ...`` line, then the
``data_size(Bytes): | aveg_time(us): | alg_bandwidth(GB/s): |
check_result:`` table. alg_bandwidth is hccl_test's algorithm bandwidth,
bytes / average time with B_US_TO_GB_S = 1e6/1e9 (reduce_scatter counts the
bytes of all ranks, as hccl_test does). Results are checked element by
element (``-c 1``) and a wrong result prints ``failed``.

It is NOT HCCL: the data path is MPI over TCP. The binary to emulate is
taken from the program name (``all_reduce_test``) or ``--emulate``.
"""

from __future__ import absolute_import, division, print_function

import getopt
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nccl_tests_emulator as nccl  # noqa: E402  pylint: disable=wrong-import-position

OPERATIONS = ("all_reduce", "all_gather", "broadcast", "reduce_scatter", "reduce", "alltoall", "alltoallv")
TYPES = {"int8": "int8", "int16": "half", "int32": "int32", "fp16": "half", "fp32": "float",
         "int64": "int64", "uint64": "uint64", "uint8": "uint8", "uint16": "half", "uint32": "uint32",
         "fp64": "double", "bfp16": "half"}
OPS = ("sum", "prod", "max", "min")
SHORT = "o:d:b:e:i:f:r:n:w:c:p:z:s:t:m:h"
LONG = ["op=", "datatype=", "minbytes=", "maxbytes=", "stepbytes=", "stepfactor=", "root=", "iters=",
        "warmup_iters=", "check=", "npus=", "help", "onlydevicetime=", "symmetric_memory=", "zero_copy=",
        "nslb=", "emulate="]
DEVICES_PER_NODE = 8


def usage():
    nccl.out("USAGE: ./test \n\t[-b,--minbytes <min size in bytes>] \n\t[-e,--maxbytes <max size in bytes>] \n\t"
             "[-i,--stepbytes <increment size>] \n\t[-f,--stepfactor <increment factor>] \n\t"
             "[-n,--iters <iteration count>] \n\t[-o,--op <sum/prod/min/max>] \n\t"
             "[-d,--datatype <int8/int16/int32/fp16/fp32/int64/uint64/uint8/uint16/uint32/fp64/bfp16>] \n\t"
             "[-r,--root <root>] \n\t[-w,--warmup_iters <warmup iteration count>] \n\t"
             "[-c,--check <result verification> 0:disabled 1:quiet 2:verbose (default 1)] \n\t"
             "[-p,--npus <npus used for one node>] \n\t[-m,--symmetric_memory  0:disabled 1:enabled.] \n\t"
             "[-z,--zero_copy  0:disabled 1:enabled.] \n\t[-s,--nslb  0:disabled 1:enabled.] \n\t"
             "[-t, --onlydevicetime 0:disabled 1:enabled.] \n\t[-h,--help]\n")


def parsesize(value):
    """hccl_test's parsesize: strtol then one K/M/G letter; -1 when invalid."""
    text = value.strip()
    digits = ""
    for char in text:
        if char.isdigit():
            digits += char
        else:
            break
    if not digits:
        return -1
    rest = text[len(digits):]
    units = {"": 1, "k": 1024, "m": 1024 ** 2, "g": 1024 ** 3}.get(rest.lower())
    if units is None:
        return -1
    return int(digits) * units


def all_digit(value):
    if not value.isdigit():
        nccl.out("Error:In judge all digit, Check whether the value of [-i -n -r -w -c -p] is a positive integer.\n")
        return -1
    return int(value)


def main(argv):
    prog = os.path.basename(argv[0])
    opts = {"op": "sum", "dtype": "fp32", "min": 64 * 1024 * 1024, "max": 64 * 1024 * 1024,
            "step": None, "factor": None, "root": 0, "iters": 20, "warmup": 10, "check": 1,
            "npus": None, "emulate": None}
    try:
        pairs, rest = getopt.gnu_getopt(argv[1:], SHORT, LONG)
    except getopt.GetoptError:
        nccl.out("invalid option \nTry [-h --help] for more information.\n")
        return 255
    for key, value in pairs:
        name = key.lstrip("-")
        if name in ("h", "help"):
            usage()
            return 1
        if name in ("o", "op"):
            opts["op"] = value
        elif name in ("d", "datatype"):
            opts["dtype"] = value
        elif name in ("b", "minbytes"):
            opts["min"] = parsesize(value)
        elif name in ("e", "maxbytes"):
            opts["max"] = parsesize(value)
        elif name in ("i", "stepbytes"):
            opts["step"] = all_digit(value)
        elif name in ("f", "stepfactor"):
            try:
                opts["factor"] = float(value)
            except ValueError:
                opts["factor"] = 0.0
        elif name in ("r", "root"):
            opts["root"] = all_digit(value)
        elif name in ("n", "iters"):
            opts["iters"] = all_digit(value)
        elif name in ("w", "warmup_iters"):
            opts["warmup"] = all_digit(value)
        elif name in ("c", "check"):
            opts["check"] = all_digit(value)
        elif name in ("p", "npus"):
            opts["npus"] = all_digit(value)
        elif name == "emulate":
            opts["emulate"] = value
    if rest:
        nccl.out("non-option ARGV-elements: %s \n" % " ".join(rest))
        return 255
    op = opts["emulate"] or (prog[:-len("_test")] if prog.endswith("_test") else prog)
    if op not in OPERATIONS:
        sys.stderr.write("EMULATOR: cannot tell which hccl_test binary to emulate from %r\n" % prog)
        return 2

    from mpi4py import MPI  # pylint: disable=import-outside-toplevel
    comm = MPI.COMM_WORLD
    rank, nranks = comm.Get_rank(), comm.Get_size()
    root_rank = opts["root"]

    def fail(message):
        if rank == 0:
            nccl.out(message)
        return 255

    if opts["min"] <= 0 or opts["max"] <= 0:
        return fail("invalid size specified for [-b,--minbytes] or [-e,--maxbytes]\n")
    if opts["max"] < opts["min"]:
        return fail("invalid option: maxbytes < minbytes, Check the [-b,--minbytes] and [-e,--maxbytes] options.\n")
    if opts["factor"] is not None and opts["factor"] <= 1.0:
        return fail("Error: [-f,--stepfactor] Must be greater than 1.0f, Start step mod.\n")
    if opts["dtype"] not in TYPES:
        return fail("Error: [-d,--datatype] is invalid, Use [-h,--help] to check the correct input parameter.\n")
    if opts["op"] not in OPS:
        return fail("Error: [-o,--op] is invalid, Use [-h,--help] to check the correct input parameter.\n")
    if root_rank < 0 or root_rank >= nranks:
        return fail("Error: [-r,--root <root>] is invalid, root rank must be greater than or equal to 0 and "
                    "less than or equal to %d.\n" % (nranks - 1))
    npus = opts["npus"] if opts["npus"] is not None else DEVICES_PER_NODE
    if npus < 1 or npus > DEVICES_PER_NODE:
        return fail("Error: [-p,--npus <npus used for one node>] is invalid, npus must be greater than or "
                    "equal to 1 and less than or equal to %d.\n" % DEVICES_PER_NODE)
    step = opts["step"]
    if step is None:
        step = (opts["max"] - opts["min"]) // 10 if opts["max"] > opts["min"] else 1

    if rank == root_rank:
        nccl.out("the minbytes is %d, maxbytes is %d, iters is %d, warmup_iters is %d\n"
                 % (opts["min"], opts["max"], opts["iters"], opts["warmup"]))
    emu_op = "alltoall" if op == "alltoallv" else op
    coll = nccl.Collective(MPI, comm, emu_op, TYPES[opts["dtype"]], opts["op"], root_rank)
    header = True
    size = opts["min"]
    while size <= opts["max"]:
        # data_size is what one NPU contributes; all_gather receives it from every rank.
        per_npu = (size + coll.word - 1) // coll.word
        count = per_npu * nranks if emu_op == "all_gather" else per_npu
        coll.prepare(count)
        for dummy in range(opts["warmup"]):
            coll.run(False)
        comm.Barrier()
        started = time.perf_counter()
        for dummy in range(opts["iters"]):
            coll.run(False)
        total = time.perf_counter() - started
        avg_us = total * 1e6 / opts["iters"] if opts["iters"] else 0.0
        nbytes = per_npu * coll.word
        algbw = nbytes / avg_us * 1.0e6 / 1.0e9 if avg_us > 0 else 0.0
        wrong = 0
        if opts["check"] >= 1:
            coll.prepare(count)
            coll.run(False)
            wrong = coll.wrong()
        failed = comm.allreduce(1 if wrong else 0, op=MPI.SUM)
        if wrong:
            nccl.out("local rank_id %d, check result failed, %-17d | %-14.2f | %-20.5f | failed\n"
                     % (rank, size, avg_us, algbw))
        if rank == root_rank:
            if header:
                nccl.out("%-15s | %-12s | %-18s | %s\n" % (
                    "data_size(Bytes):", "aveg_time(us):", "alg_bandwidth(GB/s):", "check_result:"))
                header = False
            status = "NULL" if opts["check"] == 0 else ("failed" if wrong or failed else "success")
            nccl.out("%-17d | %-14.2f | %-20.5f | %s\n" % (size, avg_us, algbw, status))
        if opts["factor"]:
            size = int(size * opts["factor"])
        elif step == 0:
            break
        else:
            size += step
    comm.Barrier()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
