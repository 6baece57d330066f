# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Real ``ansible localhost -m clusterops.commcheck.rdma_facts`` / ``cpu_governor`` runs.

Fast tier: the facts of a fixture tree (InfiniBand, RoCE, a bond, a port down) and one bad input. Full tier
(``pytest.mark.full``): the rest; the lab runs of the fast tier run rdma_facts and the governor on every host.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json
import os
import shutil
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LAB = os.path.join(REPO, "tests", "lab")
COLLECTIONS = os.path.join(REPO, ".build", "collections")
VENV_BIN = os.path.join(REPO, ".venv", "bin")
if LAB not in sys.path:
    sys.path.insert(0, LAB)

import sysfs_tree  # noqa: E402  pylint: disable=wrong-import-position

TREE = [
    {"name": "mlx5_0", "hca_type": "MT4129", "fw_ver": "28.41.1000", "board_id": "MT_0000000838",
     "ports": [{"link_layer": "InfiniBand", "netdev": "ib0", "lid": 0x21, "sm_lid": 1, "rate_gbps": 400}]},
    {"name": "mlx5_1", "hca_type": "MT4129",
     "ports": [{"link_layer": "InfiniBand", "netdev": "ib1", "state": "DOWN", "phys_state": "Polling",
                "rate_gbps": 40}]},
    {"name": "mlx5_2", "hca_type": "MT4125",
     "ports": [{"netdev": "ens3f0np0", "rate_gbps": 100,
                "gids": [{"index": 0, "gid": "fe80::e42:a1ff:fe5e:9c82", "type": "IB/RoCE v1"},
                         {"index": 1, "gid": "fe80::e42:a1ff:fe5e:9c82", "type": "RoCE v2"},
                         {"index": 6, "gid": "10.44.0.9", "type": "IB/RoCE v1"},
                         {"index": 7, "gid": "10.44.0.9", "type": "RoCE v2"}]}]},
    {"name": "mlx5_bond_0", "hca_type": "MT41692",
     "ports": [{"netdev": "bond0", "ipv4": "10.55.0.9", "rate_gbps": 200}]},
]
NET = {"ens3f0np0": {"mtu": 9000}, "bond0": {"slaves": ["ens4f0np0", "ens4f1np1"], "mtu": 9000}}


def _env(extra=None):
    env = dict(os.environ)
    env.update({"ANSIBLE_COLLECTIONS_PATH": COLLECTIONS, "ANSIBLE_NOCOLOR": "1",
                "ANSIBLE_PYTHON_INTERPRETER": sys.executable, "ANSIBLE_DEPRECATION_WARNINGS": "0",
                "LC_ALL": "C.UTF-8"})
    env.update(extra or {})
    return env


def _ansible(tmp_path, module, args, extra=(), env=None, preexec_fn=None):
    """Run ad-hoc ansible on localhost; return (rc, result dict for localhost, stdout+stderr)."""
    tree = tmp_path / ("tree-%d" % len(list(tmp_path.glob("tree-*"))))
    argv = [os.path.join(VENV_BIN, "ansible"), "localhost", "-m", module, "-t", str(tree)] + list(extra)
    if args:
        argv += ["-a", json.dumps(args)]
    proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                          env=_env(env), cwd=REPO, timeout=120, check=False, preexec_fn=preexec_fn)
    output = proc.stdout + proc.stderr
    assert "Traceback" not in output, output
    path = tree / "localhost"
    result = json.loads(path.read_text()) if path.exists() else None
    return proc.returncode, result, output


@pytest.fixture
def tree_root(tmp_path):
    root = str(tmp_path / "sys")
    sysfs_tree.build_sysfs(root, TREE, cpus=["performance", "performance"], net=NET,
                           modules={"ib_core": {"netns_mode": "Y"}})
    return root


