# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""End to end: NCCL / HCCL collectives with REAL Open MPI mpirun.

The test binaries are the lab's emulators (tests/lab/emulators/: nccl-tests
and hccl_test command lines and output formats, a real MPI collective over
the network with mpi4py), installed under their real names (all_reduce_perf,
all_reduce_test, ...) in a scratch directory of the test process
(lab_checks.scratch_dir). The lab hosts share one filesystem, so that
directory is the ``binary_dir`` of every host.

- local: mpirun on this machine alone (no root, no lab): the emulators'
  output goes through the real parsers, text and JSON, NCCL and HCCL.
- lab (4 hosts, real ssh): a healthy pool passes through the role; a host
  slowed with tc makes the pool run fail and bisection names it among 8
  hosts; an unreachable host, a missing binary and a run cut by its timeout
  give clear errors and leave no process on any lab host; NCCL falling back
  to sockets is named.

Fast tier: the local NCCL (JSON and text) and HCCL runs; a host named by
bisection among 4 is on the fast tier's slowed-host run
(test_ansible_runner_lab.py), a healthy pool on its healthy one-click run
(test_oneclick_lab.py). Full tier (``pytest.mark.full``): the rest.

Run times on the 2-core build machine (shared with other test runs): local
tests ~20 s; lab tests about 4-5 minutes (the 8-host bisection alone 60-80 s).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json
import os
import shutil
import subprocess
import sys
import time

import pytest

import faults
import lab as lablib
import oneclick_helpers as oc
from lab_checks import assert_nothing_left, run_with_history, scratch_dir, slow_rate

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
VENV_PYTHON = os.path.join(REPO, ".venv", "bin", "python")
MODULE = os.path.join(REPO, "plugins", "modules", "collective.py")
COLLECTIONS = os.path.join(REPO, ".build", "collections")
NCCL_OPS = ("all_reduce", "all_gather", "broadcast", "reduce_scatter", "reduce", "alltoall", "sendrecv",
            "gather", "scatter")
HCCL_OPS = ("all_reduce", "all_gather", "broadcast", "reduce_scatter", "reduce", "alltoall", "alltoallv")
# One 1 MiB size keeps a run at a few seconds, also with one host shaped to a twentieth of the rate.
SIZES = {"min_bytes": "1M", "max_bytes": "1M", "iterations": 3, "warmup_iterations": 1}


