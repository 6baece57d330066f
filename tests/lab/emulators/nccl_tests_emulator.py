#!/usr/bin/env python
# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""EMULATOR (commcheck lab only): nccl-tests' ``<op>_perf`` without GPUs.

The lab has no GPUs and no NCCL. This program takes the command line of
NVIDIA nccl-tests (``all_reduce_perf -b 8 -e 128M -f 2 -g 1 -n 20 -w 5 -c 1
-d float -o sum [-J out.json]``, flags of src/common.cu), is launched by real
Open MPI ``mpirun`` across lab hosts, and performs the asked collective for
real with MPI (mpi4py) over the lab network: a host slowed with ``tc``
lowers the numbers. It prints nccl-tests' output format (header, ``# Using
devices`` rank lines, the size/count/type/redop/root/time/algbw/busbw/#wrong
table for out-of-place and in-place, ``# Out of bounds values``, ``# Avg bus
bandwidth``) and writes nccl-tests' ``-J`` JSON file. Bandwidths use
nccl-tests' formulas: algbw = size / time, busbw = algbw * factor
(2(n-1)/n for all_reduce, (n-1)/n for all_gather / reduce_scatter /
alltoall / gather / scatter, 1 for broadcast / reduce / sendrecv). Results
are checked element by element (``-c``) and wrong elements counted.

