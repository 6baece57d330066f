#!/usr/bin/env python
# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""perftest EMULATOR for the commcheck lab (tests only; never used by plugins/).

Run as ``perftest_emulator.py --tool ib_write_bw [perftest options] [server]``
(the lab's ``bin/ib_*`` launchers do that). It takes perftest 4.5/6.x command
lines (same options, same parser errors), prints perftest's output format
(banner, header, address lines, bw / latency tables, the real error lines),
and moves REAL data over TCP between two lab hosts:

- the control connection goes to ``<server>:<port>`` like perftest's
  out-of-band exchange (``-p``, default 18515); the server waits for its
  client forever, like the real one;
- the data path runs between the IPv4 addresses of the chosen RDMA devices:
  device (``-d``) -> port (``-i``) -> GID (``-x``, or the first RoCE v2 IPv4
  GID) in the host's emulated sysfs (``$COMMCHECK_LAB_SYSFS``, default
  ``/sys``) -> the IPv4 address inside that GID, which is the address of the
  rail's veth in the lab host. One TCP connection per QP (``-q``);
- a loopback pair (two devices of one host: the server's address is the
  host's own) moves at most the port's line rate (its sysfs ``rate``), as a
  NIC's loopback would; its data never meets the lab's shaped links;
- bandwidth is bytes moved / time (sender start to receiver's last byte,
  acknowledged); latency is a real TCP ping-pong (half round trip for
  write/send, full round trip for read/atomic).

Emulator-only knobs (environment): bandwidth tests move at least
``PERFTEST_EMULATOR_MIN_BYTES`` (default 4 MiB) and at most
``PERFTEST_EMULATOR_MAX_BYTES`` (default unlimited) per message size and QP
(the table shows the requested iterations; the rates are those of the bytes
really moved), latency tests do at most MAX_BYTES worth of exchanges per size;
``PERFTEST_EMULATOR_GPUS`` is the number of GPUs ``--use_cuda`` may pick
(default: the NVIDIA GPU PCI functions of the emulated sysfs, none without
one). ``--use_cuda=N`` / ``--use_cuda_dmabuf`` print the lines perftest's
src/cuda_memory.c prints (23.07-25.01 wording) and move the same bytes over
the same link as host memory, unless the GPU's path is slowed (``gpu_rate_mbit_<N>``
below).

Lab faults read from files under ``$COMMCHECK_LAB_SYSFS/commcheck-lab/``:
``gpu_rate_mbit_<N>`` (``gpu_pace_if_asked``: a side whose buffer is in GPU N,
``--use_cuda=N``, sends and receives at most that many Mbit/s, as a GPU whose
PCIe path trained down would), ``perftest_hang_<side>`` (``hang_if_asked``: the first such process stops
itself), ``perftest_junk`` (``junk_if_asked``: every process prints that many
bytes of garbage before its output) and ``answer_delay_us_<device>`` / ``answer_delay_us_<device>_to_<peer
address>`` (``answer_delay``: a latency test waits that long before each
message the device sends, to every peer or to that one).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import fcntl
import getopt
import json
import math
import os
import random
import re
import select
import signal
import socket
import struct
import sys
import threading
import time

SIOCGIFADDR = 0x8915    # linux/sockios.h: an interface's IPv4 address
VERSION = "6.06"
RESULT_LINE = "-" * 87 + "\n"
RESULT_FMT = " #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]"
RESULT_FMT_G = " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]"
RESULT_FMT_LAT = (" #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]"
                  "    t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] ")
RESULT_FMT_LAT_DUR = " #bytes        #iterations       t_avg[usec]    tps average"
REPORT_FMT = " %-7lu    %-10lu       %-7.2f            %-7.2f\t\t   %-7.6f"
REPORT_FMT_LAT = (" %-7lu %d          %-7.2f        %-7.2f      %-7.2f  \t       %-7.2f     \t%-7.2f"
                  "\t\t%-7.2f \t\t%-7.2f")
REPORT_FMT_LAT_DUR = " %-7lu       %d            %-7.2f        %-7.2f"
WAITING = ("\n************************************\n"
           "* Waiting for client to connect... *\n"
           "************************************\n")
TESTS = {"send": "Send", "write": "RDMA_Write", "read": "RDMA_Read", "atomic": "Atomic"}
DEF_PORT = 18515
QUIET_NO_DEVICE = ("ib_read_bw", "ib_atomic_bw")
MAX_SIZE = 8388608
CHUNK = 1 << 20
PEAK_WINDOW_S = 0.05
DEFAULT_MIN_BYTES = 4 * 2 ** 20
POST_CONNECT_TIMEOUT_S = 60.0
SO_BINDTODEVICE = getattr(socket, "SO_BINDTODEVICE", 25)

# short options: with argument / flags, per tool family (a superset is accepted by
# getopt, like perftest's shared parser; tool-specific checks come after)
SHORT_ARG = "AcdDfiIlLmMnopqQrsStTuwWxXy"
SHORT_FLAG = "abCeFghHNORUVz"
LONG_ARG = [
    "atomic_type", "connection", "ib-dev", "duration", "margin", "ib-port", "inline_size", "post_list",
    "hop_limit", "mtu", "MGID", "iters", "outs", "port", "qp", "cq-mod", "rx-depth", "size", "sl",
    "tx-depth", "tos", "qp-timeout", "limit_bw", "report-counters", "gid-index", "vector", "limit_msgrate",
    "out_json_file", "force-link", "source_ip", "dlid", "mmap", "mmap-offset", "output", "pkey_index",
    "retry_count", "tclass", "wait_destroy", "use_cuda", "use_rocm", "use_neuron", "use_hl", "rate_limit",
    "rate_units", "rate_limit_type", "burst_size", "typical_pkt_size", "recv_post_list", "inline_recv",
    "latency_gap", "log_dci_streams", "log_active_dci_streams", "aes_block_size", "data_enc_keys_number",
    "kek_path", "credentials_path", "data_enc_key_app_path", "flows", "flows_burst", "server_ip",
    "client_ip", "server_port", "client_port", "source_mac", "dest_mac", "flow_label", "vlan_pcp",
]
LONG_FLAG = [
    "all", "bidirectional", "report-cycles", "events", "CPU-freq", "mcg", "help", "report-histogram",
    "noPeak", "dualport", "rdma_cm", "report-unsorted", "version", "com_rdma_cm", "out_json", "cpu_util",
    "dont_xchg_versions", "ipv6", "mr_per_qp", "odp", "use_old_post_send", "perform_warm_up",
    "report-both", "report_gbits", "report-per-port", "reversed", "run_infinitely", "use_hugepages",
    "disable_pcie_relaxed", "aes_xts", "encrypt_on_tx", "sig_before", "use_cuda_dmabuf", "use_ooo",
]
LONG_TO_SHORT = {
    "all": "a", "bidirectional": "b", "connection": "c", "ib-dev": "d", "duration": "D", "margin": "f",
    "CPU-freq": "F", "help": "h", "ib-port": "i", "inline_size": "I", "post_list": "l", "hop_limit": "L",
    "mtu": "m", "iters": "n", "noPeak": "N", "dualport": "O", "port": "p", "qp": "q", "cq-mod": "Q",
    "rdma_cm": "R", "size": "s", "sl": "S", "tx-depth": "t", "tos": "T", "qp-timeout": "u",
    "version": "V", "limit_bw": "w", "report-counters": "W", "gid-index": "x", "limit_msgrate": "y",
    "com_rdma_cm": "z", "report-cycles": "C", "events": "e", "vector": "X", "report-histogram": "H",
    "report-unsorted": "U", "outs": "o", "atomic_type": "A", "rx-depth": "r", "mcg": "g", "MGID": "M",
}


