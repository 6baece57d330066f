#!/usr/bin/env python
# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""THE LAB (tests only): N network-namespace "hosts" with their own sshd.

Each lab host is a network namespace with one veth per rail (named like a
real RoCE netdev, ``ens1f<k>np<k>``); rail k of every host hangs on the
lab's Linux bridge for rail k, which has an address in the root namespace so
the controller reaches the hosts. Each host runs its own ``/usr/sbin/sshd``
bound to its rail-0 address (in its own UTS namespace, hostname ``h<i>``),
so ``ansible-playbook`` reaches it over real SSH. Every lab link is shaped
with ``tc tbf`` to a nominal rate; ``slow`` shapes one host lower, ``heal``
puts the nominal rate back.

Everything a lab needs lives in ``.build/lab/<NAME>/`` (ssh keys, sshd and
ssh configs, ``inventory.yml``, ``ansible.cfg``, per-host emulated sysfs
trees, ``bin/`` with the perftest emulator under the real tools' names,
``state.json``). Several labs (different names) run side by side: namespace,
interface and subnet names are derived from the name, and clashes are refused.

CLI (see tests/lab/README.md)::

    lab.py up --name NAME --hosts N [--rails R] [--subnet-base 10.77] [--rate 500mbit]
    lab.py down --name NAME          lab.py status [--name NAME]
    lab.py exec --name NAME --host h2 -- argv...
    lab.py slow --name NAME --host h2 [--rail 1] --rate 200mbit [--direction both|tx|rx]
    lab.py heal --name NAME [--host h2]
    lab.py pids --name NAME [--all]
    lab.py up ... --tiers 2 --per-leaf K [--link-layer InfiniBand]  (leaf bridges under a spine: two_tier.py)
    lab.py slow-uplink --name NAME --rail 1 --leaf 2 --rate 100mbit [--direction both|up|down]
    lab.py slow-leaf --name NAME --rail 1 --leaf 2 --rate 100mbit
    lab.py oversubscribe --name NAME --ratio 2   (every uplink: its leaf's host rate / 2; heal keeps it)

The same operations are importable: ``up()``, ``down()``, ``Lab.load()``.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import argparse
import contextlib
import fcntl
import hashlib
import ipaddress
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import two_tier  # noqa: E402  pylint: disable=wrong-import-position
REPO = os.path.dirname(os.path.dirname(HERE))
LAB_BASE = os.path.join(REPO, ".build", "lab")
EMULATORS = os.path.join(HERE, "emulators")
VENV_PYTHON = os.path.join(REPO, ".venv", "bin", "python")
SSHD = "/usr/sbin/sshd"
SFTP_SERVER = "/usr/lib/openssh/sftp-server"
SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
PERFTEST_TOOLS = ("ib_write_bw", "ib_read_bw", "ib_send_bw", "ib_atomic_bw",
                  "ib_write_lat", "ib_read_lat", "ib_send_lat", "ib_atomic_lat")
# nccl-tests (<op>_perf) and hccl_test (<op>_test) binaries, emulated over MPI.
NCCL_TEST_OPS = ("all_reduce", "all_gather", "broadcast", "reduce_scatter", "reduce", "alltoall", "sendrecv",
                 "gather", "scatter")
HCCL_TEST_OPS = ("all_reduce", "all_gather", "broadcast", "reduce_scatter", "reduce", "alltoall", "alltoallv")
NAME_RE = re.compile(r"^[a-z][a-z0-9]{0,11}$")
RATE_RE = re.compile(r"^(\d+(?:\.\d+)?)(bit|kbit|mbit|gbit)$")
RATE_FACTOR = {"bit": 1, "kbit": 10 ** 3, "mbit": 10 ** 6, "gbit": 10 ** 9}
DEFAULT_RATE = "500mbit"
ETHERNET = "Ethernet"
LINK_LAYERS = (ETHERNET, "InfiniBand")
EMULATOR_MAX_BYTES = 256 * 2 ** 20   # per message size and QP (keeps -a bounded)
# The kernel adds a netdev's GIDs in the order its addresses were added, after the link-local pair at
# 0/1: each address is a RoCE v1 GID and a RoCE v2 GID. Host i's rail k has (i - 1 + k) % GID_SPREAD IPv6
# addresses added before its IPv4 one, so the rail address's RoCE v2 GID is at 3, 5, 7 or 9 and differs
# between hosts and between one host's rails: a side that took its peer's (or another rail's) GID index
# picks an IPv6 or an unused GID and fails, as it would on real NICs.
GID_SPREAD = 4
HOST_OFFSET = 10        # host i has address <subnet>.<10 + i>
MAX_HOSTS = 200
MAX_RAILS = 8
SSH_PORT = 22
INFRA_COMMANDS = ("sshd", "sshd-session", "sshd-auth")


class LabError(Exception):
    """A lab operation that cannot be done; the message says why."""


# --- small helpers -------------------------------------------------------------

def run(argv, check=True, capture=True, env=None, timeout=60):
    """Run an argv list (never a shell string); raise LabError on failure."""
    proc = subprocess.run(argv, stdout=subprocess.PIPE if capture else None,
                          stderr=subprocess.PIPE if capture else None,
                          env=env, timeout=timeout, check=False,
                          universal_newlines=True)
    if check and proc.returncode != 0:
        raise LabError("command failed (rc=%s): %s\n%s" % (
            proc.returncode, " ".join(argv), (proc.stderr or "").strip()))
    return proc


def parse_rate(text):
    """'200mbit' -> 200000000 (bit/s). Only tc's plain bit units are accepted."""
    match = RATE_RE.match(str(text).strip().lower())
    if not match:
        raise LabError("rate %r is not like 1gbit, 200mbit, 500kbit" % (text,))
    value = float(match.group(1)) * RATE_FACTOR[match.group(2)]
    if value < 8000:
        raise LabError("rate %r is too low (at least 8kbit)" % (text,))
    return int(value)


def rate_gbps(text):
    return parse_rate(text) / 1e9


def check_name(name):
    if not isinstance(name, str) or not NAME_RE.match(name):
        raise LabError("lab name %r: use 1-12 characters a-z 0-9, starting with a letter" % (name,))
    return name


def name_hash(name):
    return hashlib.sha1(name.encode("utf-8")).hexdigest()


def lab_dir(name):
    return os.path.join(LAB_BASE, check_name(name))


def is_root():
    return hasattr(os, "geteuid") and os.geteuid() == 0


def unavailable():
    """Why a lab cannot run on this machine (None when it can): for test skips."""
    if not is_root():
        return "the lab needs root (network namespaces, veth, bridges)"
    for tool in ("ip", "tc", "nsenter", "unshare", "ssh", "ssh-keygen"):
        if not shutil.which(tool):
            return "the lab needs %s on PATH" % tool
    if not os.path.exists(SSHD):
        return "the lab needs %s (openssh-server)" % SSHD
    probe = "cc-probe-%d" % os.getpid()
    proc = run(["ip", "netns", "add", probe], check=False)
    if proc.returncode != 0:
        return "ip netns does not work here: %s" % (proc.stderr or "").strip()
    run(["ip", "netns", "del", probe], check=False)
    return None


def netns_list():
    proc = run(["ip", "netns", "list"], check=False)
    names = []
    for line in (proc.stdout or "").splitlines():
        if line.strip():
            names.append(line.split()[0])
    return names


def link_names():
    """Interface names in the root namespace."""
    proc = run(["ip", "-o", "link", "show"], check=False)
    names = []
    for line in (proc.stdout or "").splitlines():
        parts = line.split(":", 2)
        if len(parts) >= 2:
            names.append(parts[1].strip().split("@")[0])
    return names


def used_networks():
    """IPv4 networks in use in the root namespace (addresses and routes)."""
    nets = []
    proc = run(["ip", "-o", "-4", "addr", "show"], check=False)
    for line in (proc.stdout or "").splitlines():
        match = re.search(r"\binet (\S+)", line)
        if match:
            nets.append((ipaddress.ip_interface(match.group(1)).network, line.split()[1]))
    proc = run(["ip", "-4", "route", "show", "table", "all"], check=False)
    for line in (proc.stdout or "").splitlines():
        first = line.split()[0] if line.split() else ""
        if first in ("default", "broadcast", "local", "unreachable", "prohibit", "blackhole"):
            continue
        try:
            nets.append((ipaddress.ip_network(first, strict=False), "route " + line.strip()))
        except ValueError:
            continue
    return nets


def ns_pids(ns):
    proc = run(["ip", "netns", "pids", ns], check=False)
    return [int(p) for p in (proc.stdout or "").split() if p.isdigit()]


def proc_info(pid):
    info = {"pid": pid, "comm": "", "cmdline": []}
    try:
        with open("/proc/%d/comm" % pid) as handle:
            info["comm"] = handle.read().strip()
        with open("/proc/%d/cmdline" % pid, "rb") as handle:
            info["cmdline"] = [a.decode("utf-8", "replace") for a in handle.read().split(b"\0") if a]
    except (IOError, OSError):
        return None
    return info


def kill_pids(pids, grace=2.0):
    """TERM then KILL a list of pids (only these ids)."""
    alive = []
    for pid in pids:
        try:
            os.kill(pid, signal.SIGTERM)
            alive.append(pid)
        except (ProcessLookupError, PermissionError):
            continue
    deadline = time.time() + grace
    while alive and time.time() < deadline:
        time.sleep(0.05)
        alive = [p for p in alive if _alive(p)]
    for pid in alive:
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def _alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
        return fields[0] != "Z"
    except (IOError, OSError, IndexError):
        return False


@contextlib.contextmanager
def global_lock():
    """Serialize up/down of all labs on this machine (subnet allocation)."""
    os.makedirs(LAB_BASE, exist_ok=True)
    path = os.path.join(LAB_BASE, ".lock")
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _write(path, text, mode=None):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w") as handle:
        handle.write(text)
    if mode is not None:
        os.chmod(tmp, mode)
    os.rename(tmp, path)


def _yaml_scalar(value):
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    return json.dumps(str(value))


def to_yaml(data, indent=0):
    """Small YAML writer (block style, JSON-quoted strings) for our own data."""
    pad = "  " * indent
    lines = []
    if isinstance(data, dict):
        if not data:
            return pad + "{}\n"
        for key, value in data.items():
            if isinstance(value, (dict, list)) and value:
                lines.append("%s%s:\n%s" % (pad, key, to_yaml(value, indent + 1)))
            elif isinstance(value, (dict, list)):
                lines.append("%s%s: %s\n" % (pad, key, "{}" if isinstance(value, dict) else "[]"))
            else:
                lines.append("%s%s: %s\n" % (pad, key, _yaml_scalar(value)))
    elif isinstance(data, list):
        for item in data:
            if isinstance(item, (dict, list)) and item:
                body = to_yaml(item, indent + 1)
                lines.append("%s- %s" % (pad, body.lstrip(" ")))
            else:
                lines.append("%s- %s\n" % (pad, _yaml_scalar(item)))
    else:
        lines.append(pad + _yaml_scalar(data) + "\n")
    return "".join(lines)


# --- naming -------------------------------------------------------------------

def plan(name, hosts, rails=1, subnet_base=None, rate=DEFAULT_RATE, tiers=1, per_leaf=None, link_layer=ETHERNET):
    """Names and addresses of a lab, derived from its name (no side effects). ``tiers=2``: per rail, leaf
    bridges of ``per_leaf`` hosts each joined through a spine bridge (tests/lab/two_tier.py). ``link_layer``
    ``InfiniBand`` (two tiers only): every rail port is presented as an InfiniBand port (its netdev as IPoIB's),
    whose leaf the smpquery EMULATOR names; lldpctl is not installed."""
    check_name(name)
    if link_layer not in LINK_LAYERS:
        raise LabError("--link-layer must be one of %s, got %r" % (", ".join(LINK_LAYERS), link_layer))
    if link_layer != ETHERNET and int(tiers) != 2:
        raise LabError("--link-layer %s needs --tiers 2 (its switches answer smpquery)" % link_layer)
    hosts = int(hosts)
    rails = int(rails)
    if not 1 <= hosts <= MAX_HOSTS:
        raise LabError("--hosts must be 1..%d, got %d" % (MAX_HOSTS, hosts))
    if not 1 <= rails <= MAX_RAILS:
        raise LabError("--rails must be 1..%d, got %d" % (MAX_RAILS, rails))
    if rate not in (None, "", "none"):
        parse_rate(rate)
    else:
        rate = None
    digest = name_hash(name)
    tag = digest[:5]
    if subnet_base is None:
        subnet_base = "10.%d" % (64 + int(digest[5:9], 16) % 128)
    match = re.match(r"^10\.(\d{1,3})$", str(subnet_base))
    if not match or not 0 <= int(match.group(1)) <= 255 or int(match.group(1)) + rails > 256:
        raise LabError("--subnet-base must look like 10.<0-255> (rails use 10.<x>.<rail>.0/24), got %r"
                       % (subnet_base,))
    lab = {
        "name": name,
        "tag": tag,
        "dir": lab_dir(name),
        "subnet_base": subnet_base,
        "rate": rate,
        "port_base": 20000 + (int(digest[9:13], 16) % 120) * 100,   # below the ephemeral range
        "link_layer": link_layer,
        "rails": [],
        "hosts": [],
    }
    for rail in range(rails):
        net = ipaddress.ip_network("%s.%d.0/24" % (subnet_base, rail))
        lab["rails"].append({
            "rail": rail,
            "bridge": "cb%sr%d" % (tag, rail),
            "subnet": str(net),
            "gateway": str(net.network_address + 1),
            "netdev": "ens1f%dnp%d" % (rail, rail),
            "device": "mlx5_%d" % rail,
        })
    for idx in range(1, hosts + 1):
        host = {"name": "h%d" % idx, "netns": "cc-%s-h%d" % (name, idx), "rails": []}
        for rail in lab["rails"]:
            net = ipaddress.ip_network(rail["subnet"])
            host["rails"].append({
                "rail": rail["rail"],
                "netdev": rail["netdev"],
                "device": rail["device"],
                "address": str(net.network_address + HOST_OFFSET + idx),
                "peer": "cv%sh%dr%d" % (tag, idx, rail["rail"]),
                "bridge": rail["bridge"],
            })
            host["rails"][-1].update(rail_gids(idx, rail["rail"]))
        host["address"] = host["rails"][0]["address"]
        lab["hosts"].append(host)
    if int(tiers) == 2:
        if per_leaf is None:
            raise LabError("--tiers 2 needs --per-leaf K (hosts per leaf switch)")
        try:
            two_tier.plan_fabric(lab, per_leaf, parse_rate(rate) if rate else None)
        except ValueError as exc:
            raise LabError(str(exc))
    elif int(tiers) != 1:
        raise LabError("--tiers must be 1 or 2, got %s" % tiers)
    elif per_leaf is not None:
        raise LabError("--per-leaf needs --tiers 2")
    return lab


def rail_gids(idx, rail):
    """``{ipv6_first, gid_index}`` of host ``idx``'s rail: the IPv6 addresses its netdev had before the rail's
    IPv4 address (see GID_SPREAD), and the index of that IPv4 address's RoCE v2 GID."""
    count = (idx - 1 + rail) % GID_SPREAD
    ipv6 = ["fd00:cc:%x:%x::%x" % (rail, num, HOST_OFFSET + idx) for num in range(count)]
    return {"ipv6_first": ipv6, "gid_index": 3 + 2 * count}


# --- the lab object -------------------------------------------------------------

class Lab(object):
    """A lab that is up (loaded from its state.json)."""

    def __init__(self, state):
        self.state = state
        self.name = state["name"]
        self.dir = state["dir"]

    # paths
    @property
    def inventory(self):
        return os.path.join(self.dir, "inventory.yml")

    @property
    def ansible_cfg(self):
        return os.path.join(self.dir, "ansible.cfg")

    @property
    def ssh_config(self):
        return os.path.join(self.dir, "ssh_config")

    @property
    def key(self):
        return os.path.join(self.dir, "id_ed25519")

    @property
    def bin_dir(self):
        return os.path.join(self.dir, "bin")

    @property
    def hosts(self):
        return [h["name"] for h in self.state["hosts"]]

    @property
    def port_base(self):
        return self.state["port_base"]

    @property
    def rate(self):
        return self.state["rate"]

    @classmethod
    def load(cls, name):
        path = os.path.join(lab_dir(name), "state.json")
        try:
            with open(path) as handle:
                return cls(json.load(handle))
        except (IOError, OSError):
            raise LabError("lab %r is not up (no %s)" % (name, path))

    def host(self, host):
        for entry in self.state["hosts"]:
            if entry["name"] == host or entry["netns"] == host:
                return entry
        raise LabError("lab %r has no host %r (hosts: %s)" % (self.name, host, ", ".join(self.hosts)))

    def address(self, host, rail=0):
        return self.host(host)["rails"][int(rail)]["address"]

    def sysfs_root(self, host):
        return os.path.join(self.dir, "sysfs", self.host(host)["name"])

    def environment(self, host):
        """The environment a command on that host runs with (= commcheck_environment)."""
        entry = self.host(host)
        return {
            "PATH": "%s:%s" % (self.bin_dir, SYSTEM_PATH),
            "COMMCHECK_LAB": self.name,
            "COMMCHECK_LAB_HOST": entry["name"],
            "COMMCHECK_LAB_SYSFS": self.sysfs_root(host),
            "PERFTEST_EMULATOR_MAX_BYTES": str(EMULATOR_MAX_BYTES),
        }

    # operations
    def exec_argv(self, host, argv, env=None):
        """argv that runs argv inside the host (its net + UTS namespaces, its env)."""
        entry = self.host(host)
        full_env = self.environment(host)
        full_env.update(env or {})
        pid = self.sshd_pid(host)
        if pid:
            prefix = ["nsenter", "-t", str(pid), "-n", "-u", "--"]
        else:
            prefix = ["ip", "netns", "exec", entry["netns"]]
        assigns = ["%s=%s" % (k, v) for k, v in sorted(full_env.items())]
        return prefix + ["env", "-i", "HOME=/root", "LC_ALL=C", "LANG=C"] + assigns + list(argv)

    def exec(self, host, argv, timeout=120, check=False, env=None, input=None):
        """Run argv in the host; return the CompletedProcess (text)."""
        if isinstance(argv, str) or not argv:
            raise LabError("exec needs an argv list, got %r" % (argv,))
        return subprocess.run(self.exec_argv(host, argv, env), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, universal_newlines=True,
                              timeout=timeout, check=check, input=input)

    def popen(self, host, argv, env=None, **kwargs):
        """Start argv in the host in the background (caller stops it)."""
        kwargs.setdefault("stdout", subprocess.PIPE)
        kwargs.setdefault("stderr", subprocess.PIPE)
        kwargs.setdefault("universal_newlines", True)
        kwargs.setdefault("start_new_session", True)
        return subprocess.Popen(self.exec_argv(host, argv, env), **kwargs)

    def sshd_pid(self, host):
        path = os.path.join(self.dir, "run", "sshd-%s.pid" % self.host(host)["name"])
        try:
            with open(path) as handle:
                pid = int(handle.read().strip())
        except (IOError, OSError, ValueError):
            return None
        if not _alive(pid):
            return None
        if self.host(host)["netns"] not in _netns_of(pid):
            return None
        return pid

    def pids(self, include_infra=False):
        """Processes in the lab's namespaces: [{host, pid, comm, cmdline}].

        Without include_infra the lab's own sshd processes (listener and
        session processes) are left out: what remains is what tests left.
        """
        found = []
        for entry in self.state["hosts"]:
            for pid in ns_pids(entry["netns"]):
                info = proc_info(pid)
                if info is None or not _alive(pid):
                    continue
                if not include_infra and info["comm"] in INFRA_COMMANDS:
                    continue
                info["host"] = entry["name"]
                found.append(info)
        return found

    def _shape(self, dev, rate, netns=None):
        prefix = ["tc"] + (["-n", netns] if netns else [])
        if rate is None:
            run(prefix + ["qdisc", "del", "dev", dev, "root"], check=False)
            return
        bps = parse_rate(rate)
        # burst: at least 2 ms of traffic and a few 64 KiB GSO segments
        burst = max(256 * 1024, int(bps / 8 * 0.002))
        run(prefix + ["qdisc", "replace", "dev", dev, "root", "tbf", "rate", str(bps) + "bit",
                      "burst", str(burst), "latency", "50ms"])

    def slow(self, host, rate, rail=None, direction="both"):
        """Shape host's veth for rail (all rails when None): both directions, or only what the host sends
        (``tx``) or receives (``rx``)."""
        parse_rate(rate)
        if direction not in ("both", "tx", "rx"):
            raise LabError("direction must be both, tx or rx, got %r" % (direction,))
        entry = self.host(host)
        for hrail in entry["rails"]:
            if rail is not None and hrail["rail"] != int(rail):
                continue
            if direction in ("both", "tx"):
                self._shape(hrail["netdev"], rate, netns=entry["netns"])
            if direction in ("both", "rx"):
                self._shape(hrail["peer"], rate)
        self._record_shaping(entry["name"], rail, rate)

    def slow_pair(self, host, peer, rate, rail=0):
        """Slow only the traffic between host and peer on one rail (both directions), at host's port.

        Like a bad cable or switch-port path between the two: host's veth for
        that rail gets an htb root with the nominal rate for everything and
        ``rate`` for packets to (egress in host) and from (egress of the
        bridge-side end) the peer's rail address. ``heal`` removes it.
        """
        bps = parse_rate(rate)
        entry = self.host(host)
        peer_addr = self.address(peer, rail)
        hrail = [r for r in entry["rails"] if r["rail"] == int(rail)][0]
        nominal = parse_rate(self.rate) if self.rate else 10 * 10 ** 9
        for dev, netns, match in ((hrail["netdev"], entry["netns"], "dst"), (hrail["peer"], None, "src")):
            prefix = ["tc"] + (["-n", netns] if netns else [])
            burst = str(max(256 * 1024, int(nominal / 8 * 0.002)))
            run(prefix + ["qdisc", "replace", "dev", dev, "root", "handle", "1:", "htb", "default", "10"])
            run(prefix + ["class", "replace", "dev", dev, "parent", "1:", "classid", "1:10", "htb", "rate",
                          "%dbit" % nominal, "burst", burst])
            run(prefix + ["class", "replace", "dev", dev, "parent", "1:", "classid", "1:20", "htb", "rate",
                          "%dbit" % bps, "burst", burst])
            run(prefix + ["filter", "replace", "dev", dev, "parent", "1:", "protocol", "ip", "prio", "1", "u32",
                          "match", "ip", match, peer_addr + "/32", "flowid", "1:20"])
        self.state.setdefault("slowed_pairs", {})["%s-%s:%s" % (entry["name"], peer, rail)] = rate
        _write(os.path.join(self.dir, "state.json"), json.dumps(self.state, indent=1))

    def leaf(self, rail, leaf):
        """The leaf entry of a two-tier lab's rail (``leaf``: its number from 1, or its name)."""
        try:
            return two_tier.leaf_of(self.state, rail, leaf)
        except ValueError as exc:
            raise LabError(str(exc))

    def slow_uplink(self, rail, leaf, rate, direction="both"):
        """Shape the uplink of a leaf of a two-tier lab: what the leaf sends to the spine (``up``), what it gets
        from it (``down``), or both; its hosts' paths with each other stay at the nominal rate."""
        parse_rate(rate)
        if direction not in ("both", "up", "down"):
            raise LabError("direction must be both, up or down, got %r" % (direction,))
        entry = self.leaf(rail, leaf)
        if direction in ("both", "up"):
            self._shape(entry["uplink_leaf"], rate)
        if direction in ("both", "down"):
            self._shape(entry["uplink_spine"], rate)
        self._record_fabric("uplink", rail, entry, rate)

    def oversubscribe(self, ratio):
        """Make a two-tier lab's fabric ``ratio``:1 oversubscribed: every uplink's nominal rate (what ``heal``
        puts back) becomes its leaf's host rate over ``ratio`` (1: non-blocking, as ``up`` makes it)."""
        if self.state.get("tiers") != 2:
            raise LabError("oversubscribe needs a two-tier lab (up --tiers 2)")
        try:
            rate = two_tier.uplink_rate(self.state["per_leaf"], parse_rate(self.rate) if self.rate else None, ratio)
        except ValueError as exc:
            raise LabError(str(exc))
        self.state["uplink_rate"], self.state["oversubscription"] = rate, float(ratio)
        self._heal_fabric()
        _write(os.path.join(self.dir, "state.json"), json.dumps(self.state, indent=1))

    def slow_leaf(self, rail, leaf, rate):
        """A slow leaf switch of a two-tier lab: every port of its bridge (its hosts' ports and its uplink)
        sends at ``rate``, so every path through it is slow, its hosts' paths with each other too."""
        parse_rate(rate)
        entry = self.leaf(rail, leaf)
        for host in entry["hosts"]:
            self._shape(self._rail_of(host, rail)["peer"], rate)
        self._shape(entry["uplink_leaf"], rate)
        self._record_fabric("leaf", rail, entry, rate)

    def _rail_of(self, host, rail):
        return [r for r in self.host(host)["rails"] if r["rail"] == int(rail)][0]

    def _record_fabric(self, part, rail, entry, rate):
        self.state.setdefault("slowed_fabric", {})["%s %s" % (part, entry["name"])] = rate
        _write(os.path.join(self.dir, "state.json"), json.dumps(self.state, indent=1))

    def _heal_fabric(self):
        """Every leaf port and uplink back to its nominal rate (a two-tier lab)."""
        for rail in self.state["rails"]:
            for entry in rail.get("leaves", []):
                self._shape(entry["uplink_leaf"], self.state.get("uplink_rate"))
                self._shape(entry["uplink_spine"], self.state.get("uplink_rate"))
        self.state.pop("slowed_fabric", None)

    def heal(self, host=None):
        """Put the nominal rate back on host (every host, and a two-tier lab's uplinks, when None)."""
        if host is None:
            self._heal_fabric()
        for entry in self.state["hosts"]:
            if host is not None and entry["name"] != self.host(host)["name"]:
                continue
            for hrail in entry["rails"]:
                self._shape(hrail["netdev"], self.rate, netns=entry["netns"])
                self._shape(hrail["peer"], self.rate)
            for key in [k for k in self.state.get("slowed_pairs", {}) if k.split("-", 1)[0] == entry["name"]]:
                del self.state["slowed_pairs"][key]
            self._record_shaping(entry["name"], None, None)

    def _record_shaping(self, host, rail, rate):
        slowed = self.state.setdefault("slowed", {})
        if rate is None:
            slowed.pop(host, None)
        else:
            current = slowed.setdefault(host, {})
            rails = [r["rail"] for r in self.host(host)["rails"]] if rail is None else [int(rail)]
            for num in rails:
                current[str(num)] = rate
        _write(os.path.join(self.dir, "state.json"), json.dumps(self.state, indent=1))

    def status(self):
        """What is up: per host its namespace, addresses, sshd, shaping."""
        names = set(netns_list())
        hosts = []
        for entry in self.state["hosts"]:
            hosts.append({
                "host": entry["name"],
                "netns": entry["netns"],
                "netns_up": entry["netns"] in names,
                "addresses": [r["address"] for r in entry["rails"]],
                "sshd_pid": self.sshd_pid(entry["name"]),
                "slowed": self.state.get("slowed", {}).get(entry["name"]),
            })
        out = {"name": self.name, "dir": self.dir, "rate": self.rate,
               "subnets": [r["subnet"] for r in self.state["rails"]],
               "inventory": self.inventory, "hosts": hosts}
        if self.state.get("tiers") == 2:
            out["fabric"] = {"per_leaf": self.state["per_leaf"], "uplink_rate": self.state.get("uplink_rate"),
                             "oversubscription": self.state.get("oversubscription", 1),
                             "leaves": dict((leaf["name"], leaf["hosts"]) for rail in self.state["rails"]
                                            for leaf in rail["leaves"]),
                             "slowed": self.state.get("slowed_fabric", {})}
        return out

    def ansible_env(self, extra=None):
        env = dict(os.environ)
        env["ANSIBLE_CONFIG"] = self.ansible_cfg
        env["ANSIBLE_COLLECTIONS_PATH"] = os.path.join(REPO, ".build", "collections")
        env.setdefault("ANSIBLE_NOCOLOR", "1")
        env.update(extra or {})
        return env


def _netns_of(pid):
    """Names of the named network namespaces pid is in ('' when none)."""
    try:
        ino = os.stat("/proc/%d/ns/net" % pid).st_ino
    except OSError:
        return ""
    names = []
    for name in os.listdir("/run/netns") if os.path.isdir("/run/netns") else []:
        try:
            if os.stat(os.path.join("/run/netns", name)).st_ino == ino:
                names.append(name)
        except OSError:
            continue
    return names


# --- up / down -----------------------------------------------------------------

def _other_labs(name):
    labs = []
    if not os.path.isdir(LAB_BASE):
        return labs
    for entry in sorted(os.listdir(LAB_BASE)):
        path = os.path.join(LAB_BASE, entry, "state.json")
        if entry == name or not os.path.isfile(path):
            continue
        try:
            with open(path) as handle:
                labs.append(json.load(handle))
        except (IOError, OSError, ValueError):
            continue
    return labs


def _check_clashes(lab, auto_subnet):
    """Refuse a lab whose names or subnets are taken; may move an automatic subnet."""
    existing_ns = set(netns_list())
    for host in lab["hosts"]:
        if host["netns"] in existing_ns:
            raise LabError("network namespace %s already exists: lab %r is up (run down first)"
                           % (host["netns"], lab["name"]))
    links = set(link_names())
    for rail in lab["rails"]:
        if rail["bridge"] in links:
            raise LabError("bridge %s already exists (another lab with a clashing name?)" % rail["bridge"])
    for dev in two_tier.interfaces(lab):
        if dev in links:
            raise LabError("interface %s already exists (another lab with a clashing name?)" % dev)
    for host in lab["hosts"]:
        for hrail in host["rails"]:
            if hrail["peer"] in links:
                raise LabError("interface %s already exists (another lab with a clashing name?)"
                               % hrail["peer"])
    reserved = []
    for other in _other_labs(lab["name"]):
        for rail in other.get("rails", []):
            reserved.append((ipaddress.ip_network(rail["subnet"]), "lab %s" % other["name"]))
    for _attempt in range(128):
        used = used_networks() + reserved
        clash = None
        for rail in lab["rails"]:
            net = ipaddress.ip_network(rail["subnet"])
            for other, owner in used:
                if net.overlaps(other):
                    clash = (net, other, owner)
                    break
            if clash:
                break
        if not clash:
            return lab
        if not auto_subnet:
            raise LabError("subnet %s clashes with %s (%s): pick another --subnet-base"
                           % (clash[0], clash[1], clash[2]))
        second = int(lab["subnet_base"].split(".")[1])
        second = 64 + ((second - 64 + 1) % 128)
        lab = plan(lab["name"], len(lab["hosts"]), len(lab["rails"]),
                   subnet_base="10.%d" % second, rate=lab["rate"], tiers=lab.get("tiers", 1),
                   per_leaf=lab.get("per_leaf"), link_layer=lab.get("link_layer") or ETHERNET)
    raise LabError("no free 10.x subnet found for lab %r" % lab["name"])


def _sshd_config(lab):
    d = lab["dir"]
    return "\n".join([
        "# sshd config of lab %s (tests only)" % lab["name"],
        "Port %d" % SSH_PORT,
        "HostKey %s" % os.path.join(d, "ssh_host_ed25519_key"),
        "AuthorizedKeysFile %s" % os.path.join(d, "authorized_keys"),
        "PermitRootLogin prohibit-password",
        "PubkeyAuthentication yes",
        "PasswordAuthentication no",
        "KbdInteractiveAuthentication no",
        "UsePAM no",
        "StrictModes no",
        "UseDNS no",
        "PrintMotd no",
        "X11Forwarding no",
        "MaxStartups 200:30:400",
        "MaxSessions 200",
        "LogLevel ERROR",
        "Subsystem sftp %s" % SFTP_SERVER,
        "",
    ])


def _ssh_config(lab):
    d = lab["dir"]
    patterns = " ".join("%s.%d.*" % (lab["subnet_base"], r["rail"]) for r in lab["rails"])
    common = [
        "  User root",
        "  IdentityFile %s" % os.path.join(d, "id_ed25519"),
        "  IdentitiesOnly yes",
        "  StrictHostKeyChecking no",
        "  UserKnownHostsFile /dev/null",
        "  LogLevel ERROR",
        "  ConnectTimeout 10",
        "  ServerAliveInterval 15",
    ]
    lines = ["# ssh config of lab %s (tests only)" % lab["name"]]
    for host in lab["hosts"]:
        lines += ["Host %s" % host["name"], "  HostName %s" % host["address"]] + common
    lines += ["Host %s" % patterns] + common
    return "\n".join(lines) + "\n"


def _ansible_cfg(lab):
    forks = max(10, len(lab["hosts"]) * 2 + 2)
    return "\n".join([
        "# ansible.cfg of lab %s (tests only)" % lab["name"],
        "[defaults]",
        "inventory = %s" % os.path.join(lab["dir"], "inventory.yml"),
        "host_key_checking = False",
        "forks = %d" % forks,
        "timeout = 30",
        "interpreter_python = %s" % _python(),
        "collections_path = %s" % os.path.join(REPO, ".build", "collections"),
        "retry_files_enabled = False",
        # as the quickstart recommends: the main process checks its workers every 10 ms, not every 1 ms
        "internal_poll_interval = 0.01",
        # as the quickstart recommends: no per-host, per-task copy of the facts as top-level variables
        "inject_facts_as_vars = False",
        "",
        "[ssh_connection]",
        "pipelining = True",
        "ssh_args = -o ControlMaster=auto -o ControlPersist=60s -o ServerAliveInterval=15",
        "control_path_dir = %s" % os.path.join(lab["dir"], "cp"),
        "",
    ])


def _python():
    return VENV_PYTHON if os.path.exists(VENV_PYTHON) else (shutil.which("python3") or "/usr/bin/python3")


LAB_COLLECTIVE = {
    "commcheck_gpus_per_node": 1,
    "commcheck_collective_min_bytes": "1M",
    "commcheck_collective_max_bytes": "4M",
    "commcheck_collective_iterations": 3,
    "commcheck_collective_warmup_iterations": 1,
    "commcheck_collective_link_efficiency": 0.5,
    "commcheck_collective_min_fraction": 0.15,
}
# Every lab host shares this machine's few cores, so Open MPI runs oversubscribed, though it
# cannot tell (each host has its own node name): without yielding, a rank waiting in a
# collective spins on a core its peers need, and a 16-rank emulator run took 20 s instead of 9.
# Open MPI's own advice for oversubscribed nodes; a real cluster's ranks have their own cores.
LAB_MPI_MCA = {"mpi_yield_when_idle": "1"}


def _inventory(lab):
    d = lab["dir"]
    rail0 = lab["rails"][0]
    hosts = {}
    for host in lab["hosts"]:
        obj = Lab(lab)
        hosts[host["name"]] = {
            "ansible_host": host["address"],
            "lab_netns": host["netns"],
            "commcheck_sysfs_root": obj.sysfs_root(host["name"]),
            # the hosts share one filesystem: each its own run lock, as each machine has its own /run/lock
            "commcheck_lock_dir": os.path.join(d, "lock", host["name"]),
            "commcheck_environment": obj.environment(host["name"]),
            "lab_rails": [{"rail": r["rail"], "netdev": r["netdev"], "address": r["address"],
                           "device": r["device"], "gid_index": r["gid_index"]} for r in host["rails"]],
        }
        if lab.get("tiers") == 2:
            hosts[host["name"]]["lab_leaves"] = two_tier.inventory_leaves(host["rails"])
    group_vars = {
        "ansible_user": "root",
        "ansible_ssh_private_key_file": os.path.join(d, "id_ed25519"),
        "ansible_ssh_common_args": "-F %s" % os.path.join(d, "ssh_config"),
        "ansible_python_interpreter": _python(),
        "commcheck_collective_binary_dir": os.path.join(d, "bin"),
        "commcheck_collective_allow_run_as_root": True,
        # The collective in this lab: the nccl-tests EMULATOR is MPI over TCP in Python on the shared
        # cores (a tenth to a half of the line rate, see tests/integration/test_collective_lab.py), so
        # one rank per host, small messages and a low pass line; tests set their own where they care.
        **LAB_COLLECTIVE,
        # Open MPI carries the emulator's data over rail 0 only (btl_tcp_if_include below), while the
        # product derives the expectation from every active rail discovery finds: one rail's share.
        "commcheck_collective_link_efficiency": LAB_COLLECTIVE["commcheck_collective_link_efficiency"] / len(
            lab["rails"]),
        # Every lab host has one emulated GPU per rail and nvidia_peermem, so GPUDirect (auto) would rerun
        # every RDMA bandwidth test from GPU memory; the tests that count records were written for host
        # memory, and the GPUDirect tests ask for it (tests/integration/test_gpudirect_lab.py)
        "commcheck_rdma_gpudirect": False,
        # An emulated latency round trip takes about 30 us, so the product's 10,000 iterations by count would
        # be 0.3 s a test, and a lab fault that delays each message by 2 ms (faults.LateNic) 20 s: 2,000 keep
        # the median and the 99th percentile meaningful at a fifth of that.
        "commcheck_rdma_lat_iterations": 2000,
        "commcheck_mpi_ssh_config": os.path.join(d, "ssh_config"),
        "commcheck_mpi_mca": dict(LAB_MPI_MCA, btl_tcp_if_include=rail0["subnet"], oob_tcp_if_include=rail0["subnet"]),
        "lab_name": lab["name"],
        "lab_dir": d,
        "lab_ssh_config": os.path.join(d, "ssh_config"),
        "lab_port_base": lab["port_base"],
        "lab_link_rate": lab["rate"],
        "lab_link_rate_gbps": rate_gbps(lab["rate"]) if lab["rate"] else None,
        "lab_subnets": [r["subnet"] for r in lab["rails"]],
    }
    if lab.get("tiers") == 2:
        # each host's sysfs root is its own (emulated) tree and lldpctl asks its own (emulated) lldpd: the
        # switch names come from there, as on a cluster; the lab gives no commcheck_topology
        group_vars["commcheck_discover_topology_tools"] = True
        group_vars["lab_tiers"] = 2
        group_vars["lab_per_leaf"] = lab["per_leaf"]
        group_vars["lab_uplink_rate"] = lab["uplink_rate"]
    if (lab.get("link_layer") or ETHERNET) != ETHERNET:
        # an InfiniBand port's GIDs hold no IPv4 address: its IPoIB netdev's comes from ip, as on a cluster
        group_vars["commcheck_discover_address_source"] = "ip"
    inv = {"all": {"children": {"lab": {"hosts": hosts, "vars": group_vars}}}}
    return "# inventory of lab %s (tests only; written by tests/lab/lab.py)\n" % lab["name"] + to_yaml(inv)


def _launchers(lab):
    bin_dir = os.path.join(lab["dir"], "bin")
    os.makedirs(bin_dir, exist_ok=True)
    emulator = os.path.join(EMULATORS, "perftest_emulator.py")
    for tool in PERFTEST_TOOLS:
        text = "#!/bin/sh\n# EMULATOR launcher (commcheck lab): %s is emulated over TCP\nexec %s %s --tool %s \"$@\"\n" % (
            tool, _python(), emulator, tool)
        _write(os.path.join(bin_dir, tool), text, mode=0o755)
    for ops, suffix, name in ((NCCL_TEST_OPS, "_perf", "nccl_tests_emulator.py"),
                              (HCCL_TEST_OPS, "_test", "hccl_test_emulator.py")):
        for op in ops:
            text = ("#!/bin/sh\n# EMULATOR launcher (commcheck lab): %s%s runs tests/lab/emulators/%s\n"
                    "exec %s %s --emulate=%s \"$@\"\n" % (op, suffix, name, _python(),
                                                          os.path.join(EMULATORS, name), op))
            _write(os.path.join(bin_dir, op + suffix), text, mode=0o755)
    if lab.get("tiers") == 2:
        # only where there are switches to ask: a one-tier lab has no lldpd nor infiniband-diags (neither is
        # installed); discovery asks smpquery on InfiniBand ports only, and no lldpd runs on them
        for tool in ("lldpctl", "smpquery") if (lab.get("link_layer") or ETHERNET) == ETHERNET else ("smpquery",):
            text = ("#!/bin/sh\n# EMULATOR launcher (commcheck lab): %s runs tests/lab/emulators/%s_emulator.py\n"
                    "exec %s %s \"$@\"\n" % (tool, tool, _python(), os.path.join(EMULATORS, tool + "_emulator.py")))
            _write(os.path.join(bin_dir, tool), text, mode=0o755)


def _sysfs(lab, macs):
    sys.path.insert(0, HERE)
    try:
        import sysfs_tree  # pylint: disable=import-outside-toplevel
    finally:
        sys.path.remove(HERE)
    gbps = rate_gbps(lab["rate"]) if lab["rate"] else 100
    link_layer = lab.get("link_layer") or ETHERNET
    for num, host in enumerate(lab["hosts"]):
        root = os.path.join(lab["dir"], "sysfs", host["name"])
        if os.path.isdir(root):
            shutil.rmtree(root)
        devices = []
        net = {}
        for hrail in host["rails"]:
            devices.append({
                "name": hrail["device"],
                "hca_type": "MT4129",
                "pci": "0000:%02x:00.0" % (0x17 + hrail["rail"]),
                "numa_node": 0,
                "node_desc": "%s %s" % (host["name"], hrail["device"]),
                "ports": [dict({
                    "port": 1, "state": "ACTIVE", "phys_state": "LinkUp",
                    "rate_gbps": gbps, "link_layer": link_layer,
                    "netdev": hrail["netdev"],
                    "addresses": hrail.get("ipv6_first", []) + [hrail["address"]],
                    # InfiniBand: a LID per port of the subnet, the subnet manager's at LID 1
                }, **({"lid": 2 + num * len(host["rails"]) + hrail["rail"], "sm_lid": 1}
                      if link_layer != ETHERNET else {}))],
            })
            mac = macs.get((host["name"], hrail["netdev"]))
            net[hrail["netdev"]] = {"operstate": "up", "mtu": 1500}
            if mac:
                net[hrail["netdev"]]["address"] = mac
        # one GPU PCI function per rail (no driver: the collective's evidence is PCI only), with
        # nvidia_peermem loaded so that discovery does not warn that GPUDirect RDMA is off
        sysfs_tree.build_sysfs(root, devices, cpus=["ondemand", "ondemand", "powersave", "performance"],
                               modules={"ib_core": {"netns_mode": "Y"}, "mlx5_core": {}, "mlx5_ib": {},
                                        "ib_uverbs": {}, "rdma_ucm": {}, "nvidia_peermem": {}},
                               net=net, gpus=len(host["rails"]))


def _wait_port(address, port, timeout):
    deadline = time.time() + timeout
    while True:
        try:
            with socket.create_connection((address, port), timeout=1.0) as sock:
                sock.settimeout(2.0)
                if sock.recv(4).startswith(b"SSH"):
                    return True
        except OSError:
            pass
        if time.time() > deadline:
            return False
        time.sleep(0.05)


def up(name, hosts, rails=1, subnet_base=None, rate=DEFAULT_RATE, replace=False, log=None, owner_pid=None,
       tiers=1, per_leaf=None, link_layer=ETHERNET):
    """Bring a lab up; return the Lab. replace=True first takes down a lab of that name. ``tiers=2``: leaf
    bridges of ``per_leaf`` hosts each under a spine, and the lldpctl EMULATOR (tests/lab/two_tier.py).

    owner_pid: the process that owns the lab (recorded; test fixtures take
    down labs whose owner is gone).
    """
    if not is_root():
        raise LabError("the lab needs root (network namespaces, veth, bridges)")
    for tool in ("ip", "tc", SSHD, "ssh-keygen", "nsenter", "unshare"):
        if not shutil.which(tool) and not os.path.exists(tool):
            raise LabError("the lab needs %s (apt-get install iproute2 openssh-server util-linux)" % tool)
    started = time.time()
    with global_lock():
        lab = plan(name, hosts, rails, subnet_base, rate, tiers=tiers, per_leaf=per_leaf, link_layer=link_layer)
        if replace:
            _down(name, log)
        elif os.path.exists(os.path.join(lab["dir"], "state.json")) or \
                any(h["netns"] in set(netns_list()) for h in lab["hosts"]):
            raise LabError("lab %r is already up (down it first, or up --replace)" % name)
        lab = _check_clashes(lab, auto_subnet=subnet_base is None)
        d = lab["dir"]
        if os.path.isdir(d):
            shutil.rmtree(d)
        os.makedirs(os.path.join(d, "run"))
        os.makedirs(os.path.join(d, "cp"))
        lab["started"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        lab["owner_pid"] = owner_pid
        # Write the state first: a failing up can always be taken down.
        _write(os.path.join(d, "state.json"), json.dumps(lab, indent=1))
        try:
            _build(lab, log)
        except BaseException:
            _down(name, log)
            raise
    if log:
        log("lab %s up: %d hosts, %d rails, %.1fs" % (name, len(lab["hosts"]), len(lab["rails"]),
                                                      time.time() - started))
    return Lab(lab)


def _build(lab, log):
    d = lab["dir"]
    os.makedirs("/run/sshd", mode=0o755, exist_ok=True)
    run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "lab-%s" % lab["name"],
         "-f", os.path.join(d, "id_ed25519")])
    run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "lab-%s-host" % lab["name"],
         "-f", os.path.join(d, "ssh_host_ed25519_key")])
    shutil.copy(os.path.join(d, "id_ed25519.pub"), os.path.join(d, "authorized_keys"))
    os.chmod(os.path.join(d, "authorized_keys"), 0o600)
    _write(os.path.join(d, "sshd_config"), _sshd_config(lab))
    _write(os.path.join(d, "ssh_config"), _ssh_config(lab), mode=0o644)
    obj = Lab(lab)
    for rail in lab["rails"]:
        _make_bridge(rail["bridge"], rail["gateway"])
    two_tier.build_fabric(lab, _make_bridge, run, obj._shape, _sysctl_write)
    macs = {}
    for host in lab["hosts"]:
        ns = host["netns"]
        run(["ip", "netns", "add", ns])
        run(["ip", "-n", ns, "link", "set", "lo", "up"])
        for hrail in host["rails"]:
            run(["ip", "link", "add", hrail["peer"], "type", "veth", "peer", "name", hrail["netdev"],
                 "netns", ns])
            run(["ip", "link", "set", hrail["peer"], "master", hrail["bridge"], "up"])
            _sysctl_write("net/ipv6/conf/%s/disable_ipv6" % hrail["peer"], "1")
            run(["ip", "-n", ns, "addr", "add", "%s/24" % hrail["address"], "dev", hrail["netdev"]])
            run(["ip", "-n", ns, "link", "set", hrail["netdev"], "up"])
            if lab["rate"]:
                obj._shape(hrail["netdev"], lab["rate"], netns=ns)
                obj._shape(hrail["peer"], lab["rate"])
        proc = run(["ip", "-n", ns, "-j", "link", "show"])
        for link in json.loads(proc.stdout or "[]"):
            if link.get("address"):
                macs[(host["name"], link.get("ifname"))] = link["address"]
    _sysfs(lab, macs)
    if lab.get("tiers") == 2:
        two_tier.write_neighbors(lab, obj.sysfs_root)
    _launchers(lab)
    _write(os.path.join(d, "inventory.yml"), _inventory(lab))
    _write(os.path.join(d, "ansible.cfg"), _ansible_cfg(lab))
    for host in lab["hosts"]:
        pidfile = os.path.join(d, "run", "sshd-%s.pid" % host["name"])
        # Own UTS namespace so `hostname` says h<i> on each host; the script is
        # constant, the values travel as positional arguments.
        run(["ip", "netns", "exec", host["netns"], "unshare", "--uts", "--",
             "sh", "-c", 'hostname "$1" && shift && exec "$@"', "sh", host["name"],
             SSHD, "-f", os.path.join(d, "sshd_config"), "-o", "ListenAddress=%s" % host["address"],
             "-o", "PidFile=%s" % pidfile])
    for host in lab["hosts"]:
        if not _wait_port(host["address"], SSH_PORT, 20):
            raise LabError("sshd of %s (%s) did not answer on port %d" % (host["name"], host["address"], SSH_PORT))


