"""MPIJob / Volcano Job manifests: pod templates validate against Kubernetes' schemas."""
import kubernetes_validate
import pytest

from ansible_collections.clusterops.commcheck.plugins.module_utils.kubernetes import k8s_jobs
from ansible_collections.clusterops.commcheck.plugins.module_utils.kubernetes.pods_plan import checked_job_manifest

PARAMS = {"image": "nvcr.io/nvidia/pytorch:24.05-py3", "gpus": 8, "run_id": "r1", "namespace": "ml",
          "resources": {"rdma/rdma_shared_device_a": 1}, "networks": ["roce-net"], "shm_size": "8Gi",
          "tolerations": [{"key": "gpu", "operator": "Exists"}]}
CMD = ["mpirun", "-np", "16", "--map-by", "ppr:8:node", "all_reduce_perf", "-b", "8", "-e", "8G", "-f", "2", "-g", "1"]


@pytest.mark.parametrize("kind", ["mpijob", "volcano"])
def test_templates_are_valid_pods(kind):
    manifest = checked_job_manifest(PARAMS, ["gpu1", "gpu2"], CMD, kind=kind)
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
    manifest = checked_job_manifest(PARAMS, ["gpu1", "gpu2", "gpu3"], CMD)
    assert manifest["apiVersion"] == "kubeflow.org/v2beta1"
    assert manifest["spec"]["slotsPerWorker"] == 8
    assert manifest["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"] == 3


def test_volcano_shape():
    manifest = checked_job_manifest(PARAMS, ["gpu1", "gpu2"], CMD, kind="volcano")
    assert manifest["apiVersion"] == "batch.volcano.sh/v1alpha1"
    assert manifest["spec"]["minAvailable"] == 3
    assert manifest["spec"]["plugins"] == {"ssh": [], "svc": []}


def test_bad_input_is_refused():
    with pytest.raises(ValueError):
        checked_job_manifest(dict(PARAMS, image="x $(id)"), ["gpu1"], CMD)
    with pytest.raises(ValueError):
        checked_job_manifest(PARAMS, ["gpu1"], [])


# The fields of MPIJobSpec and RunPolicy in kubeflow/mpi-operator pkg/apis/kubeflow/v2beta1/types.go
# (commit caa3c47), with the values its enums allow: a misspelt field is dropped or refused by the API server.
MPIJOB_SPEC_FIELDS = {"slotsPerWorker", "runLauncherAsWorker", "runPolicy", "mpiReplicaSpecs", "sshAuthMountPath",
                      "launcherCreationPolicy", "mpiImplementation"}
RUN_POLICY_FIELDS = {"cleanPodPolicy", "ttlSecondsAfterFinished", "activeDeadlineSeconds", "backoffLimit",
                     "schedulingPolicy", "suspend", "managedBy"}
REPLICA_SPEC_FIELDS = {"replicas", "template", "restartPolicy"}


def test_mpijob_workers_run_sshd_in_the_foreground_and_the_launcher_runs_the_command():
    manifest = checked_job_manifest(dict(PARAMS, command=["sleep", "infinity"]), ["gpu1", "gpu2"], CMD)
    replicas = manifest["spec"]["mpiReplicaSpecs"]
    worker = replicas["Worker"]["template"]["spec"]["containers"][0]
    launcher = replicas["Launcher"]["template"]["spec"]["containers"][0]
    assert worker["command"] == ["/usr/sbin/sshd", "-De"] and "args" not in worker
    assert launcher["command"] == CMD
    assert "resources" not in launcher and worker["resources"]["limits"]["rdma/rdma_shared_device_a"] == "1"


def test_mpijob_spec_uses_only_v2beta1_fields_with_allowed_values():
    spec = checked_job_manifest(PARAMS, ["gpu1", "gpu2"], CMD)["spec"]
    assert set(spec) <= MPIJOB_SPEC_FIELDS
    assert set(spec["runPolicy"]) <= RUN_POLICY_FIELDS
    assert spec["runPolicy"]["cleanPodPolicy"] in ("All", "Running", "None")
    assert spec["launcherCreationPolicy"] == "WaitForWorkersReady"
    assert spec["sshAuthMountPath"] == "/root/.ssh"
    assert spec["mpiImplementation"] in ("OpenMPI", "Intel", "MPICH")
    assert set(spec["mpiReplicaSpecs"]) == {"Launcher", "Worker"}
    for replica in spec["mpiReplicaSpecs"].values():
        assert set(replica) <= REPLICA_SPEC_FIELDS
    assert spec["slotsPerWorker"] == 8
    assert checked_job_manifest(dict(PARAMS, gpus=0), ["gpu1"], CMD)["spec"]["slotsPerWorker"] == 1


def test_volcano_workers_run_sshd_in_the_foreground():
    manifest = checked_job_manifest(PARAMS, ["gpu1", "gpu2"], CMD, kind="volcano")
    tasks = {t["name"]: t for t in manifest["spec"]["tasks"]}
    worker = tasks["mpiworker"]["template"]["spec"]["containers"][0]["command"]
    assert worker[:2] == ["/bin/sh", "-c"] and worker[2].endswith("exec /usr/sbin/sshd -De")
    assert tasks["mpimaster"]["template"]["spec"]["containers"][0]["command"] == CMD
