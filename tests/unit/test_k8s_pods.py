"""Test-pod manifests: validated against the Kubernetes OpenAPI schemas."""
import json

import kubernetes_validate
import pytest

from ansible_collections.clusterops.commcheck.plugins.module_utils.kubernetes import k8s_pods

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
    assert k8s_pods.pod_failure_reason(unsched).startswith("Unschedulable")
    pull = {"status": {"containerStatuses": [{"state": {"waiting": {"reason": "ImagePullBackOff", "message": "nope"}}}]}}
    assert k8s_pods.pod_failure_reason(pull).startswith("ImagePullBackOff")
    assert k8s_pods.pod_failure_reason({"status": {"phase": "Running"}}) is None


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
