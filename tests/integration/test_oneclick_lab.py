# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one-click play (playbooks/commcheck.yml) end to end on the 4-host, 2-rail lab.

Real ansible-playbook over real SSH; the perftest EMULATOR moves real data
over the lab's shaped links, iperf3 and Open MPI's mpirun are real, the
collective binaries are the lab's nccl-tests / hccl_test EMULATORS. The
history comes from the commcheck_history callback, the report from the
report role.

- a mixed cluster: h1-h3 are GPU nodes (an EMULATOR nvidia-smi stub on their
  PATH) with RDMA; h4 has no RDMA device and no GPU. Every check runs where it
  can; h4's RDMA and collective checks are published as skipped with the
  reason, and the report and history have everything;
- the collective library is chosen by what the hosts have (auto: hccl_test
  only -> HCCL), and an asked-for library that is missing is skipped with
  the reason, not an error;
- an unreachable host is reported, not fatal.

About 3-4 minutes on the 2-core build machine (the mixed run alone ~1.5 min).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os
import signal

import pytest

import oneclick_helpers as oc
from lab_checks import HEALTHY_VERDICTS, LAB_MIN_FRACTION, MEASURED_VERDICTS

pytestmark = [pytest.mark.lab, pytest.mark.slow]


@pytest.fixture(scope="module")
def lab(lab4):
    return lab4


def task_results(stdout, task):
    """The result words (ok, changed, skipping...) the hosts printed under the banner of task."""
    words, inside = set(), False
    for line in stdout.splitlines():
        if line.startswith("TASK ["):
            inside = line.split("]")[0].endswith(" : " + task) or line.split("]")[0] == "TASK [" + task
        elif inside and line[:1].isalpha() and ": [" in line:
            words.add(line.split(":")[0])
    return words


def host_results(stdout, task):
    """{host: result word} the hosts printed under the banner of task."""
    out, inside = {}, False
    for line in stdout.splitlines():
        if line.startswith("TASK ["):
            inside = line.split("]")[0].endswith(" : " + task)
        elif inside and line[:1].isalpha() and ": [" in line:
            out[line.split("[", 1)[1].split("]", 1)[0]] = line.split(":")[0]
    return out


def assert_report_matches_history(run):
    assert run.run_id, "history lines of more than one run: %s" % sorted(set(r["run_id"] for r in run.history))
    directory, results = oc.report_of(run.report_dir, run.run_id)
    for name in ("report.html", "report.md", "results.json", "junit.xml", "commcheck.prom"):
        assert os.path.getsize(os.path.join(directory, name)) > 0, name
    reported = sorted((r["kind"], r["host"], r.get("peer") or "", r["verdict"]) for r in results["records"])
    recorded = sorted((r["kind"], r["host"], r.get("peer") or "", r["verdict"])
                      for r in run.records() if r["kind"] != "regression")
    assert reported == recorded
    assert "report in %s" % os.path.join(directory, "report.html") in run.stdout
    return directory, results


