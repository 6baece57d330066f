# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a paste adds around a tool's lines, taken off before any parser reads them.

Operators paste outputs from terminals, wikis and tickets: launcher prefixes
(``[1,0]<stdout>:``, ``[0] ``, ``0: ``), Markdown code fences, quote markers
and list bullets, ``cat -n`` line numbers, timestamps from ``ts``, ``journalctl``
or ``kubectl logs --timestamps``, and after the record a note of their own
(``# slow one``, ``<-- this``) or a terminal's right prompt.  ``undecorate``
takes them off every line, so that each parser reads the tool's own text.

The rules run as multi-line regexes over the whole text (each anchored at a
line start, or at the start of a run of blanks), so a text without decorations
costs a few C-level scans and no Python work per line: linear in the text.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import re

# mpirun --tag-output: "[1,0]<stdout>:" ; MPICH -prepend-rank: "[0] "; srun --label: "0: "; Python launchers and
# torch's log prefix: "[rank 1] ", "[rank0]:"; Ray / SkyPilot workers: "(pid=1234) ", "(RayWorkerWrapper pid=927,
# ip=10.0.0.2) ", "(worker1, rank=1, pid=33870, ip=192.168.0.15) ", possibly nested ("(EngineCore pid=1) (Worker
# pid=2) "); mpirun --timestamp-output / pdsh "host: " are not taken off (ambiguous). Only the prefix itself is
# taken: the blank an ibv_devinfo line starts with is its indentation. ([ \t], never \s: a newline is no blank.)
_LAUNCHER = (r"\[\d+,\d+\]<(?:stdout|stderr|stddiag)>:"
             r"|\[\d+\][ \t]|\[rank ?\d+\](?::[ \t]?|[ \t])"
             r"|\d{1,6}:(?:[ \t]|(?=\n)|$)"
             r"|(?:\((?:[\w.\-]{1,64},?[ \t])?(?:rank=\d+,[ \t])?pid=\d+(?:,[ \t]ip=[0-9A-Fa-f.:]{2,45})?\)"
             r"(?:[ \t]|(?=\n)|$))+")
LAUNCHER_PREFIX = re.compile(r"^(?:" + _LAUNCHER + r")")

# Every rule that takes a decoration off a line's start starts with the newline before it (the text gets one in
# front): a pattern that starts with a literal is searched for at C speed, one that starts with (?m)^ is tried at
# every position.
# Markdown: a code fence line (```text, ~~~) is all decoration; quote markers ("> ", "> > ", ">"), each with at most
# one blank after it (the rest of the line keeps its indentation, which ibv_devinfo's nesting is read from); a list
# bullet ("- ", "* ", "+ ", "\u2022 ") with one blank.
_QUOTE = r"(?:>[ \t]?)+"
_BULLET = r"[-*+\u2022][ \t]"
# A terminal multiplexer's pane border (tmux, screen: box-drawing vertical bars) copied with the pane's lines.
_PANE_BORDER = "[\u2502\u2503\u2551]"
_MARKDOWN = (r"[ \t]*(?:(?:`{3,}|~{3,})[\w+.\-]*[ \t]*(?=\n)|" + _QUOTE + "|" + _BULLET + "|" + _PANE_BORDER
             + ")")
# Timestamps a pipe or a log collector puts first: ts ("Jan 02 15:04:05", "00:00:01", "15:04:05.123"), ISO 8601
# (kubectl logs --timestamps, docker logs -t, ts "%FT%T"), journalctl's short form with its "host ident[pid]: " or
# "host kernel: "; bracketed too. One blank after the stamp belongs to it; more are the line's own.
_CLOCK = r"\d{2}:\d{2}:\d{2}(?:[.,]\d{1,9})?"
_STAMP = (r"(?:\d{4}-\d{2}-\d{2}[T ]" + _CLOCK + r"(?:Z|[+-]\d{2}:?\d{2})?"
          r"|(?P<syslog>(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) [ \d]\d " + _CLOCK + r")"
          r"|" + _CLOCK + r")")
_JOURNAL = r"[A-Za-z0-9][\w.\-]{0,63} (?:[\w.\-/@]{1,64}\[\d{1,10}\]|kernel): "
_TIMESTAMP = r"(?P<open>\[)?" + _STAMP + r"(?(open)\])(?:[ \t]|(?=\n))(?(syslog)(?:" + _JOURNAL + r")?)"
# The decorations at a line's start, all layers in one match: Markdown, timestamps and launcher prefixes in any
# order ("> - [1,0]<stdout>:", a stamp before a prefix, a bullet behind one). Every alternative takes one character
# at least, so the repetition cannot loop on nothing. The timestamp goes before the launcher prefixes, whose "0: "
# could take a stamp's first digits. The lookahead on the line's first character dispatches a line at once (a
# line that starts with none of them costs one test: five times faster than trying every alternative).
_MARKDOWN_FIRST = "[ \t]*[>`~*+\u2022\u2502\u2503\u2551-]"
_MARKDOWN_LAYERS = re.compile(r"\n(?=" + _MARKDOWN_FIRST + r")(?:" + _MARKDOWN + r")+")
_LAYERS = re.compile(r"\n(?=" + _MARKDOWN_FIRST + r"|[\d\[(JFMASOND])(?:" + _MARKDOWN + r"|" + _TIMESTAMP + r"|"
                     + _LAUNCHER + r")+")
_PANE_BORDERS = "\u2502\u2503\u2551"
# cat -n: the line number right-aligned in six columns, then a tab (searched for after the Markdown came off).
_CAT_N = re.compile(r"^ {0,5}(\d{1,9})\t")
_MAY_BE_CAT_N = re.compile(r"\n(?=[ \d]) {0,5}\d{1,9}\t")

# A note after the record: a blank, then "#" (followed by a blank or the line's end, so "#wrong" and "#iterations"
# are no notes), "<--", "<==", "<-", a left arrow, or "//" (followed by a blank or the line's end). Found by
# literal searches (C speed; a regex that starts with a blank is tried at every blank of the text).
_NOTE_STARTS = tuple(blank + marker for marker in ("#", "<-", "<=", "\u2190", "//") for blank in (" ", "\t"))
_NOTE_ENDS = frozenset(" \t\n")     # what follows "#" or "//" in a note marker
_NOTE_TRIES = 4   # markers tried per line (the first ones may belong to a prompt)
# A shell prompt in front of a note marker is the prompt of a command, not a record: "root@n1:~ # ibstat",
# "sles15:~ # cmd", "(venv) user@host:/tmp # cmd".
_PROMPT_HEAD = re.compile(r"^(?:\([^)\s]{1,64}\)[ \t]+)?(?:[\w.\-]{1,64}@[\w.\-]{1,255}(?::\S*)?|[\w.\-]{1,255}:[~/]\S*)$")
# A right prompt (zsh RPROMPT, powerlevel10k) at the far right of a command line, after a gap of two blanks or more:
# a status glyph and what follows it, or a clock in brackets at the line's end.
_STATUS_GLYPHS = "\u2714\u2718\u2717\u2713\u2716\u23ce\u21b5"
_BRACKET_CLOCK = re.compile(r"[\[<]\d{2}:\d{2}:\d{2}[\]>]")
_CLOCK_WIDTH = 10   # "[15:04:05]"


def _is_record_head(head):
    """Whether the text before a note marker is a record: not blank, not one word ending in ':' (a pdsh prefix
    "node1: " before nccl-tests' "#  size ..."), not a shell prompt ("host:~ # cmd")."""
    text = head.strip()
    if not text or (text[-1] == ":" and len(text.split(None, 1)) == 1):
        return False
    return _PROMPT_HEAD.match(text) is None


class _Lines(object):
    """Where the line around a position of the text starts and ends; found once per line (markers come in order)."""

    def __init__(self, text):
        self.text = text
        self.start = self.end = -1

    def around(self, at):
        """(start, end) of the line that holds position at; True as third item when it is a line not seen before."""
        if self.start <= at < self.end:
            return self.start, self.end, False
        text = self.text
        self.start = text.rfind("\n", 0, at) + 1
        end = text.find("\n", at)
        self.end = len(text) if end < 0 else end
        return self.start, self.end, True

    def blanks_before(self, at):
        """Where the run of blanks that ends at `at` begins (not before the line's start)."""
        text = self.text
        while at > self.start and text[at - 1] in " \t":
            at -= 1
        return at


def _note_starts(text):
    """Where the note markers of the text start, in order (see _NOTE_STARTS)."""
    starts = []
    for needle in _NOTE_STARTS:
        at = text.find(needle)
        while at >= 0:
            marker = at + 1
            if needle[1] not in "#/" or text[marker + len(needle) - 1:marker + len(needle)] in _NOTE_ENDS:
                starts.append(marker)
            at = text.find(needle, marker)
    return sorted(starts)


def _note_cuts(text):
    """(where the kept part of a line ends, where the line ends) of every line with a note after its record."""
    cuts = []
    lines = _Lines(text)
    tries = 0
    for at in _note_starts(text):
        start, end, new = lines.around(at)
        if new:
            tries = 0
        elif tries >= _NOTE_TRIES:
            continue    # this line was cut, or its first markers belong to a prompt
        tries += 1
        if _is_record_head(text[start:at]):
            cuts.append((lines.blanks_before(at), end))
            tries = _NOTE_TRIES
    return cuts


def _right_prompt_cuts(text):
    """(where the kept part of a line ends, where the line ends) of every line with a right prompt: a status glyph
    or a bracketed clock at the line's end, after a gap of two blanks or more, with something of the line before
    the gap."""
    starts = []
    if not text.isascii():
        for glyph in _STATUS_GLYPHS:
            at = text.find(glyph)
            while at >= 0:
                starts.append(at)
                at = text.find(glyph, at + 1)
    for closing in ("]\n", ">\n"):
        at = text.find(closing)
        while at >= 0:
            start = at + 1 - _CLOCK_WIDTH
            if start >= 0 and _BRACKET_CLOCK.match(text, start):
                starts.append(start)
            at = text.find(closing, at + 2)
    cuts = []
    lines = _Lines(text)
    done = -1
    for at in sorted(starts):
        if at < 2 or at < done or text[at - 1] not in " \t" or text[at - 2] not in " \t":
            continue
        start, end, _new = lines.around(at)
        keep = lines.blanks_before(at)
        if keep > start:
            cuts.append((keep, end))
            done = end
    return cuts


def _right_border_cuts(text):
    """(where the kept part of a line ends, where the line ends) of every line that ends in a pane border (the right
    edge of a tmux pane: only blanks after it), with something of the line before it."""
    cuts = []
    lines = _Lines(text)
    for border in _PANE_BORDERS:
        at = text.find(border)
        while at >= 0:
            start, end, _new = lines.around(at)
            keep = lines.blanks_before(at)
            if keep > start and not text[at + 1:end].strip(" \t"):
                cuts.append((keep, end))
            at = text.find(border, end)
    return sorted(cuts)


def without_spans(text, spans, joiner=""):
    """The text without the spans (start, end), in order; the pieces left joined by `joiner`."""
    if not spans:
        return text
    parts = []
    position = 0
    for start, end in spans:
        parts.append(text[position:start])
        position = end
    parts.append(text[position:])
    return joiner.join(parts)


def _cut(text, cuts):
    """The text without the spans (keep_end, line_end) of cuts: each line cut where its decoration starts."""
    return without_spans(text, cuts)


def without_note(line):
    """The line without a note after its record ("# slow one", "<-- this"); the line itself when it has none."""
    return _cut(line + "\n", _note_cuts(line + "\n"))[:-1] if line else line


def _cat_n_numbered(lines):
    """The indexes of the lines numbered by cat -n: runs of two or more lines whose six-column numbers count up by
    one (a tool's own tab-separated numbers never do)."""
    numbered = set()
    run = []
    previous = None
    for index, line in enumerate(lines):
        match = _CAT_N.match(line)
        number = int(match.group(1)) if match is not None and _is_cat_n_width(match) else None
        if number is not None and previous is not None and number == previous + 1:
            run.append(index)
        else:
            if len(run) >= 2:
                numbered.update(run)
            run = [index] if number is not None else []
        previous = number
    if len(run) >= 2:
        numbered.update(run)
    return numbered


def _is_cat_n_width(match):
    """cat -n prints '%6d\\t': six columns before the tab (more only for numbers of seven digits or more)."""
    width = match.end() - 1
    return width == 6 or (width == len(match.group(1)) and width > 6)


def _without_cat_n(text):
    """The text without cat -n's line numbers (taken off where they count up, see _cat_n_numbered)."""
    lines = text.split("\n")
    numbered = _cat_n_numbered(lines)
    if not numbered:
        return text
    return "\n".join(line[line.index("\t") + 1:] if index in numbered else line for index, line in enumerate(lines))


def undecorate(text):
    """The lines of text (split at newlines), each without what a paste added before and after the tool's text,
    layer by layer from the outside: Markdown (fences, quote markers, bullets), cat -n numbers, timestamps and
    launcher prefixes (and Markdown again behind them), then a note or a right prompt after the record."""
    text = "\n" + text + "\n"    # every line between two newlines: the rules need no start or end of text
    if "\t" in text:
        unquoted = _MARKDOWN_LAYERS.sub("\n", text)
        if _MAY_BE_CAT_N.search(unquoted):
            text = _without_cat_n(unquoted)
    text = _LAYERS.sub("\n", text)
    text = _cut(text, _note_cuts(text))
    if not text.isascii():
        text = _cut(text, _right_prompt_cuts(text))
        text = _cut(text, _right_border_cuts(text))
    elif "]\n" in text or ">\n" in text:
        text = _cut(text, _right_prompt_cuts(text))
    return text[1:-1].split("\n")
