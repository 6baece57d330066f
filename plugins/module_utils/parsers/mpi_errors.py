# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Errors of the launch layer (mpirun / orted / ssh / UCX / signals) shared by the
collective-test parsers, and the error collector they use.

One table of rules lives here so that parse_nccl_tests and parse_hccl_test
classify launcher failures the same way.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import re

from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.text import to_text

# code: (cause, fix) -- one line each, written for a cluster operator.
MPI_ERRORS = {
    "orted_not_found": (
        "The remote shell started by mpirun could not run the MPI daemon (Open MPI orted/prted, MPICH hydra_pmi_proxy): "
        "it is not on PATH (or its libraries are not on LD_LIBRARY_PATH) in non-interactive ssh sessions on a node.",
        "Install the same MPI at the same path on every node and run Open MPI's mpirun with --prefix <openmpi dir> "
        "(or export PATH/LD_LIBRARY_PATH in ~/.bashrc before its interactive-shell guard); "
        "also kill leftover MPI/test processes on the nodes.",
    ),
    "mpi_lib_missing": (
        "The test binary cannot load the MPI library (libmpi.so...) on at least one node.",
        "Add the MPI lib directory to LD_LIBRARY_PATH on every node and pass it with mpirun -x LD_LIBRARY_PATH, "
        "or rebuild the test against the MPI that is installed there.",
    ),
    "shared_lib_missing": (
        "A shared library the test binary needs (CUDA, NCCL, CANN, ...) is not found on at least one node.",
        "Install the library on every node (same version) and put its directory on LD_LIBRARY_PATH; "
        "forward it with mpirun -x LD_LIBRARY_PATH.",
    ),
    "mpirun_not_found": (
        "The MPI launcher (mpirun/mpiexec) is not installed or not on PATH where the test is started.",
        "Install Open MPI or MPICH on the launch node and put its bin directory on PATH.",
    ),
    "binary_not_found": (
        "The test executable does not exist or is not executable at the given path on at least one node.",
        "Build or copy the test binaries to the same path on every node (or use a shared file system) "
        "and check the path given to mpirun.",
    ),
    "hostname_unresolvable": (
        "A node name used by mpirun or by the test cannot be resolved to an address.",
        "Add every node's name and address to /etc/hosts (or DNS) on all nodes, including each node's own hostname.",
    ),
    "mpi_launch_failed": (
        "mpirun could not start or keep its daemons on all nodes (ssh failure, daemon died, "
        "lost connection, or not enough slots).",
        "Check passwordless ssh from the launch node to every node, the same MPI version everywhere, "
        "firewalls between nodes, and that hostfile slots cover -np.",
    ),
    "ucx_error": (
        "UCX (the MPI transport layer) failed on an RDMA device before the collective test started.",
        "Restrict MPI's UCX transport to usable devices (-x UCX_NET_DEVICES=<dev>:<port>, -x UCX_TLS=...) "
        "or run MPI over TCP (--mca pml ob1 --mca btl tcp,self); NCCL does not need UCX.",
    ),
    "segfault": (
        "A test process crashed with a segmentation fault (signal 11).",
        "If the stack shows ncclProxyService, give the pod/container the IPC_LOCK capability and an unlimited "
        "memlock limit; otherwise check that the NCCL/CUDA (or CANN) libraries match the ones the test was built with.",
    ),
    "bus_error": (
        "A test process died with a bus error (signal 7), typically when shared memory (/dev/shm) is too small.",
        "Enlarge /dev/shm (docker --shm-size, or an emptyDir with medium: Memory mounted at /dev/shm in the pod).",
    ),
    "process_killed": (
        "A test process was killed (signal 9): out-of-memory killer, a time limit, or an operator.",
        "Check dmesg/kubectl describe for OOMKilled, raise the pod/host memory limit or lower the maximum "
        "message size, and raise the job time limit.",
    ),
    "job_cancelled": (
        "Slurm cancelled the job or job step before the test finished: it reached its time limit (a collective "
        "that hung, or a limit too short for the sizes asked), a node failed, it was preempted, or someone ran "
        "scancel.",
        "Read the reason at the end of the '*** ... CANCELLED AT ... ***' line. TIME LIMIT: see where the output "
        "stops (before the first row: ranks never connected; inside the table: a collective hung) and bisect the "
        "nodes, or give the step more time (--time) or fewer sizes (-e, -n); NODE FAILURE: check that node "
        "(scontrol show node); PREEMPTION: run in a partition without preemption.",
    ),
    "rank_failed": (
        "At least one MPI rank exited with an error, which aborted the whole job.",
        "Look at the first error printed by the failing rank (listed with this result) and fix that node.",
    ),
    "unknown": (
        "The test failed for a reason this parser does not recognise.",
        "Read the raw output of the run.",
    ),
}

