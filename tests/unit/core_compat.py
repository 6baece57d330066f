# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the unit tests use of ansible-core's test API, on every core the collection supports (2.16-2.19).

ansible-core 2.19 brought ``ansible.module_utils.testing.patch_module_args``
and ``ansible.template.trust_as_template`` (data tagging). On 2.16-2.18 the
first is missing and the second is not needed (every string is a template
there). The tests import them from here, or, for the test files that import
``ansible.module_utils.testing`` themselves, ``install()`` (called by
tests/unit/conftest.py) registers this module's ``patch_module_args`` under
that name where the core has none. On 2.19 and later nothing is replaced.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import contextlib
import json
import sys
import types
from unittest import mock

import ansible
from ansible.module_utils import basic

try:
    from ansible.module_utils.testing import patch_module_args as _core_patch_module_args
except ImportError:  # ansible-core < 2.19
    _core_patch_module_args = None

try:
    from ansible.template import trust_as_template as _core_trust_as_template
except ImportError:  # ansible-core < 2.19: no data tagging, every string is a template
    _core_trust_as_template = None

TESTING_MODULE = "ansible.module_utils.testing"


def core_version():
    """The running ansible-core's (major, minor), e.g. (2, 16)."""
    return tuple(int(part) for part in ansible.__version__.split(".")[:2])


@contextlib.contextmanager
def _patch_module_args(args=None):
    """patch_module_args of ansible-core 2.19 for older cores: the arguments AnsibleModule reads."""
    if not isinstance(args, (dict, type(None))):
        raise TypeError("The `args` arg must be a dict or None.")
    payload = json.dumps({"ANSIBLE_MODULE_ARGS": args or {}}).encode("utf-8")
    with mock.patch.object(basic, "_ANSIBLE_ARGS", payload):
        yield


patch_module_args = _core_patch_module_args or _patch_module_args


def trust_as_template(text):
    """The text marked as a template on cores with data tagging (2.19+); the text itself before."""
    return _core_trust_as_template(text) if _core_trust_as_template else text


def install():
    """Register ``ansible.module_utils.testing`` with ``patch_module_args`` where the core lacks it."""
    if _core_patch_module_args is not None or TESTING_MODULE in sys.modules:
        return
    shim = types.ModuleType(TESTING_MODULE, "commcheck test shim: ansible-core 2.19's test helpers on an older core")
    shim.patch_module_args = _patch_module_args
    sys.modules[TESTING_MODULE] = shim
    import ansible.module_utils  # pylint: disable=import-outside-toplevel
    ansible.module_utils.testing = shim
