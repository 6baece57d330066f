# -*- coding: utf-8 -*-
"""plugin_utils/role_options: the rule of every role variable (pure; specs read from roles/*/meta)."""
import os
import re

import pytest
import yaml

from ansible_collections.clusterops.commcheck.plugins.plugin_utils import planned_call_checks
from ansible_collections.clusterops.commcheck.plugins.plugin_utils import role_options as ro
from ansible_collections.clusterops.commcheck.plugins.plugin_utils import role_option_kit as kit

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HOSTS = ("n1", "n2")


# libyaml's loader where it is built in (ten times faster; test_validate_options_action.py checks that both
# loaders read the same specs)
LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _specs():
    out = {}
    for role in ro.ROLES:
        with open(os.path.join(REPO, "roles", role, "meta", "argument_specs.yml")) as handle:
            out[role] = yaml.load(handle, Loader=LOADER)["argument_specs"]
    return out


SPECS = _specs()
ALL = ro.merge_specs(SPECS, ro.ROLES)
ENTRY_POINTS = [(role, entry) for role in ro.ROLES for entry in SPECS[role]]

# One good value of every variable (with the other values it needs), not its default.
GOOD = {
    "commcheck_checks": "discover, rdma",
    "commcheck_rdma_ops": ["read", "send"],
    "commcheck_rdma_metrics": ["bw"],
    "commcheck_pattern": "star",
    "commcheck_devices": ["mlx5_0", "mlx5_1:2", {"device": "mlx5_2", "port": 1, "address": "10.0.0.1",
                                                 "gid_index": 3, "rate_gbps": 200}],
    "commcheck_ib_port": 2,
    "commcheck_collective_library": "hccl",
    "commcheck_collective_ops": ["all_reduce", "alltoall"],
    "commcheck_gpus_per_node": 4,
    "commcheck_require_accelerators": False,
    "commcheck_min_fraction": 0.5,
    "commcheck_fleet_min_fraction": 0.4,
    "commcheck_report_dir": "/var/tmp/reports",
    "commcheck_sysfs_root": "/tmp/sysfs",
    "commcheck_expected_rate_gbps": 400,
    "commcheck_subnet": "10.0.0.0/24",
    "commcheck_ib_gid_index": 3,
    "commcheck_discover_tools": True,
    "commcheck_discover_topology_tools": True,
    "commcheck_discover_address_source": "gids",
    "commcheck_fail_on": "error",
    "commcheck_discover_min_severity": "warning",
    "commcheck_discover_publish": False,
    "commcheck_transport": {"commcheck_transport": "kubectl", "commcheck_kubectl": {"pod": "cc-node1"}},
    "commcheck_kubectl": {"pod": "cc-node1", "namespace": "default", "container": "commcheck",
                          "context": "admin@cluster", "kubeconfig": "/root/.kube/config",
                          "binary": "/usr/local/bin/kubectl"},
    "commcheck_environment": {"PATH": "/opt/bin:/usr/bin", "NCCL_DEBUG": "INFO", "OMP_NUM_THREADS": 4},
    "commcheck_rdma_hosts": ["n1", "n2", "node-3.example.com", "10.0.0.5"],
    "commcheck_rdma_pattern": "pairs",
    "commcheck_rdma_oversubscription": 2.5,
    "commcheck_rdma_loopback": True,
    "commcheck_rdma_strategy": "rounds",
    "commcheck_rdma_background": "always",
    "commcheck_rdma_pairs": [["n1", "n2"], ["n2", "10.0.0.5"]],
    "commcheck_rdma_center": "n1",
    "commcheck_rdma_rail_numbers": [0, 3],
    "commcheck_rdma_duration": 10,
    "commcheck_rdma_iterations": {"commcheck_rdma_iterations": 1000, "commcheck_rdma_duration": 0},
    "commcheck_rdma_lat_iterations": 20000,
    "commcheck_rdma_size": 65536,
    "commcheck_rdma_all_sizes": {"commcheck_rdma_all_sizes": True, "commcheck_rdma_duration": 0},
    "commcheck_rdma_qps": 4,
    "commcheck_rdma_bidirectional": True,
    "commcheck_rdma_rdma_cm": True,
    "commcheck_rdma_mtu": 4096,
    "commcheck_rdma_use_cuda": 0,
    "commcheck_rdma_extra_args": ["-F", "--report-both"],
    "commcheck_rdma_timeout": 60,
    "commcheck_rdma_connect_retries": 10,
    "commcheck_rdma_base_port": 20000,
    "commcheck_expected_gbps": 390.5,
    "commcheck_outlier_z": 5,
    "commcheck_outlier_min_rel": 0.5,
    "commcheck_cpu_governor": "schedutil",
    "commcheck_lock": False,
    "commcheck_lock_dir": "/var/lock/commcheck",
    "commcheck_lock_lease": 600,
    "commcheck_lock_leftovers_wait": 0,
    "commcheck_retest_repeats": 3,
    "commcheck_retest_partners": False,
    "commcheck_retest_verdicts": ["fail", "warn"],
    "commcheck_retest_max": 10,
    "commcheck_retest_per_host": 0,
    "commcheck_retest_rounds": 0,
    "commcheck_roce_preflight": False,
    "commcheck_rdma_subnet": "fd00::/64",
    "commcheck_rdma_counters": False,
    "commcheck_counter_trend_runs": 5,
    "commcheck_numa_pin": "taskset",
    "commcheck_gpu_select": "closest",
    "commcheck_rdma_gpudirect": "auto",
    "commcheck_rdma_gpudirect_dmabuf": True,
    "commcheck_rdma_gpudirect_pairs": "all",
    "commcheck_rdma_gpudirect_min_ratio": 0.7,
    "commcheck_efficiency": {"write": 0.92, "read": 0.88},
    "commcheck_topology": {"0": {"leaf": "leaf-r0-07", "port": "Ethernet1/12"}, "mlx5_1": {"leaf": "leaf r1 07"}},
    "commcheck_thresholds_history": False,
    "commcheck_history_runs": 10,
    "commcheck_history_threshold": 0.3,
    "commcheck_address": "10.1.2.3",
    "commcheck_slices": 4,
    "commcheck_slice_dir": "/shared/commcheck/slices",
    "commcheck_slice_wait": 1800,
    "commcheck_collective_mode": "per_node",
    "commcheck_collective_hosts": ["n1", "n2"],
    "commcheck_collective_pair_pattern": "mesh",
    "commcheck_collective_gpus_per_process": 8,
    "commcheck_collective_min_bytes": "8K",
    "commcheck_collective_max_bytes": "16G",
    "commcheck_collective_step_factor": 4,
    "commcheck_collective_iterations": 100,
    "commcheck_collective_warmup_iterations": 0,
    "commcheck_collective_check": 0,
    "commcheck_collective_datatype": "int32",
    "commcheck_collective_reduce_op": "max",
    "commcheck_collective_env": {"NCCL_IB_HCA": "mlx5_0,mlx5_1", "UCX_NET_DEVICES": "mlx5_0:1"},
    "commcheck_mpi_mca": {"btl_tcp_if_include": "eth0", "btl": "^openib"},
    "commcheck_mpi_ssh_config": "/etc/commcheck/ssh_config",
    "commcheck_collective_launcher": "mpich",
    "commcheck_collective_mpirun": "/opt/openmpi/bin/mpirun",
    "commcheck_collective_slurm_job_id": {"commcheck_collective_slurm_job_id": "4242",
                                          "commcheck_collective_launcher": "srun", "commcheck_collective_mpirun": "srun"},
    "commcheck_collective_allow_run_as_root": True,
    "commcheck_collective_binary_dir": "/opt/nccl-tests/build",
    "commcheck_collective_json_output": "never",
    "commcheck_collective_timeout": 3600,
    "commcheck_collective_expected_busbw_gbs": 180.5,
    "commcheck_collective_node_expected_busbw_gbs": 300,
    "commcheck_collective_nic_rates_gbps": [400, 400],
    "commcheck_collective_link_efficiency": 0.8,
    "commcheck_collective_min_fraction": 0.7,
    "commcheck_collective_busbw_metric": "avg",
    "commcheck_collective_ib_expected": True,
    "commcheck_collective_transport_check": False,
    "commcheck_collective_ib_loopback": False,
    "commcheck_collective_bisect": False,
    "commcheck_collective_bisect_max_runs": 10,
    "commcheck_tcp_hosts": ["n1"],
    "commcheck_tcp_pattern": "ring",
    "commcheck_tcp_strategy": "rounds",
    "commcheck_tcp_background": "never",
    "commcheck_tcp_pairs": [["n2", "n1"]],
    "commcheck_tcp_center": "n2",
    "commcheck_tcp_duration": 30,
    "commcheck_tcp_parallel": 8,
    "commcheck_tcp_reverse": True,
    "commcheck_tcp_bidirectional": True,
    "commcheck_tcp_omit": 2,
    "commcheck_tcp_extra_args": ["-Z"],
    "commcheck_tcp_timeout": 60,
    "commcheck_tcp_connect_retries": 0,
    "commcheck_tcp_base_port": 5301,
    "commcheck_tcp_expected_gbps": 90,
    "commcheck_tcp_address": "192.0.2.10",
    "commcheck_run_records": [{"kind": "tcp_bw", "host": "n1", "verdict": "pass"}],
    "commcheck_report_records": [{"kind": "tcp_bw", "host": "n1", "verdict": "pass"}],
    "commcheck_run_id": "20260101T000000Z-abc123",
    "commcheck_report_formats": ["md", "json"],
    "commcheck_history_dir": "/var/lib/commcheck/history",
    "commcheck_report_compare": False,
    "commcheck_baseline_runs": 10,
    "commcheck_baseline_run": "awx-42",
    "commcheck_baseline_max_age": "30d",
    "commcheck_baseline_min_runs": 3,
    "commcheck_baseline_ignore_params": ["round", "tcp_port"],
    "commcheck_regression_threshold": 0.1,
    "commcheck_regression_thresholds": {"bw_gbps": 0.1},
    "commcheck_report_from_history": "last",
    "commcheck_report_junit_regression_fails": False,
    "commcheck_report_publish_regressions": False,
    "commcheck_report_index": False,
    "commcheck_report_index_runs": 30,
    "commcheck_report_index_points": 10,
    "commcheck_report_index_rows": 500,
    "commcheck_report_fail_on": "regression",
    "commcheck_k8s_existing_pods": {"namespace": "training", "selector": "volcano.sh/job-name=tj-m1,role in (w,m)",
                                    "names": ["trainingjob-m1-0"], "container": "main"},
    "commcheck_k8s_nodes": ["gpu-node-1", "gpu-node-2.example"],
    "commcheck_k8s_node_selector": "nvidia.com/gpu.present=true",
    "commcheck_k8s_namespace": "commcheck",
    "commcheck_k8s_image": "nvcr.io/nvidia/pytorch:24.05-py3",
    "commcheck_k8s_image_pull_policy": "Always",
    "commcheck_k8s_image_pull_secrets": ["regcred"],
    "commcheck_k8s_command": ["/bin/sleep", "3600"],
    "commcheck_k8s_resources": {"rdma/rdma_shared_device_a": 1},
    "commcheck_k8s_gpus": 8,
    "commcheck_k8s_gpu_resource": "amd.com/gpu",
    "commcheck_k8s_networks": ["default/net1@eth1"],
    "commcheck_k8s_host_network": True,
    "commcheck_k8s_tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
    "commcheck_k8s_shm_size": "8Gi",
    "commcheck_k8s_capabilities": ["IPC_LOCK", "SYS_RESOURCE"],
    "commcheck_k8s_privileged": True,
    "commcheck_k8s_labels": {"team": "ml"},
    "commcheck_k8s_annotations": {"example.com/note": "checked by commcheck"},
    "commcheck_k8s_service_account": "commcheck",
    "commcheck_k8s_kubeconfig": "~/.kube/config",
    "commcheck_k8s_context": "arn:aws:eks:us-east-1:123:cluster/x",
    "commcheck_k8s_kubectl_binary": "/usr/local/bin/kubectl",
    "commcheck_k8s_run_id": "cc-1",
    "commcheck_k8s_name_prefix": "cc",
    "commcheck_k8s_wait_timeout": 600,
    "commcheck_k8s_active_deadline_seconds": 3600,
    "commcheck_k8s_keep_pods": True,
    "commcheck_k8s_group": "gpu_pods",
    "commcheck_k8s_host_name": "pod",
    "commcheck_k8s_pod_vars": {"commcheck_tcp_address": "10.0.0.1", "my_var": "free text; anything"},
    "commcheck_k8s_node_vars": {"gpu-node-1": {"commcheck_expected_gbps": 200}},
    "commcheck_k8s_mpi_agent": False,
    "commcheck_k8s_mpi_agent_dir": "/opt/kubexec",
    "commcheck_k8s_mpi_kubectl": "/usr/bin/kubectl",
    "commcheck_k8s_mpi_mca": {"btl_tcp_if_include": "net1"},
    "commcheck_k8s_render_job": "volcano",
    "commcheck_k8s_render_rbac": True,
    "commcheck_k8s_render_only": True,
    "commcheck_k8s_manifest_dir": "manifests",
    "commcheck_k8s_job_collective": {"gpus_per_node": 8, "min_bytes": "8", "max_bytes": "8G"},
    "commcheck_k8s_run_job": {"commcheck_k8s_run_job": True, "commcheck_k8s_render_job": "mpijob"},
    "commcheck_k8s_job_timeout": 600,
    "commcheck_quarantine": True,
    "commcheck_quarantine_backend": "slurm",
    "commcheck_quarantine_dry_run": False,
    "commcheck_quarantine_state": "absent",
    "commcheck_quarantine_components": ["host", "link"],
    "commcheck_quarantine_hosts": ["gpu-node-1"],
    "commcheck_quarantine_reason": "bad HCA (mlx5_1); replaced on Monday",
    "commcheck_quarantine_findings": [{"kind": "finding", "host": "n1", "verdict": "fail"}],
    "commcheck_quarantine_node_names": {"n1": "gpu-node-1"},
    "commcheck_quarantine_taint": True,
    "commcheck_quarantine_taint_effect": "NoExecute",
    "commcheck_quarantine_kubeconfig": "/etc/kubernetes/admin.conf",
    "commcheck_quarantine_context": "prod",
    "commcheck_quarantine_cordon": True,
    "commcheck_quarantine_drain": True,
    "commcheck_quarantine_drain_timeout": 900,
    "commcheck_reserve_nodes": "taint",
    "commcheck_reserve_key": "scheduling.example.com/commcheck",
    "commcheck_reserve_node_names": {"h1": "gpu-node-01.example.com"},
    "commcheck_reserve_kubectl": "/usr/local/bin/kubectl",
    "commcheck_reserve_kubeconfig": "/etc/kubernetes/admin.conf",
    "commcheck_reserve_context": "prod",
    "commcheck_reserve_state_dir": "/var/lib/commcheck/reserve",
}

