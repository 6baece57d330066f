# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one-click play (playbooks/commcheck.yml) end to end on the 4-host, 2-rail lab.

Real ansible-playbook over real SSH; the perftest EMULATOR moves real data
over the lab's shaped links, iperf3 and Open MPI's mpirun are real, the
collective binaries are the lab's nccl-tests / hccl_test EMULATORS. The
history comes from the commcheck_history callback, the report from the
report role.

Fast tier: one healthy run that several tests read (the ``healthy`` fixture):
the one-click job template launched as AWX launches it (its survey's
defaults as extra variables, with the answers the lab needs; see
test_awx_surveys.launch_vars), which is also what ``make demo`` runs: the
default checks, and no collective variable the lab's inventory does not
already have. It runs in the background so that the tests can see what it
does to the CPU governors while perftest and iperf3 run; the lab's first
host starts at ``performance`` already.

Full tier (``pytest.mark.full``), a run each:

- a mixed cluster: h1-h3 are GPU nodes (an EMULATOR nvidia-smi stub on their
  PATH) with RDMA; h4 has no RDMA device and no GPU. Every check runs where it
  can; h4's RDMA and collective checks are published as skipped with the
  reason, and the report and history have everything;
- the collective library is chosen by what the hosts have (auto: hccl_test
  only -> HCCL), and an asked-for library that is missing is skipped with
  the reason, not an error; no collective binary anywhere is skipped too;
- per-host devices and port; a TCP-only run that reads nothing of RDMA.

An unreachable host is asserted on the faulted run of test_accuracy_lab.py.
The healthy run takes about a minute on the 2-core build machine.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os
import signal
import time

import pytest

import oneclick_helpers as oc
from lab_checks import HEALTHY_VERDICTS, LAB_MIN_FRACTION, MEASURED_VERDICTS, scratch_dir
from test_awx_surveys import launch_vars, template_of

pytestmark = [pytest.mark.lab, pytest.mark.slow]

BAD_VERDICTS = ("fail", "error")


@pytest.fixture(scope="module")
def lab(lab4):
    return lab4


class HealthyRun(object):
    """The healthy one-click run and what was seen while it ran."""

    def __init__(self, run, extra_vars, tuned, seen, after, left):
        self.run = run
        self.extra_vars = extra_vars
        self.tuned = tuned          # the host that was at 'performance' before the run
        self.seen = seen            # {tool marker: (host, governors) read while that tool ran, or what failed}
        self.after = after          # {host: governors} after the run
        self.left = left            # test processes still running on a lab host after the run


def _watch(lab, proc, marker, hosts):
    try:
        return oc.governors_while_tool_runs(lab, proc, marker, hosts=hosts)
    except AssertionError as exc:      # the test that asserts on it says what went wrong
        return "not seen: %s" % exc


@pytest.fixture(scope="module")
def healthy(lab, tmp_path_factory):
    """The one-click job template's launch with its survey's defaults on the healthy lab, watched while it runs."""
    tmp = tmp_path_factory.mktemp("healthy")
    extra_vars = launch_vars(template_of("commcheck.yml"), str(tmp / "run" / "report"))
    tuned = lab.hosts[0]
    others = lab.hosts[1:]
    lab.heal()
    oc.set_governors(lab, ["performance"] * len(oc.GOVERNORS), hosts=[tuned])
    proc = None
    try:
        started = time.monotonic()
        proc, history, report = oc.start_oneclick(lab, tmp, extra_vars, name="run")
        seen = {"perftest_emulator": _watch(lab, proc, "perftest_emulator", others),
                "iperf3 -": _watch(lab, proc, "iperf3 -", others)}
        run = oc.finish(proc, history, report, started, timeout=900)
        after = dict((host, oc.governors(lab, host)) for host in lab.hosts)
        left = oc.wait_no_test_processes(lab, timeout=5)
    finally:
        if proc is not None and proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            proc.wait(timeout=60)
        oc.set_governors(lab, oc.GOVERNORS)
    return HealthyRun(run, extra_vars, tuned, seen, after, left)


def task_results(stdout, task):
    """The result words (ok, changed, skipping...) the hosts printed under the banner of task."""
    words, inside = set(), False
    for line in stdout.splitlines():
        if line.startswith("TASK ["):
            inside = line.split("]")[0].endswith(" : " + task) or line.split("]")[0] == "TASK [" + task
        elif inside and line[:1].isalpha() and ": [" in line:
            words.add(line.split(":")[0])
    return words


