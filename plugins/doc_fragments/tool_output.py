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
