# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""option_rules: every rule accepts what it should, refuses what it must, and says which option and why."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os
import shutil

import pytest

from ansible_collections.clusterops.commcheck.plugins.module_utils.options import option_rules as rules
from ansible_collections.clusterops.commcheck.plugins.module_utils.options.option_rules import OptionError

LONG = "x" * 5000


def refused(check, *args, **kwargs):
    with pytest.raises(OptionError) as err:
        check(*args, **kwargs)
    return str(err.value)


# --- messages --------------------------------------------------------------------

def test_show_quotes_short_values_whole():
    assert rules.show("mlx5_0") == "'mlx5_0'"
    assert rules.show(None) == "None"
    assert rules.show("a\nb") == "'a\\nb'"      # control characters come out escaped, never raw


def test_show_cuts_long_values_and_says_how_long():
    text = rules.show(LONG)
    assert text.startswith("'xxx") and text.endswith("...(5002 characters)")
    assert len(text) <= rules.QUOTE_LIMIT + len("...(5002 characters)")
    assert rules.show("y" * 300, limit=10) == "'yyyyyyyyy...(302 characters)"


def test_fail_names_the_option_and_the_value():
    message = refused(rules.fail, "device", "-x", "is bad")
    assert message == "device '-x' is bad"


@pytest.mark.parametrize("check,args", [
    (rules.check_text, ()), (rules.check_not_flag, ()), (rules.check_name, ("word",)),
    (rules.check_path, ()), (rules.check_file_name, ()), (rules.check_binary, ()),
])
def test_every_rule_quotes_at_most_the_limit(check, args):
    message = refused(check, "opt", "-" + LONG + "\n", *args)
    assert message.startswith("opt '-xxx") and len(message) < 400 and LONG not in message


def test_the_error_is_a_value_error():
    assert issubclass(OptionError, ValueError)


# --- text and flags --------------------------------------------------------------------

@pytest.mark.parametrize("value", ["plain", "", "with space", "ü"])
def test_check_text_accepts_text(value):
    assert rules.check_text("opt", value) == value


@pytest.mark.parametrize("value,why", [
    (None, "must be a string"), (5, "must be a string"), (b"x", "must be a string"),
    ("a\x00b", "control character"), ("a\nb", "control character"), ("a\tb", "control character"),
    ("a\x1bb", "control character"), ("a\x7fb", "control character"), ("y" * 4097, "longer than 4096"),
])
def test_check_text_refuses(value, why):
    message = refused(rules.check_text, "opt", value)
    assert message.startswith("opt ") and why in message


def test_check_text_max_length():
    assert rules.check_text("opt", "abc", max_length=3) == "abc"
    assert "longer than 2 characters" in refused(rules.check_text, "opt", "abc", max_length=2)


@pytest.mark.parametrize("value", ["-x", "--help", "-", "-oProxyCommand=x"])
def test_check_not_flag_refuses_what_reads_as_an_option(value):
    assert "must not start with '-'" in refused(rules.check_not_flag, "device", value)


def test_check_not_flag_keeps_other_values_and_inner_dashes():
    assert rules.check_not_flag("device", "mlx5-0") == "mlx5-0"
    assert "control character" in refused(rules.check_not_flag, "device", "a\nb")


# --- names --------------------------------------------------------------------------

@pytest.mark.parametrize("kind,good,bad", [
    ("rdma_device", ["mlx5_0", "mlx5_bond_0", "rocep65s0f0", "hns_0", "irdma-x722", "a" * 64],
     ["mlx5/0", "mlx5 0", ".hidden", "a" * 65, "", "mlx5_0;id"]),
    ("netdev", ["eth0", "ens1f0np0", "bond0.100", "eth0:1", "a" * 15],
     ["a" * 16, "eth 0", "eth/0", "", ".x"]),
    ("k8s_name", ["p1", "commcheck-r1-gpu-01", "a.b-c", "a" * 253],
     ["Bad_Pod", "a_b", "a-", "a..b", "a" * 254, "", "pod;id"]),
    ("k8s_label_value", ["", "v1", "a.b_c-d", "A" * 63], ["a" * 64, "a b", "_a", "a_"]),
    ("k8s_context", ["lab", "arn:aws:eks:us-east-1:1:cluster/x", "gke_p_z_n", "user@cluster"],
     ["a b", "", "a;b", "x" * 254]),
    ("word", ["a,b=c", "x/y+z@h%1", "eth0"], ["a b", "a;b", "", "'q'"]),
])
def test_check_name_kinds(kind, good, bad):
    for value in good:
        assert rules.check_name("opt", value, kind) == value
    for value in bad:
        message = refused(rules.check_name, "opt", value, kind)
        assert message.startswith("opt %s" % rules.show(value)), message
    assert "must not start with '-'" in refused(rules.check_name, "opt", "-x", kind)


