"""Test-pod manifests: validated against the Kubernetes OpenAPI schemas."""
import json

import kubernetes_validate
import pytest

from ansible_collections.clusterops.commcheck.plugins.module_utils.kubernetes import k8s_pods, k8s_refusals
from ansible_collections.clusterops.commcheck.plugins.module_utils.options import option_rules

BASE = dict(
    state="present", nodes=["gpu-node-01", "gpu-node-02"], run_id="r20261121", namespace="commcheck",
    name_prefix="commcheck", image="ghcr.io/example/commcheck-tools:1.0", image_pull_policy="IfNotPresent",
    command=["sleep", "infinity"], resources={"rdma/rdma_shared_device_a": 1, "spidernet.io/shared_cx5_gpu1": "1"},
    gpus=8, gpu_resource="nvidia.com/gpu", capabilities=["IPC_LOCK"], privileged=False, host_network=False,
    networks=["kube-system/roce-net@net1"], shm_size="8Gi",
    tolerations=[{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
    labels={"team": "infra"}, annotations={}, service_account=None, image_pull_secrets=["regcred"],
)


def _validate(manifest):
    kubernetes_validate.validate(json.loads(json.dumps(manifest)), "1.30.0", strict=True)


@pytest.mark.parametrize("host_network", [False, True])
def test_manifest_is_a_valid_pod(host_network):
    params = dict(BASE, host_network=host_network)
    for node in params["nodes"]:
        manifest = k8s_pods.build_pod_manifest(params, node)
        _validate(manifest)
        spec = manifest["spec"]
        assert spec["nodeName"] == node
        container = spec["containers"][0]
        assert container["securityContext"]["capabilities"]["add"] == ["IPC_LOCK"]
        limits = container["resources"]["limits"]
        assert limits["rdma/rdma_shared_device_a"] == "1"
        assert limits["nvidia.com/gpu"] == "8"
        assert "memory" not in limits and "cpu" not in limits
        assert manifest["metadata"]["labels"][k8s_pods.RUN_LABEL] == "r20261121"
        if host_network:
            assert spec["hostNetwork"] is True
            assert k8s_pods.NETWORKS_ANNOTATION not in manifest["metadata"].get("annotations", {})
        else:
            assert manifest["metadata"]["annotations"][k8s_pods.NETWORKS_ANNOTATION] == "kube-system/roce-net@net1"


def test_pod_names_are_dns_labels_and_unique_when_cut():
    long_a = "node-" + "a" * 70 + "-1"
    long_b = "node-" + "a" * 70 + "-2"
    a = k8s_pods.pod_name("commcheck", "run1", long_a)
    b = k8s_pods.pod_name("commcheck", "run1", long_b)
    assert len(a) <= 63 and len(b) <= 63 and a != b
    assert k8s_pods.pod_name("commcheck", "r1", "GPU_Node.01") == "commcheck-r1-gpu-node-01"


@pytest.mark.parametrize("key,value", [
    ("nodes", ["node;rm -rf /"]), ("image", "img $(id)"), ("namespace", "Bad_NS"),
    ("resources", {"rdma/x": "1; echo"}), ("resources", {"bad name!": 1}), ("capabilities", ["ipc_lock;"]),
    ("networks", ["net`id`"]), ("labels", {"k": "v v"}), ("shm_size", "8 GB"), ("run_id", "../etc"),
])
def test_hostile_values_are_refused(key, value):
    assert k8s_pods.validate_params(dict(BASE, **{key: value}))


def test_valid_params_have_no_errors():
    assert k8s_pods.validate_params(BASE) == []


def test_network_status_and_summary():
    status = [
        {"name": "k8s-pod-network", "interface": "eth0", "ips": ["10.244.1.5"], "default": True},
        {"name": "kube-system/roce-net", "interface": "net1", "ips": ["192.168.50.11"], "mac": "aa:bb"},
    ]
    pod = {
        "metadata": {"name": "p", "namespace": "ns",
                     "annotations": {"k8s.v1.cni.cncf.io/network-status": json.dumps(status)}},
        "spec": {"nodeName": "n1"},
        "status": {"podIP": "10.244.1.5", "phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]},
    }
    summary = k8s_pods.pod_summary(pod)
    assert summary["ready"] is True
    assert summary["network_ips"] == ["192.168.50.11"]
    assert summary["address"] == "192.168.50.11"
    pod["metadata"]["annotations"] = {}
    assert k8s_pods.pod_summary(pod)["address"] == "10.244.1.5"


def test_failure_reasons():
    unsched = {"status": {"phase": "Pending", "conditions": [
        {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "Insufficient rdma/x"}]}}
    assert k8s_pods.pod_failure_reason(unsched) == "Unschedulable: Insufficient rdma/x"
    pull = {"status": {"containerStatuses": [
        {"state": {"waiting": {"reason": "ImagePullBackOff", "message": "nope"}}}]}}
    assert k8s_pods.pod_failure_reason(pull) == "ImagePullBackOff: nope"
    assert k8s_pods.pod_failure_reason({"status": {"phase": "Running"}}) is None
    refused = {"status": {"phase": "Failed", "reason": "OutOfrdma/hca_shared_devices_a", "message": "Pod was rejected"}}
    assert k8s_pods.pod_failure_reason(refused) == "OutOfrdma/hca_shared_devices_a: Pod was rejected"


def test_plan_pods_replaces_what_differs_and_deletes_what_is_stale():
    params = {"run_id": "r1", "image": "img:1", "nodes": ["n1", "n2"], "namespace": "default"}
    wanted = {n: k8s_pods.build_pod_manifest(params, n) for n in params["nodes"]}
    names = [wanted[n]["metadata"]["name"] for n in params["nodes"]]
    existing = {names[0]: wanted["n1"], "commcheck-r1-old": {}}
    result = {}
    plan = k8s_pods.plan_pods(params, existing, result)
    assert plan["names"] == names and plan["replace"] == []
    assert [m["metadata"]["name"] for m in plan["create"]] == [names[1]]
    assert result["created"] == [names[1]] and result["deleted"] == ["commcheck-r1-old"] and result["changed"]


def test_manifest_differs():
    wanted = k8s_pods.build_pod_manifest(BASE, "gpu-node-01")
    live = json.loads(json.dumps(wanted))
    live["status"] = {"phase": "Running"}
    assert not k8s_pods.manifest_differs(live, wanted)
    live["spec"]["containers"][0]["image"] = "other:2"
    assert k8s_pods.manifest_differs(live, wanted)
    assert k8s_pods.manifest_differs(None, wanted)


def test_selectable_nodes_skips_cordoned_and_not_ready():
    nodes = {"items": [
        {"metadata": {"name": "b"}, "status": {"conditions": [{"type": "Ready", "status": "True"}]}},
        {"metadata": {"name": "a"}, "status": {"conditions": [{"type": "Ready", "status": "True"}]}},
        {"metadata": {"name": "c"}, "spec": {"unschedulable": True},
         "status": {"conditions": [{"type": "Ready", "status": "True"}]}},
        {"metadata": {"name": "d"}, "status": {"conditions": [{"type": "Ready", "status": "False"}]}},
    ]}
    assert k8s_pods.selectable_nodes(nodes) == ["a", "b"]


def test_active_deadline_in_manifest():
    manifest = k8s_pods.build_pod_manifest(dict(BASE, active_deadline_seconds=600), "n1")
    assert manifest["spec"]["activeDeadlineSeconds"] == 600
    _validate(manifest)


def test_add_worker_resources_sets_limits_requests_and_shm():
    container = {}
    k8s_pods.add_worker_resources(container, {"resources": {"rdma/hca": 1}, "gpus": 8, "shm_size": "1Gi"})
    wanted = {"rdma/hca": "1", "nvidia.com/gpu": "8"}
    assert container["resources"] == {"limits": wanted, "requests": wanted}
    assert container["volumeMounts"] == [{"name": "dshm", "mountPath": "/dev/shm"}]
    bare = {}
    k8s_pods.add_worker_resources(bare, {"gpus": 0})
    assert bare == {}


# Refused pods, in the shapes the API server returns them.
# - Kubelet admission: pkg/kubelet/kubelet.go rejectPod() sets phase Failed, reason and
#   "Pod was rejected: " + message; pkg/kubelet/lifecycle/predicate.go makes the reason
#   "OutOf" + resource name and the message "Node didn't have enough resource: %s, requested: %d,
#   used: %d, capacity: %d", and records a Warning event with the same reason.
# - UnexpectedAdmissionError: a real pod's status from https://stackoverflow.com/questions/58455833
#   (kubelet of that time wrote "Pod " before the message instead of "Pod was rejected: ").
# - Scheduler: the PodScheduled condition and the FailedScheduling event (events.k8s.io/v1 fields as the
#   core/v1 Event view shows them: eventTime, series, reportingComponent, empty source) of the
#   Kubernetes API reference; the message as the scheduler prints it for an extended resource.
# - Containers: ContainerStatus.state.waiting {reason, message} of the API reference with the
#   kubelet's reasons (ErrImagePull, CreateContainerConfigError) and containerd's pull message.
# - Events list: `kubectl get events -o json` from a minikube cluster (kind List of core/v1 Events
#   with count, firstTimestamp, lastTimestamp, source, reportingComponent).
RDMA = "rdma/hca_shared_devices_a"
SCHEDULER_MESSAGE = "0/4 nodes are available: 4 Insufficient rdma/hca_shared_devices_a."


def refused_pod(status, node="gpu-node-01"):
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "commcheck-r1-" + node, "namespace": "commcheck"},
            "spec": {"nodeName": node}, "status": status}


OUT_OF_RDMA = refused_pod({
    "phase": "Failed", "reason": "OutOf" + RDMA, "qosClass": "BestEffort",
    "message": "Pod was rejected: Node didn't have enough resource: %s, requested: 1, used: 1, capacity: 1" % RDMA})
UNEXPECTED_ADMISSION = refused_pod({
    "phase": "Failed", "reason": "UnexpectedAdmissionError", "startTime": "2020-03-26T15:05:36Z",
    "message": "Pod Update plugin resources failed due to failed to write checkpoint file "
               "\"kubelet_internal_checkpoint\": write /var/lib/kubelet/device-plugins/.873211270: "
               "no space left on device, which is unexpected."})
UNSCHEDULABLE = refused_pod({
    "phase": "Pending", "qosClass": "BestEffort",
    "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "lastProbeTime": None,
                    "lastTransitionTime": "2026-11-21T10:00:00Z", "message": SCHEDULER_MESSAGE}]})
