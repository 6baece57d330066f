# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a history line is: the record contract, its redaction, times, run ids and the history directory.

A record (docs/DEVELOPING.md, "Results contract") is a dict with ``kind``,
``host``, ``peer``, ``params``, ``metrics``, ``verdict``, ``cause``, ``fix``,
``evidence``. The history callback adds ``schema``, ``run_id`` and ``time``.
A run ends with one ``kind: summary`` line (summary_record()).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import datetime
import json
import math
import os
import re

from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import run_verdict
from ansible_collections.clusterops.commcheck.plugins.module_utils.records.history_summary import (
    failure_cause,
    kept_failure,
)


SCHEMA_VERSION = 1
VERDICTS = ("pass", "fail", "error", "skipped", "flaky", "warn")
BAD_VERDICTS = ("fail", "error")
CORE_KEYS = ("kind", "host", "peer", "params", "metrics", "verdict", "cause", "fix", "evidence")
STAMP_KEYS = ("schema", "run_id", "time")
FILE_PREFIX = "history-"
FILE_SUFFIX = ".jsonl"
FILE_RE = re.compile(r"^history-(\d{4})-(\d{2})\.jsonl$")
REDACTED = "********"

# A key is secret when one of its words is one of these (``api_key``,
# ``ssh-key``, ``keyfile``) or when it contains one of the _SECRET_PARTS
# (``db_password``, ``access_token``, ``kubeconfig_path``). ``pkey_index``
# (an InfiniBand partition key index) is not a secret.
_SECRET_WORDS = frozenset(("key", "keys", "keyfile", "apikey", "passwd", "pwd", "creds"))
_SECRET_PARTS = ("password", "passphrase", "token", "secret", "kubeconfig", "credential",
                 "private_key", "privatekey", "api_key", "authorization", "cookie")
# Values: "password=xyz", "--token xyz", "Authorization: Bearer xyz", "https://user:pw@host".
_SECRET_VALUE_RES = (
    re.compile(r"(?i)((?:password|passwd|pwd|token|secret|api[_-]?key|access[_-]?key|private[_-]?key)"
               r"[\"']?\s*[=:]\s*[\"']?)([^\s\"',;&]+)"),
    re.compile(r"(?i)(--(?:password|passwd|token|secret|api-key|apikey)(?:=|\s+))(\S+)"),
    re.compile(r"(?i)(authorization:\s*(?:bearer|basic|token)?\s*)(\S+)"),
    re.compile(r"(?i)(\b[a-z][a-z0-9+.-]*://[^/\s:@]+:)([^@\s/]+)(@)"),
)


class RecordError(ValueError):
    """A record that does not follow the results contract."""


