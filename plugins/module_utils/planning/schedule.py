# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pair scheduling: which hosts test against which, round by round (pure).

``commcheck_schedule(hosts, pattern)`` returns a list of rounds; a round is a
list of ``[server, client]`` pairs in which no host appears twice, so every
pair of a round can run at the same time.

- ``mesh``: every unordered pair exactly once (round-robin tournament, circle
  method): N-1 rounds for even N, N rounds for odd N. Each host is server
  about as often as client (the two counts differ by at most one).
- ``ring``: each host with its neighbour (h0-h1, h1-h2, ..., h(N-1)-h0): two
  rounds for even N, three for odd N, one for N = 2. Each host serves once
  and is client once.
- ``pairs``: an explicit list of ``[server, client]``, packed greedily into
  rounds.
- ``star``: one host (``center``, default the first) against every other:
  one pair per round, the center always the server.

Rails: a node with several NICs tests rail k against rail k of its peer in
the same round. ``round_plan`` expands a round into the sides each host runs
(one per rail and per test step), each rail and step on its own TCP port.
``select_rails`` picks a host's rails from its ``commcheck_rdma`` facts.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import re

from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.gid_text import mapped_ipv4

PATTERNS = ("mesh", "ring", "pairs", "star")


class ScheduleError(ValueError):
    """Bad input to the scheduler (reported as a clear error, never a traceback)."""


def _check_hosts(hosts):
    if hosts is None:
        return []
    if isinstance(hosts, (str, bytes)) or not isinstance(hosts, (list, tuple)):
        raise ScheduleError("hosts must be a list of host names, got %r" % (hosts,))
    seen = set()
    out = []
    for host in hosts:
        if not isinstance(host, str) or not host:
            raise ScheduleError("host names must be non-empty strings, got %r" % (host,))
        if host in seen:
            raise ScheduleError("host %r is listed twice" % (host,))
        seen.add(host)
        out.append(host)
    return out


def mesh_rounds(hosts):
    """Round-robin tournament by the circle method.

    With m odd (m = N for odd N; m = N-1 plus a fixed host for even N), round
    r pairs (r+k, r-k) mod m for k = 1..(m-1)/2; the leftover index r sits
    out (odd N) or meets the fixed host (even N). {a, b} meets in the round
    r = (a+b)/2 mod m, so every pair occurs exactly once. Orientation: x
    serves y when (y-x) mod m is in 1..(m-1)/2, which gives every index
    exactly (m-1)/2 server roles; the fixed host alternates by round.
    """
    hosts = _check_hosts(hosts)
    n = len(hosts)
    if n < 2:
        return []
    even = n % 2 == 0
    m = n - 1 if even else n
    half = (m - 1) // 2
    rounds = []
    for r in range(m):
        pairs = []
        if even:
            fixed, other = hosts[n - 1], hosts[r]
            pairs.append([fixed, other] if r % 2 == 0 else [other, fixed])
        for k in range(1, half + 1):
            a, b = (r + k) % m, (r - k) % m
            if 1 <= (b - a) % m <= half:
                pairs.append([hosts[a], hosts[b]])
            else:
                pairs.append([hosts[b], hosts[a]])
        rounds.append(pairs)
    return rounds


def ring_rounds(hosts):
    """Each host with its successor; even N in 2 rounds, odd N in 3."""
    hosts = _check_hosts(hosts)
    n = len(hosts)
    if n < 2:
        return []
    if n == 2:
        return [[[hosts[0], hosts[1]]]]
    rounds = [[], []] if n % 2 == 0 else [[], [], []]
    for i in range(n):
        pair = [hosts[i], hosts[(i + 1) % n]]
        if n % 2 == 1 and i == n - 1:
            rounds[2].append(pair)
        else:
            rounds[i % 2].append(pair)
    return rounds


def star_rounds(hosts, center=None):
    """The center against every other host, one pair per round."""
    hosts = _check_hosts(hosts)
    if not hosts:
        return []
    if center is None:
        center = hosts[0]
    if center not in hosts:
        raise ScheduleError("star center %r is not one of the hosts" % (center,))
    return [[[center, host]] for host in hosts if host != center]


