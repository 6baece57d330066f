# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Shared fixtures for lab tests: ``lab_factory`` and ``lab4``.

``lab_factory(base, hosts=4, rails=1, rate=None, tiers=1, per_leaf=None)`` brings up a lab (network
namespace hosts with sshd, see tests/lab/README.md) once per session and
returns a :class:`LabHandle` (``.name``, ``.inventory``, ``.hosts``,
``.slow()``, ``.heal()``, ``.pids()``, ``.exec()``, ``.ansible_playbook()``,
``.ansible()``). The lab's real name is ``base`` plus this pytest process id,
so test runs of several people on one machine do not clash; labs left by a
crashed earlier run (their owner process is gone) and a lab of the same
name are taken down before ``up``. Every lab is taken down at session end,
also on Ctrl-C / SIGTERM (and, as a last resort, at interpreter exit).

Tests that use these fixtures are marked ``lab`` automatically; they are
skipped with a reason when not root or when network namespaces do not work.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import atexit
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LAB_DIR = os.path.join(REPO, "tests", "lab")
if LAB_DIR not in sys.path:
    sys.path.insert(0, LAB_DIR)

import lab as lablib  # noqa: E402  pylint: disable=wrong-import-position
from lab_checks import scratch_dir  # noqa: E402  pylint: disable=wrong-import-position

VENV_BIN = os.path.join(REPO, ".venv", "bin")
LAB_FIXTURES = ("lab_factory", "lab4")
_CREATED = []


def _bin(name):
    path = os.path.join(VENV_BIN, name)
    return path if os.path.exists(path) else (shutil.which(name) or name)


def lab_unavailable():
    """Why the lab cannot run here (None when it can)."""
    return lablib.unavailable()


class LabHandle(object):
    """What tests get: a lab that is up, plus ways to drive it."""

    def __init__(self, lab):
        self.lab = lab
        self.name = lab.name
        self.dir = lab.dir
        self.inventory = lab.inventory
        self.ansible_cfg = lab.ansible_cfg
        self.ssh_config = lab.ssh_config
        self.hosts = lab.hosts
        self.port_base = lab.port_base
        self.rate = lab.rate
        self.rate_gbps = lablib.rate_gbps(lab.rate) if lab.rate else None
        self.rails = len(lab.state["rails"])
        self._ports = 0

    def address(self, host, rail=0):
        return self.lab.address(host, rail)

    def next_port(self):
        """A TCP port of this lab's range not handed out before in this session."""
        self._ports += 1
        return self.port_base + (self._ports % 100)

    @contextlib.contextmanager
    def slowed(self, host, rate="200mbit", rail=None):
        """with lab.slowed("h2"): ... -- slow a host, heal it afterwards."""
        self.slow(host, rail=rail, rate=rate)
        try:
            yield self
        finally:
            self.heal(host)

    def host(self, host):
        return self.lab.host(host)

    def environment(self, host):
        return self.lab.environment(host)

    def slow(self, host, rail=None, rate="200mbit"):
        self.lab.slow(host, rate, rail=rail)

    def heal(self, host=None):
        self.lab.heal(host)

    def leaf(self, rail, leaf):
        """A two-tier lab's leaf of ``rail`` (its number from 1, or its name): {leaf, name, hosts, ...}."""
        return self.lab.leaf(rail, leaf)

    def slow_uplink(self, rail, leaf, rate="100mbit", direction="both"):
        self.lab.slow_uplink(rail, leaf, rate, direction=direction)

    def slow_leaf(self, rail, leaf, rate="100mbit"):
        self.lab.slow_leaf(rail, leaf, rate)

    def pids(self, include_infra=False):
        return self.lab.pids(include_infra=include_infra)

    def exec(self, host, argv, timeout=120, check=False, env=None):
        return self.lab.exec(host, argv, timeout=timeout, check=check, env=env)

    def popen(self, host, argv, env=None, **kwargs):
        return self.lab.popen(host, argv, env=env, **kwargs)

    def ssh(self, host, argv, timeout=60):
        """Run argv on host over real ssh (argv quoted for the remote shell)."""
        import shlex  # pylint: disable=import-outside-toplevel
        remote = " ".join(shlex.quote(a) for a in argv)
        return subprocess.run(["ssh", "-F", self.ssh_config, host, remote], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, universal_newlines=True, timeout=timeout, check=False)

    def env(self, extra=None):
        """Environment for ansible commands against this lab."""
        return self.lab.ansible_env(extra)

    def ansible_playbook(self, playbook, extra_vars=None, limit=None, tags=None, check=False,
                         verbosity=0, args=(), env=None, timeout=900, on_line=None):
        """Run real ansible-playbook on this lab; return the CompletedProcess.

        ``on_line(line)`` sees each line of the output as it comes (stderr joins stdout then): a test that
        changes the lab at a step of the run waits for that step's banner, never for a time.
        """
        argv = [_bin("ansible-playbook"), "-i", self.inventory]
        if extra_vars:
            fd, path = tempfile.mkstemp(prefix="extra-vars-", suffix=".json", dir=scratch_dir("extra-vars"))
            with os.fdopen(fd, "w") as handle:
                json.dump(extra_vars, handle)
            argv += ["-e", "@" + path]
        if limit:
            argv += ["--limit", limit if isinstance(limit, str) else ",".join(limit)]
        if tags:
            argv += ["--tags", tags if isinstance(tags, str) else ",".join(tags)]
        if check:
            argv.append("--check")
        if verbosity:
            argv.append("-" + "v" * int(verbosity))
        argv += list(args) + [playbook]
        if on_line is None:
            return subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  universal_newlines=True, env=self.env(env), cwd=REPO,
                                  timeout=timeout, check=False)
        return _streamed(argv, self.env(env), timeout, on_line)

    def ansible(self, pattern, module, module_args=None, args=(), env=None, timeout=300):
        """Run an ad-hoc `ansible` command on this lab; return the CompletedProcess."""
        argv = [_bin("ansible"), "-i", self.inventory, pattern, "-m", module]
        if module_args:
            argv += ["-a", module_args if isinstance(module_args, str) else json.dumps(module_args)]
        argv += list(args)
        return subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True, env=self.env(env), cwd=REPO,
                              timeout=timeout, check=False)

    def down(self):
        lablib.down(self.name)

    def __repr__(self):
        return "<lab %s: %d hosts, %d rails, %s>" % (self.name, len(self.hosts), self.rails, self.rate)


