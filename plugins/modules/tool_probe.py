#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
module: tool_probe
short_description: Look for test tools and accelerator evidence on a host or in its pod
version_added: 1.0.0
description:
  - Runs one fixed shell script, on the host or with the C(kubectl) transport inside the pod, that looks for
    every key of O(keys) and prints the ones it found; the one-click check decides from it which checks can
    run where (perftest tools, C(iperf3), C(mpirun), the collective test binaries, GPU or NPU evidence).
  - The keys are the script's positional arguments, never part of the script, so no value becomes code or a
    flag.
  - M(clusterops.commcheck.rdma_facts) runs the same probe with its O(clusterops.commcheck.rdma_facts#module:probe)
    option, so that discovery and the probe cost one module run per host; this module is for runs without
    discovery.
  - Changes nothing. A probe that cannot run (no C(sh), the pod gone) is not a failure of the module;
    RV(probe.rc) is then not 0 and RV(probe.stderr) says why.
author:
  - commcheck developers (@clusterops)
extends_documentation_fragment:
  - clusterops.commcheck.transport
options:
  keys:
    description:
      - What to look for. C(cmd:NAME) is found when C(command -v NAME) finds it on PATH (a NAME with a slash
        must be an executable file); C(exists:/PATH) when the path exists.
      - At most 512 keys of at most 4096 characters, without NUL, tab or line breaks; a command name must not
        start with C(-).
    type: list
    elements: str
    required: true
  timeout:
    description: Deadline in seconds for the probe, 1 to 86400.
    type: int
    default: 60
  role_options:
    description:
      - Take O(transport) from this host's C(commcheck_transport) and, with the C(kubectl) transport, O(kubectl)
        from its C(commcheck_kubectl), as the collective role's probe does. A variable that is null, or an empty
        C(commcheck_kubectl), leaves the option unset; one that is set replaces the task's own value. The action
        plugin reads them on the controller.
    type: bool
    default: false
attributes:
  check_mode:
    support: full
    description: It only looks; check mode runs the same probe.
  platform:
    support: full
    platforms: posix
    description: Hosts with a POSIX C(sh), or pods through O(transport=kubectl).
seealso:
  - module: clusterops.commcheck.rdma_facts
'''

EXAMPLES = r'''
- name: Look for perftest, iperf3 and an NVIDIA driver
  clusterops.commcheck.tool_probe:
    keys: [cmd:ib_write_bw, cmd:iperf3, exists:/proc/driver/nvidia/version]
  register: tools

- name: Say whether iperf3 is there
  ansible.builtin.debug:
    msg: "iperf3: {{ tools.probe.found['cmd:iperf3'] | default('not found') }}"

- name: Look inside a test pod
  clusterops.commcheck.tool_probe:
    keys: [cmd:mpirun, cmd:/opt/nccl-tests/build/all_reduce_perf]
    transport: kubectl
    kubectl:
      namespace: commcheck
      pod: commcheck-run1-node1
'''

RETURN = r'''
probe:
  description:
    - The outcome, the same as M(clusterops.commcheck.rdma_facts) returns for its
      O(clusterops.commcheck.rdma_facts#module:probe) option.
    - Its C(rc) is nested so that a probe that could not run does not fail the task; the play decides.
  returned: always
  type: complex
  contains:
    looked_for:
      description: The keys looked for, as given.
      type: list
      elements: str
      sample: [cmd:ib_write_bw, cmd:iperf3]
    found:
      description: Key -> the path found for it, for every key found.
      type: dict
      sample: {"cmd:iperf3": /usr/bin/iperf3}
    rc:
      description: Exit status of the probe; the script always exits 0, so anything else means it could not run.
      type: int
      sample: 0
    stdout_lines:
      description: The probe's output, one C(KEY<TAB>PATH) line per key found.
      type: list
      elements: str
      sample: ["cmd:iperf3\t/usr/bin/iperf3"]
    stderr:
      description: What the probe (or C(kubectl)) wrote to stderr.
      type: str
      sample: ""
    cmd:
      description: The probe's argv (before the transport's wrapping).
      type: list
      elements: str
      sample: [sh, -c, "for a in ...", sh, cmd:ib_write_bw, cmd:iperf3]
'''

from ansible_collections.clusterops.commcheck.plugins.module_utils.options.module_args import checked_module

from ansible_collections.clusterops.commcheck.plugins.module_utils.commands.tool_probe import (
    check_probe_keys,
    probe_tools,
)
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands.transport import (
    TRANSPORT_ARGSPEC,
    get_transport,
)
from ansible_collections.clusterops.commcheck.plugins.module_utils.options import option_rules
from ansible_collections.clusterops.commcheck.plugins.module_utils.options.option_rules import OptionError

TIMEOUT_MAX = 86400


def main():
    argument_spec = dict(
        keys=dict(type="list", elements="str", required=True, no_log=False),
        timeout=dict(type="int", default=60),
        # read on the controller by the action plugin, which takes it out
        role_options=dict(type="bool", default=False),
    )
    argument_spec.update(TRANSPORT_ARGSPEC)
    module = checked_module(argument_spec=argument_spec, supports_check_mode=True)
    params = module.params
    try:
        keys = check_probe_keys(params["keys"])
        option_rules.check_int("timeout", params["timeout"], 1, TIMEOUT_MAX)
    except OptionError as exc:
        module.fail_json(msg=str(exc))
    module.exit_json(changed=False, probe=probe_tools(get_transport(module), keys, params["timeout"]))


if __name__ == "__main__":
    main()