IMAGE_PULL = refused_pod({
    "phase": "Pending", "hostIP": "10.0.0.11", "startTime": "2026-11-21T10:00:00Z",
    "conditions": [{"type": "PodScheduled", "status": "True"}, {"type": "Ready", "status": "False",
                                                                "reason": "ContainersNotReady"}],
    "containerStatuses": [{"name": "commcheck", "image": "ghcr.io/example/commcheck-tools:nope", "imageID": "",
                           "ready": False, "restartCount": 0, "started": False, "lastState": {},
                           "state": {"waiting": {"reason": "ErrImagePull", "message": (
                               "rpc error: code = NotFound desc = failed to pull and unpack image "
                               "\"ghcr.io/example/commcheck-tools:nope\": not found")}}}]})
CONFIG_ERROR = refused_pod({
    "phase": "Pending",
    "containerStatuses": [{"name": "commcheck", "ready": False, "restartCount": 0, "started": False,
                           "state": {"waiting": {"reason": "CreateContainerConfigError",
                                                 "message": "secret \"nccl-env\" not found"}}}]})
CREATING = refused_pod({
    "phase": "Pending",
    "containerStatuses": [{"name": "commcheck", "ready": False, "restartCount": 0,
                           "state": {"waiting": {"reason": "ContainerCreating"}}}]})


