# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Check records and the JSON-lines history: normalize, redact, append, read, query.

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
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import datetime
import json
import math
import os
import re

from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import run_verdict

try:
    import fcntl
    HAS_FCNTL = True
except ImportError:  # pragma: no cover - not on POSIX
    HAS_FCNTL = False

SCHEMA_VERSION = 1
VERDICTS = ("pass", "fail", "error", "skipped", "flaky", "warn")
BAD_VERDICTS = ("fail", "error")
CORE_KEYS = ("kind", "host", "peer", "params", "metrics", "verdict", "cause", "fix", "evidence")
STAMP_KEYS = ("schema", "run_id", "time")
FILE_PREFIX = "history-"
FILE_SUFFIX = ".jsonl"
_FILE_RE = re.compile(r"^history-(\d{4})-(\d{2})\.jsonl$")
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


def normalize_record(record, index=0):
    """Validate one record and return (normalized copy, list of redacted paths).

    Raises RecordError with a message naming the record and the field.
    """
    where = "records[%d]" % index
    if not isinstance(record, dict):
        raise RecordError("%s: a record must be a dict, got %s" % (where, type(record).__name__))
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
    out = {
        "kind": record["kind"].strip(),
        "host": record["host"].strip(),
        "peer": peer.strip() if isinstance(peer, str) and peer.strip() else None,
        "verdict": verdict,
    }
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
    for key in ("cause", "fix"):
        value = record.get(key)
        if value is not None and not isinstance(value, str):
            raise RecordError("%s: '%s' must be a string or null, got %s" % (where, key, type(value).__name__))
        out[key] = value if value else None
    evidence = record.get("evidence")
    if evidence is None:
        evidence = []
    elif isinstance(evidence, str):
        evidence = [evidence]
    if not isinstance(evidence, (list, tuple)):
        raise RecordError("%s: 'evidence' must be a list of strings" % where)
    out["evidence"] = [item if isinstance(item, str) else json.dumps(plain(item, "evidence"), sort_keys=True)
                       for item in evidence]
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

_UTC = datetime.timezone.utc
_RELATIVE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|sec|m|min|h|hour|hours|d|day|days|w|week|weeks)\s*$", re.I)
_RELATIVE_UNITS = {"s": 1, "sec": 1, "m": 60, "min": 60, "h": 3600, "hour": 3600, "hours": 3600,
                   "d": 86400, "day": 86400, "days": 86400, "w": 604800, "week": 604800, "weeks": 604800}


def utc_now():
    return datetime.datetime.now(_UTC)


def format_time(when):
    """Canonical record time: '2026-01-31T23:59:59.123456Z' (fixed width, sorts as text)."""
    if when.tzinfo is None:
        when = when.replace(tzinfo=_UTC)
    return when.astimezone(_UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_time(value, now=None):
    """Parse an ISO 8601 time, a date, an epoch number or a relative age ('7d', '12h', '30m', '2w').

    Returns an aware UTC datetime, or None for None/''. Raises ValueError on junk.
    """
    if value is None or value == "":
        return None
    if isinstance(value, datetime.datetime):
        return value if value.tzinfo else value.replace(tzinfo=_UTC)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return datetime.datetime.fromtimestamp(value, _UTC)
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
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=_UTC)


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
                   interrupted_by=None):
    """The ``kind: summary`` line of a run (not yet stamped).

    hosts: {"ok": [...], "failed": [...], "unreachable": [...]}. counts:
    records by verdict; records: how many records the run wrote. The verdict
    is run_verdict.overall_verdict, the report's, with failed or unreachable
    hosts counting as a failure. When interrupted_by (a signal name such as
    ``SIGINT``, or why else the run ended early) says the run did not reach its end, the verdict
    is ``interrupted`` and ``partial_verdict`` is the verdict of what was
    recorded until then.
    """
    ok, failed, unreachable = (sorted(hosts.get(k) or []) for k in ("ok", "failed", "unreachable"))
    counts = dict(counts or {})
    verdict = run_verdict.overall_verdict(counts, failed_hosts=len(failed) + len(unreachable))
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
        "cause": None,
        "fix": None,
        "evidence": [],
        "stats": stats or {},
    }
    if interrupted_by:
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


# --------------------------------------------------------------------------
# Writing
# --------------------------------------------------------------------------

def history_file(directory, when):
    """Path of the month file that holds records stamped at ``when``."""
    return os.path.join(directory, "%s%04d-%02d%s" % (FILE_PREFIX, when.year, when.month, FILE_SUFFIX))