def _make_bridge(br, gateway=None):
    """A Linux bridge, up (with the rail's gateway address: the rail's bridge, or a two-tier lab's spine)."""
    # bridged lab traffic skips iptables (a host firewall's FORWARD policy must not
    # decide whether lab hosts reach each other); kernels without that knob get a
    # plain bridge
    made = run(["ip", "link", "add", br, "type", "bridge", "stp_state", "0", "forward_delay", "0",
                "nf_call_iptables", "0", "nf_call_ip6tables", "0", "nf_call_arptables", "0"], check=False)
    if made.returncode != 0:
        run(["ip", "link", "add", br, "type", "bridge", "stp_state", "0", "forward_delay", "0"])
    if gateway:
        run(["ip", "addr", "add", "%s/24" % gateway, "dev", br])
    run(["ip", "link", "set", br, "up"])
    _sysctl_write("net/ipv6/conf/%s/disable_ipv6" % br, "1")


def _sysctl_write(rel, value):
    try:
        with open(os.path.join("/proc/sys", rel), "w") as handle:
            handle.write(value)
    except (IOError, OSError):
        pass


def down(name, log=None):
    """Take a lab down (idempotent; touches only this lab's objects)."""
    if not is_root():
        raise LabError("the lab needs root (network namespaces, veth, bridges)")
    with global_lock():
        return _down(name, log)


