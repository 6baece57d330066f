# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the one-click check runs and where (module_utils/planning/check_plan.py, and the probe keys filter)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.clusterops.commcheck.plugins.filter.commcheck_probe_keys import commcheck_probe_keys
from ansible_collections.clusterops.commcheck.plugins.module_utils.planning import check_plan as cp

ALL = cp.plan_checks(["discover", "rdma", "collective", "tcp"], "auto", ["all_reduce"], ["write"], ["bw", "lat"])
RDMA_FACTS = {"summary": {"active_ports": 2, "devices": 2, "ports": 2}, "host": {}}
GPU_PCI = {"summary": {"active_ports": 1, "devices": 1, "ports": 1},
           "host": {"gpus": {"evidence": ["1 NVIDIA PCI GPU function(s)"], "found_by": ["pci"]}}}


def probe(*keys, **kwargs):
    out = {"rc": 0, "stdout_lines": ["%s\t/found/%s" % (key, key.split(":", 1)[1]) for key in keys], "stderr": ""}
    out.update(kwargs)
    return out


EVERYTHING = probe("cmd:ib_write_bw", "cmd:ib_write_lat", "cmd:iperf3", "cmd:mpirun", "cmd:all_reduce_perf",
                   "cmd:nvidia-smi")


def test_the_plan_of_a_survey_string_and_of_a_library_named_as_a_check():
    plan = cp.plan_checks("discover, tcp,nccl", library="auto", collective_ops="all_reduce,all_gather",
                          rdma_ops=[], rdma_metrics="bw")
    assert plan == {"checks": ["discover", "tcp", "nccl"], "discover": True, "rdma": False, "tcp": True,
                    "collective": True, "library": "nccl", "collective_ops": ["all_reduce", "all_gather"],
                    "rdma_ops": [], "rdma_metrics": ["bw"], "need_facts": True}
    assert cp.plan_checks(["tcp"])["need_facts"] is False
    assert cp.plan_checks(["hccl"], library="nccl")["library"] == "hccl"
    assert cp.plan_checks(["collective"], library="hccl")["library"] == "hccl"


def test_the_probe_keys_in_order_each_once():
    keys = commcheck_probe_keys(ALL, binary_dir="/opt/tests//")
    assert keys == ["cmd:ib_write_bw", "cmd:ib_write_lat", "cmd:iperf3", "cmd:mpirun",
                    "cmd:/opt/tests/all_reduce_perf", "exists:/proc/driver/nvidia/version", "exists:/dev/nvidiactl",
                    "cmd:nvidia-smi", "cmd:/opt/tests/all_reduce_test", "exists:/dev/davinci_manager", "cmd:npu-smi"]
    hccl = cp.plan_checks(["hccl"], collective_ops=["all_reduce", "hypercube", "alltoallv"])
    assert cp.probe_keys(hccl, mpirun="/opt/mpi/bin/mpirun") == [
        "cmd:/opt/mpi/bin/mpirun", "cmd:all_reduce_test", "cmd:alltoallv_test", "exists:/dev/davinci_manager",
        "cmd:npu-smi"]
    assert cp.probe_keys(cp.plan_checks(["rdma"], rdma_ops=["read", "read"], rdma_metrics=["bw"])) == ["cmd:ib_read_bw"]


def test_a_host_with_everything_can_run_every_check():
    status = cp.host_status(ALL, EVERYTHING, GPU_PCI)
    assert status["rdma"] is None and status["tcp"] is None
    assert status["tools"]["cmd:iperf3"] == "/found/iperf3"
    nccl = status["collective"]["nccl"]
    assert nccl == {"has_binaries": True, "reason": None, "evidence": ["nvidia-smi", "1 NVIDIA PCI GPU function(s)"],
                    "found_by": ["smi", "pci"], "pci_only": False}
    assert status["collective"]["hccl"]["has_binaries"] is False
    assert status["collective"]["hccl"]["reason"]["cause"] == "hccl_test binary all_reduce_test not found on PATH"


