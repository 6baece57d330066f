# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""MPI inside test pods: Open MPI's remote agent that uses ``kubectl exec``.

``mpirun`` runs in one test pod (the launcher) and starts its daemons in the
other pods the way mpi-operator's ``kubexec.sh`` does: Open MPI calls its
``plm_rsh_agent`` like ssh (``AGENT HOST COMMAND...``) and the agent runs
``kubectl -n NS exec POD [-c C] -- /bin/sh -c "COMMAND..."``.

- ``KUBEXEC_SCRIPT`` is constant. Which pod a host name or address stands for
  (and the namespace, the container, the kubectl binary in the pod) is read
  from ``kubexec.conf`` next to it, written from validated values only.
- ``install_argv`` installs both files through a transport: a constant
  ``sh -c`` script gets the directory, the script and the configuration as
  positional arguments; nothing is interpolated into a shell string.
- ``mca_options`` gives the ``--mca`` options for the collective module.
- ``rbac_manifests`` renders the ServiceAccount, Role and RoleBinding the pods
  need (``kubectl exec`` from inside a pod needs ``get``/``list`` on pods and
  ``create``/``get`` on ``pods/exec``).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import ipaddress
import re

from ansible_collections.clusterops.commcheck.plugins.module_utils.options import option_rules
from ansible_collections.clusterops.commcheck.plugins.module_utils.options.option_rules import show
from ansible_collections.clusterops.commcheck.plugins.module_utils.options.rule_errors import raised_as
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands.runner import check_dns_label

SCRIPT_NAME = "kubexec.sh"
CONFIG_NAME = "kubexec.conf"
DEFAULT_DIR = "/tmp/commcheck-kubexec"

# The agent. Open MPI calls it like ssh: kubexec.sh HOST COMMAND...; the
# command is meant for a remote shell, so it goes to sh -c as ssh would pass it.
KUBEXEC_SCRIPT = r'''#!/bin/sh
# commcheck kubexec: Open MPI remote agent (plm_rsh_agent) for commcheck test pods.
# mpirun calls it like ssh: kubexec.sh HOST COMMAND... It runs COMMAND in the
# pod that HOST stands for with "kubectl exec", as mpi-operator's kubexec.sh does.
# Pods, namespace, container and kubectl come from kubexec.conf next to it.
conf="${0%/*}/kubexec.conf"
if [ "$#" -lt 2 ]; then
  echo "kubexec: usage: $0 HOST COMMAND..." >&2
  exit 2
fi
host=$1
shift
cmd=$*
kubectl=kubectl
ns=
pod=
container=
while read -r key a b c; do
  case $key in
    kubectl) kubectl=$a ;;
    namespace) ns=$a ;;
    host)
      if [ "$a" = "$host" ] && [ -z "$pod" ]; then
        pod=$b
        container=$c
      fi
      ;;
  esac
done < "$conf"
if [ -z "$pod" ]; then
  echo "kubexec: $host is not one of this run's test pods (see $conf)" >&2
  exit 1
fi
set -- "$kubectl"
if [ -n "$ns" ]; then
  set -- "$@" -n "$ns"
fi
set -- "$@" exec "$pod"
if [ -n "$container" ]; then
  set -- "$@" -c "$container"
fi
exec "$@" -- /bin/sh -c "$cmd"
'''

# Installs (or leaves alone when identical) the agent and its configuration.
# Constant; the directory, the script and the configuration are $1, $2, $3.
INSTALL_SH = (
    'd=$1; s=$2; c=$3; '
    'if [ -f "$d/kubexec.sh" ] && [ -f "$d/kubexec.conf" ] '
    '&& [ "$(cat "$d/kubexec.sh")" = "$(printf "%s" "$s")" ] '
    '&& [ "$(cat "$d/kubexec.conf")" = "$(printf "%s" "$c")" ]; then echo unchanged; exit 0; fi; '
    'umask 022 && mkdir -p -- "$d" '
    '&& printf "%s" "$s" > "$d/kubexec.sh" && chmod 0755 "$d/kubexec.sh" '
    '&& printf "%s" "$c" > "$d/kubexec.conf" && echo written'
)

# Open MPI splits its agent on spaces: the directory holds no space or shell character.
_PATH = re.compile(r"^/[A-Za-z0-9._/+-]{0,1023}$")

