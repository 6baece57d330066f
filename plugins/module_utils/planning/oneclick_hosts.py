# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""How each host takes part in the one-click check, and whether a check runs (pure functions, no I/O).

- host_part: one host's rails (the RDMA ports the RDMA check tests), its TCP rail, how mpirun reaches it, its
  machine identity and the devices asked for that it lacks;
- fleet_parts: the same for every host, as the checks' run.yml files take them, and why the run must stop
  before any test (a device asked for that a host lacks, two names of one machine, a shared rail address);
- check_runs: whether a check of the plan runs, over the hosts still in the play.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery.inventory_checks import discovery_problems
from ansible_collections.clusterops.commcheck.plugins.module_utils.planning.schedule import select_rails

# the fewest hosts each check runs on: a pair check needs a peer
MIN_HOSTS = {"rdma": 2, "tcp": 2, "collective": 1}


def port_names(facts):
    """'device:port' of every RDMA port discovery found on a host."""
    return ["%s:%s" % (device.get("name"), port.get("port"))
            for device in (facts or {}).get("devices") or [] for port in device.get("ports") or []]


def missing_devices(host, facts, devices, rails):
    """Why the devices asked for (``devices``) are not all on ``host`` (None when they are). A host without any
    RDMA port is not judged here: the tool probe skips it with its reason."""
    ports = port_names(facts) if devices else []
    if not ports:
        return None
    missing = ["%s:%s" % (rail["device"], rail["port"]) for rail in rails
               if "%s:%s" % (rail["device"], rail["port"]) not in ports]
    if not missing:
        return None
    return "%s not found on %s (its RDMA ports: %s)" % (", ".join(missing), host, ", ".join(ports))


def host_part(host, rdma, facts, devices, address, port, tcp_address):
    """One host's share of the run. ``rdma``: whether the run tests RDMA (else no rails, and its devices and
    facts are not read); ``facts``: its ``commcheck_rdma`` fact; ``devices``/``port``: its commcheck_devices and
    commcheck_ib_port; ``address``/``tcp_address``: its RDMA and TCP addresses."""
    facts = (facts or {}) if rdma else {}
    devices = devices if rdma else []
    rails = select_rails(facts, devices, address, port) if rdma else []
    return {"rails": rails, "tcp_rails": [{"rail": 0, "address": tcp_address}],
            "entry": {"name": host, "address": address},
            "identity": (facts.get("host") or {}).get("identity"),
            "unknown_devices": missing_devices(host, facts, devices, rails)}


def fleet_parts(parts, rdma):
    """{rails, tcp_rails, entries, identities: {host: ...}, unknown_devices: [...], stop: None or why the run
    stops before any test} over ``parts`` ([(host, host_part)] in play order)."""
    out = {"rails": {}, "tcp_rails": {}, "entries": {}, "identities": {}, "unknown_devices": []}
    for host, part in parts:
        out["rails"][host] = part["rails"]
        out["tcp_rails"][host] = part["tcp_rails"]
        out["entries"][host] = part["entry"]
        out["identities"][host] = part["identity"]
        if part["unknown_devices"]:
            out["unknown_devices"].append(part["unknown_devices"])
    out["stop"] = stop_reason(out, rdma)
    return out


def stop_reason(fleet, rdma):
    """Why nothing may run (None when all is well): with the RDMA check, a device asked for that its host lacks
    (first), else two inventory names of one machine or rails of two hosts with one address."""
    if not rdma:
        return None
    if fleet["unknown_devices"]:
        return "commcheck_devices: %s; nothing was run" % "; ".join(fleet["unknown_devices"])
    problems = discovery_problems(fleet["identities"], fleet["rails"])
    if problems:
        return "%s; nothing was run" % "; ".join(problems)
    return None


def check_hosts(decision, kind, play_hosts):
    """The hosts the decision chose for check ``kind`` (rdma, tcp, collective) that are still in the play."""
    chosen = (decision or {}).get(kind + "_hosts") or []
    return [host for host in chosen if host in play_hosts]


def check_runs(plan, decision, kind, play_hosts):
    """Whether check ``kind`` runs: planned, enough of its hosts still in the play (one for the RDMA loopback
    pattern, the decision's ``rdma_alone``), and for the collective a library chosen."""
    if not plan.get(kind):
        return False
    if kind == "collective" and (decision or {}).get("library") is None:
        return False
    least = 1 if kind == "rdma" and (decision or {}).get("rdma_alone") else MIN_HOSTS[kind]
    return len(check_hosts(decision, kind, play_hosts)) >= least


# the arguments of the check_plan action (its doc-only module validates the same)
CHECK_PLAN_SPEC = dict(
    step=dict(type="str", required=True, choices=["plan", "hosts", "decide", "runs", "lost"]),
    check=dict(type="str", choices=["rdma", "tcp", "collective"]),
    probe=dict(type="dict"),
)
