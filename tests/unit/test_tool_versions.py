# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tool, library and NIC versions: the text parsers and what discovery probes and records."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery import gather
from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery import rdma_discovery as rd
from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery import report
from ansible_collections.clusterops.commcheck.plugins.module_utils.discovery.sysfs_snapshot import snapshot_from_fs
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers import tool_versions as tv
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_nccl_tests import parse_nccl_tests

TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(TESTS, "fixtures", "corpus", "nccl_tests")
sys.path.insert(0, os.path.join(TESTS, "lab"))
import sysfs_tree  # noqa: E402  pylint: disable=wrong-import-position

NCCL_H = """/*************************************************************************
 * Copyright (c) 2015-2021, NVIDIA CORPORATION. All rights reserved.
 ************************************************************************/
#ifndef NCCL_H_
#define NCCL_H_
#define NCCL_MAJOR 2
#define NCCL_MINOR 18
#define NCCL_PATCH 3
#define NCCL_SUFFIX ""
#define NCCL_VERSION_CODE 21803
"""
CANN_INFO = "package_name=Ascend-cann-toolkit\nversion=7.0.RC1\ninnerversion=V100R001C15SPC002B224\narch=aarch64\n"
CANN_CFG = ("# version: 1.0\nruntime_running_version=[7.0.0.5.242:7.0.RC1]\n"
            "compiler_running_version=[7.0.0.5.242:7.0.RC1]\n")

PARSERS = (tv.perftest_version, tv.iperf3_version, tv.openmpi_version, tv.nccl_version, tv.nccl_tests_version,
           tv.nccl_header_version, tv.cann_version, tv.firmware_version, tv.driver_version)


@pytest.mark.parametrize("parser, text, expected", [
    (tv.perftest_version, "Version: 6.10\n", "6.10"),
    (tv.perftest_version, " Version: 5.96\n", "5.96"),
    # the run banner names no version
    (tv.perftest_version, "---\n                    RDMA_Write BW Test\n Dual-port       : OFF\n", None),
    (tv.iperf3_version, "iperf 3.12 (cJSON 1.7.15)\nLinux host 6.1.0 #1 SMP x86_64\nOptional features available: "
                        "CPU affinity setting\n", "3.12"),
    (tv.iperf3_version, "iperf 3.1.3\n", "3.1.3"),
    (tv.iperf3_version, "iperf version 2.1.9 (14 March 2023) pthreads\n", None),
    (tv.openmpi_version, "mpirun (Open MPI) 4.1.4\n\nReport bugs to http://www.open-mpi.org/community/help/\n",
     "4.1.4"),
    (tv.openmpi_version, "mpirun (Open MPI) 5.0.0rc12\n", "5.0.0rc12"),
    (tv.openmpi_version, "                Open MPI: 4.1.2\n  Open MPI repo revision: v4.1.2\n", "4.1.2"),
    (tv.openmpi_version, "HYDRA build details:\n    Version:                                 4.0.2\n", None),
    (tv.nccl_version, "GENOA-06:4766:4766 [0] NCCL INFO NCCL version 2.25.1+cuda12.8\n", "2.25.1+cuda12.8"),
    (tv.nccl_version, "NCCL version 2.27.3+cuda12.9\n", "2.27.3+cuda12.9"),
    (tv.nccl_version, "# nccl-tests version 2.18.5 nccl-headers=22809 nccl-library=22809\n", None),
    (tv.nccl_tests_version, "# nccl-tests version 2.18.5 nccl-headers=22809 nccl-library=22809\n", "2.18.5"),
    (tv.nccl_tests_version, "# nThread 1 nGpus 1 minBytes 8 maxBytes 134217728\n", None),
    (tv.nccl_header_version, NCCL_H, "2.18.3"),
    (tv.nccl_header_version, NCCL_H.replace('SUFFIX ""', 'SUFFIX "rc1"'), "2.18.3rc1"),
    (tv.nccl_header_version, NCCL_H.replace("#define NCCL_PATCH 3\n", ""), None),
    (tv.cann_version, CANN_INFO, "7.0.RC1"),
    (tv.cann_version, CANN_CFG, "7.0.RC1"),
    (tv.cann_version, "runtime_running_version=[7.0.0.5.242]\n", "7.0.0.5.242"),
    (tv.firmware_version, "28.39.1002\n", "28.39.1002"),
    (tv.firmware_version, "", None),
    (tv.driver_version, "5.8-1.1.2\n", "5.8-1.1.2"),
    (tv.driver_version, "24.10-1.1.4.0\n", "24.10-1.1.4.0"),
])
def test_each_parser_reads_the_real_format(parser, text, expected):
    assert parser(text) == expected


def _corpus(name):
    with open(os.path.join(CORPUS, name)) as handle:
        return handle.read()


def test_the_nccl_corpus_versions_agree_with_the_nccl_tests_parser():
    text = _corpus("all_gather_perf_v2.18.5_2node_gb10.txt")
    assert tv.nccl_tests_version(text) == "2.18.5" == parse_nccl_tests(text)["version"]
    text = _corpus("all_reduce_perf_nccl_debug_info_warn_cuda_failure.txt")
    assert tv.nccl_version(text) == "2.25.1+cuda12.8" == parse_nccl_tests(text)["nccl_version"]


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.none(), st.text(), st.binary(), st.integers(), st.lists(st.text(max_size=20), max_size=5)))
def test_no_parser_raises_on_junk(data):
    for parser in PARSERS:
        value = parser(data)
        assert value is None or (isinstance(value, str) and 0 < len(value) <= tv.MAX_VERSION_CHARS)


