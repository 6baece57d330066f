# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action clusterops.commcheck.discovery_results: every host's discovery, read once, as a table and as records.

Runs on the controller only, once for all hosts. Reads the registered
``rdma_facts`` result (``commcheck_discover_run``) of every host of the play,
those that ``commcheck_fail_on`` failed included, and returns the operator's
table (``discovery.report.discovery_table``) and the discovery records, each
named by its host.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from collections.abc import Mapping

from ansible.errors import AnsibleError

from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery.report import discovery_table
from ansible_collections.clusterops.commcheck.plugins.plugin_utils.controller_action import ControllerAction
from ansible_collections.clusterops.commcheck.plugins.plugin_utils.host_vars import host_value, plain

ARGUMENT_SPEC = {}
FACT_PATH = "commcheck_discover_run.ansible_facts.commcheck_rdma"


def discovered(facts_of, hosts):
    """{host: commcheck_rdma} of the hosts that were discovered (a fact that is a mapping), in the order given."""
    out = {}
    for host in hosts:
        facts = facts_of(host)
        if isinstance(facts, Mapping):
            out[host] = facts
    return out


def host_records(found, hosts):
    """Every host's discovery records, each named by its host, hosts in the order given."""
    records = []
    for host in hosts:
        records.extend(dict(record, host=host) for record in (found.get(host) or {}).get("records") or [])
    return records


class ActionModule(ControllerAction):

    NAME = "clusterops.commcheck.discovery_results"
    ARGUMENT_SPEC = ARGUMENT_SPEC
    FAILURES = (ValueError, TypeError, AnsibleError)

    def decide(self, args, result, task_vars):
        hostvars = task_vars.get("hostvars") or {}
        hosts = list(task_vars.get("ansible_play_hosts_all") or [])
        found = discovered(lambda host: plain(host_value(hostvars, host, [FACT_PATH], None)), hosts)
        severity = self._templar.template(task_vars.get("commcheck_discover_min_severity", "info"))
        result.update(changed=False, table=discovery_table(found, min_severity=severity),
                      records=host_records(found, hosts), msg="%d host(s) discovered" % len(found))
        return result
