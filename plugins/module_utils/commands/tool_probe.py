# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which test tools and accelerator evidence a host (or its pod) has, in one small command.

The probe is one constant shell script run through the module's transport (the
host, or ``kubectl exec`` into the pod); what it looks for arrives as its
positional arguments, never inside the script, so no value can become code or
a flag. A key is ``cmd:NAME`` (looked up on PATH; a NAME with a slash must be
an executable file) or ``exists:PATH`` (an absolute path that must exist). The
script prints ``KEY<TAB>PATH`` for every key found and always exits 0, so a
non-zero exit status means the probe itself could not run.

Used by the ``tool_probe`` module and, so that the one-click check pays one
module run per host for both, by ``rdma_facts`` (option ``probe``).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.clusterops.commcheck.plugins.module_utils.commands.runner import CommandError
from ansible_collections.clusterops.commcheck.plugins.module_utils.options.option_rules import OptionError, show

PROBE_SCRIPT = (
    'for a in "$@"; do v=${a#*:}; '
    'case $a in '
    'exists:*) [ -e "$v" ] && printf \'%s\\t%s\\n\' "$a" "$v";; '
    'cmd:/*) [ -f "$v" ] && [ -x "$v" ] && printf \'%s\\t%s\\n\' "$a" "$v";; '
    'cmd:*) p=$(command -v "$v" 2>/dev/null) && printf \'%s\\t%s\\n\' "$a" "$p";; '
    'esac; done; exit 0'
)
KEY_MAX = 4096
KEYS_MAX = 512


def check_probe_keys(keys, option="keys"):
    """The keys as a list of str; raises OptionError naming the option and the first bad key."""
    if not isinstance(keys, (list, tuple)):
        raise OptionError("%s must be a list of probe keys, got %s" % (option, show(keys)))
    if len(keys) > KEYS_MAX:
        raise OptionError("%s: at most %d probe keys, got %d" % (option, KEYS_MAX, len(keys)))
    for index, key in enumerate(keys):
        name = "%s[%d] %s" % (option, index, show(key))
        if not isinstance(key, str) or not key or len(key) > KEY_MAX:
            raise OptionError("%s must be a non-empty string of at most %d characters" % (name, KEY_MAX))
        if any(c in key for c in "\0\n\r\t"):
            raise OptionError("%s must not contain NUL, tab or line breaks" % name)
        kind, _sep, value = key.partition(":")
        if kind not in ("cmd", "exists") or not value:
            raise OptionError("%s must be cmd:NAME or exists:/PATH" % name)
        if kind == "exists" and not value.startswith("/"):
            raise OptionError("%s: exists: takes an absolute path" % name)
        if kind == "cmd" and value.startswith("-"):
            raise OptionError("%s: a command name must not start with '-'" % name)
    return list(keys)


def probe_argv(keys, shell="sh"):
    """The probe's argv: the constant script, then the keys as its positional arguments."""
    return [shell, "-c", PROBE_SCRIPT, "sh"] + list(keys)


def found_tools(stdout, keys):
    """{key: path} from the probe's output, only for keys that were asked for."""
    found = {}
    for line in stdout.splitlines():
        key, sep, path = line.partition("\t")
        if sep and key in keys and path:
            found[key] = path
    return found


def probe_tools(transport, keys, timeout):
    """Run the probe through transport: {looked_for, rc, stdout_lines, stderr, found, cmd}; never raises on rc."""
    keys = check_probe_keys(keys)
    if not keys:
        return {"looked_for": [], "rc": 0, "stdout_lines": [], "stderr": "", "found": {}, "cmd": []}
    # on the host, sh is found even where the PATH the tools are looked up on lacks it; a pod has its own
    shell = "sh" if getattr(transport, "remote", False) else (transport.which("sh") or "sh")
    argv = probe_argv(keys, shell)
    # in a pod without the deadline wrapper, which needs timeout(1): the probe is as light as "command -v"
    run = getattr(transport, "run_plain", None) or transport.run
    try:
        res = run(argv, timeout)
    except CommandError as exc:
        res = {"rc": 127, "stdout": "", "stderr": str(exc)}
    stdout = res.get("stdout") or ""
    rc = res.get("rc")
    if res.get("timed_out"):
        rc = rc if rc not in (None, 0) else 124
    return {
        "looked_for": keys,
        "rc": rc,
        "stdout_lines": stdout.splitlines(),
        "stderr": res.get("stderr") or "",
        "found": found_tools(stdout, keys),
        "cmd": argv,
    }
