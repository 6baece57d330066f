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

import re

from ansible_collections.clusterops.commcheck.plugins.module_utils.runner import (
    HostTransport,
    KubectlTransport,
)

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

# RFC 1123 names (pods, containers, namespaces); contexts are freer but never
# start with '-' so they cannot turn into options.
_DNS_NAME = re.compile(r"^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$")
_CONTEXT = re.compile(r"^[A-Za-z0-9_.@:/][-A-Za-z0-9_.@:/]{0,252}$")


def kubectl_options_error(options):
    """Return an error message for bad kubectl options, or None."""
    options = options or {}
    if not options.get("pod"):
        return "transport=kubectl needs kubectl.pod"
    for key in ("pod", "namespace", "container"):
        value = options.get(key)
        if value is not None and not _DNS_NAME.match(value):
            return "kubectl.%s %r is not a valid Kubernetes name" % (key, value)
    context = options.get("context")
    if context is not None and not _CONTEXT.match(context):
        return "kubectl.context %r is not a valid context name" % (context,)
    return None


def get_transport(module):
    """The transport named by the module's ``transport`` / ``kubectl`` options."""
    params = module.params
    if params.get("transport", "host") == "host":
        return HostTransport()
    options = params.get("kubectl") or {}
    error = kubectl_options_error(options)
    if error:
        module.fail_json(msg=error)
    return KubectlTransport(
        pod=options["pod"],
        namespace=options.get("namespace") or "default",
        container=options.get("container"),
        context=options.get("context"),
        kubeconfig=options.get("kubeconfig"),
        binary=options.get("binary"),
    )
