# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pure argv builders for collective tests launched with mpirun.

Everything here turns validated parameters into argv lists; nothing runs a
command and nothing builds a shell string. Bad input raises ``MpiCmdError``
with a message a module can hand to ``fail_json`` before anything runs.

Launchers:

- ``openmpi``: ``mpirun [--allow-run-as-root] -np N -H h1:s1,h2:s2
  [--map-by ppr:K:node] -x NAME=value ... --mca key value ... BINARY ARGS``
- ``mpich`` (MPICH / Intel MPI hydra): ``mpirun -f HOSTFILE -n N
  [-genv NAME value ...] BINARY ARGS``; the hostfile holds ``host:slots``
  lines (``hostfile_lines``).

Binaries:

- nccl-tests ``<op>_perf -b MIN -e MAX -f FACTOR -g GPUS -n ITERS -w WARMUP
  -c CHECK -d TYPE [-o OP] [-r ROOT] [-J FILE.json]`` (flags as in
  NVIDIA/nccl-tests src/common.cu; ``-J/--output_file`` exists in newer
  releases only, see ``nccl_json_supported``).
- hccl_test ``<op>_test -p NPUS -b MIN -e MAX -f FACTOR -n ITERS -w WARMUP
  -c CHECK -d TYPE [-o OP] [-r ROOT]`` (flags as in the CANN hccl_test
  README / hccl_test_common.cc).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import ipaddress
import posixpath
import re


class MpiCmdError(ValueError):
    """A parameter that cannot go on a command line."""


LIBRARIES = ("nccl", "hccl")
LAUNCHERS = ("openmpi", "mpich")

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
OPERATIONS = tuple(sorted(set(NCCL_BINARIES) | set(HCCL_BINARIES)))

# Operations that take a reduction operator / a root rank.
REDUCING_OPS = ("all_reduce", "reduce", "reduce_scatter")
ROOTED_OPS = ("broadcast", "reduce", "gather", "scatter")

DATATYPES = {
    # nccl-tests test_typenames: any other name makes it fall back to float silently.
    "nccl": ("int8", "uint8", "int32", "uint32", "int64", "uint64", "half", "float", "double", "bfloat16",
             "f8e4m3", "f8e5m2"),
    # hccl_test test_typenames.
    "hccl": ("int8", "int16", "int32", "fp16", "fp32", "int64", "uint64", "uint8", "uint16", "uint32", "fp64",
             "bfp16"),
}
DEFAULT_DATATYPE = {"nccl": "float", "hccl": "fp32"}
REDUCE_OPS = {
    "nccl": ("sum", "prod", "min", "max", "avg"),
    "hccl": ("sum", "prod", "max", "min"),
}
# Bytes per element, for the datatypes above.
TYPE_SIZES = {
    "int8": 1, "uint8": 1, "f8e4m3": 1, "f8e5m2": 1,
    "int16": 2, "uint16": 2, "half": 2, "fp16": 2, "bfloat16": 2, "bfp16": 2,
    "int32": 4, "uint32": 4, "float": 4, "fp32": 4,
    "int64": 8, "uint64": 8, "double": 8, "fp64": 8,
}

