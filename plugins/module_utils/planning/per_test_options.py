# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which of a check's options each of its tests takes: ``side_options(family, options, test)``.

A check is asked for once (bidirectional, queue pairs, a message size...), but
some of those options mean something for only some of its tests. perftest takes
``-b`` and ``-q`` on bandwidth tests only (its latency tests refuse them), an
atomic test always moves 8 bytes (``-s`` and ``-a`` do not apply), and the
latency iteration count is for latency tests. The option goes to the tests it
applies to and the others still run: this one table decides it for the run
(the perftest module merging its options into each side) and for the up-front
check (``plugin_utils/planned_call_checks.py``), so they cannot disagree.
``unhonoured`` names what no planned test takes: such a value is refused up front.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type


def _bandwidth(op, metric):
    return metric == "bw"


def _latency(op, metric):
    return metric == "lat"


def _sized(op, metric):
    return op != "atomic"


# option -> (the tests it applies to, in words; whether a test (op, metric) takes it)
_PERFTEST = {
    "bidirectional": ("bandwidth tests only (metric bw)", _bandwidth),
    "qps": ("bandwidth tests only (metric bw)", _bandwidth),
    "lat_iterations": ("latency tests only (metric lat)", _latency),
    "size": ("every test but atomic ones (fixed 8 bytes)", _sized),
    "all_sizes": ("every test but atomic ones (fixed 8 bytes)", _sized),
}
# check family -> its per-test options; iperf3 runs one test, so every option applies to it
FAMILIES = {"rdma": _PERFTEST, "gpudirect": _PERFTEST, "tcp": {}}


def _rules(family):
    try:
        return FAMILIES[family]
    except KeyError:
        raise ValueError("unknown check family %r (one of %s)" % (family, ", ".join(sorted(FAMILIES))))


def test_of(test):
    """(op, metric) of a test step: a dict with ``test`` (or ``op``) and ``metric``, or an [op, metric] pair."""
    if isinstance(test, dict):
        return test.get("test") or test.get("op"), test.get("metric") or "bw"
    op, metric = test
    return op, metric or "bw"


def applies(family, option, test):
    """Whether ``test`` of ``family`` takes ``option`` (an option with no rule applies to every test)."""
    rule = _rules(family).get(option)
    return rule is None or rule[1](*test_of(test))


def where(family, option):
    """The tests ``option`` applies to, in words (None: every test)."""
    rule = _rules(family).get(option)
    return rule[0] if rule else None


def side_options(family, options, test):
    """A copy of ``options`` (module argument names) where those ``test`` does not take are None."""
    out = dict(options)
    for option in _rules(family):
        if option in out and not applies(family, option, test):
            out[option] = None
    return out


def _asked(value):
    return value not in (None, False, 0, "", [])


def unhonoured(family, options, tests):
    """[(option, the tests it applies to)] for the options given a value that none of ``tests`` takes."""
    steps = [test_of(t) for t in tests or []]
    return [(option, where(family, option)) for option in sorted(_rules(family))
            if _asked(options.get(option)) and steps and not any(applies(family, option, s) for s in steps)]
