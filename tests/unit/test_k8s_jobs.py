"""MPIJob / Volcano Job manifests: pod templates validate against Kubernetes' schemas."""
import kubernetes_validate
import pytest

from ansible_collections.clusterops.commcheck.plugins.module_utils.kubernetes import k8s_jobs
from ansible_collections.clusterops.commcheck.plugins.filter.commcheck_job_manifest import commcheck_job_manifest

PARAMS = {"image": "nvcr.io/nvidia/pytorch:24.05-py3", "gpus": 8, "run_id": "r1", "namespace": "ml",
          "resources": {"rdma/rdma_shared_device_a": 1}, "networks": ["roce-net"], "shm_size": "8Gi",
          "tolerations": [{"key": "gpu", "operator": "Exists"}]}
CMD = ["mpirun", "-np", "16", "--map-by", "ppr:8:node", "all_reduce_perf", "-b", "8", "-e", "8G", "-f", "2", "-g", "1"]


@pytest.mark.parametrize("kind", ["mpijob", "volcano"])
def test_templates_are_valid_pods(kind):
    manifest = commcheck_job_manifest(PARAMS, ["gpu1", "gpu2"], CMD, kind=kind)
    templates = k8s_jobs.pod_templates(manifest)
    assert len(templates) == 2
    for template in templates:
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": dict(template["metadata"], name="x"),
               "spec": template["spec"]}
        kubernetes_validate.validate(pod, "1.30.0", strict=True)
    launcher = templates[0]["spec"]["containers"][0]
    assert launcher["command"] == CMD
    worker = templates[1]["spec"]["containers"][0]
    assert worker["resources"]["limits"]["nvidia.com/gpu"] == "8"
    assert worker["securityContext"]["capabilities"]["add"] == ["IPC_LOCK"]
    terms = templates[1]["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert terms["nodeSelectorTerms"][0]["matchExpressions"][0]["values"] == ["gpu1", "gpu2"]


def test_mpijob_shape():
    manifest = commcheck_job_manifest(PARAMS, ["gpu1", "gpu2", "gpu3"], CMD)
    assert manifest["apiVersion"] == "kubeflow.org/v2beta1"
    assert manifest["spec"]["slotsPerWorker"] == 8
    assert manifest["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"] == 3


def test_volcano_shape():
    manifest = commcheck_job_manifest(PARAMS, ["gpu1", "gpu2"], CMD, kind="volcano")
    assert manifest["apiVersion"] == "batch.volcano.sh/v1alpha1"
    assert manifest["spec"]["minAvailable"] == 3
    assert manifest["spec"]["plugins"] == {"ssh": [], "svc": []}


def test_bad_input_is_refused():
    from ansible.errors import AnsibleFilterError
    with pytest.raises(AnsibleFilterError):
        commcheck_job_manifest(dict(PARAMS, image="x $(id)"), ["gpu1"], CMD)
    with pytest.raises(AnsibleFilterError):
        commcheck_job_manifest(PARAMS, ["gpu1"], [])
