# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Text for the files people read: every character that could hide or rewrite what is around it, made visible.

Host names, device names, causes and evidence come from inventories and from
what tools printed on the hosts: they may hold ESC (terminal sequences when
the report is printed), a carriage return or a Unicode line separator (a
Markdown table row or a Prometheus sample split in two), a bidirectional
override (a name that reads as another), or a character a file cannot hold
(a lone surrogate cannot be written as UTF-8; XML has no form of U+FFFE).
Each becomes its escape as text (``\\x1b``, ``\\u202e``), so nothing is lost
and nothing is hidden. Newlines and tabs are kept: each renderer places them.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import re

_HIDDEN = re.compile(u"[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069"
                     u"\ufeff\ufff9-\ufffb\ufffe\uffff\ud800-\udfff]")


def _escape(match):
    code = ord(match.group(0))
    return "\\x%02x" % code if code < 0x100 else "\\u%04x" % code


def visible(text):
    """``text`` with every hidden or unwritable character replaced by its escape (newline and tab kept)."""
    return _HIDDEN.sub(_escape, text)


def has_hidden(text):
    return bool(_HIDDEN.search(text))
