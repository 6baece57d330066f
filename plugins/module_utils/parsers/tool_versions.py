# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The version a test tool, library or NIC reports, from its text (pure).

One function per source, text -> version string or None. They never raise:
junk, bytes or None give None.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import re

from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.text import to_text

MAX_VERSION_CHARS = 64
_VERSION = r"(\d+(?:\.[\w+\-]+)*)"
# `ib_write_bw --version` -> "Version: 6.10"
_PERFTEST = re.compile(r"(?mi)^\s*version\s*:\s*" + _VERSION)
# `iperf3 --version` -> "iperf 3.12 (cJSON 1.7.15)"
_IPERF3 = re.compile(r"(?m)^\s*iperf\s+(3(?:\.[\w+\-]+)*)")
# `mpirun --version` -> "mpirun (Open MPI) 4.1.4"; ompi_info -> "Open MPI: 4.1.4"
_OPENMPI = re.compile(r"(?m)(?:\(Open MPI\)|^\s*Open MPI:)\s+" + _VERSION)
# NCCL's INFO (or NCCL_DEBUG=VERSION) line -> "NCCL version 2.18.3+cuda12.2";
# RCCL's -> "RCCL version : 2.22.3-HEAD:7d8d67c"
_NCCL = re.compile(r"\b[NR]CCL version\s*:?\s+(\d+(?:\.[\w+\-]+)*(?::\w+\+?)?)")
# nccl-tests' header -> "# nccl-tests version 2.13.8 nccl-headers=21803 nccl-library=21803"
_NCCL_TESTS = re.compile(r"\bnccl-tests version\s+" + _VERSION)
# nccl.h: "#define NCCL_MAJOR 2" ... "#define NCCL_SUFFIX \"\""
_NCCL_DEFINE = re.compile(r'(?m)^\s*#\s*define\s+NCCL_(MAJOR|MINOR|PATCH|SUFFIX)\s+"?([\w.\-]*)"?')
# CANN's ascend_toolkit_install.info "version=7.0.RC1"; version.cfg "runtime_running_version=[7.0.0.5.242:7.0.RC1]"
_CANN_INFO = re.compile(r"(?m)^\s*version\s*=\s*" + _VERSION)
_CANN_CFG = re.compile(r"(?m)^\s*\w*running_version\s*=\s*\[([\w.\-]+)(?::([\w.\-]+))?\]")
# sysfs fw_ver "28.39.1002"; /sys/module/<driver>/version "5.8-1.1.2"
_FIRMWARE = re.compile(r"^\s*" + _VERSION)
_DRIVER = re.compile(r"^\s*(\d[\w.+\-]*)")


def _first(pattern, text, group=1):
    match = pattern.search(to_text(text))
    if not match or not match.group(group):
        return None
    return match.group(group)[:MAX_VERSION_CHARS]


def perftest_version(text):
    """'Version: 6.10' (``ib_write_bw --version``) -> '6.10'."""
    return _first(_PERFTEST, text)


def iperf3_version(text):
    """'iperf 3.12 (cJSON 1.7.15)' -> '3.12'."""
    return _first(_IPERF3, text)


def openmpi_version(text):
    """'mpirun (Open MPI) 4.1.4' -> '4.1.4' (another MPI's text -> None)."""
    return _first(_OPENMPI, text)


def nccl_version(text):
    """'NCCL INFO NCCL version 2.18.3+cuda12.2' -> '2.18.3+cuda12.2'; RCCL's 'RCCL version : 2.22.3-HEAD:7d8d67c'
    -> '2.22.3-HEAD:7d8d67c'."""
    return _first(_NCCL, text)


def nccl_tests_version(text):
    """'# nccl-tests version 2.13.8 nccl-headers=21803 ...' -> '2.13.8'."""
    return _first(_NCCL_TESTS, text)


def nccl_header_version(text):
    """nccl.h's NCCL_MAJOR / NCCL_MINOR / NCCL_PATCH (/ NCCL_SUFFIX) defines -> '2.18.3'."""
    parts = dict((name, value) for name, value in _NCCL_DEFINE.findall(to_text(text)))
    numbers = [parts.get(name) for name in ("MAJOR", "MINOR", "PATCH")]
    if not all(n and n.isdigit() for n in numbers):
        return None
    return (".".join(numbers) + (parts.get("SUFFIX") or ""))[:MAX_VERSION_CHARS]


def cann_version(text):
    """CANN's 'version=7.0.RC1' (install info) or version.cfg's running version -> '7.0.RC1'."""
    found = _first(_CANN_INFO, text)
    if found:
        return found
    match = _CANN_CFG.search(to_text(text))
    if not match:
        return None
    return (match.group(2) or match.group(1))[:MAX_VERSION_CHARS]


def firmware_version(text):
    """sysfs ``fw_ver`` ('28.39.1002\\n') -> '28.39.1002'; '' or junk without a digit -> None."""
    return _first(_FIRMWARE, text)


def driver_version(text):
    """``/sys/module/<driver>/version`` ('5.8-1.1.2\\n', '24.10-1.1.4') -> the first word."""
    return _first(_DRIVER, text)
