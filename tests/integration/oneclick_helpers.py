# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Helpers of the one-click lab tests (test_oneclick_lab.py, test_reliability_lab.py).

Runs playbooks/commcheck.yml with the history callback into a test's own
history and report directories, and reads both back. The collective test
binaries are the lab's EMULATORS (tests/lab/emulators/), installed under the
real binaries' names in a scratch directory of the test process
(lab_checks.scratch_dir: the lab hosts share one filesystem); ``nvidia-smi`` there is an EMULATOR stub that makes a
lab host look like a GPU node to discovery and to the one-click probe.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import glob
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

from lab_checks import LAB_MIN_FRACTION, history_env, read_history, scratch_dir, write_executable

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
PLAYBOOK = "playbooks/commcheck.yml"
EMULATORS = os.path.join(REPO, "tests", "lab", "emulators")
VENV_PYTHON = os.path.join(REPO, ".venv", "bin", "python")
PYTHON = VENV_PYTHON if os.path.exists(VENV_PYTHON) else sys.executable
LAB_DIR = os.path.join(REPO, "tests", "lab")
if LAB_DIR not in sys.path:
    sys.path.insert(0, LAB_DIR)

# Short and small: the whole one-click run on 4 lab hosts in about a minute.
FAST = {
    "commcheck_rdma_duration": 2,
    "commcheck_tcp_duration": 2,
    "commcheck_pattern": "ring",
    # The lab shares two CPU cores with everything else (lab_checks.LAB_MIN_FRACTION).
    "commcheck_min_fraction": LAB_MIN_FRACTION,
}
COLLECTIVE = {
    "commcheck_collective_allow_run_as_root": True,
    "commcheck_collective_min_bytes": "1M",
    "commcheck_collective_max_bytes": "2M",
    "commcheck_collective_iterations": 3,
    "commcheck_collective_warmup_iterations": 1,
    "commcheck_gpus_per_node": 1,
    "commcheck_collective_link_efficiency": 0.5,
    "commcheck_collective_min_fraction": 0.3,
}
GOVERNORS = ["ondemand", "ondemand", "powersave", "performance"]   # what the lab's sysfs starts with
TEST_PROCESSES = ("perftest_emulator", "nccl_tests_emulator", "hccl_test_emulator", "iperf3", "mpirun", "orted",
                  "prterun", "prted", "ib_write_bw", "ib_read_bw", "ib_write_lat", "all_reduce_perf")


def collective_launchers(path, library, ops, emulate=None):
    """EMULATOR launchers in path under the real names of one library's test binaries (all_reduce_perf ...);
    each runs the library's emulator for its own operation, or for ``emulate`` when given."""
    emulator = os.path.join(EMULATORS, "nccl_tests_emulator.py" if library == "nccl" else "hccl_test_emulator.py")
    suffix = "_perf" if library == "nccl" else "_test"
    for op in ops:
        write_executable(os.path.join(path, op + suffix),
                         "#!/bin/sh\n# EMULATOR launcher (commcheck lab): %s%s runs tests/lab/emulators/%s\n"
                         "exec %s %s --emulate=%s \"$@\"\n"
                         % (op, suffix, os.path.basename(emulator), PYTHON, emulator, emulate or op))
    return path


def collective_bin(library, ops=("all_reduce", "all_gather")):
    """A directory with EMULATOR launchers of one library's test binaries."""
    return collective_launchers(scratch_dir("oneclick", library), library, ops)


def gpu_stub_dir():
    """A directory whose nvidia-smi is an EMULATOR stub (GPU evidence for a lab host)."""
    path = scratch_dir("oneclick", "gpu-stub")
    write_executable(os.path.join(path, "nvidia-smi"),
                     "#!/bin/sh\n# EMULATOR stub (commcheck lab): stands in for nvidia-smi so that a lab host looks "
                     "like a GPU node\necho 'EMULATOR nvidia-smi: no real GPU here'\n")
    return path


