# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ``loopback`` pair pattern (pure): each host's RDMA ports against each other, on the host itself.

A host's rails (``schedule.select_rails``, numbered as the fleet numbers them, ``aligned_rails``) form a ring: rail
i against rail i+1 (mod n; two rails are one pair), and the ports of one dual-port NIC against each other where the
ring does not already pair them. Server and client run on the same host, each on its own device and port, never one
device against itself. A round is a matching of each host's rails (a rail in one test at a time): 1 round for two
rails, 2 for an even count, 3 for an odd one, plus a round for a dual-port NIC the ring missed. Every host runs its
rounds at the same time, so a one-host inventory has an RDMA check and a larger one a host-internal test that
localization uses (``verdicts/localization_loopback.py``): a host whose NICs pass with each other is not the host.

A round entry is ``[host, host, server rail, client rail]``; :func:`loopback_plans` expands the rounds into the
same ``{sides, jobs, skipped}`` plans as ``schedule.plan_rounds``. A job and both its sides carry the server's rail
as ``rail`` (how the two sides of a pair meet) and the job ``loopback: true`` and ``rails`` [server's, client's].
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.clusterops.commcheck.plugins.module_utils.planning import schedule as sch

PATTERN = "loopback"
ONE_PORT = "%s has %d active RDMA port(s) to test: a loopback needs two (another NIC, or the second port of one)"


def _host_rails(rails, wanted=None):
    """{rail number: rail} of one host (its ``rail``, else its place), only ``wanted`` numbers when given."""
    out = {}
    for num, rail in enumerate(rails or []):
        num = int(rail["rail"]) if rail.get("rail") is not None else num
        if wanted is None or num in wanted:
            out[num] = rail
    return out


def _steps(tests):
    """Test steps as ``schedule.round_plan`` takes them: dicts or [op, metric] pairs; one empty step without any."""
    if not tests:
        return [{}]
    out = []
    for test in [tests] if isinstance(tests, dict) else tests:
        if isinstance(test, dict):
            out.append(dict(test))
        elif isinstance(test, (list, tuple)) and len(test) == 2:
            out.append({"test": test[0], "metric": test[1]})
        else:
            raise sch.ScheduleError("a test step is a dict or an [op, metric] pair, got %r" % (test,))
    return out


def _checked(hosts):
    """The host names, refused unless a list of distinct non-empty names (as every pattern refuses them)."""
    if isinstance(hosts, (str, bytes)) or not isinstance(hosts, (list, tuple, type(None))):
        raise sch.ScheduleError("hosts must be a list of host names, got %r" % (hosts,))
    hosts = list(hosts or [])
    if not all(isinstance(host, str) and host for host in hosts) or len(set(hosts)) != len(hosts):
        raise sch.ScheduleError("host names must be distinct non-empty strings, got %r" % (hosts,))
    return hosts


def _stride(host_rails):
    """Ports a step takes: the highest rail number of any host, plus one."""
    return max([num + 1 for rails in host_rails.values() for num in _host_rails(rails)] + [1])


def rail_rounds(rails):
    """Rounds of ``[server rail, client rail]`` over one host's ``{rail number: rail}``: the ring of rail numbers,
    then each dual-port NIC's two ports where the ring did not pair them."""
    nums = sorted(rails)
    if len(nums) < 2:
        return []
    ring = sch.ring_rounds([str(num) for num in nums])
    rounds = [[[int(a), int(b)] for a, b in rnd] for rnd in ring]
    paired = set(frozenset(pair) for rnd in rounds for pair in rnd)
    by_device = {}
    for num in nums:
        by_device.setdefault(rails[num].get("device"), []).append(num)
    extra = []
    for device, ports in sorted(by_device.items(), key=lambda item: str(item[0])):
        for i in range(len(ports) - 1):
            pair = [ports[i], ports[i + 1]]
            if device is not None and frozenset(pair) not in paired:
                paired.add(frozenset(pair))
                extra.append(pair)
    for pair in extra:
        for rnd in rounds + [[]]:
            if not set(pair) & set(n for p in rnd for n in p):
                if not rnd:
                    rounds.append(rnd)
                rnd.append(pair)
                break
    return rounds


def loopback_rounds(hosts, host_rails, rail_numbers=None):
    """``(rounds, skipped)``: round r holds every host's round r of :func:`rail_rounds` as ``[host, host, server
    rail, client rail]``; ``skipped``: a host with fewer than two rails to test, named."""
    host_rails = sch.aligned_rails(dict(host_rails or {}))
    wanted = None if not rail_numbers else set(int(r) for r in rail_numbers)
    rounds, skipped = [], []
    for host in _checked(hosts):
        rails = _host_rails(host_rails.get(host), wanted)
        own = rail_rounds(rails)
        if not own:
            skipped.append({"server": host, "client": host, "round": 0, "loopback": True,
                            "reason": ONE_PORT % (host, len(rails))})
        for num, rnd in enumerate(own):
            while len(rounds) <= num:
                rounds.append([])
            rounds[num] += [[host, host, s, c] for s, c in rnd]
    return rounds, skipped


