# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The kubectl transport's options are checked whatever the transport: a bad value is an error even while unused.

Every bad value is checked once against the one check of the kubectl settings
(``transport.kubectl_options_error``), with either transport, and through the
role option ``commcheck_kubectl``. Every module with a ``kubectl`` option,
called with ``transport=host`` and one bad value of each kubectl sub-option,
fails naming ``kubectl`` and the sub-option before anything runs.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import pytest

import test_hostile_module_args as hostile
from test_hostile_module_args import recorder  # noqa: F401  pylint: disable=unused-import
from ansible_collections.clusterops.commcheck.plugins.action.validate_options import load_specs
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import transport
from ansible_collections.clusterops.commcheck.plugins.plugin_utils import role_options

BAD = {"pod": ["-p", "Bad_Pod", ""], "namespace": ["-n", "a.b", "Bad"], "container": ["-c", "a/b"],
       "context": ["-ctx", "a b"], "kubeconfig": ["../kubeconfig", "relative/config", "/tmp/a\nb"],
       "binary": ["bin/kubectl", "--kubectl", "/usr/../bin/kubectl"]}
ROLE_SPEC = role_options.merge_specs(load_specs(role_options.ROLES), role_options.ROLES)
WITH_KUBECTL = [p for p in hostile.judging() if ("kubectl",) in dict(hostile.SPECS[p])]


def test_the_modules_with_the_transport_are_here():
    assert sorted(name for _kind, name in WITH_KUBECTL) == [
        "collective", "cpu_governor", "iperf3", "perftest", "quarantine", "rdma_facts", "tool_probe"]


@pytest.mark.parametrize("transport_name", ["host", "kubectl"])
def test_the_shared_check_refuses_every_bad_setting_whatever_the_transport(transport_name):
    for option, values in sorted(BAD.items()):
        for value in values:
            settings = {option: value} if option == "pod" else {"pod": "p1", option: value}
            error = transport.kubectl_options_error(settings, transport=transport_name)
            assert error and "kubectl.%s" % option in error, (option, value, error)


@pytest.mark.parametrize("plugin", WITH_KUBECTL, ids="-".join)
def test_each_module_refuses_a_bad_kubectl_setting_with_the_host_transport(plugin, recorder, capsys, tmp_path):  # noqa
    problems = []
    for option, values in sorted(BAD.items()):
        del recorder.argvs[:]
        hostile.FakeTransport.made = []
        args = dict(hostile.base_args(plugin[1], str(tmp_path)), transport="host", kubectl={option: values[0]})
        result, ran = hostile.run_plugin(plugin, args, recorder, capsys, str(tmp_path))
        problem = hostile.refusal_problem(("kubectl", option), result, ran)
        if problem:
            problems.append("%s=%r: %s" % (option, values[0], problem))
    assert problems == []


@pytest.mark.parametrize("plugin", WITH_KUBECTL, ids="-".join)
def test_control_good_kubectl_options_are_taken_with_the_host_transport(plugin, recorder, capsys, tmp_path):  # noqa
    good = {"pod": "p1", "namespace": "ns", "container": "main", "context": "admin@cluster",
            "kubeconfig": "/root/.kube/config", "binary": "/no/such/kubectl"}
    args = dict(hostile.base_args(plugin[1], str(tmp_path)), transport="host", kubectl=good)
    result, _ran = hostile.run_plugin(plugin, args, recorder, capsys, str(tmp_path))
    assert not result.get("failed"), result.get("msg")


def test_the_role_option_is_checked_as_the_modules_check_it():
    for option, values in sorted(BAD.items()):
        for value in [v for v in values if v != ""]:
            problems = role_options.check_values(ROLE_SPEC, {"commcheck_transport": "host",
                                                             "commcheck_kubectl": {option: value}})
            assert problems and problems[0].startswith("commcheck_kubectl") and option in problems[0], problems
