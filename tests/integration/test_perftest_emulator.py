# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The perftest emulator: real TCP data between lab hosts, perftest's format and errors,
and the same command lines as the REAL Debian perftest binaries' option parser."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import contextlib
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import time

import pytest

from lab_checks import best_reading

# The full tier's: these check the emulator, not the product (tests/integration/test_perftest_real_binaries.py
# checks the product's command lines against the real binaries in the fast tier).
pytestmark = pytest.mark.full

HERE = os.path.dirname(os.path.abspath(__file__))
EMULATOR = os.path.join(os.path.dirname(HERE), "lab", "emulators", "perftest_emulator.py")
_spec = importlib.util.spec_from_file_location("perftest_emulator", EMULATOR)
emu = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(emu)

BW_ROW = re.compile(r"^ (\d+)\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s*$", re.M)
LAT_ROW = re.compile(r"^ (\d+)\s+(\d+)" + r"\s+([\d.]+)" * 7 + r"\s*$", re.M)
PARSE_ERROR = "Parser function exited with Error"

# Command lines as the product builds them (and a few more), per tool.
GOOD_ARGV = [
    ("ib_write_bw", ["-d", "mlx5_0", "-i", "1", "-x", "3", "-p", "18600", "-s", "65536", "-n", "100", "-F",
                     "--report_gbits", "10.1.0.2"]),
    ("ib_write_bw", ["-d", "mlx5_1", "-x", "3", "-q", "4", "-b", "-a", "-F", "--report_gbits", "-p", "18601"]),
    ("ib_read_bw", ["--ib-dev=mlx5_0", "--ib-port=1", "--gid-index=3", "--port=18602", "--size=4096",
                    "--iters=1000", "--qp=2", "--CPU-freq", "--report_gbits", "10.1.0.2"]),
    ("ib_send_bw", ["-d", "mlx5_0", "-x", "3", "-D", "5", "-R", "-m", "1024", "-c", "RC", "-t", "128",
                    "-S", "0", "--tclass=96", "--out_json", "--out_json_file=/tmp/commcheck-pt.json", "10.1.0.2"]),
    ("ib_atomic_bw", ["-d", "mlx5_0", "-x", "3", "-n", "500", "-F", "-p", "18603", "10.1.0.2"]),
    ("ib_write_lat", ["-d", "mlx5_0", "-x", "3", "-s", "2", "-n", "1000", "-F", "-p", "18604", "10.1.0.2"]),
    ("ib_read_lat", ["-d", "mlx5_0", "-x", "3", "-a", "-F", "-p", "18605"]),
    ("ib_send_lat", ["-d", "mlx5_0", "-x", "3", "-D", "3", "-F", "-R", "-T", "96", "10.1.0.2"]),
    ("ib_atomic_lat", ["-d", "mlx5_0", "-x", "3", "-n", "1000", "-F", "10.1.0.2"]),
]
BAD_ARGV = [
    ("ib_write_bw", ["--no-such-flag", "10.1.0.2"], "unrecognized option '--no-such-flag'"),
    ("ib_write_bw", ["-n", "2"], "Iteration num should be between 5 and 100000000"),
    ("ib_write_bw", ["-q", "0"], "num of Qps should be between 1 and 16384"),
    ("ib_write_bw", ["-s", "0"], "Message Size should be between 1 and 2147483647"),
    ("ib_write_bw", ["-n", "abc"], "Iteration num argument abc should be int"),
    ("ib_write_bw", ["-x", "abc"], "Gid index argument abc should be uint8_t"),
    ("ib_write_bw", ["-D", "0"], "Duration period must be positive"),
    ("ib_write_bw", ["10.1.0.2", "10.1.0.3"], "Invalid Command line. Please check command rerun"),
    ("ib_read_lat", ["-q", "2"], "Multiple QPs only available on bw tests"),
    ("ib_send_lat", ["-b"], "Bidirectional is only available in BW test"),
]


def run_emulator(tool, argv, env=None, timeout=30):
    full = dict(os.environ, **(env or {}))
    return subprocess.run([sys.executable, EMULATOR, "--tool", tool] + argv, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, env=full, timeout=timeout, check=False)


# --- the command line, against the real perftest parser (no lab needed) --------------

