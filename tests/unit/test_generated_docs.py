"""docs/variables.md and docs/troubleshooting.md match the roles and error catalogs."""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_generated_docs_are_current():
    res = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "gen_docs.py"), "--check"],
                         capture_output=True, text=True, check=False)
    assert res.returncode == 0, res.stdout + res.stderr


def test_troubleshooting_lists_every_perftest_and_nccl_code():
    from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_perftest import PERFTEST_ERRORS
    from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_nccl_tests import NCCL_TESTS_ERRORS
    with open(os.path.join(ROOT, "docs", "troubleshooting.md")) as handle:
        text = handle.read()
    for code in list(PERFTEST_ERRORS) + list(NCCL_TESTS_ERRORS):
        assert "| `%s` |" % code in text