# One hostile value of every variable (with the other values it needs) and what the problem must say.
HOSTILE = {
    "commcheck_checks": (["discover", "rm -rf"], "'rm -rf' is not one of"),
    "commcheck_rdma_ops": (["write;reboot"], "'write;reboot' is not one of"),
    "commcheck_rdma_metrics": ([], "must name at least one"),
    "commcheck_pattern": ("--all", "'--all' is not one of"),
    "commcheck_devices": (["-d"], "'-d' is not an RDMA device name"),
    "commcheck_ib_port": (256, "256 must be between 1 and 255"),
    "commcheck_collective_library": ("nccl;id", "is not one of"),
    "commcheck_collective_ops": (["all_reduce\nid"], "is not a collective"),
    "commcheck_gpus_per_node": (0, "0 must be between 1 and 1024"),
    "commcheck_require_accelerators": ("maybe", "'maybe' is not a boolean"),
    "commcheck_min_fraction": (0, "must be above 0"),
    "commcheck_fleet_min_fraction": (1.5, "1"),
    "commcheck_report_dir": ("../../etc", "must not contain '..'"),
    "commcheck_sysfs_root": ("sys", "must be an absolute path"),
    "commcheck_expected_rate_gbps": (-100, "must be between 0"),
    "commcheck_subnet": ("10.0.0.0/24;id", "'10.0.0.0/24;id'"),
    "commcheck_ib_gid_index": (256, "must be between 0 and 255"),
    "commcheck_discover_tools": ("sometimes", "is not a boolean"),
    "commcheck_discover_topology_tools": ("lldp", "is not a boolean"),
    "commcheck_discover_address_source": ("dns", "is not one of auto, ip, gids"),
    "commcheck_fail_on": ("fatal", "is not one of"),
    "commcheck_discover_min_severity": ("debug", "is not one of"),
    "commcheck_discover_publish": ("x", "is not a boolean"),
    "commcheck_transport": ({"commcheck_transport": "kubectl"}, "commcheck_kubectl: "),
    "commcheck_kubectl": ({"pod": "p", "binary": "bin/kubectl"}, "must be an absolute path or a command name"),
    "commcheck_environment": ({"LD_PRELOAD": "x\x00y"}, "contains a control character"),
    "commcheck_rdma_hosts": (["n1", "-oProxyCommand=id"], "must not start with '-'"),
    "commcheck_rdma_pattern": ("all", "is not one of"),
    "commcheck_rdma_oversubscription": (0.5, "between 1 and 64"),
    "commcheck_rdma_loopback": ("both", "is not a boolean"),
    "commcheck_rdma_strategy": ("parallel", "is not one of"),
    "commcheck_rdma_background": ("sometimes", "is not one of"),
    "commcheck_rdma_pairs": ([["n1", "n1;id"]], "is not a host of the inventory"),
    "commcheck_rdma_center": ("n1 n2", "is not a host of the inventory"),
    "commcheck_rdma_rail_numbers": ([-1], "must be between 0 and 1023"),
    "commcheck_rdma_duration": (-5, "must be 0 (run by iterations) or between 1 and 86400"),
    "commcheck_rdma_iterations": ({"commcheck_rdma_iterations": 3, "commcheck_rdma_duration": 0},
                                  "must be 0 (perftest's default) or between 5 and"),
    "commcheck_rdma_lat_iterations": (4, "must be 0 (run like the bandwidth tests) or between 5 and 100000000"),
    "commcheck_rdma_size": (2 ** 31, "must be 0 (perftest's default) or between 1 and"),
    "commcheck_rdma_all_sizes": (True, "needs commcheck_rdma_duration 0"),
    "commcheck_rdma_qps": (100000, "must be 0 (perftest's default) or between 1 and 16384"),
    "commcheck_rdma_bidirectional": ("both", "is not a boolean"),
    "commcheck_rdma_rdma_cm": ("cm", "is not a boolean"),
    "commcheck_rdma_mtu": (1500, "must be 0 (the port's) or one of 256"),
    "commcheck_rdma_use_cuda": (-2, "must be between -1 and 1023"),
    "commcheck_rdma_extra_args": (["--x;reboot"], "--x;reboot"),
    "commcheck_rdma_timeout": ({"commcheck_rdma_timeout": 5, "commcheck_rdma_duration": 5},
                               "must be longer than commcheck_rdma_duration (5 s)"),
    "commcheck_rdma_connect_retries": (-1, "must be between 0 and 100000"),
    "commcheck_rdma_base_port": (80, "must be between 1024 and 65000"),
    "commcheck_expected_gbps": (float("nan"), "must be a finite number"),
    "commcheck_outlier_z": (0, "must be above 0"),
    "commcheck_outlier_min_rel": (-0.1, "must be between 0 and 10"),
    "commcheck_cpu_governor": ("../performance", "is not a cpufreq governor name"),
    "commcheck_lock": ("later", "is not a boolean"),
    "commcheck_lock_dir": ("/run/lock/../../etc", "must not contain '..'"),
    "commcheck_lock_lease": (30, "must be between 60 and 86400"),
    "commcheck_lock_leftovers_wait": (-1, "must be between 0 and 3600"),
    "commcheck_retest_repeats": (1000, "must be between 0 and 100"),
    "commcheck_retest_partners": ("no way", "is not a boolean"),
    "commcheck_retest_verdicts": (["pass"], "'pass' is not one of fail, error, warn"),
    "commcheck_retest_max": (-1, "must be between 0 and 100000"),
    "commcheck_retest_per_host": (10 ** 9, "must be between 0 and 10000"),
    "commcheck_retest_rounds": (21, "must be between 0 and 20"),
    "commcheck_roce_preflight": ("off;id", "is not a boolean"),
    "commcheck_rdma_subnet": ("10.0.0.0/33", "is not a network in CIDR form"),
    "commcheck_rdma_counters": ([], "is not a boolean"),
    "commcheck_counter_trend_runs": (10 ** 6, "must be between 0 and 1000"),
    "commcheck_numa_pin": ("numactl --all", "is not one of"),
    "commcheck_gpu_select": ("nearest", "is not one of"),
    "commcheck_rdma_gpudirect": ("sometimes", "must be auto, true or false"),
    "commcheck_rdma_gpudirect_dmabuf": ("maybe", "is not a boolean"),
    "commcheck_rdma_gpudirect_pairs": ("every", "is not one of"),
    "commcheck_rdma_gpudirect_min_ratio": (1.5, "between"),
    "commcheck_efficiency": ({"write": 1.5}, "commcheck_efficiency.write: 1.5 must be between 0 and 1"),
    "commcheck_topology": ({"mlx5_0": {"leaf": "--config=/etc/x"}}, "commcheck_topology.mlx5_0.leaf: '--config"),
    "commcheck_thresholds_history": ("maybe", "is not a boolean"),
    "commcheck_history_runs": (0, "must be between 1 and 1000"),
    "commcheck_history_threshold": (2, "must be between 0 and 1"),
    "commcheck_address": ("10.1.2.3\n", "contains a control character"),
    "commcheck_slices": (0, "must be between 1 and 4096"),
    "commcheck_slice_dir": ("/shared/../etc", "'..'"),
    "commcheck_slice_wait": (-5, "must be between 1 and"),
    "commcheck_collective_mode": ("pool;id", "is not one of"),
    "commcheck_collective_hosts": (["--help"], "'--help' must not start with '-'"),
    "commcheck_collective_pair_pattern": ("pairs", "is not one of mesh, ring, star"),
    "commcheck_collective_gpus_per_process": (65, "must be between 1 and 64"),
    "commcheck_collective_min_bytes": ("0", "'0'"),
    "commcheck_collective_max_bytes": ("1P", "'1P'"),
    "commcheck_collective_step_factor": (1, "must be between 2 and 1024"),
    "commcheck_collective_iterations": (0, "must be between 1 and 1000000"),
    "commcheck_collective_warmup_iterations": (-1, "must be between 0 and 1000000"),
    "commcheck_collective_check": (10 ** 4, "must be between 0 and 1000"),
    "commcheck_collective_datatype": ("float;id", "'float;id' is not a"),
    "commcheck_collective_reduce_op": ("xor", "'xor' is not a reduction"),
    "commcheck_collective_env": ({"LD_PRELOAD": "/tmp/x.so"}, "'LD_PRELOAD'"),
    "commcheck_mpi_mca": ({"plm_rsh_agent": "/tmp/evil"}, "'plm_rsh_agent'"),
    "commcheck_mpi_ssh_config": ("/etc/ssh config", "'/etc/ssh config'"),
    "commcheck_collective_launcher": ("slurm", "is not one of"),
    "commcheck_collective_slurm_job_id": ({"commcheck_collective_slurm_job_id": "12;id",
                                           "commcheck_collective_launcher": "srun", "commcheck_collective_mpirun": "srun"},
                                          "is not a Slurm job id"),
    "commcheck_collective_mpirun": ("bin/mpirun", "must be an absolute path or a command name"),
    "commcheck_collective_allow_run_as_root": ("root", "is not a boolean"),
    "commcheck_collective_binary_dir": ("build", "must be an absolute path"),
    "commcheck_collective_json_output": ("yaml", "is not one of"),
    "commcheck_collective_timeout": (0, "must be between 1 and 604800"),
    "commcheck_collective_expected_busbw_gbs": (-1, "must be between 0 and"),
    "commcheck_collective_node_expected_busbw_gbs": (1e9, "must be between 0 and"),
    "commcheck_collective_nic_rates_gbps": ([0], "must be above 0 Gb/s"),
    "commcheck_collective_link_efficiency": (1.1, "must be between 0 and 1"),
    "commcheck_collective_min_fraction": (0, "must be above 0"),
    "commcheck_collective_busbw_metric": ("min", "is not one of"),
    "commcheck_collective_ib_expected": ("ib", "is not a boolean"),
    "commcheck_collective_transport_check": ("sometimes", "is not a boolean"),
    "commcheck_collective_ib_loopback": ("twice", "is not a boolean"),
    "commcheck_collective_bisect": ("x", "is not a boolean"),
    "commcheck_collective_bisect_max_runs": (1001, "must be 0 (2 x hosts + 3) or between 1 and 1000"),
    "commcheck_tcp_hosts": (["n1", "n1"], "'n1' is listed twice"),
    "commcheck_tcp_pattern": ("full", "is not one of"),
    "commcheck_tcp_strategy": ("fast", "is not one of"),
    "commcheck_tcp_background": ("bg", "is not one of"),
    "commcheck_tcp_pairs": ([["n1"]], "is not a [server, client] pair"),
    "commcheck_tcp_center": ("-c", "must not start with '-'"),
    "commcheck_tcp_duration": (86401, "must be between 1 and 86400"),
    "commcheck_tcp_parallel": (129, "must be between 1 and 128"),
    "commcheck_tcp_reverse": ("r", "is not a boolean"),
    "commcheck_tcp_bidirectional": ({"commcheck_tcp_bidirectional": True, "commcheck_tcp_reverse": True},
                                    "exclude each other"),
    "commcheck_tcp_omit": (601, "must be between 0 and 600"),
    "commcheck_tcp_extra_args": (["-c", "evil"], "'-c'"),
    "commcheck_tcp_timeout": ({"commcheck_tcp_timeout": 5}, "must be longer than commcheck_tcp_duration"),
    "commcheck_tcp_connect_retries": (100001, "must be between 0 and 100000"),
    "commcheck_tcp_base_port": (65535, "must be between 1024 and 65000"),
    "commcheck_tcp_expected_gbps": (1e6, "must be between 0 and"),
    "commcheck_tcp_address": ("-R", "must not start with '-'"),
    "commcheck_run_records": ("records", "is not a list of dicts"),
    "commcheck_report_records": ([{"kind": "x", "host": "a", "verdict": "great"}], "'verdict' must be one of"),
    "commcheck_run_id": ("../x", "is not a run id"),
    "commcheck_report_formats": (["pdf"], "'pdf' is not one of"),
    "commcheck_history_dir": ("/tmp/h\x00", "contains a control character"),
    "commcheck_report_compare": ("x", "is not a boolean"),
    "commcheck_baseline_runs": (0, "must be between 1 and 1000"),
    "commcheck_baseline_run": ("-rf", "is not a run id"),
    "commcheck_baseline_max_age": ("yesterday", "'yesterday'"),
    "commcheck_baseline_min_runs": (-3, "must be between 1 and 1000"),
    "commcheck_baseline_ignore_params": (["round;id"], "is not one word"),
    "commcheck_regression_threshold": (-0.1, "must be between 0 and 10"),
    "commcheck_regression_thresholds": ({"bw_gbps": "lots"}, "commcheck_regression_thresholds.bw_gbps: 'lots'"),
    "commcheck_report_from_history": ("../../x", "is not a run id"),
    "commcheck_report_junit_regression_fails": ("x", "is not a boolean"),
    "commcheck_report_publish_regressions": ("x", "is not a boolean"),
    "commcheck_report_index": ("x", "is not a boolean"),
    "commcheck_report_index_runs": (0, "must be between 1 and 1000"),
    "commcheck_report_index_points": (1, "must be between 2 and 200"),
    "commcheck_report_index_rows": (10001, "must be between 1 and 10000"),
    "commcheck_report_fail_on": ("always", "is not one of"),
    "commcheck_k8s_existing_pods": ({"selector": "--all-namespaces"}, "must not start with '-'"),
    "commcheck_k8s_nodes": (["Node_1"], "'Node_1'"),
    "commcheck_k8s_node_selector": ("a=b;id", "'a=b;id'"),
    "commcheck_k8s_namespace": ("-n", "must not start with '-'"),
    "commcheck_k8s_image": ("img name", "'img name'"),
    "commcheck_k8s_image_pull_policy": ("Sometimes", "is not one of"),
    "commcheck_k8s_image_pull_secrets": (["Reg Cred"], "is not a Kubernetes name"),
    "commcheck_k8s_command": (["bin/sleep"], "must be an absolute path or a command name"),
    "commcheck_k8s_resources": ({"rdma/x": "1;id"}, "'1;id'"),
    "commcheck_k8s_gpus": (-1, "must be between 0 and 1024"),
    "commcheck_k8s_gpu_resource": ("gpu; id", "'gpu; id'"),
    "commcheck_k8s_networks": (["net1;id"], "'net1;id'"),
    "commcheck_k8s_host_network": ("x", "is not a boolean"),
    "commcheck_k8s_tolerations": ([{"key": "a", "operator": "Like"}], "has an operator that is not Exists or Equal"),
    "commcheck_k8s_shm_size": ("8 GB", "'8 GB'"),
    "commcheck_k8s_capabilities": (["ipc_lock"], "'ipc_lock'"),
    "commcheck_k8s_privileged": ("x", "is not a boolean"),
    "commcheck_k8s_labels": ({"team": "a b"}, "'a b'"),
    "commcheck_k8s_annotations": ({"note": "a\nb"}, "contains a control character"),
    "commcheck_k8s_service_account": ("-sa", "must not start with '-'"),
    "commcheck_k8s_kubeconfig": ("/root/../etc/kubeconfig", "must not contain '..'"),
    "commcheck_k8s_context": ("-ctx", "must not start with '-'"),
    "commcheck_k8s_kubectl_binary": ("./kubectl", "must be an absolute path or a command name"),
    "commcheck_k8s_run_id": ("CC_1", "'CC_1'"),
    "commcheck_k8s_name_prefix": ("cc/x", "'cc/x'"),
    "commcheck_k8s_wait_timeout": (0, "must be between 1 and 86400"),
    "commcheck_k8s_active_deadline_seconds": (10 ** 10, "must be between 1 and"),
    "commcheck_k8s_keep_pods": ("x", "is not a boolean"),
    "commcheck_k8s_group": ("pods;id", "is not an inventory group name"),
    "commcheck_k8s_host_name": ("ip", "is not one of node, pod"),
    "commcheck_k8s_pod_vars": ({"commcheck_rdma_duration": -1},
                               "commcheck_k8s_pod_vars.commcheck_rdma_duration: -1 must be 0"),
    "commcheck_k8s_node_vars": ({"gpu-node-1": {"commcheck_devices": ["mlx5_0;id"]}},
                                "commcheck_k8s_node_vars.gpu-node-1.commcheck_devices[0]: 'mlx5_0;id'"),
    "commcheck_k8s_mpi_agent": ("x", "is not a boolean"),
    "commcheck_k8s_mpi_agent_dir": ("/tmp/a b", "'/tmp/a b'"),
    "commcheck_k8s_mpi_kubectl": ("../kubectl", "must be an absolute path or a command name"),
    "commcheck_k8s_mpi_mca": ({"btl_tcp_if_include": "net1\nx"}, "control character"),
    "commcheck_k8s_render_job": ("job", "is not one of '', mpijob, volcano"),
    "commcheck_k8s_render_rbac": ("x", "is not a boolean"),
    "commcheck_k8s_render_only": ("x", "is not a boolean"),
    "commcheck_k8s_manifest_dir": ("-rf", "must not start with '-'"),
    "commcheck_k8s_job_collective": ({"foo": 1}, "foo"),
    "commcheck_k8s_run_job": (True, "set that to mpijob or volcano"),
    "commcheck_k8s_job_timeout": (0, "commcheck_k8s_job_timeout"),
    "commcheck_quarantine": ("x", "is not a boolean"),
    "commcheck_quarantine_backend": ("pbs", "is not one of kubernetes, slurm"),
    "commcheck_quarantine_dry_run": ("x", "is not a boolean"),
    "commcheck_quarantine_state": ("gone", "is not one of present, absent"),
    "commcheck_quarantine_components": (["disk"], "'disk' is not one of"),
    "commcheck_quarantine_hosts": (["Bad_Name"], "'Bad_Name'"),
    "commcheck_quarantine_reason": ("a\x00b", "contains a control character"),
    "commcheck_quarantine_findings": ([{"host": "n1", "verdict": "fail"}], "'kind' is required"),
    "commcheck_quarantine_node_names": ({"n1": "-node"}, "'-node'"),
    "commcheck_quarantine_taint": ("x", "is not a boolean"),
    "commcheck_quarantine_taint_effect": ("Evict", "is not one of"),
    "commcheck_quarantine_kubeconfig": ("a\nb", "contains a control character"),
    "commcheck_quarantine_context": (";id", "is not a kubeconfig context name"),
    "commcheck_quarantine_cordon": ("x", "is not a boolean"),
    "commcheck_quarantine_drain": ("x", "is not a boolean"),
    "commcheck_quarantine_drain_timeout": (0, "between 1 and 86400"),
    "commcheck_reserve_nodes": ("cordon", "is not one of"),
    "commcheck_reserve_key": ("--overwrite", "must not start with '-'"),
    "commcheck_reserve_node_names": ({"h1": "-gpu"}, "not a valid Kubernetes node name"),
    "commcheck_reserve_kubectl": ("/bin/sh", "kubectl"),
    "commcheck_reserve_kubeconfig": ("a\nb", "contains a control character"),
    "commcheck_reserve_context": (";id", "is not a kubeconfig context name"),
    "commcheck_reserve_state_dir": ("/tmp/../etc", "must not contain '..'"),
}