# The classes of hostile names the plugins' tables aim at their name options (test_hostile_launch_and_files.py runs
# the first of each class through every option): every kind of name refuses each of them.
HOSTILE_NAMES = ["--help", "-oProxyCommand=touch /tmp/pwned", "a;reboot", "$(reboot)", "`id`", "a|b", "a b", "a&&b",
                 "a\nb", "a\rb", "a\x00b", "a\tb", u"a\u202eb", "../../etc/cron.d/x", "a/../../b", "a" * 100000]
# a kubeconfig context name and a word may hold '/' and '.' (a context is a name, never a path)
NAMES_WITH_SLASHES = {"k8s_context": ["../../etc/cron.d/x", "a/../../b"], "word": ["a/../../b"]}


@pytest.mark.parametrize("kind", sorted(rules.NAME_KINDS))
def test_every_kind_of_name_refuses_every_class_of_hostile_name(kind):
    taken = []
    for value in HOSTILE_NAMES:
        try:
            rules.check_name("opt", value, kind)
            taken.append(value)
        except OptionError as exc:
            assert str(exc).startswith("opt ") and len(str(exc)) < 2 * rules.QUOTE_LIMIT + 200, str(exc)[:300]
    assert taken == NAMES_WITH_SLASHES.get(kind, [])


def test_check_name_message_says_what_a_name_is():
    assert "is not an RDMA device name" in refused(rules.check_name, "device", "mlx5/0", "rdma_device")
    assert "is not a Kubernetes name" in refused(rules.check_name, "kubectl.pod", "Bad", "k8s_name")


# --- hosts --------------------------------------------------------------------------

@pytest.mark.parametrize("value,ok", [
    ("10.0.0.1", True), ("fd00::2", True), ("::1", True), ("node-b", True), ("gpu-01.rack2.example.com", True),
    ("host.", True), ("a" * 63, True), ("a" * 64, False), ("a..b", False), ("", False), (None, False),
    (5, False), ("-x", False), ("--help", False), ("node b", False), ("a\nb", False), ("a;b", False),
    ("10.0.0.1%eth0", False),
])
def test_is_host(value, ok):
    assert rules.is_host(value) is ok


def test_check_host():
    assert rules.check_host("server", "10.0.0.1") == "10.0.0.1"
    assert refused(rules.check_host, "server", "-oProxyCommand=x") == \
        "server '-oProxyCommand=x' is not a host name or an IP address"


# --- numbers ----------------------------------------------------------------------------

@pytest.mark.parametrize("value,expected", [(5, 5), ("7", 7), (" 8 ", 8), (9.0, 9), (0, 0), ("-3", -3), ("4.0", 4),
                                            ("+2", 2)])
def test_check_int_accepts(value, expected):
    assert rules.check_int("n", value, -5, 10) == expected


@pytest.mark.parametrize("value,why", [
    (True, "must be an integer"), (1.5, "must be an integer"), ("1.5", "must be an integer"), ("x", "must be an integer"),
    (None, "must be an integer"), (11, "must be between -5 and 10"), (-6, "must be between -5 and 10"),
    (10 ** 30, "must be between"),
])
def test_check_int_refuses(value, why):
    message = refused(rules.check_int, "n", value, -5, 10)
    assert message.startswith("n ") and why in message


@pytest.mark.parametrize("value,expected", [(0.5, 0.5), (1, 1), ("0.25", 0.25), (" 1e-1 ", 0.1)])
def test_check_number_accepts(value, expected):
    assert rules.check_number("f", value, 0, 1) == expected


@pytest.mark.parametrize("value,why", [
    (True, "must be a number"), ("x", "must be a number"), (None, "must be a finite number"),
    (float("nan"), "finite"), (float("inf"), "finite"), ("-inf", "finite"), (1.5, "between 0 and 1"),
    (-0.1, "between 0 and 1"), (1e300, "between 0 and 1"),
])
def test_check_number_refuses(value, why):
    message = refused(rules.check_number, "f", value, 0, 1)
    assert message.startswith("f ") and why in message


# --- paths -------------------------------------------------------------------------------

