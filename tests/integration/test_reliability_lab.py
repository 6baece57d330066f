# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Reliability of the one-click play (issue 8, part 5).

- hostile option values (shell metacharacters, path traversal, huge numbers,
  unknown devices; 36 of them): a clear error naming the option and nothing
  run -- no test tool started (tripwire stand-ins on PATH record any start),
  no check record in the history, no report. These run on two local
  (connection=local) hosts with emulated sysfs trees and need no root.
- on the lab (4 hosts, real ssh):
  - a perftest server whose client never comes is bounded by its timeout;
  - an interrupted run (SIGINT to ansible-playbook while perftest runs, at the
    performance governor) leaves no test process on any host and the CPU
    governors as they were (the perftest module holds the governor only while
    its tests run and restores it when they end);
  - two one-click runs at once (on different hosts, one history directory):
    both histories complete and valid;
  - a host killed mid-run (all its sshd processes stopped): the run completes,
    the host is reported unreachable, every other result is kept in the
    report and the history.

Fast tier: one hostile value of each kind (FAST_CASES), the nccl playbook's
hostile hosts and the good values; the server bounded by a deadline of a few
seconds; the interrupted run. Full tier (``pytest.mark.full``): the other
hostile values, the two runs at once and the host killed mid-run. Run time
on the 2-core build machine: hostile values about 1 minute for all of them
(3 runs at a time), about 15 s for the fast tier's; the lab tests about 4
minutes, the fast tier's about 40 s.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import concurrent.futures
import json
import os
import signal
import subprocess
import time

import pytest

import oneclick_helpers as oc
from lab_checks import HEALTHY_VERDICTS, assert_nothing_left, read_history, scratch_dir, write_executable

COLLECTIONS = os.path.join(oc.REPO, ".build", "collections")
ANSIBLE_PLAYBOOK = os.path.join(oc.REPO, ".venv", "bin", "ansible-playbook")
TRIPWIRE_TOOLS = ("ib_write_bw", "ib_write_lat", "ib_read_bw", "ib_read_lat", "ib_send_bw", "iperf3", "mpirun",
                  "all_reduce_perf", "all_reduce_test", "kubectl")

