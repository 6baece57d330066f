# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What tells two checks apart, and two hosts: the one place every report format asks.

A record's identity is its kind, host, peer and the params that say what it
measured (IDENTITY_PARAMS: the operation, memory, rail and devices, message
size, direction options, a collective's library and node set, a finding's
code ...). How it was scheduled (round, step, ports, attempt) and what came
of it (outcome notes, downgraded ports) are not part of it.

Every format groups records by a few of these: a heat map by kind and op, a
Prometheus series by its labels, a chart line by library, operation and
node count. variants() keeps such a group whole when its records are one
check, and otherwise names each record by the identity params that differ in
the group ('size=4096', 'bidirectional=yes'): two different checks never
land in one cell, row, line or series without the report saying so.

short_names() gives each host the shortest label that still tells it from
the others (the leading DNS labels of an FQDN) for the axes of the SVG
pictures; the full name stays in their tooltips and in every table.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import hashlib
import re

from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts.version_mix import host_ranges

# Where each kind of record names its operation: perftest and iperf3 pairs `op`, collectives `operation`.
OP_PARAMS = ("op", "operation", "test", "tool")
# What a check measured, in the order a variant names them.
IDENTITY_PARAMS = OP_PARAMS + (
    "metric", "memory", "library", "hosts", "nodes", "scope", "stage", "rail", "device", "peer_device", "gpu",
    "peer_gpu", "port", "size", "all_sizes", "bidirectional", "reverse", "qps", "parallel", "rdma_cm", "mtu",
    "datatype", "min_bytes", "max_bytes", "gpus_per_node", "processes_per_node", "check", "code", "finding")
_IDENTITY_ORDER = dict((name, index) for index, name in enumerate(IDENTITY_PARAMS))
# A node set written out longer than this is named by its ends, its size and a digest instead.
NODE_SET_CHARS = 200
_ADDRESS = re.compile(r"^[0-9.]+$")


def op_of(record):
    """The operation of a check: params.op (perftest, iperf3), params.operation (collectives), params.test or
    params.tool; else its kind."""
    params = record.get("params") or {}
    for name in OP_PARAMS:
        value = params.get(name)
        if value not in (None, "") and not isinstance(value, (dict, list)):
            return str(value)
    return str(record.get("kind"))


def node_set_text(hosts, limit=NODE_SET_CHARS):
    """A node set as text that no other set shares: 'node01-node08, x' (every name, as ranges), or beyond ``limit``
    characters 'a .. z (1024 hosts, 3f2a9c41d0)': the first and last names, the count and a digest of them all."""
    names = sorted(set(str(h) for h in hosts or []))
    text = host_ranges(names, limit=len(names) + 1)
    if len(text) <= limit:
        return text
    digest = hashlib.sha256("\n".join(names).encode("utf-8")).hexdigest()[:10]
    return "%s .. %s (%d hosts, %s)" % (names[0], names[-1], len(names), digest)


def identity_text(value):
    """A param's value as the text that compares it: 65536 and 65536.0 alike, True 'yes', a list of hosts as ranges."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (list, tuple, set)):
        return node_set_text(value)
    if isinstance(value, dict):
        return ",".join("%s=%s" % (k, identity_text(v)) for k, v in sorted(value.items(), key=lambda kv: str(kv[0])))
    return str(value)


def identity(record, skip=()):
    """{param: text} of the record's IDENTITY_PARAMS outside ``skip`` that are set (False and '' count as unset).

    With ``all_sizes`` (perftest -a) ``size`` is the size of the best row, what the check found rather than what
    it was asked, and is left out.
    """
    params = record.get("params") or {}
    out = {}
    for name, value in params.items():
        if name in _IDENTITY_ORDER and name not in skip and value is not None and value is not False and value != "":
            out[name] = identity_text(value)
    if params.get("all_sizes"):
        out.pop("size", None)
    return out


def variants(records, skip=()):
    """The variant of each of ``records`` (one group of a format): '' for every record when they are all one check,
    else each record's identity params (outside ``skip``) that differ in the group, 'size=4096 qps=2'.

    Two records of different checks always get different variants; records of one check get the same one.
    """
    if len(records) < 2:
        return [""] * len(records)
    ids = [identity(record, skip) for record in records]
    first = ids[0]
    if all(other == first for other in ids[1:]):
        return [""] * len(records)
    names = set()
    for item in ids:
        names.update(item)
    differing = sorted((n for n in names if len(set(item.get(n) for item in ids)) > 1), key=_IDENTITY_ORDER.get)
    return [" ".join("%s=%s" % (n, item[n]) for n in differing if n in item) for item in ids]


def split_by_variant(groups, record_of=None, skip=()):
    """{key: [item]} -> {(key, variant): [item]}: each group split into its checks (variants())."""
    out = {}
    for key, items in groups.items():
        records = [record_of(item) for item in items] if record_of else items
        for item, variant in zip(items, variants(records, skip)):
            out.setdefault((key, variant), []).append(item)
    return out


def with_variant(text, variant):
    """'rdma_bw write' + 'size=4096' -> 'rdma_bw write size=4096'."""
    return "%s %s" % (text, variant) if variant else text


# --------------------------------------------------------------------------
# host names on the axes of a picture
# --------------------------------------------------------------------------

def _is_address(name):
    return ":" in name or bool(_ADDRESS.match(name))


def short_names(hosts):
    """{host: label}: each name's fewest leading DNS labels that no other of ``hosts`` starts with ('node-005' for
    'node-005.rack01.example.com' when no other host is a 'node-005.'); an address, a name without dots, or a name
    whose every shorter form is shared stays whole. Labels are as distinct as the names."""
    names = sorted(set(str(h) for h in hosts))
    parts = dict((name, name.split(".")) for name in names)
    depth = max([len(p) for p in parts.values()] + [1])
    shared = {}
    for k in range(1, depth + 1):
        counts = {}
        for name in names:
            if len(parts[name]) >= k:
                prefix = ".".join(parts[name][:k])
                counts[prefix] = counts.get(prefix, 0) + 1
        shared[k] = counts
    labels = {}
    for name in names:
        labels[name] = name
        if _is_address(name):
            continue
        for k in range(1, len(parts[name])):
            prefix = ".".join(parts[name][:k])
            if shared[k].get(prefix, 0) == 1:
                labels[name] = prefix
                break
    return labels
