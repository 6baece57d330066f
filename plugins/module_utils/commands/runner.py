# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one private command runner: argv lists only, deadlines, no orphans.

Every command a module runs goes through a transport built here. A transport
runs an argv list with a deadline (``run``) or starts one in the background
with a deadline it cannot outlive (``start``). Processes are started in their
own session so the whole process group is killed on timeout or stop.
What a command printed is kept bounded (``output_capture``): its head and tail, or a document whole up to
a limit; the result says ``output_too_large`` with the sizes when more was printed.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import contextlib
import os
import select
import shutil
import signal
import stat
import subprocess
import tempfile
import threading
import time
import math

from ansible_collections.clusterops.commcheck.plugins.module_utils.options import option_rules
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.output_capture import (
    DOCUMENT,
    DOCUMENT_MAX_BYTES,
    OUTPUT_STOP_BYTES,
    TOOL_OUTPUT,
    read_bounded,
    text_of,
)
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import run_lock

KILL_GRACE_S = 3
# A process that is stopped (T, t) or in uninterruptible sleep (D) when its deadline comes was not waiting for
# anyone: it hung on its own host (a stopped process, a wedged driver). Its peer's side cannot tell that.
STUCK_STATES = {"T": "stopped", "t": "stopped", "D": "stuck in the kernel (uninterruptible sleep)"}
SYSTEM_PATHS = ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin")


class CommandError(Exception):
    """A command could not be started at all (missing binary, bad argv).

    ``argv``: the command line that did not start, when there is one; ``program``: the program the kernel
    refused (``argv[0]``); ``error``: the OSError's text (No such file or directory, Permission denied,
    Exec format error...).
    """

    def __init__(self, message, argv=None, error=None):
        Exception.__init__(self, message)
        self.argv = list(argv) if argv else []
        self.program = self.argv[0] if self.argv else None
        self.error = error


class ControllerGone(CommandError):
    """A command was stopped because nobody waits for the module any more (``controller_gone``)."""


def fail_not_started(module, exc, what=None, **extra):
    """Fail the task for a command that could not start: ``msg`` names the program and the error, no traceback."""
    msg = "%s: %s" % (what, exc) if what else str(exc)
    module.fail_json(msg=msg, rc=None, stdout="", stderr=str(exc), cmd=exc.argv, **extra)


@contextlib.contextmanager
def commands_fail_task(module, what=None):
    """Run a module's work inside this: a program that cannot start (CommandError) fails the task cleanly."""
    try:
        yield
    except CommandError as exc:
        fail_not_started(module, exc, what)


def check_argv(argv):
    """Refuse anything that is not a non-empty list of strings without NULs."""
    if not isinstance(argv, (list, tuple)) or not argv:
        raise CommandError("command must be a non-empty argv list, got %r" % (argv,))
    for item in argv:
        if not isinstance(item, str):
            raise CommandError("argv items must be strings, got %r in %r" % (item, argv))
        if "\x00" in item:
            raise CommandError("argv item contains a NUL byte: %r" % (item,))
    return list(argv)


def command_env(extra=None):
    """The environment commands run with: the caller's, LC_ALL=C, plus extra."""
    env = dict(os.environ)
    env["LC_ALL"] = "C"
    env["LANG"] = "C"
    for key, value in (extra or {}).items():
        env[str(key)] = str(value)
    return env


def _kill_group(proc, sig):
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError, OSError):
        pass


def stop_process(proc, grace=KILL_GRACE_S):
    """TERM the process group, then KILL it if it is still there after grace seconds."""
    if proc.poll() is None:
        _kill_group(proc, signal.SIGTERM)
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            pass
    # Children may survive their leader; the group id stays valid while any does.
    _kill_group(proc, signal.SIGKILL)
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        pass


def _stat_fields(path):
    """(state, pgrp) from a /proc/PID/stat file, or None (gone, unreadable); the command name may hold spaces
    and parentheses, so the fields are read after its last ')'."""
    try:
        with open(path) as handle:
            text = handle.read()
    except (OSError, UnicodeDecodeError):
        return None
    fields = text[text.rfind(")") + 1:].split()
    if len(fields) < 3 or not fields[2].lstrip("-").isdigit():
        return None
    return fields[0], int(fields[2])


