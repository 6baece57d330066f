# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""CPU frequency governors under a sysfs root: read, plan, apply (with rollback).

Pure parts: :func:`parse_cpu_list`, :func:`plan_changes`, :func:`diff_text`.
File access: :func:`read_cpus`, :func:`unwritable_reason` and :func:`apply_changes` (``sysfs_root``
stands for ``/sys``; the files are
``devices/system/cpu/cpu<N>/cpufreq/scaling_governor`` and
``scaling_available_governors``).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import errno
import glob
import os
import re

from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.output_capture import text_of
from ansible_collections.clusterops.commcheck.plugins.module_utils.options.option_rules import show
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import run_lock

_CPU_DIR = re.compile(r"^cpu(\d+)$")
GOVERNOR_NAME = re.compile(r"^[a-z][a-z0-9_-]{0,31}$")
# The largest CPU number Linux can have (NR_CPUS is at most 8192).
CPU_MAX = 8191


class GovernorError(Exception):
    """Bad input or a failed write; the message says which and why."""


def _cpu_number(text, value):
    number = int(text)
    if number > CPU_MAX:
        raise GovernorError("%s is not a CPU: CPU numbers go up to %d" % (show(value), CPU_MAX))
    return number


def cpu_key(value):
    """'cpu3', '3' or 3 -> 'cpu3'; raises GovernorError otherwise."""
    text = str(value).strip()
    if text.isdigit():
        return "cpu%d" % _cpu_number(text, value)
    match = _CPU_DIR.match(text)
    if match:
        return "cpu%d" % _cpu_number(match.group(1), value)
    raise GovernorError("%s is not a CPU (use 3 or cpu3)" % show(value))


def parse_cpu_list(items, option="cpus"):
    """CPU selections like [0, '2-5', '8,10', 'cpu12'] -> sorted list of 'cpuN' keys.

    An empty item ('', '  ') or an empty part between commas ('0,,2', '3,') is refused, never skipped: it
    was meant as a CPU. Every problem names ``option[N]``, the item it is in.
    """
    out = set()
    for index, item in enumerate(items or []):
        label = "%s[%d]" % (option, index)
        try:
            out.update(_cpu_item(item))
        except GovernorError as exc:
            raise GovernorError("%s: %s" % (label, exc))
    return sorted(out, key=lambda k: int(k[3:]))


def _cpu_item(item):
    if not str(item).strip():
        raise GovernorError("%s is empty: name a CPU (3, cpu3) or a range (2-5)" % show(item))
    keys = []
    for part in str(item).split(","):
        part = part.strip()
        if not part:
            raise GovernorError("%s has an empty part between commas: name a CPU there or remove the comma"
                                % show(item))
        match = re.match(r"^(\d+)\s*-\s*(\d+)$", part)
        if match:
            low, high = _cpu_number(match.group(1), part), _cpu_number(match.group(2), part)
            if low > high:
                raise GovernorError("CPU range %s goes backwards" % show(part))
            keys += ["cpu%d" % n for n in range(low, high + 1)]
        else:
            keys.append(cpu_key(part))
    return keys


def _read(path):
    """The stripped text of a sysfs file; None when it cannot be read (permission, a directory, gone) or is not
    text (a file that is not what sysfs writes there: its governor is unknown)."""
    try:
        with open(path, "rb") as handle:
            text = text_of(handle.read())
    except (IOError, OSError):
        return None
    return None if text is None else text.strip()


def read_cpus(sysfs_root):
    """{'cpuN': {'governor': str|None, 'available': [..]|None, 'path': file}} for CPUs with cpufreq."""
    base = os.path.join(sysfs_root, "devices", "system", "cpu")
    try:
        pattern = os.path.join(glob.escape(base), "cpu*", "cpufreq", "scaling_governor")
    except AttributeError:  # Python 2
        pattern = os.path.join(base, "cpu*", "cpufreq", "scaling_governor")
    cpus = {}
    for path in glob.glob(pattern):
        name = os.path.basename(os.path.dirname(os.path.dirname(path)))
        if not _CPU_DIR.match(name):
            continue
        available = _read(os.path.join(os.path.dirname(path), "scaling_available_governors"))
        cpus[name] = {
            "governor": _read(path),
            "available": available.split() if available else None,
            "path": path,
        }
    return cpus


