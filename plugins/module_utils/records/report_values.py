# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The values every report format shows: numbers, plain text for people, escaped text for HTML and SVG, and the
verdicts in their order (report_model.py and the renderers build on these)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts.values import finite_number as num

try:
    from markupsafe import escape as _markup_escape
except ImportError:  # a module's import of module_utils on a managed host; reports render on the controller only
    _markup_escape = None

VERDICT_ORDER = ("error", "fail", "flaky", "warn", "skipped", "pass")
BAD = ("fail", "error")


def plain(value):
    """Text for people: '' for None, 'yes'/'no', lists joined, dicts as 'k=v'; never a Python repr."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, dict):
        return ", ".join("%s=%s" % (k, plain(v)) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))
                         if v is not None)
    if isinstance(value, (list, tuple, set)):
        return ", ".join(plain(v) for v in value if v is not None)
    return str(value)


def fmt_value(value, digits=3):
    number = num(value)
    if number is None:
        return "-" if value is None else plain(value)
    if number == 0:
        return "0"
    if abs(number) >= 1000:
        return "%.0f" % number
    return "%.*g" % (digits, number)


def pct(change):
    number = num(change)
    return "-" if number is None else "%+.1f%%" % (number * 100)


def esc(value):
    """Text for HTML and SVG, element content and attribute values alike (markupsafe: & < > ' \" escaped)."""
    if _markup_escape is None:
        raise RuntimeError("the HTML report needs markupsafe, which comes with Ansible (jinja2) on the controller")
    return str(_markup_escape(plain(value)))


def md_cell(value):
    text = plain(value)
    return text.replace("|", "\\|").replace("\n", " ").strip() or "-"