def test_mixed_cluster_every_check_runs_where_it_can(lab, tmp_path):
    gpu = oc.gpu_stub_dir()
    overlay = {"all": {"hosts": {}}}
    for host in lab.hosts[:3]:
        env = lab.environment(host)
        env["PATH"] = gpu + ":" + env["PATH"]
        overlay["all"]["hosts"][host] = {"commcheck_environment": env}
    bare = lab.hosts[3]
    overlay["all"]["hosts"][bare] = {"commcheck_sysfs_root": oc.empty_sysfs("no-rdma")}
    extra = dict(oc.COLLECTIVE, commcheck_collective_binary_dir=oc.collective_bin("nccl"),
                 commcheck_collective_nic_rates_gbps=[lab.rate_gbps])
    run = oc.oneclick(lab, tmp_path, extra, overlay=overlay)
    assert run.rc == 0, run.tail()
    gpu_hosts = lab.hosts[:3]

    # discovery and preflight findings of every host
    assert sorted(r["host"] for r in run.records("discover")) == sorted(lab.hosts)
    assert [r["params"]["code"] for r in run.records("finding", host=bare) if r["verdict"] == "fail"] == [
        "no_rdma_devices"], run.records("finding", host=bare)

    # RDMA: a ring of the three RDMA hosts on both rails, bandwidth and latency
    for kind in ("rdma_bw", "rdma_lat"):
        measured = [r for r in run.records(kind) if r["verdict"] != "skipped"]
        assert len(measured) == 3 * lab.rails, measured
        assert {r["host"] for r in measured} | {r["peer"] for r in measured} == set(gpu_hosts)
        # a latency is a real socket round trip here: a busy machine can make one pair a fleet outlier, so
        # latency pairs must have run and been judged; bandwidth pairs must pass (or pass their retest)
        judged = HEALTHY_VERDICTS if kind == "rdma_bw" else MEASURED_VERDICTS
        assert all(r["verdict"] in judged for r in measured), [(r["host"], r["cause"]) for r in measured]
        skipped = run.records(kind, verdict="skipped")
        assert [r["host"] for r in skipped] == [bare]
        assert skipped[0]["cause"].startswith("no ACTIVE RDMA port found")
        assert skipped[0]["params"]["reason"] == "no_rdma" and skipped[0]["fix"]
    assert all(r["metrics"]["bw_gbps"] > LAB_MIN_FRACTION * lab.rate_gbps
               for r in run.records("rdma_bw", verdict="pass"))
    # the port counters of every RDMA port, compared with discovery's reading (no error rose in the lab)
    counters = run.records("port_counters")
    assert sorted((r["host"], r["params"]["device"]) for r in counters) == sorted(
        (host, "mlx5_%d" % rail) for host in gpu_hosts for rail in range(lab.rails)), counters
    assert all(r["verdict"] == "pass" for r in counters), counters
    # ... so the RDMA check did not read them again before its tests: the one-click check runs the
    # role's run.yml, without its own discovery step (not even a skipped task per host)
    assert "Discover RDMA ports and read the port counters before the tests" not in run.stdout
    # the RDMA and TCP results are the pipelined module runs' own: no per-host step keeps them
    assert task_results(run.stdout, "Run the rounds one after the other, or collect the tests from the background") \
        == {"skipping"}
    assert "TASK [clusterops.commcheck.rdma_perf : Keep the results]" not in run.stdout

    # collective: NCCL (auto: the first host has nccl-tests) on the GPU hosts, h4 skipped for want of a GPU
    runs = [r for r in run.records("collective") if r["verdict"] != "skipped"]
    assert len(runs) == 1 and runs[0]["verdict"] == "pass", runs
    assert runs[0]["params"]["library"] == "nccl" and sorted(runs[0]["params"]["hosts"]) == sorted(gpu_hosts)
    skipped = run.records("collective", verdict="skipped")
    assert [r["host"] for r in skipped] == [bare]
    assert skipped[0]["params"]["reason"] == "no_accelerator" and "no NVIDIA GPU" in skipped[0]["cause"]

    # TCP: every host (h4 has iperf3), a ring of four
    tcp = run.records("tcp_bw")
    assert len(tcp) == 4 and all(r["verdict"] in HEALTHY_VERDICTS for r in tcp), tcp

    summary = run.summary()
    assert summary["run_id"] == run.run_id
    _directory, results = assert_report_matches_history(run)
    assert results["summary"]["counts"].get("skipped") == 3
    assert not oc.wait_no_test_processes(lab, timeout=5)
    for host in lab.hosts:
        assert oc.governors(lab, host) == oc.GOVERNORS, host


def test_collective_library_follows_what_the_hosts_have(lab, tmp_path):
    if oc.mpi_missing():
        pytest.skip(oc.mpi_missing())
    extra = dict(oc.COLLECTIVE, commcheck_checks=["collective"], commcheck_require_accelerators=False,
                 commcheck_collective_binary_dir=oc.collective_bin("hccl"),
                 commcheck_collective_expected_busbw_gbs=0.001)
    run = oc.oneclick(lab, tmp_path, extra, name="auto")
    assert run.rc == 0, run.tail()
    records = run.records("collective")
    assert len(records) == 1 and records[0]["params"]["library"] == "hccl", records
    assert records[0]["verdict"] == "pass", records[0]["cause"]
    assert "collective (hccl) on %s" % ", ".join(lab.hosts) in run.stdout
    assert_report_matches_history(run)

    # asked for NCCL where only hccl_test is: skipped with the reason on every host, not an error
    extra["commcheck_checks"] = ["nccl"]
    run = oc.oneclick(lab, tmp_path, extra, name="nccl")
    assert run.rc == 0, run.tail()
    records = run.records("collective")
    assert sorted(r["host"] for r in records) == sorted(lab.hosts)
    assert all(r["verdict"] == "skipped" and r["params"]["reason"] == "tool_missing" for r in records)
    assert all("nccl-tests binary all_reduce_perf not found in %s" % extra["commcheck_collective_binary_dir"]
               in r["cause"] for r in records), records[0]["cause"]
    assert not oc.wait_no_test_processes(lab, timeout=5)