# Each rule: (code, needles, compiled regex, hint or None). First match wins. The regex is only
# tried on a line holding one of the needles (literal substrings every match contains): most
# lines hold none, and fifteen substring tests cost far less than fifteen regex searches.
_SHELL_NOT_FOUND = (
    r"(?:command not found|未找到命令|找不到命令|Befehl nicht gefunden|commande introuvable"
    r"|コマンドが見つかりません|comando non trovato|comando no encontrado|not found"
    r"|No such file or directory)"
)
_MPI_LIBS = r"lib(?:mpi|open-rte|open-pal|pmix|pmi|prrte|mpich|mpicxx|mpifort|ucp|ucs|uct|ucm|hcoll|psm)"
# Slurm's per-task verdicts: "srun: error: node7: task 3: Exited with exit code 1", "tasks 0-23: ...",
# "task 0: Out Of Memory" (yhrun is Tianhe's srun).
_SLURM_TASKS = r"\btasks?\s+[\d,\-\[\]]{1,200}:\s+"
_RULES = [
    ("orted_not_found", ("orted", "prted", "prte_daemon", "hydra_pmi_proxy"),
     re.compile(r"\b(?:orted|prted|prte_daemon|hydra_pmi_proxy)\s*:\s*(?:line \d+\s*:\s*)?" + _SHELL_NOT_FOUND), None),
    ("orted_not_found", ("died unexpectedly with status 127",),
     re.compile(r"daemon \(pid \w+\) died unexpectedly with status 127\b"), None),
    ("mpi_lib_missing", ("error while loading shared libraries",),
     re.compile(r"error while loading shared libraries:\s*" + _MPI_LIBS + r"\S*"), None),
    ("shared_lib_missing", ("error while loading shared libraries",),
     re.compile(r"error while loading shared libraries:\s*\S+"), None),
    ("mpirun_not_found", ("mpirun", "mpiexec", "orterun", "prterun"),
     re.compile(r"\b(?:mpirun|mpiexec|mpiexec\.hydra|orterun|prterun)\s*:\s*(?:line \d+\s*:\s*)?"
                + _SHELL_NOT_FOUND), None),
    ("binary_not_found", ("was unable to find the specified executable file",
                          "could not access or execute an executable", "execvp error on file", "_perf", "_test"),
     re.compile(r"was unable to find the specified executable file"
                r"|could not access or execute an executable"
                r"|execvp error on file"
                r"|\b[\w.\-/]{0,200}_(?:perf|test)(?:_mpi)?\s*:\s*(?:line \d+\s*:\s*)?" + _SHELL_NOT_FOUND), None),
    ("hostname_unresolvable", ("gethostbyname failed", "Could not resolve hostname", "Name or service not known",
                               "Temporary failure in name resolution", "unable to resolve host"),
     re.compile(r"gethostbyname failed|Could not resolve hostname|Name or service not known"
                r"|Temporary failure in name resolution|unable to resolve host"), None),
    ("mpi_launch_failed", ("not enough slots available",),
     re.compile(r"There are not enough slots available|not enough slots available in the system"),
     "Give each hostfile entry slots=<ranks per node> (or -H host:N) so the slots cover -np."),
    ("mpi_launch_failed", ("ssh: connect to host", "Permission denied (publickey", "Host key verification failed",
                           "Connection closed by ", "exchange_identification"),
     re.compile(r"ssh: connect to host|Permission denied \(publickey|Host key verification failed"
                r"|Connection closed by (?:remote host|[\d.]+ port)|ssh_exchange_identification|kex_exchange_identification"),
     "Set up passwordless ssh (key, known_hosts) from the launch node to every node on the port mpirun uses."),
    # srun refuses a step the allocation cannot hold before any task starts: nodes outside it, unknown nodes, more
    # GPUs than it has, or a job that is gone ("Unable to confirm allocation for job 7: Invalid job id specified")
    ("mpi_launch_failed", ("Unable to create step for job", "Unable to confirm allocation for job"),
     re.compile(r"Unable to create step for job \S+: (?:Requested node configuration is not available|Invalid node "
                r"name specified|Invalid generic resource)|Unable to confirm allocation for job"),
     "The step asked for what the allocation does not hold (nodes outside it or unknown, more GPUs than it has) or "
     "the job has ended: test the allocation's own nodes (scontrol show job <id>: NodeList) with its job id, or "
     "allocate the nodes to test (salloc -w)."),
    ("mpi_launch_failed", ("Task launch for", "Application launch failed", "Unable to create step for job"),
     re.compile(r"Task launch for \S+ failed on node|Application launch failed|Unable to create step for job"),
     "Slurm could not start the job step on a node: check that slurmd runs there (scontrol show node), that munge "
     "works and the nodes' clocks agree (\"Job credential expired\" is clock skew or a stale credential)."),
    ("mpi_launch_failed", ("RTE", "daemon", "HYD", "unable to connect to", "mpirun was unable to launch",
                           "PMIX_ERROR", "orted_main"),
     re.compile(r"(?:ORTE|PRTE|PRRTE) was unable to reliably start|(?:ORTE|PRTE|PRRTE) has lost communication"
                r"|An? (?:ORTE|PRTE) daemon has unexpectedly failed|daemon \(pid \w+\) died unexpectedly"
                r"|daemon on node \S+ (?:failed|died)|HYD_\w+|HYDU_\w+|unable to connect to (?:the )?(?:proxy|server)"
                r"|mpirun was unable to launch|ORTE_ERROR_LOG|PMIX_ERROR|orted_main|prte_daemon"),
     "Check that every node runs the same MPI version, can reach the launch node (firewall, "
     "--mca oob_tcp_if_include <subnet>), and has no leftover daemons."),
    # Slurm's PMIx plugin waits for every task at the start-up fence: "slurmstepd: error:  mpi/pmix_v3:
    # pmixp_coll_ring_reset_if_to: node1 [0]: pmixp_coll_ring.c:742: 0x...: collective timeout seq=0"
    ("mpi_launch_failed", ("collective timeout",),
     re.compile(r"mpi/pmix\w*:.*collective timeout"),
     "Slurm's PMIx plugin timed out waiting for every task at start-up: a task did not start in time on a node "
     "(a slow container image import with pyxis/enroot, a node that could not start it) or the nodes' slurmstepd "
     "cannot reach each other over TCP; pre-import the image on every node, read slurmd's log on the nodes, "
     "open the ports between them, or raise the PMIx timeout (SLURM_PMIX_TIMEOUT)."),
    # "slurmstepd: error: *** STEP 123.0 ON node1 CANCELLED AT 2020-07-03T02:59:56 DUE TO TIME LIMIT ***"; the node
    # named is where the step started, not where it failed: no host is taken from it
    ("job_cancelled", ("CANCELLED AT",),
     re.compile(r"\*\*\* (?:JOB|STEP) \S+ ON \S+ CANCELLED AT \S+"), None),
    ("ucx_error", ("UCX",),
     re.compile(r"\bUCX\s+(?:ERROR|FATAL)\b"), None),
    ("segfault", ("signal 11", "Segmentation fault", "SIGSEGV", "EXIT CODE"),
     re.compile(r"signal 11\b|Segmentation fault|SIGSEGV|Caught signal 11|EXIT CODE:\s*139\b"), None),
    ("bus_error", ("signal 7", "Bus error", "SIGBUS", "EXIT CODE"),
     re.compile(r"signal 7\b|\bBus error\b|SIGBUS|EXIT CODE:\s*135\b"), None),
    ("process_killed", ("signal 9", "SIGKILL", "oom-kill", "oom_kill", "Out of memory: Kill", "(Killed)", "OOMKilled",
                        "EXIT CODE", "Out Of Memory", "Killed"),
     re.compile(r"signal 9\b|\bSIGKILL\b|\boom[-_]kill|Out of memory: Kill|\(Killed\)|OOMKilled|EXIT CODE:\s*137\b"
                r"|" + _SLURM_TASKS + r"(?:Out Of Memory|Killed)\b"),
     None),
    ("rank_failed", ("exited with non-zero status", "returned a non-zero exit code", "MPI_ABORT was invoked",
                     "exited on signal", "BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES",
                     "has exited due to process rank", "Exited with exit code"),
     re.compile(r"exited with non-zero status|returned a non-zero exit code|MPI_ABORT was invoked"
                r"|exited on signal \d+|BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES"
                r"|has exited due to process rank \d+|" + _SLURM_TASKS + r"Exited with exit code \d+"), None),
]

