# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Text helpers shared by the parsers and every later stage: launcher prefixes, numbers, key names, natural order."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import functools
import json
import math
import re
import unicodedata

from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.pasted import LAUNCHER_PREFIX, undecorate

# Terminal escapes: CSI (colours, erase line: "\x1b[1;31m", "\x1b[K"), OSC (a prompt's window title or a
# hyperlink, ended by BEL or ESC \), a character-set switch (tput sgr0's "\x1b(B") and the one-character ones.
_ANSI = re.compile(r"\x1b(?:\[[0-9;?:<=>]{0,64}[ -/]{0,4}[@-~]|\][^\x07\x1b\n]{0,1024}(?:\x07|\x1b\\)?|[()][0-9A-Za-z]"
                   r"|[=>78DEHMNOZc])")
_DIGIT_RUNS = re.compile(r"(\d+)")


@functools.lru_cache(maxsize=1 << 16)
def _natural_key(text):
    return tuple((0, int(part), "") if part.isdigit() else (1, 0, part) for part in _DIGIT_RUNS.split(text))


def natural_key(value):
    """Sort key that puts h2 before h10, mlx5_2 before mlx5_10 and 2.9 before 2.10 (digit runs compare as numbers).

    The one natural order of the collection. Cached: reports and localization sort the same host names
    hundreds of thousands of times at fleet scale.
    """
    return _natural_key(str(value))


def to_text(data):
    """Return data as str whatever it was (bytes, None, list of lines)."""
    if data is None:
        return ""
    if isinstance(data, bytes):
        return data.decode("utf-8", "replace")
    if isinstance(data, (list, tuple)):
        return "\n".join(to_text(item) for item in data)
    if not isinstance(data, str):
        return str(data)
    return data


def strip_launcher_prefix(line):
    """Remove one mpirun --tag-output or srun --label prefix from a line."""
    return LAUNCHER_PREFIX.sub("", line, count=1)


def clean_lines(text):
    """Split raw tool output into lines without CRs, ANSI codes, NULs, and what a paste added around the
    tool's text: launcher prefixes, Markdown fences, quote markers and bullets, cat -n numbers, timestamps,
    a note or a right prompt after the record (pasted.undecorate).

    Linear in the text: the CR, ANSI and NUL passes run once over the whole
    text (none of them can span a line), and every decoration rule is anchored
    and gated by a character test.
    """
    text = to_text(text)
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if "\x1b" in text:
        text = _ANSI.sub("", text)
    if "\x00" in text:
        text = text.replace("\x00", "")
    return undecorate(text)


def pasted_text(text):
    """The text as clean_lines reads it, joined again: the JSON a paste decorated (quote markers, prefixes,
    colours, notes) decodes from it."""
    return "\n".join(clean_lines(text))


# No tool prints lines this long; longer ones are cut so that no regex works on huge lines.
MAX_LINE = 4096


def bounded_lines(text):
    """clean_lines(text), every line cut at MAX_LINE characters."""
    return [line[:MAX_LINE] for line in clean_lines(text)]


# The hint that says what a text a parser could not read starts with: its first line, this wide at most.
HINT_WIDTH = 80
_NON_BLANK = re.compile(r"\S")
_HINT_PIECE = 16384   # characters cleaned at a time for a hint (lines blank once cleaned, such as fences, are skipped)
_HINT_PIECES = 8


def quote_hint(text, width=HINT_WIDTH):
    """text cut at width characters (marked '...'), in double quotes, with quotes, backslashes and every control,
    format or separator character but the space escaped: safe to show in a terminal, a log or a report."""
    text = to_text(text)
    chars = []
    for char in text[:width]:
        if char in '"\\':
            chars.append("\\" + char)
        elif char == " " or unicodedata.category(char)[0] not in "CZ":
            chars.append(char)
        else:
            chars.append(_escaped(char))
    return '"%s"%s' % ("".join(chars), "..." if len(text) > width else "")


