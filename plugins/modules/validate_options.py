#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
module: validate_options
short_description: Check every variable of commcheck roles before anything runs
version_added: 1.0.0
description:
  - Checks the variables of the roles named in O(roles) once, on the controller, before the roles run anything on
    a host. Each value is checked against the type and choices of the role's C(meta/argument_specs.yml), then
    against the rule of that variable - ranges of numbers, names (RDMA devices, Kubernetes objects, hosts), paths
    without C(..), programs (an absolute path or a command name, never relative), message sizes, the extra
    arguments of perftest and iperf3, environment and MCA names, and the options that go together.
  - Then the module calls the pair checks would make (C(clusterops.commcheck.perftest) from host and GPU memory,
    C(clusterops.commcheck.iperf3)) are planned from these values and each goes through that module's own checks,
    so a value the check accepts is not refused by a module later. A refusal names the variables that fed the
    refused argument. An option that applies to some tests only (C(commcheck_rdma_bidirectional) and
    C(commcheck_rdma_qps) to bandwidth tests, C(commcheck_rdma_size) and C(commcheck_rdma_all_sizes) to all but
    atomic tests, C(commcheck_rdma_lat_iterations) to latency tests) goes to those tests while the others run
    without it; it is refused when none of the planned tests takes it.
  - A value that is not set is checked as its default. A variable that can differ per host (set in the inventory,
    as a fact or from a template) is checked for every host of the play, not only the one the task runs for.
  - >-
    Any problem fails the task with one message that says nothing was run and names every bad option, as
    C(<option>: <why>) separated by semicolons, quoting at most 200 characters of a value; a problem that only
    some hosts have names them.
  - For the roles that run on the test hosts (C(commcheck), C(discover), C(rdma_perf), C(collective),
    C(tcp_perf)) it also checks the inventory of the play's hosts - an inventory name is a label, a host is
    reached at its address (C(commcheck_address) or C(commcheck_tcp_address), else C(ansible_host), else its
    name). Refused, naming the hosts and the address - a name with a control character; a host whose name
    would be its address and is not one (a name with a space and no C(ansible_host)); a loopback address on
    a host that has peers; two inventory names with one address (one machine would be tested against
    itself). The one-click role refuses, right after discovery, two names whose discovery read one machine
    (the same boot id and network namespace) or whose rails share an address.
  - Every role of the collection calls it as its first task (C(run_once), C(any_errors_fatal)); the one-click role
    C(clusterops.commcheck.commcheck) checks all the roles it runs at once and its roles do not check again.
author:
  - commcheck developers (@clusterops)
options:
  roles:
    description:
      - The roles whose variables are checked (C(discover), C(rdma_perf), C(collective), C(tcp_perf), C(report),
        C(k8s_pods), C(quarantine), C(commcheck)), by short name or C(clusterops.commcheck.<role>).
      - A variable several roles share takes the type and choices of the first role listed that has it.
    type: list
    elements: str
    required: true
  entry_point:
    description: The entry point of the roles' argument specs.
    type: str
    default: main
extends_documentation_fragment:
  - clusterops.commcheck.controller
attributes:
  check_mode:
    support: full
    description: Nothing changes in either mode; the check runs in check mode too.
notes:
  - Run it with C(run_once=true) and C(any_errors_fatal=true) so that one bad value on any host stops the play
    before anything runs.
  - Values are templated as the task sees them; a value that cannot be evaluated is reported as a problem.
seealso:
  - module: ansible.builtin.validate_argument_spec
'''

EXAMPLES = r'''
- name: Check the options of this role before anything runs
  clusterops.commcheck.validate_options:
    roles: collective
  run_once: true
  any_errors_fatal: true

- name: Check the options of every role the one-click run uses, once
  clusterops.commcheck.validate_options:
    roles: [commcheck, discover, rdma_perf, collective, tcp_perf, report, quarantine]
  run_once: true
  any_errors_fatal: true
'''

RETURN = r'''
roles:
  description: The roles checked (short names).
  returned: always
  type: list
  elements: str
  sample: [collective]
checked:
  description: The variables checked.
  returned: success
  type: list
  elements: str
  sample: [commcheck_collective_hosts, commcheck_collective_library, commcheck_collective_ops]
hosts:
  description: How many hosts' values were checked.
  returned: always
  type: int
  sample: 4
problems:
  description: >-
    One C(<option>: <why>) per problem, with C((on <hosts>)) when not every host has it.
  returned: failure
  type: list
  elements: str
  sample: ["commcheck_collective_hosts: '--help' must not start with '-' (it would be read as an option)"]
'''

from ansible_collections.clusterops.commcheck.plugins.module_utils.options.module_args import controller_only


def main():
    controller_only("validate_options", dict(
        roles=dict(type="list", elements="str", required=True),
        entry_point=dict(type="str", default="main"),
    ))


if __name__ == "__main__":
    main()
