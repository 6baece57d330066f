# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The good pairs' level of a group most of whose pairs are late or slow because of a few hosts (pure).

The fleet rules judge a pair against its group's median and best quarter. When most pairs of a rail are bad, both
move with them: two late hosts of four are in five of each rail's six mesh pairs, so the median and the best
quarter are late too and nothing is named. Yet one pair, the one without them, answers as a healthy link does.
:func:`host_explained` finds that split: the hosts none of whose pairs is near the group's best (the suspects),
when every pair without a suspect is near it and every pair with one is far from the level of the pairs without
(their median). Those pairs are then far outliers against that level: the good pairs stand in for the median.

A healthy group has no far pair, so no suspect; a slow fabric or plane has no good pair; a bad pair between two
hosts that have good pairs too is not explained by hosts, and the split is then left to the other rules.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts.stats import median
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.text import natural_key

# a latency must also be this many microseconds above the good level (the thresholds' BEST_MIN_LATENCY_GAP_US): a
# topology's longest paths are a few microseconds above its shortest, which is no fault
MIN_LATENCY_GAP_US = 5.0


def far_from_level(value, level, higher, fraction):
    """Whether value is beyond ``fraction`` of the good level (bandwidth: below fraction x level; latency: above
    level / fraction and :data:`MIN_LATENCY_GAP_US` more), the rule the fleet median would apply."""
    if not fraction or level is None or level <= 0:
        return False
    if higher:
        return value < fraction * level
    return value > level / fraction and value - level >= MIN_LATENCY_GAP_US


def host_explained(pairs, values, higher, fraction):
    """``{"level", "suspects", "good"}`` when a few hosts explain a group's far pairs, else None.

    ``pairs``: ``(host, peer)`` of each value, in order; ``higher``: bigger is better (bandwidth); ``fraction``:
    the fleet threshold's ``fleet_min_fraction`` (None: the far rules are off, and so is this one). ``level``: the
    median of the good pairs (those without a suspect), ``good``: how many there are, ``suspects``: the hosts in
    natural order."""
    if not fraction or len(values) < 3 or len(pairs) != len(values) or not all(a and b for a, b in pairs):
        return None
    best = max(values) if higher else min(values)
    near = [not far_from_level(value, best, higher, fraction) for value in values]
    hosts = set(host for pair in pairs for host in pair)
    suspects = hosts - set(host for pair, good in zip(pairs, near) if good for host in pair)
    if not suspects:
        return None
    touched = [bool(suspects.intersection(pair)) for pair in pairs]
    if any(not good and not hit for good, hit in zip(near, touched)):
        return None     # a far pair between hosts that have good pairs: not these hosts' doing
    level = median([value for value, hit in zip(values, touched) if not hit])
    if not all(far_from_level(value, level, higher, fraction) for value, hit in zip(values, touched) if hit):
        return None
    return {"level": level, "suspects": sorted(suspects, key=natural_key), "good": touched.count(False)}


def explained_far(value, split, higher, fraction):
    """Whether a value is far from a split's good level (False without a split)."""
    return bool(split) and far_from_level(value, split["level"], higher, fraction)
