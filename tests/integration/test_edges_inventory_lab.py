# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Inventory mistakes on the 4-host 2-rail lab (issue 39): no false pass, no false blame from a name.

- a commcheck_target that matches no host (an empty group, a misspelled one): an error that names the
  pattern and the inventory's groups, rc != 0, a history summary that is not ``pass``;
- two inventory names with one address: refused before anything runs, naming both and the address;
- an inventory name with a space and non-ASCII letters: a label only (peers are addresses), so the run
  passes on the healthy lab and the records and the report keep the name as it is;
- one machine behind two spellings of its address (an ssh alias and the address): refused right after
  discovery, which reads one machine (boot id, network namespace, host name) for both names.

Fast tier: the refusals before anything runs take 20-30 s each, the one after discovery about 45 s. Full
tier: the named host's run, one short one-click run (about 3 minutes on the loaded 2-core build machine).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import copy
import os

import pytest
import yaml

import oneclick_helpers as oc
from lab_checks import HEALTHY_VERDICTS

SPACED = u"nœud 01 ü"


@pytest.fixture(scope="module")
def lab(lab4):
    return lab4


def _host_vars(lab, host):
    with open(lab.inventory) as handle:
        inventory = yaml.safe_load(handle)
    return copy.deepcopy(inventory["all"]["children"]["lab"]["hosts"][host])


def _alias(lab, host, name):
    """An inventory overlay that adds ``name`` to the group lab with every variable of ``host``."""
    return {"all": {"children": {"lab": {"hosts": {name: _host_vars(lab, host)}}}}}


def _refused_before_anything_ran(run, lab):
    """rc != 0, no record of a check, a summary that is an error with its cause, nothing left on the hosts."""
    assert run.rc != 0, run.tail()
    assert run.records() == [], run.records()
    summary = run.summary()
    assert summary["verdict"] == "error" and summary["cause"], summary
    assert not oc.leftover_test_processes(lab)
    return summary


@pytest.mark.parametrize("target, overlay", [
    ("gpu_nodes", {"all": {"children": {"gpu_nodes": {"hosts": {}}}}}),
    ("lba", None),
], ids=["empty-group", "misspelled-group"])
def test_a_target_that_matches_no_host_is_an_error(lab, tmp_path, target, overlay):
    run = oc.oneclick(lab, tmp_path, {"commcheck_target": target}, overlay=overlay)
    _refused_before_anything_ran(run, lab)
    assert "no hosts matched commcheck_target=%r" % target in run.output, run.tail()
    assert "lab (4 hosts)" in run.output and "Set commcheck_target to a group" in run.output, run.tail()
    assert ("gpu_nodes (0 hosts)" in run.output) == (overlay is not None), run.tail()


def test_two_inventory_names_with_one_address_are_refused_before_anything_runs(lab, tmp_path):
    first = lab.hosts[0]
    address = _host_vars(lab, first)["ansible_host"]
    run = oc.oneclick(lab, tmp_path, {"commcheck_checks": ["rdma", "tcp"]}, overlay=_alias(lab, first, "h1-again"))
    _refused_before_anything_ran(run, lab)
    assert ("hosts %r, 'h1-again' share the address %r (ansible_host, as their RDMA and collective address and "
            "TCP address)" % (first, address)) in run.output, run.tail()
    assert "nothing was run" in run.output


@pytest.mark.full
def test_a_host_named_with_a_space_and_non_ascii_letters_is_a_label_and_the_run_passes(lab, tmp_path):
    first = lab.hosts[0]
    run = oc.oneclick(lab, tmp_path, dict(oc.COLLECTIVE, commcheck_checks=["rdma", "collective", "tcp"]),
                      overlay=_alias(lab, first, SPACED), limit="all:!%s" % first)
    assert run.rc == 0, run.tail()
    records = run.records()
    named = [r for r in records if SPACED in (r.get("host"), r.get("peer"))]
    kinds = set(r["kind"] for r in named)
    assert {"rdma_bw", "tcp_bw"} <= kinds, sorted(kinds)
    bad = [(r["kind"], r["host"], r["peer"], r["verdict"], r.get("cause")) for r in records
           if r["kind"] in ("rdma_bw", "rdma_lat", "tcp_bw", "collective") and r["verdict"] not in HEALTHY_VERDICTS]
    assert not bad, bad
    pools = run.records("collective")
    assert pools and all(SPACED in r["params"]["hosts"] for r in pools if r["params"].get("stage") == "pool"), pools
    assert run.summary()["verdict"] in ("pass", "warn"), run.summary()
    directory, results = oc.report_of(run.report_dir, run.run_id)
    assert SPACED in [h for r in results["records"] for h in (r.get("host"), r.get("peer"))]
    for name in ("report.md", "report.html"):
        with open(os.path.join(directory, name), encoding="utf-8") as handle:
            assert SPACED in handle.read(), name


def test_one_machine_behind_two_spellings_of_its_address_is_refused_after_discovery(lab, tmp_path):
    """The inventory cannot tell 'h1' (an ssh alias) from its address; discovery reads one machine twice."""
    first = lab.hosts[0]
    overlay = _alias(lab, first, "h1-by-alias")
    overlay["all"]["children"]["lab"]["hosts"]["h1-by-alias"]["ansible_host"] = first
    run = oc.oneclick(lab, tmp_path, {"commcheck_checks": ["rdma", "tcp"]}, overlay=overlay)
    assert run.rc != 0, run.tail()
    # discovery sees one machine twice: by its identity, or by the rail addresses the two names share
    assert ("hosts %r, 'h1-by-alias' are one machine (host name %r, boot id" % (first, first) in run.output
            or "hosts %r, 'h1-by-alias' share the address" % first in run.output
            and "two inventory names that reach one machine" in run.output), run.tail()
    assert not [r for r in run.records() if r["kind"] in ("rdma_bw", "rdma_lat", "tcp_bw")]
    assert run.summary()["verdict"] != "pass"
    assert not oc.leftover_test_processes(lab)