def is_secret_key(name):
    """True when a dict key looks like it holds a secret."""
    text = str(name).lower()
    if any(part in text for part in _SECRET_PARTS):
        return True
    words = [w for w in re.split(r"[^a-z0-9]+", re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", str(name)).lower()) if w]
    return any(w in _SECRET_WORDS for w in words)


def redact_text(text):
    """Mask secret-looking values inside free text (command lines, evidence)."""
    if not isinstance(text, str):
        return text, 0
    count = 0
    for pattern in _SECRET_VALUE_RES:
        def _mask(match):
            groups = match.groups()
            return groups[0] + REDACTED + (groups[2] if len(groups) > 2 else "")
        text, n = pattern.subn(_mask, text)
        count += n
    return text, count


def redact(value, path="", removed=None):
    """Return a copy of value without secret-looking keys and with secret values masked.

    removed (list) collects the dotted paths that were dropped or masked.
    """
    if removed is None:
        removed = []
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            sub = "%s.%s" % (path, key) if path else str(key)
            if is_secret_key(key):
                removed.append(sub)
                continue
            out[str(key)] = redact(item, sub, removed)
        return out
    if isinstance(value, (list, tuple)):
        return [redact(item, "%s[%d]" % (path, i), removed) for i, item in enumerate(value)]
    if isinstance(value, str):
        masked, count = redact_text(value)
        if count:
            removed.append(path)
        return masked
    return value


def plain(value, path):
    """Check that value is JSON data (dict/list/str/number/bool/None)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        if isinstance(value, float) and math.isnan(value):
            return None
        return value
    if isinstance(value, dict):
        return dict((str(k), plain(v, "%s.%s" % (path, k))) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return [plain(v, "%s[%d]" % (path, i)) for i, v in enumerate(value)]
    # AnsibleUnsafeText and friends are str subclasses and pass above; anything else is text.
    return str(value)


def _identity(record, where):
    """kind, host, peer and verdict, checked; and the record's name for later messages."""
    for key in ("kind", "host"):
        value = record.get(key)
        if not isinstance(value, str) or not value.strip():
            raise RecordError("%s: '%s' is required and must be a non-empty string" % (where, key))
    where = "%s (kind=%s host=%s)" % (where, record["kind"], record["host"])
    verdict = record.get("verdict")
    if verdict not in VERDICTS:
        raise RecordError("%s: 'verdict' must be one of %s, got %r" % (where, "|".join(VERDICTS), verdict))
    peer = record.get("peer")
    if peer is not None and not isinstance(peer, str):
        raise RecordError("%s: 'peer' must be a string or null, got %s" % (where, type(peer).__name__))
    return where, {
        "kind": record["kind"].strip(),
        "host": record["host"].strip(),
        "peer": peer.strip() if isinstance(peer, str) and peer.strip() else None,
        "verdict": verdict,
    }


def _params_and_metrics(record, where, out):
    for key in ("params", "metrics"):
        value = record.get(key)
        if value is None:
            value = {}
        if not isinstance(value, dict):
            raise RecordError("%s: '%s' must be a dict, got %s" % (where, key, type(value).__name__))
        out[key] = plain(value, key)
    for key, value in out["metrics"].items():
        if value is not None and not isinstance(value, (int, float, str, bool, list, dict)):
            raise RecordError("%s: metrics.%s has an unsupported type" % (where, key))


def _cause_and_fix(record, where, out):
    for key in ("cause", "fix"):
        value = record.get(key)
        if value is not None and not isinstance(value, str):
            raise RecordError("%s: '%s' must be a string or null, got %s" % (where, key, type(value).__name__))
        out[key] = value if value else None


def _evidence(record, where):
    """Evidence as a list of strings (a single string is one item; other items as JSON)."""
    evidence = record.get("evidence")
    if evidence is None:
        evidence = []
    elif isinstance(evidence, str):
        evidence = [evidence]
    if not isinstance(evidence, (list, tuple)):
        raise RecordError("%s: 'evidence' must be a list of strings" % where)
    return [item if isinstance(item, str) else json.dumps(plain(item, "evidence"), sort_keys=True)
            for item in evidence]


def normalize_record(record, index=0):
    """Validate one record and return (normalized copy, list of redacted paths).

    Raises RecordError with a message naming the record and the field.
    """
    where = "records[%d]" % index
    if not isinstance(record, dict):
        raise RecordError("%s: a record must be a dict, got %s" % (where, type(record).__name__))
    where, out = _identity(record, where)
    _params_and_metrics(record, where, out)
    _cause_and_fix(record, where, out)
    out["evidence"] = _evidence(record, where)
    for key, value in record.items():
        if key in out or key in STAMP_KEYS:
            continue
        out[str(key)] = plain(value, str(key))
    removed = []
    out = redact(out, "", removed)
    return out, removed


def normalize_records(records):
    """Normalize a list of records; returns (records, redacted paths). Raises RecordError."""
    if records is None:
        return [], []
    if not isinstance(records, (list, tuple)):
        raise RecordError("records must be a list of dicts, got %s" % type(records).__name__)
    result, removed = [], []
    for index, record in enumerate(records):
        item, paths = normalize_record(record, index)
        result.append(item)
        removed.extend("records[%d].%s" % (index, p) for p in paths)
    return result, removed


# --------------------------------------------------------------------------
# Time and run ids
# --------------------------------------------------------------------------

UTC = datetime.timezone.utc
_RELATIVE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|sec|m|min|h|hour|hours|d|day|days|w|week|weeks)\s*$", re.I)
_RELATIVE_UNITS = {"s": 1, "sec": 1, "m": 60, "min": 60, "h": 3600, "hour": 3600, "hours": 3600,
                   "d": 86400, "day": 86400, "days": 86400, "w": 604800, "week": 604800, "weeks": 604800}


def utc_now():
    return datetime.datetime.now(UTC)


def format_time(when):
    """Canonical record time: '2026-01-31T23:59:59.123456Z' (fixed width, sorts as text)."""
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_time(value, now=None):
    """Parse an ISO 8601 time, a date, an epoch number or a relative age ('7d', '12h', '30m', '2w').

    Returns an aware UTC datetime, or None for None/''. Raises ValueError on junk.
    """
    if value is None or value == "":
        return None
    if isinstance(value, datetime.datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return datetime.datetime.fromtimestamp(value, UTC)
    text = str(value).strip()
    match = _RELATIVE_RE.match(text)
    if match:
        seconds = float(match.group(1)) * _RELATIVE_UNITS[match.group(2).lower()]
        return (now or utc_now()) - datetime.timedelta(seconds=seconds)
    if text.lower() == "now":
        return now or utc_now()
    iso = text[:-1] + "+00:00" if text.endswith(("Z", "z")) else text
    try:
        parsed = datetime.datetime.fromisoformat(iso)
    except ValueError:
        raise ValueError("not a time: %r (use ISO 8601, a date, epoch seconds or an age like 7d, 12h, 30m)" % value)
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def new_run_id(now=None):
    """A fresh run id: '20260131T235959Z-1a2b3c'."""
    now = now or utc_now()
    return "%s-%s" % (now.strftime("%Y%m%dT%H%M%SZ"), os.urandom(3).hex())


def run_id_from_env(environ=None):
    """The run id set from outside: COMMCHECK_RUN_ID, else AWX's JOB_ID as 'awx-<id>', else None."""
    environ = os.environ if environ is None else environ
    value = (environ.get("COMMCHECK_RUN_ID") or "").strip()
    if value:
        return value
    job = (environ.get("JOB_ID") or environ.get("AWX_JOB_ID") or "").strip()
    if job:
        return "awx-%s" % job
    return None


# What a run id may be: it names history lines, report directories and the slices' meeting directory.
RUN_ID_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:+-]{0,127}$")


def plain_run_id(value):
    """A run id given as a variable or a setting, stripped; None for an empty value or an untemplated one."""
    if isinstance(value, str) and value.strip() and "{{" not in value:
        return value.strip()
    return None


def resolve_run_id(given=(), environ=None, now=None, slices=1, workflow_job_id=None):
    """The id of a run, decided once: the first plain id in ``given`` (the caller's variable, then a setting),
    else the caller's COMMCHECK_RUN_ID or AWX's JOB_ID (run_id_from_env), else a new id.

    A run split into ``slices`` > 1 (one controller per slice) needs one id that
    every slice knows before it starts: the given one, COMMCHECK_RUN_ID, or the
    id of the AWX workflow job that runs the slices ('awx-wf-<id>'); each
    slice's own JOB_ID or a new id would split the run, so ValueError then.
    """
    for value in given:
        run_id = plain_run_id(value)
        if run_id:
            return run_id
    if slices > 1:
        environ = os.environ if environ is None else environ
        run_id = plain_run_id(environ.get("COMMCHECK_RUN_ID"))
        if not run_id and plain_run_id(str(workflow_job_id or "")):
            run_id = "awx-wf-%s" % str(workflow_job_id).strip()
        if not run_id:
            raise ValueError("a run split into %d slices needs one run id for all of them: set commcheck_run_id "
                             "(or COMMCHECK_RUN_ID) to the same new value in every slice, or run them as AWX job "
                             "slices (the workflow job id is taken)" % slices)
        return run_id
    return run_id_from_env(environ) or new_run_id(now)


# --------------------------------------------------------------------------
# The history directory
# --------------------------------------------------------------------------

DEFAULT_HISTORY_DIR = "~/.ansible/commcheck/history"
_BAD_PATH_CHARS = ("\x00", "\n", "\r")


def check_history_dir(value, source="history_dir"):
    """The history directory as a normalised absolute path.

    ``~`` and ``$VARIABLES`` are expanded. Raises ValueError, naming
    ``source``, for a value that is empty (an empty COMMCHECK_HISTORY_DIR is
    never taken as the current directory), holds a NUL or a line break, has a
    ``..`` component, or is relative (a relative path would depend on where
    the controller was started, so it is refused).
    """
    if value is None:
        raise ValueError("%s is not set" % source)
    if not isinstance(value, str):
        raise ValueError("%s must be a path, got %s" % (source, type(value).__name__))
    if not value.strip():
        raise ValueError("%s is empty: set it to an absolute directory, or unset it for the default %s"
                         % (source, DEFAULT_HISTORY_DIR))
    expanded = os.path.expanduser(os.path.expandvars(value))
    if any(char in value or char in expanded for char in _BAD_PATH_CHARS):
        raise ValueError("%s contains a NUL byte or a line break: %r" % (source, value))
    if ".." in expanded.split(os.sep):
        raise ValueError("%s must not have a '..' component: %r" % (source, value))
    if not os.path.isabs(expanded):
        raise ValueError("%s must be an absolute path (or start with ~/), got %r" % (source, value))
    return os.path.normpath(expanded)


# --------------------------------------------------------------------------
# The summary line of a run
# --------------------------------------------------------------------------

def summary_record(playbook, controller, hosts, counts, records, check_mode=False, stats=None,
                   interrupted_by=None, failed_task=None):
    """The ``kind: summary`` line of a run (not yet stamped).

    hosts: {"ok": [...], "failed": [...], "unreachable": [...]}. counts:
    the run's judgements by verdict (retest re-measurements left out: evidence, see
    run_verdict.is_remeasurement); records: how many records the run wrote. The verdict
    is run_verdict.summary_verdict: the report's, with failed or unreachable
    hosts counting as a failure, and ``error`` (with its cause) for a run
    that checked nothing. When interrupted_by (a signal name such as
    ``SIGINT``, or why else the run ended early) says the run did not reach its end, the verdict
    is ``interrupted`` and ``partial_verdict`` is the verdict of what was
    recorded until then. ``failed_task`` (history_summary.task_failure) is the
    failed task that stopped the run: the verdict is ``interrupted`` too, its
    ``cause`` names the task and its message, and ``failed_task`` keeps it.
    """
    ok, failed, unreachable = (sorted(hosts.get(k) or []) for k in ("ok", "failed", "unreachable"))
    counts = dict(counts or {})
    verdict, cause = run_verdict.summary_verdict(counts, len(ok) + len(failed) + len(unreachable),
                                                 failed_hosts=len(failed) + len(unreachable))
    summary = {
        "kind": "summary",
        "host": None,
        "peer": None,
        "playbook": playbook,
        "controller": controller,
        "hosts": {"ok": ok, "failed": failed, "unreachable": unreachable},
        "counts": counts,
        "params": {"playbook": playbook, "check_mode": bool(check_mode)},
        "metrics": {"records": records, "hosts": len(ok) + len(failed) + len(unreachable), "hosts_ok": len(ok),
                    "hosts_failed": len(failed), "hosts_unreachable": len(unreachable)},
        "verdict": verdict,
        "interrupted": bool(interrupted_by),
        "cause": cause,
        "fix": None,
        "evidence": [],
        "stats": stats or {},
    }
    if failed_task:
        # refused at a gate before any check recorded anything: it stopped early and checked nothing (an error)
        summary.update(
            verdict=run_verdict.INTERRUPTED if records else run_verdict.NOTHING_CHECKED,
            interrupted=True,
            signal=None,
            failed_task=kept_failure(failed_task),
            cause=failure_cause(failed_task, records),
            fix="Fix what the failed task says, then run the check again%s." % (" to completion" if records else ""))
        if records:
            summary["partial_verdict"] = verdict
    elif interrupted_by:
        by_signal = str(interrupted_by).startswith("SIG")
        summary.update(
            verdict=run_verdict.INTERRUPTED,
            partial_verdict=verdict,
            signal=interrupted_by if by_signal else None,
            cause="%s before the end of the playbook: it wrote %d record(s), the checks after them did not run" % (
                "the run was stopped by %s" % interrupted_by if by_signal else "the run ended (%s)" % interrupted_by,
                records),
            fix="Run the check again to completion.")
    return summary
