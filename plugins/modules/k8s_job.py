#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
module: k8s_job
short_description: Run a collective check as an MPIJob or a Volcano Job, read its launcher's log, delete it
version_added: 1.1.0
description:
  - Submits O(manifest), a Kubeflow mpi-operator C(kubeflow.org/v2beta1) MPIJob or a Volcano C(batch.volcano.sh)
    Job (as the C(k8s_pods) role writes them with C(commcheck_k8s_render_job)), with C(kubectl apply -f -), the
    manifest on kubectl's standard input.
  - Watches it until it ends, every 2 seconds, with C(kubectl get mpijob|vcjob NAME -o json) and
    C(kubectl get pods -l commcheck.clusterops.io/run=RUN,commcheck-role -o json) (the job's pods, by the run's
    label); the job's own status decides when it has ended (the MPIJob's C(Succeeded) or C(Failed) condition,
    the Volcano Job's C(status.state.phase) C(Completed), C(Failed), C(Aborted) or C(Terminated)).
  - A pod of the job refused in a way waiting does not cure (the kubelet's admission, an image that cannot be
    pulled), or still Pending after O(schedule_timeout) seconds (the scheduler found no node), ends the watch;
    the result names the pod, its role, the reason and message the scheduler or kubelet gave, and a fix.
  - Reads the launcher pod's log (C(kubectl logs POD -c CONTAINER)), bounded as every tool output is (its head,
    its tail and the lines the parsers need), parses it with the nccl-tests or hccl_test parser and judges it
    as the M(clusterops.commcheck.collective) module judges a run; RV(records) are the same C(collective)
    records.
  - Deletes the job and its pods at the end, also when it failed or the watch ran out of time, and when the
    module gets SIGINT, SIGTERM or SIGHUP (Ctrl-C) or ansible-playbook stops waiting for it, with
    C(kubectl delete mpijob|vcjob -l commcheck.clusterops.io/run=RUN) and C(kubectl delete pod -l
    commcheck.clusterops.io/run=RUN,commcheck-role), only what carries the run's label and the role label the
    job's templates set.
author:
  - commcheck developers (@clusterops)
extends_documentation_fragment:
  - clusterops.commcheck.kubectl_client
options:
  manifest:
    description:
      - The MPIJob or Volcano Job, as a dict. Its C(metadata.name), C(metadata.namespace) and the label
        C(commcheck.clusterops.io/run) name what is watched and deleted.
    type: dict
    required: true
  collective:
    description:
      - The collective options the job's launcher command was built from (C(commcheck_k8s_job_collective)), of
        which C(library) (V(nccl) or V(hccl), default V(nccl)), C(operation) (default V(all_reduce)), C(gpus_per_node),
        C(gpus_per_process) are read here; the others are ignored.
    type: dict
    default: {}
  expected_busbw_gbs:
    description: Expected bus bandwidth in GB/s; a run below O(min_fraction) of it fails. None judges no speed.
    type: float
  min_fraction:
    description: Fraction of O(expected_busbw_gbs) a run must reach (0 to 1).
    type: float
    default: 0.8
  timeout:
    description: Seconds the whole job may take, from its submission to its end (1 to 86400).
    type: int
    default: 3600
  schedule_timeout:
    description: Seconds a pod of the job may stay Pending before the job is given up (1 to 86400).
    type: int
    default: 300
attributes:
  check_mode:
    support: full
    description: Plans only - returns the kubectl commands it would run; submits and deletes nothing.
  diff_mode:
    support: none
    description: Returns no diff; the job's phase and records say what happened.
notes:
  - The job's pods need the image, resources and SSH set-up that C(docs/kubernetes.md) describes.
'''

EXAMPLES = r'''
- name: Run the collective check as an MPIJob and keep its records
  clusterops.commcheck.k8s_job:
    manifest: "{{ lookup('file', 'commcheck-k8s/cc-1-mpijob.yml') | from_yaml }}"
    collective: {library: nccl, operation: all_reduce, gpus_per_node: 8}
    expected_busbw_gbs: 180
  register: job
'''

RETURN = r'''
phase:
  description: How the job ended, V(Succeeded) or V(Failed) (also for pods refused and a watch out of time).
  returned: always
  type: str
phases:
  description: >-
    Each change seen while watching, as C(phase) and C(pods) (C(launcher Running on node-a; 2/2 workers
    Running)), in order.
  returned: always
  type: list
  elements: dict
refusals:
  description: By pod name, why a pod of the job could not start (C(reason), C(message), C(fix), C(final), C(events)).
  returned: always
  type: dict
