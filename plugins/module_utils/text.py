# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Text helpers shared by the parsers: launcher prefixes, numbers, key names."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import math
import re

# mpirun --tag-output: "[1,0]<stdout>:" ; srun --label: "0: " or "[0] ";
# mpirun --timestamp-output / pdsh "host: " are not stripped (ambiguous).
_LAUNCHER_PREFIX = re.compile(
    r"^(?:\[\d+,\d+\]<(?:stdout|stderr|stddiag)>:\s?"
    r"|\[\d+\]\s"
    r"|\d+:\s(?=\s*[#\dA-Za-z]))"
)
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


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
    return _LAUNCHER_PREFIX.sub("", line, count=1)


def clean_lines(text):
    """Split raw tool output into lines without CRs, ANSI codes and launcher prefixes."""
    lines = []
    for raw in to_text(text).replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        line = _ANSI.sub("", raw).replace("\x00", "")
        lines.append(strip_launcher_prefix(line))
    return lines


def snake_case(name):
    """'Number of qps' -> 'number_of_qps', 'CQ Moderation' -> 'cq_moderation'."""
    name = re.sub(r"[^0-9A-Za-z]+", "_", to_text(name).strip())
    name = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name)
    return re.sub(r"_+", "_", name).strip("_").lower()


def to_int(value, default=None):
    """Parse an int (decimal or 0x hex); default when it is not one."""
    try:
        text = to_text(value).strip()
        if text.lower().startswith("0x"):
            return int(text, 16)
        return int(text)
    except (TypeError, ValueError):
        try:
            number = float(to_text(value).strip())
        except (TypeError, ValueError):
            return default
        if not math.isfinite(number):
            return default
        return int(number) if number == int(number) else default


def to_float(value, default=None):
    """Parse a float; default for N/A, empty, nan or junk."""
    try:
        number = float(to_text(value).strip())
    except (TypeError, ValueError):
        return default
    if not math.isfinite(number):
        return default
    return number


MIB_PER_SEC_TO_GBPS = 2 ** 20 * 8 / 1e9


def error_entry(code, message, catalog):
    """Build {code, message, cause, fix} from a parser's error catalog."""
    cause, fix = catalog.get(code, catalog.get("unknown", ("", "")))
    return {"code": code, "message": to_text(message).strip(), "cause": cause, "fix": fix}
