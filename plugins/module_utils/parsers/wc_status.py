# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The work-completion statuses of RDMA verbs (ibv_wc_status, infiniband/verbs.h): what each means for a test.

perftest and NCCL's NET/IB transport both print the status of a failed work completion, by its number or by
the text of ibv_wc_status_str(); one table serves both parsers. Status 4 and status 12 need different fixes
(GPU memory registration versus the link), so the status decides the hint.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

# status: (name, text of ibv_wc_status_str(), what it means)
WC_STATUSES = {
    1: ("IBV_WC_LOC_LEN_ERR", "local length error",
        "a message longer than the receive buffer: the two sides run different sizes, options or versions"),
    2: ("IBV_WC_LOC_QP_OP_ERR", "local QP operation error",
        "the local queue pair rejected the request: an MTU or inline size above what the port supports, or a "
        "QP setup mismatch between the ports (GID index, MTU)"),
    4: ("IBV_WC_LOC_PROT_ERR", "local protection error",
        "the NIC could not access the local buffer; with GPU memory this is GPUDirect RDMA: load nvidia-peermem "
        "(nv_peer_mem) or use dma-buf, disable PCIe ACS / set the IOMMU to passthrough, and check that the GPU and "
        "the NIC share a PCIe switch"),
    5: ("IBV_WC_WR_FLUSH_ERR", "Work Request Flushed Error",
        "the queue pair was already in error: a consequence; read the first completion error, often on the peer"),
    8: ("IBV_WC_LOC_ACCESS_ERR", "local access error", "the local memory region forbids the access"),
    9: ("IBV_WC_REM_INV_REQ_ERR", "remote invalid request error",
        "the peer rejected the request as invalid: different versions, options or MTUs on the two sides"),
    10: ("IBV_WC_REM_ACCESS_ERR", "remote access error",
         "the peer refused access to its memory: wrong keys (different options) or GPUDirect RDMA broken on the "
         "peer (nvidia-peermem, PCIe ACS / IOMMU)"),
    11: ("IBV_WC_REM_OP_ERR", "remote operation error",
         "the peer could not complete the operation (its queue pair or memory went bad; with GPU memory: "
         "GPUDirect RDMA on the peer)"),
    12: ("IBV_WC_RETRY_EXC_ERR", "transport retry counter exceeded",
         "the peer stopped acknowledging: link, cable or switch problem, wrong GID / route, RoCE congestion "
         "without working PFC/ECN, or the peer exited"),
    13: ("IBV_WC_RNR_RETRY_EXC_ERR", "RNR retry counter exceeded",
         "receiver not ready: the peer posted no receive in time (it stalled, died or runs other options)"),
    20: ("IBV_WC_RESP_TIMEOUT_ERR", "response timeout error", "the peer did not answer in time"),
    21: ("IBV_WC_GENERAL_ERR", "general error", "the NIC reported a general error: read dmesg on that host"),
}

_BY_TEXT = dict((text.lower(), status) for status, (_name, text, _meaning) in WC_STATUSES.items())


def status_of_text(text):
    """The status whose ibv_wc_status_str() text this is (any case), or None."""
    return _BY_TEXT.get((text or "").strip().lower())


def explain(status, where=None, also=None):
    """'Completion status N (NAME)[ at where]: meaning[ also]', or None for a status not in the table."""
    if status not in WC_STATUSES:
        return None
    name, _text, meaning = WC_STATUSES[status]
    place = " at the %s" % where if where else ""
    return "Completion status %d (%s)%s: %s%s" % (status, name, place, meaning, also or "")
