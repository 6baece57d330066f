# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""CAP_IPC_LOCK preflight: CapEff from /proc/self/status, the ipc_lock host fact, the ipc_lock_missing finding."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import pytest

from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import runner
from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery import findings
from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery import gather
from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery import rdma_discovery as rd
from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery.host_facts import parse_cap_eff

ROOT_CAPS = "000001ffffffffff"
DOCKER_DEFAULT = "00000000a80425fb"
DOCKER_WITH_IPC_LOCK = "00000000a80465fb"

# /proc/self/status of `cat` in a Docker container (kernel 5.15), with the CapEff line left to fill in.
STATUS_TEMPLATE = """Name:\tcat
Umask:\t0022
State:\tR (running)
Tgid:\t42
Ngid:\t0
Pid:\t42
PPid:\t1
TracerPid:\t0
Uid:\t0\t0\t0\t0
Gid:\t0\t0\t0\t0
FDSize:\t64
Groups:\t0 1 2 3 4 6 10 11 20 26 27
NStgid:\t42
NSpid:\t42
NSpgid:\t42
NSsid:\t1
VmPeak:\t    5812 kB
VmSize:\t    5812 kB
VmLck:\t       0 kB
VmPin:\t       0 kB
VmHWM:\t     960 kB
VmRSS:\t     960 kB
RssAnon:\t      88 kB
RssFile:\t     872 kB
RssShmem:\t       0 kB
VmData:\t     360 kB
VmStk:\t     132 kB
VmExe:\t      20 kB
VmLib:\t    1672 kB
VmPTE:\t      48 kB
VmSwap:\t       0 kB
HugetlbPages:\t       0 kB
CoreDumping:\t0
THP_enabled:\t1
Threads:\t1
SigQ:\t0/513340
SigPnd:\t0000000000000000
ShdPnd:\t0000000000000000
SigBlk:\t0000000000000000
SigIgn:\t0000000000000000
SigCgt:\t0000000000000000
CapInh:\t0000000000000000
CapPrm:\t{cap}
CapEff:\t{cap}
CapBnd:\t{cap}
CapAmb:\t0000000000000000
NoNewPrivs:\t0
Seccomp:\t2
Seccomp_filters:\t1
Speculation_Store_Bypass:\tthread force mitigated
SpeculationIndirectBranch:\tconditional force disabled
Cpus_allowed:\tffff
Cpus_allowed_list:\t0-15
Mems_allowed:\t00000000,00000001
Mems_allowed_list:\t0
voluntary_ctxt_switches:\t0
nonvoluntary_ctxt_switches:\t1
"""

LIMITS_64K = """Limit                     Soft Limit           Hard Limit           Units
Max cpu time              unlimited            unlimited            seconds
Max file size             unlimited            unlimited            bytes
Max locked memory         65536                65536                bytes
Max address space         unlimited            unlimited            bytes
"""

UNLIMITED = {"soft": "unlimited", "hard": "unlimited"}
SMALL = {"soft": 64 << 10, "hard": 64 << 10}
LARGE = {"soft": 64 << 30, "hard": 64 << 30}


def _status(cap):
    return STATUS_TEMPLATE.format(cap=cap)


# --- parse_cap_eff ---------------------------------------------------------------

@pytest.mark.parametrize("cap,ipc_lock", [
    (ROOT_CAPS, True),
    (DOCKER_DEFAULT, False),
    (DOCKER_WITH_IPC_LOCK, True),
    ("0000000000000000", False),
    ("0000000000004000", True),
])
def test_parse_cap_eff_reads_bit_14_of_the_effective_set(cap, ipc_lock):
    assert parse_cap_eff(_status(cap)) == {"cap_eff": int(cap, 16), "ipc_lock": ipc_lock}


def test_parse_cap_eff_reads_capeff_not_the_other_capability_lines():
    text = _status(ROOT_CAPS).replace("CapEff:\t" + ROOT_CAPS, "CapEff:\t" + DOCKER_DEFAULT)
    assert parse_cap_eff(text) == {"cap_eff": 0xa80425fb, "ipc_lock": False}


@pytest.mark.parametrize("text", [None, "", "Name:\tcat\n", "CapEff:\t\n", "CapEff:\tnot-hex\n",
                                  "cat: /proc/self/status: No such file or directory"])
def test_parse_cap_eff_without_a_readable_capeff_is_unknown(text):
    assert parse_cap_eff(text) == {"cap_eff": None, "ipc_lock": None}


# --- the findings -----------------------------------------------------------------

DEVICES = [{"name": "mlx5_0", "ports": []}]


def _host(ipc_lock, memlock, cap=None):
    host = {"memlock": memlock, "ipc_lock": ipc_lock, "perftest": "/usr/bin/ib_write_bw"}
    if cap is not None:
        host["cap_eff"] = int(cap, 16)
    return host


def _severity_codes(host):
    return [(f["severity"], f["code"]) for f in findings.host_findings(DEVICES, host)]