def pack_pairs(pairs, hosts=None):
    """Greedy first-fit of explicit [server, client] pairs into rounds."""
    known = set(_check_hosts(hosts)) if hosts else None
    if pairs is None or isinstance(pairs, (str, bytes)) or not isinstance(pairs, (list, tuple)):
        raise ScheduleError("pattern 'pairs' needs pairs: a list of [server, client], got %r" % (pairs,))
    rounds = []
    busy = []
    seen = set()
    for pair in pairs:
        if isinstance(pair, dict):
            pair = [pair.get("server"), pair.get("client")]
        if not isinstance(pair, (list, tuple)) or len(pair) != 2 or \
                not all(isinstance(h, str) and h for h in pair):
            raise ScheduleError("each pair must be [server, client] host names, got %r" % (pair,))
        server, client = pair
        if server == client:
            raise ScheduleError("pair %r tests a host against itself" % (list(pair),))
        if known is not None:
            for host in pair:
                if host not in known:
                    raise ScheduleError("pair %r names %r, which is not one of the hosts" % (list(pair), host))
        key = (server, client)
        if key in seen:
            continue
        seen.add(key)
        for idx, used in enumerate(busy):
            if server not in used and client not in used:
                rounds[idx].append([server, client])
                used.update((server, client))
                break
        else:
            rounds.append([[server, client]])
            busy.append(set((server, client)))
    return rounds


def commcheck_schedule(hosts, pattern="mesh", pairs=None, center=None, rails=None):
    """Rounds of disjoint [server, client] pairs for the given pattern.

    With ``rails`` (a count, or a list of rail numbers) every pair becomes one
    ``[server, client, rail]`` entry per rail, in the same round: rail k of
    the server against rail k of the client.
    """
    if pattern not in PATTERNS:
        raise ScheduleError("pattern must be one of %s, got %r" % (", ".join(PATTERNS), pattern))
    if pattern == "mesh":
        rounds = mesh_rounds(hosts)
    elif pattern == "ring":
        rounds = ring_rounds(hosts)
    elif pattern == "star":
        rounds = star_rounds(hosts, center)
    else:
        rounds = pack_pairs(pairs, hosts)
    if rails is None:
        return rounds
    rail_ids = _rail_ids(rails)
    return [[[s, c, k] for s, c in rnd for k in rail_ids] for rnd in rounds]


def _rail_ids(rails):
    if isinstance(rails, bool):
        raise ScheduleError("rails must be a count or a list of rail numbers, got %r" % (rails,))
    if isinstance(rails, int):
        if rails < 1:
            raise ScheduleError("rails must be at least 1, got %d" % rails)
        return list(range(rails))
    if isinstance(rails, (list, tuple)) and rails:
        out = []
        for rail in rails:
            if isinstance(rail, bool) or not isinstance(rail, int) or rail < 0:
                raise ScheduleError("rail numbers must be integers >= 0, got %r" % (rail,))
            if rail not in out:
                out.append(rail)
        return out
    raise ScheduleError("rails must be a count or a list of rail numbers, got %r" % (rails,))


# --- rails -------------------------------------------------------------------

_IDENT = re.compile(r"^[A-Za-z0-9_.:-]+$")


def _natural_key(text):
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", str(text))]


def _is_active(state):
    text = str(state or "").upper()
    return "ACTIVE" in text and "DEFER" not in text


def _gid_ipv4(gid):
    """IPv4 address of an IPv4-mapped GID (::ffff:a.b.c.d), else None."""
    if isinstance(gid, dict):
        if gid.get("ipv4"):
            return gid["ipv4"]
        gid = gid.get("gid")
    return mapped_ipv4(gid)


def _port_address(port):
    """The IPv4 address of a RoCE port: the chosen GID's, else the port's own."""
    gids = port.get("gids") or []
    chosen = port.get("gid_index")
    if chosen is not None:
        for gid in gids:
            index = gid.get("index", gid.get("gid_index")) if isinstance(gid, dict) else None
            if index == chosen:
                found = _gid_ipv4(gid)
                if found:
                    return found
    for key in ("ipv4", "address"):
        value = port.get(key)
        if isinstance(value, list):
            value = value[0] if value else None
        if value:
            return str(value).split("/", 1)[0]
    for gid in gids:
        if isinstance(gid, dict) and "v2" not in str(gid.get("type", "v2")).lower():
            continue
        found = _gid_ipv4(gid)
        if found:
            return found
    return None


def _parse_device_spec(spec, default_port=1):
    """'mlx5_0' / 'mlx5_0:1' / {device, port, ...} -> dict; ``default_port`` where the spec names none."""
    if isinstance(spec, dict):
        out = dict(spec)
        if "device" not in out and "name" in out:
            out["device"] = out.pop("name")
        out.setdefault("port", out.get("ib_port", default_port))
        out.pop("ib_port", None)
    else:
        text = str(spec)
        if text.count(":") == 1 and text.rsplit(":", 1)[1].isdigit():
            name, port = text.rsplit(":", 1)
            out = {"device": name, "port": int(port)}
        else:
            out = {"device": text, "port": default_port}
    if not isinstance(out.get("device"), str) or not _IDENT.match(out["device"]):
        raise ScheduleError("device %r is not a valid RDMA device name" % (out.get("device"),))
    try:
        out["port"] = int(out["port"])
    except (TypeError, ValueError):
        raise ScheduleError("port of device %r must be an integer, got %r" % (out["device"], out["port"]))
    return out


