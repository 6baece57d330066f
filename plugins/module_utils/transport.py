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

from ansible_collections.clusterops.commcheck.plugins.module_utils.runner import HostTransport

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


def get_transport(module):
    """The transport named by the module's ``transport`` / ``kubectl`` options."""
    params = module.params
    if params.get("transport", "host") == "host":
        return HostTransport()
    module.fail_json(msg="transport 'kubectl' is not available in this version of the collection")