# Free text (a value may start with '-': it never goes where an option could).
TEXT = ("commcheck_quarantine_reason",)
# Paths and programs: any character but control characters may be in a file name (argv items, never a shell).
PATH_LIKE = ("commcheck_report_dir", "commcheck_sysfs_root", "commcheck_collective_mpirun",
             "commcheck_collective_binary_dir", "commcheck_history_dir", "commcheck_k8s_kubeconfig",
             "commcheck_k8s_kubectl_binary", "commcheck_k8s_mpi_kubectl", "commcheck_k8s_manifest_dir",
             "commcheck_mpi_ssh_config", "commcheck_quarantine_kubeconfig", "commcheck_slice_dir", "commcheck_lock_dir",
             "commcheck_reserve_kubectl", "commcheck_reserve_kubeconfig", "commcheck_reserve_state_dir")
# Lists whose items are command-line arguments (an item may be an option).
ARGUMENT_LISTS = ("commcheck_rdma_extra_args", "commcheck_tcp_extra_args", "commcheck_k8s_command")


def _values(name, sample):
    """A GOOD/HOSTILE entry as the values to check."""
    if isinstance(sample, dict) and name in sample and all(k in ALL for k in sample):
        return dict(sample)
    return {name: sample}


# The type checks of equal values, done once for the whole module as validate_options does them once for many
# hosts (``check_values``' memo: a cache of a pure function, so no test sees what another one checked). Without
# it every check types the defaults of all ~200 variables again.
TYPE_CHECKS = {}