def dumps(record):
    """One record as one JSON line (no newline inside)."""
    return json.dumps(record, separators=(",", ":"), ensure_ascii=True, default=str)


def stamp(record, run_id, when=None):
    """Copy of a normalized record with schema, run_id and time first."""
    when = when or utc_now()
    out = {"schema": SCHEMA_VERSION, "run_id": run_id, "time": format_time(when)}
    out.update((k, v) for k, v in record.items() if k not in STAMP_KEYS)
    return out


def append_lines(path, lines, fsync=True):
    """Append whole lines to path: one write under an exclusive flock, then flush and fsync.

    If the file ends in a torn line (a writer died mid-line), a newline is
    written first so the new lines stay whole. Returns the bytes written.
    """
    if not lines:
        return 0
    payload = "".join(line.rstrip("\n") + "\n" for line in lines).encode("utf-8")
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o640)
    try:
        if HAS_FCNTL:
            fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            size = os.fstat(fd).st_size
            if size and _last_byte(path, size) != b"\n":
                payload = b"\n" + payload
            view = memoryview(payload)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            if fsync:
                os.fsync(fd)
        finally:
            if HAS_FCNTL:
                fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
    return len(payload)


def _last_byte(path, size):
    with open(path, "rb") as handle:
        handle.seek(size - 1)
        return handle.read(1)


def append_records(directory, records, run_id, when=None, fsync=True):
    """Stamp and append records to the month file of ``when`` (default now). Returns the stamped records."""
    if not records:
        return []
    when = when or utc_now()
    if not os.path.isdir(directory):
        os.makedirs(directory, 0o750)
    stamped = [stamp(record, run_id, when) for record in records]
    append_lines(history_file(directory, when.astimezone(_UTC)), [dumps(r) for r in stamped], fsync=fsync)
    return stamped


# --------------------------------------------------------------------------
# Reading
# --------------------------------------------------------------------------

class ReadReport(object):
    """What a reader skipped: torn last lines and corrupt lines, with file and line number."""

    def __init__(self):
        self.torn = []
        self.corrupt = []
        self.files = []
        self.lines = 0
        self.parsed = 0

    def as_dict(self):
        return {"files": list(self.files), "lines": self.lines, "parsed": self.parsed,
                "torn": list(self.torn), "corrupt": list(self.corrupt)}

    @property
    def problems(self):
        return self.torn + self.corrupt


def history_files(directory, since=None, until=None):
    """Month files in time order, only the months that can hold records in [since, until]."""
    if not directory or not os.path.isdir(directory):
        return []
    found = []
    for name in os.listdir(directory):
        match = _FILE_RE.match(name)
        if not match:
            continue
        year, month = int(match.group(1)), int(match.group(2))
        key = year * 12 + month
        if since is not None and key < since.year * 12 + since.month:
            continue
        if until is not None and key > until.year * 12 + until.month:
            continue
        found.append((key, os.path.join(directory, name)))
    return [path for _key, path in sorted(found)]


def iter_lines(path, report=None):
    """Yield (line_number, bytes) of the whole lines of a history file, streaming.

    A last line without its newline is a torn write: it is skipped and, when
    it is not valid JSON, reported in ``report.torn``. (A complete record that
    only lacks the newline is still yielded.)
    """
    with open(path, "rb") as handle:
        number = 0
        for raw in handle:
            number += 1
            if raw.endswith(b"\n"):
                yield number, raw
                continue
            # last line, no newline: whole only if it parses
            try:
                json.loads(raw)
            except ValueError:
                if report is not None:
                    report.torn.append({"file": path, "line": number, "bytes": len(raw),
                                        "reason": "torn last line (no newline, not valid JSON)"})
                continue
            yield number, raw


# Lines this module writes start with the stamp keys, so run id and time can be
# read without parsing the whole line (a fast path; anything else is parsed).
_HEAD = b'{"schema":'
_TIME_KEY = b'"time":"'


def raw_time(raw):
    """The canonical time of a line written by this module, as text, or None."""
    if not raw.startswith(_HEAD):
        return None
    index = raw.find(_TIME_KEY, 0, 320)
    if index < 0:
        return None
    value = raw[index + 8:index + 35]
    if len(value) == 27 and value.endswith(b"Z") and raw[index + 35:index + 36] == b'"':
        return value.decode("ascii")
    return None