def test_a_very_long_version_is_cut():
    assert len(tv.perftest_version("Version: 1." + "9" * 500)) == tv.MAX_VERSION_CHARS


# --- discovery ------------------------------------------------------------------------

class _Scripted(object):
    """A transport with some programs, their outputs and some files; records every call."""

    remote = False

    def __init__(self, bins=(), outputs=None, files=None):
        self.bins = set(bins)
        self.outputs = outputs or {}
        self.files = files or {}
        self.calls = []

    def which(self, name):
        return "/usr/bin/" + name if name in self.bins else None

    def read_file(self, path):
        self.calls.append(("read", path))
        return self.files.get(path)

    def run(self, argv, timeout, capture=None):  # pylint: disable=unused-argument
        self.calls.append(("run", list(argv), timeout))
        res = self.outputs.get(argv[0].rsplit("/", 1)[-1])
        if isinstance(res, Exception):
            raise res
        return dict(res or {"rc": 0, "stdout": "", "stderr": "", "timed_out": False})


def test_tool_version_probes_ask_each_installed_tool_once_with_a_deadline():
    transport = _Scripted(bins=("ib_write_bw", "mpirun", "iperf3"), outputs={
        "ib_write_bw": {"rc": 0, "stdout": "Version: 6.10\n", "stderr": ""},
        # Open MPI writes its version on stdout, some builds on stderr
        "mpirun": {"rc": 0, "stdout": "", "stderr": "mpirun (Open MPI) 4.1.4\n"},
        "iperf3": OSError("exec format error")},
        files={"/usr/local/cuda/include/nccl.h": NCCL_H,
               "/usr/local/Ascend/ascend-toolkit/latest/version.cfg": CANN_CFG})
    found = gather.tool_version_probes(transport)
    assert found == {"perftest": "6.10", "openmpi": "4.1.4", "iperf3": None, "nccl": "2.18.3",
                     "nccl_tests": None, "cann": "7.0.RC1"}
    runs = [call for call in transport.calls if call[0] == "run"]
    assert [call[1] for call in runs] == [["/usr/bin/ib_write_bw", "--version"], ["/usr/bin/iperf3", "--version"],
                                          ["/usr/bin/mpirun", "--version"]]
    assert all(call[2] == gather.VERSION_TIMEOUT for call in runs)
    # the first nccl.h that names a version ends the search
    assert ("read", "/usr/local/nccl/include/nccl.h") not in transport.calls


def test_no_tool_installed_gives_none_for_each():
    found = gather.tool_version_probes(_Scripted())
    assert set(found) == set(rd.TOOL_VERSION_KEYS) and all(v is None for v in found.values())


def _tree_with_driver(tmp_path, driver_version="5.8-1.1.2"):
    root = str(tmp_path / "sys")
    sysfs_tree.build_sysfs(root, [
        {"name": "mlx5_0", "hca_type": "MT4129", "fw_ver": "28.39.1002", "ports": [{"netdev": "eth0"}]},
        {"name": "mlx5_1", "hca_type": "MT4129", "fw_ver": "28.41.1000", "ports": [{"netdev": "eth1"}]}])
    pci = os.path.realpath(os.path.join(root, "class", "infiniband", "mlx5_0", "device"))
    drivers = os.path.join(root, "bus", "pci", "drivers", "mlx5_core")
    os.makedirs(drivers)
    os.symlink(os.path.relpath(drivers, pci), os.path.join(pci, "driver"))
    if driver_version:
        os.makedirs(os.path.join(root, "module", "mlx5_core"), exist_ok=True)
        with open(os.path.join(root, "module", "mlx5_core", "version"), "w") as handle:
            handle.write(driver_version + "\n")
    return root


def test_discovery_records_firmware_driver_and_model_per_device(tmp_path):
    snap = snapshot_from_fs(_tree_with_driver(tmp_path))
    facts = rd.discover(snap, {"tool_versions": {"perftest": "6.10", "nccl": None}})
    versions = facts["host"]["versions"]
    assert versions["firmware"] == {"mlx5_0": "28.39.1002", "mlx5_1": "28.41.1000"}
    assert versions["driver"] == {"mlx5_0": "mlx5_core 5.8-1.1.2"}
    assert versions["nic_model"] == {"mlx5_0": "MT4129", "mlx5_1": "MT4129"}
    assert versions["perftest"] == "6.10" and versions["nccl"] is None and versions["iperf3"] is None
    record = report.discovery_records("h1", facts)[0]
    assert record["metrics"]["versions"] == {
        "perftest": "6.10", "firmware": versions["firmware"], "driver": versions["driver"],
        "nic_model": versions["nic_model"]}


def test_a_driver_without_a_version_file_is_named_alone(tmp_path):
    snap = snapshot_from_fs(_tree_with_driver(tmp_path, driver_version=None))
    assert rd.discover(snap)["host"]["versions"]["driver"] == {"mlx5_0": "mlx5_core"}


def test_collect_on_a_tree_probes_no_tool_version_but_reads_the_firmware(tmp_path):
    root = _tree_with_driver(tmp_path)
    transport = _Scripted(bins=("ib_write_bw",))
    facts = rd.collect(transport, sysfs_root=root, address_source="gids")
    assert not [call for call in transport.calls if call[0] == "run"]
    assert facts["host"]["versions"]["perftest"] is None
    assert facts["host"]["versions"]["firmware"]["mlx5_0"] == "28.39.1002"
