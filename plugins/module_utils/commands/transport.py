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

from ansible_collections.clusterops.commcheck.plugins.module_utils.options.option_rules import OptionError
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands.runner import (
    HostTransport,
    KubectlTransport,
    check_kubectl_settings,
)
from ansible_collections.clusterops.commcheck.plugins.module_utils.kubernetes.kube_auth import module_kubeconfig

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
    absolute path, and none may start with '-'. ``binary`` is an absolute path
    or a bare command name; with ``which`` (a lookup on this host) it must exist.

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


def get_transport(module):
    """The transport named by the module's ``transport`` / ``kubectl`` options."""
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
    return KubectlTransport(
        pod=options["pod"],
        namespace=options.get("namespace") or "default",
        container=options.get("container"),
        context=context,
        kubeconfig=kubeconfig,
        binary=options.get("binary"),
    )