_UCX_HINTS = [
    (re.compile(r"No such device"),
     "UCX tried an RDMA device that cannot be used from here (e.g. an SR-IOV VF or a port of another "
     "namespace); set -x UCX_NET_DEVICES to the usable device or use --mca pml ob1 --mca btl tcp,self."),
    (re.compile(r"Cannot allocate memory|ibv_reg_mr"),
     "Raise the memlock limit (ulimit -l unlimited; IPC_LOCK in containers)."),
]

_MISSING_LIB = re.compile(r"error while loading shared libraries:\s*([^\s:]+)")
_EXIT_CODE = re.compile(r"[Ee]xit(?:ed with exit)? code:?\s*(\d+)")
# The shell's exit codes of a command that never ran: what a task's exit code says before any output of its own.
_EXIT_HINTS = {
    "127": "Exit code 127: the command, or a library it needs, was not found on that node (see the error printed "
           "before it); install the test at the same path on every node and check PATH/LD_LIBRARY_PATH there.",
    "126": "Exit code 126: the command exists on that node but cannot be executed (permissions, wrong architecture "
           "or a noexec mount).",
}

_HOST_PATTERNS = [
    re.compile(r"^\s*(?:srun|yhrun|slurmstepd):\s+error:\s+([A-Za-z0-9][\w.\-]{0,254}):\s+tasks?\s"),
    re.compile(r"\bon node (\S+?)[,.]?(?:\s|$)"),
    re.compile(r"connect to host (\S+)"),
    re.compile(r"Could not resolve hostname (\S+?):"),
    re.compile(r"^\s*Local host:\s*(\S+)"),
    re.compile(r"RUNNING AT (\S+)"),
    re.compile(r"^\[(?:proxy:[\d:]+|mpiexec)@([\w.\-]+)\]"),
    re.compile(r"^\[([A-Za-z0-9][\w.\-]*):\d+\]"),
]


