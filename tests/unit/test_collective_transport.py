# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""NCCL's transport: a fall-back to NET/Socket with RDMA devices there fails, the records and the report show the
transport, the collective role passes discovery's devices, and the lab's nccl-tests emulator reports NET/IB."""

from __future__ import absolute_import, division, print_function

import os
import sys

import pytest
import yaml

from ansible_collections.clusterops.commcheck.plugins.module_utils.planning import collective_plan as cp
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.nccl_transport import TransportSeen
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import (
    report_html, report_markdown, report_model)

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
LAB = os.path.join(REPO, "tests", "lab")
for path in (LAB, os.path.join(LAB, "emulators")):
    if path not in sys.path:
        sys.path.insert(0, path)

import faults  # noqa: E402  pylint: disable=wrong-import-position
import nccl_net_emulation as emu  # noqa: E402  pylint: disable=wrong-import-position
import sysfs_tree  # noqa: E402  pylint: disable=wrong-import-position

DEVICES = ["mlx5_1", "mlx5_0"]


def parsed(transport, busbw=20.0):
    row = {"bytes": 1 << 30, "out_of_place": {"busbw_gbs": busbw, "algbw_gbs": busbw / 1.75, "wrong": 0},
           "in_place": {"busbw_gbs": busbw, "algbw_gbs": busbw / 1.75, "wrong": 0}}
    return {"rows": [row], "transport": transport, "errors": []}


def judge(transport, library="nccl", **kw):
    return cp.judge_run(library, "all_reduce", 8, 0, False, parsed(transport), **kw)


# ---------------------------------------------------------------- verdicts

def test_socket_with_rdma_devices_fails_naming_the_devices_and_the_fix():
    out = judge("Socket", ib_devices=DEVICES)
    assert out["verdict"] == "fail"
    assert out["cause"] == "NCCL used NET/Socket although the hosts have RDMA devices mlx5_0, mlx5_1"
    for word in ("NCCL_IB_HCA=mlx5_0,mlx5_1", "NCCL_SOCKET_IFNAME", "NCCL_IB_GID_INDEX", "libnccl-net",
                 "nccl-rdma-sharp-plugins", "NCCL_NET_PLUGIN", "NCCL_DEBUG=INFO", "via NET/IB/0", "NET/Socket"):
        assert word in out["fix"], word
    assert out["warnings"]


def test_socket_with_ib_expected_but_no_names_fails_with_the_generic_fix():
    out = judge("Socket", ib_expected=True)
    assert out["verdict"] == "fail" and out["cause"] == cp.FALLBACK_CAUSE and out["fix"] == cp.TRANSPORT_FIX


def test_socket_that_is_also_slow_gives_both_causes():
    out = judge("Socket", ib_devices=["mlx5_0"], expected_busbw_gbs=100.0)
    assert out["verdict"] == "fail"
    assert out["cause"].startswith(cp.FALLBACK_CAUSE) and "is below 80.0 GB/s" in out["cause"]
    assert "NCCL_IB_HCA=mlx5_0" in out["fix"]


@pytest.mark.parametrize("transport,kw", [
    ("Socket", {}),                                           # no RDMA devices on the hosts
    ("Socket", {"ib_expected": False, "ib_devices": []}),     # the role's opt-out passes exactly this
    ("IB", {"ib_devices": DEVICES}),
    ("IB", {"ib_expected": True}),
    (None, {"ib_devices": DEVICES}),                          # NCCL_DEBUG lines missing: nothing to judge
])
def test_runs_that_pass(transport, kw):
    out = judge(transport, **kw)
    assert (out["verdict"], out["cause"], out["warnings"]) == ("pass", None, [])
    assert out["transport"] == transport


def test_hccl_is_never_judged_on_the_nccl_transport():
    out = cp.judge_run("hccl", "all_reduce", 8, 0, False, {"rows": [{"bytes": 1024, "algbw_gbs": 10.0}],
                                                           "transport": "Socket"}, ib_devices=DEVICES)
    assert out["verdict"] == "pass"


def test_a_slow_run_on_ib_keeps_the_bisection_fix():
    out = judge("IB", ib_devices=DEVICES, expected_busbw_gbs=100.0)
    assert out["verdict"] == "fail" and "bisect" in out["fix"] and "Socket" not in out["cause"]


# ---------------------------------------------------------------- records

def module_result(transport, verdict, cause, bad_nodes=(), runs=None):
    runs = runs or [{"hosts": ["n1", "n2", "n3", "n4"], "verdict": verdict, "cause": cause, "busbw_gbs": 2.0}]
    return {"params": {"library": "nccl", "operation": "all_reduce", "transport": "host"}, "transport": transport,
            "verdict": verdict, "cause": cause, "fix": cp.TRANSPORT_FIX, "runs": runs, "bad_nodes": list(bad_nodes),
            "bisect": {"runs": len(runs)} if len(runs) > 1 else None}


def test_the_pool_record_keeps_the_transport_next_to_the_command_transport():
    [record] = cp.collective_records([module_result("IB", "pass", None)])
    assert record["metrics"]["transport"] == "IB"
    assert record["params"]["transport"] == "host"      # how commands reached the host, unchanged


def test_bisection_runs_keep_their_own_transport_and_a_fallback_node_is_a_config_culprit():
    cause = cp.transport_fallback_cause(["mlx5_0"])
    runs = [{"hosts": ["n1", "n2", "n3", "n4"], "verdict": "fail", "cause": cause},
            {"hosts": ["n1", "n2"], "verdict": "fail", "cause": cause, "transport": "Socket"},
            {"hosts": ["n3", "n4"], "verdict": "pass", "transport": "IB"},
            {"hosts": ["n2", "n3"], "verdict": "fail", "cause": cause}]
    records = cp.collective_records([module_result("Socket", "fail", cause, ["n2"], runs)])
    runs_out = [r for r in records if r["kind"] == "collective"]
    assert [r["metrics"]["transport"] for r in runs_out] == ["Socket", "Socket", "IB", None]
    [finding] = [r for r in records if r["kind"] == "finding"]
    assert finding["host"] == "n2" and finding["params"]["component"] == "config"


def test_a_slow_node_stays_a_host_culprit():
    slow = "bus bandwidth 1.0 GB/s is below 80.0 GB/s"
    runs = [{"hosts": ["n1", "n2"], "verdict": "fail", "cause": slow},
            {"hosts": ["n2", "n3"], "verdict": "fail", "cause": slow}]
    records = cp.collective_records([module_result("IB", "fail", slow, ["n2"], runs)])
    [finding] = [r for r in records if r["kind"] == "finding"]
    assert "component" not in finding["params"]


# ---------------------------------------------------------------- report

def collective_record(host, transport, verdict="pass"):
    return {"kind": "collective", "host": host, "peer": None, "verdict": verdict,
            "params": {"operation": "all_reduce", "nodes": 2, "size": 1 << 20, "transport": "host"},
            "metrics": {"busbw_gbs": 3.0, "transport": transport}}


def test_the_report_shows_the_transport_of_each_collective_series():
    # two runs of one check (the same node set): its line shows both networks
    records = [collective_record("n1", "Socket", "fail"), collective_record("n1", "IB")]
    [series] = report_model.collective_series(records)
    assert series["transport"] == "IB, Socket" and series["verdict"] == "fail"
    # runs on other node sets are lines of their own, each with its own network
    apart = report_model.collective_series([collective_record("n1", "Socket", "fail"), collective_record("n3", "IB")])
    assert [(s["transport"], s["verdict"]) for s in apart] == [("Socket", "fail"), ("IB", "pass")]
    summary = report_model.summarize(records)
    markdown = report_markdown.render_markdown(records, summary)
    assert "| series | transport | size (bytes) | busbw |" in markdown and "| IB, Socket |" in markdown
    page = report_html.render_html(records, summary)
    assert "<th>transport</th>" in page and "<td>IB, Socket</td>" in page


def test_a_series_without_transport_shows_none():
    record = collective_record("n1", None)
    assert report_model.collective_series([record])[0]["transport"] is None


# ---------------------------------------------------------------- the collective role

# which devices and whether IB is expected: tests/unit/test_collective_steps.py (the role's plan step)


def test_the_role_documents_and_defaults_the_opt_out():
    with open(os.path.join(REPO, "roles", "collective", "defaults", "main.yml")) as handle:
        assert yaml.safe_load(handle)["commcheck_collective_transport_check"] is True
    with open(os.path.join(REPO, "roles", "collective", "meta", "argument_specs.yml")) as handle:
        spec = yaml.safe_load(handle)["argument_specs"]["main"]["options"]["commcheck_collective_transport_check"]
    assert spec["type"] == "bool" and spec["default"] is True


# ---------------------------------------------------------------- the lab's nccl-tests emulator

def rdma_tree(root, states=("ACTIVE", "ACTIVE"), layer="Ethernet"):
    devices = [{"name": "mlx5_%d" % i, "ports": [{"port": 1, "state": state, "phys_state": "LinkUp",
                                                  "rate_gbps": 100, "link_layer": layer, "netdev": "eth%d" % i,
                                                  "ipv4": "10.0.%d.2" % i}]} for i, state in enumerate(states)]
    sysfs_tree.build_sysfs(str(root), devices, net=dict(("eth%d" % i, {"operstate": "up", "mtu": 1500})
                                                        for i in range(len(states))))
    return str(root)


def test_emulator_finds_active_ports_with_their_link_layer(tmp_path):
    assert emu.active_ports(rdma_tree(tmp_path / "roce")) == [("mlx5_0", 1, "RoCE"), ("mlx5_1", 1, "RoCE")]
    assert emu.active_ports(rdma_tree(tmp_path / "ib", ("DOWN", "ACTIVE"), "InfiniBand")) == [("mlx5_1", 1, "IB")]
    assert emu.active_ports(str(tmp_path / "none")) == []


@pytest.mark.parametrize("spec,names", [
    ("", ["mlx5_0", "mlx5_1", "mlx5_10"]), ("mlx5_1", ["mlx5_1", "mlx5_10"]), ("=mlx5_1", ["mlx5_1"]),
    ("^mlx5_1", ["mlx5_0"]), ("mlx5_0:1,mlx5_10:2", ["mlx5_0"]), ("bnxt", []),
])
def test_emulator_reads_nccl_ib_hca_as_nccl_does(spec, names):
    ports = [("mlx5_0", 1, "RoCE"), ("mlx5_1", 1, "RoCE"), ("mlx5_10", 1, "RoCE")]
    assert [p[0] for p in emu.hca_filter(ports, spec)] == names


def test_emulator_falls_back_to_socket_when_disabled_faulted_or_outside_the_lab(tmp_path, monkeypatch):
    monkeypatch.setattr(emu, "_lab_sysfs_by_netns", lambda: None)
    root = rdma_tree(tmp_path / "h1")
    env = {"COMMCHECK_LAB_SYSFS": root}
    assert [p[0] for p in emu.rank_ib_ports(env)] == ["mlx5_0", "mlx5_1"]
    assert emu.rank_ib_ports(dict(env, NCCL_IB_DISABLE="1")) == []
    assert emu.rank_ib_ports({}) == []
    fault = faults.SocketFallback(FakeLab(root), "h1")
    fault.inject()
    assert emu.rank_ib_ports(env) == [] and fault.expected == [faults.culprit("config", "h1")]
    fault.heal()
    fault.heal()
    assert emu.rank_ib_ports(env) and fault.lab.healed == 2
    assert fault.FALLBACK_FILE == emu.FALLBACK_FILE


class FakeLab(object):
    def __init__(self, root):
        self.root, self.healed = root, 0

    def sysfs_root(self, host):
        return self.root

    def heal(self):
        self.healed += 1


class FakeComm(object):
    """One rank of a job whose other ranks answered ``others`` to allgather."""

    def __init__(self, rank, size, others):
        self.rank, self.size, self.others = rank, size, others

    def Get_rank(self):
        return self.rank

    def Get_size(self):
        return self.size

    def allgather(self, value):
        return [value] + list(self.others)

    def Barrier(self):
        pass


def transport_of(lines):
    seen, warnings, result = TransportSeen(), set(), {}
    for line in lines:
        seen.info(line.split("NCCL INFO ", 1)[1].strip(), warnings)
    seen.finish(result)
    return result, warnings


@pytest.mark.parametrize("others,network", [([True], "IB"), ([False], "Socket")])
def test_emulator_lines_parse_as_the_network_every_rank_can_use(tmp_path, monkeypatch, others, network):
    monkeypatch.setattr(emu, "_lab_sysfs_by_netns", lambda: None)
    lines = []
    used = emu.debug_lines(FakeComm(0, 2, others), ["h1", "h2"], "h1", 7, {"COMMCHECK_LAB_SYSFS": rdma_tree(
        tmp_path / "h1")}, lines.append)
    result, _warnings = transport_of(lines)
    assert used == network and result["transport"] == network
    assert result["channel_transports"] == ["NET/" + network]
    assert any(("NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_1:1/RoCE ; OOB " in line) == (network == "IB")
               for line in lines)


def test_emulator_lines_of_a_host_without_devices_warn_as_nccl_does(monkeypatch):
    monkeypatch.setattr(emu, "_lab_sysfs_by_netns", lambda: None)
    lines = []
    emu.debug_lines(FakeComm(1, 2, [True]), ["h1", "h1"], "h1", 7, {}, lines.append)
    result, warnings = transport_of(lines)
    assert result["transport"] == "Socket" and result["channel_transports"] == ["SHM"]
    assert any("No device found" in w for w in warnings)
