# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Read the sysfs files RDMA discovery needs into a plain dict.

A snapshot is ``{relative_path: content}`` where ``relative_path`` is
relative to the sysfs root (the directory that stands for ``/sys``), e.g.
``class/infiniband/mlx5_0/ports/1/state``, and ``content`` is the file's text
with trailing newlines removed (``""`` when the file opened but could not be
read, e.g. the kernel's EINVAL for unused GID slots). A symlink the discovery
needs is ``{"link": target}`` (the raw ``readlink`` target) and a directory it
lists is ``{"dir": True}`` (so an RDMA device or netdev directory counts even
when none of its files could be read). Files that do not exist or cannot be
opened are absent.

Which files: a FIXED list of glob patterns (``FILE_PATTERNS``,
``LINK_PATTERNS``); nothing from the caller is ever turned into a path
pattern. Two sources give the same dict:

- ``snapshot_from_fs(root)``: Python ``os`` calls on the machine the module
  runs on;
- ``DUMP_SCRIPT``: a constant POSIX ``sh`` script for remote transports
  (``kubectl exec``): run ``["sh", "-c", DUMP_SCRIPT, "sh", ROOT]`` (the root
  is a positional argument, never interpolated) and feed its stdout to
  ``snapshot_from_dump(text)``. It forks only for ``readlink`` and for
  ``cat`` of the few binary attributes in ``CAT_PATTERNS``.

Dump format, one record per line: ``F<TAB>path`` starts a file,
``L<TAB>line`` is one line of it, ``S<TAB>path<TAB>target`` is a symlink,
``D<TAB>path`` a directory;
the first line is ``commcheck-sysfs-dump 1`` and the last ``end``.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import glob
import os

from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.output_capture import DOCUMENT, text_of

_DEV = "class/infiniband/*"
_PORT = _DEV + "/ports/*"

# Every file discovery reads, relative to the sysfs root (glob patterns).
FILE_PATTERNS = tuple(
    [_DEV + "/" + name for name in (
        "board_id", "fw_ver", "hca_type", "node_guid", "sys_image_guid", "node_desc", "node_type")]
    + [_DEV + "/device/" + name for name in (
        "numa_node", "vendor", "device", "local_cpulist",
        "current_link_speed", "current_link_width", "max_link_speed", "max_link_width", "iommu_group/type")]
    + [_DEV + "/tc/*/traffic_class"]
    + ["kernel/config/rdma_cm/*/ports/*/default_roce_tos"]
    + [_DEV + "/device/net/*/" + name for name in ("dev_port", "dev_id")]
    + [_PORT + "/" + name for name in (
        "state", "phys_state", "rate", "link_layer", "lid", "sm_lid", "lid_mask_count", "cap_mask")]
    + [_PORT + "/gids/*", _PORT + "/gid_attrs/types/*", _PORT + "/gid_attrs/ndevs/*"]
    + [_PORT + "/counters/" + name for name in (
        "symbol_error", "link_downed", "link_error_recovery", "port_rcv_errors",
        "port_rcv_remote_physical_errors", "port_xmit_discards", "local_link_integrity_errors",
        "excessive_buffer_overrun_errors")]
    + [_PORT + "/hw_counters/" + name for name in (
        "out_of_sequence", "out_of_buffer", "packet_seq_err", "local_ack_timeout_err",
        "rnr_nak_retry_err", "np_cnp_sent", "np_ecn_marked_roce_packets", "rp_cnp_handled",
        "rp_cnp_ignored")]
    + ["class/net/*/" + name for name in ("operstate", "mtu", "address", "carrier", "type")]
    + ["class/net/*/bonding/slaves", "class/net/*/bonding/mode"]
    + ["class/dmi/id/sys_vendor", "class/dmi/id/product_name", "hypervisor/type"]
    + ["devices/system/cpu/cpu*/cpufreq/scaling_governor"]
    + ["module/%s/initstate" % name for name in (
        "nvidia_peermem", "nv_peer_mem", "nvidia", "ib_core", "ib_uverbs", "mlx5_ib", "mlx5_core",
        "rdma_ucm", "amdgpu")]
    + ["module/%s/version" % name for name in ("mlx5_core", "mlx4_core", "bnxt_en", "ice", "irdma", "hns3")]
    + ["module/ib_core/parameters/netns_mode"]
    + ["bus/pci/devices/*/vendor", "bus/pci/devices/*/class", "bus/pci/devices/*/numa_node"]
)

# One-line files the kernel serves as binary attributes, which the shell's
# byte-wise ``read`` cannot read: the dump script reads them with ``cat``.
CAT_PATTERNS = (
    "devices/system/node/node*/cpulist",
)

# Directories discovery lists (names only).
DIR_PATTERNS = (
    _DEV,
    _PORT,
    _DEV + "/device/net/*",
    "class/net/*",
)

# Symlinks discovery needs (their targets, not their contents).
LINK_PATTERNS = (
    _DEV + "/device",
    _DEV + "/device/driver",
    "class/net/*/master",
    "class/net/*/device",
    "bus/pci/devices/*",
)

HEADER = "commcheck-sysfs-dump 1"


def _sh_quote_pattern(pattern):
    # Patterns are constants made of [A-Za-z0-9_/*.-]; check it so a future
    # edit cannot put shell syntax into the script.
    for char in pattern:
        if not (char.isalnum() or char in "_/*.-"):
            raise ValueError("unsupported character %r in pattern %r" % (char, pattern))
    return pattern


# What the dump script does for each path a pattern matches: (patterns, test and output).
_DUMP_LOOPS = (
    (FILE_PATTERNS, '[ -f "$f" ] && e "$f"'),
    (CAT_PATTERNS, "[ -f \"$f\" ] && v=$(cat \"$f\" 2>/dev/null) && printf 'F\\t%s\\nL\\t%s\\n' \"$f\" \"$v\""),
    (DIR_PATTERNS, "[ -d \"$f\" ] && printf 'D\\t%s\\n' \"$f\""),
    (LINK_PATTERNS, "[ -L \"$f\" ] && printf 'S\\t%s\\t%s\\n' \"$f\" \"$(readlink \"$f\" 2>/dev/null)\""),
)


def _build_script():
    lines = [
        'cd "$1" 2>/dev/null || { echo "commcheck-sysfs-dump: cannot enter $1" >&2; exit 2; }',
        'printf "%s\\n" "' + HEADER + '"',
        # One file: header only when it opens; lines with builtins only.
        "e() { { printf 'F\\t%s\\n' \"$1\"; while IFS= read -r l || [ -n \"$l\" ]; do "
        "printf 'L\\t%s\\n' \"$l\"; done; } 2>/dev/null < \"$1\"; }",
    ]
    for patterns, body in _DUMP_LOOPS:
        lines += ["for f in " + " ".join(_sh_quote_pattern(p) for p in patterns) + "; do", "  " + body, "done"]
    lines += ['printf "%s\\n" end', "exit 0"]
    return "\n".join(lines) + "\n"


# The constant script for remote transports: argv = ["sh", "-c", DUMP_SCRIPT, "sh", ROOT].
DUMP_SCRIPT = _build_script()


def dump_argv(root):
    """The argv that dumps ``root`` remotely (root is a positional argument)."""
    return ["sh", "-c", DUMP_SCRIPT, "sh", root]


def _escape(root):
    try:
        return glob.escape(root)
    except AttributeError:  # Python 2
        return root


def _normalize(content):
    return content.rstrip("\n")


def read_text(path):
    """File text without trailing newlines; '' if it opens but cannot be read; None if it cannot be opened or
    is not text (a damaged file's value is unknown)."""
    try:
        handle = open(path, "rb")
    except (IOError, OSError):
        return None
    try:
        try:
            data = handle.read()
        except (IOError, OSError):
            return ""
    finally:
        handle.close()
    text = text_of(data)
    return None if text is None else _normalize(text)


def snapshot_from_fs(root):
    """Read the FILE_PATTERNS / LINK_PATTERNS files under root with os calls."""
    snap = {}
    base = _escape(root.rstrip("/") or "/")
    prefix_len = len(os.path.join(root.rstrip("/") or "/", ""))
    for pattern in FILE_PATTERNS + CAT_PATTERNS:
        for path in glob.glob(os.path.join(base, pattern)):
            if not os.path.isfile(path):
                continue
            text = read_text(path)
            if text is not None:
                snap[path[prefix_len:]] = text
    for pattern in DIR_PATTERNS:
        for path in glob.glob(os.path.join(base, pattern)):
            if os.path.isdir(path):
                snap[path[prefix_len:]] = {"dir": True}
    for pattern in LINK_PATTERNS:
        for path in glob.glob(os.path.join(base, pattern)):
            if os.path.islink(path):
                try:
                    target = os.readlink(path)
                except OSError:
                    target = ""
                snap[path[prefix_len:]] = {"link": target}
    return snap


def snapshot_from_dump(text):
    """Parse DUMP_SCRIPT's output into a snapshot dict.

    Returns ``(snapshot, errors)``; errors is a list of ``{code, message}``
    (``no_header`` when the text is not a dump, ``truncated`` when the end
    marker is missing). Unknown lines are ignored.
    """
    snap = {}
    errors = []
    lines = (text or "").split("\n")
    if HEADER not in lines:
        errors.append({"code": "no_header", "message": "the text is not a commcheck sysfs dump"})
    seen_end = False
    current = None
    body = None

    def flush():
        if current is not None:
            snap[current] = _normalize("\n".join(body))

    for line in lines:
        if line.startswith("F\t"):
            flush()
            current = line[2:]
            body = []
        elif line.startswith("L\t"):
            if current is not None:
                body.append(line[2:])
        elif line.startswith("D\t"):
            flush()
            current = None
            snap[line[2:]] = {"dir": True}
        elif line.startswith("S\t"):
            flush()
            current = None
            path, dummy, target = line[2:].partition("\t")
            snap[path] = {"link": target}
        elif line == "end":
            flush()
            current = None
            seen_end = True
    flush()
    if not seen_end and not errors:
        errors.append({"code": "truncated", "message": "the sysfs dump ended before its end marker"})
    return snap, errors


def snapshot(transport, root, timeout=60):
    """Snapshot root through a transport.

    Local transports read with os calls; remote ones run DUMP_SCRIPT once.
    Returns ``(snapshot, info)`` where info has ``source`` (fs | dump),
    ``errors`` and, for a dump, ``cmd``/``rc``/``stderr``.
    """
    if not getattr(transport, "remote", False):
        if not os.path.isdir(root):
            return {}, {"source": "fs", "errors": [
                {"code": "no_root", "message": "sysfs root %s is not a directory" % root}]}
        return snapshot_from_fs(root), {"source": "fs", "errors": []}
    # a dump is a document: read whole (up to the runner's bound for documents)
    res = transport.run(dump_argv(root), timeout, capture=DOCUMENT)
    snap, errors = snapshot_from_dump(res.get("stdout", ""))
    if res.get("rc") not in (0, None) and not snap:
        errors.append({"code": "dump_failed", "message": "sysfs dump failed (rc %s): %s" % (
            res.get("rc"), (res.get("stderr") or "").strip()[-300:])})
    return snap, {"source": "dump", "errors": errors, "cmd": ["sh", "-c", "<sysfs dump script>", "sh", root],
                  "rc": res.get("rc"), "stderr": res.get("stderr", "")}