def mpi_missing():
    proc = subprocess.run([PYTHON, "-c", "import mpi4py"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          check=False)
    if proc.returncode != 0:
        return "mpi4py is not installed in .venv (pip install mpi4py; it needs libopenmpi-dev)"
    if not any(os.access(os.path.join(p, "mpirun"), os.X_OK) for p in os.environ.get("PATH", "").split(os.pathsep)):
        return "Open MPI's mpirun is not installed (apt-get install openmpi-bin)"
    return None


def empty_sysfs(name):
    """An emulated /sys without any RDMA device (a host without RDMA)."""
    import sysfs_tree  # pylint: disable=import-outside-toplevel
    root = os.path.join(scratch_dir("oneclick"), "sysfs-" + name)
    if not os.path.isdir(root):
        sysfs_tree.build_sysfs(root, [], cpus=list(GOVERNORS), modules={})
    return root


def report_of(report_dir, run_id=None):
    """(directory, results.json) of the run's report (the only one when run_id is None)."""
    dirs = sorted(d for d in glob.glob(os.path.join(str(report_dir), "*")) if os.path.isdir(d))
    if run_id:
        dirs = [d for d in dirs if os.path.basename(d) == run_id]
    assert len(dirs) == 1, "report directories: %s" % dirs
    with open(os.path.join(dirs[0], "results.json")) as handle:
        return dirs[0], json.load(handle)


def overlay_args(tmp_path, overlay, name="overlay"):
    if not overlay:
        return []
    path = os.path.join(str(tmp_path), "%s.json" % name)
    with open(path, "w") as handle:
        json.dump(overlay, handle)
    return ["-i", path]


class Run(object):
    """A finished one-click run: the process, its history and its report."""

    def __init__(self, proc, history_dir, report_dir, elapsed):
        self.proc = proc
        self.rc = proc.returncode
        self.stdout = proc.stdout
        self.output = (proc.stdout or "") + (proc.stderr or "")
        self.history = read_history(history_dir)
        self.report_dir = report_dir
        self.elapsed = elapsed
        runs = sorted(set(line["run_id"] for line in self.history))
        self.run_id = runs[-1] if len(runs) == 1 else None

    def records(self, kind=None, **where):
        out = [r for r in self.history if r.get("kind") != "summary" and (kind is None or r.get("kind") == kind)]
        for key, value in where.items():
            out = [r for r in out if r.get(key) == value]
        return out

    def summary(self):
        found = [r for r in self.history if r.get("kind") == "summary"]
        assert len(found) == 1, "summary lines: %d" % len(found)
        return found[0]

    def tail(self):
        return self.output[-6000:]


def oneclick(lab, tmp_path, extra_vars=None, overlay=None, limit=None, name="run", env=None, timeout=900,
             on_line=None):
    """Run the one-click play on the lab; return a Run. ``on_line(line)`` sees the output as it comes."""
    history = os.path.join(str(tmp_path), name, "history")
    report = os.path.join(str(tmp_path), name, "report")
    variables = dict(FAST)
    variables["commcheck_report_dir"] = report
    variables.update(extra_vars or {})
    started = time.monotonic()
    proc = lab.ansible_playbook(PLAYBOOK, extra_vars=variables, limit=limit,
                                args=overlay_args(tmp_path, overlay, name + "-overlay"),
                                env=history_env(history, env), timeout=timeout, on_line=on_line)
    return Run(proc, history, report, time.monotonic() - started)


def start_oneclick(lab, tmp_path, extra_vars=None, overlay=None, limit=None, name="run", history=None):
    """Start the one-click play in the background: (Popen, history dir, report dir)."""
    history = str(history or os.path.join(str(tmp_path), name, "history"))
    report = os.path.join(str(tmp_path), name, "report")
    variables = dict(FAST)
    variables["commcheck_report_dir"] = report
    variables.update(extra_vars or {})
    fd, varfile = tempfile.mkstemp(prefix="extra-vars-", suffix=".json", dir=str(tmp_path))
    with os.fdopen(fd, "w") as handle:
        json.dump(variables, handle)
    argv = [os.path.join(REPO, ".venv", "bin", "ansible-playbook"), "-i", lab.inventory, "-e", "@" + varfile]
    argv += overlay_args(tmp_path, overlay, name + "-overlay")
    if limit:
        argv += ["--limit", limit]
    argv.append(PLAYBOOK)
    out = open(os.path.join(str(tmp_path), name + ".log"), "w")
    proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=lab.env(history_env(history)), cwd=REPO)
    proc.log_path = out.name
    out.close()
    return proc, history, report