def plan_changes(cpus, governor=None, governors=None, selected=None):
    """What to write: (targets {cpu: wanted}, changes {cpu: (before, after)}).

    ``governor`` sets every selected CPU (all CPUs with cpufreq by default);
    ``governors`` ({cpu: governor}, e.g. a previous run's ``previous``) sets
    each CPU it names. Raises GovernorError for unknown CPUs, bad names, or
    a governor a CPU does not offer.
    """
    if (governor is None) == (governors is None):
        raise GovernorError("give exactly one of governor or governors")
    targets = {}
    if governor is not None:
        names = selected if selected else sorted(cpus, key=lambda k: int(k[3:]))
        for name in names:
            targets[name] = governor
    else:
        for key, value in (governors or {}).items():
            name = cpu_key(key)
            if selected and name not in selected:
                continue
            targets[name] = value
    for name, wanted in sorted(targets.items()):
        if not isinstance(wanted, str) or not GOVERNOR_NAME.match(wanted):
            raise GovernorError("%s is not a governor name" % show(wanted))
        if name not in cpus:
            raise GovernorError("%s has no cpufreq scaling_governor under this sysfs root" % name)
        available = cpus[name].get("available")
        if available and wanted not in available:
            raise GovernorError("%s does not offer the %s governor (available: %s)" % (
                name, wanted, " ".join(available)))
    changes = dict((name, (cpus[name]["governor"], wanted)) for name, wanted in targets.items()
                   if cpus[name]["governor"] != wanted)
    return targets, changes


def diff_text(cpus, changes, after=False):
    """'cpu0: powersave\\n...' for the CPUs in changes (before or after values)."""
    lines = []
    for name in sorted(changes, key=lambda k: int(k[3:])):
        lines.append("%s: %s\n" % (name, changes[name][1] if after else changes[name][0]))
    return "".join(lines)


# Why a governor file takes no write: the finding's ``why`` (EROFS: a read-only /sys, as in an unprivileged pod;
# EACCES / EPERM: no right to write it; no cpufreq at all: nothing to switch).
WHY_READ_ONLY = "read-only /sys"
WHY_NOT_PRIVILEGED = "not privileged"
WHY_NO_CPUFREQ = "no cpufreq"
UNMANAGED = "governor_unmanaged"
UNMANAGED_FIX = ("run the test pod privileged (securityContext.privileged: true gives it a writable /sys), or set "
                 "the node's governor to %s with the node's own tuning (a DaemonSet running cpupower "
                 "frequency-set, or a tuned profile)")


def why_of_errno(number):
    """The finding's ``why`` for a failed open of a governor file; None for an error that is no refusal to write
    (a file that is not what sysfs has there: the write itself then says what it is)."""
    if number == errno.EROFS:
        return WHY_READ_ONLY
    if number in (errno.EACCES, errno.EPERM):
        return WHY_NOT_PRIVILEGED
    return None


def why_of_message(text):
    """The finding's ``why`` for a shell's message about a governor file (a write refused in a pod)."""
    if "Read-only file system" in text:
        return WHY_READ_ONLY
    if "Permission denied" in text or "Operation not permitted" in text:
        return WHY_NOT_PRIVILEGED
    return text.strip() or "refused"


def write_refusal(path, opener=None):
    """Why ``path`` cannot be opened for writing, or None. The open writes nothing (sysfs stores on write only);
    ``opener`` is :func:`os.open` unless given."""
    try:
        os.close((opener or os.open)(path, os.O_WRONLY))
    except (IOError, OSError) as exc:
        return why_of_errno(exc.errno)
    return None