class Fail(Exception):
    """Exit with perftest's error lines (stderr) and rc 1."""

    def __init__(self, lines, rc=1, stdout=""):
        Exception.__init__(self, lines)
        self.lines = lines
        self.rc = rc
        self.stdout = stdout


def out(text):
    sys.stdout.write(text)
    sys.stdout.flush()


def strtol(text):
    """C strtol(text, NULL, 0): leading number (0x hex, 0 octal), 0 when none."""
    text = text.strip()
    sign = 1
    if text[:1] in "+-":
        sign = -1 if text[0] == "-" else 1
        text = text[1:]
    base, digits = 10, "0123456789"
    if text[:2].lower() == "0x":
        base, digits, text = 16, "0123456789abcdefABCDEF", text[2:]
    elif text[:1] == "0" and len(text) > 1:
        base, digits = 8, "01234567"
    num = ""
    for char in text:
        if char not in digits:
            break
        num += char
    return sign * int(num, base) if num else 0


def is_int(text):
    try:
        int(text, 0)
        return True
    except ValueError:
        return False


# --- parameters ----------------------------------------------------------------

class Params(object):
    def __init__(self, tool):
        self.tool = tool
        parts = tool.split("_")          # ib_write_bw
        self.verb = parts[1]
        self.metric = parts[2]
        self.device = None
        self.ib_port = 1
        self.gid_index = None
        self.port = DEF_PORT
        self.size = 8 if self.verb == "atomic" else (65536 if self.metric == "bw" else 2)
        self.iters = 5000 if (self.verb == "write" and self.metric == "bw") else 1000
        self.duration = None
        self.all_sizes = False
        self.qps = 1
        self.bidir = False
        self.rdma_cm = False
        self.mtu = None
        self.connection = "RC"
        self.tx_depth = 128 if self.metric == "bw" else 1
        self.report_gbits = False
        self.no_peak = False
        self.out_json = False
        self.out_json_file = "perftest_out.json"
        self.use_cuda = None
        self.use_cuda_dmabuf = False
        self.tos = None
        self.sl = 0
        self.tclass = None
        self.server = None
        self.cpu_freq_f = False
        self.atomic_type = "FETCH_AND_ADD"
        self.outs = 16
        self.size_given = False


def usage(tool):
    return ("perftest EMULATOR (commcheck lab; data over TCP, not RDMA)\nUsage:\n  %s            start a server and wait for connection\n"
            "  %s <host>     connect to server at <host>\n\n"
            "Options: those of perftest %s (see the real tool's --help)\n" % (tool, tool, VERSION))


def parse(tool, argv):
    p = Params(tool)
    longs = [name + "=" for name in LONG_ARG] + list(LONG_FLAG)
    short = "".join(c + ":" for c in SHORT_ARG) + SHORT_FLAG
    try:
        opts, args = getopt.gnu_getopt(argv, short, longs)
    except getopt.GetoptError as exc:
        opt = exc.opt or ""
        shown = ("--" + opt) if len(opt) > 1 else ("-" + opt)
        if "requires argument" in exc.msg:
            first = "%s: option requires an argument -- '%s'" % (tool, opt) if len(opt) == 1 else \
                "%s: option '%s' requires an argument" % (tool, shown)
        elif "not a unique prefix" in exc.msg:
            first = "%s: option '%s' is ambiguous" % (tool, shown)
        elif len(opt) == 1:
            first = "%s: invalid option -- '%s'" % (tool, opt)
        else:
            first = "%s: unrecognized option '%s'" % (tool, shown)
        raise Fail([first, " Invalid Command or flag.", " Please check command line and run again.", "",
                    " Parser function exited with Error"], stdout=usage(tool))
    for opt, val in opts:
        key = opt.lstrip("-")
        key = LONG_TO_SHORT.get(key, key) if opt.startswith("--") else key
        _apply(p, key, val)
    if len(args) > 1:
        raise Fail([" Invalid Command line. Please check command rerun ", " Parser function exited with Error"])
    p.server = args[0] if args else None
    if p.metric == "lat" and p.qps > 1:
        raise Fail([" Multiple QPs only available on bw tests", " Parser function exited with Error"])
    if p.metric == "lat" and p.bidir:
        raise Fail([" Bidirectional is only available in BW test", " Parser function exited with Error"])
    if p.tos is not None and not p.rdma_cm:
        raise Fail([], stdout=" TOS only valid for rdma_cm based QP and RawEth QP \n")
    if p.verb == "atomic" and (p.size_given or p.all_sizes):
        raise Fail([], stdout=RESULT_LINE + "Message size cannot be changed for Atomic tests \n")
    if p.duration is not None and p.all_sizes:
        raise Fail([], stdout=RESULT_LINE + "Duration mode currently doesn't support running on all sizes.\n")
    if p.use_cuda_dmabuf and p.use_cuda is None:
        raise Fail(["CUDA DMA-BUF cannot be used without CUDA", " Parser function exited with Error"])
    return p


def _int_arg(val, name, low, high, kind="int"):
    if not is_int(val.strip()):
        raise Fail([" %s argument %s should be %s" % (name, val, kind), " Parser function exited with Error"])
    num = strtol(val)
    if num < low or num > high:
        raise Fail([" %s should be between %d and %d" % (name, low, high), " Parser function exited with Error"])
    return num


