# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""perftest from GPU memory: --use_cuda / --use_cuda_dmabuf as managed flags, and the CUDA lines it prints."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import pytest

from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import perftest_cmd as pc
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_perftest import parse_perftest

SIDE = {"role": "client", "test": "write", "metric": "bw", "device": "mlx5_0", "gid_index": 3,
        "server": "10.0.0.2", "duration": 5}

# What perftest prints for --use_cuda=0 --use_cuda_dmabuf, word for word from linux-rdma/perftest
# src/cuda_memory.c (init_gpu, cuda_allocate_device_memory_buffer; releases 23.07 to 25.01 print
# "cuMemAlloc() of a ..." / "allocated GPU buffer address at ...", newer ones "allocated GPU buffer of a ...").
CUDA_LINES = """initializing CUDA
Listing all CUDA devices in system:
CUDA device 0: PCIe address is 18:00
CUDA device 1: PCIe address is 2A:00

Picking device No. 0
[pid = 412907, dev = 0] device name = [NVIDIA H100 80GB HBM3]
creating CUDA Ctx
making it the current CUDA Ctx
CUDA device integrated: 0
cuMemAlloc() of a 131072 bytes GPU buffer
allocated GPU buffer address at 00007f1a4e000000 pointer=0x7f1a4e000000
using DMA-BUF for GPU buffer address at 0x7f1a4e000000 aligned at 0x7f1a4e000000 with aligned size 131072
allocated GPU buffer of a 131072 address at 0x7ffd5e1c2a48 for type CUDA_MEM_DEVICE
"""

TABLE = """---------------------------------------------------------------------------------------
                    RDMA_Write BW Test
 Dual-port       : OFF		Device         : mlx5_0
 Number of qps   : 1		Transport type : IB
 Connection type : RC		Using SRQ      : OFF
 TX depth        : 128
 Mtu             : 4096[B]
 Link type       : Ethernet
 GID index       : 3
 Max inline data : 0[B]
 rdma_cm QPs	 : OFF
 Data ex. method : Ethernet
---------------------------------------------------------------------------------------
 #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]
 65536      5000             392.38             392.34 		     0.748336
---------------------------------------------------------------------------------------
"""


def test_use_cuda_and_dmabuf_are_added_by_the_builder():
    argv = pc.build_argv(dict(SIDE, use_cuda=3, use_cuda_dmabuf=True))
    assert argv[argv.index("--use_cuda=3") + 1] == "--use_cuda_dmabuf"
    assert "--use_cuda_dmabuf" not in pc.build_argv(dict(SIDE, use_cuda=3))


def test_dmabuf_without_a_gpu_is_refused_like_perftest_refuses_it():
    with pytest.raises(pc.ArgumentError, match="use_cuda_dmabuf needs use_cuda"):
        pc.build_argv(dict(SIDE, use_cuda_dmabuf=True))


@pytest.mark.parametrize("value", ["1", 1, "yes", [True]])
def test_dmabuf_is_a_boolean(value):
    with pytest.raises(pc.ArgumentError, match="use_cuda_dmabuf must be a boolean"):
        pc.build_argv(dict(SIDE, use_cuda=0, use_cuda_dmabuf=value))


@pytest.mark.parametrize("value", [-1, 1024, "--use_cuda_dmabuf", "0 --help", True, 1.5])
def test_a_gpu_index_is_an_int_in_range_never_a_flag(value):
    with pytest.raises(pc.ArgumentError):
        pc.build_argv(dict(SIDE, use_cuda=value))


@pytest.mark.parametrize("extra", [["--use_cuda_dmabuf"], ["--use_cuda=1"], ["--use_cuda", "1"],
                                   ["--use_cuda_bus_id=0000:18:00.0"], ["--use_cuda_dm"]])
def test_extra_args_cannot_override_the_managed_gpu_flags(extra):
    with pytest.raises(pc.ArgumentError):
        pc.build_argv(dict(SIDE, use_cuda=0, extra_args=extra))


def test_the_real_cuda_lines_are_benign_and_mark_gpu_memory():
    result = parse_perftest(CUDA_LINES + TABLE)
    assert result["ok"] and result["errors"] == [] and result["warnings"] == []
    assert result["gpu_memory"] == "cuda"
    assert [r["bytes"] for r in result["rows"]] == [65536]
    assert parse_perftest(TABLE)["gpu_memory"] is None


def test_a_missing_gpu_is_a_gpu_init_error():
    text = "initializing CUDA\nNo such device ID (7) exists in system\nCouldn't init GPU context: 1\n" \
           "Failed to init memory\n Couldn't create IB resources\n"
    result = parse_perftest(text)
    assert not result["ok"] and result["errors"][0]["code"] == "gpu_init_failed"