def group_stuck(pgid, proc_root="/proc"):
    """How a process of group ``pgid`` is stuck (``STUCK_STATES``' words), or None when none is (or there is no
    /proc to read: the answer is then unknown, never a guess)."""
    try:
        pids = [name for name in os.listdir(proc_root) if name.isdigit()]
    except OSError:
        return None
    for pid in pids:
        fields = _stat_fields(os.path.join(proc_root, pid, "stat"))
        if fields and fields[1] == pgid and fields[0] in STUCK_STATES:
            return STUCK_STATES[fields[0]]
    return None


def _result(argv, rc, stdout, stderr, timed_out, started, stuck=None):
    result = {
        # a credential file's path (kubectl's --kubeconfig) is never shown in a result
        "cmd": option_rules.withhold_secret_paths(argv),
        "rc": rc,
        "stdout": stdout,
        "stderr": stderr,
        "timed_out": timed_out,
        "duration_s": round(time.monotonic() - started, 3),
    }
    if stuck:
        result["stuck"] = stuck
    return result


_LIVE = set()
# While a command is being started its process already runs but is not in _LIVE
# yet: a cleanup signal arriving then is held back until it is (see _starting).
_STARTING = [0]
_HELD_SIGNALS = []
# Commands may be started from several threads at once (the collective module's bisection rounds).
_STARTING_LOCK = threading.Lock()


def stop_all():
    """Stop every background command this process started and has not collected."""
    for job in list(_LIVE):
        job.stop()


def controller_gone(fd=1):
    """True when ``fd`` (the module's stdout) is a pipe whose reader has gone away.

    A module's stdout is the pipe its result goes back through (the ssh
    session, the async wrapper, the local worker). When ansible-playbook is
    interrupted the ssh session ends without a signal to the module; the
    closed pipe is how the module can tell nobody waits for it any more.
    Anything else (a file, a terminal, /dev/null, an unusable fd) is False.
    """
    try:
        if not stat.S_ISFIFO(os.fstat(fd).st_mode):
            return False
        poller = select.poll()
        poller.register(fd, 0)
        return any(events & (select.POLLERR | select.POLLHUP) for _fd, events in poller.poll(0))
    except (OSError, ValueError, AttributeError):
        return False


def install_cleanup_handlers():
    """Make SIGTERM / SIGHUP / SIGINT stop every started command before exiting.

    Ansible's async wrapper and an interrupted ssh session end a module with
    these signals; our children live in their own sessions and would survive.
    """
    def _handler(signum, frame):
        if _STARTING[0]:
            _HELD_SIGNALS.append(signum)
            return
        _stop_all_and_exit(signum)

    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        try:
            signal.signal(sig, _handler)
        except (ValueError, OSError):
            pass


def _stop_all_and_exit(signum):
    stop_all()
    main = threading.main_thread()
    if threading.current_thread() is not main:
        # SystemExit here would end this thread only, and the module would go on without its commands (a
        # collective's bisection round starts them from threads): the main thread's handler ends the module
        signal.pthread_kill(main.ident, signum)
        return
    raise SystemExit(128 + signum)


@contextlib.contextmanager
def _starting():
    """Start a command inside this: a cleanup signal meanwhile stops it too, once it is in _LIVE."""
    with _STARTING_LOCK:
        _STARTING[0] += 1
    try:
        yield
    finally:
        with _STARTING_LOCK:
            _STARTING[0] -= 1
            held = _HELD_SIGNALS.pop() if _HELD_SIGNALS and not _STARTING[0] else None
        if held is not None:
            _stop_all_and_exit(held)