It is NOT NCCL: devices are named "Emulated GPU (commcheck lab)" and the data
path is MPI over TCP. With NCCL_DEBUG=INFO it prints the network lines real
NCCL would (``nccl_net_emulation.py``): NET/IB on the lab host's emulated
RoCE devices, NET/Socket when they are missing or disabled, or when the lab's
Socket fall-back fault is on. One emulated GPU per process
(``-g 1``). The binary to emulate is taken from the program name
(``all_reduce_perf``) or ``--emulate all_reduce``.
"""

from __future__ import absolute_import, division, print_function

import array
import datetime
import getopt
import glob
import json
import os
import socket
import sys
import time

import nccl_net_emulation  # the emulator's own directory is on sys.path (it runs as a script)

TESTS_VERSION = "2.17.6"
NCCL_VERSION_CODE = 22703
NCCL_VERSION_TEXT = "2.27.3+emulated"
DEVICE_NAME = "Emulated GPU (commcheck lab)"
OPERATIONS = ("all_reduce", "all_gather", "broadcast", "reduce_scatter", "reduce", "alltoall",
              "sendrecv", "gather", "scatter")
REDUCING = ("all_reduce", "reduce", "reduce_scatter")
ROOTED = ("broadcast", "reduce", "gather", "scatter")

# name -> (array typecode, mpi4py datatype name, bytes); half/bfloat16 travel as 16-bit integers.
TYPES = {
    "int8": ("b", "SIGNED_CHAR", 1), "char": ("b", "SIGNED_CHAR", 1),
    "uint8": ("B", "UNSIGNED_CHAR", 1),
    "int32": ("i", "INT", 4), "int": ("i", "INT", 4),
    "uint32": ("I", "UNSIGNED", 4),
    "int64": ("q", "INT64_T", 8), "uint64": ("Q", "UINT64_T", 8),
    "half": ("h", "SHORT", 2), "float16": ("h", "SHORT", 2), "bfloat16": ("h", "SHORT", 2),
    "float": ("f", "FLOAT", 4), "float32": ("f", "FLOAT", 4),
    "double": ("d", "DOUBLE", 8), "float64": ("d", "DOUBLE", 8),
}
TYPE_NAMES = ("int8", "uint8", "int32", "uint32", "int64", "uint64", "half", "float", "double", "bfloat16")
OP_NAMES = ("sum", "prod", "max", "min", "avg", "mulsum")

SHORT = "t:g:b:e:i:f:n:m:w:N:p:c:o:d:r:z:y:T:hG:C:a:R:J:S:M:"
LONG = ["nthreads=", "ngpus=", "minbytes=", "maxbytes=", "stepbytes=", "stepfactor=", "iters=",
        "agg_iters=", "warmup_iters=", "run_cycles=", "parallel_init=", "check=", "op=", "datatype=",
        "root=", "blocking=", "stream_null=", "timeout=", "cudagraph=", "report_cputime=", "average=",
        "local_register=", "output_file=", "report_timestamps=", "memory_report=", "help", "emulate="]

USAGE = (
    "USAGE: %s \n\t"
    "[-t,--nthreads <num threads>] \n\t"
    "[-g,--ngpus <gpus per thread>] \n\t"
    "[-b,--minbytes <min size in bytes>] \n\t"
    "[-e,--maxbytes <max size in bytes>] \n\t"
    "[-i,--stepbytes <increment size>] \n\t"
    "[-f,--stepfactor <increment factor>] \n\t"
    "[-n,--iters <iteration count>] \n\t"
    "[-m,--agg_iters <aggregated iteration count>] \n\t"
    "[-w,--warmup_iters <warmup iteration count>] \n\t"
    "[-N,--run_cycles <cycle count> run & print each cycle (default: 1; 0=infinite)] \n\t"
    "[-p,--parallel_init <0/1>] \n\t"
    "[-c,--check <check iteration count>] \n\t"
    "[-o,--op <sum/prod/min/max/avg/mulsum/all>] \n\t"
    "[-d,--datatype <nccltype/all>] \n\t"
    "[-r,--root <root>] \n\t"
    "[-z,--blocking <0/1>] \n\t"
    "[-y,--stream_null <0/1>] \n\t"
    "[-T,--timeout <time in seconds>] \n\t"
    "[-G,--cudagraph <num graph launches>] \n\t"
    "[-C,--report_cputime <0/1>] \n\t"
    "[-S,--report_timestamps <0/1> report timestamps (default 0)] \n\t"
    "[-J,--output_file <file> write output to filepath, if accessible. Infer type from suffix "
    "(only json supported presently.)] \n\t"
    "[-a,--average <0/1/2/3> report average iteration time <0=RANK0/1=AVG/2=MIN/3=MAX>] \n\t"
    "[-R,--local_register <0/1/2> enable local (1) or symmetric (2) buffer registration on send/recv "
    "buffers (default: disable (0))] \n\t"
    "[-M,--memory_report <0/1> enable memory usage report (default: 0)] \n\t"
    "[-h,--help]\n")


def out(text):
    sys.stdout.write(text)
    sys.stdout.flush()


def parsesize(value):
    """nccl-tests' parsesize: '%lf %1s' with K/M/G (powers of 1024); -1 when invalid."""
    text = value.strip()
    number = ""
    index = 0
    while index < len(text) and (text[index].isdigit() or text[index] in ".eE+-"):
        number += text[index]
        index += 1
    try:
        size = float(number)
    except ValueError:
        return -1.0
    rest = text[index:].strip()
    if not rest:
        return size
    units = {"g": 1024 ** 3, "m": 1024 ** 2, "k": 1024}.get(rest[0].lower())
    if units is None:
        return -1.0
    return size * units


def strtol(value):
    try:
        return int(value, 0)
    except ValueError:
        digits = ""
        for char in value.strip():
            if char.isdigit() or (not digits and char in "+-"):
                digits += char
            else:
                break
        try:
            return int(digits)
        except ValueError:
            return 0


def float_str(value, width):
    """nccl-tests' getFloatStr: fixed width, fewer decimals for larger numbers."""
    power = 0
    val = 1
    while value >= val:
        power += 1
        val *= 10
    if power < width - 2:
        return "%*.2f" % (width, value)
    if power < width - 1:
        return "%*.1f" % (width, value)
    if power < width + 1:
        return "%*.0f" % (width, value)
    return "%*.1e" % (width, value)


