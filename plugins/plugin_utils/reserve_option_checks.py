# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Rules of the reservation's role options (``commcheck_reserve_*``), beyond their type and choices."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import quarantine
from ansible_collections.clusterops.commcheck.plugins.plugin_utils import role_option_kit as kit


def reserve_key(label, value, ctx):
    kit.call_check(label, value, quarantine.check_key, value, label)


def reserve_node_names(label, value, ctx):
    for host, node in value.items():
        kit.check_host(label, host, ctx)
        kit.call_check("%s.%s" % (label, host), node, quarantine.check_k8s_node, node, "%s.%s" % (label, host))


KEY = kit.described(reserve_key, "a Kubernetes label key (prefix/name)")
NODE_NAMES = kit.described(reserve_node_names, "host: Kubernetes node name")