class Background:
    """A command running in its own process group, with a hard deadline."""

    def __init__(self, argv, timeout, env=None, cwd=None, capture=None):
        self.argv = check_argv(argv)
        self.capture = capture or TOOL_OUTPUT
        self.output_stopped = False
        self.timeout = float(timeout)
        self.started = time.monotonic()
        self.deadline = self.started + self.timeout
        self._out = tempfile.TemporaryFile()
        self._err = tempfile.TemporaryFile()
        self.timed_out = False
        self.stuck = None
        with _starting():
            try:
                self.proc = subprocess.Popen(
                    self.argv, stdin=subprocess.DEVNULL, stdout=self._out, stderr=self._err,
                    env=command_env(env), cwd=cwd, start_new_session=True, close_fds=True)
            except OSError as exc:
                self._out.close()
                self._err.close()
                raise CommandError("cannot start %s: %s" % (self.argv[0], exc.strerror or exc), self.argv,
                                   exc.strerror or str(exc))
            _LIVE.add(self)
        # the run's lock: its lease renewed, and this group noted, so a run after a kill -9 sees it
        run_lock.note_group(self.proc.pid, self.timeout, self.argv)

    @property
    def pid(self):
        return self.proc.pid

    def _output_overflow(self):
        """Stop a command whose output passed OUTPUT_STOP_BYTES (it is garbage, and it fills the disk)."""
        try:
            size = os.fstat(self._out.fileno()).st_size + os.fstat(self._err.fileno()).st_size
        except (OSError, ValueError):
            return
        if size > OUTPUT_STOP_BYTES and self.proc.poll() is None:
            self.output_stopped = True
            stop_process(self.proc)

    def poll(self):
        self._output_overflow()
        if self.proc.poll() is None and time.monotonic() >= self.deadline:
            self.timed_out = True
            self.stuck = group_stuck(self.proc.pid)
            stop_process(self.proc)
        return self.proc.poll()

    def wait(self, timeout=None):
        """Wait until exit, the deadline, or timeout seconds; return rc or None."""
        limit = self.deadline if timeout is None else min(self.deadline, time.monotonic() + timeout)
        while self.proc.poll() is None and time.monotonic() < limit:
            try:
                self.proc.wait(timeout=max(0.01, min(0.2, limit - time.monotonic())))
            except subprocess.TimeoutExpired:
                self._output_overflow()
        return self.poll()

    def stop(self):
        stop_process(self.proc)
        if self in _LIVE:
            run_lock.forget_group(self.proc.pid)
        _LIVE.discard(self)

    def result(self):
        """Stop if still running, then collect output as a result dict."""
        self.stop()
        stdout, out_size, out_cut = read_bounded(self._out, self.capture)
        stderr, err_size, err_cut = read_bounded(self._err, self.capture)
        self._out.close()
        self._err.close()
        result = _result(self.argv, self.proc.returncode, stdout, stderr, self.timed_out, self.started, self.stuck)
        if out_cut or err_cut or self.output_stopped:
            result["output_too_large"] = True
            result["output_bytes"] = {"stdout": out_size, "stderr": err_size}
        if self.output_stopped:
            result["output_stopped"] = True
        return result


# How often a command that ``run`` waits for looks whether the controller went away.
ABANDON_POLL_S = 0.5


def wait_watched(job, abandoned=None):
    """Wait for ``job`` to end or reach its deadline; with ``abandoned`` (``controller_gone``) stop it as soon as
    that turns true. Returns True when it was stopped so."""
    if abandoned is None:
        job.wait()
        return False
    while job.wait(ABANDON_POLL_S) is None:
        if abandoned():
            job.stop()
            return True
    return False


class HostTransport:
    """Runs commands on the machine the module runs on.

    ``abandoned``: None, or a callable (``controller_gone``) that ``run`` asks while it waits: a command still
    running when it turns true is stopped, and its result says ``abandoned: true``.
    """

    name = "host"
    remote = False
    abandoned = None

    def __init__(self, path_prefix=None):
        self.path_prefix = list(path_prefix or [])

    def which(self, name):
        """Full path of an executable, or None (PATH, then the sbin directories)."""
        if os.sep in name:
            return name if os.access(name, os.X_OK) else None
        search = self.path_prefix + os.environ.get("PATH", "").split(os.pathsep) + list(SYSTEM_PATHS)
        return shutil.which(name, path=os.pathsep.join(p for p in search if p))

    def wrap(self, argv, timeout):
        """The argv as executed: under coreutils timeout when there is one.

        The Python-side deadline already kills the group; timeout(1) also holds
        when this module process itself is killed with SIGKILL.
        """
        argv = check_argv(argv)
        timeout_bin = self.which("timeout")
        if not timeout_bin:
            return argv
        return [timeout_bin, "-k", str(KILL_GRACE_S), str(int(math.ceil(timeout)) + 1)] + argv

    def run(self, argv, timeout, env=None, cwd=None, capture=None):
        """Run argv to completion or its deadline; return a result dict, never raise on rc.

        ``capture``: what is kept of its output (TOOL_OUTPUT when None, DOCUMENT, ``filtered_output``)."""
        job = self.start(argv, timeout, env=env, cwd=cwd, capture=capture)
        gone = wait_watched(job, self.abandoned)
        return dict(job.result(), abandoned=True) if gone else job.result()

    def start(self, argv, timeout, env=None, cwd=None, capture=None):
        """Start argv in the background; it is killed at its deadline at the latest."""
        return Background(self.wrap(argv, timeout), timeout, env=env, cwd=cwd, capture=capture)

    def read_file(self, path, default=None):
        """A file's text (DOCUMENT_MAX_BYTES of it at most); ``default`` when it cannot be read or is not text
        (see :func:`text_of`)."""
        try:
            with open(path, "rb") as handle:
                text = text_of(handle.read(DOCUMENT_MAX_BYTES))
        except (IOError, OSError):
            return default
        return default if text is None else text