def _size_arg(val):
    text = val.strip()
    mult = 1
    if text[-1:] in "kK":
        mult, text = 1024, text[:-1]
    elif text[-1:] in "mM":
        mult, text = 1024 ** 2, text[:-1]
    elif text[-1:] in "gG":
        mult, text = 1024 ** 3, text[:-1]
    num = strtol(text) * mult
    if num < 1 or num > 2147483647:
        raise Fail([" Message Size should be between 1 and 2147483647", " Parser function exited with Error"])
    return num


def _apply(p, key, val):  # pylint: disable=too-many-branches
    if key == "h":
        out(usage(p.tool))
        raise Fail([], rc=0)
    if key == "V":
        out("Version: %s\n" % VERSION)
        raise Fail([], rc=0)
    if key == "d":
        p.device = val
    elif key == "i":
        p.ib_port = _int_arg(val, "IB Port", 1, 3)
    elif key == "x":
        if not is_int(val.strip()):
            raise Fail([" Gid index argument %s should be uint8_t" % val, " Parser function exited with Error"])
        p.gid_index = strtol(val)
    elif key == "p":
        p.port = strtol(val)
    elif key == "s":
        p.size = _size_arg(val)
        p.size_given = True
    elif key == "a":
        p.all_sizes = True
    elif key == "n":
        p.iters = _int_arg(val, "Iteration num", 5, 100000000)
    elif key == "D":
        p.duration = strtol(val)
        if p.duration <= 0:
            raise Fail([" Duration period must be positive", " Parser function exited with Error"])
    elif key == "q":
        p.qps = _int_arg(val, "num of Qps", 1, 16384)
    elif key == "b":
        p.bidir = True
    elif key == "R":
        p.rdma_cm = True
    elif key == "m":
        p.mtu = strtol(val)
    elif key == "c":
        conn = val.strip().upper()
        if conn not in ("RC", "UC", "UD", "XRC", "DC", "SRD"):
            raise Fail([" Invalid Connection type. Please choose from {RC,UC,UD,XRC,DC,SRD}"])
        p.connection = conn
    elif key == "t":
        p.tx_depth = _int_arg(val, "Tx depth", 1, 15000)
    elif key == "S":
        p.sl = strtol(val)
        if p.sl < 0 or p.sl > 15:
            raise Fail([" Only 15 Service levels", " Parser function exited with Error"])
    elif key == "T":
        p.tos = strtol(val)
    elif key == "tclass":
        p.tclass = strtol(val)
    elif key == "F":
        p.cpu_freq_f = True
    elif key == "N":
        p.no_peak = True
    elif key == "report_gbits":
        p.report_gbits = True
    elif key == "out_json":
        p.out_json = True
    elif key == "out_json_file":
        p.out_json_file = val
        p.out_json = True
    elif key == "use_cuda":
        p.use_cuda = strtol(val)
        if p.use_cuda < 0:
            raise Fail([" CUDA device must be non-negative int"])
    elif key == "use_cuda_dmabuf":
        p.use_cuda_dmabuf = True
    elif key == "A":
        if val not in ("CMP_AND_SWAP", "FETCH_AND_ADD"):
            raise Fail([" Invalid Atomic type! please choose from {CMP_AND_SWAP,FETCH_AND_ADD}",
                        " Parser function exited with Error"])
        p.atomic_type = val
    elif key == "o":
        p.outs = strtol(val)
    # every other option is accepted and has no effect on the emulation


# --- the emulated device (sysfs) -------------------------------------------------

def _read(path):
    try:
        with open(path) as handle:
            return handle.read().strip()
    except (IOError, OSError):
        return ""


class Device(object):
    """Device -> port -> GID -> IPv4 address, read from the host's emulated sysfs."""

    def __init__(self, p):
        self.sysfs = os.environ.get("COMMCHECK_LAB_SYSFS") or "/sys"
        base = os.path.join(self.sysfs, "class", "infiniband")
        names = sorted(os.listdir(base)) if os.path.isdir(base) else []
        # Debian's perftest 4.5+0.17: ib_read_bw / ib_atomic_bw leave out the last
        # line and exit 7 where the other tools print it and exit 1 (checked there).
        quiet = p.tool in QUIET_NO_DEVICE
        last = [] if quiet else [" Unable to find the Infiniband/RoCE device"]
        if not names:
            raise Fail([" Did not detect devices ", " If device exists, check if driver is up"] + last,
                       rc=7 if quiet else 1)
        if p.device is None:
            p.device = names[0]
        elif p.device not in names:
            raise Fail(["IB device %s not found" % p.device] + last, rc=7 if quiet else 1)
        self.name = p.device
        self.pdir = os.path.join(base, p.device, "ports", str(p.ib_port))
        if not os.path.isdir(self.pdir):
            raise Fail([" Unable to query port %d attributes" % p.ib_port, " Couldn't set the link layer",
                        " Couldn't get context for the device"])
        state = _read(os.path.join(self.pdir, "state"))
        if "ACTIVE" not in state:
            word = state.split(":")[-1].strip().capitalize() if state else "Down"
            raise Fail([" Port number %d state is %s" % (p.ib_port, word), " Couldn't set the link layer",
                        " Couldn't get context for the device"])
        self.link_layer = _read(os.path.join(self.pdir, "link_layer")) or "Ethernet"
        # an InfiniBand port addressed by its LID (no -x): the LID is what perftest shows, no GID
        self.lid = _lid(self.pdir) if self.link_layer == "InfiniBand" and p.gid_index is None else None
        if p.gid_index is None:
            p.gid_index = self._best_gid()
        self.gid_index = p.gid_index
        self.gid = _read(os.path.join(self.pdir, "gids", str(p.gid_index)))
        self.address = _gid_ipv4(self.gid)
        if self.address is None and self.link_layer == "InfiniBand":
            # an InfiniBand GID holds no IPv4 address: the data path runs over the port's IPoIB netdev
            self.address = _netdev_ipv4(os.path.join(base, p.device, "device", "net"))
        self.netdev = _read(os.path.join(self.pdir, "gid_attrs", "ndevs", str(p.gid_index))) or None
        self.mtu = 1024 if self.link_layer == "Ethernet" else 4096
        if p.mtu:
            self.mtu = p.mtu
        self.rate_bps = _port_rate_bps(self.pdir)

    def _best_gid(self):
        gdir = os.path.join(self.pdir, "gids")
        best = 0
        for name in sorted(os.listdir(gdir), key=int) if os.path.isdir(gdir) else []:
            kind = _read(os.path.join(self.pdir, "gid_attrs", "types", name))
            if kind == "RoCE v2" and _gid_ipv4(_read(os.path.join(gdir, name))):
                return int(name)
        return best


