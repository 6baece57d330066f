# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the parse_* filters accept: a tool's text, or a registered command result; the class of a one-filter plugin."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from collections.abc import Mapping

from ansible.errors import AnsibleFilterError
from ansible.module_utils.common.text.converters import to_text
from ansible.utils.display import Display

from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.text import unread_notes


def filter_input_text(data, name):
    """The text to parse: stdout (then stderr) of a command result, or the data itself."""
    if isinstance(data, Mapping):
        if "stdout" not in data:
            raise AnsibleFilterError("%s: expected the tool's text or a command result with stdout, got a dict "
                                     "without stdout" % name)
        parts = [data.get("stdout"), data.get("stderr")]
        return "\n".join(p if isinstance(p, str) else to_text(p) for p in parts if p)
    if data is None or isinstance(data, (str, bytes, list, tuple)):
        return data
    raise AnsibleFilterError("%s: expected text, got %s" % (name, type(data).__name__))


def tool_text_filter(name, parse, parse_full=None, items=None):
    """The filter function `name` of a tool-text parser: parse(text), or parse_full(text) with full=true
    when the parser has a full form (the list with the errors the tool printed).

    With `items` (the key of the list in the full form) the list form is parse_full(text)[items], and a text
    from which nothing was read is an Ansible warning: a list can not carry it, and an empty list must not
    pass for a host without devices."""
    if parse_full is None:
        def parse_filter(data):
            return parse(filter_input_text(data, name))
    else:
        def parse_filter(data, full=False):
            text = filter_input_text(data, name)
            if full:
                return parse_full(text)
            if items is None:
                return parse(text)
            result = parse_full(text)
            for note in unread_notes(result):
                Display().warning("%s: %s" % (name, note))
            return result[items]
    parse_filter.__name__ = name + "_filter"
    parse_filter.__doc__ = "Filter %s: %s" % (name, (parse.__doc__ or "").strip().split("\n")[0])
    return parse_filter


def filter_module(name, function):
    """The FilterModule class of a plugin that offers one function as the filter `name`."""

    class FilterModule(object):
        def filters(self):
            return {name: function}

    FilterModule.__doc__ = "%s filter." % name
    return FilterModule


def tool_text_filter_module(name, parse, parse_full=None, items=None):
    """The FilterModule class of a plugin that offers one tool-text parser as the filter `name`."""
    return filter_module(name, tool_text_filter(name, parse, parse_full, items))