EXEC_RULES = [
    {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch"]},
    # POST (SPDY) and GET (WebSocket, kubectl >= 1.30) both reach pods/exec.
    {"apiGroups": [""], "resources": ["pods/exec"], "verbs": ["create", "get"]},
]


class KubexecError(option_rules.OptionError):
    """A value that cannot go into the agent's configuration."""


def _checked(check, *args):
    """An option_rules check whose OptionError comes out as KubexecError."""
    return raised_as(KubexecError, check, *args)


def _check_label(option, value):
    """A DNS-1123 label (namespace, container, service account)."""
    return _checked(check_dns_label, option, value)


def check_dir(path, option="mpi agent directory"):
    """An absolute directory without spaces or shell-special characters (Open MPI splits the agent on spaces)."""
    path = _checked(option_rules.check_path, option, path)
    if not _PATH.match(path) or path == "/":
        raise KubexecError("%s %s must be an absolute path of letters, digits and ._/+- "
                           "(not /)" % (option, show(path)))
    return path.rstrip("/")


def check_kubectl(binary, option="mpi agent kubectl"):
    """The kubectl inside the pods: a bare name (found on the pods' PATH) or an absolute path whose file name is
    kubectl's; whether it exists is not checked here (it runs in the pods)."""
    return _checked(option_rules.check_program, option, binary, "kubectl", None, False)


def _check_host_key(key):
    if not isinstance(key, str) or not key:
        raise KubexecError("host name or address must be a non-empty string, got %s" % show(key))
    try:
        return str(ipaddress.ip_address(key))
    except ValueError:
        pass
    if not option_rules.is_host(key):
        raise KubexecError("%s is not a host name or an IP address" % show(key))
    return key


def pod_host_keys(pod):
    """Every name mpirun may use for a test pod: its test address, IPs and name."""
    keys = []
    for key in [pod.get("address"), pod.get("pod_ip")] + list(pod.get("network_ips") or []) + [pod.get("name")]:
        if key and key not in keys:
            keys.append(key)
    return keys


def agent_config(pods, namespace, container=None, kubectl="kubectl"):
    """Text of kubexec.conf: ``kubectl B``, ``namespace NS``, ``host KEY POD [CONTAINER]`` lines.

    ``pods`` are test pod summaries (name, address, pod_ip, network_ips); a key
    that two pods claim is refused (mpirun would reach the wrong pod).
    """
    _check_label("namespace", namespace)
    if container is not None:
        _check_label("container", container)
    lines = ["kubectl %s" % check_kubectl(kubectl), "namespace %s" % namespace]
    owner = {}
    for pod in pods or []:
        name = _checked(option_rules.check_name, "pod name", pod.get("name"), "k8s_name")
        for key in pod_host_keys(pod):
            key = _check_host_key(key)
            if owner.get(key, name) != name:
                raise KubexecError("%s stands for two pods: %s and %s" % (key, owner[key], name))
            if key in owner:
                continue
            owner[key] = name
            lines.append(" ".join(["host", key, name] + ([container] if container else [])))
    if not owner:
        raise KubexecError("no test pods to reach")
    return "\n".join(lines) + "\n"


def install_argv(directory, config_text):
    """argv that installs the agent and config into ``directory`` (prints ``written`` or ``unchanged``)."""
    directory = check_dir(directory)
    if "\x00" in config_text:
        raise KubexecError("configuration contains a NUL byte")
    return ["sh", "-c", INSTALL_SH, "sh", directory, KUBEXEC_SCRIPT, config_text]


def install(transport, directory, config_text, timeout=60):
    """Install through ``transport``; return (changed, result dict). Raises KubexecError when it fails."""
    res = transport.run(install_argv(directory, config_text), timeout)
    out = res.get("stdout", "").strip().splitlines()
    if res.get("rc") != 0 or not out or out[-1] not in ("written", "unchanged"):
        raise KubexecError("installing the MPI agent into %s failed (rc %s): %s" % (
            directory, res.get("rc"), (res.get("stderr") or res.get("stdout") or "").strip()[-500:]))
    return out[-1] == "written", res


def agent_path(directory):
    return "%s/%s" % (check_dir(directory), SCRIPT_NAME)


def mca_options(directory, extra=None):
    """Open MPI MCA options for mpirun in a pod: the agent, and no tree spawn (only the launcher has it)."""
    mca = {"plm_rsh_agent": agent_path(directory), "plm_rsh_no_tree_spawn": "1"}
    mca.update(dict(extra or {}))
    return mca


def rbac_manifests(namespace, service_account="commcheck", name=None):
    """ServiceAccount, Role and RoleBinding that let the test pods ``kubectl exec`` into each other."""
    _check_label("namespace", namespace)
    _check_label("service_account", service_account)
    name = _check_label("name", name or "%s-kubexec" % service_account)
    labels = {"app.kubernetes.io/name": "commcheck"}
    meta = {"namespace": namespace, "labels": labels}
    return [
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": dict(meta, name=service_account)},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": dict(meta, name=name),
         "rules": [dict(rule) for rule in EXEC_RULES]},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": dict(meta, name=name),
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name},
         "subjects": [{"kind": "ServiceAccount", "name": service_account, "namespace": namespace}]},
    ]
