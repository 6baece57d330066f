# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action clusterops.commcheck.pods_plan: the k8s_pods role's steps, from its role variables read once.

Runs on the controller (the k8s_pods role runs on localhost, where kubectl runs). Each step reads the role's
``commcheck_k8s_*`` variables in Python (``module_utils/kubernetes/pods_plan.py`` decides) and returns what
the role's tasks take; ``create``, ``attach`` and ``cleanup`` run the test_pods and existing_pods modules
with the arguments built from them (an empty kubeconfig, context or kubectl path left out):

- ``state``: this run's pod settings (run id, namespace, kubectl settings, the nodes as a list); register it
  as ``commcheck_k8s_pods_state``, which the cleanup reads on localhost;
- ``render``: the job and RBAC manifests asked for (``files``: dest and content), the node selector resolved
  by test_pods in check mode, written under ``commcheck_k8s_manifest_dir`` (``written``: those that changed;
  nothing is written in check mode);
- ``job``: runs the job of ``render`` (the same manifest) with the k8s_job module: submitted, watched, its
  launcher's log read into ``records``, deleted; its result as is;
- ``create`` / ``attach``: test_pods state=present / existing_pods state=attached, their result as is;
- ``hosts``: the add_host entry of each pod of O(result);
- ``cleanup``: deletes the test pods of the run kept on localhost (else the role variables'), or stops the
  collection's processes in the existing pods attached; ``state`` is what localhost keeps after it.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os
import random
import time
from collections.abc import Mapping

from ansible.errors import AnsibleError
from ansible.module_utils.parsing.convert_bool import boolean
from ansible.plugins.filter.core import to_nice_yaml

from ansible_collections.clusterops.commcheck.plugins.module_utils.commands.kubexec import KubexecError
from ansible_collections.clusterops.commcheck.plugins.module_utils.kubernetes import pods_plan as plan
from ansible_collections.clusterops.commcheck.plugins.module_utils.options.option_rules import OptionError
from ansible_collections.clusterops.commcheck.plugins.module_utils.records.atomic_file import write_atomic
from ansible_collections.clusterops.commcheck.plugins.plugin_utils.controller_action import ControllerAction

ARGUMENT_SPEC = plan.PODS_PLAN_SPEC
STATE_VAR = "commcheck_k8s_pods_state"
INTS = ("gpus", "wait_timeout", "active_deadline_seconds", "job_timeout")
BOOLS = ("host_network", "privileged", "keep_pods", "mpi_agent", "render_rbac", "render_only", "run_job")
NAMES = INTS + BOOLS + (
    "existing_pods", "nodes", "node_selector", "namespace", "image", "image_pull_policy", "image_pull_secrets",
    "command", "resources", "gpu_resource", "networks", "tolerations", "shm_size", "capabilities", "labels",
    "annotations", "service_account", "kubeconfig", "context", "kubectl_binary", "run_id", "name_prefix", "group",
    "host_name", "pod_vars", "node_vars", "mpi_agent_dir", "mpi_kubectl", "mpi_mca", "render_job", "manifest_dir",
    "job_collective", "job_timeout")
TEST_PODS = "clusterops.commcheck.test_pods"
EXISTING_PODS = "clusterops.commcheck.existing_pods"
K8S_JOB = "clusterops.commcheck.k8s_job"


def new_run_id(clock=time.gmtime, draw=random.randrange):
    """A run id of its own: cc-<UTC time>-<a number below 99999>."""
    return "cc-%s-%d" % (time.strftime("%Y%m%d-%H%M%S", clock()), draw(99999))


def typed(name, value):
    """A role variable with its type: the numbers as int, the flags as bool (a survey may send text)."""
    if name in INTS and value is not None:
        return int(value)
    if name in BOOLS and value is not None:
        return boolean(value, strict=False)
    return value


def manifest_files(values, run_id, nodes):
    """The manifests asked for: [{dest, content}] under commcheck_k8s_manifest_dir."""
    directory = plan.var(values, "manifest_dir")
    files = []
    if plan.var(values, "render_job"):
        files.append({"dest": "%s/%s-%s.yml" % (directory, run_id, plan.var(values, "render_job")),
                      "content": to_nice_yaml(plan.job_manifest(values, run_id, nodes), indent=2)})
    if plan.var(values, "render_rbac"):
        namespace = plan.var(values, "namespace")
        files.append({"dest": "%s/%s-kubexec-rbac.yml" % (directory, namespace),
                      "content": to_nice_yaml(plan.rbac_list(namespace, plan.var(values, "service_account")),
                                              indent=2)})
    return files


def write_manifests(files, check_mode):
    """Writes each manifest whose file does not hold its content yet (mode 0644, atomically; its directory made
    with mode 0755 when missing), none in check mode; returns the paths written (or that would be)."""
    written = []
    for item in files:
        try:
            with open(item["dest"], encoding="utf-8") as handle:
                if handle.read() == item["content"]:
                    continue
        except OSError:
            pass
        written.append(item["dest"])
        if not check_mode:
            os.makedirs(os.path.dirname(item["dest"]) or ".", mode=0o755, exist_ok=True)
            write_atomic(item["dest"], item["content"])
    return written


def localhost_value(task_vars, name):
    """localhost's variable ``name`` (where the k8s_pods role keeps its state), or None."""
    try:
        localhost = (task_vars.get("hostvars") or {})["localhost"]
    except KeyError:
        return None
    return localhost[name] if isinstance(localhost, Mapping) and name in localhost else None


class ActionModule(ControllerAction):

    NAME = "clusterops.commcheck.pods_plan"
    ARGUMENT_SPEC = ARGUMENT_SPEC
    FAILURES = (ValueError, TypeError, KubexecError, OptionError, AnsibleError)
    # create, attach and cleanup run a module on localhost
    _requires_connection = True

    def decide(self, args, result, task_vars):
        values = dict((plan.PREFIX + name, typed(name, self._run_value(task_vars, plan.PREFIX + name)))
                      for name in NAMES)
        step = args["step"]
        result["changed"] = False
        if step == "state":
            state = plan.pods_state(values, new_run_id)
            hint = plan.existing_hint(state) if state["existing"] else plan.delete_hint(values, state)
            result.update(state, nodes=plan.node_list(plan.var(values, "nodes")), msg=hint)
            return result
        state = self._run_value(task_vars, STATE_VAR) or {}
        if step in ("render", "job"):
            nodes = state["nodes"]
            if plan.var(values, "node_selector") and plan.var(values, "render_job"):
                resolved = self._module(TEST_PODS, plan.resolve_args(values, state, nodes), task_vars, check=True)
                if resolved.get("failed"):
                    return resolved
                nodes = [manifest["spec"]["nodeName"] for manifest in resolved.get("manifests") or []]
            if step == "job":
                manifest = plan.job_manifest(values, state["run_id"], nodes)
                return self._module(K8S_JOB, plan.job_args(values, manifest), task_vars)
            result.update(files=manifest_files(values, state["run_id"], nodes))
            result["written"] = write_manifests(result["files"], self._task.check_mode)
            result.update(changed=bool(result["written"]), msg="%d manifest(s)" % len(result["files"]))
            return result
        if step == "create":
            return self._module(TEST_PODS, plan.create_args(values, state, state["nodes"]), task_vars)
        if step == "attach":
            return self._module(EXISTING_PODS, plan.attach_args(values, state), task_vars)
        if step == "hosts":
            found = args["result"] or {}
            result.update(hosts=plan.pod_hosts(values, found.get("pods") or [], state["namespace"],
                                               "mpi_agent" in found, task_vars.get("ansible_playbook_python")),
                          msg=plan.pods_summary(found, state["namespace"], state.get("existing")))
            return result
        return self._cleanup(values, result, task_vars)

    def _cleanup(self, values, result, task_vars):
        state = self._templar.template(localhost_value(task_vars, STATE_VAR))
        state = state if state is not None else plan.default_state(values)
        deleted = detached = None
        delete = plan.delete_args(state)
        if delete is not None:
            deleted = self._module(TEST_PODS, delete, task_vars)
            if deleted.get("failed"):
                return deleted
        detach = plan.detach_args(state)
        if detach is not None:
            detached = self._module(EXISTING_PODS, detach, task_vars)
            if detached.get("failed"):
                return detached
            state = dict(state, attached=[])
        result.update(changed=bool((deleted or {}).get("changed") or (detached or {}).get("changed")),
                      deleted=deleted, detached=detached, state=state, detached_pods=detach is not None,
                      msg="deleted the test pods of run %s" % state.get("run_id") if deleted else
                      "stopped the collection's processes in the existing pods" if detached else "nothing to clean")
        return result

    def _module(self, name, module_args, task_vars, check=False):
        """The result of module ``name`` run on localhost (in check mode also when ``check``)."""
        was = self._task.check_mode
        self._task.check_mode = bool(was or check)
        try:
            return self._execute_module(module_name=name, module_args=module_args, task_vars=task_vars)
        finally:
            self._task.check_mode = was

    def _run_value(self, task_vars, name, default=None):
        if name not in task_vars:
            return default
        return self._templar.template(task_vars[name])