class _Filter(object):
    """Necessary conditions on the raw bytes of a line (cheap) before it is parsed.

    groups: every group is a tuple of byte tokens, one of which must occur in the line.
    since_text / until_text: canonical time bounds checked on lines with a readable time.
    """

    def __init__(self, groups=(), since_text=None, until_text=None):
        self.groups = [tuple(g) for g in groups if g]
        self.since_text = since_text
        self.until_text = until_text

    def __call__(self, raw):
        for group in self.groups:
            for token in group:
                if token in raw:
                    break
            else:
                return False
        if self.since_text is not None or self.until_text is not None:
            text = raw_time(raw)
            if text is not None:
                if self.since_text is not None and text < self.since_text:
                    return False
                if self.until_text is not None and text > self.until_text:
                    return False
        return True


def record_line_problem(record):
    """Why a parsed history line is not a record (None when it is one).

    A record is a JSON object with a non-empty string ``kind`` and a ``host``:
    a non-empty string, or null on a ``kind: summary`` line.
    """
    if not isinstance(record, dict):
        return "not a JSON object"
    kind = record.get("kind")
    if not isinstance(kind, str) or not kind.strip():
        return "no 'kind' (a record needs a non-empty string kind)"
    host = record.get("host")
    if "host" not in record or (host is None and kind != "summary"):
        return "no 'host' (a record needs a host; only a summary line has host null)"
    if host is not None and (not isinstance(host, str) or not host.strip()):
        return "bad 'host' %r (a record needs a non-empty string host or, on a summary line, null)" % (host,)
    return None


def _parse_lines(path, report, raw_filter):
    decode = json.JSONDecoder().decode
    for number, raw in iter_lines(path, report):
        report.lines += 1
        if raw_filter is not None and not raw_filter(raw):
            continue
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            report.corrupt.append({"file": path, "line": number, "reason": "not UTF-8: %s" % exc})
            continue
        if not text.strip():
            continue
        report.parsed += 1
        try:
            record = decode(text)
        except ValueError as exc:
            report.corrupt.append({"file": path, "line": number, "reason": "not JSON: %s" % exc})
            continue
        problem = record_line_problem(record)
        if problem:
            report.corrupt.append({"file": path, "line": number, "reason": problem})
            continue
        yield record


def iter_records(directory, since=None, until=None, report=None, prefilter=None, newest_first=False,
                 stop=None):
    """Stream every record of the history, month file by month file.

    since/until (datetimes) only choose the month files; exact time checks are
    the caller's. prefilter: a callable on the raw bytes of a line, or a list
    of byte strings that must all occur, before the line is parsed.
    newest_first: read the newest month first (lines of a month stay in file
    order). stop: a callable checked after each month; when it returns True,
    one more (older) month is read, so a run that straddles the month boundary
    is complete, and reading ends.
    """
    if report is None:
        report = ReadReport()
    if prefilter is not None and not callable(prefilter):
        prefilter = _Filter([(token,) for token in prefilter])
    files = history_files(directory, since, until)
    if newest_first:
        files = files[::-1]
    stopping = False
    for path in files:
        report.files.append(path)
        yield from _parse_lines(path, report, prefilter)
        if stopping:
            return
        if stop is not None and stop():
            stopping = True


def _json_tokens(value):
    """Byte strings one of which occurs in a line holding a JSON string equal to value."""
    forms = {json.dumps(value, ensure_ascii=True).encode("utf-8"),
             json.dumps(value, ensure_ascii=False).encode("utf-8")}
    return tuple(sorted(forms))


def _as_list(value):
    if value is None or value == "":
        return None
    if isinstance(value, (list, tuple, set)):
        return [str(v) for v in value]
    return [str(value)]


def _time_text_bound(when):
    return format_time(when) if when is not None else None


def _record_time_ok(record, since_text, until_text):
    if since_text is None and until_text is None:
        return True
    text = record.get("time")
    if not isinstance(text, str):
        return False
    if not (len(text) == 27 and text.endswith("Z")):
        try:
            text = format_time(parse_time(text))
        except ValueError:
            return False
    if since_text is not None and text < since_text:
        return False
    if until_text is not None and text > until_text:
        return False
    return True


