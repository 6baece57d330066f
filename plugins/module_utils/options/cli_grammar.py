# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Read a list of arguments the way a tool's getopt_long reads it (pure).

``Grammar(tool, shortopts, longopts)`` takes a tool's option table in the
form getopt_long(3) takes it: the short option string (``"p:d:aF"``: a
letter, ``:`` when it takes an argument, ``::`` when the argument is
optional) and the long options as ``(name, has_arg, short)`` triples
(``short`` is the letter the long option stands for, or None when it only
exists in its long form).

``Grammar.parse(tokens)`` splits the tokens as glibc's getopt_long would:
``--name=value`` and ``--name value``, unique abbreviations of long names
(``--po`` is ``--port`` when no other long option starts with ``po``),
attached short values (``-p1``), clustered short flags (``-bF``, ``-bd X``),
``--`` (the end of the options) and positionals. Every option comes back with
its canonical ``key`` (``-p`` for both ``-p`` and ``--port``; ``--name`` for
an option that only has a long form), so a caller can tell which option a
token sets whatever its spelling. What getopt_long itself would refuse
(unknown or ambiguous options, an argument to an option that takes none)
raises ``CliError``; an option whose value is missing at the end of the list
comes back with ``missing`` set.

``ArgumentRules(grammar, ...).check(tokens)`` is the policy for arguments a user adds to a command
the module builds (``extra_args``): no option the module sets itself, in any
spelling; no option of a refused kind; no positional, no ``--``; no value that
starts with ``-`` (unless the option takes negative numbers); values of path
options pass ``option_rules.check_path``.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import re

from ansible_collections.clusterops.commcheck.plugins.module_utils.options import option_rules
from ansible_collections.clusterops.commcheck.plugins.module_utils.options.option_rules import OptionError, show

NO_ARGUMENT, REQUIRED_ARGUMENT, OPTIONAL_ARGUMENT = 0, 1, 2
_NUMBER = re.compile(r"^-?[0-9]+(\.[0-9]+)?$")


class CliError(OptionError):
    """An argument list that the tool would not read as the caller means it, or must not get."""


class Found(object):
    """One option of a parsed argument list.

    ``key``: canonical name (``-p``, or ``--name`` for a long-only option);
    ``name``: the option as the tool knows it (``--port`` for ``--po``);
    ``token``: the argument it was written in; ``index``: that argument's
    position; ``value``: its argument or None; ``value_index``: the position
    of a value given as the next argument, else None; ``missing``: the option
    needs a value and the list ended (getopt_long would refuse it).
    """

    def __init__(self, key, name, token, index, value=None, value_index=None, missing=False):
        self.key = key
        self.name = name
        self.token = token
        self.index = index
        self.value = value
        self.value_index = value_index
        self.missing = missing

    def __repr__(self):
        return "Found(%r, %r, value=%r)" % (self.key, self.token, self.value)


class Parsed(object):
    """``options`` (Found, in order), ``positionals`` ((index, token) pairs) and ``end_index``
    (the position of ``--``, or None)."""

    def __init__(self):
        self.options = []
        self.positionals = []
        self.end_index = None

    def pairs(self):
        """(key, value) of every option, in order."""
        return [(item.key, item.value) for item in self.options]


def parse_shortopts(shortopts):
    """getopt's short option string -> {letter: has_arg}."""
    table = {}
    pos = 0
    while pos < len(shortopts):
        letter = shortopts[pos]
        if letter in ":-+;" or not letter.strip():
            raise ValueError("bad short option string %r at %d" % (shortopts, pos))
        has_arg = NO_ARGUMENT
        if shortopts[pos + 1:pos + 3] == "::":
            has_arg, pos = OPTIONAL_ARGUMENT, pos + 3
        elif shortopts[pos + 1:pos + 2] == ":":
            has_arg, pos = REQUIRED_ARGUMENT, pos + 2
        else:
            pos += 1
        table[letter] = has_arg
    return table


