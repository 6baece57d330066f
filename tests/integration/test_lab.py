# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The lab itself: namespaces, real sshd/ssh, real ansible, real iperf3, tc shaping, down."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json
import os
import shutil
import subprocess
import sys
import time

import pytest
import yaml

import lab as lablib
from lab_checks import best_reading

# The full tier's: these check the lab itself, not the product; the fast tier's runs depend on it.
pytestmark = pytest.mark.full

LAB_PY = os.path.join(os.path.dirname(lablib.__file__), "lab.py")


def iperf3(lab, client, server, rail=0, seconds=2, reverse=False):
    """Real iperf3 from client to server (lab hosts) on rail; returns Gb/s received."""
    port = lab.next_port()
    srv = lab.popen(server, ["iperf3", "-s", "-1", "-B", lab.address(server, rail), "-p", str(port)])
    try:
        deadline = time.monotonic() + 60     # only bounds the wait for the server to listen
        while True:
            probe = lab.exec(client, ["iperf3", "-c", lab.address(server, rail), "-p", str(port), "-t",
                                      str(seconds), "-J", "-B", lab.address(client, rail)]
                             + (["-R"] if reverse else []), timeout=seconds + 30)
            # iperf3 3.12 -J exits 0 even when it could not connect: look at "error"
            data = json.loads(probe.stdout or "{}")
            if (probe.returncode == 0 and "error" not in data) or time.monotonic() > deadline:
                break
            time.sleep(0.2)   # server not listening yet
        assert probe.returncode == 0 and "error" not in data, probe.stdout + probe.stderr
        return data["end"]["sum_received"]["bits_per_second"] / 1e9
    finally:
        try:
            srv.wait(timeout=10)
        except subprocess.TimeoutExpired:
            srv.kill()
            srv.wait()


# --- pure parts (no root needed) ---------------------------------------------------

def test_plan_names_fit_and_do_not_clash():
    lab = lablib.plan("abcdefghijkl", 200, rails=8, rate="500mbit")
    names = [r["bridge"] for r in lab["rails"]]
    names += [r["peer"] for h in lab["hosts"] for r in h["rails"]]
    assert max(len(n) for n in names) <= 15          # IFNAMSIZ - 1
    assert len(set(names)) == len(names)
    addresses = [r["address"] for h in lab["hosts"] for r in h["rails"]]
    assert len(set(addresses)) == len(addresses)
    assert len({r["subnet"] for r in lab["rails"]}) == 8
    other = lablib.plan("abcdefghijkm", 2)
    assert other["tag"] != lab["tag"] and other["hosts"][0]["netns"] != lab["hosts"][0]["netns"]
    assert 20000 <= lab["port_base"] and lab["port_base"] + 100 <= 32768


@pytest.mark.parametrize("bad", [dict(name="Lab"), dict(name="a" * 13), dict(name="x;rm"), dict(hosts=0),
                                 dict(hosts=201), dict(rails=9), dict(rate="fast"), dict(rate="10bit"),
                                 dict(subnet_base="192.168"), dict(subnet_base="10.300")])
def test_plan_refuses_bad_input(bad):
    args = dict(name="ok", hosts=2, rails=1, subnet_base=None, rate="1gbit")
    args.update(bad)
    with pytest.raises(lablib.LabError):
        lablib.plan(args["name"], args["hosts"], args["rails"], args["subnet_base"], args["rate"])


def test_rates_and_yaml():
    assert lablib.parse_rate("200mbit") == 200 * 10 ** 6
    assert lablib.rate_gbps("1.5gbit") == 1.5
    data = {"all": {"children": {"lab": {"hosts": {"h1": {"a": "x: y", "n": 3, "l": [{"k": "v"}, 2],
                                                          "e": {}, "z": None, "t": True}}}}}}
    assert yaml.safe_load(lablib.to_yaml(data)) == data


def test_not_root_means_skip_with_reason(monkeypatch):
    monkeypatch.setattr(lablib, "is_root", lambda: False)
    assert lablib.unavailable() == "the lab needs root (network namespaces, veth, bridges)"
    with pytest.raises(lablib.LabError, match="needs root"):
        lablib.up("never", 1)


# --- a lab that is up ---------------------------------------------------------------

