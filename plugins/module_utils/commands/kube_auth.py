# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The credentials every kubectl call of a module run uses.

kubectl reads only a kubeconfig. AWX's built-in Kubernetes credential
("OpenShift or Kubernetes API Bearer Token") and kubernetes.core give
environment variables instead, which kubectl ignores: ``K8S_AUTH_HOST`` (the
API server's URL), ``K8S_AUTH_API_KEY`` (the bearer token),
``K8S_AUTH_VERIFY_SSL`` (``True``/``False``) and ``K8S_AUTH_SSL_CA_CERT`` (the
path of a file AWX writes the CA's PEM into, set only when verifying). Where
the credentials come from, first match wins:

1. an explicit kubeconfig (the module's ``kubeconfig`` option);
2. ``K8S_AUTH_HOST`` with ``K8S_AUTH_API_KEY`` (or ``K8S_AUTH_CERT_FILE`` and
   ``K8S_AUTH_KEY_FILE``): a kubeconfig written for the run; else
   ``K8S_AUTH_KUBECONFIG`` (a kubeconfig file, with ``K8S_AUTH_CONTEXT``);
3. the pod's service account (``KUBERNETES_SERVICE_HOST``/``_PORT`` and the
   token under ``SERVICE_ACCOUNT_DIR``): a kubeconfig that points at the token
   file (kubectl reads it again as it rotates);
4. kubectl's own default (``KUBECONFIG``, ``~/.kube/config``).

A written kubeconfig lives in a directory of its own (mode 0700) inside the
module's temporary directory, as ``kubeconfig`` with mode 0600, and is removed
when the module exits, fails or is stopped by a signal. The token goes into
that file only: no message, result or command line holds it.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import atexit
import base64
import json
import os
import re
import shutil
import stat
import tempfile
from urllib.parse import urlsplit

from ansible_collections.clusterops.commcheck.plugins.module_utils.options import option_rules
from ansible_collections.clusterops.commcheck.plugins.module_utils.options.option_rules import show
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands.runner import install_cleanup_handlers

SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"
NAME = "commcheck"
KUBECONFIG_FILE = "kubeconfig"
TRUE_WORDS = ("true", "yes", "on", "1")
FALSE_WORDS = ("false", "no", "off", "0")
# A bearer token is one word of printable characters (JWTs, OpenShift sha256~ tokens, static tokens).
_TOKEN = re.compile(r"^[\x21-\x7e]+$")
_PEM = "-----BEGIN"


class KubeAuthError(option_rules.OptionError):
    """Credentials in the environment that kubectl cannot use."""


class Credentials(object):
    """Where a run's kubectl credentials come from.

    ``source``: ``option``, ``k8s_auth``, ``k8s_auth_kubeconfig``, ``service_account`` or ``default``.
    ``kubeconfig`` / ``context``: what kubectl gets as ``--kubeconfig`` / ``--context`` (a
    ``document`` to write stands for the kubeconfig until it is written). ``secrets``: values
    a result must never show.
    """

    def __init__(self, source, kubeconfig=None, context=None, document=None, secrets=()):
        self.source = source
        self.kubeconfig = kubeconfig
        self.context = context
        self.document = document
        self.secrets = tuple(s for s in secrets if s)


def _value(environ, name):
    """The variable's value, or None when unset or empty (AWX sets an input it lacks to '')."""
    value = environ.get(name)
    return value.strip() if isinstance(value, str) and value.strip() else None


def _flag(environ, name, default):
    value = _value(environ, name)
    if value is None:
        return default
    if value.lower() in TRUE_WORDS:
        return True
    if value.lower() in FALSE_WORDS:
        return False
    raise KubeAuthError("%s %s must be True or False" % (name, show(value)))


def _server(name, value):
    """An API server URL: http(s)://HOST[:PORT][/PATH]."""
    option_rules.check_text(name, value)
    try:
        parts = urlsplit(value)
        port_ok = parts.port is None or 0 < parts.port < 65536
    except ValueError:
        port_ok = False
        parts = None
    if not parts or parts.scheme not in ("https", "http") or not parts.hostname or not port_ok \
            or " " in value or parts.query or parts.fragment:
        raise KubeAuthError("%s %s must be the API server's URL, https://HOST[:PORT]" % (name, show(value)))
    return value


def _readable_file(name, value):
    """An existing regular file this process can read; returned absolute (kubectl would read a relative
    path from the kubeconfig's own directory)."""
    option_rules.check_path(name, value, absolute=False)
    path = os.path.abspath(value)
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        raise KubeAuthError("%s %s cannot be read: %s" % (name, show(value), exc.strerror))
    if not stat.S_ISREG(mode) or not os.access(path, os.R_OK):
        raise KubeAuthError("%s %s is not a readable regular file" % (name, show(value)))
    return path


def _token(raw):
    """The bearer token of K8S_AUTH_API_KEY (a 'Bearer ' prefix is taken off). Never quoted in a message."""
    token = raw.strip()
    if token[:7].lower() == "bearer ":
        token = token[7:].strip()
    if not _TOKEN.match(token):
        raise KubeAuthError("K8S_AUTH_API_KEY is not a bearer token: it must be one line of printable characters "
                            "without spaces (its value is not shown)")
    return token


def _tls(environ):
    """The cluster's TLS settings: the CA (a file path, as AWX gives it, or the PEM itself), or no verification."""
    if not _flag(environ, "K8S_AUTH_VERIFY_SSL", True):
        # kubectl refuses a CA together with insecure-skip-tls-verify
        return {"insecure-skip-tls-verify": True}
    ca = _value(environ, "K8S_AUTH_SSL_CA_CERT")
    if ca is None:
        return {}
    if ca.startswith(_PEM):
        return {"certificate-authority-data": base64.b64encode(ca.encode("utf-8")).decode("ascii")}
    return {"certificate-authority": _readable_file("K8S_AUTH_SSL_CA_CERT", ca)}


def _user(environ):
    """The user entry: the bearer token, else the client certificate and key; plus the secrets to hide."""
    raw = environ.get("K8S_AUTH_API_KEY") or ""
    cert, key = _value(environ, "K8S_AUTH_CERT_FILE"), _value(environ, "K8S_AUTH_KEY_FILE")
    if raw.strip():
        token = _token(raw)
        return {"token": token}, (raw, raw.strip(), token)
    if cert and key:
        return {"client-certificate": _readable_file("K8S_AUTH_CERT_FILE", cert),
                "client-key": _readable_file("K8S_AUTH_KEY_FILE", key)}, ()
    raise KubeAuthError("K8S_AUTH_HOST is set but neither K8S_AUTH_API_KEY (a bearer token) nor both "
                        "K8S_AUTH_CERT_FILE and K8S_AUTH_KEY_FILE: kubectl would call the API server anonymously "
                        "(user names and passwords are not supported)")


def kubeconfig_document(server, cluster=None, user=None):
    """A kubeconfig with one cluster, one user and the context joining them (all named ``commcheck``)."""
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": NAME, "cluster": dict(cluster or {}, server=server)}],
        "users": [{"name": NAME, "user": dict(user or {})}],
        "contexts": [{"name": NAME, "context": {"cluster": NAME, "user": NAME}}],
        "current-context": NAME,
        "preferences": {},
    }


def from_k8s_auth(environ, context=None):
    """Credentials from the K8S_AUTH_* variables, or None when they name none."""
    host = _value(environ, "K8S_AUTH_HOST")
    if host is None:
        if (environ.get("K8S_AUTH_API_KEY") or "").strip():
            raise KubeAuthError("K8S_AUTH_API_KEY is set without K8S_AUTH_HOST, the API server it is for")
        return _k8s_auth_kubeconfig(environ, context)
    if context is not None:
        raise KubeAuthError("the kubectl context %s names a context of a kubeconfig, but the credentials come from "
                            "K8S_AUTH_HOST (an AWX Kubernetes credential), which has none: leave the context unset, "
                            "or give a kubeconfig" % show(context))
    cluster = _tls(environ)
    proxy = _value(environ, "K8S_AUTH_PROXY")
    if proxy:
        cluster["proxy-url"] = _server("K8S_AUTH_PROXY", proxy)
    user, secrets = _user(environ)
    document = kubeconfig_document(_server("K8S_AUTH_HOST", host), cluster, user)
    return Credentials("k8s_auth", document=document, secrets=secrets)


def _k8s_auth_kubeconfig(environ, context):
    path = _value(environ, "K8S_AUTH_KUBECONFIG")
    if path is None:
        return None
    chosen = context if context is not None else _value(environ, "K8S_AUTH_CONTEXT")
    if chosen is not None:
        option_rules.check_name("K8S_AUTH_CONTEXT", chosen, "k8s_context")
    return Credentials("k8s_auth_kubeconfig", kubeconfig=_readable_file("K8S_AUTH_KUBECONFIG", path), context=chosen)


def from_service_account(environ, directory=SERVICE_ACCOUNT_DIR):
    """Credentials of the pod this runs in, or None: kubectl's in-cluster rule (both variables and the token)."""
    host, port = _value(environ, "KUBERNETES_SERVICE_HOST"), _value(environ, "KUBERNETES_SERVICE_PORT")
    token = os.path.join(directory, "token")
    if not host or not port or not os.path.isfile(token):
        return None
    server = _server("KUBERNETES_SERVICE_HOST", "https://%s:%s" % ("[%s]" % host if ":" in host else host, port))
    ca = os.path.join(directory, "ca.crt")
    cluster = {"certificate-authority": ca} if os.path.isfile(ca) else {}
    return Credentials("service_account", document=kubeconfig_document(server, cluster, {"tokenFile": token}))


def choose(environ, kubeconfig=None, context=None, service_account_dir=SERVICE_ACCOUNT_DIR):
    """The run's credentials (see the module's docstring for the order). Raises KubeAuthError."""
    if kubeconfig:
        return Credentials("option", kubeconfig=kubeconfig, context=context)
    try:
        found = from_k8s_auth(environ, context)
        if found is None and context is None:
            # a context names a context of a kubeconfig file: then kubectl's default kubeconfig holds it
            found = from_service_account(environ, service_account_dir)
    except KubeAuthError:
        raise
    except option_rules.OptionError as exc:      # a value with control characters, '..' ...
        raise KubeAuthError(str(exc))
    return found or Credentials("default", context=context)


class RunKubeconfig(object):
    """A kubeconfig written for one run: ``write`` it into a directory, ``remove`` it afterwards."""

    def __init__(self, document):
        self.document = document
        self.directory = None
        self.path = None

    def write(self, parent):
        self.directory = tempfile.mkdtemp(prefix="commcheck-kube-", dir=parent)
        path = os.path.join(self.directory, KUBECONFIG_FILE)
        handle = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
        try:
            os.fchmod(handle, 0o600)
            os.write(handle, json.dumps(self.document, indent=1, sort_keys=True).encode("utf-8"))
        finally:
            os.close(handle)
        self.path = path
        return path

    def remove(self):
        if self.directory:
            shutil.rmtree(self.directory, ignore_errors=True)
        self.directory = self.path = None


def client_argument_spec():
    """The argument spec of the options the kubectl_client doc fragment documents (how a module reaches the
    cluster), for the modules that take it (k8s_job, test_pods, existing_pods)."""
    return dict(
        kubeconfig=dict(type="path", no_log=True),
        context=dict(type="str"),
        kubectl_binary=dict(type="path"),
    )


def module_kubeconfig(module, kubeconfig=None, context=None, service_account_dir=SERVICE_ACCOUNT_DIR):
    """(kubeconfig, context) for every kubectl call of this module run, from ``choose``.

    A kubeconfig written for the run goes into ``module.tmpdir`` and is removed when the module
    exits, fails, or ends on SIGTERM/SIGHUP/SIGINT; its secrets are hidden from the module's
    results. Credentials that cannot work fail the module before kubectl runs.
    """
    try:
        found = choose(os.environ, kubeconfig, context, service_account_dir)
    except KubeAuthError as exc:
        module.fail_json(msg="kubectl credentials: %s" % exc)
    for secret in found.secrets:
        module.no_log_values.add(secret)
    if found.document is None:
        return found.kubeconfig, found.context
    run = RunKubeconfig(found.document)
    install_cleanup_handlers()
    atexit.register(run.remove)
    return run.write(module.tmpdir), found.context
