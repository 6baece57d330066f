# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action clusterops.commcheck.reserve_nodes: label or taint the nodes under test for the run, on the controller.

``state: present`` reads each node (``kubectl get node -o json``), keeps in
the reservation file what it will set and how to undo it, starts the guard
that undoes it should ``ansible-playbook`` end before the release
(plugins/plugin_utils/node_reservation.py), then sets it. A node that carries
the key already is left as it was (``reserved_before``). ``state: absent``
undoes what the file holds and removes it. With ``role_options: true`` the
arguments come from the one-click role's variables and the nodes are those of
the play's hosts (a test pod's node, ``commcheck_k8s_node``; else the host's
name through ``commcheck_reserve_node_names``).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os

from ansible_collections.clusterops.commcheck.plugins.module_utils.commands.runner import HostTransport
from ansible_collections.clusterops.commcheck.plugins.module_utils.options import option_rules as rules
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import quarantine as q
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import reserve
from ansible_collections.clusterops.commcheck.plugins.plugin_utils import node_reservation as held
from ansible_collections.clusterops.commcheck.plugins.plugin_utils.controller_action import ControllerAction
from ansible_collections.clusterops.commcheck.plugins.plugin_utils.host_vars import HostReader, overlay_role_values

ARGUMENT_SPEC = reserve.ARGUMENT_SPEC
# argument: the one-click role's variable it is read from with role_options
ROLE_VARIABLES = {
    "mode": "commcheck_reserve_nodes",
    "key": "commcheck_reserve_key",
    "run_id": "commcheck_run_id",
    "node_names": "commcheck_reserve_node_names",
    "kubectl_binary": "commcheck_reserve_kubectl",
    "kubeconfig": "commcheck_reserve_kubeconfig",
    "kube_context": "commcheck_reserve_context",
    "state_dir": "commcheck_reserve_state_dir",
}
EMPTY_IS_UNSET = ("kubeconfig", "kube_context", "state_dir")


def play_nodes(hostvars, hosts, node_names):
    """The node of each host of the play: a test pod's node (``commcheck_k8s_node``), else ``node_names[host]``,
    else the host's name."""
    reader = HostReader(hostvars, None)
    out = []
    for host in hosts:
        node = reader.own(host, "commcheck_k8s_node", None) or (node_names or {}).get(host) or host
        if node not in out:
            out.append(node)
    return out


def check_args(args):
    """The arguments that reach a command line or a path; raises OptionError."""
    rules.check_int("timeout", args["timeout"], 1, reserve.MAX_TIMEOUT_S)
    rules.check_program("kubectl_binary", args["kubectl_binary"], "kubectl", must_exist=False)
    if args.get("kube_context"):
        rules.check_name("kube_context", args["kube_context"], "k8s_context")
    rules.check_text("run_id", args.get("run_id") or "", 128)
    if not args.get("run_id"):
        rules.fail("run_id", args.get("run_id"), "is required: the reservation is the run's")
    if args.get("kubeconfig"):
        args["kubeconfig"] = os.path.expanduser(args["kubeconfig"])
        rules.check_config_path("kubeconfig", args["kubeconfig"], sensitive=True)
    if args.get("state_dir"):
        rules.check_path("state_dir", args["state_dir"], True)
    reserve.check_options(args["mode"], args["key"], args.get("run_id"), args["nodes"])


class ActionModule(ControllerAction):

    NAME = "clusterops.commcheck.reserve_nodes"
    ARGUMENT_SPEC = ARGUMENT_SPEC
    FAILURES = (rules.OptionError, held.ReservationError)

    def decide(self, args, result, task_vars):
        if args.pop("role_options"):
            args = overlay_role_values(args, ROLE_VARIABLES, lambda name: self._role_value(task_vars, name),
                                       EMPTY_IS_UNSET)
            if args["state"] == "present" and not args["nodes"]:
                args["nodes"] = play_nodes(task_vars.get("hostvars") or {}, task_vars.get("ansible_play_hosts")
                                           or [], args["node_names"])
        check_args(args)
        result.update(changed=False, mode=args["mode"], reserved=[], reserved_before=[], released=[], actions=[])
        if args["mode"] == "none" or self._task.check_mode:
            result["report"] = reserve.report_lines(args["mode"], args["key"], result)
            return result
        path = held.state_path(held.state_dir(args.get("state_dir")), args["run_id"])
        if args["state"] == "absent":
            self._release(path, args, result)
        else:
            self._reserve(path, args, result)
        result["report"] = reserve.report_lines(args["mode"], args["key"], result)
        return result

    def _role_value(self, task_vars, name):
        return self._templar.template(task_vars[name]) if name in task_vars else None

    @staticmethod
    def _base(args):
        binary = rules.check_program("kubectl_binary", args["kubectl_binary"], "kubectl", must_exist=False)
        if not HostTransport().which(binary):
            raise rules.OptionError("kubectl_binary: %s not found; install kubectl or set commcheck_reserve_kubectl"
                                    % rules.show(binary))
        return q.kubectl_base(binary, args.get("kubeconfig"), args.get("kube_context"))

    def _reserve(self, path, args, result):
        base = self._base(args)
        transport = HostTransport()
        current = {}
        for node in args["nodes"]:
            argv = base + ["get", "node", node, "-o", "json"]
            res = transport.run(argv, args["timeout"])
            obj = q.parse_node_json(res.get("stdout")) if res.get("rc") == 0 else None
            if obj is None:
                why = rules.withhold(res.get("stderr"), args.get("kubeconfig")).strip()[-500:] or "kubectl get failed"
                raise rules.OptionError("cannot read node %s (nothing was reserved): %s" % (node, why))
            current[node] = obj
        planned = reserve.plan(args["nodes"], current, args["mode"], args["key"], args["run_id"], base)
        result["reserved_before"] = planned["reserved_before"]
        if not planned["set"]:
            return
        # kept, and guarded, before the first node is touched: an interrupt from here on is undone
        held.write_state(path, {"run_id": args["run_id"], "mode": args["mode"], "key": args["key"],
                                "undo": planned["undo"], "reserved_before": planned["reserved_before"]})
        result["guard_pid"] = held.start_guard(path, held.controller())
        done = held.run_all(planned["set"], transport, args["timeout"])
        result["actions"] = q.shown_actions(done)
        result["changed"] = True
        result["reserved"] = [a["node"] for a in done if a["rc"] == 0]
        failed = [a for a in done if a["rc"] != 0]
        if failed:
            result.update(failed=True, msg="%s: reserving %s failed: %s (the run's end releases what was set)" % (
                self.NAME, failed[0]["node"], rules.withhold(failed[0]["stderr"], args.get("kubeconfig")) or
                "rc %s" % failed[0]["rc"]))

    def _release(self, path, args, result):
        state = held.read_state(path)
        if not state:
            return
        done = held.run_all(state.get("undo") or [], HostTransport(), args["timeout"])
        held.forget(path)
        result["actions"] = q.shown_actions(done)
        result["changed"] = bool(done)
        result["released"] = [a["node"] for a in done if a["rc"] == 0]
        result["reserved_before"] = state.get("reserved_before") or []
        failed = [a for a in done if a["rc"] != 0]
        if failed:
            result["warnings"] = ["releasing %s failed: %s" % (a["node"], rules.withhold(
                a["stderr"], args.get("kubeconfig")) or "rc %s" % a["rc"]) for a in failed]
