# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one-click check on the ansible-core of the Python that runs this test.

``make compat`` (tests/compat/matrix.py) runs this file with the Python of
each ansible-core version it tests (``.build/compat/<version>/``); ``make
test`` runs it on the main one. The controller is that environment's
ansible-playbook, and the lab hosts run the modules with that same Python
(``ansible_python_interpreter``), so nothing of another core takes part.

Every core must give the same run: the same record kinds and counts, the
same healthy verdicts, numbers as numbers (before 2.19 a template that
computed a number or a null gave text), and a report of the same records.
Real ansible-playbook over real SSH on a 3-host, 1-rail lab; perftest and
nccl-tests are the lab's EMULATORS (tests/lab/emulators/), iperf3 and mpirun
are real. About a minute and a half on the 2-core build machine.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import glob
import json
import os
import subprocess
import sys

import ansible
import pytest

# make test-full runs it on the main core (integration-full), make compat on each other one
pytestmark = [pytest.mark.lab, pytest.mark.slow, pytest.mark.full]

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PLAYBOOK = "playbooks/commcheck.yml"
# this Python's environment: its ansible-playbook is the controller, the Python itself runs the modules
PLAYBOOK_BIN = os.path.join(os.path.dirname(sys.executable), "ansible-playbook")
HOSTS = 3
# Short tests, and thresholds that a healthy emulated link on a busy 2-core machine always meets: what this
# test compares is how each core runs the roles, not the lab's speed.
FAST = {
    "commcheck_rdma_duration": 2,
    "commcheck_tcp_duration": 2,
    "commcheck_pattern": "ring",
    "commcheck_min_fraction": 0.25,
    "commcheck_fleet_min_fraction": 0.2,
    "commcheck_outlier_min_rel": 10,
}
HEALTHY = ("pass", "warn", "flaky")
# kind -> records of a ring of three hosts on one rail (one collective over the pool, one summary line)
KINDS = {"discover": HOSTS, "port_counters": HOSTS, "rdma_bw": HOSTS, "rdma_lat": HOSTS, "tcp_bw": HOSTS,
         "collective": 1, "summary": 1}
# the metrics each measurement must carry as numbers
METRICS = {"rdma_bw": "bw_gbps", "rdma_lat": "lat_us", "tcp_bw": "bw_gbps", "collective": "busbw_gbs"}


@pytest.fixture(scope="module")
def lab(lab_factory):
    return lab_factory("compat", hosts=HOSTS, rails=1)


def read_history(directory):
    lines = []
    for path in sorted(glob.glob(os.path.join(str(directory), "*.jsonl"))):
        with open(path) as handle:
            lines.extend(json.loads(line) for line in handle if line.strip())
    return lines


def run_oneclick(lab, tmp_path):
    """ansible-playbook of this Python's environment on the lab: (CompletedProcess, history lines, report dir)."""
    history, report = tmp_path / "history", tmp_path / "report"
    variables = dict(FAST, commcheck_report_dir=str(report), ansible_python_interpreter=sys.executable)
    varfile = tmp_path / "vars.json"
    varfile.write_text(json.dumps(variables))
    env = lab.env({"ANSIBLE_CALLBACKS_ENABLED": "clusterops.commcheck.commcheck_history",
                   "COMMCHECK_HISTORY_DIR": str(history), "COMMCHECK_HISTORY_FSYNC": "false"})
    proc = subprocess.run([PLAYBOOK_BIN, "-i", lab.inventory, "-e", "@%s" % varfile, PLAYBOOK], cwd=REPO, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, timeout=900,
                          check=False)
    return proc, read_history(history), report


def scheduled_late(record):
    """A latency the thresholds judged far late: the lab's latency is this machine's scheduling (the perftest
    emulator's ping-pong), and a shared CI machine can hold one pair late through its retests. Every core judges
    it alike; what this file compares is how each core runs the roles, so such a record is measured, not wrong."""
    return record["kind"] == "rdma_lat" and record["verdict"] == "fail" and \
        "far fleet outlier" in (record.get("cause") or "") and is_number(record["metrics"].get("lat_us"))


