# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the user set for a check role's own variable wins in the one-click play (issue 35): the inventory gives the
TCP check its pattern and hosts, the run's commcheck_pattern says ring; the TCP check runs the user's star, centered
on the first of the user's hosts, not the ring over the play's hosts."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import pytest

import oneclick_helpers as oc
from lab_checks import HEALTHY_VERDICTS

pytestmark = [pytest.mark.lab, pytest.mark.full]


@pytest.fixture(scope="module")
def lab(lab_factory):
    return lab_factory("uwins3", hosts=3, rails=1)


def test_the_inventory_s_tcp_pattern_and_hosts_win_over_the_one_click_s(lab, tmp_path):
    first, second, third = lab.hosts
    overlay = {"all": {"vars": {"commcheck_tcp_pattern": "star", "commcheck_tcp_hosts": [third, first, second]}}}
    run = oc.oneclick(lab, tmp_path, {"commcheck_checks": ["tcp"], "commcheck_pattern": "ring"},
                      overlay=overlay)
    assert run.rc == 0, run.tail()
    tcp = [r for r in run.records("tcp_bw") if not r["params"].get("retest")]
    assert tcp and all(r["verdict"] in HEALTHY_VERDICTS for r in tcp), tcp
    # star around the first host the user listed: two pairs, never the ring's pair of the other two
    assert set(frozenset((r["host"], r["peer"])) for r in tcp) == set(
        [frozenset((third, first)), frozenset((third, second))]), [(r["host"], r["peer"]) for r in tcp]
