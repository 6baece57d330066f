# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The test_pods module's steps that need no cluster: waiting for pods, the pod plan."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json

import pytest

from ansible_collections.clusterops.commcheck.plugins.modules import test_pods

READY = {"conditions": [{"type": "Ready", "status": "True"}], "phase": "Running"}


def pod(name, status):
    return {"metadata": {"name": name}, "spec": {"nodeName": "n-" + name}, "status": status}


class FakeKubectl(object):
    def __init__(self, pods, events=None):
        self.pods = pods
        self.events = events or {}
        self.polls = 0
        self.asked = []

    def run_pods(self, run_id):
        self.polls += 1
        return self.pods

    def pod_events(self, name):
        self.asked.append(name)
        return self.events.get(name, [])


def test_wait_ready_returns_when_every_pod_is_ready():
    kubectl = FakeKubectl([pod("a", READY), pod("b", READY)])
    summaries, problems = test_pods.wait_ready(kubectl, "r1", ["a", "b"], 3600)
    assert [s["name"] for s in summaries] == ["a", "b"] and problems == {} and kubectl.polls == 1
    assert kubectl.asked == []


def texts(refusals):
    return {name: test_pods.refusal_text(refusal) for name, refusal in refusals.items()}


def test_wait_ready_stops_at_a_failure_waiting_does_not_cure():
    pulling = {"phase": "Pending", "containerStatuses": [
        {"state": {"waiting": {"reason": "ImagePullBackOff", "message": "no such image"}}}]}
    kubectl = FakeKubectl([pod("a", READY), pod("b", pulling), pod("e", {"phase": "Pending"})])
    summaries, refusals = test_pods.wait_ready(kubectl, "r1", ["a", "b", "c", "e"], 3600)
    assert kubectl.polls == 1 and sorted(kubectl.asked) == ["b", "e"]
    problems = texts(refusals)
    assert problems["b"].startswith("ImagePullBackOff: no such image (fix: the node cannot pull the image")
    assert problems["c"].startswith("pod not found (fix: ")
    assert problems["e"].startswith("not Ready yet when another pod was refused")


def test_wait_ready_stops_at_a_kubelet_admission_refusal_and_reads_the_events():
    rejected = {"phase": "Failed", "reason": "OutOfrdma/hca_shared_devices_a", "message": (
        "Pod was rejected: Node didn't have enough resource: rdma/hca_shared_devices_a, requested: 1, used: 1, "
        "capacity: 1")}
    events = [{"reason": "OutOfrdma/hca_shared_devices_a", "message": "Node didn't have enough resource",
               "count": 1, "last_seen": "2026-11-21T10:00:00", "component": "kubelet"},
              {"reason": "FailedMount", "message": "x", "count": 2, "last_seen": "2026-11-21T09:59:00",
               "component": "kubelet"}]
    kubectl = FakeKubectl([pod("a", rejected)], events={"a": events})
    summaries, refusals = test_pods.wait_ready(kubectl, "r1", ["a"], 3600)
    assert refusals["a"]["final"] and [e["reason"] for e in refusals["a"]["events"]] == ["FailedMount"]
    text = texts(refusals)["a"]
    assert text.startswith("OutOfrdma/hca_shared_devices_a: Pod was rejected: Node didn't have enough resource")
    assert "[events: FailedMount: x (x2)]" in text
    assert "node n-a has no free rdma/hca_shared_devices_a" in text


def test_wait_ready_at_the_deadline_names_every_pod_not_ready():
    unschedulable = {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False", "reason":
                                                         "Unschedulable", "message": "0/4 nodes are available: 4 "
                                                         "Insufficient rdma/hca_shared_devices_a."}]}
    kubectl = FakeKubectl([pod("a", {"phase": "Pending"}), pod("u", unschedulable)])
    summaries, refusals = test_pods.wait_ready(kubectl, "r1", ["a", "b", "u"], 0)
    problems = texts(refusals)
    assert problems["a"].startswith("not Ready after 0s (fix: ") and problems["b"].startswith("pod not found")
    assert problems["u"].startswith("Unschedulable: 0/4 nodes are available: 4 Insufficient "
                                    "rdma/hca_shared_devices_a. (fix: the scheduler found no node")
    assert "no node has a free rdma/hca_shared_devices_a" in problems["u"]
    assert [s["name"] for s in summaries] == ["a", "u"] and sorted(kubectl.asked) == ["a", "u"]