def _check(values):
    return ro.check_values(ALL, values, known_hosts=HOSTS, memo=TYPE_CHECKS)


def _kind(name):
    spec = ALL[name]
    return spec.get("type", "str"), spec.get("elements"), spec.get("choices")


def _of_type(kind, elements=None, choices=False):
    """The variables of a type that have test values (the first test names those that have none)."""
    return [n for n in sorted(ALL) if _kind(n)[0] == kind and (elements is None or _kind(n)[1] == elements)
            and bool(_kind(n)[2]) == choices and n in GOOD]


# ---------------------------------------------------------------- the table is complete

def test_every_variable_of_every_spec_has_a_rule_and_test_values():
    assert sorted(n for n in ALL if n not in ro.RULES) == []
    assert sorted(n for n in ro.RULES if n not in ALL) == []
    assert sorted(n for n in ALL if n not in GOOD) == []
    assert sorted(n for n in ALL if n not in HOSTILE) == []


@pytest.mark.parametrize("role,entry", ENTRY_POINTS, ids=["%s-%s" % e for e in ENTRY_POINTS])
def test_the_spec_defaults_pass(role, entry):
    spec = ro.merge_specs(SPECS, [role], entry)
    assert spec
    assert ro.check_values(spec, {}) == []


@pytest.mark.parametrize("role", ro.ROLES)
def test_the_role_defaults_pass(role):
    with open(os.path.join(REPO, "roles", role, "defaults", "main.yml")) as handle:
        defaults = yaml.safe_load(handle) or {}
    spec = ro.merge_specs(SPECS, ro.ROLES)
    given = dict((k, v) for k, v in defaults.items() if k in spec)
    assert given
    assert ro.check_values(spec, given, known_hosts=HOSTS) == []


