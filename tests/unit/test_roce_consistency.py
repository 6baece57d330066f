# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""RoCE consistency preflight: GID type, address family, subnet, MTU, traffic class of both ends."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import copy
import os
import sys

import pytest


from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import roce_consistency as rc
from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery.rdma_discovery import discover
from ansible_collections.clusterops.commcheck.plugins.module_utils.planning.schedule import commcheck_schedule, plan_rounds
from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery.sysfs_snapshot import snapshot_from_fs
from ansible_collections.clusterops.commcheck.plugins.module_utils.planning.families import family
from ansible_collections.clusterops.commcheck.plugins.plugin_utils.pair_engine import preflight

LAB = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lab")
sys.path.insert(0, LAB)
import sysfs_tree  # noqa: E402  pylint: disable=wrong-import-position
sys.path.remove(LAB)


def v4gid(addr):
    a, b, c, d = [int(x) for x in addr.split(".")]
    return "0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x" % (a, b, c, d)


def facts(addr, mtu=4200, gid_type="RoCE v2", link_layer="Ethernet", tclass=None, tos=None, cidr=None,
          active_mtu=None, gid_index=3):
    gids = [{"index": 2, "gid": v4gid(addr), "type": "IB/RoCE v1", "netdev": "eth0", "ipv4": addr},
            {"index": 3, "gid": v4gid(addr), "type": gid_type, "netdev": "eth0", "ipv4": addr},
            {"index": 4, "gid": "fd00:0000:0000:0000:0000:0000:0000:0002", "type": "RoCE v2", "netdev": "eth0",
             "ipv4": None}]
    port = {"port": 1, "state": "ACTIVE", "link_layer": link_layer, "netdev": "eth0", "netdev_mtu": mtu,
            "active_mtu": active_mtu, "gids": gids, "gid_index": gid_index, "traffic_class": tclass,
            "roce_tos": tos}
    if cidr:
        port["ipv4_cidr"] = [cidr]
    return {"devices": [{"name": "mlx5_0", "ports": [port]}]}


def check(a, b, **kw):
    return rc.check_pair(rc.port_view(a, "mlx5_0"), rc.port_view(b, "mlx5_0"), "h1", "h2", 0, **kw)


def codes(findings):
    return [f["code"] for f in findings]


@pytest.mark.parametrize("mtu,active", [(1500, 1024), (2200, 2048), (4200, 4096), (9000, 4096), (4191, 2048),
                                        (4192, 4096), (300, None), (None, None)])
def test_roce_active_mtu_follows_the_kernel(mtu, active):
    assert rc.roce_active_mtu(mtu) == active


def test_consistent_pair_has_no_findings():
    assert check(facts("10.0.0.2"), facts("10.0.0.3")) == []


def test_gid_type_mismatch_is_an_error_with_the_fix():
    found = check(facts("10.0.0.2"), facts("10.0.0.3", gid_type="IB/RoCE v1"))
    assert codes(found) == ["gid_type_mismatch"]
    assert found[0]["severity"] == "error" and "RoCE v2 at index 3 vs IB/RoCE v1 at index 3" in found[0]["message"]
    assert "NCCL_IB_GID_INDEX" in found[0]["fix"] and found[0]["values"] == {"h1": "RoCE v2", "h2": "IB/RoCE v1"}


def test_both_v1_is_a_warning():
    assert codes(check(facts("10.0.0.2", gid_index=2), facts("10.0.0.3", gid_index=2))) == ["gid_not_roce_v2"]


def test_gid_family_mismatch():
    found = check(facts("10.0.0.2"), facts("10.0.0.3", gid_index=4))
    assert codes(found) == ["gid_family_mismatch"]


def test_missing_gid():
    found = check(facts("10.0.0.2"), facts("10.0.0.3", gid_index=9))
    assert codes(found) == ["gid_missing"] and "on h2" in found[0]["message"]
    found = rc.check_pair(rc.port_view(facts("10.0.0.2"), "mlx5_0", gid_index="7"),
                          rc.port_view(facts("10.0.0.3"), "mlx5_0"), "h1", "h2")
    assert codes(found) == ["gid_missing"]


def test_subnets_from_prefixes_or_the_given_subnet():
    same = check(facts("10.0.0.2", cidr="10.0.0.2/24"), facts("10.0.0.3", cidr="10.0.0.3/24"))
    assert same == []
    found = check(facts("10.0.0.2", cidr="10.0.0.2/24"), facts("10.0.1.3", cidr="10.0.1.3/24"))
    assert codes(found) == ["gid_subnet_mismatch"] and "routes RoCE v2" in found[0]["message"]
    # prefixes unknown: not judged ...
    assert check(facts("10.0.0.2"), facts("10.0.1.3")) == []
    # ... unless the RDMA subnet is given
    found = check(facts("10.0.0.2"), facts("10.9.1.3"), subnet="10.0.0.0/16")
    assert codes(found) == ["gid_subnet_mismatch"] and "of h2 is outside the RDMA subnet" in found[0]["message"]
    with pytest.raises(rc.PreflightError):
        check(facts("10.0.0.2"), facts("10.0.0.3"), subnet="ten")


