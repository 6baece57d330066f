# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Unit tests on every supported ansible-core: 2.19's test helpers on older cores (core_compat.py)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import core_compat  # noqa: E402  pylint: disable=wrong-import-position

core_compat.install()
