# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""EMULATOR (commcheck lab only): the network the nccl-tests emulator says NCCL used, and its NCCL INFO lines.

Real NCCL uses its IB/RoCE transport (``NET/IB``) when the host has an RDMA
device with an active port, ``NCCL_IB_DISABLE`` is not 1 and ``NCCL_IB_HCA``
(when set) names one; otherwise it falls back to TCP sockets (``NET/Socket``).
The emulator decides the same from the lab host's emulated sysfs, so a healthy
lab (RoCE devices on every rail) reports ``NET/IB`` while the data still moves
over MPI/TCP. A lab fault forces the fall-back on one host: the file
``commcheck-lab/nccl_socket_fallback`` in that host's emulated sysfs root
(``faults.SocketFallback``). One rank without IB makes the whole job use
Socket, as NCCL needs one network for all ranks.

Which lab host a rank runs in is found from its network namespace (ranks
started by mpirun on other hosts do not get the launcher's environment), else
from ``COMMCHECK_LAB_SYSFS``; outside a lab host there is no RDMA device.
"""

from __future__ import absolute_import, division, print_function

import fcntl
import glob
import json
import os
import socket
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
LAB_BASE = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(HERE))), ".build", "lab")
FALLBACK_FILE = os.path.join("commcheck-lab", "nccl_socket_fallback")
# a slow node (faults.SlowCollectiveRuns): every run with a rank there takes this many times as long; the "once"
# file slows the first run that claims it only (a moment of slowness, which a retest does not see again)
SLOW_FILE = os.path.join("commcheck-lab", "nccl_slow_factor")
SLOW_ONCE_FILE = os.path.join("commcheck-lab", "nccl_slow_once_factor")
SIOCGIFADDR = 0x8915


def _read(path):
    try:
        with open(path) as handle:
            return handle.read().strip()
    except (IOError, OSError):
        return ""


def _lab_sysfs_by_netns(lab_base=LAB_BASE):
    """The emulated sysfs root of the lab host whose network namespace this process is in, or None."""
    try:
        mine = os.stat("/proc/self/ns/net").st_ino
    except OSError:
        return None
    for path in glob.glob(os.path.join(lab_base, "*", "state.json")):
        try:
            with open(path) as handle:
                hosts = json.load(handle).get("hosts") or []
        except (IOError, OSError, ValueError):
            continue
        for host in hosts:
            try:
                if os.stat(os.path.join("/run/netns", host["netns"])).st_ino == mine:
                    return os.path.join(os.path.dirname(path), "sysfs", host["name"])
            except (OSError, KeyError, TypeError):
                continue
    return None


def sysfs_root(env):
    """This lab host's emulated sysfs root; None outside the lab (the emulator never reads the real /sys)."""
    return _lab_sysfs_by_netns() or env.get("COMMCHECK_LAB_SYSFS") or None


def _factor(text):
    try:
        return max(1.0, float(text))
    except ValueError:
        return 1.0


def local_slow_factor(root):
    """This host's slow factor: its persistent fault's, else its once-only fault's, claimed by renaming the file
    away (atomic: of the ranks of every run, exactly one gets it)."""
    if root is None:
        return 1.0
    factor = _factor(_read(os.path.join(root, SLOW_FILE)) or "1")
    once = os.path.join(root, SLOW_ONCE_FILE)
    claimed = "%s.used-%d" % (once, os.getpid())
    try:
        os.rename(once, claimed)
    except OSError:
        return factor
    return max(factor, _factor(_read(claimed) or "1"))


def slow_factor(comm, mpi, env):
    """The factor every rank's measured times are multiplied by: the largest of the hosts of this run (one slow
    rank slows a collective for all)."""
    return comm.allreduce(local_slow_factor(sysfs_root(env)), op=mpi.MAX)


def active_ports(root):
    """[(device, port, 'RoCE' | 'IB')] of the RDMA ports that read ACTIVE under ``root``."""
    base = os.path.join(root, "class", "infiniband")
    out = []
    for device in sorted(os.listdir(base)) if os.path.isdir(base) else []:
        ports = os.path.join(base, device, "ports")
        for port in sorted(os.listdir(ports), key=lambda p: int(p) if p.isdigit() else 0) \
                if os.path.isdir(ports) else []:
            if "ACTIVE" in _read(os.path.join(ports, port, "state")):
                layer = _read(os.path.join(ports, port, "link_layer")) or "Ethernet"
                out.append((device, int(port), "RoCE" if layer == "Ethernet" else "IB"))
    return out


def hca_filter(ports, spec):
    """NCCL_IB_HCA: '^' excludes, '=' matches names exactly, else by prefix; 'dev:port' picks a port."""
    spec = (spec or "").strip()
    if not spec:
        return list(ports)
    exclude = spec.startswith("^")
    spec = spec.lstrip("^")
    exact = spec.startswith("=")
    wanted = [w.split(":") for w in spec.lstrip("=").split(",") if w]

    def hit(device, port):
        for item in wanted:
            name_ok = device == item[0] if exact else device.startswith(item[0])
            if name_ok and (len(item) < 2 or item[1] == str(port)):
                return True
        return False
    return [p for p in ports if hit(p[0], p[1]) != exclude]


def rank_ib_ports(env):
    """The RDMA ports this rank would use over NET/IB; [] when NCCL would fall back to NET/Socket."""
    if env.get("NCCL_IB_DISABLE", "0").strip() == "1":
        return []
    root = sysfs_root(env)
    if root is None or os.path.exists(os.path.join(root, FALLBACK_FILE)):
        return []
    return hca_filter(active_ports(root), env.get("NCCL_IB_HCA"))


def _ipv4(ifname):
    """The interface's IPv4 address, or None."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        raw = fcntl.ioctl(sock.fileno(), SIOCGIFADDR, struct.pack("256s", ifname[:15].encode()))
        return socket.inet_ntoa(raw[20:24])
    except OSError:
        return None
    finally:
        sock.close()


def oob_interface(env):
    """The bootstrap interface and address: the first with an IPv4 address that NCCL_SOCKET_IFNAME (a name or
    prefix) allows, else the first that is not lo."""
    try:
        names = [name for _index, name in socket.if_nameindex() if name != "lo"]
    except OSError:
        names = []
    wanted = (env.get("NCCL_SOCKET_IFNAME") or "").lstrip("=")
    if wanted and not wanted.startswith("^"):
        names = [n for n in names if n.startswith(wanted.split(",")[0])] or [wanted.split(",")[0]]
    found = [(n, _ipv4(n)) for n in names]
    with_address = [item for item in found if item[1]]
    name, address = (with_address or found or [("eth0", None)])[0]
    return name, address or "0.0.0.0"


def init_lines(prefix, ib_ports, use_ib, had_devices, oob):
    """This rank's NET lines of NCCL's init: 'NET/IB : Using ...' or 'NET/IB : No device found.' + NET/Socket."""
    ifname, address = oob
    if use_ib:
        using = " ".join("[%d]%s:%d/%s" % (i, dev, port, kind) for i, (dev, port, kind) in enumerate(ib_ports))
        return ["%s NCCL INFO NET/IB : Using %s ; OOB %s:%s<0>\n" % (prefix, using, ifname, address)]
    lines = [] if had_devices else ["%s NCCL INFO NET/IB : No device found.\n" % prefix]
    return lines + ["%s NCCL INFO NET/Socket : Using [0]%s:%s<0>\n" % (prefix, ifname, address)]


def channel_line(prefix, rank, local_rank, peer, peer_local, same_host, network):
    """The ring channel this rank sends on: SHM inside a host, NET/<network>/0 between hosts."""
    if same_host:
        return "%s NCCL INFO Channel 00/0 : %d[%d] -> %d[%d] via SHM/direct/direct\n" % (
            prefix, rank, local_rank, peer, peer_local)
    return "%s NCCL INFO Channel 00/0 : %d[%d] -> %d[%d] [send] via NET/%s/0\n" % (
        prefix, rank, local_rank, peer, peer_local, network)


def debug_lines(comm, hosts, hostname, pid, env, out):
    """Print NCCL_DEBUG=INFO's network lines of every rank; returns the network the job used."""
    rank, nranks = comm.Get_rank(), comm.Get_size()
    local = [sum(1 for r in range(i) if hosts[r] == hosts[i]) for i in range(nranks)]
    ports = rank_ib_ports(env)
    use_ib = all(comm.allgather(bool(ports)))
    network = "IB" if use_ib else "Socket"
    prefix = "%s:%d:%d [%d]" % (hostname, pid, pid, local[rank])
    disabled = env.get("NCCL_IB_DISABLE", "0").strip() == "1"
    for line in init_lines(prefix, ports, use_ib, bool(ports) or disabled, oob_interface(env)):
        out(line)
    comm.Barrier()
    if rank == 0:
        out("%s NCCL INFO Using network %s\n" % (prefix, network))
    comm.Barrier()
    # without P2P and SHM, NCCL sends between the GPUs of one host through the network too (its IB loopback)
    through_net = all(env.get(name, "0").strip() == "1" for name in ("NCCL_P2P_DISABLE", "NCCL_SHM_DISABLE"))
    if nranks > 1:
        peer = (rank + 1) % nranks
        out(channel_line(prefix, rank, local[rank], peer, local[peer], hosts[peer] == hosts[rank] and not through_net,
                         network))
    return network