def select_rails(rdma_facts=None, devices=None, address=None, port=1):
    """The rails (RDMA ports) a host tests, in rail order.

    ``devices`` (names, ``name:port`` or dicts; ``port`` where one names none) wins over the facts; without
    it, every ACTIVE port of ``rdma_facts`` (the ``commcheck_rdma`` fact), in
    natural device order. Each rail: ``device``, ``port``, ``gid_index``,
    ``rate_gbps``, ``link_layer``, ``netdev``, ``address`` (the port's IPv4
    address when the facts know it, else ``address``, the host's).
    """
    facts = rdma_facts or {}
    default_port = port
    known = {}
    models = {}
    for dev in facts.get("devices") or []:
        models[dev.get("name")] = dev.get("hca_type")
        for port in dev.get("ports") or []:
            known[(dev.get("name"), int(port.get("port", 1)))] = port
    rails = []
    if devices:
        for spec in _device_specs(devices):
            want = _parse_device_spec(spec, default_port)
            port = known.get((want["device"], want["port"]), {})
            rails.append(_rail(want["device"], want["port"], port, address, want, models.get(want["device"])))
    else:
        for dev in sorted(facts.get("devices") or [], key=lambda d: _natural_key(d.get("name"))):
            for port in sorted(dev.get("ports") or [], key=lambda p: int(p.get("port", 1))):
                if _is_active(port.get("state")):
                    rails.append(_rail(dev.get("name"), int(port.get("port", 1)), port, address, {},
                                       dev.get("hca_type")))
    for num, rail in enumerate(rails):
        rail["rail"] = num
    return rails


def _device_specs(devices):
    """A device list as given: a list, one dict, or text such as a survey's 'mlx5_0,mlx5_1:2'."""
    if isinstance(devices, str):
        return [item.strip() for item in devices.split(",") if item.strip()]
    if isinstance(devices, dict):
        return [devices]
    return list(devices)


def _rail(device, port_num, port, address, override, model=None):
    rail = {
        "device": device,
        "port": port_num,
        "gid_index": port.get("gid_index"),
        "rate_gbps": port.get("rate_gbps"),
        "link_layer": port.get("link_layer"),
        "netdev": port.get("netdev"),
        "address": _port_address(port) or address,
        "model": model,
    }
    for key in ("gid_index", "rate_gbps", "address", "netdev", "link_layer"):
        if override.get(key) is not None:
            rail[key] = override[key]
    return rail


def _tests(tests):
    """Test steps: dicts, or [op, metric] pairs (e.g. ops | product(metrics))."""
    if not tests:
        return [{}]
    if isinstance(tests, dict):
        return [tests]
    out = []
    for test in tests:
        if isinstance(test, dict):
            out.append(dict(test))
        elif isinstance(test, (list, tuple)) and len(test) == 2:
            out.append({"test": test[0], "metric": test[1]})
        else:
            raise ScheduleError("a test step is a dict or an [op, metric] pair, got %r" % (test,))
    return out