def test_mtu_mismatches():
    found = check(facts("10.0.0.2", mtu=9000), facts("10.0.0.3", mtu=1500))
    assert codes(found) == ["active_mtu_mismatch", "netdev_mtu_mismatch"]
    assert "(4096 vs 1024) (derived from the netdev MTU); the pair runs at 1024 bytes" in found[0]["message"]
    # same active MTU, different netdev MTU: only the netdev one
    assert codes(check(facts("10.0.0.2", mtu=9000), facts("10.0.0.3", mtu=4200))) == ["netdev_mtu_mismatch"]
    # ibv_devinfo's active_mtu wins over the derived one
    found = check(facts("10.0.0.2", active_mtu=2048), facts("10.0.0.3", active_mtu=4096))
    assert codes(found) == ["active_mtu_mismatch"] and "derived" not in found[0]["message"]
    found = check(facts("10.0.0.2", active_mtu=2048), facts("10.0.0.3"))
    assert "(2048 vs 4096) (derived from the netdev MTU)" in found[0]["message"]


def test_traffic_class_and_tos_where_readable():
    found = check(facts("10.0.0.2", tclass=106, tos=106), facts("10.0.0.3", tclass=0, tos=106))
    assert codes(found) == ["traffic_class_mismatch"] and "106 vs 0" in found[0]["message"]
    assert codes(check(facts("10.0.0.2", tos=96), facts("10.0.0.3", tos=104))) == ["roce_tos_mismatch"]
    # unreadable on one side: not judged
    assert check(facts("10.0.0.2", tclass=106), facts("10.0.0.3")) == []


def test_infiniband_and_mixed_link_layers():
    ib_a = facts("10.0.0.2", link_layer="InfiniBand", active_mtu=4096)
    ib_b = facts("10.0.0.3", link_layer="InfiniBand", active_mtu=2048)
    assert codes(check(ib_a, ib_b)) == ["active_mtu_mismatch"]
    found = check(facts("10.0.0.2"), ib_b)
    assert codes(found) == ["link_layer_mismatch"] and found[0]["severity"] == "error"


def test_unknown_port_is_a_warning_not_a_crash():
    found = rc.check_pair(None, rc.port_view(facts("10.0.0.3"), "mlx5_0"), "h1", "h2")
    assert codes(found) == ["port_unknown"] and "facts of h1" in found[0]["message"]
    assert rc.port_view(facts("10.0.0.3"), "mlx5_9") is None


def lab_facts(tmp_path, name, addr, mtu=1500):
    root = str(tmp_path / name)
    sysfs_tree.build_sysfs(root, [{"name": "mlx5_0", "numa_node": 0, "ports": [
        {"port": 1, "state": "ACTIVE", "rate_gbps": 200, "netdev": "ens1f0np0", "ipv4": addr}]}],
        net={"ens1f0np0": {"mtu": mtu}})
    return discover(snapshot_from_fs(root))


def test_preflight_over_planned_jobs_with_discovered_facts(tmp_path):
    hosts = ["h1", "h2", "h3"]
    by_host = {"h1": lab_facts(tmp_path, "h1", "10.0.0.11", 4200), "h2": lab_facts(tmp_path, "h2", "10.0.0.12", 4200),
               "h3": lab_facts(tmp_path, "h3", "10.0.0.13", 1500)}
    rails = dict((h, [{"rail": 0, "device": "mlx5_0", "port": 1, "gid_index": 3}]) for h in hosts)
    plans = plan_rounds(commcheck_schedule(hosts, "mesh"), rails, [["write", "bw"], ["read", "bw"]])
    asked = {"commcheck_roce_preflight": True}.get
    out = preflight(family("rdma"), asked, plans, by_host, rails)
    assert out["checked"] == 3
    assert sorted(k for k, v in out["pairs"].items() if v) == sorted(
        k for k in out["pairs"] if "h3" in k)
    assert all(codes_ == ["active_mtu_mismatch", "netdev_mtu_mismatch"]
               for key, codes_ in out["pairs"].items() if "h3" in key)
    recs = out["records"]
    assert len(recs) == 4 and all(r["kind"] == "finding" and r["verdict"] == "warn" for r in recs)
    assert recs[0]["params"]["check"] == "roce_preflight" and recs[0]["evidence"]
    # a host whose facts are missing
    del by_host["h2"]
    out = preflight(family("rdma"), asked, plans, by_host, rails)
    assert sum(1 for r in out["records"] if r["params"]["finding"] == "port_unknown") == 2
    # commcheck_roce_preflight off: nothing is checked
    assert preflight(family("rdma"), {"commcheck_roce_preflight": False}.get, plans, by_host, rails)["records"] == []


def test_discovery_reads_traffic_class_and_tos(tmp_path):
    root = str(tmp_path / "sys")
    sysfs_tree.build_sysfs(root, [{"name": "mlx5_0", "ports": [
        {"port": 1, "state": "ACTIVE", "rate_gbps": 200, "netdev": "eth0", "ipv4": "10.0.0.2"}]}])
    tc_dir = os.path.join(root, "class", "infiniband", "mlx5_0", "tc", "1")
    os.makedirs(tc_dir)
    with open(os.path.join(tc_dir, "traffic_class"), "w") as handle:
        handle.write("Global tclass=106\n")
    cfg = os.path.join(root, "kernel", "config", "rdma_cm", "mlx5_0", "ports", "1")
    os.makedirs(cfg)
    with open(os.path.join(cfg, "default_roce_tos"), "w") as handle:
        handle.write("104\n")
    port = discover(snapshot_from_fs(root))["devices"][0]["ports"][0]
    assert port["traffic_class"] == 106 and port["roce_tos"] == 104
    other = copy.deepcopy(discover(snapshot_from_fs(root)))
    other["devices"][0]["ports"][0]["traffic_class"] = 0
    assert codes(rc.check_pair(rc.port_view(discover(snapshot_from_fs(root)), "mlx5_0"),
                               rc.port_view(other, "mlx5_0"))) == ["traffic_class_mismatch"]
