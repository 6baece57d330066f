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

from ansible_collections.clusterops.commcheck.plugins.module_utils.options import option_rules as rules
from ansible_collections.clusterops.commcheck.plugins.module_utils.options.rule_errors import raised_as
from ansible_collections.clusterops.commcheck.plugins.module_utils.planning.collective_binaries import (
    BINARIES, HCCL_BINARIES, NCCL_BINARIES)


class MpiCmdError(rules.OptionError):
    """A parameter that cannot go on a command line."""


LIBRARIES = ("nccl", "hccl")
LAUNCHERS = ("openmpi", "mpich")

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
ENV_PREFIXES = ("NCCL", "HCCL", "UCX", "OMPI", "CUDA", "NVIDIA", "HOROVOD", "ASCEND")
ENV_KEY = re.compile(r"^(NCCL|HCCL|UCX|OMPI|CUDA|NVIDIA|HOROVOD|ASCEND)_[A-Za-z0-9_]+$")
# Names under those prefixes that load code, run programs or write files on
# every host (NCCL_NET_PLUGIN, UCX_MODULE_DIR, ASCEND_OPP_PATH, NCCL_DEBUG_FILE,
# CUDA_HOME...): refused when one of the '_'-separated words is one of these.
ENV_REFUSED_WORDS = ("PLUGIN", "PLUGINS", "PRELOAD", "AUDIT", "LIB", "LIBS", "LIBRARY", "PATH", "PATHS", "DIR",
                     "DIRS", "DIRECTORY", "FILE", "FILES", "FILENAME", "HOME", "PREFIX", "AGENT", "EXEC", "LAUNCH",
                     "LAUNCHER", "SCRIPT", "CMD", "COMMAND", "PROGRAM", "BINARY")
# Files the stacks only read, needed on some clouds (Azure ND topology files):
# allowed by name, with an absolute path as their value.
ENV_READ_FILES = ("NCCL_TOPO_FILE",)
# Environment variables that set MCA parameters: the key after the prefix obeys check_mca_key.
ENV_MCA_PREFIXES = ("OMPI_MCA_", "PMIX_MCA_", "PRTE_MCA_")

MCA_KEY = re.compile(r"^[a-z][a-z0-9_]{0,127}$")
# The MCA parameters an operator sets for a communication check: component
# selection (btl, pml, osc, coll, mtl), the interfaces of the TCP BTL and of
# the out-of-band channel, transport tuning, mapping and binding policies.
MCA_ALLOWED = ("btl", "pml", "osc", "coll", "mtl", "oob", "hwloc_base_binding_policy",
               "hwloc_base_use_hwthreads_as_cpus", "rmaps_base_mapping_policy", "rmaps_base_ranking_policy",
               "rmaps_base_oversubscribe")
MCA_ALLOWED_PREFIXES = ("btl_tcp_", "btl_openib_", "btl_vader_", "btl_sm_", "btl_smcuda_", "btl_uct_", "btl_self_",
                        "btl_base_", "pml_ucx_", "pml_ob1_", "pml_base_", "osc_ucx_", "osc_rdma_", "osc_base_",
                        "coll_hcoll_", "coll_tuned_", "coll_ucc_", "coll_base_", "mtl_ofi_", "mtl_base_",
                        "oob_tcp_", "opal_common_ucx_", "mpi_")
# Never from options, even if someone adds them above: what starts the remote
# daemons (plm/orte/prte/pls/odls/ess/schizo, launch agents, rsh/ssh), where
# programs and libraries come from (exec, paths, prefixes, install dirs),
# which files are read or written (param files, filem, dfs).
MCA_REFUSED_PREFIXES = ("plm_", "pls_", "orte_", "prte_", "prrte_", "odls_", "ess_", "schizo_", "state_",
                        "filem_", "dfs_", "snapc_", "sstore_", "mca_base_", "pmix_", "ras_", "rmaps_rank_file")
MCA_REFUSED_FRAMEWORKS = ("plm", "pls", "orte", "prte", "prrte", "odls", "ess", "schizo", "filem", "dfs", "ras",
                          "state", "snapc", "sstore", "pmix")
