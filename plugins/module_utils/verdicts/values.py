# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""How the verdict stages sort host names, read a measured number and show one (pure)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import math


def finite_number(value):
    """The value as a float when it is a finite int or float (not a bool), else None."""
    kind = type(value)
    if kind is float:  # most measured values: one test instead of three (called for every metric read)
        return value if math.isfinite(value) else None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if not math.isfinite(value):
        return None
    return float(value)


def fmt_value(value):
    """A measured value in three significant digits ('1104', not '1.1e+03', from 1,000 up), 'n/a' when there
    is none."""
    if value is None:
        return "n/a"
    return "%.0f" % value if abs(value) >= 1000 else "%.3g" % value