def event(reason, message, when, kind="Warning", name="commcheck-r1-gpu-node-01", **extra):
    item = {"apiVersion": "v1", "kind": "Event", "type": kind, "reason": reason, "message": message,
            "metadata": {"name": "%s.1808ba323d34c8e8" % name, "namespace": "commcheck", "creationTimestamp": when},
            "involvedObject": {"apiVersion": "v1", "kind": "Pod", "name": name, "namespace": "commcheck"},
            "count": 1, "firstTimestamp": when, "lastTimestamp": when, "eventTime": None,
            "source": {"component": "kubelet", "host": "gpu-node-01"}, "reportingComponent": "kubelet",
            "reportingInstance": "gpu-node-01"}
    item.update(extra)
    return item


def events_json(*items):
    return json.dumps({"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": list(items)})


SCHEDULER_EVENT = event("FailedScheduling", SCHEDULER_MESSAGE, None, eventTime="2026-11-21T10:00:03.512345Z",
                        firstTimestamp=None, lastTimestamp=None, count=None, source={}, action="Scheduling",
                        reportingComponent="default-scheduler", reportingInstance="default-scheduler-cp-1",
                        series={"count": 4, "lastObservedTime": "2026-11-21T10:04:03.000001Z"})
SANDBOX_EVENT = event(
    "FailedCreatePodSandBox", "Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network "
    "for sandbox: plugin type=\"multus\" failed (add): getKubernetesDelegate: cannot find a network-attachment-"
    "definition (roce-net) in namespace (commcheck)", "2026-11-21T10:00:09Z", count=7)


