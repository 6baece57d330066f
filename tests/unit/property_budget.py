# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The example budget of a property test in each tier.

The fast tier (``make test``) runs a tenth of a property's examples, the full
tier (``pytest -m full``, ``make test-full``) all of them, so a budget shrunk
for speed loses nothing. The property is built inside the test, with the
budget it gets::

    @example_budget(1000)
    def test_parsers_keep_their_contract(examples):
        @settings(max_examples=examples, **SETTINGS)
        @given(st.text())
        def property_(text):
            ...
        property_()

Both tiers run the same property function, so they share its entries in the
example database (.build/hypothesis, see tests/conftest.py) where the test
keeps one.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import pytest

FAST_SHARE = 10
FAST_MIN = 20


def fast_examples(examples):
    """The fast tier's share of a budget of ``examples``."""
    return min(examples, max(FAST_MIN, examples // FAST_SHARE))


def example_budget(examples):
    """The ``examples`` parameter of a property test: its fast tier's share, and the whole budget marked ``full``."""
    return pytest.mark.parametrize("examples", [
        pytest.param(fast_examples(examples), id="fast"),
        pytest.param(examples, id="full", marks=pytest.mark.full)])