def test_no_collective_binary_anywhere_is_skipped_with_the_reason(lab, tmp_path):
    empty = os.path.join(oc.BUILD, "no-binaries")
    os.makedirs(empty, exist_ok=True)
    run = oc.oneclick(lab, tmp_path, {"commcheck_checks": ["discover", "collective"],
                                      "commcheck_collective_binary_dir": empty})
    assert run.rc == 0, run.tail()
    records = run.records("collective")
    assert sorted(r["host"] for r in records) == sorted(lab.hosts)
    for record in records:
        assert record["verdict"] == "skipped"
        assert record["cause"] == ("neither nccl-tests (all_reduce_perf) nor hccl_test (all_reduce_test) was found "
                                   "on any host in %s" % empty)
    assert len(run.records("discover")) == 4
    assert_report_matches_history(run)


def test_unreachable_host_is_reported_not_fatal(lab, tmp_path):
    # a host in the lab's subnet that does not exist
    base = lab.address(lab.hosts[0]).rsplit(".", 1)[0]
    overlay = {"lab": {"hosts": {"ghost": {"ansible_host": base + ".99",
                                           "commcheck_sysfs_root": oc.empty_sysfs("ghost")}}}}
    run = oc.oneclick(lab, tmp_path, {"commcheck_checks": ["discover", "tcp"]}, overlay=overlay)
    assert run.rc == 4, run.tail()            # ansible-playbook: some host unreachable
    lost = run.records("finding", host="ghost")
    assert len(lost) == 1 and lost[0]["verdict"] == "error", lost
    assert lost[0]["params"]["finding"] == "unreachable" and "ghost is unreachable" in lost[0]["cause"]
    tcp = run.records("tcp_bw")
    assert len(tcp) == 4 and {r["host"] for r in tcp} == set(lab.hosts), tcp
    assert all(r["verdict"] in HEALTHY_VERDICTS for r in tcp)
    summary = run.summary()
    assert summary["hosts"]["unreachable"] == ["ghost"] and sorted(summary["hosts"]["ok"]) == sorted(lab.hosts)
    _directory, results = assert_report_matches_history(run)
    assert "ghost" in results["summary"]["bad_hosts"] or any(
        r["host"] == "ghost" and r["verdict"] == "error" for r in results["records"])


def test_each_host_own_devices_and_port_are_what_it_tests_and_what_is_checked(lab, tmp_path):
    """commcheck_devices and commcheck_ib_port set per host (inventory) are that host's own: noted for all
    hosts in one run-once task, they must not become the first host's for everyone."""
    first, second = lab.hosts[0], lab.hosts[1]
    overlay = {"all": {"hosts": {first: {"commcheck_devices": ["mlx5_1"]},
                                 second: {"commcheck_devices": "mlx5_0", "commcheck_ib_port": 7}}}}
    run = oc.oneclick(lab, tmp_path, {"commcheck_checks": ["discover", "rdma"]}, overlay=overlay)
    assert run.rc != 0
    # only the second host's own port 7 is missing: the first host's device is there, the others ask for none
    assert "commcheck_devices: mlx5_0:7 not found on %s (its RDMA ports: " % second in run.stdout, run.tail()
    assert "not found on %s" % first not in run.stdout
    assert not run.records("rdma_bw")

    overlay = {"all": {"hosts": {first: {"commcheck_devices": ["mlx5_1"]}}}}
    run = oc.oneclick(lab, tmp_path, {"commcheck_checks": ["discover", "rdma"], "commcheck_rdma_metrics": ["bw"]},
                      overlay=overlay)
    assert run.rc == 0, run.tail()
    measured = run.records("rdma_bw")
    # the first host tests its one device, on rail 0; its ring pairs there pair it with the others' mlx5_0
    mine = [r for r in measured if first in (r["host"], r["peer"]) and r["verdict"] != "skipped"]
    assert mine and all(r["params"]["rail"] == 0 for r in mine), mine
    assert all((r["params"]["device"] if r["params"]["server"] == first else r["params"]["peer_device"]) == "mlx5_1"
               for r in mine), [(r["host"], r["peer"], r["params"]) for r in mine]


