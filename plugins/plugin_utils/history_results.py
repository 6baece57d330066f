# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the commcheck_history callback reads of a task result: records and the run id, or the failure.

Ansible 2.19 hands each callback its own copy of a result and turns it into
native types only when ``result`` is read: on a large cluster that pass over
every module result (discovery, the tests' sides) is the main process's, one
result after another, so results without records are not read at all; a
failed or unreachable result is read whole (they are few).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.clusterops.commcheck.plugins.module_utils.records.history import redact_text
from ansible_collections.clusterops.commcheck.plugins.module_utils.records.history_summary import task_failure


def result_part(result, name):
    """The ``host``, ``task`` or ``result`` of a task result: public from ansible-core 2.19, which plans to
    deprecate the underscored names that are all 2.16-2.18 have."""
    part = getattr(result, name, None)
    return part if part is not None else getattr(result, "_" + name, None)


def data_if_read(result):
    """The result's data when it holds what the callback reads (records, the run id fact), else None.

    Ansible 2.19 hands each callback its own copy of a result and turns it into native types only when
    ``result`` is read: on a large cluster that pass over every module result is the main process's, so results
    without records are not read at all."""
    raw = getattr(result, "_return_data", None)
    if isinstance(raw, dict):
        facts = raw.get("ansible_facts")
        if "commcheck_records" not in raw and not (isinstance(facts, dict) and "commcheck_run_id" in facts) \
                and not carries_unmanaged(raw):
            return None
    return result_part(result, "result")


def carries_unmanaged(raw):
    """Whether a result's data holds a ``governor_unmanaged`` finding (``unmanaged`` of the ``cpu_governor``
    module, ``cpu_governor.unmanaged`` of the pair modules), which the callback writes as a finding record."""
    governor = raw.get("cpu_governor")
    return raw.get("unmanaged") is not None or (isinstance(governor, dict) and governor.get("unmanaged") is not None)


def _message(data):
    if not isinstance(data, dict):
        return None
    return data.get("msg") or data.get("stderr") or data.get("reason") or data.get("module_stderr")


def failure_of(result, unreachable=False):
    """The failed (or unreachable) task of a result, as history_summary keeps it: its name, host, where it ran
    (a delegated task's delegate), whether it ran once for the run, and its message without secrets."""
    task = result_part(result, "task")
    fields = getattr(result, "_task_fields", None)
    data = getattr(result, "_result", None)
    delegated = (data.get("_ansible_delegated_vars") or {}).get("ansible_delegated_host") if isinstance(
        data, dict) else None
    run_once = fields.get("run_once") if hasattr(fields, "get") else getattr(task, "run_once", False)
    name = task.get_name() if hasattr(task, "get_name") else getattr(task, "name", None)
    message = _message(data)
    if unreachable:
        message = "unreachable: %s" % (message or "no answer")
    return task_failure(name, getattr(result_part(result, "host"), "name", None), redact_text(str(message))[0],
                        delegated_to=delegated, run_once=run_once is True or str(run_once).lower() == "true",
                        task_id=task_id(result))


def task_id(result):
    """Ansible's id of the task of a result (two tasks may share a name)."""
    task = result_part(result, "task")
    return getattr(task, "_uuid", None) or (task.get_name() if hasattr(task, "get_name") else None)
