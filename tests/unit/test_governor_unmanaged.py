# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The CPU governor where it cannot be written (a read-only /sys, no right to write, no cpufreq): the
``governor_unmanaged`` finding; and in pods, through the kubectl transport: switched where the pod may write."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import errno
import os
import shutil
import subprocess
import sys
import tempfile

import pytest

from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import cpu_governor as cg
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import pair_module as pm
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import finding_codes

HERE = os.path.dirname(os.path.abspath(__file__))
LAB = os.path.join(os.path.dirname(HERE), "lab")
if LAB not in sys.path:
    sys.path.insert(0, LAB)

import sysfs_tree  # noqa: E402  pylint: disable=wrong-import-position

BEFORE = ["powersave", "performance", "ondemand"]
# what a process that is not root runs as, when the tests run as root
NOBODY = ["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups"]


@pytest.fixture
def root():
    """An emulated sysfs tree that a process without privileges may read (a directory of its own, 0755)."""
    top = tempfile.mkdtemp(prefix="commcheck-gov-")
    os.chmod(top, 0o755)
    path = os.path.join(top, "sys")
    sysfs_tree.build_sysfs(path, [], cpus=BEFORE)
    yield path
    shutil.rmtree(top, True)


def governors(root_dir):
    out = []
    for cpu in range(len(BEFORE)):
        with open(os.path.join(root_dir, "devices/system/cpu/cpu%d/cpufreq/scaling_governor" % cpu)) as handle:
            out.append(handle.read().strip())
    return out


def refusing_opener(number):
    def opener(path, flags):
        raise OSError(number, os.strerror(number), path)
    return opener


class LocalPod(object):
    """The kubectl transport's ``run_plain`` as a pod runs it: the argv on this machine, as root (a privileged
    pod) or as nobody (a pod that may not write the governor files)."""

    name = "kubectl"
    namespace = "commcheck"
    pod = "commcheck-gpu-h1"

    def __init__(self, prefix=()):
        self.prefix = list(prefix) if os.geteuid() == 0 else []
        self.calls = []

    def run_plain(self, argv, timeout):
        self.calls.append(list(argv))
        proc = subprocess.run(self.prefix + list(argv), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True, timeout=timeout, check=False)
        return {"rc": proc.returncode, "stdout": proc.stdout, "stderr": proc.stderr}


@pytest.mark.parametrize("number, why", [(errno.EROFS, "read-only /sys"), (errno.EACCES, "not privileged"),
                                         (errno.EPERM, "not privileged"), (errno.EISDIR, None)])
def test_write_refusal_names_why_the_file_takes_no_write(root, number, why):
    path = os.path.join(root, "devices/system/cpu/cpu0/cpufreq/scaling_governor")
    assert cg.write_refusal(path, opener=refusing_opener(number)) == why


def test_write_refusal_of_a_writable_file_is_none_and_writes_nothing(root):
    assert cg.write_refusal(os.path.join(root, "devices/system/cpu/cpu0/cpufreq/scaling_governor")) is None
    assert governors(root) == BEFORE


def test_why_of_a_shell_message_in_a_pod():
    assert cg.why_of_message("sh: 1: cannot create /sys/x: Read-only file system") == "read-only /sys"
    assert cg.why_of_message("sh: 1: cannot create /sys/x: Permission denied") == "not privileged"
    assert cg.why_of_message("bash: /sys/x: Operation not permitted") == "not privileged"
    assert cg.why_of_message("sh: 1: cannot create /sys/x: No space left on device") == (
        "sh: 1: cannot create /sys/x: No space left on device")


def test_hold_on_a_read_only_sysfs_reports_governor_unmanaged_and_goes_on(root, monkeypatch):
    real = cg.write_refusal
    monkeypatch.setattr(cg, "write_refusal", lambda path: real(path, opener=refusing_opener(errno.EROFS)))
    hold = cg.GovernorHold("performance", root, "host", state_dir="", host="node7")
    warning = hold.take()
    assert "governor_unmanaged" in warning and "read-only /sys" in warning
    finding = hold.report["unmanaged"]
    assert finding["code"] == "governor_unmanaged" and finding["host"] == "node7"
    assert finding["governors"] == {"powersave": 1, "performance": 1, "ondemand": 1}
    assert finding["why"] == ["read-only /sys"] and "privileged" in finding["fix"] and "performance" in finding["fix"]
    assert hold.report["previous"] == {} and hold.report["skipped"].startswith("cannot write the scaling_governor of cpu0, cpu2")
    hold.release()
    assert hold.report["restored"] is False and governors(root) == BEFORE


