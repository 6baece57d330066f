# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The collection's README.md: what Galaxy shows a user, kept true to the tree.

The two lab commands come first; every role, playbook, module, lookup,
callback and parse filter of the collection is named; the sections a
collection README has (kubernetes.core's and community.docker's layout) are
there; every relative link leads to a file of the repository.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import glob
import os
import re

import yaml

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FQCN = "clusterops.commcheck."


def _readme():
    with open(os.path.join(REPO, "README.md")) as handle:
        return handle.read()


def _names(pattern):
    return sorted(os.path.splitext(os.path.basename(p.rstrip("/")))[0] for p in glob.glob(os.path.join(REPO, pattern))
                  if not os.path.basename(p.rstrip("/")).startswith("__"))


def test_the_lab_commands_come_first():
    text = _readme()
    commands = re.findall(r"^((?:make|ansible-\S+) [^\n]*)", text, re.M)
    assert commands[:2] == ["make demo   # fresh machine (root): install everything, start a 4-host local lab, "
                            "run the one-click check, print the report path",
                            "make test   # the whole test suite: unit (galaxy-importer and ansible-builder included), "
                            "lab integration, ansible-lint, ansible-test sanity, collection build"]
    assert text.index("## Try it locally") < text.index("make demo") < text.index("## What it is")


def test_every_role_playbook_and_plugin_is_named():
    text = _readme()
    named = set(re.findall(r"clusterops\.commcheck\.(\w+)", text)) | set(re.findall(r"`(parse_\w+)`", text))
    expected = {"roles": _names("roles/*/"), "playbooks": _names("playbooks/*.yml"),
                "modules": _names("plugins/modules/*.py"), "lookup": _names("plugins/lookup/*.py"),
                "callback": _names("plugins/callback/*.py"), "parse filters": _names("plugins/filter/parse_*.py")}
    missing = dict((kind, sorted(set(names) - named)) for kind, names in expected.items() if set(names) - named)
    assert missing == {}


def test_sections_of_a_collection_readme():
    headings = re.findall(r"^## (.+)$", _readme(), re.M)
    assert headings == ["Try it locally", "What it is", "Included content", "Tested with Ansible",
                        "External requirements", "Installation", "Use", "Release notes", "Licensing", "Contributing"]


def test_tested_versions_meet_requires_ansible():
    text = " ".join(_readme().split())
    assert "Tested with ansible-core 2.16, 2.17, 2.18, 2.19" in text
    with open(os.path.join(REPO, "meta", "runtime.yml")) as handle:
        assert yaml.safe_load(handle)["requires_ansible"] == ">=2.16.0"


def test_relative_links_lead_to_files():
    links = [link.split("#")[0] for link in re.findall(r"\]\(([^)]+)\)", _readme()) if "://" not in link]
    # CHANGELOG.rst is written by `antsibull-changelog release` (changelogs/changelog.yaml holds its content)
    missing = [link for link in links if link != "CHANGELOG.rst" and not os.path.exists(os.path.join(REPO, link))]
    assert links and missing == []
