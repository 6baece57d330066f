# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Run a collection module's main() in the test process and return its JSON result (failed ones too)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json

import pytest

from ansible.module_utils import basic


def run_module(module, monkeypatch, capsys, args, check_mode=False, diff=False):
    """The result module.main() prints for args (with Ansible's check and diff mode flags)."""
    args = dict(args, _ansible_check_mode=check_mode)
    if diff:
        args["_ansible_diff"] = True
    monkeypatch.setattr(basic, "_ANSIBLE_ARGS", json.dumps({"ANSIBLE_MODULE_ARGS": args}).encode("utf-8"))
    monkeypatch.setattr(basic, "_ANSIBLE_PROFILE", "legacy", raising=False)  # ansible-core 2.19 and later
    with pytest.raises(SystemExit):
        module.main()
    return json.loads(capsys.readouterr().out)


class Recorder(object):
    """Stands in for subprocess.Popen: records what would have started and starts nothing."""

    def __init__(self):
        self.argvs = []

    def __call__(self, argv, *args, **kwargs):
        self.argvs.append(list(argv))
        raise OSError("commcheck test: starting processes is not allowed here")


# What kubectl 1.30 prints for ``kubectl version --client``: the identity probe the plugins run before kubectl
# first acts on a cluster. Fake transports answer it so that what they test comes after it.
KUBECTL_CLIENT_VERSION = "Client Version: v1.30.2\nKustomize Version: v5.0.4-0.20230601165947-6ce0bf390ce3\n"


def is_identity_probe(argv):
    """``argv`` is the identity probe ``<kubectl> version --client``."""
    return list(argv[1:]) == ["version", "--client"]
