# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The real tool outputs of tests/fixtures/real/<tool>/ (each folder's SOURCES.md names where each came from)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os

REAL = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures", "real")


def real(tool, name):
    """The text of one real output, unchanged."""
    with open(os.path.join(REAL, tool, name), encoding="utf-8") as handle:
        return handle.read()


def codes(result):
    """The error codes of a parser result, in order."""
    return [error["code"] for error in result["errors"]]


def error_of(result, code):
    """The first error of a parser result with this code."""
    return [error for error in result["errors"] if error["code"] == code][0]
