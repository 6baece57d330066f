# -*- coding: utf-8 -*-
"""Controller actions that handle tens of thousands of records decide with Python's cycle collector off, and leave it
as they found it (issue 37 §6: a third of the report's CPU went to collections that free nothing)."""
import gc
from unittest import mock

import pytest
from ansible.playbook.play_context import PlayContext

from ansible_collections.clusterops.commcheck.plugins.action import report as report_action
from ansible_collections.clusterops.commcheck.plugins.plugin_utils import controller_action


def _task(args):
    task = mock.MagicMock()
    task.args = args
    task.check_mode = True
    task.async_val = 0
    task.diff = False
    return task


def _action(cls, args):
    return cls(_task(args), mock.MagicMock(), PlayContext(), loader=mock.MagicMock(), templar=mock.MagicMock(),
               shared_loader_obj=mock.MagicMock())


class _Probe(controller_action.ControllerAction):
    """Notes whether the collector ran while it decided; fails as told."""

    NAME = "probe"
    ARGUMENT_SPEC = {"outcome": {"type": "str", "default": "ok"}}
    FAILURES = (ValueError,)
    seen = None

    def decide(self, args, result, task_vars):
        type(self).seen = gc.isenabled()
        if args["outcome"] == "failure":
            raise ValueError("told to fail")
        if args["outcome"] == "crash":
            raise RuntimeError("not one of FAILURES")
        result["decided"] = True
        return result


class _BulkProbe(_Probe):
    BULK_RECORDS = True


@pytest.fixture(name="collector_on")
def _collector_on():
    was = gc.isenabled()
    gc.enable()
    yield
    if not was:
        gc.disable()


@pytest.mark.parametrize("outcome", ["ok", "failure"])
def test_a_bulk_action_decides_without_the_cycle_collector_and_turns_it_back_on(collector_on, outcome):
    del collector_on
    result = _action(_BulkProbe, {"outcome": outcome}).run(task_vars={})
    assert _BulkProbe.seen is False
    assert gc.isenabled()
    assert bool(result.get("failed")) == (outcome == "failure"), result


def test_the_collector_is_back_on_after_an_unexpected_exception(collector_on):
    del collector_on
    with pytest.raises(RuntimeError):
        _action(_BulkProbe, {"outcome": "crash"}).run(task_vars={})
    assert _BulkProbe.seen is False and gc.isenabled()


def test_other_actions_leave_the_collector_alone(collector_on):
    del collector_on
    result = _action(_Probe, {}).run(task_vars={})
    assert result["decided"] and _Probe.seen is True and gc.isenabled()


def test_a_collector_that_was_off_stays_off():
    was = gc.isenabled()
    gc.disable()
    try:
        with controller_action.without_cycle_collection():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        if was:
            gc.enable()


def test_the_report_action_summarizes_with_the_collector_off(collector_on):
    del collector_on
    seen = []

    def summarize(*_args, **_kwargs):
        seen.append(gc.isenabled())
        raise ValueError("stop here")

    record = {"kind": "rdma_bw", "host": "h1", "peer": "h2", "params": {}, "metrics": {"bw_gbps": 90.0},
              "verdict": "pass", "cause": None, "fix": None, "evidence": []}
    action = _action(report_action.ActionModule, {"records": [record], "report_dir": "reports", "compare": False})
    with mock.patch.object(report_action.report_model, "summarize", side_effect=summarize):
        result = action.run(task_vars={})
    assert result["failed"] and "stop here" in result["msg"], result
    assert seen == [False] and gc.isenabled()