verdict:
  description: The collective run's verdict (V(pass), V(fail), V(error)), as the collective module gives it.
  returned: always
  type: str
cause:
  description: Why the verdict is what it is.
  returned: always
  type: str
busbw_gbs:
  description: Bus bandwidth in GB/s from the launcher's log.
  returned: always
  type: float
records:
  description: The C(collective) records of the run, for M(clusterops.commcheck.record).
  returned: always
  type: list
  elements: dict
deleted:
  description: What the cleanup deleted (kubectl's C(kind/name) lines).
  returned: always
  type: list
  elements: str
commands:
  description: The kubectl commands run (or, in check mode, planned), without the kubeconfig's path.
  returned: always
  type: list
  elements: list
'''

import json
import signal
import time

from ansible_collections.clusterops.commcheck.plugins.module_utils.options.module_args import checked_module
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import collective_spec, kube_auth
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands.k8s_job_stdin import run_with_input
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands.runner import (
    HostTransport, commands_fail_task, controller_gone, install_cleanup_handlers)
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands.transport import require_cluster_client
from ansible_collections.clusterops.commcheck.plugins.module_utils.kubernetes import k8s_job_watch as watch
from ansible_collections.clusterops.commcheck.plugins.module_utils.kubernetes.k8s_job_result import job_result
from ansible_collections.clusterops.commcheck.plugins.module_utils.kubernetes.k8s_pods import (
    RUN_LABEL, client_argv, client_option_errors)
from ansible_collections.clusterops.commcheck.plugins.module_utils.kubernetes.k8s_refusals import (
    events_argv, warning_events, with_events)
from ansible_collections.clusterops.commcheck.plugins.module_utils.options import option_rules as rules
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.collective_stream import (
    collective_line_filter)
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.output_capture import (
    DOCUMENT, filtered_output)
from ansible_collections.clusterops.commcheck.plugins.module_utils.planning.collective_plan import collective_records

POLL_S = 2
KUBECTL_S = 60
DELETE_S = 120
MAX_S = 24 * 3600
LIBRARIES = ("nccl", "hccl")

ARGUMENT_SPEC = dict(
    manifest=dict(type="dict", required=True),
    collective=dict(type="dict", default={}),
    expected_busbw_gbs=dict(type="float"),
    min_fraction=dict(type="float", default=0.8),
    timeout=dict(type="int", default=3600),
    schedule_timeout=dict(type="int", default=300),
    **kube_auth.client_argument_spec()
)


class Interrupted(Exception):
    """ansible-playbook stopped waiting for the module (its result pipe closed)."""


def problems(params):
    """Every problem with the module's arguments, each naming its option; (identity, problems)."""
    errors = []
    found = None
    try:
        found = watch.identity(params["manifest"])
        kind, name, namespace, run_id = found
        for option, value, rule in (("manifest.metadata.name", name, "k8s_name"),
                                    ("manifest.metadata.namespace", namespace, "k8s_label"),
                                    ("manifest.metadata.labels[%s]" % RUN_LABEL, run_id, "k8s_label_value")):
            errors += _problem(rules.check_name, option, value, rule)
        if not watch.launcher_argv(params["manifest"]):
            errors.append("manifest has no launcher command (the %s's launcher container)" % watch.RESOURCES[kind])
    except watch.JobManifestError as exc:
        errors.append(str(exc))
    library = (params["collective"] or {}).get("library") or "nccl"
    if library not in LIBRARIES:
        errors.append("collective.library must be one of nccl, hccl, got %s" % rules.show(library))
    for option, low, high in (("timeout", 1, MAX_S), ("schedule_timeout", 1, MAX_S)):
        errors += _problem(rules.check_int, option, params[option], low, high)
    errors += _problem(collective_spec.check_positive, "min_fraction", params["min_fraction"], 1)
    if params["expected_busbw_gbs"] is not None:
        errors += _problem(collective_spec.check_positive, "expected_busbw_gbs", params["expected_busbw_gbs"],
                           collective_spec.MAX_BUSBW_GBS)
    client = dict(params, mpi_agent_kubectl="kubectl", mpi_agent_dir=None)
    errors += client_option_errors(client, HostTransport().which)
    return found, errors


def _problem(check, *args):
    try:
        check(*args)
    except rules.OptionError as exc:
        return [str(exc)]
    return []


class JobRun(object):
    """One job: submitted, watched, its log read, deleted."""

    def __init__(self, module, identity):
        self.module = module
        self.kind, self.name, self.namespace, self.run_id = identity
        self.resource = watch.RESOURCES[self.kind]
        self.transport = HostTransport()
        self.transport.abandoned = controller_gone
        binary = module.params["kubectl_binary"] or self.transport.which("kubectl")
        if not binary:
            module.fail_json(msg="kubectl was not found on PATH; install it or set kubectl_binary")
        require_cluster_client(module, self.transport, binary, "kubectl_binary",
                               kubeconfig=module.params["kubeconfig"])
        self.base = client_argv(binary, dict(module.params, namespace=self.namespace))
        self.job_selector = "%s=%s" % (RUN_LABEL, self.run_id)
        self.pod_selector = "%s,%s" % (self.job_selector, watch.ROLE_LABEL)
        self.commands = []
        self.submitted = False
        self.seen = False

    def argv(self, args):
        return self.base + list(args)

    def run(self, args, timeout=KUBECTL_S, capture=DOCUMENT):
        res = self.transport.run(self.argv(args), timeout, capture=capture)
        self.commands.append(res["cmd"])
        if res.get("abandoned"):
            raise Interrupted()
        return res

    def fail(self, what, res, result):
        stderr = rules.withhold(res["stderr"], self.module.params["kubeconfig"])
        raise JobFailed("kubectl %s failed: %s" % (what, (stderr.strip() or res["stdout"].strip())[-2000:]),
                        dict(result, rc=res["rc"], cmd=res["cmd"]))

    def apply(self, result):
        self.submitted = True
        res = run_with_input(self.argv(["apply", "-f", "-"]), json.dumps(self.module.params["manifest"]),
                             KUBECTL_S)
        self.commands.append(res["cmd"])
        if res["rc"] != 0:
            self.fail("apply", res, result)

    def get(self, args, result):
        res = self.run(["get"] + args + ["-o", "json"])
        if res["rc"] != 0:
            self.fail("get", res, result)
        try:
            doc = json.loads(res["stdout"] or "{}")
        except ValueError:
            raise JobFailed("kubectl get returned no JSON", dict(result, cmd=res["cmd"]))
        if not isinstance(doc, dict):
            raise JobFailed("kubectl get returned JSON that is not a Kubernetes object", dict(result, cmd=res["cmd"]))
        return doc

    def look(self, result):
        job = self.get([self.resource, self.name, "--ignore-not-found"], result)
        pods = [p for p in self.get(["pods", "-l", self.pod_selector], result).get("items") or []
                if isinstance(p, dict)]
        return job, pods

    def watch(self, result):
        """Poll until the job ends, a pod is refused for good, or the deadline; the last observation."""
        params = self.module.params
        deadline = time.monotonic() + params["timeout"]
        pending, last, seen, nodes = {}, time.monotonic(), None, []
        while True:
            if controller_gone():
                raise Interrupted()
            job, pods = self.look(result)
            now = time.monotonic()
            pending = watch.pending_times(pending, pods, now - last)
            last = now
            observed = watch.observe(self.kind, job, pods, pending, params["schedule_timeout"])
            # the workers' nodes as seen while they ran (mpi-operator deletes running workers at the end)
            nodes += [p["node"] for p in observed["pods"] if p["role"] == "worker" and p["node"] not in nodes + [None]]
            observed["worker_nodes"] = list(nodes)
            if job:
                self.seen = True
            elif self.seen:
                observed.update(phase="Failed", ended=True, reason="NotFound",
                                cause="the %s %s was deleted while it ran (by someone else)"
                                % (self.resource, self.name))
            line = {"phase": observed["phase"], "pods": watch.summary(observed["pods"])}
            if line != seen:
                result["phases"].append(line)
                seen = line
            if observed["ended"]:
                return observed, pods
            if now >= deadline:
                observed.update(phase="Failed", ended=True, reason="Timeout",
                                cause="the %s did not end within timeout=%ss (%s)" % (
                                    self.resource, params["timeout"], line["pods"]))
                return observed, pods
            time.sleep(POLL_S)

    def explain(self, observed, pods):
        """Each refusal with its pod's Warning events and a fix naming its node."""
        by_name = dict((p["metadata"].get("name"), p) for p in pods)
        for name, refusal in list(observed["refusals"].items()):
            res = self.run(events_argv(name), timeout=30)
            events = warning_events(res["stdout"], name) if res["rc"] == 0 else []
            node = (by_name.get(name, {}).get("spec") or {}).get("nodeName")
            observed["refusals"][name] = with_events(refusal, events, node)

    def log(self, pods):
        """The launcher's log: {text, rc, timed_out, duration_s}; text None when there is no launcher pod."""
        launcher = watch.launcher_pod(pods)
        if not launcher:
            return {"text": None}
        res = self.run(["logs", launcher, "-c", watch.LAUNCHER_CONTAINERS[self.kind]], timeout=KUBECTL_S * 2,
                       capture=filtered_output(collective_line_filter()))
        text = res["stdout"] if res["rc"] == 0 else None
        return {"text": text, "launcher": launcher}

    def delete(self, result):
        """Delete the job and its pods by the run's label; deaf to further signals meanwhile."""
        held = {}
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            held[sig] = signal.signal(sig, signal.SIG_IGN)
        self.transport.abandoned = None
        try:
            for kind, selector in ((self.resource, self.job_selector), ("pod", self.pod_selector)):
                res = self.transport.run(self.argv(["delete", kind, "-l", selector, "--ignore-not-found",
                                                    "--wait=true", "--timeout=%ds" % DELETE_S]), DELETE_S + 30)
                self.commands.append(res["cmd"])
                result["deleted"] += [line.split('"')[1] if '"' in line else line
                                      for line in res["stdout"].splitlines() if "deleted" in line]
                if res["rc"] != 0:
                    result.setdefault("cleanup_errors", []).append(
                        rules.withhold(res["stderr"], self.module.params["kubeconfig"]).strip()[-500:])
        finally:
            for sig, handler in held.items():
                signal.signal(sig, handler)


class JobFailed(Exception):
    def __init__(self, msg, result):
        Exception.__init__(self, msg)
        self.result = result


def planned(job, result):
    """Check mode: the commands that would run."""
    result["commands"] = [job.argv(["apply", "-f", "-"]),
                          job.argv(["get", job.resource, job.name, "--ignore-not-found", "-o", "json"]),
                          job.argv(["get", "pods", "-l", job.pod_selector, "-o", "json"]),
                          job.argv(["logs", "%s-launcher" % job.name, "-c", watch.LAUNCHER_CONTAINERS[job.kind]]),
                          job.argv(["delete", job.resource, "-l", job.job_selector, "--ignore-not-found"]),
                          job.argv(["delete", "pod", "-l", job.pod_selector, "--ignore-not-found"])]
    result["commands"] = [rules.withhold_secret_paths(c) for c in result["commands"]]
    result.update(changed=True, phase="Planned", verdict="skipped", cause="check mode: nothing was submitted")
    return result


def execute(module, job, result):
    """Submit, watch, read, judge; the job is deleted on every way out (a signal's SystemExit included)."""
    params = module.params
    try:
        started = time.monotonic()
        job.apply(result)
        result["changed"] = True
        observed, pods = job.watch(result)
        duration = round(time.monotonic() - started, 3)
        if observed["refusals"]:
            job.explain(observed, pods)
        log = dict(job.log(pods), duration_s=duration)
    finally:
        if job.submitted:
            job.delete(result)
    run = job_result(params["manifest"], params["collective"], observed, log,
                     {"expected_busbw_gbs": params["expected_busbw_gbs"], "min_fraction": params["min_fraction"]})
    result.update(run, phase=observed["phase"], refusals=observed["refusals"], launcher=log.get("launcher"),
                  records=collective_records([run], mode="pool"))
    return result


def main():
    module = checked_module(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    params = module.params
    identity, errors = problems(params)
    if errors:
        module.fail_json(msg="invalid k8s_job parameters: " + "; ".join(errors), errors=errors)
    params["kubeconfig"], params["context"] = kube_auth.module_kubeconfig(
        module, params["kubeconfig"], params["context"])
    # from here a signal stops the running kubectl and raises SystemExit, which the cleanup lets through
    install_cleanup_handlers()
    result = dict(changed=False, phase=None, phases=[], refusals={}, verdict=None, cause=None, busbw_gbs=None,
                  records=[], deleted=[], commands=[])
    with commands_fail_task(module, "k8s_job"):
        job = JobRun(module, identity)
        if module.check_mode:
            module.exit_json(**planned(job, result))
        try:
            execute(module, job, result)
        except JobFailed as exc:
            result.update(exc.result)
            result["commands"] = job.commands
            module.fail_json(msg=str(exc), **result)
        except Interrupted:
            result["commands"] = job.commands
            module.fail_json(msg="k8s_job: ansible-playbook stopped waiting; the job was deleted", **result)
    result["commands"] = job.commands
    # a job that ran and failed, or never started, is a result (its records say why), not a failed task
    module.exit_json(failed=False, **result)


if __name__ == "__main__":
    main()