def classify_launcher_line(line):
    """Return (code, hint, host) for a launcher/MPI/signal error line, else None."""
    line = to_text(line)
    if not line.strip() or len(line) > 4096:
        return None
    for code, needles, regex, hint in _RULES:
        if _holds_any(line, needles) and regex.search(line):
            return code, hint or launcher_hint(code, line), launcher_host(line)
    return None


def _holds_any(line, needles):
    for needle in needles:
        if needle in line:
            return True
    return False


def launcher_hint(code, message):
    """A more specific fix for some launcher errors (from the message), or None."""
    if code == "ucx_error":
        for hint_re, ucx_hint in _UCX_HINTS:
            if hint_re.search(message):
                return ucx_hint
    if code == "rank_failed":
        exit_code = _EXIT_CODE.search(message)
        if exit_code:
            return _EXIT_HINTS.get(exit_code.group(1))
    if code == "job_cancelled":
        return _cancel_hint(message)
    if code in ("mpi_lib_missing", "shared_lib_missing"):
        match = _MISSING_LIB.search(message)
        if match:
            return "%s is missing on the node: add its directory to LD_LIBRARY_PATH there (mpirun -x LD_LIBRARY_PATH)." % (
                match.group(1))
    return None


_CANCEL_REASONS = (
    ("DUE TO TIME LIMIT",
     "The step ran into Slurm's time limit: a test whose output stops before its first row or inside the table "
     "hung (bisect the nodes); one that was still making progress needs a longer --time or fewer sizes."),
    ("DUE TO NODE FAILURE", "A node of the job failed: check it with scontrol show node and sinfo -R, then rerun "
                            "without it."),
    ("DUE TO PREEMPTION", "A job of higher priority preempted this one: rerun it in a partition or QOS without "
                          "preemption."),
)


def _cancel_hint(message):
    for reason, hint in _CANCEL_REASONS:
        if reason in message:
            return hint
    return "Someone cancelled the job (scancel) while the test ran: rerun it."


def launcher_host(line):
    """Return the host named in an MPI/ssh error line, or None."""
    for regex in _HOST_PATTERNS:
        match = regex.search(line)
        if match:
            return match.group(1).rstrip(".,:;")
    return None


def continued_message(lines, index, code):
    """The message of an error line, with a wrapped continuation line joined.

    UCX errors are long and terminals or logs wrap them; the next line is
    joined when it is not itself a record of its own.
    """
    message = to_text(lines[index]).strip()
    if code != "ucx_error" or index + 1 >= len(lines):
        return message
    nxt = to_text(lines[index + 1]).strip()
    if (nxt and not nxt.startswith(("#", "[", "-", "*")) and "UCX" not in nxt
            and classify_launcher_line(nxt) is None and len(nxt) < 400):
        return message + " " + nxt
    return message


