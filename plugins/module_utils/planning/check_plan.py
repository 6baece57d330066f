# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the one-click check runs, and on which hosts (pure functions, no I/O).

- plan_checks: the run's checks from commcheck_checks (AWX surveys send a
  comma-separated string), the collective library asked for, and whether
  discovery facts are needed;
- probe_keys: what the tool probe looks for (module_utils/commands/tool_probe.py):
  perftest tools, iperf3, mpirun, the collective binaries of the candidate
  libraries and the evidence of an accelerator;
- host_status: from one host's probe and discovery facts, for each check None
  (it can run there) or the reason it cannot ({code, cause, fix});
- decide: over every host in play order, the collective library (auto: the
  one whose binaries the first host that has either has), the hosts of each
  check, and one "skipped" record per check and host that cannot run.

The collective binaries are the collective module's (planning/collective_binaries.py).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import re

from ansible_collections.clusterops.commcheck.plugins.module_utils.planning.collective_binaries import BINARIES

COLLECTIVE_CHECKS = ("collective", "nccl", "hccl")
# What shows a GPU (NCCL) or an NPU (HCCL) on a host, besides discovery's GPU facts.
ACCELERATOR_PROBES = {
    "nccl": ["exists:/proc/driver/nvidia/version", "exists:/dev/nvidiactl", "cmd:nvidia-smi"],
    "hccl": ["exists:/dev/davinci_manager", "cmd:npu-smi"],
}
ACCELERATOR_FACT = {"nccl": "gpus", "hccl": "npus"}
FOUND_BY_ORDER = ("driver", "device nodes", "smi", "pci")
PROBE_FIX = "check that the host (or its pod) can run sh"
NO_PEER_FIX = "fix the reasons the other hosts were skipped, or add hosts"


def as_list(value):
    """A list option as a list: AWX surveys send 'a,b' strings."""
    if isinstance(value, str):
        return [item.strip() for item in value.split(",") if item.strip()]
    return list(value or [])


def plan_checks(checks, library="auto", collective_ops=(), rdma_ops=(), rdma_metrics=()):
    """The run's plan: checks, discover, rdma, tcp, collective, library, collective_ops, rdma_ops,
    rdma_metrics, need_facts."""
    checks = as_list(checks)
    collective = any(check in checks for check in COLLECTIVE_CHECKS)
    if "nccl" in checks:
        library = "nccl"
    elif "hccl" in checks:
        library = "hccl"
    return {
        "checks": checks,
        "discover": "discover" in checks,
        "rdma": "rdma" in checks,
        "tcp": "tcp" in checks,
        "collective": collective,
        "library": library,
        "collective_ops": as_list(collective_ops),
        "rdma_ops": as_list(rdma_ops),
        "rdma_metrics": as_list(rdma_metrics),
        "need_facts": "discover" in checks or "rdma" in checks or collective,
    }


def _libraries(plan):
    return ["nccl", "hccl"] if plan["library"] == "auto" else [plan["library"]]


def _bindir(binary_dir):
    return re.sub(r"/+$", "", binary_dir or "")


def _binary_key(name, bindir):
    return "cmd:" + (bindir + "/" + name if bindir else name)


def probe_keys(plan, mpirun="mpirun", binary_dir=""):
    """The keys the tool probe looks for, in order, each once."""
    keys = []
    if plan["rdma"]:
        keys += ["cmd:ib_%s_%s" % (op, metric) for op in plan["rdma_ops"] for metric in plan["rdma_metrics"]]
    if plan["tcp"]:
        keys.append("cmd:iperf3")
    if plan["collective"]:
        keys.append("cmd:" + (mpirun or "mpirun"))
        bindir = _bindir(binary_dir)
        for library in _libraries(plan):
            names = [BINARIES.get(library, {}).get(op) for op in plan["collective_ops"]]
            keys += [_binary_key(name, bindir) for name in names if name]
            keys += ACCELERATOR_PROBES.get(library, [])
    out = []
    for key in keys:
        if key not in out:
            out.append(key)
    return out


def probe_found(probe):
    """{key: what was found} from the probe's 'key<TAB>value' lines."""
    found = {}
    for line in (probe or {}).get("stdout_lines") or []:
        parts = line.split("\t", 1)
        if len(parts) == 2:
            found[parts[0]] = parts[1]
    return found


def probe_error(probe):
    """Why the probe itself failed (its rc and the last line it printed on stderr), or None."""
    probe = probe or {}
    if "rc" in probe and probe["rc"] != 0:
        last = (probe.get("stderr") or "").strip().split("\n")[-1]
        return "could not look for the test tools (rc %s): %s" % (probe["rc"], last)
    return None