def round_plan(entries, host_rails, tests=None, base_port=18515, stride=1, round_index=0, step_offset=0,
               port_window=None):
    """One round of loopback entries as ``schedule.round_plan`` shapes a round: step s of the pair whose server is
    rail k listens on ``base_port + (s % port_window) * stride + k`` (a rail serves once a round, so a host's ports
    never clash); the client connects to the server rail's address."""
    host_rails = sch.aligned_rails(dict(host_rails or {}))
    like = sch.like_port_rates(host_rails)
    steps = _steps(tests)
    sides, jobs = {}, []
    for host, _same, s_num, c_num in entries or []:
        rails = _host_rails(host_rails.get(host))
        s_rail, c_rail = rails[s_num], rails[c_num]
        if (s_rail.get("device"), s_rail.get("port")) == (c_rail.get("device"), c_rail.get("port")):
            raise sch.ScheduleError("loopback pair of %s: rails %s and %s are one port (%s port %s)" % (
                host, s_num, c_num, s_rail.get("device"), s_rail.get("port")))
        for num, test in enumerate(steps):
            step = step_offset + num
            slot = step % port_window if port_window else step
            expected, downgraded = sch.pair_rate(s_num, s_rail, c_rail, like)
            common, server_side, client_side = sch.pair_sides(
                test, {"rail": s_num, "step": step, "round": round_index,
                       "tcp_port": int(base_port) + slot * stride + s_num}, expected, host, host, s_rail, c_rail)
            sides.setdefault(host, []).extend([server_side, client_side])
            job = dict(common, server=host, client=host, server_device=s_rail.get("device"),
                       client_device=c_rail.get("device"), address=client_side["server"], loopback=True,
                       rails=[s_num, c_num])
            if downgraded:
                job["downgraded_ports"] = [dict((k, v) for k, v in d.items() if k != "side") for d in downgraded]
                for item in job["downgraded_ports"]:
                    item["host"] = host
            jobs.append(job)
    return {"sides": sides, "jobs": jobs, "skipped": []}


def loopback_plans(hosts, host_rails, tests=None, base_port=18515, rail_numbers=None, merge=False,
                   port_window=None, round_offset=0, step_offset=0):
    """The plans of the ``loopback`` pattern, as ``schedule.plan_rounds`` returns them (one per round, or one merged
    plan with its ``steps``), the hosts that have nothing to loop back to in the first plan's ``skipped``. Rounds
    are numbered from ``round_offset``, a merged plan's steps from ``step_offset`` (after another pattern's)."""
    rounds, skipped = loopback_rounds(hosts, host_rails, rail_numbers)
    stride = _stride(sch.aligned_rails(dict(host_rails or {})))
    n_tests = len(_steps(tests))
    slots = (sch.MAX_PORT - int(base_port)) // stride + 1
    if slots < n_tests or int(base_port) < 1:
        raise sch.ScheduleError("base_port %s leaves no room for %d loopback test step(s) x %d rail(s) below %d" % (
            base_port, n_tests, stride, sch.MAX_PORT + 1))
    if not merge:
        plans = [round_plan(rnd, host_rails, tests, base_port, stride, round_offset + num)
                 for num, rnd in enumerate(rounds)]
        plans = plans or [{"sides": {}, "jobs": [], "skipped": []}]
        plans[0]["skipped"] = skipped
        return plans
    total = n_tests * len(rounds)
    window = min(int(port_window or sch.PORT_WINDOW), slots, max(total, 1))
    merged = {"sides": {}, "jobs": [], "skipped": skipped, "steps": total}
    for num, rnd in enumerate(rounds):
        plan = round_plan(rnd, host_rails, tests, base_port, stride, round_offset + num,
                          step_offset + num * n_tests, window)
        for host, host_sides in plan["sides"].items():
            merged["sides"].setdefault(host, []).extend(host_sides)
        merged["jobs"].extend(plan["jobs"])
    return [merged]


def with_loopback(plans, hosts, host_rails, tests=None, rail_numbers=None):
    """Another pattern's ``plans`` (``schedule.plan_rounds``'s, merged or not) followed by the loopback pairs of
    ``hosts``: after its rounds (a merged plan: after its steps, in it), on ports above its highest, so a late side
    of the pattern never meets a loopback's. Localization then reads both (``verdicts/localization_loopback.py``)."""
    plans = list(plans or [])
    ports = [int(job["tcp_port"]) for plan in plans for job in plan.get("jobs") or [] if job.get("tcp_port")]
    if not ports:
        return plans
    merge = len(plans) == 1 and "steps" in plans[0]
    rounds = max([int(job.get("round") or 0) for plan in plans for job in plan.get("jobs") or []] + [-1]) + 1
    extra = loopback_plans(hosts, host_rails, tests, max(ports) + 1, rail_numbers, merge,
                           round_offset=rounds, step_offset=plans[0]["steps"] if merge else 0)
    if not merge:
        return plans + [plan for plan in extra if plan["jobs"] or plan["skipped"]]
    merged = dict(plans[0], sides=dict((h, list(s)) for h, s in plans[0]["sides"].items()))
    for host, host_sides in extra[0]["sides"].items():
        merged["sides"].setdefault(host, []).extend(host_sides)
    merged.update(jobs=list(merged["jobs"]) + extra[0]["jobs"], skipped=list(merged["skipped"]) + extra[0]["skipped"],
                  steps=merged["steps"] + extra[0]["steps"])
    return [merged]


def is_loopback(record):
    """Whether a pair record (or job) is a loopback: one host's two ports."""
    return isinstance(record, dict) and (bool((record.get("params") or {}).get("loopback")) or bool(
        record.get("loopback")) or (record.get("peer") is not None and record.get("peer") == record.get("host")))