# (id, extra vars, what the error must say: a fragment, or a tuple of fragments that must all be there)
HOSTILE = [
    # wrong types and unknown choices (argument specs)
    ("port-not-a-number", {"commcheck_ib_port": "one"}, "commcheck_ib_port"),
    ("unknown-check", {"commcheck_checks": ["discover", "format_disk"]}, "commcheck_checks"),
    ("unknown-pattern", {"commcheck_pattern": "everything"}, "commcheck_pattern"),
    ("op-with-command", {"commcheck_rdma_ops": ["write;reboot"]}, "commcheck_rdma_ops"),
    ("duration-with-command", {"commcheck_rdma_duration": "5; rm -rf /"}, "commcheck_rdma_duration"),
    ("unknown-report-format", {"commcheck_report_formats": ["html", "exe"]}, "commcheck_report_formats"),
    # shell metacharacters
    ("device-semicolon", {"commcheck_devices": ["mlx5_0;reboot"]}, "'mlx5_0;reboot' is not an RDMA device name"),
    ("device-subshell", {"commcheck_devices": ["$(reboot)"]}, "'$(reboot)' is not an RDMA device name"),
    ("device-backticks-survey-string", {"commcheck_devices": "mlx5_0,`id`"}, "'`id`' is not an RDMA device name"),
    ("collective-pipe", {"commcheck_collective_ops": ["all_reduce|id"]}, "'all_reduce|id' is not a collective"),
    ("rdma-extra-args-and", {"commcheck_rdma_extra_args": ["-F", "x && reboot"]}, "commcheck_rdma_extra_args"),
    ("tcp-extra-args-semicolon", {"commcheck_tcp_extra_args": ["--logfile=/etc/passwd;"]},
     "commcheck_tcp_extra_args"),
    ("env-ld-preload", {"commcheck_collective_env": {"LD_PRELOAD": "/tmp/evil.so"}}, "'LD_PRELOAD' is not allowed"),
    ("env-newline", {"commcheck_collective_env": {"NCCL_DEBUG": "INFO\nrm -rf /"}},
     ("commcheck_collective_env: ", "NCCL_DEBUG", "contains a control character")),
    ("mca-key-command", {"commcheck_mpi_mca": {"plm_rsh_agent; id": "ssh"}}, "'plm_rsh_agent; id'"),
    ("environment-name", {"commcheck_environment": {"PATH;id": "/bin"}}, "commcheck_environment"),
    ("governor-command", {"commcheck_cpu_governor": "performance;reboot"}, "commcheck_cpu_governor"),
    ("kubectl-pod", {"commcheck_transport": "kubectl", "commcheck_kubectl": {"pod": "p;rm -rf /"}},
     "commcheck_kubectl.pod"),
    # path traversal
    ("run-id-traversal", {"commcheck_run_id": "../../etc/cron.d/x"}, "commcheck_run_id"),
    ("binary-dir-traversal", {"commcheck_collective_binary_dir": "/opt/nccl/../../../bin"},
     "commcheck_collective_binary_dir: '/opt/nccl/../../../bin' must not contain '..'"),
    ("sysfs-traversal", {"commcheck_sysfs_root": "/sys/../../etc"},
     "commcheck_sysfs_root: '/sys/../../etc' must not contain '..'"),
    ("mpirun-traversal", {"commcheck_collective_mpirun": "../../bin/sh"}, "commcheck_collective_mpirun"),
    ("device-traversal", {"commcheck_devices": ["../../mlx5_0"]}, "is not an RDMA device name"),
    ("report-dir-newline", {"commcheck_report_dir": "/tmp/report\n/etc"}, "contains a control character"),
    ("history-dir-tab", {"commcheck_history_dir": "/tmp/h\tx"}, "contains a control character"),
    # huge (and impossible) numbers
    ("port-huge", {"commcheck_ib_port": 99999999999999999999}, "commcheck_ib_port"),
    ("gpus-huge", {"commcheck_gpus_per_node": 1000000000},
     "commcheck_gpus_per_node: 1000000000 must be between 1 and 1024"),
    ("gpus-negative", {"commcheck_gpus_per_node": -8}, "commcheck_gpus_per_node: -8 must be between 1 and 1024"),
    ("duration-huge", {"commcheck_rdma_duration": 10 ** 12}, "commcheck_rdma_duration"),
    ("tcp-duration-zero", {"commcheck_tcp_duration": 0}, "commcheck_tcp_duration: 0 must be between 1 and"),
    ("size-huge", {"commcheck_collective_max_bytes": "99999999999G"}, "commcheck_collective_max_bytes"),
    ("fraction-huge", {"commcheck_min_fraction": 1e308}, "commcheck_min_fraction"),
    ("port-number-huge", {"commcheck_rdma_base_port": 70000}, "commcheck_rdma_base_port"),
    # unknown devices (checked against discovery before any test)
    ("unknown-device", {"commcheck_devices": ["mlx5_9"]}, "commcheck_devices: mlx5_9:1 not found on n1"),
    ("unknown-port", {"commcheck_devices": ["mlx5_0:7"]}, "commcheck_devices: mlx5_0:7 not found on n1"),
    ("unknown-device-dict", {"commcheck_devices": [{"device": "mlx5_7", "port": 1}]}, "mlx5_7:1 not found"),
]
# The fast tier refuses one value of each kind above; the full tier the rest.
FAST_CASES = ("unknown-pattern", "duration-with-command", "device-subshell", "env-ld-preload", "binary-dir-traversal",
              "gpus-huge", "unknown-device")
HOSTILE_FAST = [c for c in HOSTILE if c[0] in FAST_CASES]
HOSTILE_FULL = [c for c in HOSTILE if c[0] not in FAST_CASES]


# ---------------------------------------------------------------- hostile values (no root needed)