# Environment variables forwarded to every rank: the communication stacks'
# own prefixes only (no PATH/LD_PRELOAD games through this option).
ENV_KEY = re.compile(r"^(NCCL|HCCL|UCX|OMPI|CUDA|NVIDIA|HOROVOD|ASCEND)_[A-Z0-9_]+$")
MCA_KEY = re.compile(r"^[a-z][a-z0-9_]{0,127}$")
_HOSTNAME = re.compile(r"^(?=.{1,253}$)[A-Za-z0-9_]([A-Za-z0-9_-]{0,62})(\.[A-Za-z0-9_]([A-Za-z0-9_-]{0,62}))*\.?$")
_SIZE = re.compile(r"^\s*(\d+)\s*([kKmMgG]?)[bB]?\s*$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
MAX_VALUE_LEN = 4096
UNITS = {"": 1, "k": 1024, "m": 1024 ** 2, "g": 1024 ** 3}


# ---------------------------------------------------------------- validators

def parse_size(value, name="size"):
    """'8K' -> 8192, '64M', '8G', 1024 -> bytes (K/M/G are powers of 1024, as the tools read them)."""
    if isinstance(value, bool):
        raise MpiCmdError("%s must be a size such as 8K, 64M or 8G, got %r" % (name, value))
    if isinstance(value, int):
        number = value
    else:
        match = _SIZE.match(str(value)) if value is not None else None
        if not match:
            raise MpiCmdError("%s must be a size such as 8, 8K, 64M or 8G, got %r" % (name, value))
        number = int(match.group(1)) * UNITS[match.group(2).lower()]
    if number <= 0:
        raise MpiCmdError("%s must be greater than 0, got %r" % (name, value))
    if number > 1024 ** 4:
        raise MpiCmdError("%s is larger than 1T: %r" % (name, value))
    return number


def format_size(number):
    """8192 -> '8K', 67108864 -> '64M'; other numbers stay plain digits."""
    for suffix, unit in (("G", 1024 ** 3), ("M", 1024 ** 2), ("K", 1024)):
        if number >= unit and number % unit == 0:
            return "%d%s" % (number // unit, suffix)
    return str(number)


def check_host(address):
    """A hostname or an IPv4/IPv6 address; never something that looks like an option."""
    if not isinstance(address, str) or not address:
        raise MpiCmdError("host address must be a non-empty string, got %r" % (address,))
    try:
        ipaddress.ip_address(address)
        return address
    except ValueError:
        pass
    if address.startswith("-") or not _HOSTNAME.match(address):
        raise MpiCmdError("host %r is not a hostname or an IP address" % (address,))
    return address


def check_value(name, value):
    """A string safe as one argv item: no control characters, bounded length."""
    if isinstance(value, bool):
        value = "1" if value else "0"
    if isinstance(value, (int, float)):
        value = str(value)
    if not isinstance(value, str):
        raise MpiCmdError("%s must be a string or a number, got %r" % (name, value))
    if _CONTROL.search(value):
        raise MpiCmdError("%s contains a control character: %r" % (name, value))
    if len(value) > MAX_VALUE_LEN:
        raise MpiCmdError("%s is longer than %d characters" % (name, MAX_VALUE_LEN))
    return value


def check_env(env):
    """Validate the environment forwarded to the ranks; return {KEY: 'value'} sorted."""
    if env is None:
        return {}
    if not isinstance(env, dict):
        raise MpiCmdError("env must be a dict of NAME: value, got %r" % (env,))
    out = {}
    for key in sorted(env):
        if not isinstance(key, str) or not ENV_KEY.match(key):
            raise MpiCmdError(
                "env key %r is not allowed: names must match %s" % (key, ENV_KEY.pattern))
        out[key] = check_value("env %s" % key, env[key])
    return out


def check_mca(mca):
    """Validate Open MPI MCA parameters; return {key: 'value'} sorted."""
    if mca is None:
        return {}
    if not isinstance(mca, dict):
        raise MpiCmdError("mca must be a dict of key: value, got %r" % (mca,))
    out = {}
    for key in sorted(mca):
        if not isinstance(key, str) or not MCA_KEY.match(key):
            raise MpiCmdError("mca key %r is not an MCA parameter name (lower case, digits, _)" % (key,))
        out[key] = check_value("mca %s" % key, mca[key])
    return out


def check_int(name, value, minimum=0, maximum=None):
    if isinstance(value, bool) or not isinstance(value, int):
        try:
            value = int(str(value).strip())
        except (TypeError, ValueError):
            raise MpiCmdError("%s must be an integer, got %r" % (name, value))
    if value < minimum or (maximum is not None and value > maximum):
        raise MpiCmdError("%s must be between %s and %s, got %r" % (
            name, minimum, "any" if maximum is None else maximum, value))
    return value


def normalize_hosts(hosts, default_slots):
    """Hosts as [{'address', 'slots', 'name'}].

    Accepts strings ('node1', '10.0.0.1', 'node1:8', '[fe80::1]:8') and dicts
    with ``address`` (required), ``slots`` and ``name`` (defaults to the
    address; used in results). Duplicates are refused.
    """
    if not isinstance(hosts, (list, tuple)) or not hosts:
        raise MpiCmdError("hosts must be a non-empty list")
    out = []
    seen = set()
    for item in hosts:
        if isinstance(item, dict):
            unknown = set(item) - set(("address", "slots", "name"))
            if unknown:
                raise MpiCmdError("host entry %r has unknown keys %s" % (item, sorted(unknown)))
            address = item.get("address")
            slots = item.get("slots")
            name = item.get("name")
        elif isinstance(item, str):
            address, slots, name = _split_host(item), None, None
            if isinstance(address, tuple):
                address, slots = address
        else:
            raise MpiCmdError("host entry must be a string or a dict, got %r" % (item,))
        address = check_host(address)
        slots = default_slots if slots in (None, "") else check_int("slots of %s" % address, slots, 1, 4096)
        name = address if name in (None, "") else check_value("name of %s" % address, name)
        if address in seen:
            raise MpiCmdError("host %s is listed twice" % address)
        seen.add(address)
        out.append({"address": address, "slots": slots, "name": name})
    return out


def _split_host(text):
    """'node:8' -> ('node', '8'); '[fe80::1]:8' -> ('fe80::1', '8'); 'fe80::1' -> 'fe80::1'."""
    if text.startswith("["):
        end = text.find("]")
        if end < 0:
            raise MpiCmdError("host %r has an unclosed '['" % text)
        rest = text[end + 1:]
        if rest and not rest.startswith(":"):
            raise MpiCmdError("host %r: expected ':slots' after ']'" % text)
        return (text[1:end], rest[1:]) if rest else text[1:end]
    if text.count(":") == 1:
        address, slots = text.split(":")
        return (address, slots)
    return text


def mpi_host(address):
    """How a host appears in -H / a hostfile (IPv6 in brackets)."""
    try:
        if ipaddress.ip_address(address).version == 6:
            return "[%s]" % address
    except ValueError:
        pass
    return address


# ---------------------------------------------------------------- binaries

def binary_name(library, operation):
    if library not in BINARIES:
        raise MpiCmdError("library must be one of %s, got %r" % (", ".join(LIBRARIES), library))
    names = BINARIES[library]
    if operation not in names:
        raise MpiCmdError("%s has no %r test; operations: %s" % (library, operation, ", ".join(sorted(names))))
    return names[operation]


def binary_path(library, operation, binary_dir=None):
    """<binary_dir>/<binary> or the bare binary name (looked up on PATH)."""
    name = binary_name(library, operation)
    if binary_dir in (None, ""):
        return name
    binary_dir = check_value("binary_dir", binary_dir)
    if not binary_dir.startswith("/"):
        raise MpiCmdError("binary_dir must be an absolute path, got %r" % binary_dir)
    return posixpath.join(binary_dir, name)


def test_params(library, operation, min_bytes="32M", max_bytes="8G", step_factor=2,
                iterations=20, warmup_iterations=5, check=1, datatype=None,
                reduce_op="sum", root=0, gpus_per_process=1, gpus_per_node=1):
    """Validate and normalize a test's parameters; return a dict used by binary_argv."""
    binary_name(library, operation)
    minimum = parse_size(min_bytes, "min_bytes")
    maximum = parse_size(max_bytes, "max_bytes")
    if minimum > maximum:
        raise MpiCmdError("min_bytes (%s) is larger than max_bytes (%s)" % (min_bytes, max_bytes))
    datatype = datatype or DEFAULT_DATATYPE[library]
    if datatype not in DATATYPES[library]:
        raise MpiCmdError("%s datatype must be one of %s, got %r" % (
            library, ", ".join(DATATYPES[library]), datatype))
    if reduce_op not in REDUCE_OPS[library]:
        raise MpiCmdError("%s reduce_op must be one of %s, got %r" % (
            library, ", ".join(REDUCE_OPS[library]), reduce_op))
    return {
        "library": library,
        "operation": operation,
        "min_bytes": minimum,
        "max_bytes": maximum,
        "step_factor": check_int("step_factor", step_factor, 1, 1024),
        "iterations": check_int("iterations", iterations, 1, 1000000),
        "warmup_iterations": check_int("warmup_iterations", warmup_iterations, 0, 1000000),
        "check": check_int("check", check, 0, 1000),
        "datatype": datatype,
        "type_size": TYPE_SIZES[datatype],
        "reduce_op": reduce_op,
        "root": check_int("root", root, 0, 1000000),
        "gpus_per_process": check_int("gpus_per_process", gpus_per_process, 1, 64),
        "gpus_per_node": check_int("gpus_per_node", gpus_per_node, 1, 1024),
    }


def nccl_argv(binary, params, json_file=None):
    """nccl-tests argv: flags from src/common.cu's getopt table."""
    argv = [binary,
            "-b", format_size(params["min_bytes"]),
            "-e", format_size(params["max_bytes"]),
            "-f", str(params["step_factor"]),
            "-g", str(params["gpus_per_process"]),
            "-n", str(params["iterations"]),
            "-w", str(params["warmup_iterations"]),
            "-c", str(params["check"]),
            "-d", params["datatype"]]
    if params["operation"] in REDUCING_OPS:
        argv += ["-o", params["reduce_op"]]
    if params["operation"] in ROOTED_OPS:
        argv += ["-r", str(params["root"])]
    if json_file:
        json_file = check_value("json file", json_file)
        if not json_file.endswith(".json"):
            raise MpiCmdError("nccl-tests infers the output type from the suffix: %r needs .json" % json_file)
        argv += ["-J", json_file]
    return argv


def hccl_argv(binary, params):
    """hccl_test argv: flags from the CANN hccl_test README (-p NPUs per node)."""
    argv = [binary,
            "-p", str(params["gpus_per_node"]),
            "-b", format_size(params["min_bytes"]),
            "-e", format_size(params["max_bytes"]),
            "-f", str(params["step_factor"]),
            "-n", str(params["iterations"]),
            "-w", str(params["warmup_iterations"]),
            "-c", str(params["check"]),
            "-d", params["datatype"]]
    if params["operation"] in REDUCING_OPS:
        argv += ["-o", params["reduce_op"]]
    if params["operation"] in ROOTED_OPS:
        argv += ["-r", str(params["root"])]
    return argv


def binary_argv(binary, params, json_file=None):
    if params["library"] == "nccl":
        return nccl_argv(binary, params, json_file=json_file)
    if json_file:
        raise MpiCmdError("hccl_test has no JSON output")
    return hccl_argv(binary, params)


def nccl_json_supported(help_text):
    """True when a nccl-tests binary's --help lists -J/--output_file (nccl-tests >= 2.16)."""
    return bool(re.search(r"-J,\s*--output_file", help_text or ""))


# ---------------------------------------------------------------- launchers

def ranks_layout(library, hosts, gpus_per_node=1, gpus_per_process=1, processes_per_node=None):
    """Processes per node and total process count.

    nccl-tests: one process drives ``gpus_per_process`` GPUs (``-g``), so a
    node runs gpus_per_node / gpus_per_process processes. hccl_test: one
    process per NPU. A host's own ``slots`` bound how many processes it runs.
    """
    if processes_per_node is None:
        if library == "nccl":
            if gpus_per_node % gpus_per_process:
                raise MpiCmdError("gpus_per_node (%d) is not a multiple of gpus_per_process (%d)"
                                  % (gpus_per_node, gpus_per_process))
            processes_per_node = gpus_per_node // gpus_per_process
        else:
            processes_per_node = gpus_per_node
    processes_per_node = check_int("processes_per_node", processes_per_node, 1, 4096)
    for host in hosts:
        if host["slots"] < processes_per_node:
            raise MpiCmdError("host %s has %d slot(s) but %d process(es) per node were asked"
                              % (host["address"], host["slots"], processes_per_node))
    return {"processes_per_node": processes_per_node, "np": processes_per_node * len(hosts),
            "ranks": processes_per_node * len(hosts) * (gpus_per_process if library == "nccl" else 1)}


def openmpi_argv(hosts, np, processes_per_node, program, env=None, mca=None, mpirun="mpirun",
                 allow_run_as_root=False):
    """Open MPI mpirun argv; ``program`` is the binary argv."""
    argv = [check_value("mpirun", mpirun)]
    if allow_run_as_root:
        argv.append("--allow-run-as-root")
    argv += ["-np", str(np),
             "-H", ",".join("%s:%d" % (mpi_host(h["address"]), processes_per_node) for h in hosts),
             "--map-by", "ppr:%d:node" % processes_per_node]
    for key, value in check_env(env).items():
        argv += ["-x", "%s=%s" % (key, value)]
    for key, value in check_mca(mca).items():
        argv += ["--mca", key, value]
    return argv + list(program)


def mpich_argv(hostfile, np, program, env=None, mpirun="mpirun"):
    """MPICH / Intel MPI (hydra) mpirun argv: ``-f hostfile -n N -genv K V``."""
    argv = [check_value("mpirun", mpirun), "-f", check_value("hostfile", hostfile), "-n", str(np)]
    for key, value in check_env(env).items():
        argv += ["-genv", key, value]
    return argv + list(program)


def hostfile_lines(hosts, processes_per_node):
    """Lines of an MPICH hostfile: ``address:processes``."""
    return ["%s:%d" % (mpi_host(h["address"]), processes_per_node) for h in hosts]


def launcher_argv(launcher, hosts, layout, program, env=None, mca=None, mpirun="mpirun",
                  allow_run_as_root=False, hostfile=None):
    if launcher == "openmpi":
        return openmpi_argv(hosts, layout["np"], layout["processes_per_node"], program, env=env,
                            mca=mca, mpirun=mpirun, allow_run_as_root=allow_run_as_root)
    if launcher == "mpich":
        if mca:
            raise MpiCmdError("mca options are Open MPI's; the mpich launcher does not take them")
        if not hostfile:
            raise MpiCmdError("the mpich launcher needs a hostfile path")
        return mpich_argv(hostfile, layout["np"], program, env=env, mpirun=mpirun)
    raise MpiCmdError("launcher must be one of %s, got %r" % (", ".join(LAUNCHERS), launcher))