def round_plan(pairs, host_rails=None, tests=None, base_port=18515, port_stride=None, rails=None,
               round_index=0, step_offset=0, port_window=None):
    """Expand one round into the sides each host runs.

    ``pairs``: the round (list of [server, client]). ``host_rails``: host ->
    list of rails (``select_rails``); a host without an entry has one
    anonymous rail (e.g. the TCP baseline). ``tests``: the test steps run one
    after the other (e.g. ``[{test: write, metric: bw}, ...]`` or
    ``[[write, bw], ...]``). ``rails``: limit to these rail numbers. Rail k of
    the server is tested against rail k of the client.

    Steps are numbered from ``step_offset``; step s, rail k uses TCP port
    ``base_port + (s % port_window) * stride + k`` (``stride`` = the largest
    rail count, or ``port_stride``; no window: ports never repeat).

    Returns ``{"sides": {host: [side, ...]}, "jobs": [...], "skipped": [...]}``.
    A side: ``role``, ``peer``, ``rail``, ``step``, ``round``, ``tcp_port``, the
    test keys, and the host's own rail (``device``, ``ib_port``,
    ``gid_index``, ``expected_gbps``...) and for a client ``server`` (the
    server's address on that rail). A job: one per pair, rail and step.
    """
    host_rails = aligned_rails(host_rails or {})
    steps = _tests(tests)
    wanted = None if rails is None else set(int(r) for r in rails)
    stride = _stride(host_rails, port_stride)
    like = like_port_rates(host_rails)
    sides = {}
    jobs = []
    skipped = []
    for pair in pairs or []:
        server, client = pair[0], pair[1]
        s_rails = _by_number(host_rails.get(server) if server in host_rails else [{"rail": 0}])
        c_rails = _by_number(host_rails.get(client) if client in host_rails else [{"rail": 0}])
        common_rails = sorted(set(s_rails) & set(c_rails))
        if not s_rails or not c_rails:
            skipped.append({"server": server, "client": client, "round": round_index,
                            "reason": "no active RDMA port on %s" % (
                                " and ".join(h for h, r in ((server, s_rails), (client, c_rails)) if not r))})
            continue
        skipped += _missing_rails(server, client, s_rails, c_rails, wanted, round_index)
        for num, test in enumerate(steps):
            step = step_offset + num
            slot = step % port_window if port_window else step
            for k in common_rails:
                if wanted is not None and k not in wanted:
                    continue
                s_rail, c_rail = s_rails[k], c_rails[k]
                port = int(base_port) + slot * stride + k
                expected, downgraded = pair_rate(k, s_rail, c_rail, like)
                common, server_side, client_side = pair_sides(
                    test, {"rail": k, "step": step, "round": round_index, "tcp_port": port}, expected,
                    server, client, s_rail, c_rail)
                sides.setdefault(server, []).append(server_side)
                sides.setdefault(client, []).append(client_side)
                job = dict(common, server=server, client=client, server_device=s_rail.get("device"),
                           client_device=c_rail.get("device"), address=client_side["server"])
                if downgraded:
                    # controller-side only: the modules take a fixed set of side keys
                    job["downgraded_ports"] = [_named_port(d, server, client) for d in downgraded]
                jobs.append(job)
    return {"sides": sides, "jobs": jobs, "skipped": skipped}


def _like_key(rail_num, rail):
    return (rail_num, rail.get("model"), rail.get("link_layer"))


def like_port_rates(host_rails):
    """{(rail number, NIC model, link layer): the fastest rate such ports run at in the fleet}.

    Ports of one model on one rail should all negotiate the same rate. One below its like ports has fewer
    lanes or a lower speed (a cable, transceiver or switch port), and its pairs measure only what it reports."""
    out = {}
    for rails in (host_rails or {}).values():
        for num, rail in _by_number(rails).items():
            rate = rail.get("rate_gbps")
            if rate and rail.get("model"):
                key = _like_key(num, rail)
                out[key] = max(out.get(key, 0), rate)
    return out


def pair_rate(rail_num, s_rail, c_rail, like=None):
    """(expected Gb/s, [downgraded ports]) of a pair on one rail: the lower of its two ports' rates, each
    port counted at the rate its like ports run at (like_port_rates) when it negotiated less. A downgraded
    port: {side (0 server, 1 client), device, rate_gbps, like_gbps}."""
    rates, downgraded = [], []
    for side, rail in enumerate((s_rail, c_rail)):
        rate = rail.get("rate_gbps")
        if not rate:
            continue
        top = (like or {}).get(_like_key(rail_num, rail)) if rail.get("model") else None
        if top and top > rate:
            downgraded.append({"side": side, "device": rail.get("device"), "rate_gbps": rate, "like_gbps": top})
            rate = top
        rates.append(rate)
    return (min(rates) if rates else None), downgraded


def _by_number(rails):
    """{rail number: rail} of one host's rails (``rail``, else their order)."""
    out = {}
    for num, rail in enumerate(rails or []):
        out[int(rail.get("rail", num)) if rail.get("rail") is not None else num] = rail
    return out


def aligned_rails(host_rails):
    """host -> rails, each rail numbered by the fleet's rail of its device name (``rail``).

    A host's rails are its active ports in order; one NIC gone shifts every rail after it, and its second NIC
    would be tested against its peers' first. Where the fleet names its NICs alike (the device most hosts have
    at each position, a different one at each), a host whose every device is one of those names gets each
    rail's number from its name, so a missing NIC leaves a gap instead. Other hosts keep their order."""
    counts = {}
    for rails in host_rails.values():
        for num, rail in enumerate(rails or []):
            if rail.get("device"):
                slot = counts.setdefault(num, {})
                slot[rail["device"]] = slot.get(rail["device"], 0) + 1
    fleet = dict((num, max(sorted(slot), key=lambda name, slot=slot: slot[name])) for num, slot in counts.items())
    number_of = dict((name, num) for num, name in fleet.items())
    if len(number_of) != len(fleet):
        return host_rails
    out = {}
    for host, rails in host_rails.items():
        names = [rail.get("device") for rail in rails or []]
        if rails and all(name in number_of for name in names) and len(set(names)) == len(names):
            out[host] = [dict(rail, rail=number_of[rail["device"]]) for rail in rails]
        else:
            out[host] = rails
    return out


