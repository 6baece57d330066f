# -*- coding: utf-8 -*-
"""The real readers of the report's machine files, for the tests: Prometheus text through prometheus_client's parser
and promtool, junit.xml through Jenkins xunit-plugin's schema (xmlschema), xunitparser and junitparser."""
import io
import os
import shutil
import subprocess

import xmlschema
from prometheus_client.parser import text_string_to_metric_families

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures")
JUNIT_XSD = os.path.join(FIXTURES, "junit", "junit-10.xsd")
PROMTOOL = shutil.which("promtool")
_SCHEMA = []


def parse_prometheus(text):
    """{name: {"help", "type", "samples": [(labels, value)]}} as prometheus_client reads the text; asserts what
    node_exporter's textfile collector needs besides: one block per family, the same label names on every sample
    of a family, no series twice."""
    assert text.endswith("\n")
    families = {}
    for family in text_string_to_metric_families(text):
        assert family.name not in families, "family %s split or repeated" % family.name
        families[family.name] = {"help": family.documentation, "type": family.type,
                                 "samples": [(dict(s.labels), s.value) for s in family.samples]}
        assert all(s.name == family.name for s in family.samples), family.name
    for name, family in families.items():
        samples = family["samples"]
        assert samples, "family %s has no sample" % name
        assert len(set(tuple(sorted(labels)) for labels, _v in samples)) == 1, "label names differ in %s" % name
        series = [tuple(sorted(labels.items())) for labels, _v in samples]
        assert len(series) == len(set(series)), "duplicate series in %s" % name
    return families


def values(families, name):
    """{sorted label items: value} of one family."""
    return dict((tuple(sorted(labels.items())), value) for labels, value in families[name]["samples"])


def promtool_problems(text):
    """What `promtool check metrics` says of the text (its lint of names, units, help and types): [] when nothing.

    make setup installs promtool (Debian's prometheus package); without it the test fails rather than skips.
    """
    assert PROMTOOL, "promtool is missing: make setup installs it (Debian package prometheus)"
    proc = subprocess.run([PROMTOOL, "check", "metrics"], input=text, capture_output=True, text=True, check=False,
                          timeout=120)
    problems = [line for line in (proc.stdout + proc.stderr).splitlines() if line.strip()]
    assert proc.returncode == 0 or problems, "promtool failed without saying why: rc %d" % proc.returncode
    return problems


def junit_schema():
    if not _SCHEMA:
        _SCHEMA.append(xmlschema.XMLSchema(JUNIT_XSD))
    return _SCHEMA[0]


def junit_schema_errors(text):
    """Why Jenkins' xunit plugin would refuse the file (junit-10.xsd), as messages; [] when it validates."""
    return [str(error.reason) for error in junit_schema().iter_errors(io.BytesIO(text.encode("utf-8")))]
