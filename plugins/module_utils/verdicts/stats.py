# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The robust statistics every verdict uses (pure): median, MAD, robust z, the fleet outlier, the best quarter.

A group of comparable measurements (the links of a rail, the pairs of a test) is judged by its median and its
median absolute deviation (MAD), not by its mean and standard deviation: one broken link must not move the
line it is judged against. The robust z of a value is ``0.6745 x (value - median) / MAD`` (Iglewicz and
Hoaglin's modified z-score); the MAD gets a floor of a small fraction of the median so that a group whose
values are all the same does not make every small difference an outlier.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

# the options' defaults: commcheck_outlier_z and commcheck_outlier_min_rel
OUTLIER_Z = 3.5
OUTLIER_MIN_REL = 0.2
# the MAD's floor as a fraction of |median|
SPREAD_FLOOR_REL = 0.005
# MAD / 0.6745 estimates a normal population's standard deviation
_Z_PER_MAD = 0.6745
# a spread is never zero, so that a z is always a number
_TINY = 1e-12


def median(values):
    """The median of the numbers (a float; the mean of the two middle ones for an even count), None when empty."""
    data = sorted(values)
    if not data:
        return None
    mid = len(data) // 2
    return float(data[mid]) if len(data) % 2 else (data[mid - 1] + data[mid]) / 2.0


def mad(values, center=None):
    """The median absolute deviation of the numbers from ``center`` (their median by default), None when empty."""
    if not values:
        return None
    center = median(values) if center is None else center
    return median([abs(v - center) for v in values])


def spread(values, floor_rel=SPREAD_FLOOR_REL):
    """(median, MAD with a floor of ``floor_rel`` x |median|) of the numbers; (None, None) when empty."""
    med = median(values)
    if med is None:
        return None, None
    return med, max(mad(values, med), floor_rel * abs(med), _TINY)


def spread_bounds(ordered, deviations, center, removed, floor_rel=SPREAD_FLOOR_REL):
    """((lowest, highest) median, (lowest, highest) floored MAD) that :func:`spread` can give for the values
    ``ordered`` (sorted) less any ``removed`` of them; ``deviations``: the sorted ``|value - center|`` of them all,
    ``center`` their median. None when fewer than one value would be left.

    Removing ``removed`` values moves each order statistic up by at most that many places, and a median taken
    ``w`` away from ``center`` moves every deviation, so their median too, by at most ``w``: what lets a group
    of thousands rule most of its members out of being outliers without the median of all-but-one each time."""
    left = len(ordered) - removed
    if left < 1:
        return None
    low, high = (left - 1) // 2, left // 2 + removed
    med_low, med_high = ordered[low], ordered[high]
    shift = max(abs(med_low - center), abs(med_high - center))
    nearest = 0.0 if med_low <= 0 <= med_high else min(abs(med_low), abs(med_high))
    farthest = max(abs(med_low), abs(med_high))
    return ((med_low, med_high),
            (max(deviations[low] - shift, floor_rel * nearest, _TINY), max(deviations[high] + shift, floor_rel * farthest, _TINY)))


def may_be_low_outlier(value, bounds, limit):
    """Whether ``value`` can have a robust z below ``-limit`` against any median and spread within ``bounds``
    (:func:`spread_bounds`); False only when none can (a margin covers the rounding of the bounds)."""
    (_med_low, med_high), (spread_low, spread_high) = bounds
    reach = max(-limit * spread_low, -limit * spread_high) / _Z_PER_MAD
    margin = 1e-9 * (abs(value) + abs(med_high) + abs(reach) + spread_high)
    return value - med_high < reach + margin


def z_score(value, center, scale):
    """The robust z of value against a group's median ``center`` and (floored) MAD ``scale``."""
    return _Z_PER_MAD * (value - center) / scale


def relative_distance(value, center):
    """|value - center| as a fraction of |center| (0 when the center is 0)."""
    return abs(value - center) / abs(center) if center else 0.0


def bad_side(z, limit, higher):
    """Whether a robust z lies beyond ``limit`` on the bad side (``higher``: bigger is better, so low is bad)."""
    return z < -limit if higher else z > limit


def fleet_outlier(z, rel, higher, outlier_z=OUTLIER_Z, outlier_min_rel=OUTLIER_MIN_REL):
    """Whether a value is a fleet outlier: its robust z beyond ``outlier_z`` on the bad side AND its relative
    distance ``rel`` from the median at least ``outlier_min_rel`` (a tight group makes tiny differences big z)."""
    return bad_side(z, outlier_z, higher) and rel >= outlier_min_rel


def best_quarter(values, higher):
    """The value a quarter of the way from the best of values (``higher``: the largest is best); None if empty."""
    ordered = sorted(values, reverse=bool(higher))
    return float(ordered[(len(ordered) - 1) // 4]) if ordered else None