def _port_rate_bps(pdir):
    """The port's line rate in bits/s from its ``rate`` file ('0.5 Gb/sec (4X)'), or None."""
    match = re.match(r"\s*([0-9.]+)\s*Gb/sec", _read(os.path.join(pdir, "rate")))
    try:
        return float(match.group(1)) * 1e9 if match else None
    except ValueError:
        return None


def _lid(pdir):
    try:
        return int(_read(os.path.join(pdir, "lid")), 16)
    except ValueError:
        return None


def _netdev_ipv4(net_dir):
    """The IPv4 address (in this host's network namespace) of the first netdev under ``net_dir``, or None."""
    names = sorted(os.listdir(net_dir)) if os.path.isdir(net_dir) else []
    for name in names:
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            packed = fcntl.ioctl(sock.fileno(), SIOCGIFADDR, struct.pack("256s", name[:15].encode("utf-8")))
            return socket.inet_ntoa(packed[20:24])
        except (IOError, OSError):
            continue
        finally:
            sock.close()
    return None


def _gid_ipv4(gid):
    groups = gid.split(":") if gid else []
    if len(groups) == 8 and all(g.lower() == "0000" for g in groups[:5]) and groups[5].lower() == "ffff":
        raw = int(groups[6], 16) << 16 | int(groups[7], 16)
        return socket.inet_ntoa(struct.pack("!I", raw))
    return None


def gid_bytes_text(address):
    raw = [0] * 10 + [255, 255] + list(socket.inet_aton(address)) if address else [0] * 16
    return ":".join("%02d" % b for b in raw)


# --- printing --------------------------------------------------------------------

def header(p, dev, side):
    title = TESTS[p.verb] + " "
    if p.verb == "atomic":
        title += p.atomic_type + " "
    if p.metric == "bw":
        title += ("Bidirectional " if p.bidir else "") + "BW "
    else:
        title += "Latency "
    lines = [RESULT_LINE.rstrip("\n"), "                    " + title + "Test",
             " Dual-port       : OFF\t\tDevice         : %s" % dev.name,
             " Number of qps   : %d\t\tTransport type : IB" % p.qps,
             " Connection type : %s\t\tUsing SRQ      : OFF" % p.connection,
             " PCIe relax order: ON",
             " ibv_wr* API     : ON"]
    if side == "client" or p.bidir:
        lines.append(" TX depth        : %d" % p.tx_depth)
    if p.verb == "send" and (side == "server" or p.bidir):
        lines.append(" RX depth        : %d" % (512 if p.metric == "bw" else 1))
    if p.metric == "bw":
        lines.append(" CQ Moderation   : %d" % min(100, p.tx_depth))
    # perftest's own spelling of an InfiniBand link
    lines += [" Mtu             : %d[B]" % dev.mtu,
              " Link type       : %s" % ("IB" if dev.link_layer == "InfiniBand" else dev.link_layer)]
    if dev.link_layer == "Ethernet":
        lines.append(" GID index       : %d" % dev.gid_index)
    if p.verb in ("read", "atomic"):
        lines.append(" Outstand reads  : %d" % p.outs)
    else:
        inline = 0 if p.metric == "bw" else (220 if p.verb == "write" else 236)
        lines.append(" Max inline data : %d[B]" % inline)
    lines += [" rdma_cm QPs\t : %s" % ("ON" if p.rdma_cm else "OFF"),
              " Data ex. method : %s" % ("rdma_cm" if p.rdma_cm else "Ethernet"),
              RESULT_LINE.rstrip("\n")]
    return "\n".join(lines) + "\n"


def address_lines(p, qpns, address, side, lid=None):
    """The address lines of one side; ``lid`` (an InfiniBand port's, without ``-x``): ``LID 0x0b`` and no GID line,
    as perftest prints them on InfiniBand."""
    rng = random.Random("%s-%s-%s" % (address, side, qpns))
    lines = []
    for qpn in qpns:
        text = " %s address: LID %s QPN %#06x PSN %#06x" % (side, "%#04x" % lid if lid is not None else "0000", qpn,
                                                            rng.randrange(1 << 24))
        if p.verb == "read":
            text += " OUT %#04x" % p.outs
        if p.verb in ("read", "write", "atomic"):
            text += " RKey %#08x VAddr %#016x" % (rng.randrange(1 << 24), rng.randrange(1 << 47))
        lines.append(text)
        if lid is None:
            lines.append(" GID: %s" % gid_bytes_text(address))
    return "\n".join(lines) + "\n"


def bw_row(p, size, iters, peak_bps, avg_bps, msgs_per_s):
    if p.report_gbits:
        peak, avg = peak_bps / 1e9, avg_bps / 1e9
    else:
        peak, avg = peak_bps / 8 / 2 ** 20, avg_bps / 8 / 2 ** 20
    return REPORT_FMT % (size, iters, peak, avg, msgs_per_s / 1e6) + "\n"


