# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A synthetic fabric for the verdict chain: what the perftest module would return for each side of each planned
pair and retest, with faults injected, run through the functions in the order the pair-check engine
(``plugin_utils/pair_engine.py``) calls them.

pair verdicts -> retest plan -> retest sides -> ``judgement.judge_retests`` (retest verdicts, classify, thresholds,
localize: the one chain both pair checks call), then
the published records (as the engine's ``judge`` gathers them, plus what the caller adds:
discovery, RoCE preflight, collective findings) -> culprits. No lab, no Ansible run: pure functions only.

Data flows from the client to the server in ``write`` / ``send`` tests and from the server to the client in
``read`` tests, so a fault of one direction (a NIC slow only in what it sends) shows where the faulty host sends.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import zlib

from ansible_collections.clusterops.commcheck.plugins.module_utils.planning.schedule import (
    commcheck_schedule, plan_rounds)
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import culprits as cp
from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery import topology as topo
from ansible_collections.clusterops.commcheck.plugins.module_utils.planning.families import family
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import judgement
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import retest_design as rd
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import retest_plan as rp
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import roce_consistency as rc
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import thresholds as th
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts.pair_analysis import analyze_pairs
from ansible_collections.clusterops.commcheck.plugins.plugin_utils.pair_engine import counter_deltas as engine_counter_deltas

RATE = 100.0
EFFICIENCY = 0.95     # what a healthy link delivers of its rate
BASE_LAT_US = 2.0
HEALTHY_P99_FACTOR = 1.4
# the stalls that make a tail move the average too, by this share of what they add to the p99
TAIL_SHARE_OF_AVG = 0.4
# the rdma_perf role's defaults
MIN_FRACTION = 0.9
FLEET_MIN_FRACTION = 0.5
RETEST_PER_HOST = 3
# what judges a retest side (judgement.judge_retests' pair_options): the defaults of the roles
PAIR_OPTIONS = {"min_fraction": MIN_FRACTION, "outlier_z": 3.5, "outlier_min_rel": 0.2, "expected_gbps": None}


def in_phase(phase, when):
    """Whether a fault of ``phase`` (None: always; ``retest``: every retest; a tuple: any of them) acts ``when``."""
    if phase is None:
        return True
    if isinstance(phase, (list, tuple, set)):
        return any(in_phase(p, when) for p in phase)
    return when == phase or (phase == "retest" and when.startswith("retest"))


def sends(op, server, client):
    """(sender, receiver) of a test's data: the client writes / sends to the server, reads from it."""
    return (server, client) if op == "read" else (client, server)