def test_the_oneclick_union_takes_the_oneclick_spec_first():
    union = ro.merge_specs(SPECS, ro.ONECLICK_ROLES)
    assert union["commcheck_collective_library"]["default"] == "auto"
    assert ro.merge_specs(SPECS, ["collective", "commcheck"])["commcheck_collective_library"]["default"] == "nccl"
    assert "commcheck_k8s_image" not in union


# ---------------------------------------------------------------- good and hostile values

@pytest.mark.parametrize("name", sorted(GOOD))
def test_good_value_passes(name):
    """Good for its rule, and for every module call the checks plan with it (plugin_utils/planned_call_checks)."""
    values = _values(name, GOOD[name])
    assert _check(values) == []
    assert planned_call_checks.problems(ALL, values, HOSTS) == []


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_value_is_refused_naming_the_option(name):
    value, fragment = HOSTILE[name]
    problems = _check(_values(name, value))
    assert problems, name
    assert any(p.startswith(name + ":") or p.startswith(name + ".") or p.startswith(name + "[") for p in problems) or \
        name == "commcheck_transport", problems
    assert any(fragment in p for p in problems), problems


HUGE_NUMBERS = [10 ** 30, -(10 ** 30), 1e308, -1e308]


@pytest.mark.parametrize("rule", [kit.integer(0, 100), kit.integer(1, 10, zero="off"), kit.number(0, 1),
                                  kit.number(0, 1, above=True), kit.fraction()], ids=lambda rule: rule.describes)