def assert_counters_pass(run, hosts, rails):
    """Every RDMA port's counters were compared with discovery's reading, and no error rose (the lab's NICs)."""
    counters = run.records("port_counters")
    assert sorted((r["host"], r["params"]["device"]) for r in counters) == sorted(
        (host, "mlx5_%d" % rail) for host in hosts for rail in range(rails)), counters
    assert all(r["verdict"] == "pass" for r in counters), counters


def assert_pipelined_rdma_and_tcp(stdout):
    """The one-click check runs the RDMA role's run.yml, without the role's own discovery step (not even a
    skipped task per host): discovery read the counters already. The RDMA and TCP results are the pipelined
    module runs' own: no per-host step keeps them."""
    assert "Discover RDMA ports and read the port counters before the tests" not in stdout
    assert task_results(stdout, "Run the rounds one after the other, or collect the tests from the background") \
        == {"skipping"}
    # the task of the shared task files (clusterops.commcheck.pair_perf, for RDMA and TCP alike), under any role
    assert ": Keep the results]" not in stdout
    assert "TASK [clusterops.commcheck.pair_perf : Run every round of this host]" in stdout


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


# ---------------------------------------------------------------- the healthy run (fast tier)

def test_demo_defaults_run_every_check_with_the_collective_found_by_its_pci_gpus(healthy, lab):
    """What `make demo` runs: the default checks and no collective variables beyond the lab's inventory.

    The lab's hosts have GPU PCI functions in their emulated sysfs and no driver or nvidia-smi: the
    collective runs on that evidence alone, through real mpirun, and the report charts its bus bandwidth.
    """
    run = healthy.run
    assert run.rc == 0, run.tail()
    # the launch answers no collective question beyond what the lab's inventory already says
    collective = dict((k, v) for k, v in healthy.extra_vars.items() if k.startswith("commcheck_collective_"))
    assert collective == {"commcheck_collective_library": "auto", "commcheck_collective_ops": ["all_reduce"]}, \
        collective
    assert "commcheck_require_accelerators" not in healthy.extra_vars
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
    assert not healthy.left, healthy.left


def test_one_click_job_template_launch_with_survey_defaults_is_healthy(healthy, lab):
    """The AWX one-click template's launch (test_awx_surveys.launch_vars) gets past every option check, runs
    every check and, on the healthy lab, judges it healthy: no failing or errored record."""
    run = healthy.run
    assert run.rc == 0, run.tail()
    assert not [r for r in run.records() if r["verdict"] in BAD_VERDICTS], [
        (r["kind"], r["host"], r["peer"], r["verdict"], r["cause"]) for r in run.records()
        if r["verdict"] in BAD_VERDICTS]
    assert run.summary()["verdict"] in HEALTHY_VERDICTS, run.summary()
    assert sorted(r["host"] for r in run.records("discover")) == sorted(lab.hosts)
    # the survey's pattern (ring) of 4 hosts: 4 pairs, on each of the lab's rails for RDMA
    for kind in ("rdma_bw", "rdma_lat"):
        assert len(run.records(kind)) == 4 * lab.rails, run.records(kind)
    assert all(r["verdict"] in HEALTHY_VERDICTS for r in run.records("rdma_bw") + run.records("tcp_bw"))
    assert all(r["metrics"]["bw_gbps"] > LAB_MIN_FRACTION * lab.rate_gbps
               for r in run.records("rdma_bw", verdict="pass"))
    # a latency is a real socket round trip here: judged, and at worst retested and flaky
    assert all(r["verdict"] in MEASURED_VERDICTS for r in run.records("rdma_lat"))
    assert len(run.records("tcp_bw")) == 4
    # auto: the lab hosts have nccl-tests (the emulator) in the lab's binary directory
    [pool] = [r for r in run.records("collective") if r["params"]["stage"] == "pool"]
    assert pool["params"]["library"] == "nccl" and sorted(pool["params"]["hosts"]) == sorted(lab.hosts), pool
    assert pool["verdict"] in HEALTHY_VERDICTS, (pool["verdict"], pool["cause"])
    assert_counters_pass(run, lab.hosts, lab.rails)
    directory, _results = oc.report_of(healthy.extra_vars["commcheck_report_dir"], run.run_id)
    assert os.path.isfile(os.path.join(directory, "report.html"))


