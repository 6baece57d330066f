# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Sorting, reading and showing values in the verdict stages."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.text import natural_key
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts.values import finite_number, fmt_value


def test_natural_key_sorts_digit_runs_as_numbers():
    assert sorted(["h10", "h2", "h1", "a"], key=natural_key) == ["a", "h1", "h2", "h10"]
    assert natural_key(None) == natural_key("None")
    # devices, versions, and names that start with a digit or mix both sort without a type error
    assert sorted(["mlx5_10", "mlx5_2", "mlx4_0"], key=natural_key) == ["mlx4_0", "mlx5_2", "mlx5_10"]
    assert sorted(["2.10.3", "2.9.1", "2.27.3"], key=natural_key) == ["2.9.1", "2.10.3", "2.27.3"]
    assert sorted(["h1", "10", "h", 7, "a10b"], key=natural_key) == [7, "10", "a10b", "h", "h1"]


def test_finite_number_takes_ints_and_floats_only():
    assert finite_number(3) == 3.0 and isinstance(finite_number(3), float)
    assert finite_number(2.5) == 2.5
    for bad in (True, "3", None, float("nan"), float("inf"), -float("inf"), [1]):
        assert finite_number(bad) is None


def test_fmt_value_shows_three_digits():
    assert fmt_value(None) == "n/a"
    assert fmt_value(398.7) == "399"
    assert fmt_value(0.12345) == "0.123"
