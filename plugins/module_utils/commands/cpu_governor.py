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


def unwritable_reason(cpus, changes, access=None):
    """Why the governor files of ``changes`` cannot be written here (not root, a read-only /sys), or None.

    A host that cannot change its governor is measured as it is: callers
    report this reason instead of failing. ``access`` is :func:`os.access`
    unless given; it also sees a read-only file system as root does.
    """
    access = access or os.access
    refused = [name for name in sorted(changes, key=lambda k: int(k[3:]))
               if not access(cpus[name]["path"], os.W_OK)]
    if not refused:
        return None
    return "cannot write the scaling_governor of %s%s (not root, or a read-only /sys)" % (
        ", ".join(refused[:4]), " and %d more CPU(s)" % (len(refused) - 4) if len(refused) > 4 else "")


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


def restore_plan(saved, sysfs_root):
    """(cpus, changes) that put back what ``saved`` holds, on the CPUs under ``sysfs_root``; GovernorError when it
    was saved for another sysfs root."""
    if saved.get("sysfs_root") != sysfs_root:
        raise GovernorError("the saved governors are of %s, not of %s" % (
            show(saved.get("sysfs_root")), show(sysfs_root)))
    cpus = read_cpus(sysfs_root)
    known = dict((cpu, governor) for cpu, governor in saved["previous"].items() if cpu in cpus)
    return cpus, plan_changes(cpus, governors=known)[1] if known else {}


class GovernorHold(object):
    """Every CPU at one governor while tests run; each CPU's own governor put back after.

    ``report`` is what a module returns as ``cpu_governor`` (empty when no
    governor was asked for): ``governor``, ``previous``, ``restored`` and,
    when it applies, ``skipped`` or ``restore_error``.
    """

    def __init__(self, wanted, sysfs_root, transport_name, state_dir=None):
        self.wanted = wanted
        self.sysfs_root = sysfs_root
        self.transport_name = transport_name
        # the run's lock directory: the governors are saved there before switching (a killed module's are
        # put back from it); no saving without one
        self.state_dir = state_dir if state_dir is not None else run_lock.run_dir_path()
        self.report = {}
        self._undo = None
        self._owns_state = False

    def take(self):
        """Switch the CPUs; returns a warning or None. Raises GovernorError (a governor a CPU lacks, a failed write)."""
        if not self.wanted:
            return None
        self.report.update(governor=self.wanted, previous={}, restored=False)
        if self.transport_name != "host":
            self.report["skipped"] = "the %s transport cannot set the CPU governor" % self.transport_name
            return "cpu_governor: %s; left alone" % self.report["skipped"]
        cpus = read_cpus(self.sysfs_root)
        if not cpus:
            self.report["skipped"] = "no cpufreq under %s" % self.sysfs_root
            return None
        changes = plan_changes(cpus, governor=self.wanted)[1]
        refused = unwritable_reason(cpus, changes)
        if refused:
            self.report["skipped"] = refused
            return "cpu_governor: %s; left alone" % refused
        previous = dict((name, before) for name, (before, _after) in changes.items())
        if changes and self.state_dir:
            self._owns_state = save_before_switching(self.state_dir, self.sysfs_root, previous)
        apply_changes(cpus, changes)
        self.report["previous"] = previous
        self._undo = (cpus, changes)
        return None

    def release(self):
        """Put back what ``take`` changed; a failure is kept in the report, never raised."""
        if not self._undo:
            return
        cpus, changes = self._undo
        try:
            apply_changes(cpus, dict((name, (after, before)) for name, (before, after) in changes.items()))
            self.report["restored"] = True
            # a note an earlier, killed step left stays: it holds the CPUs' own governors, not the ones
            # this hold found
            if self._owns_state:
                clear_state(self.state_dir)
        except (GovernorError, OSError) as exc:
            self.report["restore_error"] = str(exc)