def refusals(cpus, changes, probe=None):
    """{cpu: why} of the CPUs in ``changes`` whose governor file takes no write: the ``refusal`` a reader saw
    (a pod's), else what ``probe`` (:func:`write_refusal`) finds."""
    probe = probe or write_refusal
    out = {}
    for name in sorted(changes, key=lambda k: int(k[3:])):
        why = cpus[name]["refusal"] if "refusal" in cpus[name] else probe(cpus[name]["path"])
        if why:
            out[name] = why
    return out


def unwritable_reason(cpus, changes, probe=None):
    """Why the governor files of ``changes`` cannot be written here (not privileged, a read-only /sys), or None.

    A host that cannot change its governor is measured as it is: callers report this reason instead of failing.
    """
    refused = refusals(cpus, changes, probe)
    if not refused:
        return None
    names = sorted(refused, key=lambda k: int(k[3:]))
    return "cannot write the scaling_governor of %s%s (%s)" % (
        ", ".join(names[:4]), " and %d more CPU(s)" % (len(names) - 4) if len(names) > 4 else "",
        ", ".join(sorted(set(refused.values()))))


def unmanaged_finding(host, cpus, why, wanted, detail):
    """The ``governor_unmanaged`` finding: the governor could not be set on ``host``, which is measured at the
    governors it has (``governors``: how many CPUs run each)."""
    counts = {}
    for cpu in cpus.values():
        counts[cpu.get("governor") or "unknown"] = counts.get(cpu.get("governor") or "unknown", 0) + 1
    return {"code": UNMANAGED, "severity": "warning", "host": host, "governors": counts, "why": sorted(why),
            "message": "the CPU governor stays unmanaged: %s; the tests run at the governors the node has" % detail,
            "fix": UNMANAGED_FIX % wanted}


def _write(path, value):
    with open(path, "w") as handle:
        handle.write(value)


def apply_changes(cpus, changes):
    """Write the changes; on a failure restore what was written and raise GovernorError."""
    done = []
    try:
        for name in sorted(changes, key=lambda k: int(k[3:])):
            _write(cpus[name]["path"], changes[name][1])
            done.append(name)
            now = _read(cpus[name]["path"])
            if now != changes[name][1]:
                raise GovernorError("%s still reads %s after writing %s" % (name, show(now), show(changes[name][1])))
    except (IOError, OSError, GovernorError) as exc:
        restored = []
        for name in done:
            try:
                _write(cpus[name]["path"], changes[name][0])
                restored.append(name)
            except (IOError, OSError):
                pass
        raise GovernorError("setting the governor failed: %s (restored %s)" % (
            exc, ", ".join(restored) or "nothing"))
    return done


STATE_NAME = "governor.json"


def load_state(directory):
    """What a hold saved in ``directory`` before switching (``sysfs_root``, ``previous``), or None."""
    saved = run_lock.LockDir(directory).read_note(STATE_NAME)
    if not saved or not isinstance(saved.get("previous"), dict):
        return None
    return saved


def save_state(directory, sysfs_root, previous):
    """Keep each CPU's own governor on the host before switching, so that what a killed module left can be put
    back (``restore_saved``). A governor already saved (a module killed before) is the one kept.

    Returns True when nothing was saved there before: the saver then owns the note and may clear it once it
    put the CPUs back; an earlier note stays for ``restore_saved``, which puts back the CPUs' own governors.
    The directory (the run's lock directory) is created 0700 when missing; raises OSError or LockError."""
    saved = load_state(directory)
    if saved and saved.get("sysfs_root") == sysfs_root:
        previous = dict(previous, **saved["previous"])
    run_lock.LockDir(directory).ensure().write_note(STATE_NAME, {"sysfs_root": sysfs_root, "previous": previous})
    return saved is None


def clear_state(directory):
    try:
        run_lock.LockDir(directory).remove_note(STATE_NAME)
    except OSError as exc:
        if exc.errno != errno.ENOENT:
            raise


