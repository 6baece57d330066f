# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one module of robust statistics: each function pinned once."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import itertools

import pytest

from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import stats


def test_median_of_odd_count_is_the_middle_value_as_a_float():
    value = stats.median([9, 1, 5])
    assert value == 5.0 and isinstance(value, float)


def test_median_of_even_count_is_the_mean_of_the_two_middle_values():
    assert stats.median([4, 1, 2, 30]) == 3.0


def test_a_group_of_zeros_still_has_a_spread_a_z_can_divide_by():
    med, spread = stats.spread([0.0, 0.0, 0.0])
    assert med == 0.0 and spread > 0.0
    assert stats.z_score(1.0, med, spread) > stats.OUTLIER_Z


def test_median_of_nothing_is_none():
    assert stats.median([]) is None


def test_mad_of_a_constant_set_is_zero():
    assert stats.mad([7.0, 7.0, 7.0]) == 0.0


def test_mad_around_the_median_and_around_a_given_center():
    values = [1.0, 2.0, 3.0, 4.0, 100.0]
    assert stats.mad(values) == 1.0                 # |x - 3|: 2, 1, 0, 1, 97
    assert stats.mad(values, center=0.0) == 3.0     # |x - 0|: the values themselves
    assert stats.mad([]) is None


def test_spread_floors_a_zero_mad_at_a_fraction_of_the_median():
    med, spread = stats.spread([100.0, 100.0, 100.0, 100.0])
    assert med == 100.0 and spread == pytest.approx(100.0 * stats.SPREAD_FLOOR_REL)
    assert stats.spread([]) == (None, None)
    # a wide group keeps its own MAD
    assert stats.spread([10.0, 20.0, 30.0]) == (20.0, 10.0)


def test_z_when_mad_is_zero_is_measured_against_the_floor():
    med, spread = stats.spread([50.0, 50.0, 50.0, 40.0, 50.0])
    # MAD 0 -> floor 0.25; 0.6745 x (40 - 50) / 0.25
    assert stats.z_score(40.0, med, spread) == pytest.approx(-26.98)


def test_z_is_signed_and_scaled_by_the_mad():
    assert stats.z_score(14.0, 10.0, 2.0) == pytest.approx(0.6745 * 2)
    assert stats.z_score(6.0, 10.0, 2.0) == pytest.approx(-0.6745 * 2)


def test_relative_distance_of_a_zero_center_is_zero():
    assert stats.relative_distance(75.0, 100.0) == 0.25
    assert stats.relative_distance(3.0, 0.0) == 0.0


@pytest.mark.parametrize("z, rel, higher, outlier", [
    (-4.0, 0.3, True, True),     # bandwidth: far below, far enough
    (-4.0, 0.1, True, False),    # beyond z but too close to the median
    (-3.0, 0.3, True, False),    # far enough but within z
    (4.0, 0.3, True, False),     # bandwidth above the median is never bad
    (4.0, 0.3, False, True),     # latency: above is bad
    (-4.0, 0.3, False, False),
])
def test_fleet_outlier_needs_both_z_and_relative_distance_on_the_bad_side(z, rel, higher, outlier):
    assert stats.fleet_outlier(z, rel, higher) is outlier


def test_a_z_or_a_distance_exactly_at_its_limit():
    # beyond the z limit means strictly beyond it; the relative distance only needs to reach its minimum
    assert not stats.bad_side(-stats.OUTLIER_Z, stats.OUTLIER_Z, higher=True)
    assert not stats.bad_side(stats.OUTLIER_Z, stats.OUTLIER_Z, higher=False)
    assert stats.fleet_outlier(-4.0, stats.OUTLIER_MIN_REL, True)


def test_fleet_outlier_takes_its_limits():
    assert not stats.fleet_outlier(-4.0, 0.3, True, outlier_z=5.0)
    assert stats.fleet_outlier(-4.0, 0.15, True, outlier_min_rel=0.1)


def test_best_quarter_counts_from_the_best_end():
    values = [10.0, 80.0, 20.0, 90.0, 70.0, 30.0, 60.0, 40.0, 50.0]
    assert stats.best_quarter(values, higher=True) == 70.0    # 90, 80, [70], ...
    assert stats.best_quarter(values, higher=False) == 30.0   # 10, 20, [30], ...
    assert stats.best_quarter([], higher=True) is None


def test_best_quarter_of_a_few_values_rounds_towards_the_best():
    # a quarter of the way along 4 values is between the best and the second: the best
    assert stats.best_quarter([40.0, 10.0, 30.0, 20.0], higher=True) == 40.0
    assert stats.best_quarter([40.0, 10.0, 30.0, 20.0], higher=False) == 10.0


def _bounds_of(values, removed):
    ordered = sorted(values)
    center = stats.median(ordered)
    return stats.spread_bounds(ordered, sorted(abs(v - center) for v in ordered), center, removed)


