#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
module: quarantine
short_description: Label, taint, cordon or drain Kubernetes nodes, or drain Slurm nodes, that a check found bad
version_added: 1.0.0
description:
  - Takes the nodes a check found bad (a localization result of C(clusterops.commcheck.commcheck_localize),
    C(finding) records, or an explicit list) and quarantines them.
  - O(backend=kubernetes) labels each node C(commcheck.clusterops.io/result=fail), puts the reason in the
    annotation C(commcheck.clusterops.io/reason) and, with O(taint=true), taints it
    C(commcheck.clusterops.io/result=fail:NoSchedule); with O(cordon) it cordons it, with O(drain) it drains it
    (PodDisruptionBudgets honoured). Each command is a C(kubectl) argv list; the node's
    current object is read first so only what is missing runs. O(state=absent) removes them again.
  - O(backend=slurm) plans one C(scontrol update NodeName=... State=DRAIN Reason=...) per node
    (C(State=RESUME) with O(state=absent)), each an argv list; with O(dry_run=false) it runs them one by one and
    reports each result. No script is ever written.
  - B(Dry run by default), O(dry_run=true) plans and reports the commands (RV(actions), RV(report)) and runs none
    of them.
  - Every option is validated before anything runs (node names, keys, the C(kubectl) / C(scontrol) binaries, paths,
    the timeout); a bad value fails with a message that names the option. The reason is reduced to one line of
    printable text.
  - Before the first command that changes a node, the binary that runs it must prove to be C(kubectl) or
    C(scontrol) (its file name, then its version output), and the kubeconfig must be a readable kubeconfig file.
author:
  - commcheck developers (@clusterops)
extends_documentation_fragment:
  - clusterops.commcheck.transport