def test_hold_without_cpufreq_reports_it_in_a_pod_and_quietly_on_a_host(tmp_path):
    bare = cg.GovernorHold("performance", str(tmp_path), "host", state_dir="")
    assert bare.take() is None and bare.report["unmanaged"]["why"] == ["no cpufreq"]
    pod = cg.GovernorHold("performance", str(tmp_path), "kubectl", state_dir="", files=cg.PodSysfs(LocalPod()),
                          host="commcheck/p")
    warning = pod.take()
    assert "no cpufreq" in warning and pod.report["unmanaged"]["governors"] == {}
    assert pod.report["unmanaged"]["host"] == "commcheck/p"


def test_privileged_pod_switches_the_governor_and_puts_it_back(root):
    transport = LocalPod()
    hold = cg.GovernorHold("performance", root, "kubectl", state_dir="", files=cg.PodSysfs(transport))
    assert hold.take() is None
    assert governors(root) == ["performance"] * 3
    assert hold.report["previous"] == {"cpu0": "powersave", "cpu2": "ondemand"} and "unmanaged" not in hold.report
    hold.release()
    assert governors(root) == BEFORE and hold.report["restored"] is True
    # argv lists, the sysfs root and the values as arguments of constant scripts
    assert all(call[:2] == ["sh", "-c"] and call[3] == "sh" for call in transport.calls)

    def path(cpu):
        return os.path.join(root, "devices/system/cpu/cpu%d/cpufreq/scaling_governor" % cpu)
    # one exec switches every CPU, one puts them back
    assert [call[4:] for call in transport.calls if call[2] == cg.POD_WRITE_SH] == [
        [path(0), "performance", path(2), "performance"], [path(0), "powersave", path(2), "ondemand"]]


def test_unprivileged_pod_reports_governor_unmanaged_and_writes_nothing(root):
    transport = LocalPod(prefix=NOBODY)
    hold = cg.GovernorHold("performance", root, "kubectl", state_dir="", files=cg.PodSysfs(transport),
                           host="commcheck/commcheck-gpu-h1")
    warning = hold.take()
    assert "governor_unmanaged" in warning
    assert hold.report["unmanaged"]["why"] == ["not privileged"]
    assert hold.report["unmanaged"]["governors"] == {"powersave": 1, "performance": 1, "ondemand": 1}
    assert not [call for call in transport.calls if call[2] == cg.POD_WRITE_SH]
    hold.release()
    assert governors(root) == BEFORE


def test_pod_write_that_does_not_stick_is_put_back_and_fails(root):
    class Forgetful(LocalPod):
        """A pod whose governor files read their old value after a write (a driver that refuses silently)."""

        def run_plain(self, argv, timeout):
            if argv[2] == cg.POD_WRITE_SH:
                self.calls.append(list(argv))
                return {"rc": 0, "stdout": "", "stderr": ""}
            return LocalPod.run_plain(self, argv, timeout)
    hold = cg.GovernorHold("performance", root, "kubectl", state_dir="", files=cg.PodSysfs(Forgetful()))
    with pytest.raises(cg.GovernorError, match="cpu0, cpu2"):
        hold.take()


def test_pair_modules_reach_a_pods_governor_files_through_kubectl():
    files = pm.governor_files(LocalPod())
    assert isinstance(files["files"], cg.PodSysfs) and files["host"] == "commcheck/commcheck-gpu-h1"
    # a pod's governors are not saved in the controller's lock directory, which every pod shares
    assert files["state_dir"] == ""


def test_governor_unmanaged_is_a_documented_finding():
    assert cg.UNMANAGED in finding_codes.CULPRIT_FINDINGS
    with open(os.path.join(os.path.dirname(os.path.dirname(HERE)), "docs", "troubleshooting.md")) as handle:
        assert "| `governor_unmanaged` |" in handle.read()