def _probe_failed(error):
    return {"code": "probe_failed", "cause": error, "fix": PROBE_FIX}


def rdma_reason(plan, found, error, facts):
    """None when this host can run the RDMA check, else why not."""
    if not plan["rdma"]:
        return None
    missing = ["ib_%s_%s" % (op, metric) for op in plan["rdma_ops"] for metric in plan["rdma_metrics"]
               if "cmd:ib_%s_%s" % (op, metric) not in found]
    summary = (facts or {}).get("summary") or {}
    if error:
        return _probe_failed(error)
    if summary.get("active_ports", 0) == 0:
        return {"code": "no_rdma",
                "cause": "no ACTIVE RDMA port found (%s device(s), %s port(s))" % (
                    summary.get("devices", 0), summary.get("ports", 0)),
                "fix": "see the discovery findings of this host; leave 'rdma' out of commcheck_checks for hosts "
                       "without RDMA"}
    if missing:
        return {"code": "tool_missing", "cause": "perftest tool(s) %s not found on PATH" % ", ".join(missing),
                "fix": "install perftest (apt install perftest / dnf install perftest) or put its directory on PATH"}
    return None


def tcp_reason(plan, found, error):
    """None when this host can run the TCP check, else why not."""
    if not plan["tcp"]:
        return None
    if error:
        return _probe_failed(error)
    if "cmd:iperf3" not in found:
        return {"code": "tool_missing", "cause": "iperf3 not found on PATH",
                "fix": "install iperf3 (apt install iperf3 / dnf install iperf3)"}
    return None


def _found_by(probed, discovered):
    """How an accelerator was found: driver, device nodes, smi (the probe's), pci (discovery's)."""
    ways = []
    for key in probed:
        if key.startswith("cmd:"):
            ways.append("smi")
        elif key.startswith("exists:/dev/"):
            ways.append("device nodes")
        elif key.startswith("exists:"):
            ways.append("driver")
        else:
            ways.append(key)
    ways += list(discovered.get("found_by") or [])
    return [way for way in FOUND_BY_ORDER if way in ways]


def collective_status(plan, library, found, error, facts, binary_dir="", mpirun="mpirun",
                      require_accelerators=True):
    """What this host has of one library: has_binaries, reason (None or why not), evidence, found_by, pci_only."""
    bindir = _bindir(binary_dir)
    mpirun = mpirun or "mpirun"
    missing = []
    for op in plan["collective_ops"]:
        name = BINARIES.get(library, {}).get(op)
        if not name:
            missing.append("%s (no %s test for it)" % (op, library.upper()))
        elif _binary_key(name, bindir) not in found:
            missing.append(name)
    probed = [key for key in ACCELERATOR_PROBES.get(library, []) if key in found]
    discovered = ((facts or {}).get("host") or {}).get(ACCELERATOR_FACT.get(library)) or {}
    evidence = [re.sub(r"^[a-z]+:", "", key) for key in probed] + list(discovered.get("evidence") or [])
    found_by = _found_by(probed, discovered)
    nccl = library == "nccl"
    reason = None
    if error:
        reason = _probe_failed(error)
    elif missing:
        reason = {"code": "tool_missing",
                  "cause": "%s binary %s not found %s" % ("nccl-tests" if nccl else "hccl_test", ", ".join(missing),
                                                          ("in " + bindir) if bindir else "on PATH"),
                  "fix": ("build nccl-tests with MPI=1 and install it at the same path on every host "
                          "(commcheck_collective_binary_dir)" if nccl else
                          "install the Ascend toolkit hccl_test at the same path on every host "
                          "(commcheck_collective_binary_dir)")}
    elif "cmd:" + mpirun not in found:
        reason = {"code": "tool_missing", "cause": "%s (MPI launcher) not found on PATH" % mpirun,
                  "fix": "install Open MPI (apt install openmpi-bin) on every host, or set commcheck_collective_mpirun"}
    elif require_accelerators and not evidence:
        reason = {"code": "no_accelerator",
                  "cause": ("no NVIDIA GPU found (no /proc/driver/nvidia, /dev/nvidiactl, nvidia-smi or NVIDIA PCI "
                            "function)" if nccl else
                            "no Ascend NPU found (no /dev/davinci_manager, npu-smi, Ascend driver or Huawei PCI "
                            "accelerator function)"),
                  "fix": "run the collective check on GPU/NPU nodes, or set commcheck_require_accelerators=false for "
                         "CPU-only test builds"}
    return {"has_binaries": not missing and not error, "reason": reason, "evidence": evidence,
            "found_by": found_by, "pci_only": found_by == ["pci"]}