def latency_finding(record):
    """What the localization of the latency records names (a late link's finding)."""
    return record["kind"] == "finding" and (record.get("params") or {}).get("family") == "rdma_lat"


def is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def test_the_controller_is_the_core_of_this_python():
    out = subprocess.run([PLAYBOOK_BIN, "--version"], stdout=subprocess.PIPE, universal_newlines=True,
                         check=True).stdout
    assert "[core %s]" % ansible.__version__ in out.splitlines()[0], out


def test_oneclick_gives_the_same_healthy_run_on_this_core(lab, tmp_path):
    proc, history, report = run_oneclick(lab, tmp_path)
    assert proc.returncode == 0, proc.stdout[-6000:]
    # no task templates its whole args (ansible-core 2.16-2.18 warn that a variable for a task's args is unsafe)
    assert "args' is unsafe" not in proc.stdout, [line for line in proc.stdout.splitlines() if "unsafe" in line]

    kinds = {}
    for record in history:
        kinds[record["kind"]] = kinds.get(record["kind"], 0) + 1
    findings = [r for r in history if r["kind"] == "finding"]
    # a busy machine's late link is retested before it is blamed, on every core alike: retests may come on top
    retests = dict((k, n) for k, n in kinds.items() if k.endswith("_retest") or k == "retest_summary")
    assert dict((k, n) for k, n in kinds.items() if k != "finding" and k not in retests) == KINDS, kinds
    assert set(retests) <= set(["%s_retest" % k for k in KINDS] + ["retest_summary"]), retests
    # the lab's hosts are alike: each has the same discovery findings (those with a code), the governor one
    # among them (its sysfs); what the tests find (a pair's latency_tail warning, a flaky link) on a busy machine
    # is a pair's, not a host's
    codes = dict((host, sorted(r["params"]["code"] for r in findings if r["host"] == host and "code" in r["params"]
                               and r["params"].get("check") == "discover"))
                 for host in lab.hosts)
    assert len(set(map(tuple, codes.values()))) == 1 and "cpu_governor_not_performance" in codes[lab.hosts[0]], codes

    records = [r for r in history if r["kind"] != "summary"]
    # a retest's own verdict is evidence for its first-pass record's (flaky when another retest passed)
    late = any(scheduled_late(r) for r in records)
    unhealthy = [(r["kind"], r["host"], r["verdict"], r["cause"]) for r in records
                 if r["verdict"] not in HEALTHY and r["kind"] not in retests and not scheduled_late(r)
                 and not (late and latency_finding(r))]
    assert not unhealthy, unhealthy
    [summary] = [r for r in history if r["kind"] == "summary"]
    assert summary["verdict"] in HEALTHY or (late and summary["verdict"] == "fail"), summary
    for kind, metric in METRICS.items():
        values = [r["metrics"].get(metric) for r in records if r["kind"] == kind]
        assert values and all(is_number(v) and v > 0 for v in values), (kind, values)
    pairs = [r for r in records if r["kind"] in ("rdma_bw", "rdma_lat", "tcp_bw")]
    assert all(is_number(r["params"]["rail"]) for r in pairs), [r["params"] for r in pairs]
    [collective] = [r for r in records if r["kind"] == "collective"]
    assert collective["params"]["library"] == "nccl" and sorted(collective["params"]["hosts"]) == sorted(lab.hosts)

    # the report holds the records the history holds
    [directory] = glob.glob(os.path.join(str(report), "*", ""))
    with open(os.path.join(directory, "results.json")) as handle:
        reported = json.load(handle)["records"]
    assert sorted((r["kind"], r["host"], r.get("peer") or "", r["verdict"]) for r in reported) == sorted(
        (r["kind"], r["host"], r.get("peer") or "", r["verdict"]) for r in records)