@pytest.mark.parametrize("value,expected", [
    ("/sys", "/sys"), ("/sys/", "/sys"), ("/a/./b", "/a/b"), ("//x//y", "/x/y"), ("/", "/"),
])
def test_check_path_normalises(value, expected):
    assert rules.check_path("root", value) == expected


@pytest.mark.parametrize("value,why", [
    ("", "must not be empty"), ("relative", "must be an absolute path"), ("-x", "must be an absolute path"),
    ("/a/../b", "'..'"), ("/a/..", "'..'"), ("/a\nb", "control character"), ("/a\x00b", "control character"),
    ("/" + "a" * 4096, "longer than"), (None, "must be a string"),
])
def test_check_path_refuses(value, why):
    message = refused(rules.check_path, "root", value)
    assert message.startswith("root ") and why in message


def test_check_path_relative_allowed_when_asked():
    assert rules.check_path("p", "a/./b", absolute=False) == "a/b"
    assert "must not start with '-'" in refused(rules.check_path, "p", "-a", absolute=False)
    assert "'..'" in refused(rules.check_path, "p", "a/../../b", absolute=False)


def test_check_inside():
    assert rules.check_inside("out", "sub/file", "/base") == "/base/sub/file"
    assert rules.check_inside("out", "/base/x", "/base/") == "/base/x"
    assert rules.check_inside("out", "/base", "/base") == "/base"
    assert "must stay inside /base" in refused(rules.check_inside, "out", "/etc/cron.d/x", "/base")
    assert "must stay inside /base" in refused(rules.check_inside, "out", "/base2/x", "/base")
    assert "'..'" in refused(rules.check_inside, "out", "sub/../../etc", "/base")
    assert "must not be empty" in refused(rules.check_inside, "out", "", "/base")
    assert refused(rules.check_inside, "out", "x", "relative").startswith("out (directory) 'relative'")


@pytest.mark.parametrize("value,ok", [
    ("report.json", True), ("a" * 255, True), ("a/b", False), (".", False), ("..", False), ("", False),
    ("-x", False), ("a" * 256, False), ("a\nb", False),
])
def test_check_file_name(value, ok):
    if ok:
        assert rules.check_file_name("name", value) == value
    else:
        assert refused(rules.check_file_name, "name", value).startswith("name ")


# --- binaries -------------------------------------------------------------------------------

def test_check_binary_absolute_executable(tmp_path):
    tool = tmp_path / "tool"
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o755)
    assert rules.check_binary("binary", str(tool)) == str(tool)
    assert rules.check_binary("binary", str(tmp_path) + "//tool") == str(tool)
    plain = tmp_path / "plain"
    plain.write_text("x")
    plain.chmod(0o644)
    assert "is not an executable file" in refused(rules.check_binary, "binary", str(plain))
    assert "is not an executable file" in refused(rules.check_binary, "binary", str(tmp_path))
    assert "is not an executable file" in refused(rules.check_binary, "binary", str(tmp_path / "missing"))
    assert rules.check_binary("binary", str(tmp_path / "missing"), must_exist=False) == str(tmp_path / "missing")


@pytest.mark.parametrize("value,why", [
    ("bin/kubectl", "must be an absolute path or a command name without '/'"),
    ("./kubectl", "must be an absolute path or a command name without '/'"),
    ("../bin/kubectl", "must be an absolute path or a command name without '/'"),
    ("/usr/../bin/kubectl", "'..'"), ("-kubectl", "must not start with '-'"),
    ("kubectl --insecure", "command name"), ("kubectl;id", "command name"), ("", "command name"),
])
def test_check_binary_refuses_relative_and_odd_values(value, why):
    message = refused(rules.check_binary, "kubectl.binary", value, must_exist=False)
    assert message.startswith("kubectl.binary ") and why in message


def test_check_binary_bare_name_looked_up_with_which():
    sh = "sh" if shutil.which("sh") else None
    assert sh, "a POSIX shell is on PATH wherever these tests run"
    assert rules.check_binary("binary", "sh", which=shutil.which) == "sh"
    assert "was not found on PATH" in refused(rules.check_binary, "binary", "no-such-tool-xyz", which=shutil.which)
    # without a lookup (or for a program elsewhere) only the shape is checked
    assert rules.check_binary("binary", "no-such-tool-xyz") == "no-such-tool-xyz"
    assert rules.check_binary("binary", "no-such-tool-xyz", which=shutil.which, must_exist=False) == \
        "no-such-tool-xyz"
    assert os.path.isabs(shutil.which("sh"))
