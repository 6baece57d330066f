# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one-click check on an InfiniBand two-tier lab (``lab.py up --tiers 2 --link-layer InfiniBand``): the leaf
switches come from smpquery, by their node descriptions.

6 hosts, 2 rails, 2 hosts a leaf, every rail port presented as InfiniBand (its netdev as IPoIB's, addresses from
``ip``): no lldpctl on the hosts, the lab's smpquery EMULATOR answering the directed route out of each port as the
leaf bridge it hangs off. The perftest EMULATOR moves real bytes over the ports' netdevs (an InfiniBand GID holds no
IPv4 address). A slow leaf 2 on rail 1 is named by its switch's node description, and no host.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os

import pytest

import faults
import lab as lablib
import oneclick_helpers as oc
from conftest import LabHandle
from lab_checks import slow_rate

pytestmark = [pytest.mark.lab, pytest.mark.slow, pytest.mark.full]

HOSTS, RAILS, PER_LEAF = 6, 2, 2
EXTRA = {"commcheck_checks": ["discover", "rdma"], "commcheck_rdma_ops": ["write"],
         "commcheck_rdma_metrics": ["bw"], "commcheck_rdma_duration": 2}


@pytest.fixture(scope="module")
def ib_lab(lab_available):  # pylint: disable=unused-argument
    name = "spine36b%d" % (os.getpid() % 10000)
    lablib.down(name)
    lab = lablib.up(name, HOSTS, rails=RAILS, owner_pid=os.getpid(), tiers=2, per_leaf=PER_LEAF,
                    link_layer="InfiniBand")
    try:
        yield LabHandle(lab)
    finally:
        lablib.down(name)


def description(leaf):
    return "MF0;%s:MSB7800/U1" % leaf


def test_a_slow_leaf_of_an_infiniband_fabric_is_named_by_its_switch_s_node_description(ib_lab, tmp_path):
    assert not os.path.exists(os.path.join(ib_lab.dir, "bin", "lldpctl"))
    fault = faults.SlowLeafSwitch(ib_lab.lab, slow_rate(ib_lab), rail=1, leaf=2)
    ib_lab.lab.heal()
    fault.inject()
    try:
        run = oc.oneclick(ib_lab, tmp_path, EXTRA, on_line=fault.during)
    finally:
        fault.heal()
        ib_lab.lab.heal()
    [localization] = [r for r in run.records("localization") if r["params"].get("check") == "rdma_perf"]
    # each host's leaf and port per rail, from smpquery: the switch's node description, its port the LocalPort
    assert localization["params"]["topology"] == dict(
        (host, dict((str(rail), {"leaf": description("lab-r%d-leaf%d" % (rail, num // PER_LEAF + 1)),
                                 "port": str(num % PER_LEAF + 1), "source": "smpquery"}) for rail in range(RAILS)))
        for num, host in enumerate(ib_lab.hosts)), run.tail()
    named = [(r["params"]["component"], r["host"], r["params"].get("rail"),
              (r["params"].get("switch") or {}).get("leaves"))
             for r in run.records("finding") if r["params"].get("check") == "rdma_perf"
             and r["params"].get("component") not in (None, "flaky")]
    assert named == [("leaf", "*", 1, [description("lab-r1-leaf2")])], (named, run.tail())
    [finding] = [r for r in run.records("finding") if r["params"].get("component") == "leaf"]
    assert finding["params"]["switch"]["hosts"] == ["h3", "h4"]
    assert "every host behind leaf switch %s (h3, h4) fails" % description("lab-r1-leaf2") in finding["cause"]
    # the InfiniBand ports' own tests: no RoCE GID chosen, the bytes really moved over rail 1
    bw = [r for r in run.records("rdma_bw") if not r["params"].get("retest")]
    assert bw and all(" -x " not in " ".join(r["evidence"]) for r in bw if r["params"]["rail"] == 1), [
        r["evidence"] for r in bw[:2]]
