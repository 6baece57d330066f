# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A loopback HTTP endpoint that REAL kubectl talks to (tests only; NOT a Kubernetes API server).

Tests point a kubeconfig at it to see exactly what real kubectl sends for the
command lines the collection builds. It answers what kubectl needs before it
sends the request that matters:

- discovery (``/version``, ``/api``, ``/apis``, ``/api/v1`` with pods,
  pods/exec and nodes); ``/openapi/*`` is 404 (so ``apply`` needs
  ``--validate=false``: schema validation is done with kubernetes-validate);
- pods and nodes from dicts the test fills (GET one, LIST with
  ``labelSelector`` / ``fieldSelector=metadata.name=``, DELETE);
- ``pods/NAME/exec`` is recorded (namespace, pod, container, every
  ``command`` item, the Authorization header) and refused with 400, so
  nothing runs anywhere.

Every request is kept in ``.requests``. Only binds 127.0.0.1.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

RESOURCES = [
    {"name": "pods", "singularName": "pod", "namespaced": True, "kind": "Pod", "shortNames": ["po"],
     "verbs": ["create", "delete", "get", "list", "patch", "update", "watch"]},
    {"name": "pods/exec", "singularName": "", "namespaced": True, "kind": "PodExecOptions", "verbs": ["create", "get"]},
    {"name": "nodes", "singularName": "node", "namespaced": False, "kind": "Node", "shortNames": ["no"],
     "verbs": ["get", "list", "watch"]},
]
FIXED = {
    "/version": {"major": "1", "minor": "32", "gitVersion": "v1.32.0-recorder"},
    "/api": {"kind": "APIVersions", "versions": ["v1"],
             "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1"}]},
    "/apis": {"kind": "APIGroupList", "apiVersion": "v1", "groups": []},
    "/api/v1": {"kind": "APIResourceList", "groupVersion": "v1", "resources": RESOURCES},
}


def _labels_match(labels, selector):
    for term in [t for t in (selector or "").split(",") if t]:
        key, _sep, value = term.partition("=")
        if labels.get(key) != value:
            return False
    return True


class Recorder(object):
    def __init__(self):
        self.requests = []
        self.pods = {}          # "ns/name" -> pod
        self.nodes = {}         # name -> node
        self.lock = threading.Lock()
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # pylint: disable=arguments-differ
                pass

            def do_GET(self):  # pylint: disable=invalid-name
                recorder.handle(self)

            do_POST = do_DELETE = do_PUT = do_PATCH = do_GET

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.url = "http://127.0.0.1:%d" % self.port
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()

    def kubeconfig(self, path, token="recorder-token", namespace="elsewhere"):
        """A kubeconfig whose context 'recorder' reaches this endpoint; the current context does not."""
        text = (
            "apiVersion: v1\nkind: Config\n"
            "clusters:\n- name: rec\n  cluster: {server: '%s'}\n- name: nowhere\n  cluster: {server: 'http://127.0.0.1:9'}\n"
            "users:\n- name: u\n  user: {token: %s}\n"
            "contexts:\n- name: recorder\n  context: {cluster: rec, user: u, namespace: %s}\n"
            "- name: nowhere\n  context: {cluster: nowhere, user: u}\n"
            "current-context: nowhere\n" % (self.url, token, namespace))
        with open(path, "w") as handle:
            handle.write(text)
        return path

    def execs(self):
        return [r["exec"] for r in self.requests if r.get("exec")]

    # ------------------------------------------------------------ handling
    def handle(self, req):
        length = int(req.headers.get("Content-Length") or 0)
        body = req.rfile.read(length).decode("utf-8", "replace") if length else ""
        url = urlsplit(req.path)
        query = parse_qs(url.query, keep_blank_values=True)
        parts = [p for p in url.path.split("/") if p]
        entry = {"method": req.command, "path": url.path, "query": query, "body": body,
                 "authorization": req.headers.get("Authorization")}
        with self.lock:
            self.requests.append(entry)
            code, doc = self.answer(req.command, url.path, parts, query, entry)
        data = json.dumps(doc).encode()
        req.send_response(code)
        req.send_header("Content-Type", "application/json")
        req.send_header("Content-Length", str(len(data)))
        req.end_headers()
        req.wfile.write(data)

    @staticmethod
    def status(code, reason, message):
        return code, {"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": reason,
                      "message": message, "code": code}

    def answer(self, method, path, parts, query, entry):
        if method == "GET" and path in FIXED:
            return 200, FIXED[path]
        if parts[:2] == ["api", "v1"] and len(parts) >= 5 and parts[2] == "namespaces" and parts[4] == "pods":
            namespace = parts[3]
            name = parts[5] if len(parts) > 5 else None
            if len(parts) == 7 and parts[6] == "exec":
                entry["exec"] = {"namespace": namespace, "pod": name, "container": (query.get("container") or [None])[0],
                                 "command": query.get("command", []), "method": method}
                return self.status(400, "BadRequest", "recorder: exec of %s/%s recorded, not run" % (namespace, name))
            if name is None and method == "GET":
                items = [p for k, p in sorted(self.pods.items()) if k.startswith(namespace + "/")
                         and _labels_match(p["metadata"].get("labels") or {}, (query.get("labelSelector") or [""])[0])]
                field = (query.get("fieldSelector") or [""])[0]
                if field.startswith("metadata.name="):
                    items = [p for p in items if p["metadata"]["name"] == field.split("=", 1)[1]]
                if (query.get("watch") or [""])[0] in ("true", "1"):
                    return self.status(400, "BadRequest", "recorder: no watches")
                return 200, {"kind": "PodList", "apiVersion": "v1", "metadata": {"resourceVersion": "1"},
                             "items": items}
            key = "%s/%s" % (namespace, name)
            if name and method == "GET":
                if key in self.pods:
                    return 200, self.pods[key]
                return self.status(404, "NotFound", 'pods "%s" not found' % name)
            if name and method == "DELETE":
                if key in self.pods:
                    return 200, self.pods.pop(key)
                return self.status(404, "NotFound", 'pods "%s" not found' % name)
        if parts[:3] == ["api", "v1", "nodes"] and method == "GET":
            items = [n for _name, n in sorted(self.nodes.items())
                     if _labels_match(n["metadata"].get("labels") or {}, (query.get("labelSelector") or [""])[0])]
            return 200, {"kind": "NodeList", "apiVersion": "v1", "metadata": {"resourceVersion": "1"}, "items": items}
        return self.status(404, "NotFound", "recorder: %s %s is not served" % (method, path))