def bus_factor(op, nranks):
    if op == "all_reduce":
        return 2.0 * (nranks - 1) / nranks
    if op in ("all_gather", "reduce_scatter", "alltoall", "gather", "scatter"):
        return float(nranks - 1) / nranks
    return 1.0


def coll_counts(op, count, nranks):
    """nccl-tests getCollByteCount: (sendcount, recvcount, paramcount)."""
    if op in ("all_gather", "gather"):
        send = count // nranks
        return send, send * nranks, send
    if op in ("reduce_scatter", "scatter"):
        recv = count // nranks
        return recv * nranks, recv, recv
    if op == "alltoall":
        per = count // nranks
        return per * nranks, per * nranks, per
    return count, count, count


class Collective(object):
    """One collective over MPI with a verifiable input pattern."""

    def __init__(self, mpi, comm, op, typename, redop, root):
        self.MPI = mpi
        self.comm = comm
        self.op = op
        self.code, dtype, self.word = TYPES[typename]
        self.dtype = getattr(mpi, dtype)
        self.redop = redop
        self.root = root
        self.rank = comm.Get_rank()
        self.size = comm.Get_size()
        self.mpi_op = {"sum": mpi.SUM, "prod": mpi.PROD, "max": mpi.MAX, "min": mpi.MIN,
                       "avg": mpi.SUM, "mulsum": mpi.SUM}[redop]

    def _fill(self, value, count):
        return array.array(self.code, [value]) * count

    def _reduce_input(self):
        # Values whose reduction is exact in every type: 1 everywhere for
        # sum/prod/avg/mulsum, rank+1 for min/max.
        return (self.rank + 1) if self.redop in ("min", "max") else 1

    def _reduce_expected(self):
        n = self.size
        return {"sum": n, "prod": 1, "max": n, "min": 1, "avg": n, "mulsum": n}[self.redop]

    def prepare(self, count):
        send_n, recv_n, param = coll_counts(self.op, count, self.size)
        self.param = param
        n = self.size
        rank = self.rank
        if self.op in REDUCING:
            self.send = self._fill(self._reduce_input(), send_n)
            self.recv = self._fill(0, recv_n)
            self.expected = [(0, recv_n, self._reduce_expected())]
            if self.op == "reduce" and rank != self.root:
                self.expected = []
        elif self.op in ("all_gather", "gather"):
            self.send = self._fill(rank + 1, send_n)
            self.recv = self._fill(0, recv_n)
            self.expected = [(r * param, param, r + 1) for r in range(n)]
            if self.op == "gather" and rank != self.root:
                self.expected = []
        elif self.op == "broadcast":
            self.send = self._fill(self.root + 1, send_n)
            self.recv = self._fill(0, recv_n)
            self.expected = [(0, recv_n, self.root + 1)]
        elif self.op == "scatter":
            self.send = array.array(self.code)
            for r in range(n):
                self.send.extend(self._fill(r + 1, param))
            self.recv = self._fill(0, recv_n)
            self.expected = [(0, recv_n, rank + 1)]
        elif self.op == "alltoall":
            self.send = self._fill(rank + 1, send_n)
            self.recv = self._fill(0, recv_n)
            self.expected = [(r * param, param, r + 1) for r in range(n)]
        else:  # sendrecv: a ring
            self.send = self._fill(rank + 1, send_n)
            self.recv = self._fill(0, recv_n)
            self.expected = [(0, recv_n, (rank - 1) % n + 1)]
        return max(send_n, recv_n) * self.word, param

    def run(self, in_place):
        MPI, comm, dt = self.MPI, self.comm, self.dtype
        send, recv = [self.send, dt], [self.recv, dt]
        if self.op == "all_reduce":
            if in_place:
                self.recv[:] = self.send
                comm.Allreduce(MPI.IN_PLACE, recv, op=self.mpi_op)
            else:
                comm.Allreduce(send, recv, op=self.mpi_op)
        elif self.op == "reduce":
            comm.Reduce(send, recv, op=self.mpi_op, root=self.root)
        elif self.op == "reduce_scatter":
            comm.Reduce_scatter_block(send, recv, op=self.mpi_op)
        elif self.op == "all_gather":
            comm.Allgather(send, recv)
        elif self.op == "gather":
            comm.Gather(send, recv, root=self.root)
        elif self.op == "broadcast":
            if self.rank == self.root:
                self.recv[:] = self.send
            comm.Bcast(recv, root=self.root)
        elif self.op == "scatter":
            comm.Scatter(send, recv, root=self.root)
        elif self.op == "alltoall":
            comm.Alltoall(send, recv)
        else:
            n = self.size
            comm.Sendrecv(send, (self.rank + 1) % n, 0, recv, (self.rank - 1) % n, 0)

    def wrong(self):
        bad = 0
        for start, length, value in self.expected:
            if length <= 0:
                continue
            part = self.recv[start:start + length]
            bad += length - part.count(value)
        return bad