@pytest.mark.parametrize("pod,reason,final,in_fix", [
    (OUT_OF_RDMA, "OutOf" + RDMA, True, "node gpu-node-01 has no free rdma/hca_shared_devices_a"),
    (UNEXPECTED_ADMISSION, "UnexpectedAdmissionError", True, "device plugin"),
    (UNSCHEDULABLE, "Unschedulable", False, "no node has a free rdma/hca_shared_devices_a"),
    (IMAGE_PULL, "ErrImagePull", True, "image_pull_secrets"),
    (CONFIG_ERROR, "CreateContainerConfigError", True, "secret, config map or service account"),
])
def test_each_refusal_has_its_reason_and_a_fix_naming_it(pod, reason, final, in_fix):
    refusal = k8s_refusals.pod_refusal(pod)
    assert refusal["reason"] == reason and refusal["final"] is final
    done = k8s_refusals.with_events(refusal, [], pod["spec"]["nodeName"])
    assert in_fix in done["fix"]
    text = k8s_refusals.refusal_text(done)
    assert text.startswith(reason + ": ") and in_fix in text


def test_out_of_admission_keeps_the_kubelets_numbers():
    text = k8s_refusals.refusal_text(k8s_refusals.with_events(k8s_refusals.pod_refusal(OUT_OF_RDMA), [], "gpu-node-01"))
    assert "requested: 1, used: 1, capacity: 1" in text


def test_scheduler_message_and_event_series():
    events = k8s_refusals.warning_events(events_json(SCHEDULER_EVENT), "commcheck-r1-gpu-node-01")
    assert events == [{"reason": "FailedScheduling", "message": SCHEDULER_MESSAGE, "count": 4,
                       "last_seen": "2026-11-21T10:04:03", "component": "default-scheduler"}]
    done = k8s_refusals.with_events(k8s_refusals.pod_refusal(UNSCHEDULABLE), events)
    assert done["message"] == SCHEDULER_MESSAGE and done["events"] == events


def test_a_pod_stuck_creating_takes_its_reason_from_the_latest_warning_event():
    assert k8s_refusals.pod_refusal(CREATING) is None
    older = event("FailedMount", "MountVolume.SetUp failed for volume \"dshm\"", "2026-11-21T10:00:01Z")
    normal = event("Scheduled", "Successfully assigned commcheck/commcheck-r1-gpu-node-01", "2026-11-21T10:00:10Z",
                   kind="Normal")
    events = k8s_refusals.warning_events(events_json(older, normal, SANDBOX_EVENT), "commcheck-r1-gpu-node-01")
    assert [e["reason"] for e in events] == ["FailedCreatePodSandBox", "FailedMount"] and events[0]["count"] == 7
    refusals = k8s_refusals.waiting_refusals({"commcheck-r1-gpu-node-01": CREATING}, ["commcheck-r1-gpu-node-01"],
                                             [], 300, True)
    done = k8s_refusals.with_events(refusals["commcheck-r1-gpu-node-01"], events, "gpu-node-01")
    assert done["reason"] == "FailedCreatePodSandBox" and done["message"].endswith("(not Ready after 300s)")
    assert "NetworkAttachmentDefinitions" in done["fix"]
    assert [e["reason"] for e in done["events"]] == ["FailedMount"]
    assert "[events: FailedMount: " in k8s_refusals.refusal_text(done)


def test_events_latest_first_one_per_reason_about_this_pod_only():
    first = event("BackOff", "Back-off pulling image", "2026-11-21T10:00:01Z")
    again = event("BackOff", "Back-off pulling image again", "2026-11-21T10:00:05Z")
    other = event("FailedMount", "someone else's", "2026-11-21T10:09:00Z", name="another-pod")
    events = k8s_refusals.warning_events(events_json(first, again, other), "commcheck-r1-gpu-node-01")
    assert [(e["reason"], e["message"]) for e in events] == [("BackOff", "Back-off pulling image again")]