class Grammar(object):
    """One tool's options, read as getopt_long reads them."""

    def __init__(self, tool, shortopts, longopts):
        self.tool = tool
        self.short = parse_shortopts(shortopts)
        self.long = {}
        for name, has_arg, short in longopts:
            if name in self.long:
                raise ValueError("%s: long option --%s listed twice" % (tool, name))
            self.long[name] = (has_arg, "-" + short if short else "--" + name)

    def keys(self):
        """Every canonical key of this grammar."""
        return set("-" + letter for letter in self.short) | set(key for _arg, key in self.long.values())

    def long_option(self, name, label, token):
        """(full name, has_arg, key) of ``--name`` or of its unique abbreviation."""
        if name in self.long:
            return (name,) + self.long[name]
        matches = sorted(n for n in self.long if n.startswith(name)) if name else []
        if not matches:
            raise CliError("%s %s: %s has no option --%s" % (label, show(token), self.tool, name))
        if len(set(self.long[n] for n in matches)) > 1:
            raise CliError("%s %s: --%s is ambiguous for %s (could be %s)" % (
                label, show(token), name, self.tool, ", ".join("--" + n for n in matches[:8])))
        return (matches[0],) + self.long[matches[0]]

    def parse(self, tokens, label="arguments"):
        """Split ``tokens`` (strings) into options and positionals; see the module docstring."""
        parsed = Parsed()
        tokens = list(tokens)
        idx = 0
        while idx < len(tokens):
            token = tokens[idx]
            where = "%s[%d]" % (label, idx)
            if parsed.end_index is not None or token == "-" or not token.startswith("-"):
                parsed.positionals.append((idx, token))
            elif token == "--":
                parsed.end_index = idx
            elif token.startswith("--"):
                idx = self._parse_long(tokens, idx, where, parsed)
            else:
                idx = self._parse_short(tokens, idx, where, parsed)
            idx += 1
        return parsed

    def _parse_long(self, tokens, idx, where, parsed):
        token = tokens[idx]
        name, equals, value = token[2:].partition("=")
        full, has_arg, key = self.long_option(name, where, token)
        if equals and has_arg == NO_ARGUMENT:
            raise CliError("%s %s: --%s takes no value" % (where, show(token), full))
        if equals:
            parsed.options.append(Found(key, "--" + full, token, idx, value))
            return idx
        if has_arg == REQUIRED_ARGUMENT:
            if idx + 1 >= len(tokens):
                parsed.options.append(Found(key, "--" + full, token, idx, missing=True))
                return idx
            parsed.options.append(Found(key, "--" + full, token, idx, tokens[idx + 1], idx + 1))
            return idx + 1
        parsed.options.append(Found(key, "--" + full, token, idx))
        return idx

    def _parse_short(self, tokens, idx, where, parsed):
        token = tokens[idx]
        pos = 1
        while pos < len(token):
            letter = token[pos]
            has_arg = self.short.get(letter)
            if has_arg is None:
                raise CliError("%s %s: %s has no option -%s" % (where, show(token), self.tool, letter))
            rest = token[pos + 1:]
            if has_arg == NO_ARGUMENT:
                parsed.options.append(Found("-" + letter, "-" + letter, token, idx))
                pos += 1
                continue
            if rest or has_arg == OPTIONAL_ARGUMENT:
                parsed.options.append(Found("-" + letter, "-" + letter, token, idx, rest or None))
                return idx
            if idx + 1 >= len(tokens):
                parsed.options.append(Found("-" + letter, "-" + letter, token, idx, missing=True))
                return idx
            parsed.options.append(Found("-" + letter, "-" + letter, token, idx, tokens[idx + 1], idx + 1))
            return idx + 1
        return idx


def _spelled(item):
    """'-bd' (-d), or just '-d' when the token is the option itself."""
    return show(item.token) if item.token == item.name else "%s (%s)" % (show(item.token), item.name)


class ArgumentRules(object):
    """What a user may add to one tool's command line (``extra_args``), over the tool's ``Grammar``.

    ``managed``: canonical key -> the module option that sets it (refused:
    ``sets <option>, which has its own option``). ``refused``: key -> why the
    option is not allowed. ``value_rules``: key -> ``check(label, value)``
    (for example ``path_value``). ``negative``: keys whose value may be a
    negative number. Positionals and ``--`` are always refused.
    """

    def __init__(self, grammar, managed=None, refused=None, value_rules=None, negative=()):
        self.grammar = grammar
        self.managed = dict(managed or {})
        self.refused = dict(refused or {})
        self.value_rules = dict(value_rules or {})
        self.negative = frozenset(negative)
        unknown = (set(self.managed) | set(self.refused) | set(self.value_rules) | self.negative) - grammar.keys()
        if unknown:
            raise ValueError("%s has no option(s) %s" % (grammar.tool, ", ".join(sorted(unknown))))

    def check(self, tokens, label="extra_args"):
        """The parsed ``tokens``; raises CliError naming the first argument that is not allowed."""
        parsed = self.grammar.parse(tokens, label)
        if parsed.end_index is not None:
            raise CliError("%s[%d] '--' would end the options: %s may not add positional arguments" % (
                label, parsed.end_index, label))
        if parsed.positionals:
            idx, token = parsed.positionals[0]
            raise CliError("%s[%d] %s is not an option of %s: %s may not add positional arguments (the "
                           "module places addresses itself)" % (label, idx, show(token), self.grammar.tool, label))
        for item in parsed.options:
            where = "%s[%d]" % (label, item.index)
            if item.key in self.managed:
                raise CliError("%s %s sets %s, which has its own option" % (
                    where, _spelled(item), self.managed[item.key]))
            if item.key in self.refused:
                raise CliError("%s %s is not allowed: %s" % (where, _spelled(item), self.refused[item.key]))
            if item.missing:
                raise CliError("%s %s needs a value after it (what follows %s would become its value)" % (
                    where, _spelled(item), label))
            if self.value_rules.get(item.key) is secret_path_value and item.token.split("=", 1)[0] != item.key:
                # the path after it is withheld from results by its exact spelling (option_rules.SECRET_FILE_FLAGS)
                raise CliError("%s abbreviates %s, which names a credential file: spell it in full" % (where, item.key))
            if item.value is not None:
                value_where = where if item.value_index is None else "%s[%d]" % (label, item.value_index)
                check_value(item, value_where, self.value_rules.get(item.key), item.key in self.negative)
        return parsed


def check_value(item, where, rule=None, negative=False):
    """The value of one option: not empty, not a flag (but a negative number where allowed), its own rule."""
    value = item.value
    name = "%s (the value of %s)" % (where, item.name)
    if value == "":
        raise CliError("%s is empty" % name)
    if value.startswith("-") and not (negative and _is_number(value)):
        raise CliError("%s %s must not start with '-' (it would be read as an option)" % (name, show(value)))
    if rule is not None:
        try:
            rule(name, value)
        except OptionError as exc:
            raise CliError(str(exc))


def _is_number(text):
    return bool(_NUMBER.match(text))


def path_value(label, value):
    """A value that names a file: an absolute path without '..' (option_rules.check_path)."""
    return option_rules.check_path(label, value)


def secret_path_value(label, value):
    """A value that names a file of credentials (a private key): an absolute path without '..', never quoted
    in a message (option_rules.check_config_path); the module checks it is a readable regular file."""
    return option_rules.check_config_path(label, value, sensitive=True)