MCA_REFUSED_PARTS = ("agent", "exec", "prefix", "launch", "spawn", "daemon", "orted", "prted", "install_dir")
MCA_REFUSED_WORDS = ("rsh", "ssh", "path", "paths", "dir", "dirs", "bindir", "libdir", "file", "files", "filename",
                     "args", "cmd", "command", "program", "binary", "script", "tmpdir")
# What the modules set themselves (the Kubernetes agent, an ssh client configuration),
# never through the mca / env options; see launch_mca.
LAUNCH_MCA_KEYS = ("plm_rsh_agent", "plm_rsh_no_tree_spawn", "plm_rsh_args")

_SIZE = re.compile(r"^\s*(\d+)\s*([kKmMgG]?)[bB]?\s*$")
MAX_VALUE_LEN = 4096
UNITS = {"": 1, "k": 1024, "m": 1024 ** 2, "g": 1024 ** 3}


# ---------------------------------------------------------------- validators

def rule(check, *args, **kwargs):
    """Run an option_rules check; its OptionError becomes an MpiCmdError (same message)."""
    return raised_as(MpiCmdError, check, *args, **kwargs)


def parse_size(value, name="size"):
    """'8K' -> 8192, '64M', '8G', 1024 -> bytes (K/M/G are powers of 1024, as the tools read them)."""
    if isinstance(value, bool):
        raise MpiCmdError("%s must be a size such as 8K, 64M or 8G, got %s" % (name, rules.show(value)))
    if isinstance(value, int):
        number = value
    else:
        if isinstance(value, str):
            check_value(name, value)
        match = _SIZE.match(str(value)) if value is not None else None
        if not match:
            raise MpiCmdError("%s must be a size such as 8, 8K, 64M or 8G, got %s" % (name, rules.show(value)))
        number = int(match.group(1)) * UNITS[match.group(2).lower()]
    if number <= 0:
        raise MpiCmdError("%s must be greater than 0, got %s" % (name, rules.show(value)))
    if number > 1024 ** 4:
        raise MpiCmdError("%s is larger than 1T: %s" % (name, rules.show(value)))
    return number