def test_the_number_rules_refuse_every_huge_and_negative_number(rule):
    for number in HUGE_NUMBERS:
        with pytest.raises(kit.OptionError, match="^opt"):
            rule("opt", number, kit.Context())


@pytest.mark.parametrize("name", [n for n in sorted(ALL) if _kind(n)[0] in ("int", "float")])
def test_huge_and_negative_numbers_and_booleans_are_refused(name):
    # one of each class (the rules are checked with each above): too large, negative, a boolean
    for number in (10 ** 30, -1e308, True):
        problems = _check({name: number})
        assert problems and problems[0].startswith(name + ":"), (number, problems)


def _scalar_strings():
    return [n for n in _of_type("str") + _of_type("path") if isinstance(GOOD[n], str)]


@pytest.mark.parametrize("name", _scalar_strings())
def test_control_characters_are_refused(name):
    # a tab, which a check for line breaks misses (every control character: test_hostile_values_audit.py)
    good = GOOD[name]
    problems = _check({name: good[:1] + "\t" + good[1:]})
    assert problems and problems[0].startswith(name + ":"), problems


@pytest.mark.parametrize("name", [n for n in _scalar_strings() if n not in TEXT])
def test_a_value_that_would_read_as_an_option_is_refused(name):
    problems = _check({name: "-" + GOOD[name].lstrip("/")})
    assert problems and problems[0].startswith(name + ":"), problems