class Selection(object):
    """The filters of a query: a raw-line prefilter and an exact check of parsed records."""

    def __init__(self, kind=None, host=None, peer=None, run_id=None, verdict=None, since=None, until=None,
                 include_summary=None, where=None, now=None):
        now = now or utc_now()
        self.since, self.until = parse_time(since, now), parse_time(until, now)
        self.kinds, self.hosts, self.peers = _as_list(kind), _as_list(host), _as_list(peer)
        self.runs, self.verdicts = _as_list(run_id), _as_list(verdict)
        if include_summary is None:
            include_summary = bool(self.kinds and "summary" in self.kinds)
        self.include_summary = include_summary
        self.where = where
        self.since_text, self.until_text = _time_text_bound(self.since), _time_text_bound(self.until)
        self.peer_null = bool(self.peers) and any(p in ("null", "-", "None") for p in self.peers)
        groups = []
        for values in (self.kinds, self.hosts, self.runs, self.verdicts):
            if values:
                groups.append(tuple(t for v in values for t in _json_tokens(v)))
        if self.peers:
            group = tuple(t for v in self.peers if v not in ("null", "-", "None") for t in _json_tokens(v))
            if self.peer_null:
                group += (b"null",)
            groups.append(group)
        self.prefilter = _Filter(groups, self.since_text, self.until_text)

    def __call__(self, record):
        rkind = record.get("kind")
        if self.kinds is not None and rkind not in self.kinds:
            return False
        if not self.include_summary and rkind == "summary":
            return False
        if self.hosts is not None and record.get("host") not in self.hosts:
            return False
        if self.peers is not None:
            rpeer = record.get("peer")
            if not ((rpeer is None and self.peer_null) or (rpeer is not None and rpeer in self.peers)):
                return False
        if self.runs is not None and str(record.get("run_id")) not in self.runs:
            return False
        if self.verdicts is not None and record.get("verdict") not in self.verdicts:
            return False
        if not _record_time_ok(record, self.since_text, self.until_text):
            return False
        return self.where is None or self.where(record)


def select(directory, selection, report=None, newest_first=False, stop=None):
    """Stream the records that match a Selection."""
    for record in iter_records(directory, selection.since, selection.until, report, selection.prefilter,
                               newest_first=newest_first, stop=stop):
        if selection(record):
            yield record


def query(directory, kind=None, host=None, peer=None, run_id=None, verdict=None, since=None, until=None,
          last_runs=None, include_summary=None, jmespath_query=None, limit=None, report=None, now=None,
          where=None):
    """Query the history, streaming; returns a list of records (or the JMESPath result).

    kind/host/peer/run_id/verdict: a value or a list of values (any of them).
    peer: the string 'null' (or '-') matches records without a peer.
    since/until: ISO 8601, epoch seconds or an age like '7d'. last_runs: only
    the N most recent runs (by their first record's time) among matching records.
    include_summary: keep 'summary' records (default: only when kind asks for them).
    where: optional predicate called with each record.
    limit: keep at most the last N records after filtering.
    jmespath_query: applied to the resulting list (needs the jmespath package).
    report: a ReadReport that receives torn/corrupt lines.
    """
    selection = Selection(kind, host, peer, run_id, verdict, since, until, include_summary, where, now)
    if last_runs:
        result = _last_runs(directory, selection, int(last_runs), report)
    elif limit:
        from collections import deque
        result = list(deque(select(directory, selection, report), maxlen=int(limit)))
    else:
        result = list(select(directory, selection, report))
    if last_runs and limit:
        result = result[-int(limit):]
    if jmespath_query:
        return jmespath_search(jmespath_query, result)
    return result


def _last_runs(directory, selection, count, report):
    """Records of the ``count`` runs whose first record is newest, oldest first.

    Reads the newest months first and stops once ``count`` runs are found
    (plus one older month for runs that straddle a month boundary).
    """
    by_run, first_time = {}, {}

    def enough():
        return len(by_run) >= count

    for record in select(directory, selection, report, newest_first=True, stop=enough):
        run = record.get("run_id")
        by_run.setdefault(run, []).append(record)
        when = record.get("time") or ""
        if run not in first_time or when < first_time[run]:
            first_time[run] = when
    keep = sorted(first_time, key=lambda r: (first_time[r], str(r)))[-count:]
    out = []
    for run in keep:
        out.extend(sorted(by_run[run], key=lambda r: r.get("time") or ""))
    return out


def jmespath_search(expression, data):
    """Apply a JMESPath expression; clear error when jmespath is missing."""
    try:
        import jmespath
    except ImportError:
        raise ValueError("a JMESPath query needs the Python package 'jmespath' on the controller")
    try:
        return jmespath.search(expression, data)
    except jmespath.exceptions.JMESPathError as exc:
        raise ValueError("bad JMESPath query %r: %s" % (expression, exc))


