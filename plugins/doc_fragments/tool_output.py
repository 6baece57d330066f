# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type


class ModuleDocFragment(object):
    # The input of the parse_* filters that read a tool's text through plugin_utils.filter_input.
    DOCUMENTATION = r'''
options:
  _input:
    description:
      - The text the tool printed (C(stdout), possibly merged with C(stderr)); bytes, a list of lines and
        null are accepted too.
      - A registered command result (a dictionary with C(stdout), as M(ansible.builtin.command) returns)
        is read as its C(stdout) followed by its C(stderr).
    type: raw
    required: true
'''

    # The parse_* filters that read pasted text (module_utils/parsers/pasted.py).
    PASTED_TEXT = r'''
options: {}
notes:
  - "Pasted text is read as the tool's own: CRLF line ends, terminal colours, launcher prefixes, Markdown code fences,
    quote markers and list bullets, C(cat -n) numbers, C(ts)/C(journalctl)/C(kubectl logs --timestamps) stamps, and a
    note after a line (C(# slow one), C(<-- this)) or a terminal's right prompt are taken off first."
'''

    # The parse_* filters made by plugin_utils.filter_input.tool_text_filter with a list form and a full form (items=).
    FULL = r'''
options:
  full:
    description:
      - Return a dictionary with the list, the C(errors) the tool printed and the C(warnings) instead of the list
        alone; the return value names the dictionary's keys and the errors.
    type: bool
    default: false
notes:
  - A text from which nothing was read (another command's output, a paste that lost the tool's lines) gives an Ansible
    warning that quotes its first line, and the empty list; with O(full=true) the same message is in C(warnings).
  - The parser never fails on odd text.
'''
