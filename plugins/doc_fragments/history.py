# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type


class ModuleDocFragment(object):
    # Where the history files are, for the plugins that write them (the callback) and read them (the lookup);
    # each plugin describes what it does with a bad value.
    DOCUMENTATION = r'''
options:
  history_dir:
    description:
      - Directory of the history files.
    type: str
    default: ~/.ansible/commcheck/history
    env:
      - name: COMMCHECK_HISTORY_DIR
    ini:
      - section: commcheck_history
        key: history_dir
'''