def _down(name, log=None):
    started = time.time()
    check_name(name)
    d = lab_dir(name)
    state = None
    try:
        with open(os.path.join(d, "state.json")) as handle:
            state = json.load(handle)
    except (IOError, OSError, ValueError):
        state = None
    prefix = "cc-%s-h" % name
    namespaces = [ns for ns in netns_list() if ns.startswith(prefix) and ns[len(prefix):].isdigit()]
    # processes first (sshd and whatever tests left), then the namespaces
    pids = []
    for ns in namespaces:
        pids += ns_pids(ns)
    kill_pids(sorted(set(pids)))
    for ns in namespaces:
        run(["ip", "netns", "del", ns], check=False)
    tag = name_hash(name)[:5]
    bridge_re = re.compile(r"^cb%sr\d+(l\d+)?$" % tag)
    peer_re = re.compile(r"^(cv%sh\d+r\d+|cs%sr\d+l\d+)$" % (tag, tag))
    # never touch an interface another lab recorded (two names could share a tag)
    others = set()
    for other in _other_labs(name):
        others.update(r["bridge"] for r in other.get("rails", []))
        others.update(r["peer"] for h in other.get("hosts", []) for r in h.get("rails", []))
        others.update(two_tier.interfaces(other))
    for pattern in (peer_re, bridge_re):
        for link in link_names():
            if pattern.match(link) and link not in others:
                run(["ip", "link", "del", link], check=False)
    if os.path.isdir(d):
        shutil.rmtree(d, ignore_errors=True)
    if log and (state or namespaces):
        log("lab %s down: %d namespaces, %d processes, %.1fs" % (name, len(namespaces), len(pids),
                                                                 time.time() - started))
    return {"name": name, "namespaces": namespaces, "killed": len(pids), "was_up": bool(state or namespaces)}


