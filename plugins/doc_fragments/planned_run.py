# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type


class ModuleDocFragment(object):
    # The pair tool modules as the pair-check roles run them: from the plan the role registered.
    DOCUMENTATION = r'''
options:
  planned:
    description:
      - Run this host's part of the plan the pair-check role registered (C(commcheck_pair_perf_run), the same name
        for M(clusterops.commcheck.perftest) and M(clusterops.commcheck.iperf3), as the role runs one check after the
        other), filled in on the controller by the module's action plugin.
      - V(run) takes this host's sides of the plan's first round (the whole pipelined schedule); V(round) those of
        the round in C(commcheck_pair_perf_round).
      - The plan's module options then stand as the collection's group defaults (a play's defaults for the
        module itself still win), the tool module's C(sysfs_root) option comes from C(commcheck_sysfs_root) (else
        V(/sys)) and, for M(clusterops.commcheck.perftest), its C(rdma_facts) option from the host's discovery facts;
        an option the task gives itself wins over all of these.
      - Unset, the module runs with the task's options as they are.
    type: str
    choices: [run, round]
'''

    # clusterops.commcheck.collective as the collective role runs it: a run its plan made.
    COLLECTIVE = r'''
options:
  run:
    description:
      - A run the C(collective_plan) step planned (an item of its C(runs) or C(node_runs)); its C(args) are the
        module's options, filled in on the controller by the module's action plugin, over the task's own
        (module_defaults included). The collective role runs every collective this way.
    type: dict
'''
