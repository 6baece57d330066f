# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The stages of plugins/module_utils import one way (docs/ARCHITECTURE.md): every import read from the source.

The plugins on top (plugin_utils, action, modules, filter, callback, lookup) may import any stage; a stage
imports only the stages below it, and never a plugin on top.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import ast
import os

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODULE_UTILS = os.path.join(REPO, "plugins", "module_utils")
PACKAGE = "ansible_collections.clusterops.commcheck.plugins."

# stage -> the stages it may import. Data flows options -> commands -> parsers -> discovery -> planning ->
# verdicts -> records; in the imports, commands sits above planning (the argv builders take what the plan
# decided, the module-side drivers parse and plan a whole step) and kubernetes beside verdicts: it stands on
# commands (kubectl runs through the runner, job manifests hold the mpirun line) and no stage imports it.
ALLOWED = {
    "options": set(),
    "parsers": {"options"},
    "discovery": {"options", "parsers"},
    "planning": {"options", "parsers", "discovery"},
    "commands": {"options", "parsers", "discovery", "planning"},
    "kubernetes": {"options", "parsers", "discovery", "planning", "commands"},
    "verdicts": {"options", "parsers", "discovery", "planning", "commands"},
    "records": {"options", "parsers", "discovery", "planning", "commands", "verdicts"},
}


def imported_modules(source, package):
    """The collection modules a Python source imports, as dotted names below ``plugins.``
    (``module_utils.verdicts.stats``); ``package``: the dotted package of the file, for relative imports."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            out.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                name = ".".join(base + ([node.module] if node.module else []))
            else:
                name = node.module or ""
            out.extend("%s.%s" % (name, alias.name) for alias in node.names)
    return [name[len(PACKAGE):] for name in out if name.startswith(PACKAGE)]


def forbidden_edges(stage, imported):
    """The imports of a file of ``stage`` that the order forbids: another stage it may not import, or a plugin
    on top (anything outside module_utils)."""
    bad = []
    for name in imported:
        parts = name.split(".")
        if parts[0] != "module_utils":
            bad.append(name)
        elif len(parts) > 1 and parts[1] != stage and parts[1] not in ALLOWED[stage]:
            bad.append(name)
    return bad


def stage_files():
    for stage in sorted(ALLOWED):
        folder = os.path.join(MODULE_UTILS, stage)
        for name in sorted(os.listdir(folder)):
            if name.endswith(".py"):
                yield stage, os.path.join(folder, name)


def test_every_folder_of_module_utils_is_a_stage_of_the_table():
    folders = set(name for name in os.listdir(MODULE_UTILS)
                  if os.path.isdir(os.path.join(MODULE_UTILS, name)) and not name.startswith(("_", ".")))
    assert folders == set(ALLOWED)
    loose = [name for name in os.listdir(MODULE_UTILS) if name.endswith(".py") and name != "__init__.py"]
    assert loose == []


def test_the_order_has_no_cycle():
    placed = []
    left = dict(ALLOWED)
    while left:
        ready = sorted(stage for stage, below in left.items() if below <= set(placed))
        assert ready, "a cycle among %s" % sorted(left)
        placed.extend(ready)
        for stage in ready:
            del left[stage]
    assert placed.index("options") < placed.index("commands") < placed.index("verdicts") < placed.index("records")


def test_no_stage_imports_kubernetes():
    assert not any("kubernetes" in below for below in ALLOWED.values())


@pytest.mark.parametrize("stage", sorted(ALLOWED))
def test_each_stage_imports_only_the_stages_below_it(stage):
    found = {}
    for file_stage, path in stage_files():
        if file_stage != stage:
            continue
        with open(path) as handle:
            source = handle.read()
        package = "ansible_collections.clusterops.commcheck.plugins.module_utils.%s" % stage
        bad = forbidden_edges(stage, imported_modules(source, package))
        if bad:
            found[os.path.relpath(path, REPO)] = bad
    assert found == {}


def test_the_reader_sees_every_form_of_import_and_flags_an_upward_one():
    source = "\n".join([
        "from ansible_collections.clusterops.commcheck.plugins.module_utils.records import history",
        "import ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts.stats",
        "from ansible_collections.clusterops.commcheck.plugins.plugin_utils.role_option_kit import number",
        "from .sibling import thing",
        "from ..options.option_rules import show",
        "def late():",
        "    from ansible_collections.clusterops.commcheck.plugins.module_utils.kubernetes import k8s_pods",
    ])
    package = PACKAGE + "module_utils.verdicts"
    imported = imported_modules(source, package)
    assert imported == ["module_utils.records.history", "module_utils.verdicts.stats",
                        "plugin_utils.role_option_kit.number", "module_utils.verdicts.sibling.thing",
                        "module_utils.options.option_rules.show", "module_utils.kubernetes.k8s_pods"]
    assert forbidden_edges("verdicts", imported) == [
        "module_utils.records.history", "plugin_utils.role_option_kit.number", "module_utils.kubernetes.k8s_pods"]


def test_the_stages_really_import_each_other():
    edges = set()
    for stage, path in stage_files():
        with open(path) as handle:
            for name in imported_modules(handle.read(), PACKAGE + "module_utils." + stage):
                parts = name.split(".")
                if parts[0] == "module_utils" and parts[1] != stage:
                    edges.add((stage, parts[1]))
    # the reader finds the imports the pipeline is made of (a reader that saw none would pass every file)
    assert {("commands", "options"), ("discovery", "parsers"), ("verdicts", "planning"),
            ("records", "verdicts"), ("kubernetes", "commands")} <= edges
