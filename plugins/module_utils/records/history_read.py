# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Reading the history: stream the month files, skip torn and corrupt lines (and report them), query.

Only the months a time range can touch are opened, and lines whose raw bytes
cannot match a query are skipped before they are parsed.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json
import os
import re

from ansible_collections.clusterops.commcheck.plugins.module_utils.records.history_records import (
    FILE_RE,
    format_time,
    parse_time,
    utc_now,
)


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
        """The torn and corrupt lines, each line once: one report can take several reads of the same history (the
        report reads its run, then the baseline's runs, and both pass over a bad line)."""
        seen, out = set(), []
        for problem in self.torn + self.corrupt:
            where = (problem["file"], problem["line"])
            if where not in seen:
                seen.add(where)
                out.append(problem)
        return out


class LinesOfRun(object):
    """The lines one read found to hold whole records of one run: {file: {line number: hash of its bytes}}.

    A read that notes them (``note=``) and a later read of the same history
    that leaves that run out (``skip=``: the report's baseline, which never
    uses the run it judges) passes over them without decoding them again: a
    quarter of a 128-host mesh's history. A line is passed over only when
    its bytes hash as they did: a file rewritten between the two reads is
    read as it is now.
    """

    def __init__(self, run_id):
        self.run_id = run_id
        self.by_file = {}


def history_files(directory, since=None, until=None):
    """Month files in time order, only the months that can hold records in [since, until]."""
    if not directory or not os.path.isdir(directory):
        return []
    found = []
    for name in os.listdir(directory):
        match = FILE_RE.match(name)
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
            if _whole_last_line(path, number, raw, report):
                yield number, raw


# Lines this module writes start with the stamp keys, so run id and time can be
# read without parsing the whole line (a fast path; anything else is parsed).
LINE_HEAD = b'{"schema":'
TIME_KEY = b'"time":"'


def raw_time(raw):
    """The canonical time of a line written by this module, as text, or None."""
    if not raw.startswith(LINE_HEAD):
        return None
    index = raw.find(TIME_KEY, 0, 320)
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
        # the bounds as bytes, compared with a line's time as it is: the UTF-8 bytes of texts order as the texts
        # do, and a time raw_time reads is ASCII
        self._since = None if since_text is None else since_text.encode("utf-8")
        self._until = None if until_text is None else until_text.encode("utf-8")
        self._timed = since_text is not None or until_text is not None
        # a group of several tokens as one search for any of them: one pass over the line instead of one per token
        self._checks = [(group[0], None) if len(group) == 1
                        else (None, re.compile(b"|".join(re.escape(token) for token in group)).search)
                        for group in self.groups]

    def __call__(self, raw):
        # the time first: reading a run's baseline, the run's own lines fail it, and it looks at one place only
        # (raw_time's reading, without decoding the time of each of half a million lines)
        if self._timed and raw.startswith(LINE_HEAD):
            index = raw.find(TIME_KEY, 0, 320)
            if index >= 0:
                value = raw[index + 8:index + 35]
                if len(value) == 27 and value.endswith(b"Z") and raw[index + 35:index + 36] == b'"':
                    if not value.isascii():
                        value.decode("ascii")   # raw_time's error, as it raised it
                    if self._since is not None and value < self._since:
                        return False
                    if self._until is not None and value > self._until:
                        return False
        for token, search in self._checks:
            if search is None:
                if token not in raw:
                    return False
            elif search(raw) is None:
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


def _parse_lines(path, report, raw_filter, note=None, skip=None):
    """The records of one history file: ``iter_lines`` and ``load_line`` of each line in one loop (four
    generators and two calls less for each of half a million lines), with what they report.

    note: a LinesOfRun that receives the numbers of the lines whose records are of its run; skip: a LinesOfRun
    whose lines of this file are passed over unread (counted in ``report.lines``, not in ``parsed``)."""
    decode = _line_decoder()
    corrupt = report.corrupt
    with open(path, "rb") as handle:
        noted = note.by_file.setdefault(path, {}) if note is not None else None
        noted_run = note.run_id if note is not None else None
        skipped = (skip.by_file.get(path) or None) if skip is not None else None
        number = 0
        for raw in handle:
            number += 1
            if not raw.endswith(b"\n") and not _whole_last_line(path, number, raw, report):
                continue
            report.lines += 1
            if skipped is not None and skipped.get(number) == hash(raw):
                continue
            if raw_filter is not None and not raw_filter(raw):
                continue
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                corrupt.append({"file": path, "line": number, "reason": "not UTF-8: %s" % exc})
                continue
            if not text or text.isspace():   # what text.strip() tells, without a copy of the line
                continue
            report.parsed += 1
            try:
                record = decode(text)
            except ValueError as exc:
                corrupt.append({"file": path, "line": number, "reason": "not JSON: %s" % exc})
                continue
            if record.__class__ is dict:
                kind, host = record.get("kind"), record.get("host")
                # a record as every writer writes one: record_line_problem would find nothing
                if kind.__class__ is str and host.__class__ is str and kind and host and not kind.isspace() \
                        and not host.isspace():
                    if noted is not None and record.get("run_id") == noted_run:
                        noted[number] = hash(raw)
                    yield record
                    continue
            problem = record_line_problem(record)
            if problem:
                corrupt.append({"file": path, "line": number, "reason": problem})
                continue
            if noted is not None and record.get("run_id") == noted_run:
                noted[number] = hash(raw)
            yield record


