# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every list option of every module and controller action: a bad item is refused naming the option and its index.

An empty item ('' or blanks) is refused, never dropped; an item that reads as a
flag, or holds a control character, is refused. The message names the item as
``option[N]`` (a sub-option's list as ``option.sub[N]``), as the role options do.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import pytest

import test_hostile_module_args as hostile
from module_in_process import run_module
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import cpu_governor as cg
from ansible_collections.clusterops.commcheck.plugins.module_utils.kubernetes import k8s_pods
from ansible_collections.clusterops.commcheck.plugins.modules import cpu_governor, quarantine
from test_hostile_module_args import call, recorder  # noqa: F401  pylint: disable=unused-import

# One item of each class: empty, blank (a check of truth alone takes it), a flag, a control character.
BAD = ["", "   ", hostile.FLAG, "a\nb"]
LISTS = [option for option in hostile.options_of(["text", "path"], hostile.judging())
         if hostile.kind_of(dict(hostile.SPECS[option[0]])[option[1]]).startswith("list:")]


# Lists that are data on the controller, never a command: an item that reads as a flag may be taken as it is.
DATA_ONLY = set([(("action", "fleet_facts"), ("hosts",)), (("action", "fleet_facts"), ("unreachable",)),
                 (("action", "report"), ("ignore_params",))])


@pytest.mark.parametrize("option", LISTS, ids=hostile.option_id)
def test_a_bad_list_item_is_refused_naming_its_index(option, call):  # noqa: F811  pylint: disable=redefined-outer-name
    plugin, path = option
    problems = []
    for value in BAD:
        result, ran = call(plugin, path, value)
        if value == hostile.FLAG and option in DATA_ONLY and not result.get("failed"):
            problem = "ran %s" % ran if ran else None
        else:
            problem = hostile.refusal_problem(path, result, ran)
            if not problem and "%s[0]" % path[-1] not in result["msg"]:
                problem = "the message does not name the item: %s" % result["msg"]
        if problem:
            problems.append("%r: %s" % (value, problem))
    assert problems == [], "%s %s:\n  %s" % ("-".join(plugin), ".".join(path), "\n  ".join(problems))


# ---------------------------------------------------------------- the lists the brief named, and their siblings

@pytest.mark.parametrize("hosts,index", [(["node-1", "node-2", ""], 2), (["", "node-1"], 0), (["node-1", "  "], 1)])
def test_quarantine_names_the_empty_host_and_its_index(hosts, index, monkeypatch, capsys):
    result = run_module(quarantine, monkeypatch, capsys, {"backend": "kubernetes", "hosts": hosts})
    assert result["failed"] is True and "hosts[%d]" % index in result["msg"], result["msg"]
    assert "is empty" in result["msg"], result["msg"]


@pytest.mark.parametrize("findings,where", [([{"host": "node-1"}, {"host": ""}], "findings[1]"),
                                            ([{"peer": "x"}], "findings[0]"),
                                            ([{"host": "node-1"}, {"host": "node-2"}, "node-3"], "findings[2]"),
                                            ([{"host": "node-1"}, 5], "findings[1]")])
def test_quarantine_names_the_finding_it_cannot_read(findings, where, monkeypatch, capsys):
    result = run_module(quarantine, monkeypatch, capsys, {"backend": "kubernetes", "findings": findings})
    assert result["failed"] is True and where in result["msg"], result["msg"]


@pytest.mark.parametrize("cpus,where", [(["0", "", "2"], "cpus[1]"), (["0,,2"], "cpus[0]"), (["1", "3,"], "cpus[1]"),
                                        ([" "], "cpus[0]"), (["0", "x"], "cpus[1]")])
def test_cpu_governor_refuses_an_empty_cpu_naming_its_index(cpus, where):
    with pytest.raises(cg.GovernorError) as caught:
        cg.parse_cpu_list(cpus)
    assert str(caught.value).startswith(where + ": "), caught.value


def test_cpu_governor_module_refuses_an_empty_cpu(monkeypatch, capsys, tmp_path):
    root = hostile.sysfs_tree(str(tmp_path / "sys"))
    result = run_module(cpu_governor, monkeypatch, capsys, {"governor": "performance", "sysfs_root": root,
                                                            "cpus": ["0", ""]})
    assert result["failed"] is True and result["msg"].startswith("cpus[1]: ''"), result["msg"]


def test_test_pods_refuses_an_empty_network_naming_its_index():
    errors = k8s_pods.validate_params({"state": "absent", "networks": ["default/net1", " "]})
    assert any(e.startswith("networks[1] ' ' is empty") for e in errors), errors
