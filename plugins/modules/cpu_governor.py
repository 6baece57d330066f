#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
module: cpu_governor
short_description: Set the CPU frequency governor and return the previous ones for restoring
version_added: 1.0.0
description:
  - Sets the cpufreq scaling governor of every CPU (or the CPUs in O(cpus)) to O(governor), for example
    C(performance) for the duration of a bandwidth or latency test, and returns the previous governor of
    each CPU in RV(previous) so a play can restore them in an C(always) block with O(governors).
  - Writes only CPUs whose governor differs; C(changed) is true only when something was written.
  - When the host has no cpufreq (many VMs, containers without it), or its governor files cannot be written
    (not privileged, a read-only C(/sys) as in most containers), nothing is done and RV(skipped_reason) says why,
    with the C(governor_unmanaged) finding in RV(unmanaged); that is not a failure (the tests then run at the
    governor the host has).
  - A governor a CPU does not list in C(scaling_available_governors) is refused before anything is written;
    a write that fails restores the CPUs already written.
author:
  - commcheck developers (@clusterops)
extends_documentation_fragment:
  - clusterops.commcheck.transport
options:
  governor:
    description:
      - Governor to set on the selected CPUs (for example V(performance)). Mutually exclusive with O(governors).
    type: str
  governors:
    description:
      - Governor per CPU (keys like C(cpu0) or C(0)), typically RV(previous) of an earlier run, to restore.
      - Mutually exclusive with O(governor).
    type: dict
  restore_saved:
    description:
      - Puts back the governors a test module or an O(save_to) hold saved in this directory (the run's lock
        directory, C(commcheck_lock_dir)) before switching them, for example those a module killed by signal 9
        (the OOM killer) could not put back itself. With nothing saved there it does nothing.
      - Mutually exclusive with O(governor) and O(governors); RV(restored_saved) says what was put back.
    type: path
    version_added: 1.1.0
  leftover:
    description:
      - With O(restore_saved), whether what is put back was left by a step that could not put it back itself
        (a killed module, an interrupted run), and a warning names the CPUs. V(false) ends a hold that a task
        of the same play began with O(save_to); it puts back all the same, without the warning.
    type: bool
    default: true
    version_added: 1.1.0
  save_to:
    description:
      - With O(governor), keep each CPU's own governor in this directory (the run's lock directory,
        C(commcheck_lock_dir); created with mode C(0700) when missing) before switching it, where
        O(restore_saved) finds it. A later task puts the CPUs back with O(restore_saved), also after a failed
        task; when the run was interrupted or killed between the two, the next run does (its last step, or
        the next hold's end). A governor saved there before (by a step that was killed) is the one kept.
      - Nothing is saved when nothing changes, and nothing in check mode.
    type: path
    version_added: 1.1.0
  cpus:
    description:
      - CPUs to change, as numbers, C(cpuN) names, ranges (C(0-7)) or comma lists; all CPUs with cpufreq
        when empty. CPU numbers go from 0 to 8191 (the most CPUs Linux supports).
      - An empty item (or an empty part between commas, as in C(0,,2)) is refused, never skipped.
    type: list
    elements: str
    default: []
  sysfs_root:
    description: The directory that stands for C(/sys); an absolute path without C(..) components.
    type: path
    default: /sys
  role_options:
    description:
      - Take options from the run's variables on the controller (the module's action plugin), as the collective
        role and the one-click role's release do. A variable that is set replaces the task's own value; one that
        is undefined or null leaves it (or the module's default).
      - V(hold) takes O(governor) from C(commcheck_cpu_governor) and O(save_to) from C(commcheck_lock_dir);
        V(restore) takes O(restore_saved) from C(commcheck_lock_dir). Both take O(sysfs_root) from
        C(commcheck_sysfs_root).
    type: str
    choices: [hold, restore]
    version_added: 1.1.0
attributes:
  check_mode:
    support: full
    description: Reports what would change without writing.
  diff_mode:
    support: full
    description: Shows the governors of the changed CPUs before and after.
  platform:
    support: full
    platforms: posix
    description: Linux hosts with cpufreq; the host the module runs on, or a pod through O(transport=kubectl).
notes:
  - Needs root to write C(/sys). With O(transport=host) it acts on the host the module runs on. With
    O(transport=kubectl) (a test pod, the module on the controller) it reads and writes the pod's governor files
    through C(kubectl exec) (constant scripts, the sysfs root and the values as their arguments); a privileged
    pod switches its node's CPUs; an unprivileged pod's read-only C(/sys) gives RV(unmanaged). A pod's own
    governors are kept in C(pods/<namespace>/<pod>) under O(save_to) (every pod of the controller shares its
    lock directory), where O(restore_saved) with the same pod finds them.
  - The test modules (C(perftest), C(iperf3)) save each CPU's governor in the run's lock directory before
    switching it; the one-click playbook runs this module with O(restore_saved) in its C(always) section, so a
    module killed mid-test leaves no CPU at O(governor).
  - The collective role holds the governor on every host of its check with O(save_to) and O(restore_saved)
    (C(commcheck_cpu_governor)), as its ranks run on the hosts' CPUs and C(mpirun) on one launcher host cannot
    switch the others.
  - Restoring is the play's job (an C(always) section, as in the examples). An C(always) section runs when a
    task of its block fails, but not when C(ansible-playbook) is interrupted (SIGINT) or killed (SIGKILL);
    then the CPUs stay at O(governor) until something sets them back. The next run's discovery reports
    them (C(clusterops.commcheck.rdma_facts) finding C(cpu_governor_not_performance) when not at
    C(performance)); RV(previous) of the switching task, in the play's output, says what they were.
seealso:
  - module: clusterops.commcheck.rdma_facts
'''

EXAMPLES = r'''
- name: Run the tests with the performance governor, then restore
  block:
    - name: Set the performance governor
      clusterops.commcheck.cpu_governor:
        governor: performance
      register: commcheck_governor

    - name: Run the RDMA tests
      ansible.builtin.include_role:
        name: clusterops.commcheck.rdma_perf
  always:
    - name: Restore the previous governors
      clusterops.commcheck.cpu_governor:
        governors: "{{ commcheck_governor.previous }}"
      when: commcheck_governor.previous | default({}) | length > 0

- name: Hold the performance governor around a step, saved where a later run finds it if this one is killed
  block:
    - name: Switch, keeping each CPU's own governor in the lock directory
      clusterops.commcheck.cpu_governor:
        governor: performance
        save_to: /run/lock/commcheck
    - name: Run the collective test
      ansible.builtin.include_role:
        name: clusterops.commcheck.collective
  always:
    - name: Put back what the first task saved
      clusterops.commcheck.cpu_governor:
        restore_saved: /run/lock/commcheck
        leftover: false

- name: Put back what a killed test module left (always-step of a run)
  clusterops.commcheck.cpu_governor:
    restore_saved: /run/lock/commcheck

- name: Only the CPUs of NUMA node 0
  clusterops.commcheck.cpu_governor:
    governor: performance
    cpus: ["0-15"]
'''

RETURN = r'''
previous:
  description: The governor of each selected CPU before the module ran (pass it to O(governors) to restore).
  returned: always
  type: dict
  sample: {cpu0: powersave, cpu1: powersave}
current:
  description: The governor of each selected CPU after the module ran (what it would be, in check mode).
  returned: always
  type: dict
  sample: {cpu0: performance, cpu1: performance}
changed_cpus:
  description: CPUs whose governor was (or, in check mode, would be) written.
  returned: always
  type: list
  elements: str
  sample: [cpu0, cpu1]
restored_saved:
  description: The governors put back from O(restore_saved) (each CPU's own, saved before a killed module switched it).
  returned: with O(restore_saved)
  type: dict
  sample: {cpu0: powersave}
saved_to:
  description: The directory where the governors of RV(changed_cpus) were kept before switching (O(save_to)).
  returned: when O(save_to) is given and CPUs were switched (not in check mode)
  type: str
  sample: /run/lock/commcheck
  version_added: 1.1.0
skipped_reason:
  description: Why nothing was done (no cpufreq on the host, or governor files it cannot write); absent otherwise.
  returned: when the host has no cpufreq, or the CPUs to change cannot be written
  type: str
  sample: no cpufreq scaling_governor under /sys/devices/system/cpu (VM or cpufreq driver not loaded)
unmanaged:
  description:
    - With RV(skipped_reason), the C(governor_unmanaged) finding; C(host), C(governors) (how many CPUs run each),
      C(why) (C(read-only /sys), C(not privileged) or C(no cpufreq)), C(message) and C(fix).
  returned: when RV(skipped_reason) is
  type: dict
  sample: {code: governor_unmanaged, severity: warning, host: node1, governors: {powersave: 8},
           why: [read-only /sys], message: "the CPU governor stays unmanaged: ...", fix: "run the test pod privileged ..."}
  version_added: 1.1.0
'''

import os
import platform

from ansible_collections.clusterops.commcheck.plugins.module_utils.options.module_args import checked_module
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands.transport import (
    TRANSPORT_ARGSPEC,
    get_transport,
)

from ansible_collections.clusterops.commcheck.plugins.module_utils.options.option_rules import (
    OptionError,
    check_path,
    check_text,
    show,
)
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands.cpu_governor import (
    GOVERNOR_NAME,
    GovernorError,
    HostSysfs,
    PodSysfs,
    WHY_NO_CPUFREQ,
    clear_state,
    cpu_key,
    diff_text,
    load_state,
    parse_cpu_list,
    plan_changes,
    pod_state_dir,
    refusals,
    restore_plan,
    save_before_switching,
    unmanaged_finding,
    unwritable_reason,
)


def governors_error(governors):
    """Why the governors option (CPU -> governor name) is unusable, or None."""
    for key, value in governors.items():
        try:
            cpu_key(key)
        except GovernorError as exc:
            return "governors: %s" % exc
        if not isinstance(value, str) or not GOVERNOR_NAME.match(value):
            return "governors.%s %s is not a governor name" % (key, show(value))
    return None


class Where(object):
    """The governor files the module acts on: the host's own, or a pod's through ``kubectl exec`` (the
    ``transport`` options); ``name`` names them in the finding; ``state_dir`` is where their own governors are
    kept in a lock directory (a pod's in a directory of its own there)."""

    def __init__(self, transport):
        self.pod = transport if getattr(transport, "name", "host") == "kubectl" else None
        self.files = PodSysfs(transport) if self.pod else HostSysfs()
        self.name = "%s/%s" % (self.pod.namespace, self.pod.pod) if self.pod else platform.node()

    def state_dir(self, directory):
        return pod_state_dir(directory, self.pod.namespace, self.pod.pod) if self.pod else directory


def restore_saved(module, params, where):
    """Put back what a killed test module saved before switching; exits the module."""
    try:
        directory = where.state_dir(check_path("restore_saved", params["restore_saved"]))
    except OptionError as exc:
        module.fail_json(msg=str(exc))
    saved = load_state(directory) if os.path.isdir(directory) else None
    if not saved:
        module.exit_json(changed=False, previous={}, current={}, changed_cpus=[], restored_saved={})
    try:
        cpus, changes = restore_plan(saved, params["sysfs_root"], where.files)
    except GovernorError as exc:
        module.fail_json(msg="restore_saved: %s" % exc)
    names = sorted(changes, key=lambda k: int(k[3:]))
    result = dict(changed=bool(changes), changed_cpus=names,
                  previous=dict((name, cpus[name]["governor"]) for name in names),
                  current=dict((name, changes[name][1]) for name in names),
                  restored_saved=dict((name, changes[name][1]) for name in names))
    if module.check_mode:
        module.exit_json(**result)
    try:
        where.files.apply_changes(cpus, changes, params["sysfs_root"])
        clear_state(directory)
    except (GovernorError, OSError) as exc:
        module.fail_json(msg="restore_saved: %s" % exc, **result)
    if names and params["leftover"]:
        module.warn("a test module did not put back the CPU governor of %s (it was killed, e.g. signal 9 from the "
                    "OOM killer); restored from what it saved before switching" % ", ".join(names))
    module.exit_json(**result)


def main():
    module = checked_module(
        argument_spec=dict(
            governor=dict(type="str"),
            governors=dict(type="dict"),
            cpus=dict(type="list", elements="str", default=[]),
            sysfs_root=dict(type="path", default="/sys"),
            restore_saved=dict(type="path"),
            leftover=dict(type="bool", default=True),
            save_to=dict(type="path"),
            # read on the controller by the module's action plugin, which takes it out
            role_options=dict(type="str", choices=["hold", "restore"]),
            **TRANSPORT_ARGSPEC
        ),
        mutually_exclusive=[("governor", "governors", "restore_saved")],
        required_one_of=[("governor", "governors", "restore_saved")],
        required_by={"save_to": "governor"},
        supports_check_mode=True,
    )
    params = module.params
    governor = params["governor"]
    if governor is not None and not GOVERNOR_NAME.match(governor):
        module.fail_json(msg="governor %s is not a governor name" % show(governor))
    try:
        params["sysfs_root"] = check_path("sysfs_root", params["sysfs_root"])
        if params["save_to"] is not None:
            params["save_to"] = check_path("save_to", params["save_to"])
    except OptionError as exc:
        module.fail_json(msg=str(exc))
    try:
        for idx, item in enumerate(params["cpus"]):
            check_text("cpus[%d]" % idx, item, 1024)
        selected = parse_cpu_list(params["cpus"])
    except OptionError as exc:
        module.fail_json(msg=str(exc))
    except GovernorError as exc:
        module.fail_json(msg=str(exc))
    governors = None
    if params["governors"] is not None:
        governors = dict((k, v) for k, v in params["governors"].items())
        error = governors_error(governors)
        if error:
            module.fail_json(msg=error)

    where = Where(get_transport(module))
    if params["restore_saved"] is not None:
        restore_saved(module, params, where)
    try:
        cpus = where.files.read_cpus(params["sysfs_root"])
    except GovernorError as exc:
        module.fail_json(msg=str(exc))
    if not cpus:
        reason = ("no cpufreq scaling_governor under %s/devices/system/cpu (VM or cpufreq driver not loaded)"
                  % params["sysfs_root"].rstrip("/"))
        module.exit_json(changed=False, previous={}, current={}, changed_cpus=[], skipped_reason=reason,
                         unmanaged=unmanaged_finding(where.name, cpus, [WHY_NO_CPUFREQ], governor or "performance",
                                                     reason))
    try:
        targets, changes = plan_changes(cpus, governor=governor, governors=governors, selected=selected)
    except GovernorError as exc:
        module.fail_json(msg=str(exc))
    previous = dict((name, cpus[name]["governor"]) for name in targets)
    refused = unwritable_reason(cpus, changes)
    if refused:
        why = set(refusals(cpus, changes).values())
        module.exit_json(changed=False, previous=previous, current=previous, changed_cpus=[], skipped_reason=refused,
                         unmanaged=unmanaged_finding(where.name, cpus, why, governor or "the governor asked for",
                                                     refused))
    current = dict(previous)
    current.update(dict((name, change[1]) for name, change in changes.items()))
    result = dict(changed=bool(changes), previous=previous, current=current,
                  changed_cpus=sorted(changes, key=lambda k: int(k[3:])))
    if module._diff:
        result["diff"] = {"before": diff_text(cpus, changes), "after": diff_text(cpus, changes, after=True),
                          "before_header": "scaling_governor", "after_header": "scaling_governor"}
    if changes and not module.check_mode:
        try:
            if params["save_to"]:
                result["saved_to"] = where.state_dir(params["save_to"])
                save_before_switching(result["saved_to"], params["sysfs_root"],
                                      dict((name, before) for name, (before, _after) in changes.items()))
            where.files.apply_changes(cpus, changes, params["sysfs_root"])
        except GovernorError as exc:
            module.fail_json(msg=str(exc), previous=previous)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