def _whole_last_line(path, number, raw, report):
    """iter_lines on a last line without its newline: whole when it parses, else a torn write it reports."""
    try:
        json.loads(raw)
    except ValueError:
        if report is not None:
            report.torn.append({"file": path, "line": number, "bytes": len(raw),
                                "reason": "torn last line (no newline, not valid JSON)"})
        return False
    return True


def _line_decoder():
    """JSONDecoder().decode of a history line: its scanner called directly when the value starts the line and
    only the newline follows it (every line this module writes); any other text, a corrupt one included, goes
    through decode itself, so the value and the error are decode's (without its wrapper's whitespace matches
    and calls for each of half a million lines)."""
    decoder = json.JSONDecoder()
    scan, loads = decoder.scan_once, decoder.decode

    def decode(text):
        try:
            value, end = scan(text, 0)
        except (StopIteration, ValueError):
            return loads(text)
        if end == len(text) or text[end:] == "\n":
            return value
        return loads(text)
    return decode


def load_line(path, number, text, report, loads=json.loads):
    """The record of one non-blank line, or None once the report says why the line is not one."""
    report.parsed += 1
    try:
        record = loads(text)
    except ValueError as exc:
        report.corrupt.append({"file": path, "line": number, "reason": "not JSON: %s" % exc})
        return None
    problem = record_line_problem(record)
    if problem:
        report.corrupt.append({"file": path, "line": number, "reason": problem})
        return None
    return record


def iter_records(directory, since=None, until=None, report=None, prefilter=None, newest_first=False,
                 stop=None, note=None, skip=None):
    """Stream every record of the history, month file by month file.

    since/until (datetimes) only choose the month files; exact time checks are
    the caller's. prefilter: a callable on the raw bytes of a line, or a list
    of byte strings that must all occur, before the line is parsed.
    newest_first: read the newest month first (lines of a month stay in file
    order). stop: a callable checked after each month; when it returns True,
    one more (older) month is read, so a run that straddles the month boundary
    is complete, and reading ends. note/skip: LinesOfRun (``_parse_lines``);
    a caller that skips a run's lines must be one that leaves that run out.
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
        yield from _parse_lines(path, report, prefilter, note, skip)
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


def time_text_bound(when):
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
        self.since_text, self.until_text = time_text_bound(self.since), time_text_bound(self.until)
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
        if self.since_text is not None or self.until_text is not None:
            text = record.get("time")
            # a canonical time compared as it is (every line the writer writes), any other through _record_time_ok
            if text.__class__ is not str or len(text) != 27 or not text.endswith("Z"):
                if not _record_time_ok(record, self.since_text, self.until_text):
                    return False
            elif (self.since_text is not None and text < self.since_text) or \
                    (self.until_text is not None and text > self.until_text):
                return False
        return self.where is None or self.where(record)


def select(directory, selection, report=None, newest_first=False, stop=None, note=None, skip=None):
    """Stream the records that match a Selection (note/skip: ``iter_records``)."""
    for record in iter_records(directory, selection.since, selection.until, report, selection.prefilter,
                               newest_first=newest_first, stop=stop, note=note, skip=skip):
        if selection(record):
            yield record


def query(directory, kind=None, host=None, peer=None, run_id=None, verdict=None, since=None, until=None,
          last_runs=None, include_summary=None, jmespath_query=None, limit=None, report=None, now=None,
          where=None, exclude_run_id=None, note=None):
    """Query the history, streaming; returns a list of records (or the JMESPath result).

    kind/host/peer/run_id/verdict: a value or a list of values (any of them).
    peer: the string 'null' (or '-') matches records without a peer.
    since/until: ISO 8601, epoch seconds or an age like '7d'. last_runs: only
    the N most recent runs (by their first record's time) among matching records.
    include_summary: keep 'summary' records (default: only when kind asks for them).
    where: optional predicate called with each record.
    exclude_run_id: leave out the records of this run (before last_runs counts runs).
    limit: keep at most the last N records after filtering.
    jmespath_query: applied to the resulting list (needs the jmespath package).
    report: a ReadReport that receives torn/corrupt lines.
    note: a LinesOfRun that receives the lines of its run (``iter_records``).
    """
    if exclude_run_id:
        where = _without_run(str(exclude_run_id), where)
    selection = Selection(kind, host, peer, run_id, verdict, since, until, include_summary, where, now)
    if last_runs:
        result = _last_runs(directory, selection, int(last_runs), report)
    elif limit:
        from collections import deque
        result = list(deque(select(directory, selection, report, note=note), maxlen=int(limit)))
    else:
        result = list(select(directory, selection, report, note=note))
    if last_runs and limit:
        result = result[-int(limit):]
    if jmespath_query:
        return jmespath_search(jmespath_query, result)
    return result


def _without_run(run_id, where=None):
    def keep(record):
        return str(record.get("run_id")) != run_id and (where is None or where(record))
    return keep


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