@pytest.mark.parametrize("name", [n for n in _scalar_strings() if n not in TEXT + PATH_LIKE])
def test_a_shell_separator_is_refused(name):
    assert _check({name: GOOD[name] + ";reboot"}), name


@pytest.mark.parametrize("name", [n for n in _scalar_strings() if ALL[n].get("type") == "path"
                                  or isinstance(GOOD[n], str) and GOOD[n].startswith(("/", "~"))])
def test_dot_dot_in_a_path_is_refused(name):
    problems = _check({name: GOOD[name].rstrip("/") + "/../../etc"})
    assert problems and problems[0].startswith(name + ":"), problems
    # kubexec's check of the agent directory words it its own way
    assert "'..'" in problems[0] or name == "commcheck_k8s_mpi_agent_dir", problems


@pytest.mark.parametrize("name", ["commcheck_collective_mpirun", "commcheck_k8s_kubectl_binary",
                                  "commcheck_k8s_mpi_kubectl"])
def test_relative_binaries_are_refused(name):
    for binary in ("bin/mpirun", "./kubectl", "../x", "sub/../x"):
        problems = _check({name: binary})
        assert problems and problems[0].startswith(name + ":"), (binary, problems)


def test_binary_keys_of_the_kubectl_transport_are_programs():
    assert _check({"commcheck_kubectl": {"pod": "p", "binary": "kubectl"}}) == []
    assert _check({"commcheck_kubectl": {"pod": "p", "binary": "tools/kubectl"}})


def test_kubectl_settings_are_named_as_keys_of_the_role_option_whatever_the_transport():
    # the modules' own check, its settings named commcheck_kubectl.<key> once (no "commcheck_kubectl: " before it)
    for transport in ("kubectl", "host"):
        problems = _check({"commcheck_transport": transport, "commcheck_kubectl": {"pod": "p;rm -rf /"}})
        assert [p.split(" '")[0] for p in problems] == ["commcheck_kubectl.pod"], problems
    assert _check({"commcheck_transport": "host", "commcheck_kubectl": {"namespace": "-n"}})[0].startswith(
        "commcheck_kubectl.namespace '-n' must not start with '-'")
    assert _check({"commcheck_transport": "kubectl", "commcheck_kubectl": {}}) == [
        "commcheck_kubectl: {} needs a pod with commcheck_transport=kubectl (commcheck_kubectl.pod)"]
    assert _check({"commcheck_transport": "host", "commcheck_kubectl": {}}) == []


@pytest.mark.parametrize("name", [n for n in _of_type("list", "str") if n not in ARGUMENT_LISTS])
def test_list_items_that_read_as_options_are_refused(name):
    good = GOOD[name]
    items = good if isinstance(good, list) else [i.strip() for i in good.split(",")]
    problems = _check({name: ["-" + items[0]] + items[1:]})
    assert problems and problems[0].startswith(name + "[0]:"), problems


@pytest.mark.parametrize("name", _of_type("list", "str") + _of_type("list", "str", choices=True))
def test_list_items_with_control_characters_are_refused(name):
    good = GOOD[name]
    items = good if isinstance(good, list) else [i.strip() for i in good.split(",")]
    problems = _check({name: items + ["x\ny"]})
    assert problems and problems[0].startswith((name + ":", name + "[")), problems
    # the item's index is named (extra_args name it inside: 'commcheck_tcp_extra_args: extra_args[1] ...')
    assert "[%d]" % len(items) in problems[0][:len(name) + 20], problems


@pytest.mark.parametrize("name", [n for n in _of_type("dict") if n not in ("commcheck_k8s_pod_vars",)])
def test_dict_keys_with_separators_are_refused(name):
    good = dict(GOOD[name])
    key = sorted(good)[0]
    good[key + ";id"] = good.pop(key)
    assert _check({name: good}), name


# ---------------------------------------------------------------- quoting

HUGE = 10000


def _huge(name):
    """A bad value of the variable's type holding HUGE characters."""
    kind, elements, _choices = _kind(name)
    text = "-\n" + "x" * HUGE
    if kind in ("str", "path"):
        return text
    if kind == "list":
        return [{"device": text}] if elements == "dict" else [[text, text]] if elements == "list" else [text]
    if kind == "dict":
        return {text: text}
    if kind in ("int", "float"):
        return text
    return text


# The records the check roles publish themselves (checked by the record action when published).
PUBLISHED = ("commcheck_run_records",)


@pytest.mark.parametrize("name", [n for n in sorted(ALL) if _kind(n)[0] != "raw" and n not in PUBLISHED])
def test_a_huge_value_is_quoted_at_most_200_characters(name):
    problems = _check({name: _huge(name)})
    assert problems, name
    for problem in problems:
        assert "x" * (kit.QUOTE_LIMIT + 1) not in problem, problem[:400]
        assert len(problem) <= kit.MESSAGE_LIMIT + 50, len(problem)


def test_clip_cuts_long_quotes_of_a_delegated_message():
    value = {"NCCL_" + "A" * 500: "x"}
    text = "env key %r is not allowed" % list(value)[0]
    clipped = kit.clip(text, value)
    assert "A" * 201 not in clipped and "(507 characters)" in clipped and clipped.endswith("is not allowed")
    assert kit.clip("short %r" % "abc", "abc") == "short 'abc'"
    assert len(kit.clip("y" * 5000, "z")) <= kit.MESSAGE_LIMIT + 30


# ---------------------------------------------------------------- types, nulls, survey strings, messages

def test_type_problems_say_what_was_expected():
    assert _check({"commcheck_ib_port": "one"}) == ["commcheck_ib_port: 'one' is not an integer"]
    assert _check({"commcheck_rdma_rail_numbers": ["x"]}) == [
        "commcheck_rdma_rail_numbers: ['x'] is not a list of integers"]
    assert _check({"commcheck_checks": ["discover", "format_disk"]}) == [
        "commcheck_checks[1]: 'format_disk' is not one of discover, rdma, collective, nccl, hccl, tcp"]