def test_rdma_facts_on_a_fixture_tree(tmp_path, tree_root):
    rc, result, output = _ansible(tmp_path, "clusterops.commcheck.rdma_facts",
                                  {"sysfs_root": tree_root, "expected_rate_gbps": 400})
    assert rc == 0, output
    assert result["changed"] is False
    facts = result["ansible_facts"]["commcheck_rdma"]
    rows = [(d["name"], p["port"], p["state"], p["phys_state"], p["link_layer"], p["rate_gbps"], p["lid"],
             p["sm_lid"], p["netdev"], p["gid_index"]) for d in facts["devices"] for p in d["ports"]]
    assert rows == [
        ("mlx5_0", 1, "ACTIVE", "LinkUp", "InfiniBand", 400, 33, 1, "ib0", None),
        ("mlx5_1", 1, "DOWN", "Polling", "InfiniBand", 40, 0, 0, "ib1", None),
        ("mlx5_2", 1, "ACTIVE", "LinkUp", "Ethernet", 100, 0, 0, "ens3f0np0", 7),
        ("mlx5_bond_0", 1, "ACTIVE", "LinkUp", "Ethernet", 200, 0, 0, "bond0", 3),
    ]
    assert facts["devices"][0]["fw_ver"] == "28.41.1000" and facts["devices"][0]["board_id"] == "MT_0000000838"
    gids = facts["devices"][2]["ports"][0]["gids"]
    assert [(g["index"], g["type"], g["ipv4"]) for g in gids] == [
        (0, "IB/RoCE v1", None), (1, "RoCE v2", None), (6, "IB/RoCE v1", "10.44.0.9"), (7, "RoCE v2", "10.44.0.9")]
    assert facts["gid_index"] == {"mlx5_0/1": None, "mlx5_1/1": None, "mlx5_2/1": 7, "mlx5_bond_0/1": 3}
    port_findings = sorted((f["code"], f["device"]) for f in facts["findings"] if f["device"])
    assert port_findings == [("bond_device", "mlx5_bond_0"), ("phys_state_polling", "mlx5_1"),
                             ("port_down", "mlx5_1"), ("rate_below_expected", "mlx5_2"),
                             ("rate_below_expected", "mlx5_bond_0")]
    assert facts["sources"]["sysfs"] == "fs" and facts["sources"]["addresses"] == "gids"
    assert all(not t.get("ran") for t in facts["sources"]["tools"].values())     # not /sys: no tools
    assert [r["kind"] for r in facts["records"]][:2] == ["discover", "finding"]


def _without_host(result):
    return dict((k, v) for k, v in result["ansible_facts"]["commcheck_rdma"].items() if k != "host")


@pytest.mark.full
def test_check_mode_gives_the_same_facts(tmp_path, tree_root):
    normal = _ansible(tmp_path, "clusterops.commcheck.rdma_facts", {"sysfs_root": tree_root})[1]
    rc, checked, output = _ansible(tmp_path, "clusterops.commcheck.rdma_facts", {"sysfs_root": tree_root},
                                   extra=["--check"])
    assert rc == 0, output
    assert checked["changed"] is False
    assert _without_host(checked) == _without_host(normal)


@pytest.mark.full
def test_this_machine_without_rdma_gets_a_clean_finding(tmp_path):
    rc, result, output = _ansible(tmp_path, "clusterops.commcheck.rdma_facts", {})
    assert rc == 0, output
    facts = result["ansible_facts"]["commcheck_rdma"]
    if os.path.isdir("/sys/class/infiniband") and os.listdir("/sys/class/infiniband"):
        pytest.skip("this machine has RDMA devices")
    assert facts["devices"] == []
    assert [f["code"] for f in facts["findings"] if f["severity"] == "error"] == ["no_rdma_devices"]
    assert facts["summary"]["devices"] == 0


@pytest.mark.full
def test_memlock_limit_is_read_from_the_module_process(tmp_path, tree_root):
    import resource  # pylint: disable=import-outside-toplevel

    def limit():
        resource.setrlimit(resource.RLIMIT_MEMLOCK, (65536, 65536))

    rc, result, output = _ansible(tmp_path, "clusterops.commcheck.rdma_facts", {"sysfs_root": tree_root},
                                  preexec_fn=limit)
    assert rc == 0, output
    facts = result["ansible_facts"]["commcheck_rdma"]
    assert facts["host"]["memlock"] == {"soft": 65536, "hard": 65536}
    # With CAP_IPC_LOCK (root) the limit does not bind RDMA registration; without it, registration fails.
    severity, code = ("info", "memlock_limited") if facts["host"]["ipc_lock"] else ("error", "ipc_lock_missing")
    memlock = [f for f in facts["findings"] if f["code"] == code]
    assert memlock and memlock[0]["severity"] == severity and "64 KiB" in memlock[0]["message"]


@pytest.mark.parametrize("args,message", [
    ({"subnet": "10.0.0.0/33"}, "not a valid CIDR"),
    pytest.param({"subnet": "fd00::/64"}, "must be an IPv4 network", marks=pytest.mark.full),
    pytest.param({"expected_rate_gbps": -5}, "expected_rate_gbps -5.0 must be between 0 and", marks=pytest.mark.full),
    pytest.param({"ib_gid_index": -1}, "ib_gid_index must be 0 or more", marks=pytest.mark.full),
    pytest.param({"address_source": "dns"}, "address_source 'dns' must be one of auto, ip, gids",
                 marks=pytest.mark.full),
    pytest.param({"transport": "kubectl"}, "transport=kubectl needs kubectl.pod", marks=pytest.mark.full),
])
def test_bad_input_fails_clearly(tmp_path, tree_root, args, message):
    rc, result, output = _ansible(tmp_path, "clusterops.commcheck.rdma_facts", dict(args, sysfs_root=tree_root))
    assert rc != 0
    assert message in result["msg"], result


