# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the parse_* filters accept: a tool's text, or a registered command result."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from collections.abc import Mapping

from ansible.errors import AnsibleFilterError
from ansible.module_utils.common.text.converters import to_text


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