def parse_args(argv):
    opts = {"nthreads": 1, "ngpus": 1, "minbytes": 32 * 1024 * 1024, "maxbytes": 32 * 1024 * 1024,
            "stepbytes": 1024 * 1024, "stepfactor": 1, "iters": 20, "agg_iters": 1, "warmup": 5,
            "cycles": 1, "check": 1, "op": "sum", "type": "float", "root": 0, "output_file": None,
            "average": 1, "help": False, "emulate": None, "errors": []}
    try:
        pairs, rest = getopt.gnu_getopt(argv, SHORT, LONG)
    except getopt.GetoptError as exc:
        opts["errors"].append("invalid option '%s'" % (exc.opt or "?"))
        opts["help"] = True
        return opts
    for key, value in pairs:
        if key in ("-t", "--nthreads"):
            opts["nthreads"] = strtol(value)
        elif key in ("-g", "--ngpus"):
            opts["ngpus"] = strtol(value)
        elif key in ("-b", "--minbytes", "-e", "--maxbytes"):
            parsed = parsesize(value)
            name = "minbytes" if key in ("-b", "--minbytes") else "maxbytes"
            if parsed < 0:
                opts["fatal"] = "invalid size specified for '%s'\n" % name
                return opts
            opts[name] = int(parsed)
        elif key in ("-i", "--stepbytes"):
            parsed = parsesize(value)
            if parsed < 0:
                opts["fatal"] = "invalid size specified for 'stepBytes'\n"
                return opts
            opts["stepbytes"] = int(parsed)
        elif key in ("-f", "--stepfactor"):
            opts["stepfactor"] = strtol(value)
        elif key in ("-n", "--iters"):
            opts["iters"] = strtol(value)
        elif key in ("-m", "--agg_iters"):
            opts["agg_iters"] = max(1, strtol(value))
        elif key in ("-w", "--warmup_iters"):
            opts["warmup"] = strtol(value)
        elif key in ("-N", "--run_cycles"):
            opts["cycles"] = strtol(value)
        elif key in ("-c", "--check"):
            opts["check"] = strtol(value)
        elif key in ("-o", "--op"):
            opts["op"] = value
        elif key in ("-d", "--datatype"):
            opts["type"] = value
        elif key in ("-r", "--root"):
            opts["root"] = strtol(value)
        elif key in ("-J", "--output_file"):
            opts["output_file"] = value
        elif key in ("-a", "--average"):
            opts["average"] = strtol(value)
        elif key in ("-h", "--help"):
            opts["help"] = True
        elif key == "--emulate":
            opts["emulate"] = value
    if rest:
        opts["extra"] = rest
    return opts


def sizes(opts):
    size = opts["minbytes"]
    while size <= opts["maxbytes"]:
        yield size
        if opts["stepfactor"] > 1:
            size *= opts["stepfactor"]
        else:
            if opts["stepbytes"] <= 0:
                return
            size += opts["stepbytes"]


