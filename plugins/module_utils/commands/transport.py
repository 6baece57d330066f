# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Choose the transport a module's commands go through (host or kubectl exec).

Modules add TRANSPORT_ARGSPEC to their argument spec, extend their
DOCUMENTATION with the ``clusterops.commcheck.transport`` doc fragment, and
call ``get_transport(module)``. Everything else (run, start, which,
read_file) is the same whichever transport is used.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.clusterops.commcheck.plugins.module_utils.options import option_rules as rules
from ansible_collections.clusterops.commcheck.plugins.module_utils.options.option_rules import OptionError
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands.runner import (
    CommandError,
    HostTransport,
    KubectlTransport,
    check_kubectl_settings,
    fail_not_started,
)
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands.kube_auth import module_kubeconfig

IDENTITY_TIMEOUT_S = 30

TRANSPORT_ARGSPEC = dict(
    transport=dict(type="str", default="host", choices=["host", "kubectl"]),
    kubectl=dict(
        type="dict",
        options=dict(
            namespace=dict(type="str", default="default"),
            pod=dict(type="str"),
            container=dict(type="str"),
            context=dict(type="str"),
            kubeconfig=dict(type="path", no_log=True),
            binary=dict(type="path"),
        ),
    ),
)


def kubectl_options_error(options, which=None, transport="kubectl", label="kubectl"):
    """Return an error message for bad kubectl options, or None.

    Names follow Kubernetes' rules (pod: RFC 1123 name; namespace and
    container: DNS-1123 labels), the context is a context name, kubeconfig an
    absolute path (never quoted in a message), and none may start with '-'.
    ``binary`` is an absolute path or a bare command name whose file name is
    kubectl's; with ``which`` (a lookup on this host) it must exist.

    ``transport``: the transport in use. The options are checked whatever it is
    (a bad value is an error even where it is not used); only the kubectl
    transport needs a pod. ``label``: the option the settings are keys of
    (a problem names ``<label>.<setting>``).
    """
    options = options or {}
    if transport == "kubectl" and not options.get("pod"):
        return "transport=kubectl needs %s.pod" % label
    try:
        check_kubectl_settings(options.get("pod"), options.get("namespace") or "default", options.get("container"),
                               options.get("context"), options.get("kubeconfig"), options.get("binary"),
                               label=label, which=which, pod_required=transport == "kubectl")
    except OptionError as exc:
        return str(exc)
    return None


def config_file_problem(transport, option, path, sensitive=True, text=rules.KUBECONFIG_TEXT):
    """None when ``path`` is a regular file the run's user can read (holding ``text``: a kubeconfig by default)
    on the host or in the pod where ``transport`` runs its commands; else the problem, naming ``option``.
    ``sensitive`` (a kubeconfig: the cluster's credentials): the problem never quotes the path."""
    try:
        if not transport.remote:
            rules.check_config_file(option, path, sensitive=sensitive, text=text)
            return None
        rules.check_config_path(option, path, sensitive=sensitive)
    except OptionError as exc:
        return str(exc)
    shown = rules.WITHHELD if sensitive else rules.show(path)
    for test, why in (("-f", "is not a regular file"), ("-r", "is not readable by the user the run runs as")):
        if transport.run(["test", test, path], IDENTITY_TIMEOUT_S).get("rc") != 0:
            return "%s %s %s (in the pod)" % (option, shown, why)
    if text is not None and not text.search(transport.read_file(path, "") or ""):
        return "%s %s is not a kubeconfig file (in the pod)" % (option, shown)
    return None


def identity_error(transport, binary, program, option):
    """None when ``binary`` says it is ``program`` (``option_rules.PROGRAMS``), run where ``transport`` runs
    commands; else the problem naming ``option``. Run it before the binary acts on the cluster."""
    argv = rules.identity_argv(binary, program)
    if argv is None:
        return None
    return rules.identity_problem(option, binary, program, transport.run(argv, IDENTITY_TIMEOUT_S))


def require_cluster_client(module, transport, binary, option, kubeconfig=None, kubeconfig_option="kubeconfig",
                           program="kubectl", what=None, **extra):
    """Before ``binary`` first acts on the cluster: its kubeconfig (when given) is a readable kubeconfig file and
    the binary says it is ``program``; else the task fails naming the option (``what``: the message's prefix)."""
    prefix = "%s: " % what if what else ""
    problem = config_file_problem(transport, kubeconfig_option, kubeconfig) if kubeconfig else None
    try:
        problem = problem or identity_error(transport, binary, program, option)
    except CommandError as exc:
        fail_not_started(module, exc, "%s%s" % (prefix, option), **extra)
    if problem:
        module.fail_json(msg=prefix + problem, **extra)


def get_transport(module):
    """The transport named by the module's ``transport`` / ``kubectl`` options.

    For ``transport=kubectl``, before anything runs: the kubeconfig is a readable kubeconfig file on this host
    and the kubectl binary says it is kubectl (``kubectl version --client``); else the task fails naming
    ``kubectl.kubeconfig`` / ``kubectl.binary``."""
    params = module.params
    if params.get("transport", "host") == "host":
        # the kubectl options are checked all the same: a bad value is an error even while it is not used
        error = kubectl_options_error(params.get("kubectl"), transport="host")
        if error:
            module.fail_json(msg="%s (the kubectl options are checked whatever the transport)" % error)
        return HostTransport()
    options = params.get("kubectl") or {}
    error = kubectl_options_error(options, which=HostTransport().which)
    if error:
        module.fail_json(msg=error)
    # the run's credentials: the kubeconfig given, else one written from K8S_AUTH_* or the service account
    kubeconfig, context = module_kubeconfig(module, options.get("kubeconfig"), options.get("context"))
    transport = KubectlTransport(
        pod=options["pod"],
        namespace=options.get("namespace") or "default",
        container=options.get("container"),
        context=context,
        kubeconfig=kubeconfig,
        binary=options.get("binary"),
    )
    # the kubectl of the transport runs on this host (the one given, else the one on PATH, as KubectlTransport
    # takes it): its kubeconfig and its identity are checked here, before it runs anything
    host = HostTransport()
    require_cluster_client(module, host, options.get("binary") or host.which("kubectl") or "kubectl",
                           "kubectl.binary", kubeconfig=options.get("kubeconfig"), kubeconfig_option="kubectl.kubeconfig")
    return transport
