# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The checks every side of a pair tool (perftest, iperf3) shares, before its argv is built, and the error
entries and verdict shape of its outcome.

Numbers go through ``option_rules.check_int`` / ``check_number`` (one rule
for what an integer is); ``extra_args`` tokens through the tool's own
``cli_grammar.ArgumentRules``. Everything raises ``ArgumentError``, naming
the option.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import re

from ansible_collections.clusterops.commcheck.plugins.module_utils.options import option_rules
from ansible_collections.clusterops.commcheck.plugins.module_utils.options.option_rules import show
from ansible_collections.clusterops.commcheck.plugins.module_utils.options.rule_errors import raised_as


# cause / fix of a side whose command could not start, the same for every pair tool
CANNOT_START = (
    "the command could not be started",
    "read the message: install the program, make it executable, or use one built for this machine "
    "(with the kubectl transport: kubectl on the controller)")


# cause / fix of a side whose tool printed more than the runner keeps (output_capture) and whose result could
# not be read from what was kept, the same for every tool
OUTPUT_TOO_LARGE = (
    "the tool printed far more than a test report (garbage, a debug log or a loop) and its result could not be "
    "read from the first and last part of it that were kept",
    "run the command of this side by hand on the host and look at what it prints; check the tool's "
    "installation, its environment (debug variables such as NCCL_DEBUG) and the host's terminal settings")


def too_large_entry(catalog, result):
    """The error entry of a side whose output was too large (``result['output_bytes']``: the sizes)."""
    cause, fix = catalog["output_too_large"]
    sizes = result.get("output_bytes") or {}
    message = "the tool printed %s bytes on stdout and %s on stderr%s" % (
        sizes.get("stdout"), sizes.get("stderr"),
        "; it was stopped there" if result.get("output_stopped") else "")
    return {"code": "output_too_large", "message": message, "cause": "%s (%s)" % (cause, message), "fix": fix}


def start_entry(catalog, error):
    """The error entry of a command that could not start; its cause says what the kernel said."""
    cause, fix = catalog["cannot_start"]
    return {"code": "cannot_start", "message": error, "cause": "%s: %s" % (cause, error), "fix": fix}


def catalog_entry(catalog, code, message=None):
    """The error entry of ``code`` in a pair tool's catalog (``code: (cause, fix)``); without a message the cause is
    the message."""
    cause, fix = catalog[code]
    return {"code": code, "message": message or cause, "cause": cause, "fix": fix}


def side_outcome(verdict, errors):
    """A side's ``{verdict, cause, fix, errors}``: the cause (else the message) and fix of its first error."""
    first = errors[0] if errors else {}
    return {
        "verdict": verdict,
        "cause": first.get("cause") or first.get("message") if errors else None,
        "fix": first.get("fix") if errors else None,
        "errors": errors,
    }


def not_started_outcome(catalog, result):
    """The error outcome of a side whose command never ran (it could not start, or its tool is not on PATH), else
    None: nothing the tool printed can be judged then."""
    if result.get("start_error"):
        return side_outcome("error", [start_entry(catalog, result["start_error"])])
    if result.get("tool_missing"):
        return side_outcome("error", [catalog_entry(catalog, "tool_missing", result.get("stderr"))])
    return None


def bandwidth_outcome(catalog, gbps, expected_gbps, min_fraction):
    """``fail`` with the catalog's ``below_expected`` entry when ``gbps`` is below ``min_fraction`` of
    ``expected_gbps``, else ``pass``; no expectation (None, 0) or no measurement (None) passes."""
    if expected_gbps and gbps is not None and gbps < float(expected_gbps) * float(min_fraction):
        entry = catalog_entry(catalog, "below_expected", "%.2f Gb/s is below %.0f%% of the expected %.2f Gb/s" % (
            gbps, float(min_fraction) * 100, float(expected_gbps)))
        return side_outcome("fail", [entry])
    return side_outcome("pass", [])


ROLES = ("server", "client")
# Ranges of what a side only carries to be reported back.
RAIL_MAX = 1023
STEP_MAX = 10000
ROUND_MAX = 1000000
EXPECTED_GBPS_MAX = 100000

# A token of extra_args: an option or a value, without any shell
# metacharacter, quote, glob or whitespace.
TOKEN_RE = re.compile(r"^[A-Za-z0-9_.,:=/+@%-]+$")
SHELL_META = set(";&|$`<>(){}[]*?!~'\"\\\n\r\t #")


class ArgumentError(option_rules.OptionError):
    """An option value that must not reach a command line."""


def checked(check, *args):
    """Run an ``option_rules`` check; its OptionError comes out as ArgumentError (one type for callers)."""
    return raised_as(ArgumentError, check, *args)