def test_a_tcp_only_run_finds_its_tools_in_one_module_run_that_reads_nothing_of_rdma(lab, tmp_path):
    """Only TCP: the discovery module run looks for iperf3 and reads no RDMA device (rdma_facts
    devices=false), so hosts whose sysfs root is not there at all still run the TCP check."""
    run = oc.oneclick(lab, tmp_path, {"commcheck_checks": ["tcp"],
                                      "commcheck_sysfs_root": "/nonexistent/commcheck-no-sysfs"})
    assert run.rc == 0, run.tail()
    tcp = run.records("tcp_bw")
    assert {r["host"] for r in tcp} == set(lab.hosts) and all(r["verdict"] in HEALTHY_VERDICTS for r in tcp), tcp
    assert not [r for r in run.records() if r["verdict"] == "skipped"], run.records()
    assert run.records("discover") == [] and run.records("finding") == []
    assert "is not a directory" not in run.output


def test_tcp_tests_hold_the_governor_in_their_own_module_run_and_put_it_back(lab, tmp_path):
    """The iperf3 module holds commcheck_cpu_governor while its tests run, as perftest does: every CPU of a
    testing host at 'performance', each put back after, and no module run of its own for the governor; a
    host already at 'performance' stays there."""
    tuned = lab.hosts[0]
    oc.set_governors(lab, ["performance"] * len(oc.GOVERNORS), hosts=[tuned])
    proc = None
    try:
        proc, _history, _report = oc.start_oneclick(lab, tmp_path, {"commcheck_checks": ["discover", "tcp"]},
                                                    name="tcpgov")
        host, seen = oc.governors_while_tool_runs(lab, proc, "iperf3 -")
        assert seen == ["performance"] * len(oc.GOVERNORS), host
        assert proc.wait(timeout=600) == 0, open(proc.log_path).read()[-4000:]
        output = open(proc.log_path).read()
        assert oc.governors(lab, tuned) == ["performance"] * len(oc.GOVERNORS)
        for other in lab.hosts[1:]:
            assert oc.governors(lab, other) == oc.GOVERNORS, other
    finally:
        if proc is not None and proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            proc.wait(timeout=60)
        oc.set_governors(lab, oc.GOVERNORS)
    assert "CPU governor" not in "".join(line for line in output.splitlines(True) if line.startswith("TASK ["))
    assert task_results(output, "Run every round of this host (TCP)") == {"ok"}


def test_demo_defaults_run_every_check_with_the_collective_found_by_its_pci_gpus(lab, tmp_path):
    """What `make demo` runs: the default checks and no collective variables beyond the lab's inventory.

    The lab's hosts have GPU PCI functions in their emulated sysfs and no driver or nvidia-smi: the
    collective runs on that evidence alone, through real mpirun, and the report charts its bus bandwidth.
    """
    if oc.mpi_missing():
        pytest.skip(oc.mpi_missing())
    lab.heal()
    run = oc.oneclick(lab, tmp_path, {}, name="demo")
    assert run.rc == 0, run.tail()
    for kind in ("discover", "rdma_bw", "rdma_lat", "collective", "tcp_bw"):
        records = run.records(kind)
        assert records and not [r for r in records if r["verdict"] == "skipped"], (kind, records)
    runs = run.records("collective")
    assert len(runs) == 1 and runs[0]["verdict"] == "pass", runs
    assert runs[0]["params"]["library"] == "nccl" and sorted(runs[0]["params"]["hosts"]) == sorted(lab.hosts)
    assert runs[0]["metrics"]["busbw_gbs"] > 0
    assert "collective (nccl) on %s" % ", ".join(lab.hosts) in run.stdout
    directory, _results = assert_report_matches_history(run)
    with open(os.path.join(directory, "report.html")) as handle:
        assert 'class="busbw"' in handle.read()
    assert not oc.wait_no_test_processes(lab, timeout=5)