def _escaped(char):
    """A character as an escape: \\t, \\xNN, \\uNNNN or \\UNNNNNNNN."""
    code = ord(char)
    if char == "\t":
        return "\\t"
    if code < 0x100:
        return "\\x%02x" % code
    return "\\u%04x" % code if code < 0x10000 else "\\U%08x" % code


def first_line_hint(text, width=HINT_WIDTH):
    """The first line of text that is not blank once cleaned (clean_lines), quoted (quote_hint); None when the
    text has none. Reads only a bounded piece of the text from its first non-blank character on (cleaned as a
    whole, so that cat -n numbers, which only runs of lines show, come off too)."""
    text = to_text(text)
    at = 0
    for _piece in range(_HINT_PIECES):
        found = _NON_BLANK.search(text, at)
        if found is None:
            return None
        start = text.rfind("\n", 0, found.start()) + 1
        end = min(len(text), start + _HINT_PIECE)
        for line in clean_lines(text[start:end]):
            if line.strip():
                return quote_hint(line.strip()[:MAX_LINE], width)
        at = end
    return None


_UNRECOGNISED = "the text was not recognised as "


def unread_notes(result):
    """The messages of the warnings of a parser result that say nothing was read from its text (unrecognised_warning)."""
    notes = []
    for warning in result.get("warnings") or ():
        message = warning.get("message") if isinstance(warning, dict) else warning
        if isinstance(message, str) and message.startswith(_UNRECOGNISED):
            notes.append(message)
    return notes


def unrecognised_warning(tool, text):
    """The warning for a text from which a parser read nothing: it was not recognised as `tool`'s output, and
    its first line as a hint. None for a blank text (the tool printed nothing: not a text that was misread)."""
    text = to_text(text)
    if _NON_BLANK.search(text) is None:
        return None
    hint = first_line_hint(text)
    return _UNRECOGNISED + "%s output, nothing was read from it (%s)" % (
        tool, "its first line: %s" % hint if hint else "no line of it is more than decoration")


def holds_any(result, *keys):
    """Whether any of these keys of a parser result holds something: not None, False or empty (0 is a value)."""
    for key in keys:
        value = result.get(key)
        if value is not None and value is not False and not (isinstance(value, (str, list, dict)) and not value):
            return True
    return False


def note_if_unread(result, text, tool, read, catalog=None):
    """result, with the unrecognised_warning of text in result["warnings"] when nothing was read from it (read
    false): a parser never returns silently empty. With a catalog (a parser whose warnings are entries, not
    strings) the warning is its "not_recognised" entry."""
    if not read:
        note = unrecognised_warning(tool, text)
        if note is not None:
            result.setdefault("warnings", []).append(
                note if catalog is None else error_entry("not_recognised", note, catalog))
    return result


def nonblank_lines(text):
    """bounded_lines(text) without the blank lines."""
    return [line for line in bounded_lines(text) if line.strip()]


# Lines that carry no message of their own: a shell prompt with the command it
# runs ("$ cmd", "user@host:~$ cmd", "[root@n1 ~]# cmd", "~# cmd", "> continued"),
# a separator, a bare address (a wrapped command line's last word), ssh's
# known-hosts note and kubectl's container note.
_PROMPT = re.compile(r"^(?:\[[^\]]{0,100}\]|[^\s$#%>]{0,200})[$#%>](?:\s|$)")
_SEPARATOR = re.compile(r"^[-=*_~+.#\s]+$")
_ADDRESS = re.compile(r"^(?:\d{1,3}(?:\.\d{1,3}){3}|[0-9A-Fa-f]{0,4}(?::[0-9A-Fa-f]{0,4}){2,7}"
                      r"|[A-Za-z0-9][\w\-]{0,62}(?:\.[\w\-]{1,63}){1,8})(?::\d{1,5})?$")
_CONTEXT_NEEDLES = ("Permanently added", "Defaulted container", "to the list of known hosts")
# "libibverbs: Warning: couldn't stat ...", "mlx4: Warning: BlueFlame ...", "WARNING: ...": a tool says it is a warning.
_TAGGED_WARNING = re.compile(r"^(?:[\w.\-/]{1,64}:\s*){0,2}warn(?:ing)?\b", re.I)