def test_test_tools_hold_the_cpu_governor_in_their_own_module_runs_and_put_it_back(healthy, lab):
    """perftest and iperf3 hold commcheck_cpu_governor (default 'performance') while their tests run: every CPU
    of a testing host at 'performance', each put back after, and no module run of its own for the governor;
    the collective, whose ranks run on every host and mpirun on one, holds it with a module run before and one
    after on each host (test_collective_governor_lab.py); a host already at 'performance' stays there."""
    for marker, seen in sorted(healthy.seen.items()):
        assert isinstance(seen, tuple), (marker, seen)
        host, governors = seen
        assert host != healthy.tuned and governors == ["performance"] * len(oc.GOVERNORS), (marker, seen)
    assert healthy.after[healthy.tuned] == ["performance"] * len(oc.GOVERNORS)
    for other in lab.hosts:
        if other != healthy.tuned:
            assert healthy.after[other] == oc.GOVERNORS, other
    output = healthy.run.output
    # no module run of their own switches the governor for perftest and iperf3: the governor tasks are the
    # collective's hold (switched on every host but the tuned one, then put back) and the always-step that puts
    # back what a killed test module left, which on a healthy run finds nothing to put back
    governor_tasks = [line.split("]")[0].split(" : ")[-1] for line in output.splitlines()
                      if line.startswith("TASK [") and "CPU governor" in line]
    assert governor_tasks == ["Switch the CPU governor of the hosts of the collective check",
                              "Wait until every slice holds the CPU governor of its hosts",
                              "Put back the CPU governors of the hosts of the collective check",
                              "Put back the CPU governors a killed test module left"], governor_tasks
    switch, wait, put_back, leftovers = governor_tasks
    assert task_results(output, switch) == task_results(output, put_back) == {"ok", "changed"}
    assert task_results(output, wait) == {"ok"}
    assert task_results(output, leftovers) <= {"ok", "skipping"}
    # the pipelined test task of the shared task files, once for RDMA (perftest) and once for TCP (iperf3)
    assert output.count("TASK [clusterops.commcheck.pair_perf : Run every round of this host]") == 2
    assert task_results(output, "Run every round of this host") == {"ok"}


def test_rdma_and_tcp_results_are_the_pipelined_module_runs_own(healthy):
    assert_pipelined_rdma_and_tcp(healthy.run.stdout)


# ---------------------------------------------------------------- full tier: a run each

@pytest.mark.full
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
    # the port counters of every RDMA port (of the GPU hosts), and the pipelined module runs
    assert_counters_pass(run, gpu_hosts, lab.rails)
    assert_pipelined_rdma_and_tcp(run.stdout)

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


@pytest.mark.full
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


@pytest.mark.full
def test_no_collective_binary_anywhere_is_skipped_with_the_reason(lab, tmp_path):
    empty = scratch_dir("oneclick", "no-binaries")
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


@pytest.mark.full
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


@pytest.mark.full
def test_a_tcp_only_run_finds_its_tools_in_one_module_run_that_reads_nothing_of_rdma(lab, tmp_path):
    """Only TCP: the discovery module run looks for iperf3 and reads no RDMA device (rdma_facts
    devices=false), so hosts whose sysfs root is not there at all still run the TCP check."""
    run = oc.oneclick(lab, tmp_path, {"commcheck_checks": ["tcp"],
                                      "commcheck_sysfs_root": "/nonexistent/commcheck-no-sysfs"})
    assert run.rc == 0, run.tail()
    tcp = run.records("tcp_bw")
    assert {r["host"] for r in tcp} == set(lab.hosts) and all(r["verdict"] in HEALTHY_VERDICTS for r in tcp), tcp
    assert not [r for r in run.records() if r["verdict"] == "skipped"], run.records()
    # no RDMA device was read: the only finding is that the governor could not be held (no cpufreq there)
    assert run.records("discover") == []
    findings = run.records("finding")
    assert sorted((r["host"], r["params"]["code"]) for r in findings) == sorted(
        (host, "governor_unmanaged") for host in lab.hosts), findings
    assert all(r["verdict"] == "warn" for r in findings), findings
    assert "is not a directory" not in run.output
