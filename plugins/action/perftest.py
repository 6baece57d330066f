# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action clusterops.commcheck.perftest: the module, with O(planned) filled in from the role's plan on the controller
(``plugin_utils/planned_tests.py``)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.clusterops.commcheck.plugins.plugin_utils.planned_tests import PlannedTestAction


class ActionModule(PlannedTestAction):

    FAMILY = "rdma"