@pytest.mark.parametrize("ipc_lock,memlock,expected", [
    (True, UNLIMITED, []),
    (True, SMALL, [("info", "memlock_limited")]),
    (True, LARGE, [("info", "memlock_limited")]),
    (False, UNLIMITED, []),
    (False, SMALL, [("error", "ipc_lock_missing")]),
    (False, LARGE, [("warning", "ipc_lock_missing")]),
    (None, UNLIMITED, []),
    (None, SMALL, [("warning", "memlock_limited")]),
    (None, LARGE, [("info", "memlock_limited")]),
    (False, None, []),
    (False, {"soft": None, "hard": None}, []),
])
def test_memlock_and_ipc_lock_give_one_finding_at_most(ipc_lock, memlock, expected):
    assert _severity_codes(_host(ipc_lock, memlock)) == expected


def test_ipc_lock_missing_names_capeff_the_limit_and_both_fixes():
    found = findings.host_findings(DEVICES, _host(False, SMALL, DOCKER_DEFAULT))
    assert len(found) == 1
    msg, fix = found[0]["message"], found[0]["fix"]
    assert "CapEff 00000000a80425fb" in msg and "64 KiB (soft) / 64 KiB (hard)" in msg
    assert "Couldn't allocate MR" in msg and "ibv_reg_mr" in msg
    assert 'capabilities.add: ["IPC_LOCK"]' in fix and "memlock unlimited" in fix
    assert found[0]["device"] is None and found[0]["port"] is None


def test_ipc_lock_missing_without_the_mask_says_it_is_unknown():
    found = findings.host_findings(DEVICES, _host(False, SMALL))
    assert "CapEff unknown" in found[0]["message"]


def test_a_limit_that_does_not_bind_is_not_reported_as_a_failure():
    found = findings.host_findings(DEVICES, _host(True, SMALL, ROOT_CAPS))
    assert "holds CAP_IPC_LOCK" in found[0]["message"]
    assert "fail" not in found[0]["message"]


# --- gather -----------------------------------------------------------------------

class _Files(object):
    """A transport that has the given files and no binaries; records what it reads."""

    remote = False
    name = "files"

    def __init__(self, files):
        self.files = files
        self.reads = []

    def which(self, name):
        return None

    def read_file(self, path):
        self.reads.append(path)
        return self.files.get(path)

    def run(self, argv, timeout, capture=None):  # pylint: disable=unused-argument
        raise AssertionError("probe_host runs no command: %r" % (argv,))


@pytest.mark.parametrize("cap,ipc_lock", [(DOCKER_DEFAULT, False), (DOCKER_WITH_IPC_LOCK, True)])
def test_probe_host_puts_ipc_lock_into_the_host_facts(monkeypatch, cap, ipc_lock):
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    transport = _Files({"/proc/self/limits": LIMITS_64K, "/proc/self/status": _status(cap)})
    host = gather.probe_host(transport)
    assert host["ipc_lock"] is ipc_lock and host["cap_eff"] == int(cap, 16)
    assert host["memlock"] == SMALL
    assert "/proc/self/status" in transport.reads


def test_probe_host_without_a_status_file_leaves_ipc_lock_unknown(monkeypatch):
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    host = gather.probe_host(_Files({"/proc/self/limits": LIMITS_64K}))
    assert host["ipc_lock"] is None and host["cap_eff"] is None


class _Pod(runner.KubectlTransport):
    """A kubectl transport whose pod answers ``cat -- PATH`` from a dict and has no binaries."""

    def __init__(self, files):
        runner.KubectlTransport.__init__(self, pod="p1", namespace="ns", binary="/usr/bin/kubectl")
        self.files = files
        self.plain = []

    def run_plain(self, argv, timeout):
        self.plain.append(list(argv))
        if argv[:2] == ["cat", "--"] and argv[2] in self.files:
            return {"rc": 0, "stdout": self.files[argv[2]], "stderr": "", "timed_out": False}
        return {"rc": 1, "stdout": "", "stderr": "", "timed_out": False}


def test_probe_host_reads_capeff_inside_the_pod():
    pod = _Pod({"/proc/self/limits": LIMITS_64K, "/proc/self/status": _status(DOCKER_DEFAULT)})
    host = gather.probe_host(pod)
    assert ["cat", "--", "/proc/self/status"] in pod.plain
    assert host["ipc_lock"] is False and host["in_container"] is True
    codes = [(f["severity"], f["code"]) for f in findings.host_findings(DEVICES, dict(host, perftest="x"))]
    assert codes == [("error", "ipc_lock_missing")]


def test_discover_returns_ipc_lock_in_its_host_section():
    host = {"memlock": SMALL, "ipc_lock": False, "cap_eff": 0xa80425fb, "perftest": "/usr/bin/ib_write_bw"}
    facts = rd.discover({}, host)
    assert facts["host"]["ipc_lock"] is False
    assert "ipc_lock_missing" in [f["code"] for f in facts["findings"]]
    assert facts["host"]["memlock"] == SMALL