def _missing_rails(server, client, s_rails, c_rails, wanted, round_index):
    """Skipped items for the rails (by number) one side of a pair has and the other has not: each names the host
    without it and the device its peer has there."""
    out = []
    for k in sorted(set(s_rails) ^ set(c_rails)):
        if wanted is not None and k not in wanted:
            continue
        lacking, having, rails = (server, client, c_rails) if k not in s_rails else (client, server, s_rails)
        device = rails[k].get("device")
        out.append({"server": server, "client": client, "round": round_index, "rail": k,
                    "missing": {"host": lacking, "rail": k, "device": device, "peer": having},
                    "reason": "%s has no active RDMA port for rail %d (%s has %s there)" % (
                        lacking, k, having, device)})
    return out


def _named_port(port, server, client):
    named = dict((k, v) for k, v in port.items() if k != "side")
    named["host"] = server if port["side"] == 0 else client
    return named


def _stride(host_rails, port_stride):
    if port_stride is not None:
        return int(port_stride)
    return max([max(list(_by_number(v)) + [len(v or []) - 1]) + 1 for v in (host_rails or {}).values() if v] + [1])


def pair_sides(test, place, expected, server, client, s_rail, c_rail):
    """``(common, server side, client side)`` of one pair on one rail and step (``round_plan``'s, and the loopback
    pattern's, whose server and client are one host): ``common`` the test's keys, ``place`` (rail, step, round,
    tcp_port) and ``expected_gbps`` when a rate is expected; each side that with its role, its peer and its own
    rail's keys, the client's ``server`` the server rail's address (else the server's name)."""
    common = dict(test)
    common.update(place)
    if expected is not None:
        common["expected_gbps"] = expected
    server_side = dict(common, role="server", peer=client)
    client_side = dict(common, role="client", peer=server)
    _rail_keys(server_side, s_rail)
    _rail_keys(client_side, c_rail)
    client_side["server"] = s_rail.get("address") or server
    return common, server_side, client_side


def _rail_keys(side, rail):
    for src, dst in (("device", "device"), ("port", "ib_port"), ("gid_index", "gid_index")):
        if rail.get(src) is not None:
            side[dst] = rail[src]


MAX_PORT = 65535
PORT_WINDOW = 256


def plan_rounds(rounds, host_rails=None, tests=None, base_port=18515, port_stride=None, rails=None,
                merge=False, port_window=None):
    """``round_plan`` for every round of a schedule.

    ``merge=False``: one plan per round; every round uses the same ports
    (its steps start at 0): the caller runs round after round.

    ``merge=True``: a single plan holding every round, steps numbered through
    (round r, test i is step ``r * len(tests) + i``). Each host runs its steps
    in order and meets each peer when both get there, without a barrier
    between rounds; ports cycle through a window of ``port_window`` steps
    (default as many as fit below 65536, at most 256) so a straggler of an
    old step never reaches a newer step's server.
    """
    n_tests = len(_tests(tests))
    stride = _stride(host_rails, port_stride)
    slots = (MAX_PORT - int(base_port)) // stride + 1
    if slots < n_tests or int(base_port) < 1:
        raise ScheduleError("base_port %s leaves no room for %d test step(s) x %d rail(s) below %d" % (
            base_port, n_tests, stride, MAX_PORT + 1))
    if not merge:
        return [round_plan(r, host_rails, tests, base_port, stride, rails, round_index=num)
                for num, r in enumerate(rounds or [])]
    total = n_tests * len(rounds or [])
    window = min(int(port_window or PORT_WINDOW), slots, max(total, 1))
    merged = {"sides": {}, "jobs": [], "skipped": [], "steps": total}
    for num, rnd in enumerate(rounds or []):
        plan = round_plan(rnd, host_rails, tests, base_port, stride, rails, round_index=num,
                          step_offset=num * n_tests, port_window=window)
        for host, host_sides in plan["sides"].items():
            merged["sides"].setdefault(host, []).extend(host_sides)
        merged["jobs"].extend(plan["jobs"])
        merged["skipped"].extend(plan["skipped"])
    return [merged]