def _streamed(argv, env, timeout, on_line):
    """Run argv, calling on_line with each line of its output; killed after timeout seconds."""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True,
                            env=env, cwd=REPO)
    bound = threading.Timer(timeout, proc.kill)
    bound.start()
    out = []
    try:
        for line in proc.stdout:
            out.append(line)
            on_line(line)
        proc.wait()
    finally:
        bound.cancel()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return subprocess.CompletedProcess(argv, proc.returncode, "".join(out), "")


def _owner_alive(pid):
    if not pid:
        return True
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def sweep_stale_labs():
    """Take down labs whose owning pytest process is gone (crashed runs)."""
    for name in lablib.list_labs():
        try:
            state = lablib.Lab.load(name).state
        except lablib.LabError:
            continue
        if state.get("owner_pid") and not _owner_alive(state["owner_pid"]):
            lablib.down(name)


def _down_all():
    while _CREATED:
        name = _CREATED.pop()
        try:
            lablib.down(name)
        except Exception:  # pylint: disable=broad-except
            pass


def _on_signal(signum, _frame):
    raise KeyboardInterrupt("signal %d" % signum)


def lab_name(base):
    """base + this process id: unique per pytest process, <= 12 characters."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    name = "%s%d" % (base, os.getpid())
    if worker:
        name = "%s%s%d" % (base, worker.replace("gw", "w"), os.getpid() % 10000)
    return name[:12]


# The files whose tests take longest in all (their shared lab runs), longest first, from the fast tier's
# --durations on the 2-core machine (docs/benchmarks.md, "make test"). xdist hands out files in collection order:
# started first, the long ones overlap the rest instead of starting last, alone, after the short ones are done.
LONGEST_FIRST = ("test_k8s_lab", "test_ansible_runner_lab", "test_slices_lab", "test_reliability_lab",
                 "test_accuracy_lab", "test_oneclick_lab", "test_options_end_to_end_lab", "test_edges_inventory_lab",
                 "test_edges_history_lab", "test_edges_locks_lab", "test_edges_bounded_lab")


def longest_first(items):
    """``items`` with the tests of LONGEST_FIRST's files first, in its order; the others after, as collected."""
    rank = dict((name, num) for num, name in enumerate(LONGEST_FIRST))

    def key(numbered):
        num, item = numbered
        module = os.path.splitext(os.path.basename(str(item.fspath)))[0]
        return (rank.get(module, len(rank)), num)
    return [item for _num, item in sorted(enumerate(items), key=key)]


def pytest_collection_modifyitems(config, items):  # pylint: disable=unused-argument
    for item in items:
        if set(getattr(item, "fixturenames", ())) & set(LAB_FIXTURES):
            item.add_marker(pytest.mark.lab)
    items[:] = longest_first(items)


@pytest.fixture(scope="session")
def lab_available():
    reason = lab_unavailable()
    if reason:
        pytest.skip(reason)
    return True


@pytest.fixture(scope="session")
def lab_factory(lab_available):  # pylint: disable=redefined-outer-name,unused-argument
    """Bring up labs for this session: lab_factory(base, hosts=4, rails=1, rate=None, tiers=1, per_leaf=None)."""
    labs = {}
    old = {}
    for sig in (signal.SIGTERM, signal.SIGHUP):
        try:
            old[sig] = signal.signal(sig, _on_signal)
        except (ValueError, OSError):
            pass
    atexit.register(_down_all)
    sweep_stale_labs()

    def factory(base, hosts=4, rails=1, rate=None, tiers=1, per_leaf=None):
        key = (base, int(hosts), int(rails), rate, int(tiers), per_leaf)
        if key in labs:
            return labs[key]
        name = lab_name(base)
        lablib.down(name)   # a lab of that name from a crashed earlier run
        _CREATED.append(name)
        lab = lablib.up(name, hosts, rails, rate=rate or lablib.DEFAULT_RATE, owner_pid=os.getpid(), tiers=tiers,
                        per_leaf=per_leaf)
        labs[key] = LabHandle(lab)
        return labs[key]

    try:
        yield factory
    finally:
        _down_all()
        for sig, handler in old.items():
            signal.signal(sig, handler)


@pytest.fixture(scope="session")
def lab4(lab_factory):  # pylint: disable=redefined-outer-name
    """A 4-host lab with 2 rails at the default nominal rate."""
    return lab_factory("lab4p", hosts=4, rails=2)
