# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The test_pods module's steps that need no cluster: waiting for pods, the pod plan."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.clusterops.commcheck.plugins.modules import test_pods

READY = {"conditions": [{"type": "Ready", "status": "True"}], "phase": "Running"}


def pod(name, status):
    return {"metadata": {"name": name}, "spec": {"nodeName": "n-" + name}, "status": status}


class FakeKubectl(object):
    def __init__(self, pods):
        self.pods = pods
        self.polls = 0

    def run_pods(self, run_id):
        self.polls += 1
        return self.pods


def test_wait_ready_returns_when_every_pod_is_ready():
    kubectl = FakeKubectl([pod("a", READY), pod("b", READY)])
    summaries, problems = test_pods.wait_ready(kubectl, "r1", ["a", "b"], 3600)
    assert [s["name"] for s in summaries] == ["a", "b"] and problems == {} and kubectl.polls == 1


def test_wait_ready_stops_at_a_failure_waiting_does_not_cure():
    pulling = {"phase": "Pending", "containerStatuses": [
        {"state": {"waiting": {"reason": "ImagePullBackOff", "message": "no such image"}}}]}
    kubectl = FakeKubectl([pod("a", READY), pod("b", pulling)])
    summaries, problems = test_pods.wait_ready(kubectl, "r1", ["a", "b", "c"], 3600)
    assert kubectl.polls == 1
    assert problems == {"b": "ImagePullBackOff: no such image", "c": "pod not found"}


def test_wait_ready_at_the_deadline_names_every_pod_not_ready():
    kubectl = FakeKubectl([pod("a", {"phase": "Pending"})])
    summaries, problems = test_pods.wait_ready(kubectl, "r1", ["a", "b"], 0)
    assert problems == {"a": "not Ready after 0s", "b": "pod not found"}
    assert [s["name"] for s in summaries] == ["a"]


def test_plan_pods_replaces_what_differs_and_deletes_what_is_stale():
    params = {"run_id": "r1", "image": "img:1", "nodes": ["n1", "n2"], "namespace": "default"}
    wanted = {n: test_pods.build_pod_manifest(params, n) for n in params["nodes"]}
    names = [wanted[n]["metadata"]["name"] for n in params["nodes"]]
    existing = {names[0]: wanted["n1"], "commcheck-r1-old": {}}
    result = {}
    plan = test_pods.plan_pods(params, existing, result)
    assert plan["names"] == names and plan["replace"] == []
    assert [m["metadata"]["name"] for m in plan["create"]] == [names[1]]
    assert result["created"] == [names[1]] and result["deleted"] == ["commcheck-r1-old"] and result["changed"]