def test_inventory_and_files(lab4):
    assert lab4.hosts == ["h1", "h2", "h3", "h4"]
    text = open(lab4.inventory).read()
    for key in ("ansible_host", "ansible_ssh_private_key_file", "ansible_ssh_common_args",
                "ansible_python_interpreter", "commcheck_sysfs_root", "commcheck_environment",
                "commcheck_mpi_mca", "lab_rails", "btl_tcp_if_include", "commcheck_mpi_ssh_config"):
        assert key in text
    inv = subprocess.run([os.path.join(lablib.REPO, ".venv", "bin", "ansible-inventory"), "-i", lab4.inventory,
                          "--list"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                         env=lab4.env(), check=False)
    assert inv.returncode == 0, inv.stderr
    hostvars = json.loads(inv.stdout)["_meta"]["hostvars"]
    assert sorted(hostvars) == lab4.hosts
    h2 = hostvars["h2"]
    assert h2["ansible_host"] == lab4.address("h2")
    assert h2["commcheck_environment"]["PATH"].split(":")[0] == lab4.lab.bin_dir
    assert [r["address"] for r in h2["lab_rails"]] == [lab4.address("h2", 0), lab4.address("h2", 1)]
    assert h2["commcheck_mpi_mca"]["btl_tcp_if_include"] == lab4.lab.state["rails"][0]["subnet"]
    assert h2["commcheck_mpi_ssh_config"] == lab4.ssh_config and "plm_rsh_args" not in h2["commcheck_mpi_mca"]
    for tool in lablib.PERFTEST_TOOLS:
        assert os.access(os.path.join(lab4.lab.bin_dir, tool), os.X_OK)


def test_sysfs_per_host(lab4):
    for host in lab4.hosts:
        root = lab4.lab.sysfs_root(host)
        for rail in range(2):
            port = os.path.join(root, "class", "infiniband", "mlx5_%d" % rail, "ports", "1")
            assert open(os.path.join(port, "state")).read().strip() == "4: ACTIVE"
            assert open(os.path.join(port, "link_layer")).read().strip() == "Ethernet"
            rate = open(os.path.join(port, "rate")).read()
            assert float(rate.split()[0]) == lab4.rate_gbps and " Gb/sec (" in rate
            netdev = lab4.host(host)["rails"][rail]["netdev"]
            # each host's rail keeps its RoCE v2 GID at an index of its own (lab_rails says which)
            index = str(lab4.host(host)["rails"][rail]["gid_index"])
            assert open(os.path.join(port, "gid_attrs", "ndevs", index)).read().strip() == netdev
            assert open(os.path.join(port, "gid_attrs", "types", index)).read().strip() == "RoCE v2"
            octets = [int(o) for o in lab4.address(host, rail).split(".")]
            gid = open(os.path.join(port, "gids", index)).read().strip()
            assert gid.endswith("ffff:%02x%02x:%02x%02x" % tuple(octets))
        governors = os.path.join(root, "devices", "system", "cpu", "cpu0", "cpufreq", "scaling_governor")
        assert os.path.exists(governors)


def test_ssh_into_each_host(lab4):
    for host in lab4.hosts:
        res = lab4.ssh(host, ["sh", "-c", "hostname; readlink /proc/self/ns/net; ip -o -4 addr show"])
        assert res.returncode == 0, res.stderr
        lines = res.stdout.splitlines()
        assert lines[0] == host
        ino = os.stat("/run/netns/%s" % lab4.host(host)["netns"]).st_ino
        assert lines[1] == "net:[%d]" % ino
        for rail in range(2):
            assert " %s/24 " % lab4.address(host, rail) in res.stdout
        other = [h for h in lab4.hosts if h != host][0]
        assert lab4.address(other) not in res.stdout


def test_ansible_ping_over_ssh(lab4):
    res = lab4.ansible("lab", "ping")
    assert res.returncode == 0, res.stdout + res.stderr
    assert res.stdout.count("SUCCESS") == 4
    res = lab4.ansible("lab", "ansible.builtin.command", "hostname")
    assert res.returncode == 0, res.stdout + res.stderr
    for host in lab4.hosts:
        assert "%s | CHANGED | rc=0 >>\n%s" % (host, host) in res.stdout


# The shaping caps a path at its rate: the upper bounds are exact. The lower bounds only tell a path at
# nominal rate from a slowed one (half the nominal rate is still far above 200mbit), with room for a machine
# so busy that iperf3 itself falls behind (a loaded run measured 0.44 of 0.5 Gb/s, another 0.13 once:
# a reading below the floor is taken again, at most three times, see lab_checks.best_reading).
NOMINAL_FLOOR = 0.5


def nominal_reading(lab, client, server, rail):
    """iperf3 on a path at nominal rate: the best of up to three readings when one falls below the floor."""
    return best_reading(lambda: iperf3(lab, client, server, rail=rail), NOMINAL_FLOOR * lab.rate_gbps)


def test_iperf3_between_hosts_at_nominal_rate(lab4):
    for rail in range(2):
        gbps = nominal_reading(lab4, "h1", "h2", rail)
        assert NOMINAL_FLOOR * lab4.rate_gbps <= gbps <= 1.02 * lab4.rate_gbps, gbps


def test_slow_host_shows_in_iperf3(lab4):
    with lab4.slowed("h2", rate="200mbit", rail=0):
        into = iperf3(lab4, "h1", "h2", rail=0)
        out_of = iperf3(lab4, "h1", "h2", rail=0, reverse=True)
        other_rail = nominal_reading(lab4, "h1", "h2", 1)
        other_host = nominal_reading(lab4, "h3", "h4", 0)
    assert 0 < into <= 0.21, into
    assert 0 < out_of <= 0.21, out_of
    assert other_rail >= NOMINAL_FLOOR * lab4.rate_gbps > 0.21, other_rail
    assert other_host >= NOMINAL_FLOOR * lab4.rate_gbps, other_host
    healed = nominal_reading(lab4, "h1", "h2", 0)
    assert healed >= NOMINAL_FLOOR * lab4.rate_gbps, healed


def test_pids_sees_leftovers(lab4):
    proc = lab4.popen("h3", ["sleep", "60"])
    try:
        deadline = time.monotonic() + 60     # only bounds the wait for the sleep to start
        while not [p for p in lab4.pids() if p["comm"] == "sleep"] and time.monotonic() < deadline:
            time.sleep(0.05)
        left = lab4.pids()
        assert [p["host"] for p in left if p["comm"] == "sleep"] == ["h3"]
    finally:
        proc.kill()
        proc.wait()
    assert lab4.pids() == []
    assert len([p for p in lab4.pids(include_infra=True) if p["comm"] == "sshd"]) >= 4


def test_cli_status_exec_pids(lab4):
    py = sys.executable
    res = subprocess.run([py, LAB_PY, "status", "--name", lab4.name], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, universal_newlines=True, check=False)
    assert res.returncode == 0, res.stderr
    status = json.loads(res.stdout)[0]
    assert [h["host"] for h in status["hosts"]] == lab4.hosts
    assert all(h["netns_up"] and h["sshd_pid"] for h in status["hosts"])
    res = subprocess.run([py, LAB_PY, "exec", "--name", lab4.name, "--host", "h4", "--", "hostname"],
                         stdout=subprocess.PIPE, universal_newlines=True, check=False)
    assert (res.returncode, res.stdout.strip()) == (0, "h4")
    res = subprocess.run([py, LAB_PY, "pids", "--name", lab4.name], stdout=subprocess.PIPE,
                         universal_newlines=True, check=False)
    assert (res.returncode, res.stdout) == (0, "")


def test_bad_input_is_refused(lab4):
    with pytest.raises(lablib.LabError, match="lab name"):
        lablib.plan("Bad Name!", 2)
    with pytest.raises(lablib.LabError, match="rate"):
        lab4.slow("h2", rate="fast")
    with pytest.raises(lablib.LabError, match="no host"):
        lab4.exec("h9", ["true"])
    with pytest.raises(lablib.LabError, match="already up"):
        lablib.up(lab4.name, 2)
    # another lab on lab4's subnets is refused, and leaves nothing behind
    taken = lab4.lab.state["subnet_base"]
    with pytest.raises(lablib.LabError, match="clashes"):
        lablib.up("clash%d" % (os.getpid() % 10000), 2, subnet_base=taken)
    assert not [ns for ns in lablib.netns_list() if ns.startswith("cc-clash")]


def test_second_lab_beside_and_down_leaves_nothing(lab4):
    name = "dn%d" % (os.getpid() % 100000)
    started = time.monotonic()
    lab = lablib.up(name, 2, rails=1, owner_pid=os.getpid())
    try:
        up_s = time.monotonic() - started
        assert lab.state["subnet_base"] != lab4.lab.state["subnet_base"]
        assert lab.exec("h2", ["hostname"]).stdout.strip() == "h2"
        assert lab4.exec("h2", ["hostname"]).stdout.strip() == "h2"
        sleeper = lab.popen("h1", ["sleep", "60"])
        # popen returns before nsenter has entered h1: wait for the sleeper to be there (an event, not a delay)
        deadline = time.monotonic() + 60
        while not [p for p in lab.pids() if p["comm"] == "sleep"] and time.monotonic() < deadline:
            time.sleep(0.1)
        assert [p for p in lab.pids() if p["comm"] == "sleep"], "the sleeper never appeared in h1"
        tag = lablib.name_hash(name)[:5]
    finally:
        result = lablib.down(name)
    sleeper.wait(timeout=60)
    assert result["killed"] >= 3            # 2 sshd + the sleeper
    assert not [ns for ns in lablib.netns_list() if ns.startswith("cc-%s-" % name)]
    assert not [link for link in lablib.link_names() if tag in link]
    assert not os.path.exists(lablib.lab_dir(name))
    assert lablib.down(name)["was_up"] is False      # idempotent
    # lab4 was not touched
    assert lab4.ansible("lab", "ping").returncode == 0
    sys.stderr.write("\na 2-host lab came up in %.1fs\n" % up_s)   # reported, not judged: it is this machine's speed


@pytest.mark.skipif(shutil.which("ssh") is None, reason="needs ssh")
def test_ssh_config_aliases_and_subnet_patterns(lab4):
    text = open(lab4.ssh_config).read()
    assert "Host h1\n  HostName %s" % lab4.address("h1") in text
    res = subprocess.run(["ssh", "-F", lab4.ssh_config, lab4.address("h3", 0), "hostname"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                         timeout=30, check=False)
    assert (res.returncode, res.stdout.strip()) == (0, "h3"), res.stderr