def is_prompt_line(line):
    """True for a shell prompt line ("$ cmd", "user@host:~$ cmd", "[root@n1 ~]# cmd"): in a paste of several
    commands it ends the output of the one before."""
    return bool(_PROMPT.match(to_text(line).strip()[:4096]))


def is_context_line(line):
    """True for a line that carries no message: a prompt/command echo, a separator, a bare address, ssh notes."""
    text = to_text(line).strip()
    if not text:
        return True
    if len(text) > 4096:
        text = text[:4096]
    if _PROMPT.match(text) or _SEPARATOR.match(text) or text.endswith("\\"):
        return True
    if " " not in text and _ADDRESS.match(text):
        return True
    return any(needle in text for needle in _CONTEXT_NEEDLES)


# Words of a line that says something went wrong or may have: such a line, when no rule knows it,
# is worth a warning. Other unknown lines (progress chatter, wrapped command lines) are not.
# (Substring tests on the lowercased line: a regex alternation of these is ~50x slower on long lines.)
_DIAGNOSTIC_WORDS = (
    "warn", "error", "fail", "fatal", "abort", "cannot", "can't", "couldn't", "couldnt", "could not", "unable",
    "invalid", "denied", "refused", "not found", "no such", "timeout", "time out", "timed out", "killed", "panic",
    "exception", "mismatch", "not supported", "unsupported", "unreachable", "illegal", "corrupt", "lost",
    "exceed", "insufficient", "too small", "too large", "too big", "too many", "too few",
)


def is_diagnostic_line(line):
    """True for a line that warns or reports a problem in words (it may still be benign)."""
    low = to_text(line)[:4096].lower()
    for word in _DIAGNOSTIC_WORDS:
        if word in low:
            return True
    return False


def is_tagged_warning(line):
    """True for a line its tool marks as a warning ("libibverbs: Warning: ...", "mlx4: Warning: ...", "WARNING: ...")."""
    return bool(_TAGGED_WARNING.match(to_text(line).strip()[:200]))


def unique(items):
    """The items in first-seen order, each once (a set remembers them: linear, not quadratic)."""
    seen = set()
    out = []
    for item in items:
        if item not in seen:
            seen.add(item)
            out.append(item)
    return out


def split_key_value(line, key_re):
    """'  Key name : value ' -> ('Key name', 'value'), or None when the text before the first ':'
    (stripped) is not all a key (key_re.fullmatch).

    The same as ^\\s*(key*?)\\s*:\\s*(.*?)\\s*$ but linear: those lazy groups before \\s* backtrack over
    every run of blanks, quadratic in its length.
    """
    head, sep, tail = line.partition(":")
    if not sep:
        return None
    key = head.strip()
    if not key or key_re.fullmatch(key) is None:
        return None
    return key, tail.strip()


def found_after(first, then, line):
    """True when regex `first` matches in line and regex `then` somewhere after it: the same as
    searching first.*then, but linear (that search retries .* from every match of `first`)."""
    match = first.search(line)
    return match is not None and then.search(line, match.end()) is not None


class Notes(object):
    """Warnings in first-seen order, each once; at most `limit` are listed, the rest only counted.

    Adding is O(1) (a set, not a scan of the list), so a parser stays linear
    however many warning lines the input holds.
    """

    def __init__(self, limit=100, width=300):
        self.limit = limit
        self.width = width
        self.items = []
        self._seen = set()
        self.dropped = 0

    def add(self, text):
        text = to_text(text).strip()[:self.width]
        if not text or text in self._seen:
            return
        if len(self.items) >= self.limit:
            if len(self._seen) < 100000:
                self._seen.add(text)
            self.dropped += 1
            return
        self._seen.add(text)
        self.items.append(text)

    append = add

    def __contains__(self, text):
        return to_text(text).strip()[:self.width] in self._seen

    def __len__(self):
        return len(self.items)

    def as_list(self):
        """The listed warnings, plus one line counting those not listed."""
        if self.dropped:
            return self.items + ["... %d more warnings" % self.dropped]
        return list(self.items)