@pytest.fixture(scope="module")
def local_hosts(tmp_path_factory):
    """Two connection=local hosts with emulated sysfs (one RDMA device each) and tripwire tools."""
    import sysfs_tree  # pylint: disable=import-outside-toplevel
    base = tmp_path_factory.mktemp("hostile")
    tripwire = base / "tripwire"
    tripwire.mkdir()
    for tool in TRIPWIRE_TOOLS:
        path = tripwire / tool
        path.write_text("#!/bin/sh\n# TRIPWIRE stand-in: records that %s was started, which a bad option must "
                        "prevent\ntouch '%s/ran-%s'\nexit 1\n" % (tool, tripwire, tool))
        path.chmod(0o755)
    hosts = {}
    for num, name in enumerate(("n1", "n2")):
        root = str(base / ("sysfs-" + name))
        sysfs_tree.build_sysfs(root, [{"name": "mlx5_0", "ports": [{
            "port": 1, "state": "ACTIVE", "phys_state": "LinkUp", "rate_gbps": 100, "link_layer": "Ethernet",
            "netdev": "eth9%d" % num, "ipv4": "192.0.2.%d" % (10 + num)}]}],
            cpus=list(oc.GOVERNORS), modules={"ib_core": {}, "mlx5_ib": {}}, net={"eth9%d" % num: {"operstate": "up"}})
        hosts[name] = {"ansible_connection": "local", "ansible_python_interpreter": oc.PYTHON,
                       "commcheck_sysfs_root": root,
                       "commcheck_environment": {"PATH": "%s:/usr/bin:/bin" % tripwire}}
    inventory = base / "inventory.json"
    inventory.write_text(json.dumps({"all": {"hosts": hosts}}))
    return {"base": base, "inventory": str(inventory), "tripwire": tripwire}


def _run_hostile(local, case_id, extra, playbook=oc.PLAYBOOK):
    work = local["base"] / case_id
    work.mkdir()
    history = work / "history"
    report = work / "report"
    # n1 and n2 are both this machine, and the cases run three at a time: each case a run lock of its own
    variables = dict(oc.FAST, commcheck_report_dir=str(report), commcheck_lock_dir=str(work / "lock"))
    variables.update(extra)
    varfile = work / "vars.json"
    varfile.write_text(json.dumps(variables))
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=COLLECTIONS, ANSIBLE_NOCOLOR="1",
               ANSIBLE_CALLBACKS_ENABLED="clusterops.commcheck.commcheck_history",
               COMMCHECK_HISTORY_DIR=str(history), COMMCHECK_HISTORY_FSYNC="false",
               ANSIBLE_LOCALHOST_WARNING="false", ANSIBLE_HOST_KEY_CHECKING="false")
    env.pop("ANSIBLE_CONFIG", None)
    started = time.monotonic()
    proc = subprocess.run([ANSIBLE_PLAYBOOK, "-i", local["inventory"], "-e", "@" + str(varfile), playbook],
                          cwd=oc.REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, timeout=300, check=False)
    return {"proc": proc, "history": read_history(history), "report": report,
            "elapsed": time.monotonic() - started}