def lat_stats(samples_us):
    """perftest's latency statistics of the round trips, but for ``t_typical``: its 1st percentile, not its median.

    The emulated NIC's latency is what the path gives when both ends run at once. The lab's hosts share this
    machine's two cores, and the product runs every pair of a round at once: with 16 emulated pairs at once the
    floor of each pair stayed at 13-16 us while the medians were 70-220 us, and pairs that start and end at
    different times saw medians 3 x apart. That is the scheduler of one machine, which a real NIC's latency does
    not include. Injected faults (``answer_delay``) delay every message, so they raise the floor as well.
    """
    data = sorted(samples_us)
    count = len(data)
    if not count:
        return None
    avg = sum(data) / count
    var = sum((x - avg) ** 2 for x in data) / count
    return {"t_min": data[0], "t_max": data[-1], "t_typical": data[count // 100], "t_avg": avg,
            "t_stdev": math.sqrt(var), "p99": data[min(count - 1, int(math.ceil(count * 0.99)) - 1)],
            "p99_9": data[min(count - 1, int(math.ceil(count * 0.999)) - 1)]}


# --- control channel --------------------------------------------------------------

class Control(object):
    def __init__(self, sock):
        self.sock = sock
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.reader = sock.makefile("rb")

    def send(self, msg):
        self.sock.sendall((json.dumps(msg) + "\n").encode("utf-8"))

    def recv(self):
        line = self.reader.readline()
        if not line:
            raise Fail([" Failed to exchange data between server and clients"])
        return json.loads(line.decode("utf-8"))


def sizes_of(p):
    if p.all_sizes:
        return [1 << i for i in range(1, 24)]
    return [p.size]


def max_bytes():
    text = os.environ.get("PERFTEST_EMULATOR_MAX_BYTES", "")
    return int(text) if text.isdigit() and int(text) > 0 else None


def min_bytes():
    text = os.environ.get("PERFTEST_EMULATOR_MIN_BYTES", "")
    return int(text) if text.isdigit() else DEFAULT_MIN_BYTES


def effective_iters(p, size):
    """Latency: the exchanges really done (at most PERFTEST_EMULATOR_MAX_BYTES per size)."""
    cap = max_bytes()
    if cap and size * p.iters > cap:
        return max(5, cap // size)
    return p.iters


def volume_msgs(p, size):
    """Bandwidth: messages moved per QP for one size.

    The requested iterations, but at least PERFTEST_EMULATOR_MIN_BYTES (so a
    shaped link's token-bucket burst cannot inflate small transfers) and at
    most PERFTEST_EMULATOR_MAX_BYTES. The table still shows the requested
    iterations; the rates are those of the volume really moved.
    """
    msgs = p.iters
    low = min_bytes()
    if size * msgs < low:
        msgs = -(-low // size)
    cap = max_bytes()
    if cap and size * msgs > cap:
        msgs = max(1, cap // size)
    return msgs


# --- data path: bandwidth -----------------------------------------------------------

# the pace of this process's data path in bits/s (gpu_pace_if_asked), None for none
PACE = {"bps": None}


def gpu_pace_if_asked(p):
    """Lab fault ``faults.SlowGpuPath``: a side whose buffer is in GPU N (``--use_cuda=N``) moves at most the
    Mbit/s of ``<sysfs>/commcheck-lab/gpu_rate_mbit_<N>``."""
    root = os.environ.get("COMMCHECK_LAB_SYSFS")
    if not root or p.use_cuda is None:
        return
    text = _read(os.path.join(root, "commcheck-lab", "gpu_rate_mbit_%d" % p.use_cuda))
    if text.isdigit() and int(text) > 0:
        PACE["bps"] = int(text) * 1e6


def line_rate_if_loopback(dev, peer_address):
    """A loopback pair (the peer is this host's own address) moves at most its port's line rate, as a real
    NIC's loopback does: over ``lo`` the lab's data would otherwise go as fast as the CPU lets it, a rate that
    no NIC has and that a loaded machine spreads threefold between hosts."""
    if dev.rate_bps and peer_address and is_local(peer_address):
        PACE["bps"] = min(PACE["bps"] or dev.rate_bps, dev.rate_bps)


def _paced(start, moved):
    """Sleep until ``moved`` bytes since ``start`` are within the pace (PACE), if there is one."""
    if PACE["bps"]:
        ahead = moved * 8 / PACE["bps"] - (time.monotonic() - start)
        if ahead > 0:
            time.sleep(ahead)


def _sender(sock, size, iters, deadline, result):
    """Send iters messages of size bytes (or until deadline); count messages."""
    payload = bytearray(max(size, min(CHUNK, size * max(1, CHUNK // size))))
    per_chunk = max(1, len(payload) // size)
    view = memoryview(payload)
    sent_msgs = 0
    start = time.monotonic()
    try:
        if deadline is None:
            left = iters
            while left > 0:
                take = min(left, per_chunk)
                sock.sendall(view[:take * size])
                left -= take
                _paced(start, (iters - left) * size)
            sent_msgs = iters
        else:
            while time.monotonic() < deadline:
                sock.sendall(view[:per_chunk * size])
                sent_msgs += per_chunk
                _paced(start, sent_msgs * size)
            sock.shutdown(socket.SHUT_WR)
    except OSError as exc:
        result["error"] = str(exc)
    result["msgs"] = sent_msgs


def _receiver(sock, expected, result):
    """Receive expected bytes (None: until EOF); keep per-window byte counts for the peak."""
    buf = bytearray(CHUNK)
    got = 0
    first = last = None
    windows = []
    win_start = None
    win_bytes = 0
    try:
        while expected is None or got < expected:
            want = CHUNK if expected is None else min(CHUNK, expected - got)
            count = sock.recv_into(buf, want)
            if count == 0:
                break
            now = time.monotonic()
            if first is None:
                first = win_start = now
            got += count
            _paced(first, got)
            last = now
            win_bytes += count
            if now - win_start >= PEAK_WINDOW_S:
                windows.append((win_bytes, now - win_start))
                win_start, win_bytes = now, 0
    except OSError as exc:
        result["error"] = str(exc)
    result.update({"bytes": got, "first": first, "last": last, "windows": windows})


def run_bw_size(p, ctl, conns, size, sending, receiving, iters):
    """One message size: start senders/receivers, sync through ctl; return my-direction stats."""
    deadline = time.monotonic() + p.duration if p.duration else None
    tx_results = [{} for _conn in conns]
    rx_results = [{} for _conn in conns]
    threads = []
    t0 = time.monotonic()
    if sending:
        for conn, res in zip(conns, tx_results):
            threads.append(threading.Thread(target=_sender, args=(conn, size, iters, deadline, res)))
    rx_threads = []
    if receiving:
        expected = None if p.duration else size * iters
        for conn, res in zip(conns, rx_results):
            rx_threads.append(threading.Thread(target=_receiver, args=(conn, expected, res)))
    for thread in threads + rx_threads:
        thread.daemon = True
        thread.start()
    for thread in rx_threads:
        thread.join()
    if receiving:
        errors = [r["error"] for r in rx_results if r.get("error")]
        peak = 0.0
        for res in rx_results:
            for nbytes, secs in res["windows"]:
                peak = max(peak, nbytes * 8 / secs)
        ctl.send({"rx_done": True, "bytes": sum(r["bytes"] for r in rx_results),
                  "peak_bps": peak * len(rx_results), "errors": errors})
    for thread in threads:
        thread.join()
    mine = None
    if sending:
        peer = ctl.recv()
        while not peer.get("rx_done"):
            peer = ctl.recv()
        t1 = time.monotonic()
        errors = [r["error"] for r in tx_results if r.get("error")] + peer.get("errors", [])
        if errors:
            raise Fail([" Completion with error at client", " Failed status 12: wr_id 0 syndrom 0x81",
                        "scnt=%d, ccnt=0" % p.tx_depth,
                        " Failed to complete run_iter_bw function successfully"])
        secs = max(t1 - t0, 1e-9)
        msgs = sum(r.get("msgs", 0) for r in tx_results)
        avg = peer["bytes"] * 8 / secs
        peak = max(avg, peer.get("peak_bps", 0.0))
        if p.duration or p.no_peak:
            peak = 0.0
        mine = {"size": size, "iters": (msgs // max(1, len(conns))) if p.duration else p.iters,
                "peak_bps": peak, "avg_bps": avg, "msg_rate": msgs / secs}
    elif receiving:
        # a pure receiver still waits for the sender's end of the size
        pass
    return mine


# --- data path: latency ----------------------------------------------------------

def _recv_exact(sock, view, count):
    got = 0
    while got < count:
        num = sock.recv_into(view[got:count], count - got)
        if num == 0:
            raise OSError("connection closed")
        got += num


def answer_delay(dev, peer=None):
    """Lab faults ``faults.LateNic`` and ``faults.LateLink``: seconds this device waits before each latency
    message it sends, from ``<sysfs>/commcheck-lab/answer_delay_us_<device>`` (to every peer) and
    ``answer_delay_us_<device>_to_<peer address>`` (to that peer only); 0 when there is none."""
    root = os.environ.get("COMMCHECK_LAB_SYSFS")
    if not root:
        return 0.0
    names = ["answer_delay_us_%s" % dev.name] + (["answer_delay_us_%s_to_%s" % (dev.name, peer)] if peer else [])
    texts = [_read(os.path.join(root, "commcheck-lab", name)) for name in names]
    return sum(int(text) for text in texts if text.isdigit()) / 1e6


def run_lat_size(p, conn, size, iters, active, delay=0.0):
    """Ping-pong. active (client) starts each exchange; returns samples in usec. delay: seconds to wait
    before each send (answer_delay)."""
    req = 8 if p.verb in ("read", "atomic") else size
    resp = size if p.verb in ("read", "atomic") else size
    buf = bytearray(max(req, resp))
    view = memoryview(buf)
    samples = []
    deadline = time.monotonic() + p.duration if p.duration else None
    half = p.verb in ("write", "send")
    done = 0
    last_send = None
    while True:
        if deadline is not None and active and time.monotonic() >= deadline:
            conn.sendall(b"\xff" * req)     # stop marker (first byte 0xff, never sent otherwise)
            break
        if deadline is None and done >= iters:
            break
        if active:
            buf[0] = 0
            start = time.monotonic()
            if delay:
                time.sleep(delay)
            conn.sendall(view[:req])
            _recv_exact(conn, view, resp)
            samples.append((time.monotonic() - start) * 1e6 / (2 if half else 1))
        else:
            _recv_exact(conn, view, req)
            if buf[0] == 0xff:
                break
            if delay:
                time.sleep(delay)
            now = time.monotonic()
            conn.sendall(view[:resp])
            if last_send is not None and half:
                samples.append((now - last_send) * 1e6 / 2)
            last_send = now
        done += 1
    return samples, done


# --- sides -----------------------------------------------------------------------

def emulated_gpus():
    """GPU PCI addresses: PERFTEST_EMULATOR_GPUS of them, else the NVIDIA GPUs of the emulated sysfs."""
    given = os.environ.get("PERFTEST_EMULATOR_GPUS", "")
    if given.isdigit():
        return ["0000:%02x:00.0" % (0x80 + idx) for idx in range(int(given))]
    base = os.path.join(os.environ.get("COMMCHECK_LAB_SYSFS") or "/nonexistent", "bus", "pci", "devices")
    found = []
    for pci in sorted(os.listdir(base)) if os.path.isdir(base) else []:
        try:
            with open(os.path.join(base, pci, "vendor")) as vendor, open(os.path.join(base, pci, "class")) as klass:
                if vendor.read().strip() == "0x10de" and klass.read().strip().startswith("0x03"):
                    found.append(pci)
        except OSError:
            continue
    return found


def cuda_lines(p):
    """What perftest's CUDA memory prints (src/cuda_memory.c: init_gpu, then the buffer's allocation)."""
    if p.use_cuda is None:
        return
    out("initializing CUDA\n")
    gpus = emulated_gpus()
    if not gpus:
        out("There are no available device(s) that support CUDA\n")
        raise Fail(["Couldn't init GPU context: 1", "Failed to init memory", " Couldn't create IB resources"])
    if p.use_cuda >= len(gpus):
        raise Fail(["No such device ID (%d) exists in system" % p.use_cuda, "Couldn't init GPU context: 1",
                    "Failed to init memory", " Couldn't create IB resources"])
    out("Listing all CUDA devices in system:\n")
    for idx, pci in enumerate(gpus):
        out("CUDA device %d: PCIe address is %s:%s\n" % (idx, pci[5:7].upper(), pci[8:10].upper()))
    out("\nPicking device No. %d\n[pid = %d, dev = %d] device name = [NVIDIA H100 80GB HBM3 (EMULATED)]\n"
        "creating CUDA Ctx\nmaking it the current CUDA Ctx\n" % (p.use_cuda, os.getpid(), p.use_cuda))
    size = (1 << 23 if p.all_sizes else p.size) * 2 * max(1, p.qps)
    address = 0x7f0000000000 + (p.use_cuda << 32)
    out("CUDA device integrated: 0\ncuMemAlloc() of a %d bytes GPU buffer\n"
        "allocated GPU buffer address at %016x pointer=%#x\n" % (size, address, address))
    if p.use_cuda_dmabuf:
        out("using DMA-BUF for GPU buffer address at %#x aligned at %#x with aligned size %d\n"
            % (address, address, (size + 4095) // 4096 * 4096))


def is_local(address):
    """Whether ``address`` is one of this lab host's own: a loopback pair (two devices of one host), whose data the
    kernel carries over ``lo`` whatever device a socket is bound to."""
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.bind((address, 0))
        return True
    except (OSError, TypeError):
        return False
    finally:
        probe.close()


def bind_device(sock, dev, peer_address=None):
    """Keep the data path on the device's own netdev (like a NIC port); not towards another device of this host (a
    socket bound to one netdev never meets one bound to another over ``lo``): that data stays in the host, as a
    real loopback's crosses only the host's own NICs, so a lab fault shaping the rails' links never slows it."""
    if dev.netdev and not (peer_address and is_local(peer_address)):
        try:
            sock.setsockopt(socket.SOL_SOCKET, SO_BINDTODEVICE, dev.netdev.encode() + b"\0")
        except OSError:
            pass


def connect_fail(p, reason):
    if p.rdma_cm:
        return Fail(["Failed to connect RDMA CM events.", "ERRNO: %s." % reason,
                     " Unable to perform rdma_client function"])
    return Fail(["Couldn't connect to %s:%d" % (p.server, p.port),
                 "Unable to open file descriptor for socket connection Unable to init the socket connection"])


def hello(p, dev):
    return {"tool": p.tool, "size": p.size, "iters": p.iters, "all": p.all_sizes, "duration": p.duration,
            "qps": p.qps, "bidir": p.bidir, "address": dev.address, "lid": dev.lid, "max_bytes": max_bytes(),
            "min_bytes": min_bytes()}


def client(p, dev):
    try:
        infos = socket.getaddrinfo(p.server, p.port, socket.AF_INET, socket.SOCK_STREAM)
    except socket.gaierror:
        raise Fail(["%s:%d: Name or service not known" % (p.server, p.port),
                    "Problem in resolving basic address and port"])
    sock = None
    reason = "Connection refused"
    for family, kind, proto, _name, addr in infos:
        sock = socket.socket(family, kind, proto)
        sock.settimeout(10)
        try:
            sock.connect(addr)
            break
        except OSError as exc:
            reason = os.strerror(exc.errno) if exc.errno else str(exc)
            sock.close()
            sock = None
    if sock is None:
        raise connect_fail(p, reason)
    sock.settimeout(POST_CONNECT_TIMEOUT_S + (p.duration or 0))
    ctl = Control(sock)
    ctl.send(hello(p, dev))
    peer = ctl.recv()
    if peer.get("error"):
        raise Fail([peer["error"]])
    cuda_lines(p)
    out(header(p, dev, "client"))
    qpns = [0x100 + i for i in range(p.qps)]
    out(address_lines(p, qpns, dev.address, "local", dev.lid))
    out(address_lines(p, [0x200 + i for i in range(p.qps)], peer["address"], "remote", peer.get("lid")))
    line_rate_if_loopback(dev, peer.get("address"))
    conns = []
    count = p.qps if p.metric == "bw" else 1
    for _num in range(count):
        data = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        data.settimeout(POST_CONNECT_TIMEOUT_S + (p.duration or 0))
        try:
            if not dev.address:
                raise OSError("no IPv4 GID")
            bind_device(data, dev, peer["address"])
            data.bind((dev.address, 0))
            data.connect((peer["address"], peer["data_port"]))
        except (OSError, TypeError):
            ctl.send({"data_error": True})
            raise Fail(["Failed to modify QP %d to RTR" % qpns[0], " Unable to Connect the HCA's through the link"])
        data.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        conns.append(data)
    ctl.send({"connected": True})
    return run_test(p, ctl, conns, "client", dev)


def server(p, dev):
    out(WAITING)
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind(("0.0.0.0", p.port))
        listener.listen(1)
    except OSError:
        raise Fail(["Couldn't listen to port %d" % p.port,
                    "Unable to open file descriptor for socket connection Unable to init the socket connection"])
    sock, _addr = listener.accept()          # like perftest: waits for its client forever
    listener.close()
    sock.settimeout(POST_CONNECT_TIMEOUT_S + (p.duration or 0))
    ctl = Control(sock)
    peer = ctl.recv()
    if peer.get("tool") != p.tool:
        msg = " perftest emulator: server runs %s but the client runs %s" % (p.tool, peer.get("tool"))
        ctl.send({"error": msg})
        raise Fail([msg, " Failed to exchange data between server and clients"])
    # the client's run parameters rule the exchange (perftest needs both sides equal)
    p.size, p.iters, p.all_sizes, p.duration = peer["size"], peer["iters"], peer["all"], peer["duration"]
    p.qps, p.bidir = peer["qps"], peer["bidir"]
    os.environ["PERFTEST_EMULATOR_MAX_BYTES"] = str(peer.get("max_bytes") or "")
    os.environ["PERFTEST_EMULATOR_MIN_BYTES"] = str(peer.get("min_bytes", DEFAULT_MIN_BYTES))
    data_listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    data_listener.settimeout(POST_CONNECT_TIMEOUT_S)
    try:
        if not dev.address:
            raise OSError("no IPv4 GID")
        bind_device(data_listener, dev, peer.get("address"))
        line_rate_if_loopback(dev, peer.get("address"))
        data_listener.bind((dev.address, 0))
        data_listener.listen(max(1, p.qps))
    except OSError:
        ctl.send({"error": "Failed to modify QP to RTR"})
        raise Fail(["Failed to modify QP %d to RTR" % 0x200, " Unable to Connect the HCA's through the link"])
    ctl.send({"address": dev.address, "lid": dev.lid, "data_port": data_listener.getsockname()[1]})
    cuda_lines(p)
    out(header(p, dev, "server"))
    out(address_lines(p, [0x200 + i for i in range(p.qps)], dev.address, "local", dev.lid))
    out(address_lines(p, [0x100 + i for i in range(p.qps)], peer["address"], "remote", peer.get("lid")))
    conns = []
    count = p.qps if p.metric == "bw" else 1
    for _num in range(count):
        try:
            ready, _w, _x = select.select([data_listener, sock], [], [], POST_CONNECT_TIMEOUT_S)
            if data_listener not in ready:
                raise OSError("the client did not connect its QPs")
            data, _addr = data_listener.accept()
        except OSError:
            raise Fail(["Failed to modify QP %d to RTR" % 0x200, " Unable to Connect the HCA's through the link"])
        data.settimeout(POST_CONNECT_TIMEOUT_S + (p.duration or 0))
        data.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        conns.append(data)
    data_listener.close()
    msg = ctl.recv()
    if msg.get("data_error"):
        raise Fail([" Failed to exchange data between server and clients"])
    return run_test(p, ctl, conns, "server", dev)


def _peer_address(conn):
    try:
        return conn.getpeername()[0]
    except (OSError, IndexError):
        return None


def run_test(p, ctl, conns, side, dev=None):
    results = []
    if p.metric == "bw":
        sends = (side == "client") == (p.verb in ("write", "send"))
        if p.bidir:
            sending = receiving = True
        else:
            sending, receiving = sends, not sends
        if side == "client" or p.bidir:
            out(RESULT_LINE + (RESULT_FMT_G if p.report_gbits else RESULT_FMT) + "\n")
        else:
            out(RESULT_LINE + (RESULT_FMT_G if p.report_gbits else RESULT_FMT) + "\n")
        final = None
        for size in sizes_of(p):
            iters = volume_msgs(p, size)
            mine = run_bw_size(p, ctl, conns, size, sending, receiving, iters)
            # exchange reports: each side learns the other direction's numbers
            ctl.send({"report": mine})
            theirs = ctl.recv().get("report")
            rows = [r for r in (mine, theirs) if r]
            total = {"size": size, "iters": rows[0]["iters"] if rows else p.iters,
                     "peak_bps": sum(r["peak_bps"] for r in rows), "avg_bps": sum(r["avg_bps"] for r in rows),
                     "msg_rate": sum(r["msg_rate"] for r in rows)}
            results.append(total)
            final = total
            if side == "client" or p.bidir:
                out(bw_row(p, size, total["iters"], total["peak_bps"], total["avg_bps"], total["msg_rate"]))
        if side == "server" and not p.bidir and final:
            out(bw_row(p, final["size"], final["iters"], final["peak_bps"], final["avg_bps"], final["msg_rate"]))
        out(RESULT_LINE)
    else:
        prints = side == "client" or p.verb in ("write", "send")
        if prints:
            out(RESULT_LINE + (RESULT_FMT_LAT_DUR if p.duration else RESULT_FMT_LAT) + "\n")
        for size in sizes_of(p):
            iters = effective_iters(p, size)
            started = time.monotonic()
            try:
                samples, done = run_lat_size(p, conns[0], size, iters, active=(side == "client"),
                                             delay=answer_delay(dev, _peer_address(conns[0])) if dev is not None
                                             else 0.0)
            except OSError:
                raise Fail([" Completion with error at %s" % side, " Failed status 12: wr_id 0 syndrom 0x81",
                            " Failed to complete run_iter_lat function successfully"])
            secs = max(time.monotonic() - started, 1e-9)
            stats = lat_stats(samples)
            if prints and stats:
                if p.duration:
                    out(REPORT_FMT_LAT_DUR % (size, done, stats["t_avg"], done / secs) + "\n")
                else:
                    out(REPORT_FMT_LAT % (size, p.iters, stats["t_min"], stats["t_max"], stats["t_typical"],
                                          stats["t_avg"], stats["t_stdev"], stats["p99"], stats["p99_9"]) + "\n")
            results.append(dict(stats or {}, size=size, iters=done))
            ctl.send({"size_done": size})
            ctl.recv()
        out(RESULT_LINE)
    ctl.send({"bye": True})
    try:
        ctl.recv()
    except Fail:
        pass
    for conn in conns:
        conn.close()
    return results


def write_json(p, dev, results):
    info = {"test": "%s %s" % (TESTS[p.verb], "BW" if p.metric == "bw" else "Latency"),
            "Dual_port": "OFF", "Device": dev.name, "Number_of_qps": p.qps, "Transport_type": "IB",
            "Connection_type": p.connection, "Using_SRQ": "OFF", "PCIe_relax_order": "ON",
            "ibv_wr_API": "ON", "TX_depth": p.tx_depth, "CQ_Moderation": min(100, p.tx_depth),
            "Mtu": dev.mtu, "Link_type": dev.link_layer, "GID_index": dev.gid_index,
            "Max_inline_data": 0, "rdma_cm_QPs": "ON" if p.rdma_cm else "OFF",
            "Data_ex_method": "rdma_cm" if p.rdma_cm else "Ethernet"}
    rows = []
    for res in results:
        if p.metric == "bw":
            scale = 1e9 if p.report_gbits else 8 * 2 ** 20
            rows.append({"MsgSize": res["size"], "n_iterations": res["iters"], "BW_peak": res["peak_bps"] / scale,
                         "BW_average": res["avg_bps"] / scale, "MsgRate": res["msg_rate"] / 1e6})
        else:
            rows.append({"MsgSize": res["size"], "n_iterations": res["iters"], "t_min": res.get("t_min"),
                         "t_max": res.get("t_max"), "t_typical": res.get("t_typical"), "t_avg": res.get("t_avg"),
                         "t_stdev": res.get("t_stdev"), "percentile_99": res.get("p99"),
                         "percentile_99_9": res.get("p99_9")})
    doc = {"test_info": info, "results": rows[-1] if len(rows) == 1 else rows}
    with open(p.out_json_file, "w") as handle:
        json.dump(doc, handle, indent=1)


def hang_if_asked(p):
    """Lab fault ``faults.HungSide``: the first server (or client) started after the file
    ``<sysfs>/commcheck-lab/perftest_hang_<side>`` appeared takes it (an atomic rename, so exactly one
    process does), writes its pid there and stops itself (SIGSTOP), as a hung process would."""
    root = os.environ.get("COMMCHECK_LAB_SYSFS")
    if not root:
        return
    path = os.path.join(root, "commcheck-lab", "perftest_hang_%s" % ("client" if p.server else "server"))
    try:
        os.rename(path, path + ".taken")
    except OSError:
        return
    with open(path + ".taken", "a") as handle:
        handle.write("%d\n" % os.getpid())
    os.kill(os.getpid(), signal.SIGSTOP)


JUNK_LINE = b"commcheck lab junk: a line of garbage the perftest emulator prints before its output 0123456789\n"
JUNK_BINARY = bytes(range(256)) * 4   # NUL bytes, invalid UTF-8, no newline for a kilobyte


def junk_if_asked():
    """Lab fault: with ``<sysfs>/commcheck-lab/perftest_junk`` holding ``<bytes> [text|binary]``, every perftest
    process of that host prints that many bytes of garbage on stdout before its own output (text lines, or
    binary without newlines), as a broken terminal setting, a debug build or a wrapper script would."""
    text = _read(os.path.join(os.environ.get("COMMCHECK_LAB_SYSFS") or "/nonexistent", "commcheck-lab",
                              "perftest_junk")) or ""
    words = text.split()
    if not words or not words[0].isdigit():
        return
    left, chunk = int(words[0]), JUNK_BINARY if words[1:] == ["binary"] else JUNK_LINE
    block = chunk * max(1, 65536 // len(chunk))
    stdout = sys.stdout.buffer
    while left > 0:
        piece = block[:left]
        stdout.write(piece)
        left -= len(piece)
    stdout.write(b"\n")
    stdout.flush()


def main(argv):
    if len(argv) < 2 or argv[0] != "--tool":
        sys.stderr.write("perftest EMULATOR (commcheck lab): run as perftest_emulator.py --tool ib_write_bw ...\n")
        return 2
    tool = argv[1]
    if tool not in ("ib_%s_%s" % (v, m) for v in TESTS for m in ("bw", "lat")):
        sys.stderr.write("perftest EMULATOR: unknown tool %r\n" % tool)
        return 2
    try:
        p = parse(tool, argv[2:])
        junk_if_asked()
        hang_if_asked(p)
        gpu_pace_if_asked(p)
        if p.duration and p.metric == "bw":
            out(" WARNING: BW peak won't be measured in this run.\n")
        dev = Device(p)
        results = client(p, dev) if p.server else server(p, dev)
        if p.out_json:
            write_json(p, dev, results)
    except Fail as fail:
        if fail.stdout:
            out(fail.stdout)
        if fail.lines:
            sys.stderr.write("\n".join(fail.lines) + "\n")
        sys.stderr.flush()
        return fail.rc
    except socket.timeout:
        sys.stderr.write(" Failed to exchange data between server and clients\n")
        return 1
    except (OSError, ValueError) as exc:
        sys.stderr.write(" Failed to exchange data between server and clients (%s)\n" % exc)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