@pytest.mark.parametrize("tool,argv", GOOD_ARGV, ids=["%s-%d" % (t, i) for i, (t, _a) in enumerate(GOOD_ARGV)])
def test_real_perftest_accepts_argv_then_finds_no_device(tool, argv):
    real = shutil.which(tool, path="/usr/bin:/usr/local/bin")
    if not real:
        pytest.skip("the real perftest %s is not installed (apt-get install perftest)" % tool)
    res = subprocess.run([real] + argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                         timeout=20, check=False)
    assert PARSE_ERROR not in res.stderr
    assert "Did not detect devices" in res.stderr
    # Debian's ib_read_bw / ib_atomic_bw skip the last line and exit 7
    quiet = tool in emu.QUIET_NO_DEVICE
    assert res.returncode == (7 if quiet else 1)
    assert ("Unable to find the Infiniband/RoCE device" in res.stderr) == (not quiet)
    # the emulator parses the same line to the same meaning, and (no devices) fails the same way
    params = emu.parse(tool, argv)
    assert params.verb == tool.split("_")[1] and params.metric == tool.split("_")[2]
    mine = run_emulator(tool, argv, env={"COMMCHECK_LAB_SYSFS": "/nonexistent"})
    assert (mine.returncode, mine.stderr) == (res.returncode, res.stderr)


def test_emulator_without_lab_sysfs_fails_like_the_real_tool(tmp_path):
    res = run_emulator("ib_write_bw", ["-d", "mlx5_0", "10.1.0.2"], env={"COMMCHECK_LAB_SYSFS": str(tmp_path)})
    assert res.returncode == 1
    assert res.stderr == (" Did not detect devices \n If device exists, check if driver is up\n"
                          " Unable to find the Infiniband/RoCE device\n")


@pytest.mark.parametrize("tool,argv,message", BAD_ARGV, ids=[m[:30] for _t, _a, m in BAD_ARGV])
def test_bad_argv_rejected_like_the_real_parser(tool, argv, message):
    res = run_emulator(tool, argv)
    assert res.returncode == 1
    assert message in res.stderr
    real = shutil.which(tool, path="/usr/bin:/usr/local/bin")
    if real:
        ref = subprocess.run([real] + argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             universal_newlines=True, timeout=20, check=False)
        assert ref.returncode == 1
        assert message in ref.stderr
        assert (PARSE_ERROR in ref.stderr) == (PARSE_ERROR in res.stderr)


def test_emulator_names_itself_in_help():
    res = run_emulator("ib_write_bw", ["--help"])
    assert res.returncode == 0
    assert res.stdout.splitlines()[0].startswith("perftest EMULATOR")
    assert run_emulator("ib_read_lat", ["-V"]).stdout == "Version: %s\n" % emu.VERSION


def test_emulator_option_values():
    p = emu.parse("ib_write_bw", ["-d", "mlx5_1", "-i", "1", "-x", "3", "-p", "0x4868", "-s", "1k", "-q", "2",
                                  "-b", "-R", "-D", "4", "--report_gbits", "--use_cuda=0", "--out_json_file=f.json",
                                  "server1"])
    assert (p.device, p.ib_port, p.gid_index, p.port, p.size, p.qps) == ("mlx5_1", 1, 3, 0x4868, 1024, 2)
    assert (p.bidir, p.rdma_cm, p.duration, p.report_gbits, p.use_cuda, p.out_json) == (True, True, 4, True, 0, True)
    assert p.server == "server1"
    lat = emu.parse("ib_send_lat", [])
    assert (lat.size, lat.iters, lat.tx_depth) == (2, 1000, 1)
    assert emu.parse("ib_write_bw", []).iters == 5000
    assert emu.parse("ib_read_bw", []).iters == 1000


# --- real transfers in the lab ------------------------------------------------------