_NOT_ALNUM = re.compile(r"[^0-9A-Za-z]+")
_CAMEL = re.compile(r"([a-z0-9])([A-Z])")
_UNDERSCORES = re.compile(r"_+")
_SNAKE_CACHE = {}


def snake_case(name):
    """'Number of qps' -> 'number_of_qps', 'CQ Moderation' -> 'cq_moderation'.

    Parsers call it for every key of every line: short names are remembered.
    """
    text = to_text(name)
    cached = _SNAKE_CACHE.get(text)
    if cached is not None:
        return cached
    value = _NOT_ALNUM.sub("_", text.strip())
    value = _CAMEL.sub(r"\1_\2", value)
    value = _UNDERSCORES.sub("_", value).strip("_").lower()
    if len(text) <= 64 and len(_SNAKE_CACHE) < 4096:
        _SNAKE_CACHE[text] = value
    return value


def _finite_float(value):
    """float(value) when that is a finite number, else None."""
    try:
        number = float(to_text(value).strip())
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def to_int(value, default=None):
    """Parse an int (decimal or 0x hex); default when it is not one."""
    try:
        text = to_text(value).strip()
        if text.lower().startswith("0x"):
            return int(text, 16)
        return int(text)
    except (TypeError, ValueError):
        number = _finite_float(value)
        if number is None:
            return default
        return int(number) if number == int(number) else default


def to_float(value, default=None):
    """Parse a float; default for N/A, empty, nan or junk."""
    number = _finite_float(value)
    return default if number is None else number


MIB_PER_SEC_TO_GBPS = 2 ** 20 * 8 / 1e9


def error_entry(code, message, catalog):
    """Build {code, message, cause, fix} from a parser's error catalog."""
    cause, fix = catalog.get(code, catalog.get("unknown", ("", "")))
    return {"code": code, "message": to_text(message).strip(), "cause": cause, "fix": fix}


# The catalog entry every parser has for its own failure.
PARSER_ERROR = (
    "The parser failed on this text (a bug in commcheck); nothing was read from it.",
    "Report the raw output to the commcheck maintainers.",
)


def error_catalog(codes, tool, verb="printed"):
    """A parser's error catalog: its tool's codes, then parser_error and unknown (the last ones in every catalog)."""
    catalog = dict(codes)
    catalog["parser_error"] = PARSER_ERROR
    catalog["unknown"] = ("%s %s an error this parser does not know." % (tool, verb), "Read the message and the raw output.")
    return catalog


def parse_or_report(parse, text, empty, catalog):
    """parse(text); when it raises (a bug in commcheck), `empty` with one parser_error entry as its errors:
    a parser never raises."""
    try:
        return parse(text)
    except Exception as exc:  # pylint: disable=broad-except
        empty["errors"] = [error_entry("parser_error", "%s: %s" % (type(exc).__name__, exc), catalog)]
        return empty


_DECODER = json.JSONDecoder()


def decode_json_at(text, start, window=256):
    """Decode the JSON value that starts at text[start], in time linear in what it reads.

    Returns (value, end, None) on success, else (None, stop, reason): reason
    "invalid" when the text is no JSON at stop (a valid prefix ends there),
    "cut" when the text ends inside the value, "deep" when it nests deeper
    than the decoder can follow. The decoder runs on a window that grows x4
    while the failure is at the window's end: a failure's error message counts
    the lines before it, which on the whole text would make many failed starts
    quadratic.
    """
    size = len(text)
    while True:
        stop = min(size, start + window)
        chunk = text[start:stop]
        try:
            value, end = _DECODER.raw_decode(chunk)
        except RecursionError:
            return None, start, "deep"
        except ValueError as exc:
            pos = getattr(exc, "pos", 0) or 0
            message = str(getattr(exc, "msg", ""))
            # 16: the longest token a window can cut so that the error is reported before it (true, false, \uXXXX)
            at_end = message.startswith("Unterminated string") or pos >= len(chunk.rstrip()) - 16
            if not at_end:
                return None, start + max(pos, 1), "invalid"
            if stop >= size:
                return None, size, "cut"
            window *= 4
            continue
        return value, start + end, None
