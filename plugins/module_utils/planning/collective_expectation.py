# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The expected inter-node bus bandwidth of a collective run, and how it was reached (pure).

- ``host_nic_rates``: the link rates (Gb/s) of the RDMA ports NCCL can use on
  one host: the ACTIVE ports of its ``commcheck_rdma`` fact (discovery), in
  rail order, narrowed by an ``NCCL_IB_HCA`` value when one is set.
- ``expected_from_discovery``: the rates of the pool's slowest host (the
  smallest sum): a pool is as fast as its slowest member.
- ``nic_rates_choice``: configured rates win over discovery.
- ``busbw_formula`` / ``expectation_text``: the formula of
  ``collective_plan.expected_busbw`` (the one computation) spelled out.

The expectation is for the inter-node part, the network: NVLink / PCIe inside
a node (gpus_per_node > 1) also bound a collective and are not modelled.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.clusterops.commcheck.plugins.module_utils.planning.collective_plan import expected_busbw
from ansible_collections.clusterops.commcheck.plugins.module_utils.planning.schedule import select_rails


def parse_ib_hca(value):
    """An ``NCCL_IB_HCA`` value as (exclude, exact, [(device, port or None)]); None when unset.

    NCCL's syntax: a leading ``^`` leaves the listed devices out, a leading
    ``=`` (after any ``^``) matches names exactly instead of as prefixes, and
    ``mlx5_0:1`` names one port.
    """
    text = str(value or "").strip()
    exclude = text.startswith("^")
    text = text[1:] if exclude else text
    exact = text.startswith("=")
    text = text[1:] if exact else text
    items = []
    for part in text.split(","):
        name, _sep, port = part.strip().partition(":")
        if name:
            items.append((name, int(port) if port.strip().isdigit() else None))
    if not items:
        return None
    return exclude, exact, items


def _selected(selection, device, port):
    if selection is None:
        return True
    exclude, exact, items = selection
    named = any((device == name if exact else str(device).startswith(name)) and want in (None, port)
                for name, want in items)
    return named != exclude


def _rate(rail):
    try:
        rate = float(rail.get("rate_gbps"))
    except (TypeError, ValueError):
        return None
    return rate if rate > 0 else None


def host_nic_rates(rdma_facts, ib_hca=None):
    """Link rates (Gb/s) of a host's ACTIVE RDMA ports that ``ib_hca`` selects; ports of unknown rate left out."""
    selection = parse_ib_hca(ib_hca)
    rates = []
    for rail in select_rails(rdma_facts if isinstance(rdma_facts, dict) else {}):
        rate = _rate(rail)
        if rate is not None and _selected(selection, rail.get("device"), rail.get("port")):
            rates.append(rate)
    return rates


def expected_from_discovery(facts_by_host, hosts, ib_hca=None):
    """{rates, host, source, unrated} of the slowest of ``hosts`` (smallest sum of rates); None when none is known.

    ``facts_by_host``: host -> its ``commcheck_rdma`` fact. Hosts with no
    active port of known rate are left out (listed in ``unrated``); the first
    host in ``hosts`` order wins a tie.
    """
    facts_by_host = facts_by_host or {}
    slowest, unrated = None, []
    for host in hosts or []:
        rates = host_nic_rates(facts_by_host.get(host), ib_hca)
        if not rates:
            unrated.append(host)
        elif slowest is None or sum(rates) < sum(slowest[1]):
            slowest = (host, rates)
    if slowest is None:
        return None
    return {"rates": slowest[1], "host": slowest[0], "source": "discovery", "unrated": unrated}


# the collective module takes the note as nic_rates_source: text of at most 200 characters
NOTE_MAX = 200


def nic_rates_choice(configured, facts_by_host, hosts, ib_hca=None):
    """The NIC rates a run is judged by: {rates, host, source, note}; configured rates win over discovery.

    ``source`` is ``configured``, ``discovery`` or None (no rate known: the
    run has no threshold); ``note`` says where the rates came from.
    """
    if configured:
        return {"rates": [float(r) for r in configured], "host": None, "source": "configured",
                "note": "rates configured"}
    found = expected_from_discovery(facts_by_host, hosts, ib_hca)
    if found is None:
        return {"rates": [], "host": None, "source": None, "note": None}
    note = "rates from discovery, slowest host %s" % found["host"]
    if found["unrated"]:
        shown = found["unrated"][:5]
        note += "; no known rate on %s%s" % (", ".join(shown), " and %d more" % (len(found["unrated"]) - 5)
                                             if len(found["unrated"]) > 5 else "")
    note = note if len(note) <= NOTE_MAX else note[:NOTE_MAX - 3] + "..."
    return {"rates": found["rates"], "host": found["host"], "source": "discovery", "note": note}


def _number(value):
    return ("%.6f" % float(value)).rstrip("0").rstrip(".")


def busbw_formula(nic_rates_gbps, efficiency):
    """``4 x 100 Gb/s / 8 x 0.9`` (``(100 + 200) Gb/s / 8 x 0.9`` for mixed rates); None when no rate is known."""
    if expected_busbw(nic_rates_gbps, efficiency) is None:
        return None
    rates = [float(r) for r in nic_rates_gbps if r is not None and float(r) > 0]
    if len(set(rates)) == 1:
        total = "%d x %s Gb/s" % (len(rates), _number(rates[0]))
    else:
        total = "(%s) Gb/s" % " + ".join(_number(r) for r in rates)
    return "%s / 8 x %s" % (total, _number(efficiency))


def expectation_text(expected_gbs, formula=None, note=None):
    """``expected 45.0 GB/s = 4 x 100 Gb/s / 8 x 0.9 efficiency (note)``; None without an expectation."""
    if not expected_gbs:
        return None
    text = "expected %s GB/s" % expected_gbs
    if formula:
        text += " = %s efficiency" % formula
    return text + (" (%s)" % note if note else "")