def finish(proc, history, report, started, timeout=900):
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=60)
        raise
    with open(proc.log_path) as handle:
        text = handle.read()
    done = subprocess.CompletedProcess(proc.args, proc.returncode, text, "")
    return Run(done, history, report, time.monotonic() - started)


def is_tool_probe(argv):
    """The tool probe (sh with keys such as cmd:ib_write_bw as its arguments) looks for the tools, runs none."""
    return any(arg.startswith(("cmd:", "exists:")) for arg in argv)


def leftover_test_processes(lab):
    """Test processes (perftest, iperf3, MPI, emulators) still running on any lab host."""
    left = []
    for info in lab.pids():
        argv = info.get("cmdline") or []
        text = "%s %s" % (info.get("comm"), " ".join(argv))
        if any(name in text for name in TEST_PROCESSES) and not is_tool_probe(argv):
            left.append(info)
    return left


def wait_no_test_processes(lab, timeout):
    """Wait until no test process is left on any lab host; return what is left at the end."""
    deadline = time.monotonic() + timeout
    while True:
        left = leftover_test_processes(lab)
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.5)


def tool_processes(lab, marker):
    """{pid: host} of the test processes whose command line holds marker (e.g. perftest_emulator, iperf3 -J)."""
    return dict((p["pid"], p["host"]) for p in leftover_test_processes(lab)
                if marker in "%s %s" % (p.get("comm"), " ".join(p.get("cmdline") or [])))


def governors_while_tool_runs(lab, proc, marker, timeout=120, hosts=None):
    """(host, governors) read while a test process of that host (its command line holds marker) was running
    before and after the read; only hosts in ``hosts`` when given."""
    deadline = time.monotonic() + timeout
    while True:
        assert proc.poll() is None, open(proc.log_path).read()[-4000:]
        assert time.monotonic() < deadline, "no %s process seen running" % marker
        for pid, host in sorted(tool_processes(lab, marker).items()):
            if hosts is not None and host not in hosts:
                continue
            seen = governors(lab, host)
            if tool_processes(lab, marker).get(pid) == host:
                return host, seen
        time.sleep(0.2)


def governors(lab, host):
    """The emulated cpufreq governors of a lab host, cpu0 first."""
    base = os.path.join(lab.dir, "sysfs", host, "devices", "system", "cpu")
    out = []
    for path in sorted(glob.glob(os.path.join(base, "cpu[0-9]*", "cpufreq", "scaling_governor")),
                       key=lambda p: int(p.split(os.sep)[-3][3:])):
        with open(path) as handle:
            out.append(handle.read().strip())
    return out


def set_governors(lab, values, hosts=None):
    """Write the emulated cpufreq governors of the lab hosts (all of them by default; cpu0 first)."""
    for host in hosts or lab.hosts:
        base = os.path.join(lab.dir, "sysfs", host, "devices", "system", "cpu")
        for num, value in enumerate(values):
            path = os.path.join(base, "cpu%d" % num, "cpufreq", "scaling_governor")
            if os.path.exists(path):
                with open(path, "w") as handle:
                    handle.write(value + "\n")
