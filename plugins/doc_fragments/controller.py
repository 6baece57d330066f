# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type


class ModuleDocFragment(object):
    # The modules whose action plugin of the same name does the work on the controller; each module still
    # documents its own check_mode.
    DOCUMENTATION = r'''
notes:
  - This is an action plugin; it runs on the controller only and never connects to a host.
attributes:
  platform:
    support: full
    platforms: all
    description: Runs on the controller.
  diff_mode:
    support: none
    description: Nothing to diff.
'''