@contextlib.contextmanager
def server_side(lab, host, tool, argv):
    proc = lab.popen(host, [tool] + argv)
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def wait_listening(lab, host, port, timeout=60):
    """Wait for the server to listen; timeout only bounds the wait (wide, for a busy machine)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        res = lab.exec(host, ["ss", "-Hltn", "sport = :%d" % port])
        if res.stdout.strip():
            return
        time.sleep(0.05)
    raise AssertionError("nothing listens on %s:%d" % (host, port))


GID = "{gid}"


def own_gid(lab, host, rail, argv):
    """``argv`` with the ``GID`` placeholder replaced by the host's own RoCE v2 GID index of its rail's IPv4
    address: lab hosts differ (3, 5, 7, 9), as they do in real fleets."""
    gid = str(lab.lab.host(host)["rails"][rail]["gid_index"])
    return [gid if arg == GID else arg for arg in argv]


def pair(lab, tool, argv, server="h2", client="h1", rail=0):
    """Run server + client of one test; return (client result, server stdout)."""
    port = lab.next_port()
    full = argv + ["-p", str(port)]
    with server_side(lab, server, tool, own_gid(lab, server, rail, full)) as srv:
        wait_listening(lab, server, port)
        res = lab.exec(client, [tool] + own_gid(lab, client, rail, full) + [lab.address(server, rail)],
                       timeout=120)
        srv_out, _srv_err = srv.communicate(timeout=30)
    return res, srv_out


def bw_rows(text):
    return [(int(m.group(1)), int(m.group(2)), float(m.group(3)), float(m.group(4)), float(m.group(5)))
            for m in BW_ROW.finditer(text)]


@pytest.mark.parametrize("rail", [0, 1])
def test_write_bw_close_to_shaped_rate(lab4, rail):
    runs = []

    def measure():
        res, srv_out = pair(lab4, "ib_write_bw", ["-d", "mlx5_%d" % rail, "-x", GID, "-F", "--report_gbits",
                                                  "-n", "2000"], rail=rail)
        assert res.returncode == 0, res.stderr
        runs.append((res, srv_out))
        return bw_rows(res.stdout)[0][3]

    best = best_reading(measure, 0.5 * lab4.rate_gbps)
    res, srv_out = runs[-1]
    assert "RDMA_Write BW Test" in res.stdout
    assert "\tDevice         : mlx5_%d\n" % rail in res.stdout
    assert " GID index       : %d\n" % lab4.lab.host("h1")["rails"][rail]["gid_index"] in res.stdout
    assert " Link type       : Ethernet" in res.stdout
    octets = ":".join("%02d" % int(o) for o in lab4.address("h1", rail).split("."))
    assert " GID: 00:00:00:00:00:00:00:00:00:00:255:255:%s" % octets in res.stdout
    assert "BW average[Gb/sec]" in res.stdout
    rows = bw_rows(res.stdout)
    assert len(rows) == 1 and rows[0][:2] == (65536, 2000)
    # the shaping caps the rate (exact); the floor leaves room for a busy machine (see test_lab.NOMINAL_FLOOR)
    assert 0.5 * lab4.rate_gbps <= best <= 1.02 * lab4.rate_gbps, best
    assert "Waiting for client to connect..." in srv_out
    assert bw_rows(srv_out) == rows       # the server prints the client's report, like perftest


def test_slowed_host_is_clearly_lower(lab4):
    with lab4.slowed("h2", rate="200mbit"):
        res, _srv = pair(lab4, "ib_write_bw", ["-d", "mlx5_0", "-F", "--report_gbits", "-n", "500"])
        rev, _srv = pair(lab4, "ib_read_bw", ["-d", "mlx5_1", "-F", "--report_gbits", "-n", "500"], rail=1)
    assert res.returncode == 0, res.stderr
    slow = bw_rows(res.stdout)[0][3]
    assert 0 < slow <= 0.21, slow        # the shaping caps it; how close it gets depends on the machine
    assert rev.returncode == 0, rev.stderr
    assert bw_rows(rev.stdout)[0][3] <= 0.21


def test_bidirectional_multi_qp_and_mib_units(lab4):
    runs = []

    def measure():
        res, srv_out = pair(lab4, "ib_write_bw", ["-d", "mlx5_0", "-b", "-q", "2", "-n", "1000"],
                            server="h4", client="h3")
        assert res.returncode == 0, res.stderr
        runs.append((res, srv_out))
        return bw_rows(res.stdout)[0][3] * 2 ** 20 * 8 / 1e9

    both_ways_gbps = best_reading(measure, 1.8 * lab4.rate_gbps)
    res, srv_out = runs[-1]
    assert "RDMA_Write Bidirectional BW Test" in res.stdout
    assert res.stdout.count(" local address:") == 2 and res.stdout.count(" remote address:") == 2
    size, iters, _peak, _avg_mib, _rate = bw_rows(res.stdout)[0]
    assert (size, iters) == (65536, 1000)
    assert 1.8 * lab4.rate_gbps <= both_ways_gbps <= 2.05 * lab4.rate_gbps, both_ways_gbps
    assert bw_rows(srv_out)


def test_duration_mode_and_json(lab4, tmp_path):
    out_file = str(tmp_path / "client.json")

    def measure():
        started = time.monotonic()
        res, _srv = pair(lab4, "ib_send_bw", ["-d", "mlx5_0", "-D", "2", "--report_gbits",
                                              "--out_json", "--out_json_file=%s" % out_file])
        assert res.returncode == 0, res.stderr
        # ends after its -D 2 seconds (a wide margin: process starts on a busy machine are not measured)
        assert time.monotonic() - started < 60
        assert " WARNING: BW peak won't be measured in this run." in res.stdout
        _size, _iters, peak, avg, _rate = bw_rows(res.stdout)[0]
        assert peak == 0.0
        with open(out_file) as handle:
            doc = json.load(handle)
        assert doc["test_info"]["Device"] == "mlx5_0"
        assert abs(doc["results"]["BW_average"] - avg) < 0.01
        return avg

    assert best_reading(measure, 0.5 * lab4.rate_gbps) >= 0.5 * lab4.rate_gbps


@pytest.mark.parametrize("tool", ["ib_write_lat", "ib_read_lat", "ib_send_lat", "ib_atomic_lat"])
def test_latency_table_is_sane(lab4, tool):
    res, srv_out = pair(lab4, tool, ["-d", "mlx5_0", "-F", "-n", "500"])
    assert res.returncode == 0, res.stderr
    assert "Latency Test" in res.stdout
    assert "t_min[usec]    t_max[usec]  t_typical[usec]" in res.stdout
    match = LAT_ROW.search(res.stdout)
    assert match, res.stdout
    size, iters = int(match.group(1)), int(match.group(2))
    t_min, t_max, t_typ, t_avg, t_stdev, p99, p999 = [float(match.group(i)) for i in range(3, 10)]
    assert size == (8 if "atomic" in tool else 2) and iters == 500
    assert 0 < t_min <= t_typ <= p99 <= p999 <= t_max
    assert t_min <= t_avg <= t_max and t_stdev >= 0
    assert t_typ < 5000      # a lab round trip is tens of microseconds, not milliseconds
    assert bool(LAT_ROW.search(srv_out)) == (tool in ("ib_write_lat", "ib_send_lat"))


def test_unknown_device_error_is_the_real_one(lab4):
    res = lab4.exec("h1", ["ib_write_bw", "-d", "mlx5_7", "-x", "3", lab4.address("h2")])
    assert res.returncode == 1
    assert res.stderr == "IB device mlx5_7 not found\n Unable to find the Infiniband/RoCE device\n"
    assert res.stdout == ""


def test_client_without_server_fails_fast_with_connect_error(lab4):
    port = lab4.next_port()
    started = time.monotonic()
    res = lab4.exec("h1", ["ib_write_bw", "-d", "mlx5_0", "-p", str(port), lab4.address("h2")])
    # no retries, no wait (a wide margin: starting the process on a busy machine is not measured)
    assert time.monotonic() - started < 30
    assert res.returncode == 1
    assert res.stderr == ("Couldn't connect to %s:%d\nUnable to open file descriptor for socket connection"
                          " Unable to init the socket connection\n" % (lab4.address("h2"), port))
    assert lab4.pids() == []


def test_server_waits_for_its_client_until_stopped(lab4):
    port = lab4.next_port()
    proc = lab4.popen("h3", ["ib_read_bw", "-d", "mlx5_0", "-p", str(port)])
    try:
        wait_listening(lab4, "h3", port)
        time.sleep(1.0)
        assert proc.poll() is None            # real perftest waits forever; so does the emulator
        assert any(p["host"] == "h3" for p in lab4.pids())
    finally:
        proc.terminate()
        out, _err = proc.communicate(timeout=10)
    assert "* Waiting for client to connect... *" in out
    deadline = time.monotonic() + 30      # only bounds the wait for the stopped server to go away
    while lab4.pids() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert lab4.pids() == []


def test_port_down_and_rail_mismatch_errors(lab4):
    state = os.path.join(lab4.lab.sysfs_root("h4"), "class", "infiniband", "mlx5_1", "ports", "1", "state")
    with open(state) as handle:
        saved = handle.read()
    try:
        with open(state, "w") as handle:
            handle.write("1: DOWN\n")
        res = lab4.exec("h4", ["ib_write_bw", "-d", "mlx5_1", lab4.address("h3")])
    finally:
        with open(state, "w") as handle:
            handle.write(saved)
    assert res.returncode == 1
    assert res.stderr.startswith(" Port number 1 state is Down\n")
    # client on rail 1, server on rail 0: the data path has no route (like QPs on different rails)
    port = lab4.next_port()
    with server_side(lab4, "h2", "ib_write_bw", ["-d", "mlx5_0", "-p", str(port)]) as srv:
        wait_listening(lab4, "h2", port)
        res = lab4.exec("h1", ["ib_write_bw", "-d", "mlx5_1", "-p", str(port), lab4.address("h2")])
        srv.communicate(timeout=30)
    assert res.returncode == 1
    assert "Unable to Connect the HCA's through the link" in res.stderr
