# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The filter plugins are imported once in the controller's main process (plugin_utils/filter_preload.py)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os
import sys

from ansible_collections.clusterops.commcheck.plugins.callback import commcheck_history
from ansible_collections.clusterops.commcheck.plugins.plugin_utils import filter_preload

FILTER_DIR = os.path.join(os.path.dirname(os.path.abspath(filter_preload.__file__)), "..", "filter")


def _filter_files():
    return sorted(name[:-3] for name in os.listdir(FILTER_DIR) if name.endswith(".py") and name != "__init__.py")


def test_every_filter_file_of_the_collection_is_imported():
    loaded, failed = filter_preload.preload_filters()
    assert failed == {}
    assert sorted(name.rsplit(".", 1)[1] for name in loaded) == _filter_files()
    assert any(name.endswith(".parse_perftest") for name in loaded)  # the parsers are among them
    for name in loaded:
        assert name in sys.modules


def test_a_filter_file_that_does_not_import_is_reported_and_the_others_still_load(tmp_path):
    pkg = tmp_path / "preload_probe_pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "good_one.py").write_text("VALUE = 1\n")
    (pkg / "bad_one.py").write_text("raise RuntimeError('no such library')\n")
    (pkg / "sub").mkdir()
    (pkg / "sub" / "__init__.py").write_text("raise RuntimeError('a sub-package is not a filter file')\n")
    sys.path.insert(0, str(tmp_path))
    try:
        loaded, failed = filter_preload.preload_filters("preload_probe_pkg")
    finally:
        sys.path.remove(str(tmp_path))
        for name in [n for n in sys.modules if n.startswith("preload_probe_pkg")]:
            del sys.modules[name]
    assert loaded == ["preload_probe_pkg.good_one"]
    assert list(failed) == ["preload_probe_pkg.bad_one"]
    assert "RuntimeError: no such library" in failed["preload_probe_pkg.bad_one"]


def test_a_missing_package_is_reported_not_raised():
    loaded, failed = filter_preload.preload_filters("no_such_package_of_filters")
    assert loaded == []
    assert list(failed) == ["no_such_package_of_filters"]


class _Display(object):
    def __init__(self):
        self.lines = []

    def warning(self, message):
        self.lines.append(message)

    def vvv(self, message):
        self.lines.append(message)


class _Playbook(object):
    _file_name = "/x/commcheck.yml"


def test_the_history_callback_imports_the_filters_when_a_playbook_starts(monkeypatch):
    calls = []
    monkeypatch.setattr(commcheck_history, "preload_filters", lambda: calls.append(1) or (["a"], {"b": "Error: x"}))
    callback = commcheck_history.CallbackModule()
    callback._display = _Display()
    callback.v2_playbook_on_start(_Playbook())
    assert calls == [1]
    assert callback._playbook == "commcheck.yml"
    assert callback._display.lines == ["commcheck_history: filter plugin b not preloaded: Error: x"]


def test_a_forked_copy_of_the_callback_does_not_import_them_again(monkeypatch):
    calls = []
    monkeypatch.setattr(commcheck_history, "preload_filters", lambda: calls.append(1) or ([], {}))
    callback = commcheck_history.CallbackModule()
    callback._display = _Display()
    callback._pid = -1
    callback.v2_playbook_on_start(_Playbook())
    assert calls == []
