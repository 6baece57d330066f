# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Roles that only call (issue 35): the task files of every role template little, and no expression is a program.

At most MAX_TEMPLATED_LINES lines of ``roles/*/tasks/*.yml`` hold ``{{`` or ``{%`` (what a role computes belongs
in the action plugins and module_utils, where it is tested), and no templated string or condition spans more
than MAX_EXPRESSION_LINES lines of its file.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import glob
import os

import yaml

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# 638 at bb293b6, 150 after issue 35's moves to Python; 165 with issue 37's MPIJob runs, node reservation, GPU
# retests and the slices' collective meetings; 159 once the report module says when the run fails as asked and the
# rounds from GPU memory run through rounds.yml. (Keeping the run's records as facts an action returns is no way
# down: such facts go to the fact cache, outlive the run with a persistent cache, and are not variables where
# inject_facts_as_vars is off, as in the lab; set_fact's are neither.) 125 once the roles name the registered results
# fleet_facts and record read (hosts_from, unreachable_from, values entries, records_from: plugin_utils/named_vars.py)
# and the collective role's own tool probe takes its transport from the tool_probe action and the probe step. 109
# once rdma_perf and tcp_perf share their task files (roles/pair_perf, issue 35 §3: one pair-check engine), whose
# steps take the family from the role's commcheck_pair_family.
MAX_TEMPLATED_LINES = 109
MAX_EXPRESSION_LINES = 3
# task keywords whose value is a bare Jinja expression (no braces)
CONDITIONS = ("when", "failed_when", "changed_when", "until")
MARKS = ("{{", "{%")


def task_files():
    return sorted(glob.glob(os.path.join(REPO, "roles", "*", "tasks", "*.yml")))


def templated_lines(text):
    return sum(1 for line in text.splitlines() if any(mark in line for mark in MARKS))


def _span(node, lines):
    """The lines of its file a scalar takes: a block scalar (``>-``, ``|``) its content lines, another one the
    lines from its first character to its last."""
    if node.style in (">", "|"):
        taken = lines[node.start_mark.line + 1:node.end_mark.line]
    else:
        taken = lines[node.start_mark.line:node.end_mark.line + 1]
    while taken and not taken[-1].strip():
        taken = taken[:-1]
    return len(taken)


def expressions(text):
    """(first line, lines spanned, the text) of every templated string and every condition of a task file."""
    lines = text.splitlines()
    found = []

    def walk(node, condition=False):
        if isinstance(node, yaml.ScalarNode):
            if condition or any(mark in node.value for mark in MARKS):
                found.append((node.start_mark.line + 1, _span(node, lines), node.value))
        elif isinstance(node, yaml.SequenceNode):
            for item in node.value:
                walk(item, condition)
        elif isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                walk(value, isinstance(key, yaml.ScalarNode) and key.value in CONDITIONS)
    walk(yaml.compose(text))
    return found


def test_the_role_tasks_template_at_most_109_lines():
    counts = {}
    for path in task_files():
        with open(path) as handle:
            counts[os.path.relpath(path, REPO)] = templated_lines(handle.read())
    assert len(counts) > 30
    assert sum(counts.values()) <= MAX_TEMPLATED_LINES, sorted(counts.items(), key=lambda item: -item[1])


def test_no_expression_of_a_role_task_spans_more_than_3_lines():
    long_ones = []
    for path in task_files():
        with open(path) as handle:
            text = handle.read()
        long_ones += [(os.path.relpath(path, REPO), line, span) for line, span, _value in expressions(text)
                      if span > MAX_EXPRESSION_LINES]
    assert long_ones == []


SAMPLE = """---
- name: a
  ansible.builtin.set_fact:
    one: "{{ x }}"
    folded: >-
      {{ a
         + b
         + c
         + d }}

    plain: text
  when:
    - x is defined
    - >-
      y
      or z
- name: b
  ansible.builtin.debug:
    msg: >-
      {{ a
         + b }}
  failed_when: >-
    (a
     and b
     and c
     and d)
"""


def test_the_measure_finds_every_expression_and_its_lines():
    spans = [(line, span) for line, span, _value in expressions(SAMPLE)]
    assert spans == [(4, 1), (5, 4), (13, 1), (14, 2), (19, 2), (22, 4)]
    assert templated_lines(SAMPLE) == 3
