# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""commands/collective_spec.py: the collective module's parameters checked into a run spec."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import pytest

from ansible_collections.clusterops.commcheck.plugins.modules import collective
from ansible_collections.clusterops.commcheck.plugins.module_utils.options import option_rules as rules
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import collective_spec


def params(**overrides):
    values = dict((name, spec.get("default")) for name, spec in collective.ARGUMENT_SPEC.items())
    values.update(library="nccl", hosts=["a:8", "b:8"], gpus_per_node=8, transport="host")
    values.update(overrides)
    return values


def test_validate_derives_layout_and_expected_busbw():
    spec = collective_spec.validate(params(nic_rates_gbps=[400.0] * 8))
    assert [h["name"] for h in spec["hosts"]] == ["a", "b"]
    assert spec["layout"]["processes_per_node"] == 8
    assert spec["expected"] == pytest.approx(360.0)
    assert spec["env"]["NCCL_DEBUG"] == "INFO"


def test_initial_result_has_the_threshold_and_what_will_run():
    given = params(expected_busbw_gbs=40.0)
    spec = collective_spec.validate(given)
    result = collective_spec.initial_result(spec, given, "host")
    assert result["verdict"] == "skipped" and result["threshold_busbw_gbs"] == 32.0
    assert result["params"]["hosts"] == ["a", "b"] and result["params"]["transport"] == "host"
    assert result["runs"] == [] and result["bisect"] is None


def test_validate_refuses_before_anything_runs():
    with pytest.raises(rules.OptionError, match="min_fraction"):
        collective_spec.validate(params(min_fraction=0))
    with pytest.raises(rules.OptionError, match="mpi_agent_dir"):
        collective_spec.validate(params(mpi_agent_dir="/opt/agent"))