def list_labs():
    labs = []
    if os.path.isdir(LAB_BASE):
        for entry in sorted(os.listdir(LAB_BASE)):
            if os.path.isfile(os.path.join(LAB_BASE, entry, "state.json")):
                labs.append(entry)
    return labs


# --- CLI ------------------------------------------------------------------------

def _log(msg):
    sys.stderr.write(msg + "\n")


def main(argv=None):
    parser = argparse.ArgumentParser(prog="lab.py", description="commcheck test lab: network-namespace hosts "
                                     "with sshd, shaped links and emulated RDMA (tests only)")
    sub = parser.add_subparsers(dest="cmd")
    p = sub.add_parser("up", help="bring a lab up")
    p.add_argument("--name", required=True)
    p.add_argument("--hosts", type=int, required=True)
    p.add_argument("--rails", type=int, default=1)
    p.add_argument("--subnet-base", default=None, help="10.<x>: rail k uses 10.<x>.<k>.0/24 "
                   "(default derived from the name)")
    p.add_argument("--rate", default=DEFAULT_RATE, help="nominal link rate (tc units, e.g. 1gbit; "
                   "'none' = unshaped), default %(default)s")
    p.add_argument("--replace", action="store_true", help="take down a lab of that name first")
    p.add_argument("--tiers", type=int, choices=[1, 2], default=1, help="2: per rail, leaf bridges under a spine "
                   "bridge, uplinks shapeable, lldpctl emulated (default %(default)s: one bridge per rail)")
    p.add_argument("--per-leaf", type=int, default=None, help="hosts per leaf (in order) with --tiers 2")
    p.add_argument("--link-layer", choices=LINK_LAYERS, default=ETHERNET, help="InfiniBand (--tiers 2): the rail "
                   "ports as InfiniBand ports, leaves named by the smpquery EMULATOR (default %(default)s)")
    p = sub.add_parser("down", help="take a lab down (idempotent)")
    p.add_argument("--name", required=True)
    p = sub.add_parser("status", help="show labs")
    p.add_argument("--name")
    p = sub.add_parser("exec", help="run a command in a lab host")
    p.add_argument("--name", required=True)
    p.add_argument("--host", required=True)
    p.add_argument("argv", nargs=argparse.REMAINDER)
    p = sub.add_parser("slow", help="shape one host's link(s) to a lower rate")
    p.add_argument("--name", required=True)
    p.add_argument("--host", required=True)
    p.add_argument("--rail", type=int)
    p.add_argument("--rate", required=True)
    p.add_argument("--direction", choices=["both", "tx", "rx"], default="both",
                   help="what the host sends (tx), receives (rx) or both")
    p = sub.add_parser("slow-uplink", help="shape a leaf's uplink to the spine (--tiers 2)")
    p.add_argument("--name", required=True)
    p.add_argument("--rail", type=int, required=True)
    p.add_argument("--leaf", required=True, help="its number (from 1) or name")
    p.add_argument("--rate", required=True)
    p.add_argument("--direction", choices=["both", "up", "down"], default="both",
                   help="what the leaf sends to the spine (up), gets from it (down) or both")
    p = sub.add_parser("oversubscribe", help="shape every uplink to its leaf's host rate / RATIO (--tiers 2)")
    p.add_argument("--name", required=True)
    p.add_argument("--ratio", type=float, required=True, help="host rate over uplink rate (1: non-blocking)")
    p = sub.add_parser("slow-leaf", help="shape every port of a leaf (--tiers 2)")
    p.add_argument("--name", required=True)
    p.add_argument("--rail", type=int, required=True)
    p.add_argument("--leaf", required=True, help="its number (from 1) or name")
    p.add_argument("--rate", required=True)
    p = sub.add_parser("heal", help="put the nominal rate back")
    p.add_argument("--name", required=True)
    p.add_argument("--host")
    p = sub.add_parser("pids", help="processes left in the lab's namespaces")
    p.add_argument("--name", required=True)
    p.add_argument("--all", action="store_true", help="include the lab's sshd")
    args = parser.parse_args(argv)
    if not args.cmd:
        parser.print_help()
        return 2
    try:
        if args.cmd == "up":
            lab = up(args.name, args.hosts, args.rails, args.subnet_base, args.rate,
                     replace=args.replace, log=_log, tiers=args.tiers, per_leaf=args.per_leaf,
                     link_layer=args.link_layer)
            sys.stdout.write("inventory: %s\nansible.cfg: %s\n" % (lab.inventory, lab.ansible_cfg))
        elif args.cmd == "down":
            down(args.name, log=_log)
        elif args.cmd == "status":
            names = [args.name] if args.name else list_labs()
            out = [Lab.load(n).status() for n in names]
            sys.stdout.write(json.dumps(out, indent=1) + "\n")
        elif args.cmd == "exec":
            argv_ = args.argv[1:] if args.argv[:1] == ["--"] else args.argv
            if not argv_:
                raise LabError("exec needs a command after --")
            lab = Lab.load(args.name)
            return subprocess.call(lab.exec_argv(args.host, argv_))
        elif args.cmd == "slow":
            Lab.load(args.name).slow(args.host, args.rate, rail=args.rail, direction=args.direction)
        elif args.cmd == "oversubscribe":
            Lab.load(args.name).oversubscribe(args.ratio)
        elif args.cmd == "slow-uplink":
            Lab.load(args.name).slow_uplink(args.rail, args.leaf, args.rate, direction=args.direction)
        elif args.cmd == "slow-leaf":
            Lab.load(args.name).slow_leaf(args.rail, args.leaf, args.rate)
        elif args.cmd == "heal":
            Lab.load(args.name).heal(args.host)
        elif args.cmd == "pids":
            found = Lab.load(args.name).pids(include_infra=args.all)
            for info in found:
                sys.stdout.write("%s %d %s %s\n" % (info["host"], info["pid"], info["comm"],
                                                    " ".join(info["cmdline"])))
            return 1 if found and not args.all else 0
    except LabError as exc:
        sys.stderr.write("lab.py: %s\n" % exc)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
