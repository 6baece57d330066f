"""Make the repository importable as ansible_collections.clusterops.commcheck.

The repository root is the collection root; tests import it through a
symlink in .build/collections (the same path ANSIBLE_COLLECTIONS_PATH uses).

No test writes into the checkout outside the build folder (.build/), so two
checkouts, or two runs of one, never share or dirty each other's tree: the
compiled test modules (pytest's rewritten asserts) and the collection's
bytecode go to .build/pycache, Hypothesis' example database and caches to
.build/hypothesis. Caching the rewritten tests is what keeps collection fast
(each xdist worker collects again), also where PYTHONDONTWRITEBYTECODE is set
to keep __pycache__ folders out of the tree.

Also shared by every test: no test may depend on how fast this machine is.
Hypothesis gets no per-example deadline and no "too slow" health check (both
are wall-clock limits), and the ``wait_until`` fixture waits for an event
with a wide deadline that only bounds the wait.
"""
import importlib.util
import os
import sys
import time

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COLLECTIONS = os.path.join(REPO, ".build", "collections")
LINK = os.path.join(COLLECTIONS, "ansible_collections", "clusterops", "commcheck")

if not os.path.lexists(LINK):
    os.makedirs(os.path.dirname(LINK), exist_ok=True)
    try:
        os.symlink(os.path.relpath(REPO, os.path.dirname(LINK)), LINK)
    except FileExistsError:
        pass
# Programs the tests start (ansible-playbook, the lab's tools) cache their bytecode there too.
PYCACHE = os.environ.setdefault("PYTHONPYCACHEPREFIX", os.path.join(REPO, ".build", "pycache"))
sys.pycache_prefix = sys.pycache_prefix or PYCACHE
sys.dont_write_bytecode = False
if COLLECTIONS not in sys.path:
    sys.path.insert(0, COLLECTIONS)
os.environ.setdefault("ANSIBLE_COLLECTIONS_PATH", COLLECTIONS)

try:
    from hypothesis import HealthCheck, settings as hypothesis_settings
    from hypothesis.configuration import set_hypothesis_home_dir
except ImportError:  # hypothesis is a dev requirement; without it the property tests fail on import anyway
    hypothesis_settings = None
if hypothesis_settings is not None:
    # its example database and its cache of the constants it found in our code; by default .hypothesis in the cwd
    set_hypothesis_home_dir(os.path.join(REPO, ".build", "hypothesis"))
    # Loaded before any test module is imported, so every @settings(...) inherits it.
    # Under CI the examples are derandomized (the same every run): a CI verdict is
    # reproducible, while developers' runs keep exploring new examples (and the
    # example database replays what they found).
    hypothesis_settings.register_profile("commcheck", deadline=None,
                                         suppress_health_check=[HealthCheck.too_slow],
                                         derandomize=bool(os.environ.get("CI")))
    hypothesis_settings.load_profile("commcheck")

# How long wait_until waits for an event by default: it only bounds a wait for
# something that normally takes milliseconds, so a busy machine never hits it.
EVENT_WAIT_S = 60.0


def wait_until(condition, within=EVENT_WAIT_S, every=0.05):
    """Call condition() until it returns something true or ``within`` seconds passed; return its last value.

    The caller asserts on the returned value, so a test fails only when the
    event never came, not because this machine was slow to bring it.
    """
    deadline = time.monotonic() + within
    while True:
        value = condition()
        if value or time.monotonic() >= deadline:
            return value
        time.sleep(every)


@pytest.fixture(name="wait_until")
def wait_until_fixture():
    """The ``wait_until(condition, within=60, every=0.05)`` helper of tests/conftest.py."""
    return wait_until


@pytest.fixture(name="commcheck_service")
def commcheck_service_fixture():
    """docs/examples/commcheck_service.py (the ansible_runner example the docs give), loaded as a module."""
    spec = importlib.util.spec_from_file_location(
        "commcheck_service", os.path.join(REPO, "docs", "examples", "commcheck_service.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