class JsonReport(object):
    """nccl-tests' -J output (src/util.cu), written by rank 0."""

    def __init__(self, path, argv):
        self.doc = None
        self.path = None
        if not path:
            return
        try_path = path
        count = 0
        while True:
            try:
                handle = os.open(try_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
                os.close(handle)
                break
            except FileExistsError:
                try_path = "%s.%d" % (path, count)
                count += 1
            except OSError:
                out("# skipping json output; %s not accessible\n" % try_path)
                return
        out("# Writing JSON output to %s\n" % try_path)
        self.path = try_path
        self.doc = {"version": 1, "start_time": self.now(), "args": list(argv),
                    "env": ["%s=%s" % kv for kv in os.environ.items()],
                    "nccl_version": NCCL_VERSION_CODE}

    @staticmethod
    def now():
        return datetime.datetime.now().strftime("%Y-%m-%d %H:%M:%S")

    def close(self):
        if self.doc is None:
            return
        self.doc["end_time"] = self.now()
        with open(self.path, "w") as handle:
            json.dump(self.doc, handle)


# Opt-in (a test makes this directory in a lab host's emulated sysfs): each rank on that host notes the CPU
# governors it ran at, so a test sees what the ranks saw while the collective ran.
GOVERNORS_SEEN = os.path.join("commcheck-lab", "governors_seen")


def note_governors_seen(root, rank):
    """Write <root>/commcheck-lab/governors_seen/<pid>.json: this rank and its host's governors, cpu0 first."""
    if not root or not os.path.isdir(os.path.join(root, GOVERNORS_SEEN)):
        return
    paths = glob.glob(os.path.join(root, "devices", "system", "cpu", "cpu[0-9]*", "cpufreq", "scaling_governor"))
    governors = []
    for path in sorted(paths, key=lambda p: int(p.split(os.sep)[-3][3:])):
        with open(path) as handle:
            governors.append(handle.read().strip())
    with open(os.path.join(root, GOVERNORS_SEEN, "%d.json" % os.getpid()), "w") as handle:
        json.dump({"rank": rank, "host": socket.gethostname().split(".")[0], "governors": governors}, handle)


def main(argv):
    prog = os.path.basename(argv[0])
    opts = parse_args(argv[1:])
    if opts.get("fatal"):
        sys.stderr.write(opts["fatal"])
        return 255
    if opts["help"]:
        for message in opts["errors"]:
            out(message + "\n")
        out(USAGE % prog)
        return 0
    op = opts["emulate"] or (prog[:-len("_perf")] if prog.endswith("_perf") else prog)
    prog = "%s_perf" % op
    if op not in OPERATIONS:
        sys.stderr.write("EMULATOR: cannot tell which nccl-tests binary to emulate from %r\n" % prog)
        return 2
    if opts["minbytes"] > opts["maxbytes"]:
        sys.stderr.write("invalid sizes for 'minbytes' and 'maxbytes': %d > %d\n"
                         % (opts["minbytes"], opts["maxbytes"]))
        return 255
    if opts["ngpus"] != 1 or opts["nthreads"] != 1:
        sys.stderr.write("EMULATOR: one emulated GPU per process only (-t 1 -g 1); got -t %d -g %d: "
                         "start more processes per node instead\n" % (opts["nthreads"], opts["ngpus"]))
        return 1

    from mpi4py import MPI  # pylint: disable=import-outside-toplevel
    comm = MPI.COMM_WORLD
    rank, nranks = comm.Get_rank(), comm.Get_size()
    hostname = socket.gethostname().split(".")[0]
    main_proc = rank == 0
    note_governors_seen(nccl_net_emulation.sysfs_root(os.environ), rank)

    def pr(text):
        if main_proc:
            out(text)

    typename = opts["type"]
    if typename not in TYPES:
        pr("invalid type %s, defaulting to %s .. \n" % (typename, "float"))
        typename = "float"
    redop = opts["op"]
    if redop not in OP_NAMES:
        pr("invalid op %s, defaulting to %s .. \n" % (redop, "sum"))
        redop = "sum"
    root = opts["root"] if op in ROOTED else -1
    if op in ROOTED and not 0 <= root < nranks:
        pr("invalid root %d, defaulting to 0\n" % root)
        root = 0

    # The argv nccl-tests would have had (the launcher script adds --emulate).
    real_argv = [prog] + [a for a in argv[1:] if not a.startswith("--emulate")]
    report = JsonReport(opts["output_file"], real_argv) if main_proc else JsonReport(None, real_argv)
    debug = os.environ.get("NCCL_DEBUG", "").upper() in ("INFO", "TRACE", "VERSION")
    pid = os.getpid()

    # Which host each rank is on (nccl-tests hashes hostnames the same way).
    hosts = comm.allgather(hostname)
    local_rank = sum(1 for r in range(rank) if hosts[r] == hostname)

    pr("# nccl-tests version %s nccl-headers=%d nccl-library=%d\n" % (
        TESTS_VERSION, NCCL_VERSION_CODE, NCCL_VERSION_CODE))
    pr("# Collective test starting: %s\n" % prog)
    step = opts["stepfactor"] if opts["stepfactor"] > 1 else opts["stepbytes"]
    pr("# nThread %d nGpus %d minBytes %d maxBytes %d step: %d(%s) warmup iters: %d iters: %d "
       "agg iters: %d validation: %d graph: %d\n" % (
           1, 1, opts["minbytes"], opts["maxbytes"], step,
           "factor" if opts["stepfactor"] > 1 else "bytes", opts["warmup"], opts["iters"],
           opts["agg_iters"], opts["check"], 0))
    pr("#\n")
    pr("# Using devices\n")
    line = "#  Rank %2d Group %2d Pid %6d on %10s device %2d [%04x:%02x:%02x] %s\n" % (
        rank, 0, pid, hostname, local_rank, 0, 0x17 + local_rank, 0, DEVICE_NAME)
    lines = comm.gather(line, root=0)
    if main_proc:
        for text in lines:
            out(text)
    if report.doc is not None:
        report.doc["config"] = {
            "nthreads": 1, "ngpus": 1, "minimum_bytes": opts["minbytes"], "maximum_bytes": opts["maxbytes"],
            "warmup_iters": opts["warmup"], "iterations": opts["iters"],
            "aggregated_iterations": opts["agg_iters"], "validation": opts["check"], "graph": 0,
            "blocking_collectives": "false", "parallel_init": "false",
            "devices": [{"rank": r, "group": 0, "pid": 0, "hostname": hosts[r], "device": 0,
                         "device_hex": "0000:17:00", "device_info": DEVICE_NAME} for r in range(nranks)],
        }
        if opts["stepfactor"] > 1:
            report.doc["config"]["step_factor"] = opts["stepfactor"]
        else:
            report.doc["config"]["step_bytes"] = opts["stepbytes"]
    if debug:
        if main_proc:
            out("%s:%d:%d [0] NCCL INFO NCCL version %s\n" % (hostname, pid, pid, NCCL_VERSION_TEXT))
        nccl_net_emulation.debug_lines(comm, hosts, hostname, pid, os.environ, out)
    comm.Barrier()

    pr("#\n")
    pr("# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place          \n"
       % ("", "", "", "", ""))
    pr("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s %*s\n" % (
        "size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong",
        "time", "algbw", "busbw", "#wrong", 0, ""))
    pr("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s %*s\n" % (
        "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)",
        "", 0, ""))
    if report.doc is not None:
        report.doc["results"] = []

    coll = Collective(MPI, comm, op, typename, redop, max(root, 0))
    slow = nccl_net_emulation.slow_factor(comm, MPI, os.environ)
    word = coll.word
    opname = redop if op in REDUCING else "none"

    # Warm-up at the largest and the smallest size, as nccl-tests does.
    for size in (opts["maxbytes"], opts["minbytes"]):
        coll.prepare(max(size // word, nranks))
        for dummy in range(opts["warmup"]):
            coll.run(False)
    comm.Barrier()

    errors = 0
    bw_sum = 0.0
    bw_count = 0
    cycles = opts["cycles"] if opts["cycles"] > 0 else 1
    for dummy in range(cycles):
        for size in sizes(opts):
            count = size // word
            nbytes, param = coll.prepare(count)
            pr("%12d  %12d  %8s  %6s  %6s" % (nbytes, param, typename, opname, "%6i" % root))
            entry = {"size": nbytes, "count": param, "type": typename, "redop": opname,
                     "root": "%6i" % root}
            for in_place in (0, 1):
                comm.Barrier()
                started = time.perf_counter()
                for dummy in range(opts["iters"] * opts["agg_iters"]):
                    coll.run(in_place)
                delta = (time.perf_counter() - started) / max(1, opts["iters"] * opts["agg_iters"])
                delta = _average(comm, MPI, delta, opts["average"]) * slow
                algbw = nbytes / 1.0e9 / delta if delta > 0 else 0.0
                busbw = algbw * bus_factor(op, nranks)
                wrong = 0
                for dummy in range(opts["check"]):
                    coll.prepare(count)
                    coll.run(in_place)
                    wrong = comm.allreduce(coll.wrong(), op=MPI.SUM)
                    if wrong:
                        break
                if wrong:
                    errors += 1
                usec = delta * 1.0e6
                if opts["check"]:
                    pr("  %7s  %6s  %6s  %6g" % (float_str(usec, 7), float_str(algbw, 6),
                                                 float_str(busbw, 6), wrong))
                else:
                    pr("  %7s  %6s  %6s    N/A" % (
                        float_str(usec, 7), float_str(algbw, 6), float_str(busbw, 6)))
                entry["in_place" if in_place else "out_of_place"] = {
                    "time": usec, "alg_bw": algbw, "bus_bw": busbw,
                    "nwrong": float(wrong) if opts["check"] else None}
                bw_sum += busbw
                bw_count += 1
            pr("\n")
            if report.doc is not None:
                entry["actual_iterations"] = opts["iters"]
                entry["experiment_name"] = ""
                report.doc["results"].append(entry)
    avg_bw = bw_sum / bw_count if bw_count else 0.0
    check_avg = os.environ.get("NCCL_TESTS_MIN_BW")
    check_avg = float(check_avg) if check_avg else -1.0
    verdict = "" if check_avg == -1.0 else ("FAILED" if avg_bw < check_avg * 0.9 else "OK")
    pr("# %-20s : %d %s\n" % ("Out of bounds values", errors, "FAILED" if errors else "OK"))
    pr("# %-20s : %g %s\n" % ("Avg bus bandwidth", avg_bw, verdict))
    pr("#\n")
    pr("# Collective test concluded: %s\n" % prog)
    pr("#\n")
    if report.doc is not None:
        report.doc["out_of_bounds"] = {"count": errors, "okay": "true" if errors == 0 else "false"}
        report.doc["average_bus_bandwidth"] = {
            "bandwidth": avg_bw,
            "okay": "unchecked" if check_avg == -1.0 else ("true" if avg_bw >= check_avg * 0.9 else "false")}
        report.doc["errors"] = [""]
        report.close()
    comm.Barrier()
    return 1 if errors or (check_avg != -1.0 and avg_bw < check_avg * 0.9) else 0


def _average(comm, mpi, value, mode):
    """nccl-tests' -a: 0 rank 0's time, 1 average, 2 min, 3 max across ranks."""
    if mode == 0:
        return comm.bcast(value, root=0)
    if mode == 2:
        return comm.allreduce(value, op=mpi.MIN)
    if mode == 3:
        return comm.allreduce(value, op=mpi.MAX)
    return comm.allreduce(value, op=mpi.SUM) / comm.Get_size()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