def save_before_switching(directory, sysfs_root, previous):
    """:func:`save_state`, its failures as GovernorError (nothing is switched that could not be saved)."""
    try:
        return save_state(directory, sysfs_root, previous)
    except (IOError, OSError, run_lock.LockError) as exc:
        raise GovernorError("cannot save the governors before switching them in %s: %s" % (
            directory, getattr(exc, "strerror", None) or exc))


def restore_plan(saved, sysfs_root, files=None):
    """(cpus, changes) that put back what ``saved`` holds, on the CPUs under ``sysfs_root`` (read by ``files``:
    :class:`HostSysfs` unless given); GovernorError when it was saved for another sysfs root."""
    if saved.get("sysfs_root") != sysfs_root:
        raise GovernorError("the saved governors are of %s, not of %s" % (
            show(saved.get("sysfs_root")), show(sysfs_root)))
    cpus = (files or HostSysfs()).read_cpus(sysfs_root)
    known = dict((cpu, governor) for cpu, governor in saved["previous"].items() if cpu in cpus)
    return cpus, plan_changes(cpus, governors=known)[1] if known else {}


# One exec in the pod reads each CPU's governor, what it offers, and whether its file takes a write (an open for
# appending writes nothing); the sysfs root is its argument.
POD_READ_SH = r"""for g in "$1"/devices/system/cpu/cpu[0-9]*/cpufreq/scaling_governor; do
[ -e "$g" ] || continue
d=${g%/scaling_governor}
e=$( (: >> "$g") 2>&1 ) || e="refused: $e"
printf '%s\t%s\t%s\t%s\n' "$g" "$(cat "$g" 2>/dev/null)" "$(cat "$d/scaling_available_governors" 2>/dev/null)" \
  "$(printf %s "$e" | tr '\t\n' '  ')"
done"""
# path value pairs as arguments; stops at the first write refused
POD_WRITE_SH = 'while [ $# -gt 1 ]; do printf "%s\\n" "$2" > "$1" || exit 1; shift 2; done'
POD_TIMEOUT_S = 60


class PodSysfs(object):
    """The governor files of a pod's sysfs, read and written through the kubectl transport (``run_plain``)."""

    def __init__(self, transport, timeout=POD_TIMEOUT_S):
        self.transport = transport
        self.timeout = timeout

    def read_cpus(self, sysfs_root):
        """:func:`read_cpus` in the pod, each CPU with its ``refusal`` (None when its file takes a write)."""
        res = self.transport.run_plain(["sh", "-c", POD_READ_SH, "sh", sysfs_root], self.timeout)
        if res["rc"] != 0:
            raise GovernorError("cannot read the governors in the pod: %s" % (res.get("stderr") or "").strip())
        cpus = {}
        for line in (res.get("stdout") or "").splitlines():
            fields = line.split("\t")
            if len(fields) != 4:
                continue
            path, governor, available, refused = fields
            name = os.path.basename(os.path.dirname(os.path.dirname(path)))
            if _CPU_DIR.match(name):
                cpus[name] = {"governor": governor or None, "available": available.split() or None, "path": path,
                              "refusal": why_of_message(refused[len("refused: "):]) if refused else None}
        return cpus

    def _write(self, cpus, values):
        argv = ["sh", "-c", POD_WRITE_SH, "sh"]
        for name in sorted(values, key=lambda k: int(k[3:])):
            argv += [cpus[name]["path"], values[name]]
        return self.transport.run_plain(argv, self.timeout)

    def apply_changes(self, cpus, changes, sysfs_root):
        """Write the changes in one exec and read them back; on a failure put back every CPU's value before and
        raise GovernorError."""
        res = self._write(cpus, dict((name, after) for name, (_before, after) in changes.items()))
        now = self.read_cpus(sysfs_root) if res["rc"] == 0 else {}
        wrong = sorted(name for name, (_before, after) in changes.items() if now.get(name, {}).get("governor") != after)
        if wrong:
            back = self._write(cpus, dict((name, before) for name, (before, _after) in changes.items() if before))
            raise GovernorError("setting the governor in the pod failed for %s: %s (%s)" % (
                ", ".join(wrong), (res.get("stderr") or "").strip() or "it reads another value",
                "put back" if back["rc"] == 0 else "not put back"))
        return sorted(changes)


