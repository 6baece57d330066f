# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The rules every option value obeys before it may reach a command or a file.

One place for the checks that modules, action plugins and roles share: names
(RDMA devices, netdevs, Kubernetes objects, hosts), values that would turn
into flags, numbers with ranges, binaries, and paths that must stay inside
the directory their option names. Every check raises ``OptionError`` with a
message that names the option and quotes at most ``QUOTE_LIMIT`` characters
of the rejected value, and returns the cleaned value otherwise.

The tool-specific modules keep their own error classes as subclasses of
``OptionError``, so a caller catches one type.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import ipaddress
import math
import os
import posixpath
import re
import stat

QUOTE_LIMIT = 200
PATH_MAX = 4096

# Kernel RDMA device names (ib_register_device: up to IB_DEVICE_NAME_MAX=64,
# e.g. mlx5_0, mlx5_bond_0, rocep65s0f0, hns_0, irdma-x722) and netdev names
# (IFNAMSIZ-1 = 15, no '/', ':' only for aliases, never whitespace).
_RDMA_DEVICE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$")
_NETDEV = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.:@-]{0,14}$")
# RFC 1123 subdomain (pods, namespaces, nodes, containers) and label values.
_K8S_NAME = re.compile(r"^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_K8S_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")
_K8S_LABEL_VALUE = re.compile(r"^(|[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)$")
# kubeconfig context names are free text in kubeconfig; these are the ones
# that cloud CLIs write (arn:aws:eks:..., gke_project_zone_name, user@cluster).
_CONTEXT = re.compile(r"^[A-Za-z0-9_.@:/][-A-Za-z0-9_.@:/]{0,252}$")
_HOSTNAME = re.compile(r"^(?=.{1,253}$)[A-Za-z0-9_]([A-Za-z0-9_-]{0,62})(\.[A-Za-z0-9_]([A-Za-z0-9_-]{0,62}))*\.?$")
# An integer as text; '.0' as Ansible's own int conversion takes it (a float templated into text).
_INT_TEXT = re.compile(r"^\s*([-+]?\d+)(\.0*)?\s*$")
_WORD = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.,:=/+@%-]{0,255}$")
_BARE_COMMAND = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.+-]{0,254}$")
# Control characters: C0 and C1 (ESC starts terminal sequences, NEL ends a line), the Unicode line and
# paragraph separators (str.splitlines and JavaScript end a line there) and the bidirectional
# overrides and isolates, which make a name in a report or a terminal read as another.
CONTROL_CHARACTERS = re.compile(u"[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_CONTROL = CONTROL_CHARACTERS

NAME_KINDS = {
    "rdma_device": (_RDMA_DEVICE, "an RDMA device name (letters, digits, _ . : -, at most 64)"),
    "netdev": (_NETDEV, "a network interface name (at most 15 characters)"),
    "k8s_name": (_K8S_NAME, "a Kubernetes name (RFC 1123: lower-case letters, digits, '-' and '.')"),
    "k8s_label": (_K8S_LABEL, "a DNS-1123 label (lower-case letters, digits and '-', at most 63)"),
    "k8s_label_value": (_K8S_LABEL_VALUE, "a Kubernetes label value"),
    "k8s_context": (_CONTEXT, "a kubeconfig context name"),
    "env_name": (re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$"), "an environment variable name"),
    "word": (_WORD, "one word of letters, digits and _ . , : = / + @ % -"),
}


class OptionError(ValueError):
    """An option value that must not reach a command line or a file."""


def show(value, limit=QUOTE_LIMIT):
    """repr(value), cut to about ``limit`` characters so a huge value cannot flood a message."""
    text = repr(value)
    if len(text) <= limit:
        return text
    return "%s...(%d characters)" % (text[:limit], len(text))


def fail(option, value, why):
    raise OptionError("%s %s %s" % (option, show(value), why))


def check_text(option, value, max_length=PATH_MAX):
    """A string without control characters (NUL, newline, escape...) and not too long."""
    if not isinstance(value, str):
        fail(option, value, "must be a string")
    if _CONTROL.search(value):
        fail(option, value, "contains a control character (NUL, newline, tab, escape, a Unicode line separator or "
                            "direction override...)")
    if len(value) > max_length:
        fail(option, value, "is longer than %d characters" % max_length)
    return value


def check_not_flag(option, value):
    """A value that goes after a flag or as a positional must not read as an option."""
    check_text(option, value)
    if value.startswith("-"):
        fail(option, value, "must not start with '-' (it would be read as an option)")
    return value


def check_name(option, value, kind):
    """A name of the given kind (see NAME_KINDS), never a flag."""
    pattern, what = NAME_KINDS[kind]
    check_not_flag(option, value)
    if not pattern.match(value):
        fail(option, value, "is not %s" % what)
    return value


def is_host(value):
    """True for an IPv4/IPv6 address or a DNS host name (never something that starts with '-')."""
    if not isinstance(value, str) or not value or value.startswith("-") or _CONTROL.search(value):
        return False
    try:
        ipaddress.ip_address(value)
        return True
    except ValueError:
        return bool(_HOSTNAME.match(value))


def check_host(option, value):
    """A host name or an IP address."""
    if not is_host(value):
        fail(option, value, "is not a host name or an IP address")
    return value


def check_int(option, value, low, high):
    """An integer in [low, high]; an integral float or a digit string ('8', '8.0') is accepted, a bool is not."""
    if isinstance(value, bool):
        fail(option, value, "must be an integer")
    digits = _INT_TEXT.match(value) if isinstance(value, str) else None
    if digits:
        try:
            value = int(digits.group(1))
        except ValueError:  # Python refuses to read an integer of thousands of digits
            fail(option, value, "must be between %s and %s" % (low, high))
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if not isinstance(value, int):
        fail(option, value, "must be an integer")
    if value < low or value > high:
        fail(option, value, "must be between %s and %s" % (low, high))
    return value


def check_number(option, value, low, high):
    """A finite number in [low, high] (a numeric string is accepted, a bool is not)."""
    if isinstance(value, bool):
        fail(option, value, "must be a number")
    number = value
    if isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            fail(option, value, "must be a number")
    if not isinstance(number, (int, float)) or not _finite(number):
        fail(option, value, "must be a finite number")
    if number < low or number > high:
        fail(option, value, "must be between %s and %s" % (low, high))
    return number


def _finite(number):
    try:
        return not (math.isnan(number) or math.isinf(number))
    except OverflowError:  # an int beyond any float (10**400)
        return False


def takes_as_text(value):
    """True for a value a text option may take: a string, or an integer (its digits are its text).

    Ansible would turn anything into text: yes into 'True', [a] into "['a']",
    2024.10 into '2024.1'; such a value was not meant as that text.
    """
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def check_path(option, value, absolute=True):
    """A normalised path without '..' components or control characters.

    ``absolute``: the path must start with '/' (relative paths depend on
    where a process happens to run).
    """
    check_text(option, value)
    if value == "":
        fail(option, value, "must not be empty")
    if absolute and not value.startswith("/"):
        fail(option, value, "must be an absolute path")
    if not absolute and value.startswith("-"):
        fail(option, value, "must not start with '-'")
    if ".." in value.split("/"):
        fail(option, value, "must not contain '..' components")
    normal = posixpath.normpath(value)
    # normpath keeps a leading '//' (POSIX allows it a meaning); nothing here wants that.
    if normal.startswith("//"):
        normal = "/" + normal.lstrip("/")
    return normal


def check_inside(option, value, directory):
    """A path (absolute, or relative to ``directory``) that stays inside ``directory``."""
    base = check_path("%s (directory)" % option, directory)
    check_text(option, value)
    if value == "":
        fail(option, value, "must not be empty")
    if ".." in value.split("/"):
        fail(option, value, "must not contain '..' components")
    joined = value if value.startswith("/") else posixpath.join(base, value)
    path = check_path(option, joined)
    if path != base and not path.startswith(base.rstrip("/") + "/"):
        fail(option, value, "must stay inside %s" % base)
    return path


def check_not_linked(option, path, directory):
    """``path`` (inside ``directory``) when nothing below ``directory`` on the way to it is a symbolic link.

    The check names the directory the files go in; a link planted below it
    (by another user of a shared directory, or left by an earlier run) would
    take them anywhere. ``directory`` itself is the operator's choice, links
    included. Parts that do not exist yet are created by the writer, as
    directories.
    """
    base = posixpath.normpath(directory)
    rest = posixpath.relpath(posixpath.normpath(path), base)
    if rest == ".":
        return path
    if rest.split("/")[0] == "..":
        fail(option, path, "must stay inside %s" % base)
    current = base
    for part in rest.split("/"):
        current = posixpath.join(current, part)
        if os.path.islink(current):
            fail(option, path, "leads through the symbolic link %s: files are written only inside %s"
                 % (show(current), base))
    return path


def check_file_name(option, value):
    """One file name: no '/', not '.' or '..', no control characters, not a flag."""
    check_not_flag(option, value)
    if value in ("", ".", "..") or "/" in value or len(value) > 255:
        fail(option, value, "must be a plain file name (no '/', not '.' or '..')")
    return value


def check_binary(option, value, which=None, must_exist=True):
    """A program: an absolute path to an executable file, or a bare name (found on PATH).

    Relative paths and '..' are refused: what they reach depends on the
    working directory. ``which`` looks a bare name up (shutil.which, or the
    transport's own); ``must_exist=False`` skips the existence checks for a
    program that runs elsewhere (inside a pod, on another host).
    """
    check_not_flag(option, value)
    if value.startswith("/"):
        path = check_path(option, value)
        if must_exist and not (os.path.isfile(path) and os.access(path, os.X_OK)):
            fail(option, value, "is not an executable file")
        return path
    if "/" in value or not _BARE_COMMAND.match(value):
        fail(option, value, "must be an absolute path or a command name without '/'")
    if must_exist and which is not None and not which(value):
        fail(option, value, "was not found on PATH")
    return value


# ---------------------------------------------------------------- programs and configuration files

# What a message says instead of the value of an option that names a sensitive file (a kubeconfig holds the
# cluster's credentials: its path is not shown in messages, results, records or logs either).
WITHHELD = "(value not shown)"
# A kubeconfig is YAML or JSON with these top-level keys (kubectl config view); any other file (/etc/shadow,
# a private key, a binary) is refused before kubectl reads it and prints part of it in its error.
KUBECONFIG_TEXT = re.compile(r'^(?:apiVersion|kind|clusters|contexts|current-context|users|preferences)\s*:'
                             r'|"(?:apiVersion|clusters|contexts|current-context|users)"\s*:', re.M)
CONFIG_MAX_BYTES = 16 * 1024 * 1024


class Program(object):
    """A program an option may name, known by its file name and, for one that acts on the cluster, by what it
    prints about itself.

    ``names``: words one of which its file name must hold (``kubectl`` takes kubectl, kubectl-1.30,
    microk8s.kubectl; never sh or true). ``version_args`` / ``version``: the arguments that make it say which
    program it is, and the pattern a line of that output matches; None for a program recognised by name only.
    """

    def __init__(self, name, names, version_args=None, version=None):
        self.name = name
        self.names = tuple(names)
        self.version_args = list(version_args or [])
        self.version = re.compile(version, re.M) if version else None

    def named(self, path):
        """True when the file name of ``path`` holds one of the names as a word (split at '.', '-', '_')."""
        words = re.split(r"[._-]", posixpath.basename(path))
        return any(name in words for name in self.names)


PROGRAMS = {
    # kubectl version --client: 'Client Version: v1.30.2' (1.28 on), 'Client Version: version.Info{...
    # GitVersion:"v1.24.0"...}' before; it does not contact the cluster.
    "kubectl": Program("kubectl", ("kubectl",), ("version", "--client"),
                       r'^Client Version: (?:v\d+\.\d+|version\.Info\{.*GitVersion:"v\d+\.\d+)'),
    # scontrol --version: 'slurm 23.11.4' (Debian and Ubuntu build: 'slurm-wlm 21.08.5')
    "scontrol": Program("scontrol", ("scontrol",), ("--version",), r"^slurm(?:-wlm)? \d+\.\d+"),
    # srun --version: the same line as scontrol's (Slurm's commands print one version line)
    "srun": Program("srun", ("srun",), ("--version",), r"^slurm(?:-wlm)? \d+\.\d+"),
    # mpirun of Open MPI (orterun, prterun) or MPICH / Intel MPI (mpiexec, mpiexec.hydra), Debian's mpirun.openmpi
    "mpirun": Program("mpirun", ("mpirun", "mpiexec", "orterun", "prterun")),
}


def check_program(option, value, program, which=None, must_exist=True):
    """``check_binary``, and the file name says it is ``program`` (``PROGRAMS``): /bin/sh is never kubectl."""
    path = check_binary(option, value, which=which, must_exist=must_exist)
    known = PROGRAMS[program]
    if not known.named(path):
        fail(option, value, "is not %s: the program's file name must be %s (or hold it as a word, like %s-1.30)"
             % (program, " or ".join(known.names), known.names[0]))
    return path


def identity_argv(binary, program):
    """The argv that makes ``binary`` say which program it is (``kubectl version --client``, ``scontrol
    --version``); None for a program that is recognised by its name only."""
    known = PROGRAMS[program]
    return [binary] + known.version_args if known.version else None


def identity_problem(option, binary, program, result):
    """None when ``result`` (a runner result of ``identity_argv``) shows ``binary`` is ``program``; else what
    to tell the operator, naming the option. Nothing else may run the binary before this says None."""
    known = PROGRAMS[program]
    if result.get("rc") == 0 and known.version.search(result.get("stdout") or ""):
        return None
    said = ((result.get("stdout") or "") + (result.get("stderr") or "")).strip().splitlines()
    return "%s %s is not %s: %s answered %s (rc %s), not %s's version line; set %s to the %s program" % (
        option, show(binary), program, " ".join([posixpath.basename(binary)] + known.version_args),
        show(said[0] if said else "nothing", 120), result.get("rc"), program, option, program)


# Command-line options whose value names a file of credentials: kubectl's kubeconfig, iperf3's RSA private key
# and its authorized users (their paths are never shown; see ``withhold_secret_paths``).
SECRET_FILE_FLAGS = ("--kubeconfig", "--rsa-private-key-path", "--authorized-users-path")


def secret_paths(argv):
    """[(flag, path)] of the credential files an argv names (``--flag path`` and ``--flag=path``)."""
    out = []
    for index, item in enumerate(argv):
        flag, equals, value = str(item).partition("=")
        if flag in SECRET_FILE_FLAGS:
            if equals:
                out.append((flag, value))
            elif index + 1 < len(argv):
                out.append((flag, argv[index + 1]))
    return out


def withhold_secret_paths(argv):
    """``argv`` as results, messages and records show it: the path of every credential file
    (``SECRET_FILE_FLAGS``) is ``WITHHELD``."""
    shown = [str(item) for item in argv]
    for index, item in enumerate(shown):
        flag, equals, _value = item.partition("=")
        if flag in SECRET_FILE_FLAGS:
            if equals:
                shown[index] = "%s=%s" % (flag, WITHHELD)
            elif index + 1 < len(shown):
                shown[index + 1] = WITHHELD
    return shown


def withhold(text, path):
    """``text`` (a tool's message) with every occurrence of the sensitive ``path`` replaced by ``WITHHELD``."""
    text = text or ""
    return text.replace(path, WITHHELD) if path else text


def _withheld(check, option, value, sensitive, *args):
    """Run a check; for a sensitive value its message shows ``WITHHELD`` instead of the value."""
    try:
        return check(option, value, *args)
    except OptionError as exc:
        if not sensitive:
            raise
        raise OptionError(str(exc).replace(show(value), WITHHELD))


def fail_file(option, value, why, sensitive):
    """Raise the problem of a file option, quoting its value unless the file is sensitive."""
    raise OptionError("%s %s %s" % (option, WITHHELD if sensitive else show(value), why))


def check_config_path(option, value, sensitive=False, home=False):
    """The form of an option that names a configuration file: an absolute path without '..', never a flag.

    ``home``: '~/...' (or '~user/...') is taken too, as a module expands it on the host it runs on (a role's
    variable, checked before that). ``sensitive``: messages never show the value.
    """
    _withheld(check_text, option, value, sensitive)
    if home and re.match(r"^~[A-Za-z0-9_.-]*/", value):
        rest = "/" + value.split("/", 1)[1]
        try:
            check_path(option, rest)
        except OptionError as exc:
            raise OptionError(str(exc).replace(show(rest), WITHHELD if sensitive else show(value)))
        return value
    if not value.startswith("/"):
        fail_file(option, value, "must be an absolute path%s" % (" (or start with ~/)" if home else ""), sensitive)
    return _withheld(check_path, option, value, sensitive)


def check_config_file(option, value, sensitive=False, text=None):
    """``check_config_path``, then on this host: a regular file (not a directory, device or FIFO) that the
    run's user can read, at most ``CONFIG_MAX_BYTES``; with ``text`` (a pattern) its contents must match it
    (``KUBECONFIG_TEXT``: the file is a kubeconfig). Returns the normalised path."""
    path = check_config_path(option, value, sensitive)
    try:
        info = os.stat(path)
    except OSError as exc:
        fail_file(option, value, "is not a file the run's user can read (%s)" % (exc.strerror or exc), sensitive)
    if not stat.S_ISREG(info.st_mode):
        fail_file(option, value, "is not a regular file", sensitive)
    if not os.access(path, os.R_OK):
        fail_file(option, value, "is not readable by the user the run runs as", sensitive)
    if info.st_size > CONFIG_MAX_BYTES:
        fail_file(option, value, "is larger than %d bytes" % CONFIG_MAX_BYTES, sensitive)
    if text is not None and not text.search(_read_text(path)):
        fail_file(option, value, "is not a %s file" % ("kubeconfig" if text is KUBECONFIG_TEXT else "configuration"),
                  sensitive)
    return path


def _read_text(path):
    try:
        with open(path, "rb") as handle:
            return handle.read(CONFIG_MAX_BYTES).decode("utf-8", "replace")
    except (IOError, OSError):
        return ""