def _run_all(local, cases):
    """Every case, run three at a time: {case id: what _run_hostile returns}."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=3) as pool:
        futures = dict((case_id, pool.submit(_run_hostile, local, case_id, extra)) for case_id, extra, _expected in cases)
        return dict((case_id, future.result()) for case_id, future in futures.items())


@pytest.fixture(scope="module")
def hostile_runs(local_hosts):
    return _run_all(local_hosts, HOSTILE_FAST)


@pytest.fixture(scope="module")
def more_hostile_runs(local_hosts):
    return _run_all(local_hosts, HOSTILE_FULL)


def test_there_are_at_least_30_hostile_values():
    assert len(HOSTILE) >= 30 and len(set(c[0] for c in HOSTILE)) == len(HOSTILE)
    # the fast tier's cases: one of each kind, all of them hostile values of this list
    assert sorted(c[0] for c in HOSTILE_FAST) == sorted(FAST_CASES)


@pytest.mark.parametrize("case_id,extra,expected", HOSTILE_FAST, ids=[c[0] for c in HOSTILE_FAST])
def test_hostile_value_is_refused_before_anything_runs(hostile_runs, local_hosts, case_id, extra, expected):
    assert_refused_before_anything_runs(hostile_runs[case_id], local_hosts, case_id, expected)


@pytest.mark.full
@pytest.mark.parametrize("case_id,extra,expected", HOSTILE_FULL, ids=[c[0] for c in HOSTILE_FULL])
def test_more_hostile_values_are_refused_before_anything_runs(more_hostile_runs, local_hosts, case_id, extra,
                                                              expected):
    assert_refused_before_anything_runs(more_hostile_runs[case_id], local_hosts, case_id, expected)


def assert_refused_before_anything_runs(run, local_hosts, case_id, expected):
    out = run["proc"].stdout
    assert run["proc"].returncode == 2, out[-4000:]
    for fragment in expected if isinstance(expected, tuple) else (expected,):
        assert fragment in out, out[-4000:]
    # nothing ran: no tool started, no check result, no report
    assert not sorted(p.name for p in local_hosts["tripwire"].glob("ran-*")), case_id
    assert [r for r in run["history"] if r.get("kind") != "summary"] == []
    assert not run["report"].exists()
    assert "Run every pair" not in out and "Look for the test tools" not in out


def test_nccl_playbook_refuses_hostile_hosts(local_hosts):
    """The collective role alone (playbooks/nccl.yml) names the bad option instead of failing inside a template."""
    run = _run_hostile(local_hosts, "nccl-hosts-flag", {"commcheck_collective_hosts": ["--help"]},
                       playbook="playbooks/nccl.yml")
    out = run["proc"].stdout
    assert run["proc"].returncode == 2, out[-4000:]
    assert "Bad option(s), nothing was run: commcheck_collective_hosts[0]: '--help' must not start with '-'" in out, \
        out[-4000:]
    assert "Task failed: ansible._internal" not in out and "has no element" not in out
    assert not sorted(p.name for p in local_hosts["tripwire"].glob("ran-*"))
    assert [r for r in run["history"] if r.get("kind") != "summary"] == []


def test_good_values_pass_the_same_checks(local_hosts):
    """The checks themselves can pass: the same hosts with sane values get to the measurements."""
    run = _run_hostile(local_hosts, "sane", {"commcheck_checks": ["discover"], "commcheck_devices": ["mlx5_0"],
                                             "commcheck_collective_env": {"NCCL_DEBUG": "WARN"},
                                             "commcheck_run_id": "sane-1"})
    out = run["proc"].stdout
    assert run["proc"].returncode == 0, out[-4000:]
    assert sorted(r["host"] for r in run["history"] if r["kind"] == "discover") == ["n1", "n2"]
    assert os.path.isfile(os.path.join(str(run["report"]), "sane-1", "report.html"))


# ---------------------------------------------------------------- lab

@pytest.fixture(scope="module")
def lab(lab_factory):
    return lab_factory("ocrel", hosts=4, rails=1)


def _hung_client_dir():
    path = scratch_dir("reliability", "hung-client")
    write_executable(os.path.join(path, "ib_write_bw"),
                     "#!/bin/sh\n# HUNG CLIENT stand-in (commcheck lab): never connects to its server\nexec sleep 3600\n")
    return path


def test_server_whose_client_never_comes_is_bounded(lab, tmp_path):
    # the product's own deadline is what is under test: short, so that the test does not wait long for it
    deadline = oc.FAST["commcheck_rdma_duration"] + 1
    server, client = lab.hosts[0], lab.hosts[1]
    env = lab.environment(client)
    env["PATH"] = _hung_client_dir() + ":" + env["PATH"]
    overlay = {"all": {"hosts": {client: {"commcheck_environment": env}}}}
    run = oc.oneclick(lab, tmp_path, {
        "commcheck_checks": ["rdma"], "commcheck_pattern": "pairs", "commcheck_rdma_pairs": [[server, client]],
        "commcheck_rdma_metrics": ["bw"], "commcheck_rdma_timeout": deadline, "commcheck_cpu_governor": ""},
        overlay=overlay)
    assert run.rc == 0, run.tail()
    records = run.records("rdma_bw")
    assert len(records) >= 1 and all(r["verdict"] == "error" for r in records), records
    assert {r["host"] for r in records} | {r["peer"] for r in records} == {server, client}
    # both sides stopped at their deadline, not after the hour the client sleeps: 10x that plus ansible's own
    # time on a busy machine
    assert run.elapsed < 10 * deadline + 300, run.elapsed
    assert not oc.wait_no_test_processes(lab, timeout=5)
    assert not [p for p in lab.pids() if "sleep" in " ".join(p["cmdline"])]


def test_interrupted_run_leaves_no_process_and_restores_governors(lab, tmp_path):
    proc, history, report = oc.start_oneclick(lab, tmp_path, {
        "commcheck_checks": ["rdma", "tcp"], "commcheck_rdma_duration": 3, "commcheck_rdma_timeout": 20},
        name="interrupted")
    try:
        # while perftest runs, its host runs at the performance governor (commcheck_cpu_governor's default)
        host, seen = oc.governors_while_tool_runs(lab, proc, "perftest_emulator")
        assert seen == ["performance"] * len(oc.GOVERNORS), host
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=60)
        assert proc.returncode == 99, open(proc.log_path).read()[-3000:]     # "User interrupted execution"
        # the modules notice that nobody waits for them: they stop their tests, restore the governors and exit
        # (each test would also end by its own deadline)
        left = oc.wait_no_test_processes(lab, timeout=90)
        assert not left, left
        assert_nothing_left(lab, wait=30)
        after = dict((host, oc.governors(lab, host)) for host in lab.hosts)
        for host in lab.hosts:
            assert after[host] == oc.GOVERNORS, host
    finally:
        # leave the lab as it was for the next tests, whatever happened above
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            proc.wait(timeout=60)
        oc.wait_no_test_processes(lab, timeout=90)
        oc.set_governors(lab, oc.GOVERNORS)


@pytest.mark.full
def test_two_runs_at_once_keep_both_histories_complete(lab, tmp_path):
    """Two operators, one history directory (as /var/lib/commcheck/history would be), different hosts."""
    history = tmp_path / "shared-history"
    extra = {"commcheck_checks": ["discover", "rdma", "tcp"], "commcheck_rdma_metrics": ["bw"]}
    groups = (lab.hosts[:2], lab.hosts[2:])
    before = dict((host, oc.governors(lab, host)) for host in lab.hosts)
    procs = [oc.start_oneclick(lab, tmp_path, extra, limit=",".join(hosts), name="run%d" % num, history=history)
             for num, hosts in enumerate(groups)]
    reports = []
    for proc, _history, report in procs:
        proc.wait(timeout=600)
        with open(proc.log_path) as handle:
            text = handle.read()
        assert proc.returncode == 0, text[-4000:]
        reports.append(report)
    lines = read_history(history)          # every line is whole, valid JSON
    runs = {}
    for line in lines:
        assert line["schema"] and line["time"] and line["run_id"]
        runs.setdefault(line["run_id"], []).append(line)
    assert len(runs) == 2, sorted(runs)
    for run_id, run_lines in runs.items():
        summaries = [r for r in run_lines if r["kind"] == "summary"]
        assert len(summaries) == 1 and summaries[0]["verdict"] in ("pass", "warn", "fail"), summaries
        hosts = sorted(summaries[0]["hosts"]["ok"])
        assert hosts in [sorted(g) for g in groups], hosts
        records = [r for r in run_lines if r["kind"] != "summary"]
        # only this run's hosts ("*": fleet-wide records, such as the RDMA check's localization summary)
        assert {r["host"] for r in records} - {"*"} == set(hosts)
        assert sorted(r["host"] for r in records if r["kind"] == "discover") == hosts
        assert [r for r in records if r["kind"] == "rdma_bw"] and [r for r in records if r["kind"] == "tcp_bw"]
        assert all(r["verdict"] in HEALTHY_VERDICTS for r in records if r["kind"] in ("rdma_bw", "tcp_bw"))
        assert summaries[0]["metrics"]["records"] == len(records)
        # the run's own report has the same records
        report = [r for r in reports if os.path.isdir(os.path.join(r, run_id))]
        assert len(report) == 1
        _directory, results = oc.report_of(report[0], run_id)
        assert len([r for r in results["records"] if r["kind"] != "regression"]) == len(
            [r for r in records if r["kind"] != "regression"])
    assert not oc.wait_no_test_processes(lab, timeout=5)
    for host in lab.hosts:
        assert oc.governors(lab, host) == before[host], host


@pytest.fixture(scope="module")
def doomed_lab(lab_factory):
    """A lab of its own: this test stops a host's sshd for good."""
    return lab_factory("ockill", hosts=4, rails=1)