def test_a_failed_probe_is_the_reason_of_every_check():
    status = cp.host_status(ALL, probe(rc=127, stderr="warning\nsh: not found\n"), RDMA_FACTS)
    cause = "could not look for the test tools (rc 127): sh: not found"
    assert status["rdma"] == status["tcp"] == {"code": "probe_failed", "cause": cause, "fix": cp.PROBE_FIX}
    assert status["collective"]["nccl"]["reason"]["code"] == "probe_failed"
    assert status["collective"]["nccl"]["has_binaries"] is False


def test_rdma_without_an_active_port_then_without_its_tools():
    no_port = cp.host_status(ALL, EVERYTHING, {"summary": {"active_ports": 0, "devices": 1, "ports": 2}})
    assert no_port["rdma"]["code"] == "no_rdma"
    assert no_port["rdma"]["cause"] == "no ACTIVE RDMA port found (1 device(s), 2 port(s))"
    assert cp.host_status(ALL, EVERYTHING, {})["rdma"]["cause"] == "no ACTIVE RDMA port found (0 device(s), 0 port(s))"
    missing = cp.host_status(ALL, probe("cmd:ib_write_bw", "cmd:iperf3"), RDMA_FACTS)
    assert missing["rdma"] == {"code": "tool_missing", "cause": "perftest tool(s) ib_write_lat not found on PATH",
                               "fix": "install perftest (apt install perftest / dnf install perftest) or put its "
                                      "directory on PATH"}
    assert cp.host_status(ALL, probe("cmd:ib_write_bw"), RDMA_FACTS)["tcp"]["cause"] == "iperf3 not found on PATH"


def test_the_reasons_of_the_collective_in_order():
    plan = cp.plan_checks(["nccl"], collective_ops=["all_reduce", "alltoallv"])
    status = cp.host_status(plan, EVERYTHING, GPU_PCI, binary_dir="/opt/t/")
    assert status["collective"]["nccl"]["reason"]["cause"] == (
        "nccl-tests binary all_reduce_perf, alltoallv (no NCCL test for it) not found in /opt/t")
    plan = cp.plan_checks(["nccl"], collective_ops=["all_reduce"])
    no_mpirun = cp.host_status(plan, probe("cmd:all_reduce_perf"), GPU_PCI, mpirun="/opt/mpi/mpirun")
    assert no_mpirun["collective"]["nccl"]["reason"]["cause"] == "/opt/mpi/mpirun (MPI launcher) not found on PATH"
    no_gpu = cp.host_status(plan, probe("cmd:all_reduce_perf", "cmd:mpirun"), RDMA_FACTS)
    assert no_gpu["collective"]["nccl"]["reason"]["code"] == "no_accelerator"
    assert no_gpu["collective"]["nccl"]["has_binaries"] is True
    cpu_build = cp.host_status(plan, probe("cmd:all_reduce_perf", "cmd:mpirun"), RDMA_FACTS, require_accelerators=False)
    assert cpu_build["collective"]["nccl"]["reason"] is None
    pci_only = cp.host_status(plan, probe("cmd:all_reduce_perf", "cmd:mpirun"), GPU_PCI)["collective"]["nccl"]
    assert pci_only["reason"] is None and pci_only["pci_only"] is True and pci_only["found_by"] == ["pci"]
    hccl = cp.plan_checks(["hccl"], collective_ops=["all_reduce"])
    npu = cp.host_status(hccl, probe("cmd:all_reduce_test", "cmd:mpirun", "exists:/dev/davinci_manager"), {})
    assert npu["collective"]["hccl"]["found_by"] == ["device nodes"]
    assert npu["collective"]["hccl"]["evidence"] == ["/dev/davinci_manager"]


def _hosts(*items):
    return list(items)


def decision_of(hosts, plan, binary_dir=""):
    """check_plan.decide over hosts given as (host, probe, facts), each with the run's tools."""
    return cp.decide(plan, [(host, cp.host_status(plan, found, facts, binary_dir)) for host, found, facts in hosts],
                     binary_dir)


