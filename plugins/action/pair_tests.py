# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action clusterops.commcheck.pair_tests: the tool module of a pair-check family (its row's ``module``), run on
the host with O(planned) filled in from the role's plan (``plugin_utils/planned_tests.py``)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.clusterops.commcheck.plugins.plugin_utils.planned_tests import PairTestsAction


class ActionModule(PairTestsAction):
    pass