def shell_meta_error(name, value):
    """A message when value (any nesting of str/list/dict) holds a shell metacharacter."""
    if isinstance(value, str):
        bad = sorted(set(value) & SHELL_META)
        if bad:
            return "%s %s contains shell metacharacter(s) %s" % (name, show(value), " ".join(repr(c) for c in bad))
        return None
    if isinstance(value, dict):
        items = (("%s.%s" % (name, key), item) for key, item in value.items())
    elif isinstance(value, (list, tuple)):
        items = (("%s[%d]" % (name, idx), item) for idx, item in enumerate(value))
    else:
        return None
    return next((err for err in (shell_meta_error(label, item) for label, item in items) if err), None)


def refuse_shell_meta(params, keys):
    """Raise ArgumentError for the first of ``keys`` whose value holds a shell metacharacter."""
    for key in keys:
        err = shell_meta_error(key, params.get(key))
        if err:
            raise ArgumentError(err)


def valid_address(value):
    """True for an IPv4/IPv6 address or a DNS host name that cannot be an option."""
    return option_rules.is_host(value)


def int_option(params, key, low, high, label=None):
    """``params[key]`` as an int in [low, high], or None when it is not set.

    What counts as an integer is ``option_rules.check_int``'s rule; the
    message keeps the pair tools' wording (``KEY must be between LOW and HIGH, got N``).
    """
    value = params.get(key)
    if value is None:
        return None
    label = label or key
    try:
        number = option_rules.check_int(label, value, float("-inf"), float("inf"))
    except option_rules.OptionError:
        raise ArgumentError("%s must be an integer, got %s" % (label, show(value)))
    if number < low or number > high:
        raise ArgumentError("%s must be between %d and %d, got %s" % (label, low, high, show(number)))
    return number


def number_option(params, key, low, high):
    """A finite number in [low, high], or None when the option is not set."""
    value = params.get(key)
    if value is None:
        return None
    return checked(option_rules.check_number, key, value, low, high)


def check_role(role):
    if role not in ROLES:
        raise ArgumentError("role must be one of %s, got %s" % (", ".join(ROLES), show(role)))
    return role


def check_choice(params, key, choices, default):
    """``params[key]`` (``default`` when empty), one of ``choices``."""
    value = params.get(key) or default
    if value not in choices:
        raise ArgumentError("%s must be one of %s, got %s" % (key, ", ".join(choices), show(value)))
    return value


def check_tokens(extra_args, rules):
    """Validate extra_args tokens; return them as a list of strings.

    ``rules`` (a ``cli_grammar.ArgumentRules``) reads the tokens with the
    tool's own option grammar and refuses what the module sets itself (in
    any spelling: ``-p1``, ``--po=1``, ``-bd X``), unknown options,
    positionals, ``--`` and values that start with '-'.
    """
    if extra_args is None:
        return []
    if isinstance(extra_args, str) or not isinstance(extra_args, (list, tuple)):
        raise ArgumentError("extra_args must be a list of separate arguments, got %s" % show(extra_args))
    out = [_token(idx, token) for idx, token in enumerate(extra_args)]
    checked(rules.check, out, "extra_args")
    return out


def _token(idx, token):
    if isinstance(token, bool) or not isinstance(token, (str, int, float)):
        raise ArgumentError("extra_args[%d] must be a string, got %s" % (idx, show(token)))
    token = str(token)
    err = shell_meta_error("extra_args[%d]" % idx, token)
    if err:
        raise ArgumentError(err)
    if not TOKEN_RE.match(token):
        raise ArgumentError("extra_args[%d] %s has characters outside [A-Za-z0-9_.,:=/+@%%-]" % (idx, show(token)))
    return token


def check_side_labels(p):
    """What a side carries only to be reported back (peer, rail, step, round, expected_gbps).

    peer is an inventory name: any text a record can carry (spaces, non-ASCII letters), no control character.
    """
    if p.get("peer") is not None:
        checked(option_rules.check_text, "peer", p["peer"], 255)
    int_option(p, "rail", 0, RAIL_MAX)
    int_option(p, "step", 0, STEP_MAX)
    int_option(p, "round", 0, ROUND_MAX)
    number_option(p, "expected_gbps", 0, EXPECTED_GBPS_MAX)


def check_min_fraction(value):
    """The share of the expected bandwidth a side must reach: above 0, at most 1."""
    if value is None:
        return None
    number = checked(option_rules.check_number, "min_fraction", value, 0, 1)
    if number <= 0:
        raise ArgumentError("min_fraction must be in (0, 1], got %s" % show(value))
    return number


def check_server(role, server):
    """The server address: required for a client, a host name or an IP address when given."""
    if role == "client" and not server:
        raise ArgumentError("server (the address of the server side) is required for role=client")
    if server not in (None, "") and not valid_address(server):
        raise ArgumentError("server %s is not a host name or an IP address" % show(server))


def check_binary(binary):
    """A program path a transport found: never an option, never relative or with '..'."""
    if binary is not None:
        checked(option_rules.check_binary, "binary", binary, None, False)
    return binary