_RUN_KEY = b'"run_id":"'
_SUMMARY_TOKEN = b'"kind":"summary"'
_KIND_AFTER_TIME = b',"kind":"'
_HOST_AFTER_KIND = b',"host":"'
RUN_COMPLETE, RUN_INTERRUPTED, RUN_INCOMPLETE = "complete", "interrupted", "incomplete"


def _raw_run(raw):
    """(run_id, time) of a record line as this module writes it, without parsing it; else None.

    Such a line starts with the stamp keys, then a non-empty ``kind`` and a
    non-empty string ``host``, none of them with escapes; any other line is
    parsed and checked in full.
    """
    if not raw.startswith(_HEAD):
        return None
    run_at = raw.find(_RUN_KEY, 0, 64)
    if run_at < 0:
        return None
    run_at += len(_RUN_KEY)
    run_end = raw.find(b'"', run_at)
    time_at = raw.find(_TIME_KEY, run_end, 320) if run_end > run_at else -1
    if time_at < 0:
        return None
    time_at += len(_TIME_KEY)
    if raw[time_at + 26:time_at + 28] != b'Z"':           # the canonical 27-character time
        return None
    kind_at = time_at + 28 + len(_KIND_AFTER_TIME)
    if not raw.startswith(_KIND_AFTER_TIME, time_at + 28):
        return None
    kind_end = raw.find(b'"', kind_at)
    if kind_end <= kind_at or not raw.startswith(_HOST_AFTER_KIND, kind_end + 1):
        return None
    host_at = kind_end + 1 + len(_HOST_AFTER_KIND)
    host_end = raw.find(b'"', host_at)
    if host_end <= host_at or b"\\" in raw[run_at:host_end]:
        return None
    try:
        return raw[run_at:run_end].decode("utf-8"), raw[time_at:time_at + 27].decode("ascii")
    except UnicodeDecodeError:
        return None


def run_status(summary):
    """``complete`` (a summary line ended the run), ``interrupted`` (a signal stopped it: its summary
    says so) or ``incomplete`` (records without a summary: the controller was killed outright, the
    run is still going, or the summary line was turned off)."""
    if summary is None:
        return RUN_INCOMPLETE
    if summary.get("interrupted") or summary.get("verdict") == run_verdict.INTERRUPTED:
        return RUN_INTERRUPTED
    return RUN_COMPLETE


def list_runs(directory, since=None, until=None, report=None, now=None):
    """One entry per run, in time order: run_id, first/last time, record count, summary (if written)
    and status (see run_status). Bad lines are skipped and reported, as by query()."""
    now = now or utc_now()
    since_dt, until_dt = parse_time(since, now), parse_time(until, now)
    since_text, until_text = _time_text_bound(since_dt), _time_text_bound(until_dt)
    if report is None:
        report = ReadReport()
    runs = {}

    def account(run, when, summary):
        if (since_text and when < since_text) or (until_text and when > until_text):
            return
        entry = runs.get(run)
        if entry is None:
            entry = runs[run] = {"run_id": run, "first": when, "last": when, "records": 0, "summary": None}
        entry["first"] = min(entry["first"], when)
        entry["last"] = max(entry["last"], when)
        if summary is not None:
            entry["summary"] = summary
        else:
            entry["records"] += 1

    for path in history_files(directory, since_dt, until_dt):
        report.files.append(path)
        for number, raw in iter_lines(path, report):
            report.lines += 1
            fast = _raw_run(raw) if _SUMMARY_TOKEN not in raw else None
            if fast is not None:
                account(fast[0], fast[1], None)
                continue
            if not raw.strip():
                continue
            report.parsed += 1
            try:
                record = json.loads(raw)
            except ValueError as exc:
                report.corrupt.append({"file": path, "line": number, "reason": "not JSON: %s" % exc})
                continue
            problem = record_line_problem(record)
            if problem:
                report.corrupt.append({"file": path, "line": number, "reason": problem})
                continue
            when = record.get("time") or ""
            account(record.get("run_id"), when, record if record.get("kind") == "summary" else None)
    for entry in runs.values():
        entry["status"] = run_status(entry["summary"])
    return sorted(runs.values(), key=lambda e: (e["first"] or "", str(e["run_id"])))


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