def test_survey_text_for_a_list_is_read_as_the_roles_read_it():
    assert _check({"commcheck_devices": "mlx5_0, mlx5_1:2"}) == []
    assert _check({"commcheck_k8s_nodes": ""}) == []
    assert _check({"commcheck_k8s_nodes": "  "}) == []
    assert _check({"commcheck_devices": "mlx5_0,`id`"}) == [
        "commcheck_devices[1]: '`id`' is not an RDMA device name (mlx5_0) or device:port (mlx5_0:1)"]


@pytest.mark.parametrize("text,index", [("mlx5_0, mlx5_1:2,", 2), (",mlx5_0", 0), ("mlx5_0,,mlx5_1", 1),
                                        ("mlx5_0, ,mlx5_1", 1)])
def test_survey_text_with_an_empty_item_is_refused_naming_its_index(text, index):
    problems = _check({"commcheck_devices": text})
    assert len(problems) == 1 and problems[0].startswith("commcheck_devices[%d]: " % index), problems
    assert "is empty" in problems[0], problems


def test_null_is_only_allowed_where_the_spec_has_no_default():
    assert _check({"commcheck_expected_rate_gbps": None, "commcheck_history_dir": None}) == []
    assert _check({"commcheck_ib_port": None}) == [
        "commcheck_ib_port: null is not allowed (leave it unset for the default, 1)"]


def test_the_library_decides_which_collectives_and_datatypes_exist():
    assert _check({"commcheck_collective_library": "hccl", "commcheck_collective_ops": ["sendrecv"]})
    assert _check({"commcheck_checks": ["hccl"], "commcheck_collective_ops": ["sendrecv"]})
    assert _check({"commcheck_collective_library": "auto", "commcheck_collective_ops": ["sendrecv"]}) == []
    assert _check({"commcheck_collective_library": "hccl", "commcheck_collective_datatype": "fp16"}) == []
    assert _check({"commcheck_collective_library": "nccl", "commcheck_collective_datatype": "fp16"})


def test_the_launcher_decides_which_program_and_allocation_it_takes():
    srun = {"commcheck_collective_launcher": "srun", "commcheck_collective_mpirun": "srun"}
    assert _check(srun) == []
    assert _check(dict(srun, commcheck_collective_mpirun="mpirun")) == [
        "commcheck_collective_launcher: 'srun' starts its steps with commcheck_collective_mpirun, which must name "
        "srun: commcheck_collective_mpirun 'mpirun' is not srun: the program's file name must be srun (or hold it "
        "as a word, like srun-1.30)"]
    assert "is not mpirun" in _check({"commcheck_collective_mpirun": "srun"})[0]
    assert _check({"commcheck_collective_slurm_job_id": "4242"}) == [
        "commcheck_collective_slurm_job_id: '4242' is srun's allocation: it needs commcheck_collective_launcher=srun"]


def test_the_job_run_needs_the_job_kind():
    assert _check({"commcheck_k8s_run_job": True}) == [
        "commcheck_k8s_run_job: True runs the job commcheck_k8s_render_job writes: set that to mpijob or volcano"]
    assert _check({"commcheck_k8s_run_job": True, "commcheck_k8s_render_job": "volcano"}) == []
    assert _check({"commcheck_k8s_run_job": False}) == []


def test_sizes_must_be_in_order():
    assert _check({"commcheck_collective_min_bytes": "1G", "commcheck_collective_max_bytes": "1M"}) == [
        "commcheck_collective_min_bytes: '1G' is larger than commcheck_collective_max_bytes ('1M')"]
    assert _check({"commcheck_collective_min_bytes": "1M", "commcheck_collective_max_bytes": "1M"}) == []


def test_nccl_and_hccl_cannot_run_in_one_play():
    assert _check({"commcheck_checks": "nccl,hccl"}) == [
        "commcheck_checks: ['nccl', 'hccl'] names both nccl and hccl; one play runs one of them"]
    assert "is empty" in _check({"commcheck_checks": []})[0]


def test_a_check_that_names_one_library_refuses_a_library_set_to_the_other():
    assert _check({"commcheck_checks": ["hccl"], "commcheck_collective_library": "nccl"}) == [
        "commcheck_checks: ['hccl'] runs the collective with hccl, but commcheck_collective_library is 'nccl': set "
        "one of them"]
    assert _check({"commcheck_checks": ["nccl"], "commcheck_collective_library": "hccl"})
    assert _check({"commcheck_checks": ["hccl"], "commcheck_collective_library": "hccl"}) == []
    assert _check({"commcheck_checks": ["nccl"], "commcheck_collective_library": "auto"}) == []


def test_inventory_names_are_hosts_even_when_they_are_not_dns_names():
    assert ro.check_values(ALL, {"commcheck_rdma_hosts": ["gpu node 1"]}, known_hosts=["gpu node 1"]) == []
    assert ro.check_values(ALL, {"commcheck_rdma_hosts": ["gpu node 1"]}, known_hosts=["n1"])
    assert ro.check_values(ALL, {"commcheck_rdma_hosts": ["-x"]}, known_hosts=["-x"])


def test_quarantine_node_names_follow_the_backend():
    assert _check({"commcheck_quarantine_hosts": ["Node_1"], "commcheck_quarantine_backend": "slurm"}) == []
    assert _check({"commcheck_quarantine_hosts": ["Node_1"]})
    assert _check({"commcheck_quarantine_hosts": ["Node_1"],
                   "commcheck_quarantine_node_names": {"Node_1": "node-1"}}) == []


def test_messages_name_every_bad_option_in_one_line():
    problems = _check({"commcheck_ib_port": 0, "commcheck_tcp_duration": 0})
    message = ro.message(problems)
    assert message == ("Bad option(s), nothing was run: commcheck_ib_port: 0 must be between 1 and 255; "
                       "commcheck_tcp_duration: 0 must be between 1 and 86400")
    assert "\n" not in ro.message(_check({"commcheck_report_dir": "a\nb"}))


def test_problems_of_some_hosts_name_them():
    merged = ro.merge_host_problems({"a": ["p1", "p2"], "b": ["p1"], "c": ["p1"]}, ["a", "b", "c"])
    assert merged == ["p1", "p2 (on a)"]
    many = dict(("h%d" % i, ["p"]) for i in range(8))
    many["z"] = []
    assert ro.merge_host_problems(many, sorted(many)) == ["p (on h0, h1, h2, h3, h4 and 3 more)"]
    assert ro.merge_host_problems({}, ["a"]) == []


def test_every_rule_describes_itself():
    for name, rule in ro.RULES.items():
        assert isinstance(getattr(rule, "describes", None), str) and rule.describes.strip(), name
        assert not re.search(r"\s{2}", rule.describes), name