def mpi_missing():
    if not shutil.which("mpirun"):
        return "Open MPI's mpirun is not installed (apt-get install openmpi-bin libopenmpi-dev)"
    proc = subprocess.run([VENV_PYTHON, "-c", "import mpi4py"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          check=False)
    if proc.returncode != 0:
        return "mpi4py is not installed in .venv (pip install mpi4py; it needs libopenmpi-dev)"
    return None


pytestmark = pytest.mark.skipif(mpi_missing() is not None, reason=mpi_missing() or "")


@pytest.fixture(scope="session")
def binary_dir():
    """EMULATOR launchers under the real binaries' names (the lab's hosts all see this path)."""
    path = scratch_dir("collective")
    oc.collective_launchers(path, "nccl", NCCL_OPS)
    oc.collective_launchers(path, "hccl", HCCL_OPS)
    return path


# ------------------------------------------------------------ local (no lab)

def run_local(args, tmp_path, timeout=120):
    argfile = tmp_path / ("args-%d.json" % time.monotonic_ns())
    argfile.write_text(json.dumps({"ANSIBLE_MODULE_ARGS": args}))
    env = dict(os.environ, PYTHONPATH=COLLECTIONS)
    proc = subprocess.run([sys.executable, MODULE, str(argfile)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, env=env, timeout=timeout, check=False)
    return json.loads(proc.stdout[proc.stdout.index("{"):])


def local_args(binary_dir, **kw):
    args = dict(SIZES, library="nccl", hosts=[{"address": "localhost", "slots": 2, "name": "local"}],
                gpus_per_node=2, binary_dir=binary_dir, allow_run_as_root=os.geteuid() == 0,
                mca=dict(lablib.LAB_MPI_MCA, btl="self,tcp", btl_tcp_if_include="lo", oob_tcp_if_include="lo"))
    args.update(kw)
    return args


def test_local_nccl_emulator_json_and_text(binary_dir, tmp_path):
    out = run_local(local_args(binary_dir, max_bytes="2M"), tmp_path)
    assert out["verdict"] == "pass", out.get("cause")
    assert out["json_output"] is True and "-J" in out["cmd"]
    assert out["result"]["format"] == "json"
    assert [r["bytes"] for r in out["result"]["rows"]] == [1048576, 2097152]
    for row in out["result"]["rows"]:
        for side in ("out_of_place", "in_place"):
            group = row[side]
            # nccl-tests' formulas: algbw = size / time, busbw = algbw * 2(n-1)/n with n = 2
            assert group["algbw_gbs"] == pytest.approx(row["bytes"] / group["time_us"] / 1e3, rel=1e-3)
            assert group["busbw_gbs"] == pytest.approx(group["algbw_gbs"], rel=1e-6)
            assert group["wrong"] == 0
    assert out["transport"] == "Socket"
    assert "NCCL_DEBUG=INFO" in out["cmd"]
    text = run_local(local_args(binary_dir, json_output="never", operation="all_gather", max_bytes="2M"), tmp_path)
    assert text["verdict"] == "pass" and text["json_output"] is False, (text.get("cause"), text.get("stderr"))
    assert text["result"]["format"] == "text"
    assert text["result"]["header"]["nthread"] == 1
    assert [r["redop"] for r in text["result"]["rows"]] == ["none", "none"]
    assert len(text["result"]["ranks"]) == 2


@pytest.mark.full
@pytest.mark.parametrize("operation", ["broadcast", "reduce_scatter", "alltoall", "sendrecv", "reduce"])
def test_local_nccl_emulator_collectives_check_their_data(binary_dir, tmp_path, operation):
    out = run_local(local_args(binary_dir, operation=operation, json_output="never", min_bytes="64K",
                               max_bytes="64K"), tmp_path)
    assert out["verdict"] == "pass", out.get("cause")
    assert out["result"]["out_of_bounds"] == 0
    assert all(r["out_of_place"]["wrong"] == 0 for r in out["result"]["rows"])


def test_local_hccl_emulator(binary_dir, tmp_path):
    out = run_local(local_args(binary_dir, library="hccl", min_bytes="512K", max_bytes="1M",
                               expected_busbw_gbs=0.001), tmp_path)
    assert out["verdict"] == "pass", out.get("cause")
    assert out["cmd"][out["cmd"].index(os.path.join(binary_dir, "all_reduce_test")) + 1:][:2] == ["-p", "2"]
    rows = out["result"]["rows"]
    assert [r["bytes"] for r in rows] == [524288, 1048576]
    assert all(r["check"] == "success" for r in rows)
    assert out["busbw_gbs"] == pytest.approx(max(r["algbw_gbs"] for r in rows), rel=1e-3)  # 2(n-1)/n = 1


@pytest.mark.full
def test_local_emulator_rejects_what_the_real_binary_rejects(binary_dir):
    proc = subprocess.run([os.path.join(binary_dir, "all_reduce_perf"), "-b", "8X"], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, check=False, timeout=30)
    assert proc.returncode == 255 and "invalid size specified for 'minbytes'" in proc.stderr
    helptext = subprocess.run([os.path.join(binary_dir, "all_reduce_perf"), "--help"], stdout=subprocess.PIPE,
                              universal_newlines=True, check=False, timeout=30).stdout
    assert "-J,--output_file" in helptext


# -------------------------------------------------------------------- lab

MODULE_PLAYBOOK = """
- name: Run clusterops.commcheck.collective once and keep its result
  hosts: "{{ target }}"
  gather_facts: false
  tasks:
    - name: Run the collective
      clusterops.commcheck.collective: "{{ module_args }}"
      register: out
      ignore_errors: true
    - name: Keep the result
      ansible.builtin.copy:
        content: "{{ out | to_json }}"
        dest: "{{ result_file }}"
        mode: "0644"
      delegate_to: localhost
"""


def lab_module(lab, host, args, timeout=600):
    """clusterops.commcheck.collective on one lab host over real ssh; returns its result."""
    work = scratch_dir("collective-tests")
    stamp = time.monotonic_ns()
    playbook = os.path.join(work, "module-%d.yml" % stamp)
    result = os.path.join(work, "result-%d.json" % stamp)
    with open(playbook, "w") as handle:
        handle.write(MODULE_PLAYBOOK)
    proc = lab.ansible_playbook(playbook, extra_vars={"target": host, "module_args": args, "result_file": result},
                                timeout=timeout)
    try:
        with open(result) as handle:
            return json.load(handle)
    except (IOError, OSError, ValueError):
        raise AssertionError("no result: rc=%s\n%s\n%s" % (proc.returncode, proc.stdout[-3000:], proc.stderr[-2000:]))


def lab_args(lab, binary_dir, hosts=None, **kw):
    """Module args for the lab: mpirun's ssh config and TCP interfaces from the lab's inventory."""
    names = hosts or lab.hosts
    subnet = lab.lab.state["rails"][0]["subnet"]
    args = dict(SIZES, library="nccl", binary_dir=binary_dir, allow_run_as_root=True, gpus_per_node=1,
                hosts=[{"address": lab.address(h), "name": h} for h in names],
                ssh_config=lab.ssh_config,
                mca=dict(lablib.LAB_MPI_MCA, btl_tcp_if_include=subnet, oob_tcp_if_include=subnet),
                timeout=240, fail_on_error=False)
    args.update(kw)
    return args


def fiftieth_rate(lab):
    """A fiftieth of the lab's nominal link rate (at least 10 Mbit/s)."""
    return slow_rate(lab, divisor=50, floor_mbit=10)


def lab_expectation(lab, hosts):
    """Expected bus bandwidth and pass fraction for the emulated collective in this lab.

    Expected: half the nominal link rate (MPI over TCP in Python). The pass
    line sits far below it because a healthy run's bus bandwidth drops with
    its rank count on the two shared cores (8 ranks measured 13-30% of line
    rate, 2 ranks about 60%), while a host shaped to a fiftieth of the rate
    stays under 2%.
    """
    return {"nic_rates_gbps": [lab.rate_gbps], "link_efficiency": 0.5, "min_fraction": 0.15 if hosts <= 4 else 0.12}


@pytest.fixture
def lab(lab4):
    lab4.heal()
    yield lab4
    lab4.heal()


def run_playbook(lab, playbook, extra_vars, tmp_path):
    proc, records, _elapsed = run_with_history(lab, playbook, tmp_path, extra_vars)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    return records


def role_vars(lab, binary_dir, **kw):
    expect = lab_expectation(lab, len(lab.hosts))
    extra = {"commcheck_collective_min_bytes": SIZES["min_bytes"], "commcheck_collective_max_bytes": SIZES["max_bytes"],
             "commcheck_collective_iterations": SIZES["iterations"],
             "commcheck_collective_warmup_iterations": SIZES["warmup_iterations"], "commcheck_gpus_per_node": 1,
             "commcheck_collective_binary_dir": binary_dir, "commcheck_collective_allow_run_as_root": True,
             "commcheck_collective_nic_rates_gbps": expect["nic_rates_gbps"],
             "commcheck_collective_link_efficiency": expect["link_efficiency"],
             "commcheck_collective_min_fraction": expect["min_fraction"]}
    extra.update(kw)
    return extra


def healthy_pool(runs):
    """The pool record of a healthy lab's collective runs: passed with nothing rerun, or flaky with every rerun
    passing.

    A loaded machine can slow the pool's one run below its pass line (seen with busy loops on both cores);
    the bisection then reruns it on halves, every rerun passes, and the pool is flaky, not failed: nothing
    is blamed.
    """
    pools = [r for r in runs if r["params"].get("stage") == "pool"]
    assert len(pools) == 1, runs
    others = [r["verdict"] for r in runs if r is not pools[0]]
    assert (pools[0]["verdict"], others) == ("pass", []) or \
        (pools[0]["verdict"] == "flaky" and others and set(others) == {"pass"}), \
        [(r["verdict"], r["params"]) for r in runs]
    return pools[0]


@pytest.mark.full
def test_healthy_pool_passes_through_the_role(lab, binary_dir, tmp_path):
    records = run_playbook(lab, "playbooks/nccl.yml", role_vars(lab, binary_dir), tmp_path)
    runs = [r for r in records if r.get("kind") == "collective"]
    pool = healthy_pool(runs)
    assert pool["params"]["hosts"] == lab.hosts and pool["params"]["stage"] == "pool"
    assert pool["metrics"]["expected_busbw_gbs"] == pytest.approx(lab.rate_gbps / 8 * 0.5)
    assert pool["metrics"]["hw_expected_busbw_gbs"] == pool["metrics"]["threshold_busbw_gbs"]
    if pool["verdict"] == "pass":
        assert pool["metrics"]["busbw_gbs"] >= pool["metrics"]["threshold_busbw_gbs"]
        # the three thresholds looked at the run: its own pass line, no comparable runs, no history yet
        assert pool["thresholds"]["tripped"] == [] and pool["thresholds"]["hardware"]["checked"]
        assert not pool["thresholds"]["fleet"]["checked"] and not pool["thresholds"]["history"]["checked"]
    assert any("mpirun" in line and "all_reduce_perf" in line for line in pool["evidence"]), pool["evidence"]
    # nothing is blamed (a flaky pool may say so, as a warning at most)
    assert not [r for r in records if r.get("kind") == "finding" and r["verdict"] not in ("pass", "info", "warn")]
    assert_nothing_left(lab, wait=20)


@pytest.mark.full
def test_hccl_pool_and_nccl_pairs_and_per_node_through_the_role(lab, binary_dir, tmp_path):
    records = run_playbook(lab, "playbooks/hccl.yml", role_vars(lab, binary_dir), tmp_path / "hccl")
    runs = [r for r in records if r.get("kind") == "collective"]
    pool = healthy_pool(runs)
    assert pool["params"]["library"] == "hccl", runs
    assert not [r for r in records if r.get("kind") == "finding" and r["verdict"] in ("fail", "error")]
    # a flaky pool's evidence opens with its rounds; its command line is still there
    assert any("all_reduce_test" in line and " -p 1 " in line for line in pool["evidence"]), pool["evidence"]
    records = run_playbook(lab, "playbooks/nccl.yml", role_vars(lab, binary_dir, commcheck_collective_mode="pairs"),
                           tmp_path / "pairs")
    pairs = [(r["host"], r["peer"], r["verdict"]) for r in records if r.get("kind") == "collective"]
    # a pair a busy machine slows is a milder fleet outlier (warn); none may fail
    assert len(pairs) == 4 and all(p[2] in ("pass", "warn") for p in pairs), pairs
    assert sorted(tuple(sorted(p[:2])) for p in pairs) == sorted(
        tuple(sorted(p)) for p in zip(lab.hosts, lab.hosts[1:] + lab.hosts[:1]))
    records = run_playbook(lab, "playbooks/nccl.yml",
                           # in-node emulator runs share this machine's 2 cores with everything else: healthy
                           # nodes measured 0.7-3.6 GB/s in one run, so only a node at a tenth of the median is
                           # an outlier here
                           role_vars(lab, binary_dir, commcheck_collective_mode="per_node", commcheck_gpus_per_node=2,
                                     commcheck_outlier_min_rel=0.9),
                           tmp_path / "node")
    nodes = sorted((r["host"], r["verdict"], r["params"]["nodes"]) for r in records if r.get("kind") == "collective")
    # as with the pairs: a node a busy machine slows is a milder fleet outlier (warn); none may fail
    assert [(h, n) for h, _v, n in nodes] == [(h, 1) for h in sorted(lab.hosts)]
    assert all(v in ("pass", "warn") for _h, v, _n in nodes), nodes
    # each node was compared with the other three
    assert all(r["thresholds"]["fleet"]["n"] == 4 for r in records if r.get("kind") == "collective")
    # two of the four nodes: only they run (the others skip the per-node include, register nothing and so
    # cannot overwrite what the two registered)
    chosen = lab.hosts[1:3]
    records = run_playbook(lab, "playbooks/nccl.yml",
                           role_vars(lab, binary_dir, commcheck_collective_mode="per_node", commcheck_gpus_per_node=2,
                                     commcheck_outlier_min_rel=0.9, commcheck_collective_hosts=chosen),
                           tmp_path / "two-nodes")
    nodes = sorted((r["host"], r["verdict"]) for r in records if r.get("kind") == "collective")
    assert [h for h, _v in nodes] == sorted(chosen) and all(v in ("pass", "warn") for _h, v in nodes), nodes
    assert_nothing_left(lab, wait=20)


@pytest.mark.full
def test_slow_host_is_named_among_eight(lab_factory, binary_dir):
    lab8 = lab_factory("coll8", hosts=8)
    lab8.heal()
    expect = lab_expectation(lab8, 8)
    try:
        healthy = lab_module(lab8, lab8.hosts[0], lab_args(lab8, binary_dir, **expect))
        assert healthy["verdict"] == "pass", (healthy.get("cause"), healthy.get("busbw_gbs"))
        slow = lab8.hosts[5]
        lab8.slow(slow, rate=fiftieth_rate(lab8))
        started = time.monotonic()
        out = lab_module(lab8, lab8.hosts[0], lab_args(lab8, binary_dir, bisect=True, **expect))
        elapsed = time.monotonic() - started
        runs = [(r["hosts"], r["verdict"], r["busbw_gbs"]) for r in out["runs"]]
        assert out["bad_nodes"] == [slow], (out.get("cause"), out["threshold_busbw_gbs"], runs)
        assert out["bisect"]["conclusion"] == "isolated"
        # the runs of a round go at once: one bad node in 8 takes at most ceil(log2 8) + 2 = 5 rounds
        rounds = max(r["round"] for r in out["runs"])
        assert rounds <= 5, (rounds, out["bisect"])
        assert len(out["runs"]) <= 2 * 8 + 3
        sys.stderr.write("\n8-host bisection: %d collective runs in %d rounds (pool included) in %.0fs, healthy pool "
                         "%.4f GB/s, threshold %.4f: %s\n" % (len(runs), rounds, elapsed, healthy["busbw_gbs"],
                                                              out["threshold_busbw_gbs"], runs))
        assert_nothing_left(lab8, wait=20)
    finally:
        lab8.heal()


@pytest.mark.full
def test_unreachable_host_is_a_clear_error(lab, binary_dir, tmp_path):
    args = lab_args(lab, binary_dir, hosts=lab.hosts[:2], bisect=True)
    ghost = lab.address(lab.hosts[0]).rsplit(".", 1)[0] + ".250"
    args["hosts"].append({"address": ghost, "name": "ghost"})
    out = lab_module(lab, lab.hosts[0], args)
    assert out["verdict"] == "error"
    assert out["bad_nodes"] == ["ghost"]
    assert ghost in out["cause"] and ("No route to host" in out["cause"] or "timed out" in out["cause"])
    assert len(out["runs"]) == 1
    assert_nothing_left(lab, wait=20)


@pytest.mark.full
def test_missing_binary_is_a_clear_error(lab, binary_dir, tmp_path):
    empty = tmp_path / "no-binaries"
    empty.mkdir()
    out = lab_module(lab, lab.hosts[0], lab_args(lab, str(empty)))
    assert out["verdict"] == "error" and out["runs"] == []
    assert "all_reduce_perf was not found in %s on the launcher host" % empty in out["cause"]
    strict = lab_module(lab, lab.hosts[0], lab_args(lab, str(empty), fail_on_error=True))
    assert strict["failed"] and "was not found" in strict["msg"]
    assert_nothing_left(lab, wait=20)


@pytest.mark.full
def test_timeout_kills_every_rank(lab, binary_dir, tmp_path):
    lab.slow(lab.hosts[3], rate="20mbit")
    out = lab_module(lab, lab.hosts[0], lab_args(lab, binary_dir, min_bytes="16M", max_bytes="16M", iterations=20,
                                                 timeout=8))
    why = dict((k, out.get(k)) for k in ("rc", "duration_s", "cause", "errors", "stderr"))
    assert out["verdict"] == "error" and out["timed_out"] is True, why
    assert "did not finish within 8s" in out["cause"], why
    started = time.monotonic()
    assert_nothing_left(lab, wait=30)
    sys.stderr.write("\nleft-over processes gone %.1fs after the module returned\n" % (time.monotonic() - started))


@pytest.mark.full
def test_socket_fallback_fails_when_rdma_devices_exist(lab, binary_dir, tmp_path):
    hosts = lab.hosts[:2]
    healthy = lab_module(lab, lab.hosts[0], lab_args(lab, binary_dir, hosts=hosts, ib_devices=["mlx5_0"]))
    # the lab's hosts have emulated RoCE devices: the emulator reports NET/IB, as NCCL would
    assert healthy["transport"] == "IB" and healthy["verdict"] == "pass", healthy.get("cause")
    fault = faults.SocketFallback(lab.lab, hosts[1])
    fault.inject()
    try:
        out = lab_module(lab, lab.hosts[0], lab_args(lab, binary_dir, hosts=hosts, ib_devices=["mlx5_0"],
                                                     bisect=False))
    finally:
        fault.heal()
    assert out["transport"] == "Socket"
    assert out["verdict"] == "fail" and "NET/Socket" in out["cause"] and "NCCL_IB_HCA" in out["fix"]
