# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which GPUs of a host the GPU-memory pass tests, and in which GPU rounds (pure).

``nearest`` (the default) tests one GPU per rail: the lowest-numbered GPU
nearest the rail's NIC. A bad GPU's PCIe path elsewhere goes unseen.
``all`` tests every GPU against its nearest NIC (``gpu_affinity``): a NIC
with several GPUs near it meets them one after the other, in GPU rounds
(slots): slot k holds the k-th GPU (in GPU order) of each tested NIC, so no
NIC and no GPU is used twice at once, and every GPU paired with a tested NIC
is in exactly one slot. Eight GPUs over four NICs make two slots, eight over
eight one.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

PAIRS = ("nearest", "all")


class GpuPairsError(ValueError):
    """A bad ``commcheck_rdma_gpudirect_pairs`` (reported as a clear error)."""


def normalize_pairs(value):
    """``nearest`` or ``all`` (None: ``nearest``)."""
    text = "nearest" if value is None or value == "" else value
    if not isinstance(text, str) or text.strip().lower() not in PAIRS:
        raise GpuPairsError("must be nearest or all, got %r" % (value,))
    return text.strip().lower()


def _gpu_order(pair):
    return (pair.get("gpu") if pair.get("gpu") is not None else 1 << 20, str(pair.get("gpu_pci") or ""))


def rail_gpus(pairs, rails, mode="nearest"):
    """``[{rail, device, gpu, gpu_pci, how, gpu_path, slot}]``: the GPUs each tested rail meets.

    ``pairs``: ``gpu_affinity.pair_gpus_with_nics``; ``rails``: the host's
    rails (``{rail, device}``). ``slot``: the GPU round of that GPU on its
    NIC (0 for the first); ``nearest`` keeps slot 0 only.
    """
    mode = normalize_pairs(mode)
    out = []
    for rail in rails or []:
        mine = sorted((p for p in pairs or [] if p.get("device") and p.get("device") == rail.get("device")
                       and p.get("gpu") is not None), key=_gpu_order)
        for slot, pair in enumerate(mine if mode == "all" else mine[:1]):
            out.append({"rail": rail.get("rail"), "device": rail.get("device"), "gpu": pair["gpu"],
                        "gpu_pci": pair.get("gpu_pci"), "how": pair.get("how"), "gpu_path": pair.get("gpu_path"),
                        "slot": slot})
    return out


def slot_rounds(assignments):
    """The GPU rounds of one host: ``[[assignment, ...], ...]``, round k the assignments of slot k.

    ``assignments``: ``{rail, device, gpu, ...}`` with ``slot`` (:func:`rail_gpus`), or without (then the k-th
    GPU of each NIC, in GPU order, goes to round k).
    """
    by_device = {}
    for item in sorted(assignments or [], key=_gpu_order):
        by_device.setdefault(item.get("device"), []).append(item)
    rounds = []
    for items in by_device.values():
        for num, item in enumerate(items):
            slot = item["slot"] if item.get("slot") is not None else num
            while len(rounds) <= slot:
                rounds.append([])
            rounds[slot].append(item)
    return rounds


def slot_count(states):
    """How many GPU rounds the fleet needs: the most slots of any host (0 when none has a GPU to test)."""
    count = 0
    for state in (states or {}).values():
        for item in (state or {}).get("rails") or []:
            count = max(count, int(item.get("slot") or 0) + 1)
    return count


def gpu_at(states, host, rail, slot):
    """The host's GPU assignment on ``rail`` for GPU round ``slot``: its GPU of that slot, else (a host with
    fewer GPUs on that NIC than its peer) one of its own again, so the peer's GPU still has a partner; None
    when the host has no GPU on that rail."""
    mine = [item for item in ((states or {}).get(host) or {}).get("rails") or [] if item.get("rail") == rail]
    if not mine:
        return None
    mine.sort(key=lambda item: int(item.get("slot") or 0))
    return mine[slot % len(mine)]


def slots_on(states, host, rail):
    """How many GPU rounds a host's rail has (its GPUs on that NIC)."""
    return sum(1 for item in ((states or {}).get(host) or {}).get("rails") or [] if item.get("rail") == rail)