@pytest.mark.full
def test_host_killed_mid_run_is_reported_and_the_rest_is_kept(doomed_lab, tmp_path):
    lab = doomed_lab
    victim = lab.hosts[2]
    started = time.monotonic()
    proc, history, report = oc.start_oneclick(lab, tmp_path, {
        "commcheck_checks": ["discover", "rdma", "tcp"], "commcheck_rdma_duration": 3,
        "commcheck_rdma_timeout": 20, "commcheck_tcp_timeout": 20}, name="killed")
    deadline = time.monotonic() + 120
    while not [p for p in oc.leftover_test_processes(lab) if p["host"] == victim]:
        assert proc.poll() is None, open(proc.log_path).read()[-4000:]
        assert time.monotonic() < deadline, "no test process started on %s" % victim
        time.sleep(0.2)
    # the host's sshd (listener and every session) stops: ssh to it is refused from now on
    sshd = [p for p in lab.pids(include_infra=True) if p["host"] == victim and p["comm"].startswith("sshd")]
    assert sshd
    for info in sshd:
        try:
            os.kill(info["pid"], signal.SIGKILL)
        except ProcessLookupError:
            pass
    run = oc.finish(proc, history, report, started, timeout=600)
    assert run.rc == 4, run.tail()            # completed, with an unreachable host
    lost = run.records("finding", host=victim)
    assert [r["params"]["finding"] for r in lost if r["params"].get("check") == "commcheck"] == ["unreachable"], lost
    assert run.summary()["hosts"]["unreachable"] == [victim]
    others = [h for h in lab.hosts if h != victim]
    # everything measured before and after is kept: discovery of all four, RDMA between the others
    # (pairs with the lost host are errors naming it), TCP among the three that are left
    assert sorted(r["host"] for r in run.records("discover")) == sorted(lab.hosts)
    rdma = run.records("rdma_bw")
    # The lost host's test processes stop with it (its modules see their ssh session end), so its peers wait
    # for it until their deadline and start their next pair that much later: that pair may miss its partner.
    # Such a pair is an error that says nobody connected, never a bandwidth verdict.
    waited = set(h for r in rdma if victim in (r["host"], r["peer"]) for h in (r["host"], r["peer"])) - {victim}
    others_rdma = [r for r in rdma if victim not in (r["host"], r["peer"])]
    # measured: pass or warn, or flaky (on a loaded machine a pair may measure slow once and pass its retest)
    measured = ("pass", "warn", "flaky")
    brief = [(r["host"], r["peer"], r["verdict"], r["params"].get("step"), r.get("cause")) for r in rdma]
    assert others_rdma and [r for r in others_rdma if r["verdict"] in measured], brief
    for rec in others_rdma:
        if rec["verdict"] not in measured:
            assert rec["verdict"] == "error" and {rec["host"], rec["peer"]} & waited, rec
            # ... or one that got in as its partner gave up, whose side channel then broke
            assert any(text in rec["cause"] for text in ("could not reach the server", "no client connected",
                                                         "side channel (TCP or rdma_cm) broke")), rec
    tcp = run.records("tcp_bw")
    assert len(tcp) == 3 and {r["host"] for r in tcp} | {r["peer"] for r in tcp} == set(others), tcp
    directory, results = oc.report_of(run.report_dir, run.run_id)
    assert os.path.isfile(os.path.join(directory, "report.html"))
    assert len([r for r in results["records"] if r["kind"] != "regression"]) == len(
        [r for r in run.records() if r["kind"] != "regression"])
    assert any(r["host"] == victim and r["verdict"] == "error" for r in results["records"])
    # what was still running on the lost host ends by its own deadline
    assert not oc.wait_no_test_processes(lab, timeout=90)
