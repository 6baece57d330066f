# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A test module killed on its host (rc 137, the OOM killer) is named as killed, never as a NIC or PCIe fault."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import killed_module
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts.pair_analysis import analyze_pairs
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts.localization import (
    observations_from_records,
)

from test_pair_analysis import simulate  # noqa: E402  pylint: disable=wrong-import-position


def _connect_failed(side):
    """h2's module died before its sides started: its peers' clients never connect, its servers never answer."""
    if side["role"] == "client" and side["peer"] == "h2":
        return {"code": "connect_failed", "cause": "the client could not reach the server's TCP port"}
    return None


def test_killed_rcs_only():
    assert killed_module.killed_hosts({"h1": None, "h2": 137, "h3": "-9", "h4": 1, "h5": 2}) == ["h2", "h3"]


def test_a_killed_module_is_named_as_killed_not_as_a_bad_node():
    _hosts, sides, jobs = simulate(4, drop=("h2",), side_error=_connect_failed)
    blamed = analyze_pairs(sides, jobs=jobs, killed=killed_module.killed_hosts({"h2": 1}))
    # the same pairs without the rc: h2 is a bad node with the host fix (what the issue saw)
    assert blamed["summary"]["bad_nodes"] == ["h2"]
    result = analyze_pairs(sides, jobs=jobs, killed=killed_module.killed_hosts({"h0": None, "h2": 137}))
    assert result["summary"]["bad_nodes"] == [] and result["summary"]["bad_nics"] == []
    killed = [f for f in result["findings"] if f["params"]["finding"] == "module_killed"]
    assert [(f["host"], f["verdict"]) for f in killed] == [("h2", "error")]
    assert "test module was killed (signal 9" in killed[0]["cause"]
    assert "PCIe" not in killed[0]["fix"] and "OOM" in killed[0]["fix"]
    with_h2 = [r for r in result["records"] if "h2" in (r["host"], r["peer"])]
    assert with_h2 and all(r["verdict"] == "error" and "its module was killed (signal 9" in r["cause"]
                           and r["params"]["module_killed"] == "h2" for r in with_h2)
    assert all(r["verdict"] == "pass" for r in result["records"] if "h2" not in (r["host"], r["peer"]))
    # the localization reads no evidence from them
    assert all("h2" not in (o["host"], o["peer"]) for o in observations_from_records(result["records"]))
