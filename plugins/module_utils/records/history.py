# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Check records and the JSON-lines history: the public API (normalize, redact, append, read, query, runs).

A record (docs/DEVELOPING.md, "Results contract") is a dict with ``kind``,
``host``, ``peer``, ``params``, ``metrics``, ``verdict``, ``cause``, ``fix``,
``evidence``. The history callback adds ``schema``, ``run_id`` and ``time``
and appends one JSON line per record to ``history-YYYY-MM.jsonl`` in the
history directory.

Writers append whole lines with one ``write`` under an exclusive
``fcntl.flock``, then flush and fsync. Readers stream the files line by
line, skip a torn last line (a writer that died mid-line) and report it,
and skip (and report) lines that are not records: not JSON, not an object, or
without ``kind`` / ``host``.

A run ends with one ``kind: summary`` line; a run stopped by a signal ends with
a summary whose verdict is ``interrupted``; a run with records and no summary
(a controller killed outright, or a run still going) is ``incomplete`` in
:func:`list_runs`.

The work is done by one module per concern: history_records.py (the record
contract, redaction, times, run ids, the history directory), history_write.py
(the appending writer: whole lines or none), history_read.py (readers and
queries), history_runs.py (runs and their status), history_summary.py (how a
run ended: the failed task that stopped it, the hosts to blame) and
history_state.py (what the callback wrote in this run and what it could not). This module is the documented API
(docs/history.md): those names, and :class:`History` for services.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.clusterops.commcheck.plugins.module_utils.records.history_records import (  # noqa: F401 (the API)
    BAD_VERDICTS,
    CORE_KEYS,
    DEFAULT_HISTORY_DIR,
    FILE_PREFIX,
    FILE_RE,
    FILE_SUFFIX,
    REDACTED,
    RUN_ID_PATTERN,
    RecordError,
    SCHEMA_VERSION,
    STAMP_KEYS,
    UTC,
    VERDICTS,
    check_history_dir,
    format_time,
    is_secret_key,
    new_run_id,
    normalize_record,
    normalize_records,
    parse_time,
    plain,
    plain_run_id,
    redact,
    redact_text,
    resolve_run_id,
    run_id_from_env,
    summary_record,
    utc_now,
)
from ansible_collections.clusterops.commcheck.plugins.module_utils.records.history_write import (  # noqa: F401 (the API)
    AppendError,
    append_lines,
    append_records,
    dumps,
    history_file,
    stamp,
)
from ansible_collections.clusterops.commcheck.plugins.module_utils.records.history_read import (  # noqa: F401 (the API)
    LINE_HEAD,
    LinesOfRun,
    ReadReport,
    Selection,
    TIME_KEY,
    history_files,
    iter_lines,
    iter_records,
    jmespath_search,
    query,
    raw_time,
    record_line_problem,
    select,
    time_text_bound,
)
from ansible_collections.clusterops.commcheck.plugins.module_utils.records.history_runs import (  # noqa: F401 (the API)
    list_runs,
    run_status,
)

__all__ = [
    "AppendError",
    "BAD_VERDICTS",
    "CORE_KEYS",
    "DEFAULT_HISTORY_DIR",
    "FILE_PREFIX",
    "FILE_RE",
    "FILE_SUFFIX",
    "History",
    "LINE_HEAD",
    "REDACTED",
    "RUN_ID_PATTERN",
    "ReadReport",
    "RecordError",
    "SCHEMA_VERSION",
    "STAMP_KEYS",
    "Selection",
    "TIME_KEY",
    "UTC",
    "VERDICTS",
    "append_lines",
    "append_records",
    "check_history_dir",
    "dumps",
    "format_time",
    "history_file",
    "history_files",
    "is_secret_key",
    "iter_lines",
    "iter_records",
    "jmespath_search",
    "LinesOfRun",
    "list_runs",
    "new_run_id",
    "normalize_record",
    "normalize_records",
    "parse_time",
    "plain",
    "plain_run_id",
    "query",
    "raw_time",
    "record_line_problem",
    "redact",
    "redact_text",
    "resolve_run_id",
    "run_id_from_env",
    "run_status",
    "select",
    "stamp",
    "summary_record",
    "time_text_bound",
    "utc_now",
]


class History(object):
    """Small API for services: ``History(dir).query(kind='rdma_bw', since='7d')``."""

    def __init__(self, directory):
        self.directory = directory
        self.report = ReadReport()

    def append(self, records, run_id=None, when=None):
        normalized, _removed = normalize_records(records)
        return append_records(self.directory, normalized, run_id or run_id_from_env() or new_run_id(), when)

    def query(self, **filters):
        filters.setdefault("report", self.report)
        return query(self.directory, **filters)

    def runs(self, **filters):
        filters.setdefault("report", self.report)
        return list_runs(self.directory, **filters)

    def last_run(self, kind=None):
        runs = [r for r in self.runs() if r["records"] or kind == "summary"]
        return runs[-1] if runs else None