# The remote side of a kubectl exec: print our PID (the process group that
# timeout(1) leads after exec), then run the argv under a hard deadline. The
# script is constant; the deadline and the argv arrive as positional args.
# Every process it starts inherits REMOTE_MARKER: the cleanup of pods the collection did not create
# (kubernetes/k8s_existing.STOP_SH) stops exactly those, never a job's own processes.
REMOTE_MARKER = "COMMCHECK_REMOTE_WRAPPER=1"
_REMOTE_WRAPPER_SH = ('echo "commcheck-remote-pid $$"; k=$1; t=$2; shift 2; %s; export %s; '
                      'exec timeout -k "$k" "$t" "$@"' % (REMOTE_MARKER, REMOTE_MARKER.split("=", maxsplit=1)[0]))
_PID_MARKER = "commcheck-remote-pid "
# How long stop() waits for the PID line of a kubectl exec that runs: the remote side may already run while
# kubectl has not relayed that line yet (a busy controller), and it would outlive the run unless killed.
PID_WAIT_S = 10


def _strip_pid_line(stdout):
    """Remove the wrapper's PID line; return (pid or None, rest of stdout)."""
    if stdout.startswith(_PID_MARKER):
        first, rest = stdout.split("\n", 1) if "\n" in stdout else (stdout, "")
        try:
            return int(first[len(_PID_MARKER):].strip()), rest
        except ValueError:
            return None, rest
    return None, stdout


def _background(make, argv):
    """A command started by the kubectl transport; one that cannot start names its argv without the kubeconfig."""
    try:
        return make()
    except CommandError as exc:
        raise CommandError(str(exc), option_rules.withhold_secret_paths(argv), exc.error)


class RemoteBackground(Background):
    """A kubectl exec whose remote process group is killed on stop."""

    def __init__(self, transport, argv, timeout, env=None, capture=None):
        self.transport = transport
        Background.__init__(self, argv, timeout, env=env, capture=capture)

    def remote_pid(self):
        self._out.flush()
        pos = self._out.tell()
        self._out.seek(0)
        head = self._out.read(64).decode("utf-8", "replace")
        self._out.seek(pos)
        return _strip_pid_line(head)[0]

    def wait_remote_pid(self, within):
        """The remote PID, waiting up to ``within`` seconds for its line while the kubectl exec still runs."""
        limit = time.monotonic() + within
        pid = self.remote_pid()
        while pid is None and self.proc.poll() is None and time.monotonic() < limit:
            time.sleep(0.05)
            pid = self.remote_pid()
        return pid

    def stop(self):
        if self.proc.poll() is None:
            pid = self.wait_remote_pid(PID_WAIT_S)
            if pid:
                self.transport.run_plain(["kill", "-TERM", "--", "-%d" % pid], 10)
        Background.stop(self)

    def result(self):
        res = Background.result(self)
        res["remote_pid"], res["stdout"] = _strip_pid_line(res["stdout"])
        return res


def check_dns_label(option, value):
    """A DNS-1123 label (namespaces, containers): a Kubernetes name without '.', at most 63 characters."""
    return option_rules.check_name(option, value, "k8s_label")


def check_kubectl_settings(pod, namespace="default", container=None, context=None, kubeconfig=None, binary=None,
                           label="kubectl", which=None, names=None, pod_required=True):
    """Raise option_rules.OptionError naming the first setting that must not reach kubectl's command line.

    ``pod`` a Kubernetes name; ``namespace`` / ``container`` DNS-1123 labels;
    ``context`` a context name; ``kubeconfig`` an absolute path (its problems
    never quote it); none of them may start with '-'. ``binary``: an absolute
    path or a bare command name whose file name is kubectl's; with ``which`` (a
    lookup on this host) it must also exist. A problem names
    ``<label>.<setting>``, or ``names[setting]`` where a module has an option
    of its own for the setting. ``pod_required=False``: a pod is checked when
    given (the settings of a transport that is not used are checked all the same).
    """
    def name(setting):
        return (names or {}).get(setting) or "%s.%s" % (label, setting)

    if pod is not None or pod_required:
        option_rules.check_name(name("pod"), pod, "k8s_name")
    check_dns_label(name("namespace"), namespace)
    if container is not None:
        check_dns_label(name("container"), container)
    if context is not None:
        option_rules.check_name(name("context"), context, "k8s_context")
    if kubeconfig:
        option_rules.check_config_path(name("kubeconfig"), kubeconfig, sensitive=True)
    if binary:
        option_rules.check_program(name("binary"), binary, "kubectl", which=which, must_exist=which is not None)