class HostSysfs(object):
    """The governor files of the host the module runs on."""

    @staticmethod
    def read_cpus(sysfs_root):
        return read_cpus(sysfs_root)

    @staticmethod
    def apply_changes(cpus, changes, sysfs_root):
        return apply_changes(cpus, changes)


def pod_state_dir(directory, namespace, pod):
    """Where a pod's own governors are kept in the controller's lock ``directory``, which every pod that controller
    reaches shares: a directory of the pod's own (``pods/<namespace>/<pod>``)."""
    return os.path.join(directory, "pods", namespace, pod)


class GovernorHold(object):
    """Every CPU at one governor while tests run; each CPU's own governor put back after.

    ``report`` is what a module returns as ``cpu_governor`` (empty when no
    governor was asked for): ``governor``, ``previous``, ``restored`` and,
    when it applies, ``skipped`` with the ``unmanaged`` finding, or ``restore_error``.
    ``files`` reaches the governor files (:class:`HostSysfs`, or :class:`PodSysfs` for a pod); ``host`` names
    where they are in the finding.
    """

    def __init__(self, wanted, sysfs_root, transport_name, state_dir=None, files=None, host=None):
        self.wanted = wanted
        self.sysfs_root = sysfs_root
        self.transport_name = transport_name
        # the run's lock directory: the governors are saved there before switching (a killed module's are
        # put back from it); no saving without one
        self.state_dir = state_dir if state_dir is not None else run_lock.run_dir_path()
        self.files = files if files is not None else (HostSysfs() if transport_name == "host" else None)
        self.host = host
        self.report = {}
        self._undo = None
        self._owns_state = False

    def _unmanaged(self, cpus, why, detail):
        self.report["skipped"] = detail
        self.report["unmanaged"] = unmanaged_finding(self.host, cpus, why, self.wanted, detail)
        return "cpu_governor: %s; left alone (%s)" % (detail, UNMANAGED)

    def take(self):
        """Switch the CPUs; returns a warning or None. Raises GovernorError (a governor a CPU lacks, a failed write)."""
        if not self.wanted:
            return None
        self.report.update(governor=self.wanted, previous={}, restored=False)
        if self.files is None:
            self.report["skipped"] = "the %s transport cannot set the CPU governor" % self.transport_name
            return "cpu_governor: %s; left alone" % self.report["skipped"]
        cpus = self.files.read_cpus(self.sysfs_root)
        if not cpus:
            warning = self._unmanaged(cpus, [WHY_NO_CPUFREQ], "no cpufreq under %s" % self.sysfs_root)
            return warning if self.transport_name != "host" else None
        changes = plan_changes(cpus, governor=self.wanted)[1]
        refused = refusals(cpus, changes)
        if refused:
            return self._unmanaged(cpus, set(refused.values()), unwritable_reason(cpus, changes))
        previous = dict((name, before) for name, (before, _after) in changes.items())
        if changes and self.state_dir:
            self._owns_state = save_before_switching(self.state_dir, self.sysfs_root, previous)
        self.files.apply_changes(cpus, changes, self.sysfs_root)
        self.report["previous"] = previous
        self._undo = (cpus, changes)
        return None

    def release(self):
        """Put back what ``take`` changed; a failure is kept in the report, never raised."""
        if not self._undo:
            return
        cpus, changes = self._undo
        try:
            self.files.apply_changes(cpus, dict((name, (after, before)) for name, (before, after) in changes.items()),
                                     self.sysfs_root)
            self.report["restored"] = True
            # a note an earlier, killed step left stays: it holds the CPUs' own governors, not the ones
            # this hold found
            if self._owns_state:
                clear_state(self.state_dir)
        except (GovernorError, OSError) as exc:
            self.report["restore_error"] = str(exc)