@pytest.mark.parametrize("seed", range(40))
def test_spread_bounds_hold_whichever_values_are_removed(seed):
    import random
    rng = random.Random(seed)
    # a tight population with a slow tail and ties, as a rail's links are; negated: latency's levels
    values = [round(rng.gauss(0.95, 0.01), 3) for _draw in range(rng.randint(3, 40))]
    values += [0.4] * rng.randint(0, 3) + [values[0]] * rng.randint(0, 3)
    if seed % 2:
        values = [-v for v in values]
    for removed in range(0, 4):
        if len(values) - removed < 3:
            continue
        (med_low, med_high), (spread_low, spread_high) = _bounds_of(values, removed)
        for _draw in range(20):
            gone = set(rng.sample(range(len(values)), removed))
            med, spread = stats.spread([v for i, v in enumerate(values) if i not in gone])
            assert med_low <= med <= med_high
            assert spread_low <= spread <= spread_high
            for value in values:
                if stats.z_score(value, med, spread) < -stats.OUTLIER_Z:
                    assert stats.may_be_low_outlier(value, ((med_low, med_high), (spread_low, spread_high)),
                                                    stats.OUTLIER_Z)


def test_a_value_near_the_median_of_many_cannot_be_a_low_outlier_and_one_far_below_may():
    values = [0.95 + (i % 7) * 0.001 for i in range(1000)]
    bounds = _bounds_of(values, 2)
    assert not stats.may_be_low_outlier(0.95, bounds, stats.OUTLIER_Z)
    assert stats.may_be_low_outlier(0.4, bounds, stats.OUTLIER_Z)


def test_spread_bounds_with_too_few_values_left_are_none():
    assert _bounds_of([1.0, 2.0], 2) is None


def test_spread_bounds_with_one_value_left_span_both_values():
    assert _bounds_of([1.0, 2.0], 1)[0] == (1.0, 2.0)


@pytest.mark.parametrize("values", [
    [1.0, 2.0, 3.0, 4.0, 100.0],    # the MAD decides the spread
    [1.0] * 5,                       # the floor at a median of 1 (a ratio to the expected rate)
    [-40.0] * 5,                     # the floor at a negative median (latency's levels)
    [0.0] * 5,                       # neither: the smallest spread
])
def test_spread_bounds_with_nothing_removed_are_the_spread_itself(values):
    med, spread = stats.spread(values)
    assert _bounds_of(values, 0) == ((med, med), (spread, spread))


def test_spread_bounds_hold_for_a_group_centred_on_zero():
    # the median can cross zero when values go: no floor of a fraction of the median may be assumed then
    values = [-1.0, -0.001, 0.0, 0.0, 0.0, 0.001, 1.0]
    for removed in range(0, 4):
        (med_low, med_high), (spread_low, spread_high) = _bounds_of(values, removed)
        for gone in itertools.combinations(range(len(values)), removed):
            med, spread = stats.spread([v for i, v in enumerate(values) if i not in gone])
            assert med_low <= med <= med_high and spread_low <= spread <= spread_high


def test_with_one_median_and_spread_a_low_outlier_is_one_whose_z_is_below_the_limit():
    bounds = ((10.0, 10.0), (2.0, 2.0))
    for step in range(-40, 41):
        value = 10.0 + step * 0.5
        z = stats.z_score(value, 10.0, 2.0)
        if abs(z + stats.OUTLIER_Z) > 1e-6:
            assert stats.may_be_low_outlier(value, bounds, stats.OUTLIER_Z) is (z < -stats.OUTLIER_Z)


@pytest.mark.parametrize("med, spread_low, spread_high", [
    (1.0e6, 1.0, 1.0),                          # the median is the largest magnitude
    (3.5 * 10.0 / 0.6745, 10.0, 10.0),          # the reach: the value at the limit is 0
    (0.0, 1.0e-3, 100.0),                       # the highest spread
])
def test_a_value_within_rounding_of_the_limit_may_be_a_low_outlier(med, spread_low, spread_high):
    # rounding is relative to the largest number in play, whichever it is; a billionth of it is rounding
    bounds = ((med, med), (spread_low, spread_high))
    reach = stats.OUTLIER_Z * spread_low / 0.6745
    largest = max(abs(med), reach, spread_high)
    at_limit = med - reach
    assert stats.may_be_low_outlier(at_limit + 0.5e-9 * largest, bounds, stats.OUTLIER_Z)
    assert not stats.may_be_low_outlier(at_limit + 1e-6 * largest, bounds, stats.OUTLIER_Z)


def test_a_value_at_the_median_of_a_group_without_spread_is_no_low_outlier():
    # nothing below the median and no spread: the distance (0) is not below the reach (0), however strict the margin
    assert stats.may_be_low_outlier(0.0, ((0.0, 0.0), (0.0, 0.0)), stats.OUTLIER_Z) is False
    assert stats.may_be_low_outlier(-1.0, ((0.0, 0.0), (0.0, 0.0)), stats.OUTLIER_Z) is True
