# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The typed endpoint record and what gid_index auto resolves to."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import pytest

from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import perftest_cmd as pc
from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery.endpoint import (
    Endpoint, resolve_gid_index)
from ansible_collections.clusterops.commcheck.plugins.module_utils.options.option_rules import OptionError


def test_endpoint_fields_are_typed():
    end = Endpoint(host="node-a", device="mlx5_0", port="2", gid_index=3.0, address="10.0.0.1", rail=1, numa_node=0)
    assert end == ("node-a", "mlx5_0", 2, 3, "10.0.0.1", 1, 0)
    assert isinstance(end.gid_index, int) and isinstance(end.port, int)
    assert Endpoint() == (None, None, 1, None, None, None, None)


@pytest.mark.parametrize("field, value", [
    ("device", "-x"), ("device", "mlx5;0"), ("port", 0), ("port", 256), ("gid_index", 256), ("gid_index", True),
    ("gid_index", "auto"), ("address", "-1"), ("rail", 1024), ("numa_node", -2), ("host", "a\nb"),
])
def test_endpoint_refuses_bad_fields(field, value):
    with pytest.raises(OptionError, match=field if field != "port" else "ib_port"):
        Endpoint(**{field: value})


def test_endpoint_from_a_round_plan_side():
    side = {"role": "client", "peer": "node-a", "rail": 1, "device": "mlx5_1", "ib_port": 1, "gid_index": 3,
            "server": "10.0.1.11", "tcp_port": 18516}
    assert Endpoint.from_side(side, host="node-b") == ("node-b", "mlx5_1", 1, 3, None, 1, None)
    assert Endpoint.from_side({"gid_index": "auto"}).gid_index is None


def test_argv_takes_device_port_and_gid_from_the_endpoint():
    end = Endpoint(device="mlx5_3", port=1, gid_index=5)
    argv = pc.build_argv({"role": "server", "device": "mlx5_0", "gid_index": "auto"}, endpoint=end)
    assert argv[:7] == ["ib_write_bw", "-d", "mlx5_3", "-i", "1", "-x", "5"]
    assert pc.endpoint_args(Endpoint()) == ["-i", "1"]


def test_resolve_gid_index_facts_then_sysfs_then_default():
    facts = {"devices": [{"name": "mlx5_0", "ports": [{"port": 1, "link_layer": "Ethernet", "gid_index": 4}]}]}
    side = {"device": "mlx5_0", "ib_port": 1, "gid_index": "auto"}
    assert resolve_gid_index(side, facts, lambda path, default: default, "/sys") == (4, None)
    assert resolve_gid_index(dict(side, gid_index=7), None, None, "/sys") == (7, None)
    index, warning = resolve_gid_index(side, None, lambda path, default: default, "/s")
    assert index is None and "unknown to the facts and to /s" in warning
    index, warning = resolve_gid_index(dict(side, device=None), None, None, "/sys")
    assert index is None and "without a device" in warning
    bad = {"devices": [{"name": "mlx5_0", "ports": [{"port": 1, "link_layer": "Ethernet", "gid_index": 300}]}]}
    with pytest.raises(OptionError, match="rdma_facts gid_index of mlx5_0 port 1"):
        resolve_gid_index(side, bad, None, "/sys")