class Fabric(object):
    """Hosts, rails and the faults that change what their tests measure.

    ``bw_faults``: fn(sender, receiver, rail, op, phase) -> factor (1.0 healthy), ``lat_faults``: fn(a, b, rail,
    phase) -> extra microseconds; ``errors``: fn(server, client, rail, phase) -> None or {role: how that side
    ended in an error: cause, timed_out, spoke, code}; ``rates``: (host, rail) -> negotiated Gb/s where not RATE;
    ``models``: host -> its NICs' model where not MT4129 (a fleet of mixed NICs).
    ``phase``: ``first``, or ``retest<attempt>`` for the retests (a fault's ``phase`` ``retest``: all of them).

    ``known_rate``: discovery reads each port's link rate (False: no expectation, the fleet alone judges);
    ``repeats``: as-is retests of each failing pair; ``history``: earlier healthy runs in the history;
    ``retest_rounds``: designed retest passes after the first one at most (the roles' ``commcheck_retest_rounds``).
    """

    def __init__(self, n=4, rails=2, pattern="mesh", ops=("write",), metrics=("bw",), rate=RATE, noise=0.01,
                 known_rate=True, repeats=1, history=0, retest_rounds=2):
        self.hosts = ["h%d" % (i + 1) for i in range(n)]
        self.rails = rails
        self.pattern = pattern
        self.ops = list(ops)
        self.metrics = list(metrics)
        self.rate = rate
        self.noise = noise
        self.known_rate = known_rate
        self.repeats = repeats
        self.retest_rounds = retest_rounds
        self.history_runs = history
        self.run_index = 0
        self.models = {}
        self.bw_faults = []
        self.lat_faults = []
        self.tail_faults = []
        self.errors = []
        self.rates = {}
        self.missing = set()     # (host, rail) with no active port
        self.ports = {}          # (host, rail) -> what discovery reads differently on that port (netdev_mtu, gid_type)
        self.counters = {}       # (host, rail) -> {counter: how much it rose during the tests}
        self.topology = {}       # host -> {rail: {leaf, port}}: the inventory's commcheck_topology

    # --- faults -------------------------------------------------------------------

    def slow(self, factor, host=None, rail=None, peer=None, direction="both", phase=None, op=None):
        """``host`` (or the path ``host``-``peer``) delivers ``factor`` of its bandwidth, on ``rail`` (None:
        every rail), in what it sends (``tx``), receives (``rx``) or both, in ``phase`` (None: every phase), in
        tests of ``op`` (None: every op)."""
        def fault(sender, receiver, k, test, when):
            if (rail is not None and k != rail) or not in_phase(phase, when) or \
                    (op is not None and test != op):
                return 1.0
            if peer is not None:
                hit = set((sender, receiver)) == set((host, peer)) and (
                    direction == "both" or (direction == "tx" and sender == host)
                    or (direction == "rx" and receiver == host))
            elif host is None:
                hit = True
            else:
                hit = (direction in ("both", "tx") and sender == host) or \
                    (direction in ("both", "rx") and receiver == host)
            return factor if hit else 1.0
        self.bw_faults.append(fault)
        return self

    def slow_between(self, factor, group_a, group_b, rail, phase=None):
        """Every path between a host of ``group_a`` and one of ``group_b`` on ``rail`` (a leaf uplink)."""
        def fault(sender, receiver, k, _op, when):
            if k != rail or not in_phase(phase, when):
                return 1.0
            crosses = (sender in group_a and receiver in group_b) or (sender in group_b and receiver in group_a)
            return factor if crosses else 1.0
        self.bw_faults.append(fault)
        return self

    def slow_through(self, factor, group, rail, phase=None):
        """Every path of ``rail`` with a host of ``group`` at either end (a leaf switch those hosts share: their
        paths with each other cross it too)."""
        def fault(sender, receiver, k, _op, when):
            if k != rail or not in_phase(phase, when):
                return 1.0
            return factor if sender in group or receiver in group else 1.0
        self.bw_faults.append(fault)
        return self

    def racked(self, per_leaf, rails=None, key="rail"):
        """The inventory's topology: ``per_leaf`` hosts (in order) behind each leaf switch of each rail
        (``leaf<rail>-<n>``, port ``Eth1/<i>``), keyed by rail number or by device name (``key``: ``device``)."""
        for k in range(self.rails) if rails is None else rails:
            for i, host in enumerate(self.hosts):
                where = {"leaf": "leaf%d-%d" % (k, i // per_leaf + 1), "port": "Eth1/%d" % (i % per_leaf + 1)}
                self.topology.setdefault(host, {})[k if key == "rail" else "mlx5_%d" % k] = where
        return self

    def late(self, extra_us, host=None, rail=None, peer=None, phase=None):
        """``host`` (or the path ``host``-``peer``; None: every host, a rail plane) answers ``extra_us`` late."""
        def fault(a, b, k, when):
            if (rail is not None and k != rail) or not in_phase(phase, when):
                return 0.0
            if peer is not None:
                return extra_us if set((a, b)) == set((host, peer)) else 0.0
            return extra_us if host is None or host in (a, b) else 0.0
        self.lat_faults.append(fault)
        return self

    def tail(self, extra_us, host=None, rail=None, phase=None):
        """``host`` stalls now and then: its pairs' 99th percentile is ``extra_us`` later and their average
        :data:`TAIL_SHARE_OF_AVG` of that, their median (perftest's ``t_typical``) unchanged."""
        def fault(a, b, k, when):
            if (rail is not None and k != rail) or not in_phase(phase, when):
                return 0.0
            return extra_us if host is None or host in (a, b) else 0.0
        self.tail_faults.append(fault)
        return self

    def noisy(self, low, high, rail=None, phase=None):
        """Every path delivers a fraction between ``low`` and ``high`` of its bandwidth, drawn anew for each pair,
        direction and phase (a congested or badly tuned fabric: no component is worse than the others)."""
        def fault(sender, receiver, k, test, when):
            if (rail is not None and k != rail) or not in_phase(phase, when):
                return 1.0
            digest = zlib.crc32(repr(("noisy", sender, receiver, k, test, when)).encode("utf-8")) % 10000 / 10000.0
            return low + (high - low) * digest
        self.bw_faults.append(fault)
        return self

    def fails_between(self, group_a, group_b, rail=None, cause="connect_failed: No route to host", phase=None):
        """No connection crosses between a host of ``group_a`` and one of ``group_b`` on ``rail`` (None: every
        rail): a leaf switch, or its uplinks, gone; the server listens until its deadline, the client is refused."""
        def fault(server, client, k, when):
            crosses = (server in group_a and client in group_b) or (server in group_b and client in group_a)
            if not crosses or (rail is not None and k != rail) or not in_phase(phase, when):
                return None
            return {"server": {"cause": "no client connected", "timed_out": True, "code": "server_no_client"},
                    "client": {"cause": cause, "timed_out": True, "code": "connect_failed"}}
        self.errors.append(fault)
        return self

    def fails(self, host, rail=None, how="exited", cause="no RDMA device", phase=None, peer=None):
        """Every test of ``host`` on ``rail`` (None: every rail) ends in an error: its side exits with ``cause``
        (``exited``), or both sides wait until their deadline after connecting (``stalled``: the traffic never
        flows, as between RoCE v1 and v2 ends), or no connection reaches the host's address (``refused``: the
        server listens until its deadline, the client is refused all along, whichever side the host is); with ``peer``:
        only its tests with that peer."""
        def fault(server, client, k, when):
            if host not in (server, client) or (rail is not None and k != rail) or \
                    not in_phase(phase, when) or (peer is not None and peer not in (server, client)):
                return None
            if how == "exited":
                return {"server" if host == server else "client": {"cause": cause}}
            if how == "refused":
                return {"server": {"cause": "no client connected", "timed_out": True, "code": "server_no_client"},
                        "client": {"cause": cause, "timed_out": True, "code": "connect_failed"}}
            return dict((role, {"cause": cause, "timed_out": True}) for role in ("server", "client"))
        self.errors.append(fault)
        return self

    def stopped_server(self, host, peer, rail, phase=None, stuck=False):
        """``host``'s server for ``peer`` on ``rail`` is stopped before it listens: silent at its deadline, its
        client refused all along; ``stuck``: the runner found the process stopped at its deadline (a SIGSTOP, as
        the lab's ``HungSide`` sends), which it reports."""
        def fault(server, client, k, when):
            if (server, client) != (host, peer) or k != rail or not in_phase(phase, when):
                return None
            ended = {"cause": "no output before its deadline", "timed_out": True, "spoke": False}
            if stuck:
                ended["stuck"] = "T (stopped)"
            return {"server": ended,
                    "client": {"cause": "connect_failed: Connection refused", "code": "connect_failed"}}
        self.errors.append(fault)
        return self

    def late_for(self, host, peer, rail, phase="first"):
        """``host`` comes late to its pair with ``peer`` on ``rail`` (an earlier partner kept it waiting): the
        side that came in time gives up, a server listening in vain or a client refused."""
        def fault(server, client, k, when):
            if set((server, client)) != set((host, peer)) or k != rail or not in_phase(phase, when):
                return None
            return {"server": {"cause": "no client connected", "timed_out": True, "code": "server_no_client"},
                    "client": {"cause": "connect_failed: Connection refused", "timed_out": True,
                               "code": "connect_failed"}}
        self.errors.append(fault)
        return self

    def port_reads(self, host, rail, **values):
        """Discovery reads ``values`` on that port (``netdev_mtu``, ``gid_type``) where the others read the
        fleet's (9000, RoCE v2)."""
        self.ports.setdefault((host, rail), {}).update(values)
        return self

    def counter_rises(self, host, rail, **rises):
        self.counters.setdefault((host, rail), {}).update(rises)
        return self

    def negotiated(self, host, rail, gbps):
        self.rates[(host, rail)] = gbps
        return self

    def fitted(self, host, gbps, model="MT4123"):
        """``host`` has NICs of another ``model`` that run at ``gbps`` on every rail (a fleet of mixed NICs)."""
        self.models[host] = model
        for k in range(self.rails):
            self.rates[(host, k)] = gbps
        return self

    # --- what the modules return -------------------------------------------------------

    def host_rails(self):
        return dict((h, [{"rail": k, "device": "mlx5_%d" % k, "port": 1, "gid_index": 3,
                          "rate_gbps": self.rates.get((h, k), self.rate) if self.known_rate else None,
                          "address": "10.0.%d.%d" % (k, i + 10), "model": self.models.get(h, "MT4129")}
                         for k in range(self.rails) if (h, k) not in self.missing])
                    for i, h in enumerate(self.hosts))

    def rdma_facts(self, after=False):
        """host -> the ``commcheck_rdma`` fact: its ports, GIDs, MTUs and counters (``after``: with the rises)."""
        facts = {}
        for i, host in enumerate(self.hosts):
            devices = []
            for k in range(self.rails):
                if (host, k) in self.missing:
                    continue
                port = dict({"netdev_mtu": 9000, "gid_type": "RoCE v2"}, **self.ports.get((host, k), {}))
                rises = self.counters.get((host, k), {}) if after else {}
                counters = dict((name, rises.get(name, 0)) for name in ("link_downed", "symbol_error",
                                                                        "port_rcv_errors", "port_xmit_discards"))
                address = "10.0.%d.%d" % (k, i + 10)
                devices.append({"name": "mlx5_%d" % k, "hca_type": self.models.get(host, "MT4129"), "ports": [{
                    "port": 1, "state": "ACTIVE", "link_layer": "Ethernet",
                    "rate_gbps": self.rates.get((host, k), self.rate), "gid_index": 3,
                    "netdev": "eth%d" % k, "netdev_mtu": port["netdev_mtu"], "ipv4_cidr": [address + "/16"],
                    "gids": [{"index": 3, "gid": "0000:0000:0000:0000:0000:ffff:%s" % address,
                              "type": port["gid_type"], "ipv4": address}],
                    "counters": counters, "hw_counters": {}}]})
            facts[host] = {"devices": devices}
        return facts

    def _jitter(self, *key):
        digest = zlib.crc32(repr(key).encode("utf-8")) % 10000 / 10000.0
        return 1.0 + self.noise * (2 * digest - 1)

    def _keyed(self, *key):
        """The jitter key of this run (an earlier run of the history has its own)."""
        return key + ((self.run_index,) if self.run_index else ())

    def bandwidth(self, server, client, rail, op, phase, attempt=0):
        sender, receiver = sends(op, server, client)
        rate = min(self.rates.get((h, rail), self.rate) for h in (server, client))
        value = rate * EFFICIENCY * self._jitter(*self._keyed(server, client, rail, op, phase, attempt))
        for fault in self.bw_faults:
            value *= fault(sender, receiver, rail, op, phase)
        return round(value, 2)

    def latency(self, server, client, rail, phase, attempt=0):
        value = BASE_LAT_US * self._jitter(*self._keyed(server, client, rail, "lat", phase, attempt))
        for fault in self.lat_faults:
            value += fault(server, client, rail, phase)
        return round(value, 2)

    def latency_row(self, server, client, rail, phase):
        """The latency metrics of a client side: median ``lat_us``, ``lat_avg_us`` and ``lat_p99_us``; a healthy
        pair's average is a little above its median and its p99 :data:`HEALTHY_P99_FACTOR` x the median."""
        median = self.latency(server, client, rail, phase)
        stall = sum(fault(server, client, rail, phase) for fault in self.tail_faults)
        return {"lat_us": median, "lat_avg_us": round(median * 1.05 + TAIL_SHARE_OF_AVG * stall, 2),
                "lat_p99_us": round(median * HEALTHY_P99_FACTOR + stall, 2)}

    def sides(self, plans, phase):
        """The sides of every planned pair; a retest's phase is ``retest<attempt>``."""
        out = []
        for num, plan in enumerate(plans):
            attempts = dict(((job.get("round", num), job["server"], job["client"], job["rail"]),
                             job["retest"]["attempt"]) for job in plan["jobs"] if job.get("retest"))
            for host, host_sides in plan["sides"].items():
                for side in host_sides:
                    side = dict(side, host=host, round=side.get("round", num))
                    pair = (host, side["peer"]) if side["role"] == "server" else (side["peer"], host)
                    attempt = attempts.get((side["round"],) + pair + (side["rail"],))
                    out.append(self._side(side, phase if attempt is None else "%s%d" % (phase, attempt)))
        return out

    def _side(self, side, phase):
        host, peer = side["host"], side["peer"]
        server, client = (host, peer) if side["role"] == "server" else (peer, host)
        out = dict(side, verdict="pass", cmd=["ib_%s_%s" % (side.get("test"), side.get("metric"))], metrics={})
        for fault in self.errors:
            ended = (fault(server, client, side["rail"], phase) or {}).get(side["role"])
            if ended:
                out.update(verdict="error", cause=ended["cause"], fix="look at it", spoke=ended.get("spoke", True),
                           timed_out=ended.get("timed_out", False),
                           errors=[{"message": ended["cause"], "code": ended.get("code")}])
                if ended.get("stuck"):
                    out["stuck"] = ended["stuck"]
                return out
        if side["role"] == "client":
            if side.get("metric") == "lat":
                out["metrics"] = self.latency_row(server, client, side["rail"], phase)
            else:
                out["metrics"] = {"bw_gbps": self.bandwidth(server, client, side["rail"], side.get("test"), phase),
                                  "bytes": 65536}
        return out

    # --- the chain ---------------------------------------------------------------------------

    def run(self, extra_records=(), counter_deltas=(), retests=True):
        """The published records and the culprits of one run (see the module doc)."""
        host_rails = self.host_rails()
        tests = [{"test": op, "metric": metric} for op in self.ops for metric in self.metrics]
        plans = plan_rounds(commcheck_schedule(self.hosts, self.pattern), host_rails, tests)
        jobs = [dict(job, round=num) for num, plan in enumerate(plans) for job in plan["jobs"]]
        skipped = [s for plan in plans for s in plan["skipped"]]
        preflight = rc.preflight(jobs, self.rdma_facts(), host_rails)
        preflight["records"] = rc.finding_records(preflight["findings"])
        before, after = self.rdma_facts(), self.rdma_facts(after=True)
        counters = [engine_counter_deltas(family("rdma"), h, before[h], after[h]) for h in self.hosts]
        counter_deltas = list(counter_deltas) + [d for c in counters for d in c["deltas"]]
        first = analyze_pairs(self.sides(plans, "first"), jobs=jobs, family="rdma", min_fraction=MIN_FRACTION,
                              skipped=skipped, fleet_min_fraction=FLEET_MIN_FRACTION)
        plan = rp.plan_retests(first["records"], host_rails=host_rails, repeats=self.repeats if retests else 0,
                               round_offset=1000, per_host=RETEST_PER_HOST)
        plan, retest_sides = self.designed_passes(first["records"], plan, host_rails)
        judged = judgement.judge_retests(
            first["records"], "rdma", retest_sides=retest_sides, plan=plan,
            pair_options=PAIR_OPTIONS, bad_verdicts=["fail"], fleet_min_fraction=FLEET_MIN_FRACTION,
            thresholds={"history": self.history(), "efficiency": MIN_FRACTION,
                        "fleet_min_fraction": FLEET_MIN_FRACTION},
            counter_deltas=list(counter_deltas), first_findings=first["findings"],
            topology=topo.check_hosts(self.topology or None))
        published = judged["records"] + judged["findings"] + judged["other_findings"] + preflight["records"] + \
            [r for c in counters for r in c["records"]] + list(extra_records) + judged["summary_records"]
        self.first, self.plan, self.judged = first, plan, judged
        self.published = published
        self.culprits = cp.culprits(published)
        return self.culprits

    def designed_passes(self, records, plan, host_rails):
        """(the plan of every retest pass, their sides): after the first retest pass, up to ``retest_rounds``
        designed passes (``retest_design.next_pass``) while the evidence so far leaves hosts unresolved, as the
        roles' retest loop runs them."""
        sides = self.sides(plan["rounds"], "retest")
        plan = dict(plan, passes=[plan["summary"]])
        for number in range(2, 2 + (self.retest_rounds if plan["rounds"] else 0)):
            evidence = list(records) + judgement.judged_retests(records, "rdma", sides, plan["rounds"], PAIR_OPTIONS,
                                                                FLEET_MIN_FRACTION)
            more = rd.next_pass(evidence, number, host_rails, repeats=max(1, self.repeats), bad_verdicts=("fail",),
                                round_offset=1000 * number)
            if not more["rounds"]:
                break
            sides += self.sides(more["rounds"], "retest")
            plan = dict(plan, rounds=plan["rounds"] + more["rounds"], retests=plan["retests"] + more["retests"],
                        skipped=plan["skipped"] + more["skipped"], passes=plan["passes"] + [more["summary"]])
        return plan, sides

    def history(self):
        """The pair records of ``history_runs`` earlier runs of this fabric without its faults, as the history
        lookup returns them."""
        out = []
        for num in range(1, self.history_runs + 1):
            past = Fabric(len(self.hosts), self.rails, self.pattern, self.ops, self.metrics, self.rate, self.noise,
                          self.known_rate)
            past.models, past.rates, past.missing, past.run_index = self.models, self.rates, self.missing, num
            host_rails = past.host_rails()
            tests = [{"test": op, "metric": metric} for op in self.ops for metric in self.metrics]
            plans = plan_rounds(commcheck_schedule(self.hosts, self.pattern), host_rails, tests)
            jobs = [dict(job, round=k) for k, plan in enumerate(plans) for job in plan["jobs"]]
            first = analyze_pairs(past.sides(plans, "first"), jobs=jobs, family="rdma", min_fraction=MIN_FRACTION)
            out += [dict(rec, run_id="run-%d" % num, time="2026-11-%02dT00:00:00Z" % num)
                    for rec in first["records"] if rec["verdict"] == "pass"]
        return out

    def tcp_records(self, rail=0):
        """What the tcp_perf role publishes: iperf3 between the hosts' addresses on ``rail`` (one path per pair,
        no expected rate), judged against the fleet, retested and localized (``roles/tcp_perf``)."""
        tcp_rails = dict((h, [{"rail": 0, "address": "10.0.%d.%d" % (rail, i + 10)}])
                         for i, h in enumerate(self.hosts))
        plans = plan_rounds(commcheck_schedule(self.hosts, "mesh"), tcp_rails, None, base_port=5201)
        jobs = [dict(job, round=num) for num, plan in enumerate(plans) for job in plan["jobs"]]
        first = analyze_pairs(self.tcp_sides(plans, "first", rail), jobs=jobs, family="tcp", min_fraction=MIN_FRACTION)
        records = th.evaluate(first["records"], history=[], efficiency=MIN_FRACTION,
                              fleet_min_fraction=FLEET_MIN_FRACTION, set_verdicts=True)["records"]
        plan = rp.plan_retests(records, host_rails=tcp_rails, repeats=1, round_offset=1000,
                               per_host=RETEST_PER_HOST, side_tests=False, base_port=5301)
        fleet = next((r["metrics"]["fleet_median"] for r in first["records"] if "fleet_median" in r["metrics"]),
                     None)
        judged = judgement.judge_retests(records, "tcp", retest_sides=self.tcp_sides(plan["rounds"], "retest", rail),
                                         plan=plan, pair_options=dict(PAIR_OPTIONS, min_fraction=FLEET_MIN_FRACTION,
                                                                      expected_gbps=fleet),
                                         bad_verdicts=["fail"])
        published = judged["records"] + judged["findings"]
        if not judged["localized"]["components"]:
            published += first["findings"]
        return published + judged["summary_records"]

    def tcp_sides(self, plans, phase, rail):
        out = []
        for num, plan in enumerate(plans):
            for host, host_sides in plan["sides"].items():
                for side in host_sides:
                    side = dict(side, host=host, round=side.get("round", num), verdict="pass", metrics={},
                                cmd=["iperf3", "-J"])
                    if side["role"] == "client":
                        server, client = side["peer"], host
                        side["metrics"] = {"bw_gbps": self.bandwidth(server, client, rail, "tcp", phase)}
                    out.append(side)
        return out

    def named(self, **kwargs):
        return [cp.describe(c) for c in self.run(**kwargs)]