def test_auto_takes_the_library_of_the_first_host_that_has_one_and_skips_the_others_with_the_reason():
    hccl_only = probe("cmd:ib_write_bw", "cmd:ib_write_lat", "cmd:iperf3", "cmd:mpirun", "cmd:all_reduce_test",
                      "cmd:npu-smi")
    decision = decision_of(
        _hosts(("n1", probe("cmd:iperf3"), {}), ("n2", EVERYTHING, GPU_PCI), ("n3", hccl_only, RDMA_FACTS)), ALL)
    assert decision["library"] == "nccl" and decision["library_chosen_by"] == "n2"
    assert decision["collective_hosts"] == ["n2"]
    assert decision["rdma_hosts"] == ["n2", "n3"] and decision["tcp_hosts"] == ["n1", "n2", "n3"]
    skipped = [(r["kind"], r["host"], r["params"]["reason"]) for r in decision["records"]]
    assert skipped == [("rdma_bw", "n1", "no_rdma"), ("rdma_lat", "n1", "no_rdma"),
                       ("collective", "n1", "tool_missing"), ("collective", "n3", "tool_missing")]
    record = decision["records"][0]
    assert record["verdict"] == "skipped" and record["peer"] is None and record["metrics"] == {}
    assert record["params"] == {"check": "rdma", "ops": ["write"], "reason": "no_rdma"}
    assert decision["records"][3]["params"] == {"check": "collective", "library": "nccl",
                                                "operations": ["all_reduce"], "reason": "tool_missing"}


def test_a_pair_check_one_host_can_run_is_skipped_there_too():
    decision = cp.decide(ALL, [("n1", cp.host_status(ALL, EVERYTHING, GPU_PCI)),
                               ("n2", cp.host_status(ALL, probe(), {}))])
    assert decision["rdma_hosts"] == [] and decision["tcp_hosts"] == []
    alone = [r for r in decision["records"] if r["host"] == "n1"]
    assert [(r["kind"], r["params"]["reason"]) for r in alone] == [
        ("rdma_bw", "no_peer"), ("rdma_lat", "no_peer"), ("tcp_bw", "no_peer")]
    assert alone[0]["cause"] == "no other host can run the RDMA check with n1 (a pair needs two hosts)"
    assert alone[2]["cause"] == "no other host can run the TCP check with n1 (a pair needs two hosts)"


def test_no_library_anywhere_skips_the_collective_on_every_host():
    plan = cp.plan_checks(["collective"], collective_ops=["all_reduce", "hypercube"])
    decision = decision_of(_hosts(("n1", probe("cmd:mpirun"), {}), ("n2", probe(), {})), plan, binary_dir="/opt/none")
    assert decision["library"] is None and decision["collective_hosts"] == []
    assert [r["host"] for r in decision["records"]] == ["n1", "n2"]
    assert decision["records"][0]["cause"] == ("neither nccl-tests (all_reduce_perf, hypercube_perf) nor hccl_test "
                                               "(all_reduce_test) was found on any host in /opt/none")
    assert decision["records"][0]["params"]["library"] is None


def test_a_library_asked_for_is_taken_as_is():
    plan = cp.plan_checks(["hccl"], collective_ops=["all_reduce"])
    decision = cp.decide(plan, [("n1", cp.host_status(plan, EVERYTHING, GPU_PCI))])
    assert decision["library"] == "hccl" and decision["library_chosen_by"] is None
    assert decision["records"][0]["cause"] == "hccl_test binary all_reduce_test not found on PATH"


def test_each_host_may_have_its_own_binary_directory_launcher_and_accelerator_rule():
    plan = cp.plan_checks(["nccl"], collective_ops=["all_reduce"])
    has = probe("cmd:/opt/t/all_reduce_perf", "cmd:/opt/mpi/mpirun")
    statuses = [("n1", cp.host_status(plan, has, {}, "/opt/t", "/opt/mpi/mpirun", False)),
                ("n2", cp.host_status(plan, has, {}, "/elsewhere", "/opt/mpi/mpirun", False)),
                ("n3", cp.host_status(plan, has, {}, "/opt/t", "mpiexec", False)),
                ("n4", cp.host_status(plan, has, {}, "/opt/t", "/opt/mpi/mpirun"))]
    decision = cp.decide(plan, statuses, "/opt/t")
    assert decision["collective_hosts"] == ["n1"]
    causes = dict((r["host"], r["cause"]) for r in decision["records"])
    assert causes == {"n2": "nccl-tests binary all_reduce_perf not found in /elsewhere",
                      "n3": "mpiexec (MPI launcher) not found on PATH",
                      "n4": causes["n4"]}
    assert causes["n4"].startswith("no NVIDIA GPU found")