def scan_launcher_line(lines, index):
    """Classify lines[index] as a launcher error.

    Return (code, message, hint, host) -- the message with a wrapped
    continuation joined -- or None.
    """
    found = classify_launcher_line(lines[index])
    if found is None:
        return None
    wrapped = _wrapped_sentence(lines, index)
    if wrapped:
        # the whole sentence may name a more specific error than its first line ("... could not
        # access" / "or execute an executable:" is a missing binary, not a launch failure)
        found = classify_launcher_line(wrapped) or found
    code, hint, host = found
    message = wrapped or continued_message(lines, index, code)
    return code, message, hint or launcher_hint(code, message), host or _help_block_host(lines, index)


# A line that starts with its program's tag ("srun: ...", "slurmstepd: error: ...") is a record of its own.
_OWN_TAG = re.compile(r"^[\w.\-]{1,32}:\s")


def _wrapped_sentence(lines, index):
    """Open MPI wraps its help messages at about 76 columns: the line joined with the next when a
    sentence goes on there (this line ends without a full stop or colon, the next starts in lower case
    and is not a program's own tagged line)."""
    line = to_text(lines[index]).strip()
    if index + 1 >= len(lines) or not line or line[-1] in ".:!?)":
        return None
    nxt = to_text(lines[index + 1]).strip()
    if not nxt or not nxt[0].islower() or len(nxt) > 400 or _OWN_TAG.match(nxt):
        return None
    return line + " " + nxt


_BLOCK_HOST = re.compile(r"^\s*(?:Node|Local host|Host|Hostname)\s*:\s*(\S+)\s*$")
_BLOCK_END = re.compile(r"^-{20,}\s*$")
# Open MPI/PRRTE's "... has lost communication with a remote daemon." names the lost daemon's node on a line of
# its own ("  Remote daemon: [[27407,0],1] on node d23n02"), after the launch node's ("  HNP daemon   : ...").
_REMOTE_DAEMON = re.compile(r"^\s*Remote daemon\s*:\s*\S+\s+on node\s+(\S+)\s*$")


def _help_block_host(lines, index, reach=12):
    """The host an Open MPI help message names on a line of its own ("Node: vm", "Local host: n1", the lost
    "Remote daemon: ... on node n2"), up to the end of that message (its dashed line)."""
    for line in lines[index + 1:index + 1 + reach]:
        text = to_text(line)
        if _BLOCK_END.match(text):
            return None
        match = _BLOCK_HOST.match(text) or _REMOTE_DAEMON.match(text)
        if match:
            return match.group(1).rstrip(".,:;")
    return None


class ErrorCollector(object):
    """Collect errors once per code, counting repeats and the hosts involved.

    Each entry: code, message (the first one seen), cause, fix (from the
    catalog), hint (a more specific fix when the message tells more, or
    None), count, hosts, evidence (up to five distinct messages).
    """

    MAX_EVIDENCE = 5

    def __init__(self, catalog):
        self.catalog = catalog
        self._entries = {}
        self._order = []
        self._hosts = {}     # code -> set of its hosts (the entry lists them in first-seen order)

    def add(self, code, message, host=None, hint=None):
        message = to_text(message).strip()
        if len(message) > 1000:
            message = message[:1000] + "..."
        entry = self._entries.get(code)
        if entry is None:
            cause, fix = self.catalog.get(code, self.catalog.get("unknown", ("", "")))
            entry = {"code": code, "message": message, "cause": cause, "fix": fix,
                     "hint": hint, "count": 0, "hosts": [], "evidence": []}
            self._entries[code] = entry
            self._order.append(code)
        entry["count"] += 1
        if hint and not entry["hint"]:
            entry["hint"] = hint
        if host:
            hosts = self._hosts.setdefault(code, set(entry["hosts"]))
            if host not in hosts:
                hosts.add(host)
                entry["hosts"].append(host)
        if message and message not in entry["evidence"] and len(entry["evidence"]) < self.MAX_EVIDENCE:
            entry["evidence"].append(message)
        return entry

    def has(self, code):
        return code in self._entries

    def get(self, code):
        return self._entries.get(code)

    def codes(self):
        return list(self._order)

    def remove(self, code):
        if code in self._entries:
            del self._entries[code]
            self._hosts.pop(code, None)
            self._order.remove(code)

    def entries(self, last=()):
        """Entries in first-seen order, the codes in `last` (consequences) at the end."""
        first = [self._entries[c] for c in self._order if c not in last]
        tail = [self._entries[c] for c in self._order if c in last]
        return first + tail