class KubectlTransport(HostTransport):
    """Runs commands inside a pod with ``kubectl exec``, from the controller.

    The argv runs under timeout(1) inside the pod, so a command cannot outlive
    its deadline even when the local kubectl is killed; ``stop`` also kills the
    remote process group.
    """

    name = "kubectl"
    remote = True

    def __init__(self, pod, namespace="default", container=None, context=None,
                 kubeconfig=None, binary=None):
        HostTransport.__init__(self)
        if not pod:
            raise CommandError("the kubectl transport needs a pod name")
        check_kubectl_settings(pod, namespace or "default", container, context, kubeconfig, binary)
        self.pod = pod
        self.namespace = namespace or "default"
        self.container = container
        self.context = context
        self.kubeconfig = kubeconfig
        self.binary = binary
        self._which_cache = {}

    def kubectl_binary(self):
        """The kubectl this transport runs: the one given, else the one on this host's PATH."""
        return self.binary or HostTransport.which(self, "kubectl") or "kubectl"

    def kubectl_argv(self):
        """``kubectl [--kubeconfig F] [--context C] -n NS exec POD [-c C] --``."""
        argv = [self.kubectl_binary()]
        if self.kubeconfig:
            argv += ["--kubeconfig", self.kubeconfig]
        if self.context:
            argv += ["--context", self.context]
        argv += ["-n", self.namespace, "exec", self.pod]
        if self.container:
            argv += ["-c", self.container]
        return argv + ["--"]

    def wrap(self, argv, timeout):
        argv = check_argv(argv)
        deadline = str(int(math.ceil(timeout)) + 1)
        return self.kubectl_argv() + ["sh", "-c", _REMOTE_WRAPPER_SH, "sh", str(KILL_GRACE_S), deadline] + argv

    def run_plain(self, argv, timeout):
        """Run argv in the pod without the deadline wrapper (kill, cat, command -v); its output is a DOCUMENT."""
        full = self.kubectl_argv() + check_argv(argv)
        job = _background(lambda: Background(full, timeout + 5, capture=DOCUMENT), full)
        job.wait()
        return job.result()

    def start(self, argv, timeout, env=None, cwd=None, capture=None):
        if env:
            argv = ["env"] + ["%s=%s" % (k, v) for k, v in sorted(env.items())] + list(argv)
        if cwd:
            raise CommandError("the kubectl transport does not support cwd")
        # The local kubectl gets a little longer than the remote deadline so
        # the remote timeout(1) acts first and its exit status comes back.
        full = self.wrap(argv, timeout)
        return _background(lambda: RemoteBackground(self, full, timeout + KILL_GRACE_S + 5, capture=capture), full)

    def run(self, argv, timeout, env=None, cwd=None, capture=None):
        job = self.start(argv, timeout, env=env, cwd=cwd, capture=capture)
        gone = wait_watched(job, self.abandoned)
        res = dict(job.result(), abandoned=True) if gone else job.result()
        res["cmd"] = list(argv)
        res["exec_cmd"] = option_rules.withhold_secret_paths(job.argv)
        # kubectl exits 124/137 through the remote timeout(1); the local
        # deadline only trips when the API server or the pod does not answer.
        if res["rc"] in (124, 137) and not res["timed_out"]:
            res["timed_out"] = True
        return res

    def which(self, name):
        if name not in self._which_cache:
            res = self.run_plain(["sh", "-c", 'command -v "$1"', "sh", name], 30)
            path = res["stdout"].strip().splitlines()
            self._which_cache[name] = path[-1] if res["rc"] == 0 and path else None
        return self._which_cache[name]

    def read_file(self, path, default=None):
        res = self.run_plain(["cat", "--", path], 30)
        return res["stdout"] if res["rc"] == 0 else default