@pytest.mark.full
def test_missing_root_fails_clearly(tmp_path):
    rc, result = _ansible(tmp_path, "clusterops.commcheck.rdma_facts", {"sysfs_root": str(tmp_path / "nope")})[:2]
    assert rc != 0 and "is not a directory" in result["msg"]


@pytest.mark.full
def test_kubectl_transport_dumps_sysfs_in_one_exec(tmp_path, tree_root):
    """kubectl transport through the lab's kubectl stand-in into a network namespace we create."""
    if os.geteuid() != 0 or not shutil.which("ip"):
        pytest.skip("needs root and ip(8) to create a network namespace")
    netns = "ccrf%d" % os.getpid()
    proc = subprocess.run(["ip", "netns", "add", netns], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, check=False)
    if proc.returncode != 0:
        pytest.skip("ip netns does not work here: %s" % proc.stderr.strip())
    try:
        state = tmp_path / "state.json"
        state.write_text(json.dumps({"default/pod1": {"metadata": {"name": "pod1", "namespace": "default"},
                                                      "spec": {"nodeName": "node1"}}}))
        config = tmp_path / "standin.json"
        config.write_text(json.dumps({"state": str(state),
                                      "nodes": {"node1": {"netns": netns, "addresses": ["10.99.0.2"]}}}))
        rc, result, output = _ansible(
            tmp_path, "clusterops.commcheck.rdma_facts",
            {"sysfs_root": tree_root, "transport": "kubectl",
             "kubectl": {"pod": "pod1", "binary": os.path.join(LAB, "kubectl_standin.py")}},
            env={"COMMCHECK_KUBECTL_STANDIN": str(config)})
        assert rc == 0, output
        facts = result["ansible_facts"]["commcheck_rdma"]
        assert facts["sources"]["sysfs"] == "dump"
        assert facts["gid_index"] == {"mlx5_0/1": None, "mlx5_1/1": None, "mlx5_2/1": 7, "mlx5_bond_0/1": 3}
        assert facts["host"]["in_container"] is True
    finally:
        subprocess.run(["ip", "netns", "del", netns], check=False)


# --- cpu_governor ---------------------------------------------------------------

def _governors(root):
    out = []
    for cpu in range(4):
        with open(os.path.join(root, "devices/system/cpu/cpu%d/cpufreq/scaling_governor" % cpu)) as handle:
            out.append(handle.read().strip())
    return out


@pytest.mark.full
def test_cpu_governor_set_check_diff_and_restore(tmp_path):
    root = str(tmp_path / "sys")
    sysfs_tree.build_sysfs(root, [], cpus=["powersave", "performance", "ondemand", "powersave"])
    rc, result, output = _ansible(tmp_path, "clusterops.commcheck.cpu_governor",
                                  {"governor": "performance", "sysfs_root": root}, extra=["--check", "--diff"])
    assert rc == 0, output
    assert result["changed"] is True and result["changed_cpus"] == ["cpu0", "cpu2", "cpu3"]
    assert "cpu0: powersave" in output and "cpu0: performance" in output      # the diff was shown
    assert _governors(root) == ["powersave", "performance", "ondemand", "powersave"]   # check mode wrote nothing

    rc, result, output = _ansible(tmp_path, "clusterops.commcheck.cpu_governor",
                                  {"governor": "performance", "sysfs_root": root})
    assert rc == 0 and result["changed"] is True, output
    previous = result["previous"]
    assert previous == {"cpu0": "powersave", "cpu1": "performance", "cpu2": "ondemand", "cpu3": "powersave"}
    assert _governors(root) == ["performance"] * 4

    rc, result = _ansible(tmp_path, "clusterops.commcheck.cpu_governor",
                          {"governor": "performance", "sysfs_root": root})[:2]
    assert rc == 0 and result["changed"] is False                          # honest changed

    rc, result = _ansible(tmp_path, "clusterops.commcheck.cpu_governor",
                          {"governors": previous, "sysfs_root": root})[:2]
    assert rc == 0 and result["changed"] is True
    assert _governors(root) == ["powersave", "performance", "ondemand", "powersave"]

    rc, result = _ansible(tmp_path, "clusterops.commcheck.cpu_governor",
                          {"governor": "turbo", "sysfs_root": root})[:2]
    assert rc != 0 and "does not offer the turbo governor" in result["msg"]
    assert _governors(root) == ["powersave", "performance", "ondemand", "powersave"]


@pytest.mark.full
def test_cpu_governor_without_cpufreq_is_skipped_not_failed(tmp_path):
    root = str(tmp_path / "sys")
    sysfs_tree.build_sysfs(root, [], cpus=[None, None])
    rc, result, output = _ansible(tmp_path, "clusterops.commcheck.cpu_governor",
                                  {"governor": "performance", "sysfs_root": root})
    assert rc == 0, output
    assert result["changed"] is False and "no cpufreq" in result["skipped_reason"]
