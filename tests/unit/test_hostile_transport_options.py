# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The kubectl transport's options are checked whatever the transport: a bad value is an error even while unused.

Every module with a ``kubectl`` option, called with ``transport=host`` and one
bad kubectl sub-option, fails naming ``kubectl`` and the sub-option before
anything runs; the role option ``commcheck_kubectl`` is checked the same way.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import pytest

import test_hostile_module_args as hostile
from test_hostile_module_args import call, recorder  # noqa: F401  pylint: disable=unused-import
from ansible_collections.clusterops.commcheck.plugins.action.validate_options import load_specs
from ansible_collections.clusterops.commcheck.plugins.plugin_utils import role_options

BAD = {"pod": ["-p", "Bad_Pod", ""], "namespace": ["-n", "a.b", "Bad"], "container": ["-c", "a/b"],
       "context": ["-ctx", "a b"], "kubeconfig": ["../kubeconfig", "relative/config", "/tmp/a\nb"],
       "binary": ["bin/kubectl", "--kubectl", "/usr/../bin/kubectl"]}
ROLE_SPEC = role_options.merge_specs(load_specs(role_options.ROLES), role_options.ROLES)
WITH_KUBECTL = [p for p in hostile.judging() if ("kubectl",) in dict(hostile.SPECS[p])]
CASES = [(plugin, option, value) for plugin in WITH_KUBECTL for option, values in sorted(BAD.items())
         for value in values]


def test_the_modules_with_the_transport_are_here():
    assert sorted(name for _kind, name in WITH_KUBECTL) == [
        "collective", "iperf3", "perftest", "quarantine", "rdma_facts", "tool_probe"]


@pytest.mark.parametrize("case", CASES, ids=lambda c: "%s-%s=%r" % (c[0][1], c[1], c[2]))
def test_a_bad_kubectl_option_is_refused_with_the_host_transport(case, recorder, capsys, tmp_path):  # noqa: F811
    plugin, option, value = case
    args = dict(hostile.base_args(plugin[1], str(tmp_path)), transport="host", kubectl={option: value})
    result, ran = hostile.run_plugin(plugin, args, recorder, capsys, str(tmp_path))
    hostile.assert_refused(result, ran, plugin, ("kubectl", option), value)


@pytest.mark.parametrize("plugin", WITH_KUBECTL, ids="-".join)
def test_control_good_kubectl_options_are_taken_with_the_host_transport(plugin, recorder, capsys, tmp_path):  # noqa
    good = {"pod": "p1", "namespace": "ns", "container": "main", "context": "admin@cluster",
            "kubeconfig": "/root/.kube/config", "binary": "/no/such/kubectl"}
    args = dict(hostile.base_args(plugin[1], str(tmp_path)), transport="host", kubectl=good)
    result, _ran = hostile.run_plugin(plugin, args, recorder, capsys, str(tmp_path))
    assert not result.get("failed"), result.get("msg")


@pytest.mark.parametrize("option,value", [(o, v) for o, values in sorted(BAD.items()) for v in values if v != ""])
def test_the_role_option_is_checked_as_the_modules_check_it(option, value):
    problems = role_options.check_values(ROLE_SPEC, {"commcheck_transport": "host",
                                                     "commcheck_kubectl": {option: value}})
    assert problems and problems[0].startswith("commcheck_kubectl") and option in problems[0], problems
