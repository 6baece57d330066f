# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What every role-variable rule is built from (pure): the rule context,
messages that quote at most ``option_rules.QUOTE_LIMIT`` characters of a
value, and the generic rules (numbers, names, paths, binaries, hosts).

The rules of each variable are in ``role_option_checks``; the table that
maps every variable to its rule is ``role_options.RULES``.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.clusterops.commcheck.plugins.module_utils.options import option_rules as rules
from ansible_collections.clusterops.commcheck.plugins.module_utils.options.option_rules import OptionError, QUOTE_LIMIT

# The most characters a delegated check's message may have (its quoted
# values are cut to QUOTE_LIMIT first; this only bounds the rest).
MESSAGE_LIMIT = 1000


class Context(object):
    """What a rule may look at besides its own value.

    ``values``: this host's values that passed their type check, converted
    (spec defaults filled in); ``known_hosts``: inventory host names, which
    host options accept even when they are not DNS names; ``specs``: every
    role variable's spec, for variables that hold other variables
    (``commcheck_k8s_pod_vars``); ``check_option(option, spec, value, ctx,
    label)``: the whole check of one such variable.
    """

    def __init__(self, values=None, known_hosts=(), specs=None, check_option=None):
        self.values = dict(values or {})
        self.known_hosts = frozenset(known_hosts or ())
        self.specs = dict(specs or {})
        self.check_option = check_option

    def get(self, name, default=None):
        return self.values.get(name, default)


# ---------------------------------------------------------------- messages

def _pieces(value, depth=0):
    """Every value inside ``value`` (keys too), the way a message may quote it."""
    yield value
    if depth > 8:
        return
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _pieces(key, depth + 1)
            yield from _pieces(item, depth + 1)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _pieces(item, depth + 1)


def clip(message, value, limit=QUOTE_LIMIT):
    """``message`` with every long quote of (a part of) ``value`` cut to ``limit`` characters.

    The module-level checks quote values with ``%r`` (or ``%d``/``%s``);
    the same text is replaced by ``option_rules.show`` of it, so a huge value
    cannot flood the message. The whole message is bounded as well.
    """
    quotes = set()
    for piece in _pieces(value):
        for text in (repr(piece), str(piece)):
            if len(text) > limit:
                quotes.add(text)
    for text in sorted(quotes, key=len, reverse=True):
        if text in message:
            message = message.replace(text, "%s...(%d characters)" % (text[:limit], len(text)))
    if len(message) > MESSAGE_LIMIT:
        message = "%s...(%d characters)" % (message[:MESSAGE_LIMIT], len(message))
    return message


def fail(label, value, why):
    """Raise the problem '<label>: <value> <why>'."""
    rules.fail(label + ":", value, why)


def call_check(label, shown, check, *args, **kwargs):
    """Run a module-level check; its error becomes '<label>: <its message>' unless it names the option itself
    (quotes of ``shown`` cut)."""
    try:
        return check(*args, **kwargs)
    except (ValueError, TypeError, OverflowError) as exc:
        text = str(exc)
        # a message that already names the option, one of its keys or items (label.key, label[2]) stays as it is
        if not (text.startswith(label) and text[len(label):len(label) + 1] in (":", ".", "[")):
            text = "%s: %s" % (label, text)
        raise OptionError(clip(text, shown))


def items(label, value):
    """(``label[N]``, item) of a list value: a problem with one item names its index, as the modules' do."""
    return [("%s[%d]" % (label, index), item) for index, item in enumerate(value)]


def rules_check(label, check, value, *args):
    """An ``option_rules`` check with '<label>:' as the option it names."""
    return check(label + ":", value, *args)


def described(rule, text):
    rule.describes = text
    return rule


def names_files(rule, what):
    """Mark a rule whose variable names a program or a configuration file (``what`` says which): an inventory
    or job-template setting, never a survey question (``role_options.file_naming_variables``)."""
    rule.names_files = what
    return rule


def words(items):
    return ", ".join(str(i) for i in items)


# ---------------------------------------------------------------- generic rules

def by_spec(what="the type and choices of the argument spec"):
    """Nothing beyond the type and choices of the argument spec (which ``check_values`` applies): a rule never
    restates them, and the generated docs show the spec's own (``by_spec`` marks it)."""
    def rule(label, value, ctx):
        return None
    rule.by_spec = True
    return described(rule, what)


def boolean():
    def rule(label, value, ctx):
        if not isinstance(value, bool):
            fail(label, value, "must be true or false")
    return described(rule, "true or false")