def format_size(number):
    """8192 -> '8K', 67108864 -> '64M'; other numbers stay plain digits."""
    for suffix, unit in (("G", 1024 ** 3), ("M", 1024 ** 2), ("K", 1024)):
        if number >= unit and number % unit == 0:
            return "%d%s" % (number // unit, suffix)
    return str(number)


def check_host(address, option="hosts"):
    """A hostname or an IPv4/IPv6 address; never something that looks like an option."""
    return rule(rules.check_host, option, address)


def check_value(name, value):
    """A string safe as one argv item: no control characters, bounded length (numbers and bools as text)."""
    if isinstance(value, bool):
        value = "1" if value else "0"
    if isinstance(value, (int, float)):
        value = str(value)
    if not isinstance(value, str):
        raise MpiCmdError("%s must be a string or a number, got %s" % (name, rules.show(value)))
    return rule(rules.check_text, name, value, MAX_VALUE_LEN)


def check_argv_value(name, value):
    """check_value, and not something that reads as an option when it stands alone on the line."""
    return rule(rules.check_not_flag, name, check_value(name, value))


def check_env_name(key, option="env"):
    """An environment variable a rank may get: the stacks' own prefixes, nothing that loads code or writes files.

    ``OMPI_MCA_*``, ``PMIX_MCA_*`` and ``PRTE_MCA_*`` set MCA parameters: their
    key obeys ``check_mca_key``.
    """
    if not isinstance(key, str):
        raise MpiCmdError("%s %s is not an environment variable name" % (option, rules.show(key)))
    rule(rules.check_name, option, key, "env_name")
    for prefix in ENV_MCA_PREFIXES:
        if key.startswith(prefix):
            check_mca_key(key[len(prefix):], "%s %s (an MCA parameter)" % (option, key))
            return key
    if key in ENV_READ_FILES:
        return key
    if not ENV_KEY.match(key):
        raise MpiCmdError("%s %s is not allowed: names start with %s" % (
            option, rules.show(key), ", ".join(p + "_" for p in ENV_PREFIXES)))
    words = set(key.upper().split("_"))
    refused = sorted(words & set(ENV_REFUSED_WORDS))
    if refused:
        raise MpiCmdError("%s %s is not allowed: a variable about %s loads code, starts programs or writes files "
                          "on every host" % (option, rules.show(key), "/".join(refused)))
    return key


def check_env(env, option="env"):
    """Validate the environment forwarded to the ranks; return {KEY: 'value'} sorted."""
    return _checked_mapping(env, option, "NAME: value", _env_item)


def _env_item(option, key, value):
    check_env_name(key, option)
    value = check_argv_value("%s %s" % (option, key), value)
    if key in ENV_READ_FILES:
        value = rule(rules.check_path, "%s %s" % (option, key), value)
    return value


def _checked_mapping(mapping, option, shape, check_item):
    """{key: checked value} sorted by key; ``check_item(option, key, value)`` checks one item."""
    if mapping is None:
        return {}
    if not isinstance(mapping, dict):
        raise MpiCmdError("%s must be a dict of %s, got %s" % (option, shape, rules.show(mapping)))
    return dict((key, check_item(option, key, mapping[key])) for key in sorted(mapping, key=str))


def mca_key_refusal(key):
    """Why an MCA key may never come from an option (launch agents, exec paths, prefixes...), or None."""
    words = key.split("_")
    if words[0] in MCA_REFUSED_FRAMEWORKS or key.startswith(MCA_REFUSED_PREFIXES):
        return "it configures how Open MPI starts its daemons or reads its settings (%s)" % words[0]
    for part in MCA_REFUSED_PARTS:
        if part in key:
            return "it names a program, an agent or a location ('%s')" % part
    for word in words:
        if word in MCA_REFUSED_WORDS:
            return "it names a program, an agent or a location ('%s')" % word
    return None


def check_mca_key(key, option="mca"):
    """An MCA parameter from the allow-list; launch agents, exec paths and prefixes never, whatever the list says."""
    if not isinstance(key, str) or not MCA_KEY.match(key):
        raise MpiCmdError("%s key %s is not an MCA parameter name (lower case letters, digits, _)"
                          % (option, rules.show(key)))
    why = mca_key_refusal(key)
    if why:
        raise MpiCmdError("%s key %s is refused: %s. The modules set the launch agent themselves "
                          "(mpi_agent_dir, ssh_config)" % (option, rules.show(key), why))
    if key not in MCA_ALLOWED and not key.startswith(MCA_ALLOWED_PREFIXES):
        raise MpiCmdError("%s key %s is not an MCA parameter commcheck passes on; allowed: %s and the %s* families"
                          % (option, rules.show(key), ", ".join(MCA_ALLOWED), "*, ".join(MCA_ALLOWED_PREFIXES)))
    return key


def check_mca_value(name, value):
    """One word (letters, digits and _ . , : = / + @ % -), optionally after '^' (Open MPI's 'all but')."""
    value = check_value(name, value)
    word = value[1:] if value.startswith("^") else value
    rule(rules.check_name, name, word, "word")
    return value


def check_mca(mca, option="mca"):
    """Validate Open MPI MCA parameters; return {key: 'value'} sorted."""
    return _checked_mapping(mca, option, "key: value", _mca_item)


def _mca_item(option, key, value):
    check_mca_key(key, option)
    return check_mca_value("%s %s" % (option, key), value)


def launch_mca(agent=None, ssh_config=None):
    """The MCA settings only a module sets: how mpirun reaches the other hosts.

    ``agent``: the program Open MPI starts its daemons with instead of ssh (the
    kubexec.sh agent that test_pods installs in the pods), with tree spawn off.
    ``ssh_config``: an ssh client configuration file for mpirun's ssh (``-F``).
    Both are paths on the launcher; Open MPI splits these values on spaces.
    """
    out = {}
    if agent is not None:
        path = rule(rules.check_binary, "mpi agent", agent, must_exist=False)
        if not path.startswith("/") or " " in path:
            raise MpiCmdError("mpi agent %s must be an absolute path without spaces" % rules.show(agent))
        out.update({"plm_rsh_agent": path, "plm_rsh_no_tree_spawn": "1"})
    if ssh_config is not None:
        if agent is not None:
            raise MpiCmdError("ssh_config and the Kubernetes MPI agent exclude each other (no ssh with the agent)")
        path = rule(rules.check_config_path, "ssh_config", ssh_config)
        if " " in path:
            raise MpiCmdError("ssh_config %s must not contain spaces (Open MPI splits it)" % rules.show(ssh_config))
        out["plm_rsh_args"] = "-F %s" % path
    return out


def check_launch_mca(mca):
    """A dict from launch_mca (only LAUNCH_MCA_KEYS, values without control characters)."""
    out = {}
    for key in sorted(mca or {}):
        if key not in LAUNCH_MCA_KEYS:
            raise MpiCmdError("launch setting %s is not one of %s" % (rules.show(key), ", ".join(LAUNCH_MCA_KEYS)))
        out[key] = check_value("launch setting %s" % key, mca[key])
    return out


def check_int(name, value, minimum=0, maximum=None):
    """An integer in [minimum, maximum] (a digit string is accepted, a bool is not)."""
    return rule(rules.check_int, name, value, minimum, 2 ** 63 - 1 if maximum is None else maximum)


def normalize_hosts(hosts, default_slots, option="hosts"):
    """Hosts as [{'address', 'slots', 'name'}].

    Accepts strings ('node1', '10.0.0.1', 'node1:8', '[fe80::1]:8') and dicts
    with ``address`` (required), ``slots`` and ``name`` (defaults to the
    address; a label used in results: any text without control characters
    that does not read as a flag).
    Duplicates are refused.
    """
    if not isinstance(hosts, (list, tuple)) or not hosts:
        raise MpiCmdError("%s must be a non-empty list" % option)
    if len(hosts) > 65536:
        raise MpiCmdError("%s has %d entries, more than 65536" % (option, len(hosts)))
    out = []
    seen = set()
    for index, item in enumerate(hosts):
        where = "%s[%d]" % (option, index)
        if isinstance(item, dict):
            unknown = set(item) - set(("address", "slots", "name"))
            if unknown:
                raise MpiCmdError("%s has unknown keys %s" % (where, rules.show(sorted(unknown, key=str))))
            address = item.get("address")
            slots = item.get("slots")
            name = item.get("name")
        elif isinstance(item, str):
            address, slots, name = _split_host(item, where), None, None
            if isinstance(address, tuple):
                address, slots = address
        else:
            raise MpiCmdError("%s must be a string or a dict, got %s" % (where, rules.show(item)))
        address = check_host(address, where)
        slots = default_slots if slots in (None, "") else check_int("%s slots" % where, slots, 1, 4096)
        # the name is the host's inventory name, a label of the results (spaces, any letters): only its address
        # reaches mpirun; one that reads as a flag is still refused, should it ever be shown next to a command
        name = address if name in (None, "") else check_argv_value("%s name" % where, name)
        if address in seen:
            raise MpiCmdError("%s: host %s is listed twice" % (where, address))
        seen.add(address)
        out.append({"address": address, "slots": slots, "name": name})
    return out


def _split_host(text, where="hosts"):
    """'node:8' -> ('node', '8'); '[fe80::1]:8' -> ('fe80::1', '8'); 'fe80::1' -> 'fe80::1'."""
    if text.startswith("["):
        end = text.find("]")
        if end < 0:
            raise MpiCmdError("%s %s has an unclosed '['" % (where, rules.show(text)))
        rest = text[end + 1:]
        if rest and not rest.startswith(":"):
            raise MpiCmdError("%s %s: expected ':slots' after ']'" % (where, rules.show(text)))
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
        raise MpiCmdError("library must be one of %s, got %s" % (", ".join(LIBRARIES), rules.show(library)))
    names = BINARIES[library]
    if operation not in names:
        raise MpiCmdError("%s has no %s test; operations: %s" % (
            library, rules.show(operation), ", ".join(sorted(names))))
    return names[operation]


def check_binary_dir(binary_dir, option="binary_dir"):
    """An absolute directory without '..' (the test binaries live there on every host)."""
    return rule(rules.check_path, option, binary_dir)


def binary_path(library, operation, binary_dir=None):
    """<binary_dir>/<binary> or the bare binary name (looked up on PATH)."""
    name = binary_name(library, operation)
    if binary_dir in (None, ""):
        return name
    return posixpath.join(check_binary_dir(binary_dir), name)


def check_mpirun(mpirun, option="mpirun"):
    """The launcher program: a bare name (found on PATH where it runs) or an absolute path without '..', whose
    file name is a launcher's (mpirun, mpiexec, orterun, prterun; mpirun.openmpi, mpiexec.hydra).

    It runs on the launcher host or in its pod, so whether it exists is the
    module's preflight to find out, not this check's.
    """
    return rule(rules.check_program, option, mpirun, "mpirun", must_exist=False)


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
        raise MpiCmdError("%s datatype must be one of %s, got %s" % (
            library, ", ".join(DATATYPES[library]), rules.show(datatype)))
    if reduce_op not in REDUCE_OPS[library]:
        raise MpiCmdError("%s reduce_op must be one of %s, got %s" % (
            library, ", ".join(REDUCE_OPS[library]), rules.show(reduce_op)))
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
    argv = [binary] + _sweep_args(params, ["-g", str(params["gpus_per_process"])])
    if json_file:
        json_file = rule(rules.check_path, "json file", json_file)
        if not json_file.endswith(".json"):
            raise MpiCmdError("nccl-tests infers the output type from the suffix: %s needs .json"
                              % rules.show(json_file))
        argv += ["-J", json_file]
    return argv


def hccl_argv(binary, params):
    """hccl_test argv: flags from the CANN hccl_test README (-p NPUs per node)."""
    return [binary, "-p", str(params["gpus_per_node"])] + _sweep_args(params, [])


def _sweep_args(params, per_process):
    """The flags nccl-tests and hccl_test share (sizes, step, iterations, check, datatype, op, root);
    ``per_process`` (nccl-tests' ``-g N``) goes right after the step factor, where nccl-tests' usage has it."""
    argv = ["-b", format_size(params["min_bytes"]),
            "-e", format_size(params["max_bytes"]),
            "-f", str(params["step_factor"])]
    argv += per_process
    argv += ["-n", str(params["iterations"]),
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
                 allow_run_as_root=False, launch=None):
    """Open MPI mpirun argv; ``program`` is the binary argv.

    ``mca`` comes from options (check_mca's allow-list); ``launch`` only from
    ``launch_mca`` (the agent or ssh configuration a module sets itself).
    """
    argv = [check_mpirun(mpirun)]
    if allow_run_as_root:
        argv.append("--allow-run-as-root")
    argv += ["-np", str(np),
             "-H", ",".join("%s:%d" % (mpi_host(h["address"]), processes_per_node) for h in hosts),
             "--map-by", "ppr:%d:node" % processes_per_node]
    for key, value in check_env(env).items():
        argv += ["-x", "%s=%s" % (key, value)]
    for key, value in check_mca(mca).items():
        argv += ["--mca", key, value]
    for key, value in check_launch_mca(launch).items():
        argv += ["--mca", key, value]
    return argv + list(program)


def mpich_argv(hostfile, np, program, env=None, mpirun="mpirun"):
    """MPICH / Intel MPI (hydra) mpirun argv: ``-f hostfile -n N -genv K V``."""
    argv = [check_mpirun(mpirun), "-f", rule(rules.check_path, "hostfile", hostfile), "-n", str(np)]
    for key, value in check_env(env).items():
        argv += ["-genv", key, value]
    return argv + list(program)


def hostfile_lines(hosts, processes_per_node):
    """Lines of an MPICH hostfile: ``address:processes``."""
    return ["%s:%d" % (mpi_host(h["address"]), processes_per_node) for h in hosts]


def launcher_argv(launcher, hosts, layout, program, env=None, mca=None, mpirun="mpirun",
                  allow_run_as_root=False, hostfile=None, launch=None):
    if launcher == "openmpi":
        return openmpi_argv(hosts, layout["np"], layout["processes_per_node"], program, env=env,
                            mca=mca, mpirun=mpirun, allow_run_as_root=allow_run_as_root, launch=launch)
    if launcher == "mpich":
        if mca or launch:
            raise MpiCmdError("mca options are Open MPI's; the mpich launcher does not take them")
        if not hostfile:
            raise MpiCmdError("the mpich launcher needs a hostfile path")
        return mpich_argv(hostfile, layout["np"], program, env=env, mpirun=mpirun)
    raise MpiCmdError("launcher must be one of %s, got %s" % (", ".join(LAUNCHERS), rules.show(launcher)))
