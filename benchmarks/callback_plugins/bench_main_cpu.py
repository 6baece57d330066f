# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Benchmarks only (bench_oneclick.py): the CPU seconds of ansible-playbook's main process itself.

The main process handles every task result one after another (variables,
forks, callbacks): it is the part of the controller's CPU that more
``forks`` cannot spread. Written as JSON to ``$COMMCHECK_BENCH_MAIN_CPU``
when the playbook ends.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
name: bench_main_cpu
type: aggregate
short_description: Benchmarks only, the CPU of the main ansible-playbook process
description:
  - Writes the main process's user and system CPU seconds to the file named by C(COMMCHECK_BENCH_MAIN_CPU).
requirements:
  - enable with ANSIBLE_CALLBACKS_ENABLED
'''

import json
import os
import resource

from ansible.plugins.callback import CallbackBase


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "bench_main_cpu"
    CALLBACK_NEEDS_ENABLED = True

    def v2_playbook_on_stats(self, stats):
        path = os.environ.get("COMMCHECK_BENCH_MAIN_CPU")
        if not path:
            return
        own = resource.getrusage(resource.RUSAGE_SELF)
        with open(path, "w") as handle:
            json.dump({"user_s": own.ru_utime, "system_s": own.ru_stime, "max_rss_kib": own.ru_maxrss,
                       "minor_faults": own.ru_minflt}, handle)