def host_status(plan, probe, facts, binary_dir="", mpirun="mpirun", require_accelerators=True):
    """What one host can run: tools (what the probe found), rdma, tcp (None or the reason) and collective
    ({library: collective_status}).

    Of the host's discovery ``facts`` it reads ``summary`` and ``host`` only; the one-click role passes no
    more (roles/commcheck/tasks/probe.yml), so a new read of the facts here needs a key added there."""
    found, error = probe_found(probe), probe_error(probe)
    collective = {}
    if plan["collective"]:
        for library in _libraries(plan):
            collective[library] = collective_status(plan, library, found, error, facts, binary_dir, mpirun,
                                                    require_accelerators)
    return {"tools": found, "rdma": rdma_reason(plan, found, error, facts), "tcp": tcp_reason(plan, found, error),
            "collective": collective}


def _skipped(kind, host, params, reason):
    return {"kind": kind, "host": host, "peer": None, "params": params, "metrics": {}, "verdict": "skipped",
            "cause": reason["cause"], "fix": reason["fix"], "evidence": []}


def _pair_hosts(kinds, hosts, reasons, params, check, alone=False):
    """The hosts of a pair check and the records of those that cannot take part (a host alone has no peer, but
    where ``alone``: the RDMA loopback pattern pairs a host's own ports)."""
    able, records = [], []
    for host in hosts:
        reason = reasons[host]
        if reason is None:
            able.append(host)
        else:
            records += [_skipped(kind, host, dict(params, reason=reason["code"]), reason) for kind in kinds]
    if len(able) == 1 and not alone:
        alone = {"code": "no_peer",
                 "cause": "no other host can run the %s check with %s (a pair needs two hosts)" % (check, able[0]),
                 "fix": NO_PEER_FIX}
        records += [_skipped(kind, able[0], dict(params, reason="no_peer"), alone) for kind in kinds]
        able = []
    return able, records


def _chosen_library(plan, hosts, statuses):
    """(library, the host whose binaries chose it): the one asked for, or (auto) the first host's that has one."""
    if plan["library"] != "auto":
        return plan["library"], None
    for host in hosts:
        collective = statuses[host]["collective"]
        for library in ("nccl", "hccl"):
            if (collective.get(library) or {}).get("has_binaries"):
                return library, host
    return None, None


def decide(plan, statuses, binary_dir="", rdma_alone=False):
    """Over [(host, host_status)] in play order: library, library_chosen_by, rdma_hosts, tcp_hosts,
    collective_hosts and the records of the checks that cannot run (``rdma_alone``: the RDMA check runs on one
    host, its loopback pattern)."""
    hosts = [host for host, _status in statuses]
    statuses = dict(statuses)
    records, rdma_hosts, tcp_hosts, collective_hosts = [], [], [], []
    if plan["rdma"]:
        rdma_hosts, skipped = _pair_hosts(["rdma_" + metric for metric in plan["rdma_metrics"]], hosts,
                                          dict((h, statuses[h]["rdma"]) for h in hosts),
                                          {"check": "rdma", "ops": plan["rdma_ops"]}, "RDMA", rdma_alone)
        records += skipped
    if plan["tcp"]:
        tcp_hosts, skipped = _pair_hosts(["tcp_bw"], hosts, dict((h, statuses[h]["tcp"]) for h in hosts),
                                         {"check": "tcp"}, "TCP")
        records += skipped
    library, chooser = None, None
    if plan["collective"]:
        library, chooser = _chosen_library(plan, hosts, statuses)
        ops = plan["collective_ops"]
        for host in hosts:
            if library is None:
                names = [[BINARIES[lib][op] for op in ops if op in BINARIES[lib]] for lib in ("nccl", "hccl")]
                reason = {"cause": "neither nccl-tests (%s) nor hccl_test (%s) was found on any host %s" % (
                    ", ".join(names[0]), ", ".join(names[1]), ("in " + binary_dir) if binary_dir else "on PATH"),
                    "fix": "install nccl-tests (built with MPI=1) or hccl_test at the same path on every host and "
                           "set commcheck_collective_binary_dir"}
                records.append(_skipped("collective", host, {"check": "collective", "library": None,
                                                             "operations": ops, "reason": "tool_missing"}, reason))
                continue
            reason = statuses[host]["collective"][library]["reason"]
            if reason is None:
                collective_hosts.append(host)
            else:
                records.append(_skipped("collective", host, {"check": "collective", "library": library,
                                                             "operations": ops, "reason": reason["code"]}, reason))
    return {"library": library, "library_chosen_by": chooser, "rdma_hosts": rdma_hosts, "tcp_hosts": tcp_hosts,
            "collective_hosts": collective_hosts, "records": records, "rdma_alone": bool(rdma_alone)}