def integer(low, high, zero=None):
    """An integer in [low, high]; with ``zero`` (what 0 means), 0 is allowed too."""
    def rule(label, value, ctx):
        if zero is not None and value == 0 and not isinstance(value, bool):
            return
        try:
            rules_check(label, rules.check_int, value, low, high)
        except OptionError:
            if zero is None or isinstance(value, bool) or not isinstance(value, int):
                raise
            fail(label, value, "must be 0 (%s) or between %s and %s" % (zero, low, high))
    return described(rule, "%s to %s%s" % (low, high, "" if zero is None else "; 0: %s" % zero))


def number(low, high, above=False):
    """A finite number in [low, high]; ``above``: low itself is not allowed."""
    def rule(label, value, ctx):
        rules_check(label, rules.check_number, value, low, high)
        if above and value <= low:
            fail(label, value, "must be above %s (at most %s)" % (low, high))
    return described(rule, "%s%s to %s" % ("above " if above else "", low, high))


def fraction():
    return number(0, 1, above=True)


def text(max_length=rules.PATH_MAX, empty=True):
    """One line of text (no control characters)."""
    def rule(label, value, ctx):
        rules_check(label, rules.check_text, value, max_length)
        if not empty and not value.strip():
            fail(label, value, "must not be empty")
    return described(rule, "one line of text, at most %d characters" % max_length)


def name(kind, empty=False):
    """A name of ``option_rules.NAME_KINDS`` (never a flag); '' allowed with ``empty``."""
    def rule(label, value, ctx):
        if empty and value == "":
            return
        rules_check(label, rules.check_name, value, kind)
    return described(rule, rules.NAME_KINDS[kind][1] + (" or ''" if empty else ""))


def names(kind, empty=True):
    """A list of names of one kind."""
    def rule(label, value, ctx):
        if not empty and not value:
            fail(label, value, "must name at least one")
        for where, item in items(label, value):
            rules_check(where, rules.check_name, item, kind)
    return described(rule, "a list of " + rules.NAME_KINDS[kind][1])


def path(absolute=True, empty=False):
    """A path without '..' components or control characters (absolute unless told)."""
    def rule(label, value, ctx):
        if empty and value in ("", None):
            return
        rules_check(label, rules.check_path, value, absolute)
    what = "an absolute path" if absolute else "a path (relative to where ansible-playbook runs)"
    return described(rule, what + " without '..'" + (", or ''" if empty else ""))


def binary(empty=False, program=None):
    """A program: an absolute path or a bare command name (never relative, never a flag); with ``program``
    (``option_rules.PROGRAMS``) its file name must be that program's (/bin/sh is never kubectl).

    Only the form is checked: the program runs on a host (or in a pod) that
    the check does not contact; the module that runs it reports it missing
    and, for a program that acts on the cluster, checks what it says it is.
    """
    def rule(label, value, ctx):
        if empty and value == "":
            return
        if program:
            rules_check(label, rules.check_program, value, program, None, False)
        else:
            rules_check(label, rules.check_binary, value, None, False)
    what = "an absolute path or a command name" + (" of %s" % program if program else "")
    return names_files(described(rule, what + (", or ''" if empty else "")), "a program")


def check_host(label, value, ctx):
    """An inventory host name or a DNS name / IP address; never a flag."""
    rules_check(label, rules.check_not_flag, value)
    if value in ctx.known_hosts:
        return value
    if not rules.is_host(value):
        fail(label, value, "is not a host of the inventory, a host name or an IP address")
    return value


def host(empty=False):
    def rule(label, value, ctx):
        if empty and value == "":
            return
        check_host(label, value, ctx)
    return described(rule, "a host name or an IP address" + (", or ''" if empty else ""))


def hosts():
    def rule(label, value, ctx):
        seen = set()
        for where, item in items(label, value):
            check_host(where, item, ctx)
            if item in seen:
                fail(where, item, "is listed twice")
            seen.add(item)
    return described(rule, "a list of inventory hosts")


def pairs():
    """[[server, client], ...] of hosts."""
    def rule(label, value, ctx):
        for where, pair in items(label, value):
            if not isinstance(pair, (list, tuple)) or len(pair) != 2:
                fail(where, pair, "is not a [server, client] pair")
            for side, item in items(where, pair):
                check_host(side, item, ctx)
            if pair[0] == pair[1]:
                fail(where, pair, "pairs a host with itself")
    return described(rule, "a list of [server, client] host pairs")


def choices_not_empty():
    def rule(label, value, ctx):
        if not value:
            fail(label, value, "must name at least one")
    return described(rule, "at least one of the choices")