options:
  backend:
    description: Where to quarantine.
    type: str
    choices: [kubernetes, slurm]
    required: true
  localization:
    description: A localization result (the output of C(clusterops.commcheck.commcheck_localize)).
    type: dict
  findings:
    description:
      - The run's culprits (C(clusterops.commcheck.commcheck_culprits); a C(nic) culprit is a V(rail) here, a flaky
        one is never quarantined) or C(finding) records (C(params.finding) or C(params.component) name the fault).
    type: list
    elements: dict
  hosts:
    description: Hosts to quarantine explicitly, with O(reason).
    type: list
    elements: str
    default: []
  reason:
    description: Reason for the hosts in O(hosts); one line of at most 1024 characters.
    type: str
    default: named by the operator
  components:
    description:
      - Which localized faults quarantine a node. A V(link) quarantines both of its hosts; V(fabric) and
        V(fleet) name no single node and are ignored. Flaky results never quarantine.
    type: list
    elements: str
    choices: [host, rail, link, fabric, fleet]
    default: [host, rail]
  node_names:
    description: Inventory host name to Kubernetes / Slurm node name, where they differ.
    type: dict
    default: {}
  state:
    description: V(present) quarantines; V(absent) releases (removes label, annotation, taint; resumes).
    type: str
    choices: [present, absent]
    default: present
  dry_run:
    description: Plan and report only; run nothing.
    type: bool
    default: true
  taint:
    description: Also taint the Kubernetes node (O(backend=kubernetes)).
    type: bool
    default: false
  cordon:
    description:
      - Also cordon the Kubernetes node (C(kubectl cordon NODE)) so that nothing new is scheduled on it; with
        O(state=absent) uncordon it (C(kubectl uncordon NODE)). Opt-in, and like every action only planned in a
        dry run.
    type: bool
    default: false
  drain:
    description:
      - Also drain the Kubernetes node (C(kubectl drain NODE --ignore-daemonsets --timeout=<drain_timeout>s)),
        which cordons it and evicts its pods. PodDisruptionBudgets are honoured (never C(--disable-eviction) nor
        C(--force)) and pods with emptyDir data are not deleted (no C(--delete-emptydir-data)). O(state=absent)
        uncordons it. Opt-in; only planned in a dry run.
      - A drain that times out, that a PodDisruptionBudget blocks or that kubectl refuses fails the task, naming
        the node, the outcome and the pods left (RV(actions) C(outcome), RV(records) C(params.drain)); the other
        nodes are still drained.
    type: bool
    default: false
  drain_timeout:
    description: Seconds kubectl's drain may take per node (C(--timeout)), 1 to 86400.
    type: int
    default: 300
  taint_effect:
    description: Effect of the taint.
    type: str
    choices: [NoSchedule, PreferNoSchedule, NoExecute]
    default: NoSchedule
  label_key:
    description: Label (and taint) key.
    type: str
    default: commcheck.clusterops.io/result
  annotation_key:
    description: Annotation key of the reason.
    type: str
    default: commcheck.clusterops.io/reason
  kubectl_binary:
    description:
      - Absolute path of kubectl, or a command name (found on E(PATH) when omitted). Its file name must be
        kubectl's (V(kubectl), V(kubectl-1.30), V(microk8s.kubectl)), and before the first command that acts on
        the cluster C(kubectl version --client) must print kubectl's C(Client Version:) line; else the task
        fails naming this option (V(/bin/sh) is never run as kubectl).
    type: path
  kubeconfig:
    description:
      - kubeconfig for the node commands, an absolute path without C(..). It must be a regular file the run's
        user can read and look like a kubeconfig (C(apiVersion), C(clusters), C(contexts)...), checked in a dry
        run too, where the commands run (the transport's host or pod).
      - Its path is never shown in messages, results (RV(actions) show C(--kubeconfig (value not shown))),
        records or logs, and its contents are never read into them.
      - When omitted and the node commands run here (O(transport=host)), kubectl gets a kubeconfig written for
        this module run from the E(K8S_AUTH_*) variables of AWX's Kubernetes credential, else from the service
        account of the pod it runs in, else kubectl's default.
    type: path
  kube_context:
    description: kubeconfig context for the node commands.
    type: str
  role_options:
    description:
      - Take the options from the quarantine role's variables, as the quarantine role
        does (O(backend) from C(commcheck_quarantine_backend), O(kube_context) from C(commcheck_quarantine_context)
        and so on, see docs/variables.md); an empty O(kubeconfig) or O(kube_context) leaves it unset. A variable that is set replaces the task's own value.
      - O(findings) is then C(commcheck_quarantine_findings) when it holds any, else the culprits
        (C(clusterops.commcheck.commcheck_culprits)) of the records the run published (C(commcheck_run_records)
        of C(localhost)). The action plugin reads them on the controller.
    type: bool
    default: false
  scontrol_binary:
    description:
      - Absolute path of scontrol, or a command name (found on E(PATH) when omitted). Its file name must be
        scontrol's, and before the first drain or resume C(scontrol --version) must print Slurm's version line
        (C(slurm 23.11.4)); else the task fails naming this option.
    type: path
  timeout:
    description: Seconds each command may take, 1 to 3600.
    type: int
    default: 60
attributes:
  check_mode:
    support: full
    description: Plans the commands; runs nothing and writes no script.
  platform:
    support: full
    platforms: posix
    description: Runs kubectl / scontrol on the host the module runs on (usually the controller), or in a pod.
notes:
  - Quarantine is opt-in; the C(clusterops.commcheck.quarantine) role runs it only with C(commcheck_quarantine=true),
    on the faults a check run localized.
seealso:
  - plugin: clusterops.commcheck.commcheck_localize
    plugin_type: filter
    description: Names the faulty components this module quarantines.
'''

EXAMPLES = r'''
- name: Show what would be labelled (dry run)
  clusterops.commcheck.quarantine:
    backend: kubernetes
    localization: "{{ commcheck_localization }}"
  delegate_to: localhost
  run_once: true

- name: Label and taint the bad nodes for real
  clusterops.commcheck.quarantine:
    backend: kubernetes
    localization: "{{ commcheck_localization }}"
    taint: true
    dry_run: false
  delegate_to: localhost
  run_once: true

- name: Show the scontrol commands that would drain the bad Slurm nodes (dry run)
  clusterops.commcheck.quarantine:
    backend: slurm
    findings: "{{ commcheck_run_records | selectattr('kind', 'equalto', 'finding') | list }}"
  delegate_to: localhost
  run_once: true
  register: drain

- name: Drain them
  clusterops.commcheck.quarantine:
    backend: slurm
    findings: "{{ commcheck_run_records | selectattr('kind', 'equalto', 'finding') | list }}"
    dry_run: false
  delegate_to: localhost
  run_once: true

- name: Label, cordon and drain the bad Kubernetes nodes (PodDisruptionBudgets honoured, 10 minutes each)
  clusterops.commcheck.quarantine:
    backend: kubernetes
    localization: "{{ commcheck_localization }}"
    drain: true
    drain_timeout: 600
    dry_run: false
  delegate_to: localhost
  run_once: true
'''

RETURN = r'''
nodes:
  description: The nodes to quarantine, each with C(host), C(node), C(components) and C(reason).
  returned: always
  type: list
  elements: dict
actions:
  description:
    - The commands planned (dry run) or run, each with C(node), C(action) and C(argv) (an argv list, never a shell
      string) and, when run, C(rc) and C(stderr) (its last 500 characters). The actions are C(label), C(annotate),
      C(taint), C(cordon), C(drain) and C(unlabel), C(unannotate), C(untaint), C(uncordon).
    - A drain that ran has C(outcome), a dict of C(outcome) (V(drained), V(pdb_blocked), V(timeout), V(refused)
      or V(failed)), C(pods) (the pods left on the node) and C(message) (kubectl's reason, one line).
  returned: always
  type: list
  elements: dict
  sample: [{"node": "gpu001", "action": "drain", "argv": ["scontrol", "update", "NodeName=gpu001", "State=DRAIN",
            "Reason=commcheck: gpu001: 6 of its 6 links are bad"]}]
dry_run:
  description: Whether the commands were only planned.
  returned: always
  type: bool
report:
  description: Lines for the report, saying what was (or would be) done.
  returned: always
  type: list
  elements: str
records:
  description:
    - One C(quarantine) record per node (results contract, verdict C(warn)) saying what was, or in a dry run would
      be, done and why, for C(clusterops.commcheck.record) and the report.
  returned: always
  type: list
  elements: dict
'''

from ansible_collections.clusterops.commcheck.plugins.module_utils.options.module_args import checked_module

from ansible_collections.clusterops.commcheck.plugins.module_utils.options import option_rules as rules
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import quarantine as q
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import quarantine_drain as qd
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands.pair_module import fail_run
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands.transport import (
    TRANSPORT_ARGSPEC,
    config_file_problem,
    get_transport,
    require_cluster_client,
)
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands.runner import commands_fail_task
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import kube_auth


MAX_TIMEOUT_S = 3600


def argument_spec():
    spec = dict(
        backend=dict(type="str", choices=["kubernetes", "slurm"], required=True),
        localization=dict(type="dict"),
        findings=dict(type="list", elements="dict"),
        hosts=dict(type="list", elements="str", default=[]),
        reason=dict(type="str", default="named by the operator"),
        components=dict(type="list", elements="str", choices=list(q.COMPONENTS), default=list(q.DEFAULT_COMPONENTS)),
        node_names=dict(type="dict", default={}),
        state=dict(type="str", choices=["present", "absent"], default="present"),
        dry_run=dict(type="bool", default=True),
        taint=dict(type="bool", default=False),
        taint_effect=dict(type="str", choices=list(q.TAINT_EFFECTS), default="NoSchedule"),
        cordon=dict(type="bool", default=False),
        drain=dict(type="bool", default=False),
        drain_timeout=dict(type="int", default=qd.DRAIN_TIMEOUT_DEFAULT),
        label_key=dict(type="str", default=q.LABEL_KEY, no_log=False),
        annotation_key=dict(type="str", default=q.ANNOTATION_KEY, no_log=False),
        kubectl_binary=dict(type="path"),
        kubeconfig=dict(type="path", no_log=True),
        kube_context=dict(type="str"),
        scontrol_binary=dict(type="path"),
        timeout=dict(type="int", default=60),
        role_options=dict(type="bool", default=False),
    )
    spec.update(TRANSPORT_ARGSPEC)
    return spec


def check_options(params):
    """The options that reach a command line, checked before anything runs; raises OptionError."""
    rules.check_int("timeout", params["timeout"], 1, MAX_TIMEOUT_S)
    rules.check_int("drain_timeout", params["drain_timeout"], qd.DRAIN_TIMEOUT_MIN, qd.DRAIN_TIMEOUT_MAX)
    rules.check_text("reason", params["reason"], q.MAX_REASON)
    for index, host in enumerate(params["hosts"]):
        rules.check_not_flag("hosts[%d]" % index, host)
        if not host.strip():
            rules.fail("hosts[%d]" % index, host, "is empty: name a host or remove the item")
    for host, node in (params["node_names"] or {}).items():
        rules.check_not_flag("node_names key", str(host))
        rules.check_not_flag("node_names[%s]" % host, node)
    q.check_key(params["label_key"], "label_key")
    q.check_key(params["annotation_key"], "annotation_key")
    for name, program in (("kubectl_binary", "kubectl"), ("scontrol_binary", "scontrol")):
        if params[name] is not None:
            rules.check_program(name, params[name], program, must_exist=False)
    if params["kubeconfig"] is not None:
        rules.check_config_path("kubeconfig", params["kubeconfig"], sensitive=True)
    if params["kube_context"] is not None:
        rules.check_name("kube_context", params["kube_context"], "k8s_context")


def node_source(params, item):
    """Which option a bad node came from, for the message that refuses its name."""
    host = item["host"]
    if host in (params.get("node_names") or {}):
        return "node_names[%s]" % host
    if host in (params.get("hosts") or []):
        return "hosts[%d]" % params["hosts"].index(host)
    return "node of host %s (from %s)" % (rules.show(host, 60), "localization" if params.get("localization")
                                          else "findings")


def collect_nodes(params):
    nodes = []
    names = dict((str(k), str(v)) for k, v in (params.get("node_names") or {}).items())
    components = params["components"]
    if params.get("localization"):
        nodes += q.bad_nodes(params["localization"], components, names, option="localization")
    if params.get("findings"):
        nodes += q.bad_nodes(params["findings"], components, names, option="findings")
    if params.get("hosts"):
        nodes += q.bad_nodes([{"host": h, "reason": params["reason"]} for h in params["hosts"]], ["host"], names)
    merged = {}
    for item in nodes:
        entry = merged.setdefault(item["node"], dict(item))
        if entry is not item and item["reason"] not in entry["reason"]:
            entry["reason"] = q.clean_reason(entry["reason"] + "; " + item["reason"].replace("commcheck: ", ""))
    return [merged[k] for k in sorted(merged, key=q.natural_key)]


def check_nodes(params, nodes):
    """Every node name fits its backend (raises QuarantineError naming where the name came from)."""
    check = q.check_k8s_node if params["backend"] == "kubernetes" else q.check_slurm_node
    for item in nodes:
        check(item["node"], node_source(params, item))


def main():
    module = checked_module(argument_spec=argument_spec(), supports_check_mode=True)
    params = module.params
    try:
        check_options(params)
        nodes = collect_nodes(params)
        check_nodes(params, nodes)
    except rules.OptionError as exc:
        module.fail_json(msg="quarantine: %s" % exc)
    transport = get_transport(module)
    planning_only = params["dry_run"] or module.check_mode
    # a program that cannot start (kubectl of the transport, kubectl or scontrol) fails the task
    with commands_fail_task(module, "quarantine"):
        if params["backend"] == "kubernetes":
            result = kubernetes(module, transport, nodes, planning_only)
        else:
            result = slurm(module, transport, nodes, planning_only)
    result["nodes"] = nodes
    result["dry_run"] = bool(planning_only)
    result["actions"] = q.shown_actions(result["actions"])
    result["report"] = q.report_lines(result["actions"], params["backend"], planning_only)
    result["records"] = qd.with_node_actions(q.quarantine_records(
        nodes, result["actions"], params["backend"], planning_only, params["state"]), result["actions"],
        planning_only)
    problems = qd.drain_problems(result["actions"])
    if problems:
        result["report"] += problems
        module.fail_json(msg="quarantine: %s" % "; ".join(problems), **result)
    module.exit_json(**result)


def _binary(transport, given, name):
    """The binary given, else the one found on PATH, else the bare name (a dry run shows it as is)."""
    if given:
        return given
    found = transport.which(name)
    try:
        return rules.check_program(name, found, name, must_exist=False) if found else name
    except rules.OptionError:
        return name


def _require(module, transport, binary, tool, extra=None):
    """Before the binary acts on the cluster: it is there and says it is ``tool`` (kubectl version --client,
    scontrol --version); else the task fails naming the option."""
    extra = extra or {}
    if not transport.which(binary):
        module.fail_json(msg="quarantine: %s not found (%s); install it or set %s_binary" % (
            tool, rules.show(binary), tool), **extra)
    require_cluster_client(module, transport, binary, "%s_binary" % tool, program=tool, what="quarantine", **extra)


def _check_kubeconfig(module, transport):
    """The kubeconfig is a regular file the run's user can read, and a kubeconfig (checked in a dry run too)."""
    if module.params["kubeconfig"]:
        problem = config_file_problem(transport, "kubeconfig", module.params["kubeconfig"])
        if problem:
            module.fail_json(msg="quarantine: %s" % problem)


def kubernetes(module, transport, nodes, planning_only):
    params = module.params
    kubectl = _binary(transport, params.get("kubectl_binary"), "kubectl")
    options = dict(kubectl=kubectl, kubeconfig=params.get("kubeconfig"), context=params.get("kube_context"))
    try:
        plan_args = dict(state=params["state"], taint=params["taint"], taint_effect=params["taint_effect"],
                         label_key=params["label_key"], annotation_key=params["annotation_key"], **options)
        node_args = dict(state=params["state"], cordon=params["cordon"], drain=params["drain"],
                         drain_timeout=params["drain_timeout"])
        # validates keys and names before anything runs
        plan = q.kubectl_plan(nodes, None, **plan_args) + qd.node_actions(
            nodes, None, base=q.kubectl_base(**options), **node_args)
    except rules.OptionError as exc:
        module.fail_json(msg="quarantine: %s" % exc)
    _check_kubeconfig(module, transport)
    if planning_only:
        return {"changed": False, "actions": plan}
    _require(module, transport, kubectl, "kubectl")
    if not transport.remote:
        # kubectl runs here: the run's credentials (K8S_AUTH_*, ...); in a pod it has the pod's own
        options["kubeconfig"], options["context"] = kube_auth.module_kubeconfig(module, options["kubeconfig"],
                                                                                options["context"])
        plan_args.update(options)
    current = {}
    for item in nodes:
        argv = q.kubectl_get_argv(item["node"], **options)
        res = transport.run(argv, params["timeout"])
        obj = q.parse_node_json(res.get("stdout")) if res.get("rc") == 0 else None
        if obj is None:
            why = rules.withhold(res.get("stderr"), params["kubeconfig"]).strip()[-500:] or "kubectl get failed"
            fail_run(module, "quarantine: cannot read node %s: %s" % (item["node"], why), dict(res, stderr=why),
                     rules.withhold_secret_paths(argv))
        current[item["node"]] = obj
    plan = q.kubectl_plan(nodes, current, **plan_args) + qd.node_actions(
        nodes, current, base=q.kubectl_base(**options), **node_args)
    return _run(module, transport, plan)


def _run(module, transport, plan):
    """Run each planned argv; stop at the first that fails (what ran so far is reported)."""
    done = []
    for item in plan:
        drain = item["action"] == "drain" and module.params["backend"] == "kubernetes"   # scontrol's is quick
        # a drain has kubectl's own --timeout: the command's deadline leaves it time to say what is left
        res = transport.run(item["argv"], module.params["drain_timeout"] + qd.DRAIN_GRACE_S if drain
                            else module.params["timeout"])
        stderr = rules.withhold(res.get("stderr"), module.params["kubeconfig"]).strip()[-500:]
        entry = dict(item, rc=res.get("rc"), stderr=stderr)
        done.append(entry)
        if drain:
            # a drain that did not finish is reported (the task fails at the end); the other nodes go on
            entry.update(outcome=qd.drain_outcome(res.get("rc"), res.get("stdout"), rules.withhold(
                res.get("stderr"), module.params["kubeconfig"])))
        elif res.get("rc") != 0:
            fail_run(module, "quarantine: %s of %s failed (rc %s): %s" % (
                item["action"], item["node"], res.get("rc"), stderr or "no message"),
                dict(res, stderr=stderr), rules.withhold_secret_paths(item["argv"]), actions=q.shown_actions(done),
                changed=len(done) > 1)
    return {"changed": bool(done), "actions": done}


def slurm(module, transport, nodes, planning_only):
    params = module.params
    scontrol = _binary(transport, params.get("scontrol_binary"), "scontrol")
    try:
        plan = q.slurm_argvs(nodes, params["state"], scontrol)
    except rules.OptionError as exc:
        module.fail_json(msg="quarantine: %s" % exc)
    if planning_only:
        return {"changed": False, "actions": plan}
    _require(module, transport, scontrol, "scontrol", {"actions": q.shown_actions(plan)})
    return _run(module, transport, plan)


if __name__ == "__main__":
    main()