class FakeTransport(object):
    """Answers kubectl get events with what a test sets."""
    answer = {"rc": 0, "stdout": "", "stderr": ""}
    seen = []

    def which(self, name):
        return "/usr/bin/" + name

    def run(self, argv, timeout):
        FakeTransport.seen.append(list(argv))
        if argv[1:] == ["version", "--client"]:      # the module asks kubectl what it is before it acts
            return {"rc": 0, "stdout": "Client Version: v1.30.2\n", "stderr": "", "cmd": list(argv)}
        return dict(FakeTransport.answer, cmd=list(argv))


class FakeModule(object):
    params = {"kubectl_binary": None, "kubeconfig": None, "context": None, "namespace": "commcheck"}

    def fail_json(self, **kwargs):
        raise AssertionError("fail_json(%r)" % (kwargs,))


def test_pod_events_through_the_runner_as_an_argv(monkeypatch):
    monkeypatch.setattr(test_pods, "HostTransport", FakeTransport)
    FakeTransport.seen = []
    kubectl = test_pods.Kubectl(FakeModule())
    warning = {"type": "Warning", "reason": "FailedScheduling", "message": "0/4 nodes are available",
               "involvedObject": {"kind": "Pod", "name": "commcheck-r1-n1"}}
    FakeTransport.answer = {"rc": 0, "stdout": json.dumps({"kind": "List", "items": [warning]}), "stderr": ""}
    assert [e["reason"] for e in kubectl.pod_events("commcheck-r1-n1")] == ["FailedScheduling"]
    assert FakeTransport.seen[-1] == ["/usr/bin/kubectl", "-n", "commcheck", "get", "events", "--field-selector",
                                      "involvedObject.kind=Pod,involvedObject.name=commcheck-r1-n1", "-o", "json"]
    FakeTransport.answer = {"rc": 1, "stdout": "", "stderr": "events is forbidden: User cannot list resource"}
    assert kubectl.pod_events("commcheck-r1-n1") == []
    FakeTransport.answer = {"rc": 0, "stdout": "{truncated", "stderr": ""}
    assert kubectl.pod_events("commcheck-r1-n1") == []
    calls = len(FakeTransport.seen)
    assert kubectl.pod_events("--all-namespaces") == [] and len(FakeTransport.seen) == calls


class Failed(Exception):
    pass


class FailingModule(object):
    def __init__(self):
        self.params = {"wait_timeout": 5, "run_id": "r1", "delete_on_failure": True}

    def fail_json(self, **kwargs):
        raise Failed(kwargs)


class StartingKubectl(FakeKubectl):
    deleted = None

    def delete(self, names, timeout):
        self.deleted = list(names)

    def apply(self, manifests, timeout):
        pass


def test_start_pods_fails_with_each_pods_reason_and_fix_and_cleans_up():
    rejected = {"phase": "Failed", "reason": "UnexpectedAdmissionError",
                "message": "Update plugin resources failed due to device unavailable, which is unexpected."}
    kubectl = StartingKubectl([pod("a", READY), pod("b", rejected)])
    result = {"deleted": [], "changed": True}
    with pytest.raises(Failed) as raised:
        test_pods.start_pods(FailingModule(), kubectl, {"names": ["a", "b"], "create": [{}]}, result)
    failure = raised.value.args[0]
    assert failure["msg"].startswith("test pods did not become Ready: b: UnexpectedAdmissionError: Update plugin")
    assert "device plugin" in failure["msg"]
    assert sorted(failure["problems"]) == ["b"] and failure["refusals"]["b"]["reason"] == "UnexpectedAdmissionError"
    json.dumps(failure["refusals"])
    assert kubectl.deleted == ["a", "b"]