@pytest.mark.parametrize("text", [
    "", "   ", None, "not json", '{"items": ', "[]", '{"items": null}', '{"items": "x"}', '{"items": [1, "a", null]}',
    json.dumps({"items": [{"type": "Warning"}]}), json.dumps({"items": [{"type": "Warning", "reason": "",
                                                                         "message": "x"}]}),
    "No resources found in commcheck namespace.",
])
def test_events_from_empty_or_malformed_output_are_none(text):
    assert k8s_refusals.warning_events(text, "commcheck-r1-gpu-node-01") == []


def test_events_with_odd_fields_still_parse():
    odd = event("FailedMount", ["not", "text"], {"no": "time"}, count="many", series="x", source=None,
                metadata=None, involvedObject="pod")
    [only] = k8s_refusals.warning_events(events_json(odd))
    assert only["count"] == 1 and only["last_seen"] == "" and only["component"] == "kubelet"
    single = dict(event("Evicted", "The node was low on resource: memory.", "2026-11-21T10:00:00Z"))
    assert [e["reason"] for e in k8s_refusals.warning_events(json.dumps(single))] == ["Evicted"]


def test_events_argv_keeps_the_pod_name_a_value():
    assert k8s_refusals.events_argv("commcheck-r1-gpu-node-01") == [
        "get", "events", "--field-selector", "involvedObject.kind=Pod,involvedObject.name=commcheck-r1-gpu-node-01",
        "-o", "json"]
    for bad in ("--all-namespaces", "a,involvedObject.name=b", "x y", "", None):
        with pytest.raises(option_rules.OptionError):
            k8s_refusals.events_argv(bad)


def test_waiting_refusals_name_every_pod_not_ready():
    pods = {"a": refused_pod({"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}),
            "b": CREATING, "c": OUT_OF_RDMA}
    refusals = k8s_refusals.waiting_refusals(pods, ["a", "b", "c", "d"], ["a"], 60, False)
    assert sorted(refusals) == ["b", "c", "d"]
    assert refusals["b"]["message"] == "not Ready yet when another pod was refused"
    assert refusals["c"]["reason"] == "OutOf" + RDMA and refusals["d"]["message"] == "pod not found"
    assert k8s_refusals.is_final(refusals) and not k8s_refusals.is_final({"b": refusals["b"], "x": None})


@pytest.mark.parametrize("status,reason,final", [
    ({"phase": "Failed"}, "Error", True),
    ({"phase": "Succeeded"}, "Completed", True),
    ({"phase": "Failed", "containerStatuses": [{"state": {"terminated": {
        "reason": "StartError", "exitCode": 128, "message": "exec: \"sleepx\": executable file not found"}}}]},
     "StartError", True),
    ({"phase": "Failed", "reason": "DeadlineExceeded", "message": "Pod was active on the node longer than the "
                                                                  "specified deadline"}, "DeadlineExceeded", True),
    ({"phase": "Failed", "reason": "TopologyAffinityError",
      "message": "Resources cannot be allocated with Topology locality"}, "TopologyAffinityError", True),
    ({"phase": "Pending", "containerStatuses": "junk", "conditions": ["junk"]}, None, None),
    ({"phase": "Pending", "conditions": "junk",
      "containerStatuses": ["junk", {"state": "junk"}, {"state": {"waiting": "x", "terminated": 1}}]}, None, None),
])
def test_other_pod_states(status, reason, final):
    refusal = k8s_refusals.pod_refusal(refused_pod(status))
    if reason is None:
        assert refusal is None
    else:
        assert (refusal["reason"], refusal["final"]) == (reason, final)
        assert k8s_refusals.refusal_fix(refusal["reason"], refusal["message"]) != k8s_refusals.FIXES["NotReady"]


def test_client_argv_adds_kubeconfig_and_context_only_when_set():
    from ansible_collections.clusterops.commcheck.plugins.module_utils.kubernetes.k8s_pods import client_argv
    assert client_argv("/usr/bin/kubectl", {"namespace": "ns", "kubeconfig": None, "context": ""}) == [
        "/usr/bin/kubectl", "-n", "ns"]
    assert client_argv("kubectl", {"namespace": "ns", "kubeconfig": "/k/config", "context": "ctx"}) == [
        "kubectl", "--kubeconfig", "/k/config", "--context", "ctx", "-n", "ns"]
