# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""docs/troubleshooting.md lists every error and finding code the code can emit (issue 34).

The codes come from three places, and each must be in the doc:

- the catalogs ``tools/gen_docs.py`` writes the doc from (walked);
- the code's rule tables (module-level lists of tuples such as ``_ERROR_RULES``, whose code is a
  snake_case string of the tuple) and code constants (``GLOBAL_ERROR_CODES``, ``FINDING_NAME``);
- a static scan of plugins/: ``"code": "x"`` / ``"finding": "x"`` in dict literals, ``code="x"`` keyword
  arguments, ``code = "x"`` assignments, and calls of any function of the collection whose parameter is named
  ``code`` or ``finding`` (``finding("error", "port_down", ...)``), resolved through the imports.

A code written any of these ways that no catalog has fails this test: add it to its stage's catalog
(``discovery/finding_codes.py``, ``planning/plan_codes.py``, ``verdicts/finding_codes.py``, a module's or a
parser's catalog) and run tools/gen_docs.py.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import ast
import importlib.util
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
PLUGINS = os.path.join(REPO, "plugins")
DOC = os.path.join(REPO, "docs", "troubleshooting.md")
PACKAGE = "ansible_collections.clusterops.commcheck."
# a code in a rule table, among its needles and patterns: snake_case with at least one '_'
TABLE_CODE = re.compile(r"^[a-z][a-z0-9]*(?:_[a-z0-9]+)+$")
CODE_KEYS = ("code", "finding")
CODE_TABLE = re.compile(r"(RULES|ERRORS|CODES|FINDINGS|FINDING_NAME)$")


def gen_docs():
    spec = importlib.util.spec_from_file_location("gen_docs", os.path.join(REPO, "tools", "gen_docs.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def documented():
    with open(DOC) as handle:
        return set(re.findall(r"^\| `([^`]+)` \|", handle.read(), re.M))


def _text(node):
    """The string(s) an expression is written as: a constant, or both branches of ``a if c else b``."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.IfExp):
        return _text(node.body) + _text(node.orelse)
    return []


class Source(object):
    """One file of plugins/: its functions that take a code, and the collection names it imports."""

    def __init__(self, path):
        self.name = PACKAGE + os.path.relpath(path, REPO)[:-3].replace(os.sep, ".")
        with open(path) as handle:
            self.tree = ast.parse(handle.read())
        self.emitters = {}     # function or method name -> positions of its code parameters (self left out)
        self.imports = {}      # local name -> (module, name or None for a module)
        for node in ast.walk(self.tree):
            if isinstance(node, ast.FunctionDef):
                names = [arg.arg for arg in node.args.args]
                skip = 1 if names[:1] == ["self"] else 0
                positions = [i - skip for i, name in enumerate(names) if name in CODE_KEYS]
                if positions:
                    self.emitters[node.name] = positions
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith(PACKAGE):
                for alias in node.names:
                    self.imports[alias.asname or alias.name] = (node.module, alias.name)

    def callee(self, func, sources):
        """(source, name) of the collection function a call calls, or None."""
        if isinstance(func, ast.Name):
            if func.id in self.emitters:
                return self, func.id
            module, name = self.imports.get(func.id, (None, None))
            return (sources.get(module), name) if module in sources else None
        if isinstance(func, ast.Attribute):
            if isinstance(func.value, ast.Name) and func.value.id in self.imports:
                module, name = self.imports[func.value.id]
                return sources.get("%s.%s" % (module, name)), func.attr
            return self, func.attr          # self.add_error(...), view.finding(...): a method of this file
        return None

    def codes(self, sources):
        """Every code written in this file, each way the module docstring lists."""
        found = set()
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Dict):
                for key, value in zip(node.keys, node.values):
                    if key is not None and _text(key) and _text(key)[0] in CODE_KEYS:
                        found.update(_text(value))
            elif isinstance(node, ast.Assign):
                found.update(self._assigned(node))
            elif isinstance(node, ast.Call):
                found.update(t for kw in node.keywords if kw.arg in CODE_KEYS for t in _text(kw.value))
                target = self.callee(node.func, sources)
                if target and target[0] is not None:
                    for position in target[0].emitters.get(target[1], []):
                        if position < len(node.args):
                            found.update(_text(node.args[position]))
        return found

    def _assigned(self, node):
        names = [t.id for t in node.targets if isinstance(t, ast.Name)]
        if "code" in names:
            return set(_text(node.value))
        if not any(CODE_TABLE.search(name) for name in names):
            return set()
        # a rule table: the snake_case strings of its tuples; a code constant: its strings (or dict values)
        out = set()
        items = node.value.elts if isinstance(node.value, (ast.List, ast.Tuple)) else []
        for item in items:
            if isinstance(item, ast.Tuple):
                out.update(t for part in item.elts for t in _text(part) if TABLE_CODE.match(t))
            else:
                out.update(_text(item))
        if isinstance(node.value, ast.Dict) and any(n == "FINDING_NAME" for n in names):
            out.update(t for value in node.value.values for t in _text(value))
        return out


def scanned_codes():
    sources = {}
    for folder, _dirs, files in os.walk(PLUGINS):
        for name in files:
            if name.endswith(".py"):
                source = Source(os.path.join(folder, name))
                sources[source.name] = source
    out = {}
    for source in sources.values():
        for code in source.codes(sources):
            out.setdefault(code, source.name.rsplit(".", 1)[-1])
    return out


def test_every_code_the_code_can_emit_is_in_the_troubleshooting_doc():
    doc = documented()
    walked = dict((code, title) for title, _where, catalog in gen_docs().catalogs() for code in catalog)
    scanned = scanned_codes()
    # the scan reaches every way a code is written: a finding() argument, a method of the file (view.finding),
    # a renamed parameter (pair_analysis._finding), a keyword, a dict, an assignment, a rule table
    assert set(["port_down", "tool_mismatch", "bad_link", "collective_node_bisected", "collective_host_unreachable",
                "acl_error", "orted_not_found", "not_installed", "no_peer", "ssh_config_unusable",
                "gid_type_mismatch", "fabric"]) <= set(scanned), sorted(scanned)
    assert len(scanned) > 100, len(scanned)
    missing = sorted("%s (%s)" % (code, where) for code, where in list(walked.items()) + list(scanned.items())
                     if code not in doc)
    assert missing == [], "codes the code emits that docs/troubleshooting.md does not list: %s" % missing
