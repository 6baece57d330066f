# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""parse_nccl_tests, mpi_errors and judge_run on REAL nccl-tests output launched through mpirun, as the
collection launches it (Open MPI's ``mpirun --allow-run-as-root -np N [-H host:K --map-by ppr:K:node]
-x NAME ... BINARY``), good runs and the failures an operator meets.

Where the nine ``all_reduce_perf_v2.19.6_1gpu_h200_mpirun_*_real_device.txt`` files in
tests/fixtures/corpus/nccl_tests come from: one session on 2026-11-26, 11:51 UTC, on the lab's lent GPU
machine, kind 'nvidia-h200', by the script capture3.sh of docs/gpu-captures.md (see also
test_nccl_real_device_capture.py):

- machine: a Firecracker VM (hostname 'vm') with one NVIDIA H200 (143771 MiB, PCI 00000000:00:06.0),
  driver 580.159.04, CUDA 13.0 (nvcc V13.0.88); one network interface eth0 (192.0.2.2, as NCCL printed it);
  no InfiniBand device; no ssh or rsh client on the machine (``which ssh rsh`` found neither).
- MPI: the machine's own Open MPI 4.1.6, the Debian package ('Open MPI v4.1.6, package: Debian OpenMPI'):
  /usr/bin/mpirun, mpicc, orterun, mpiexec (no prterun); headers and libraries under
  /usr/lib/x86_64-linux-gnu/openmpi; ompi_info lists the plm components isolated, slurm and rsh and the
  pml components ob1, cm, ucx, v and monitoring; mpi4py 4.1.2 is built on it.
- nccl-tests: github.com/NVIDIA/nccl-tests commit a0b82b2260cf5152b9f8c061bbf7eaf0ba096432
  ('NCCL_TESTS_VERSION 2.19.6'), all_reduce_perf built there in 10 s WITH MPI support:
  ``make -C src -j16 MPI=1 MPI_HOME=/usr/lib/x86_64-linux-gnu/openmpi
  NVCC_GENCODE=-gencode=arch=compute_90,code=sm_90 NCCL_HOME=<pip nvidia-nccl-cu13>
  BUILDDIR=/tmp/nccltests-build /tmp/nccltests-build/all_reduce_perf`` (it links libmpi.so.40).
- NCCL: the pip package nvidia-nccl-cu13 2.28.9 ('NCCL version 2.28.9+cuda13.0', code 22809).
- each case ran as root in the build folder as ``timeout T <command>`` (T = 30 to 60 s; none ran out), with
  LD_LIBRARY_PATH = the NCCL, CUDA and Open MPI library folders, which ``-x LD_LIBRARY_PATH`` forwards to
  the ranks; stdout and stderr of mpirun into one file.

The FIRST line of each file (``$ <command>``) and its LAST line (``# exit status N``, the status of mpirun
that the capturing shell saw, not anything mpirun or nccl-tests printed) are written by the capture script.
Nothing was cut: no file holds an environment dump or anything of the workplace (host 'vm'; 192.0.2.2 is
the address NCCL printed there; pids and Open MPI job ids are as printed).

Cases (file suffix: command -> exit status):

- ``np1``: mpirun --allow-run-as-root -np 1 -x LD_LIBRARY_PATH ./all_reduce_perf -b 1M -e 8M -f 2 -g 1 -> 0
  (a good MPI run: the same header and table as without mpirun, the rank line names MPI rank 0).
- ``np2_one_gpu``: the same with -np 2 on the one GPU -> 5: rank 1 (local rank 1) wants CUDA device 1
  and nccl-tests stops before NCCL starts ('Invalid number of GPUs: 2 requested but only 1 were found.');
  then mpirun's own trailer ('Primary job  terminated normally, but 1 process returned ...', 'mpirun
  detected that one or more processes exited with non-zero status ...', Exit code: 5).
- ``np2_one_gpu_warn``: the same with -x NCCL_DEBUG=WARN -> 5: identical, NCCL never starts.
- ``np2_same_gpu_warn``: -np 2 -x NCCL_TESTS_DEVICE=0 -x NCCL_DEBUG=WARN (both ranks on CUDA device 0, the
  case of two ranks really sharing a GPU) -> 3: NCCL's 'Duplicate GPU detected : rank 1 and rank 0 both on
  CUDA device 60' (a WARN per rank), 'Test NCCL failure ... invalid usage', mpirun's trailer.
- ``unresolvable_host``: mpirun --allow-run-as-root -np 2 -H localhost:1,nosuchhost:1 -x LD_LIBRARY_PATH
  ./all_reduce_perf -g 1 -> 1: this Open MPI 4.1.6 never tried to reach 'nosuchhost' (with no ssh/rsh on
  the machine only its local launcher can run, which leaves one slot, we believe): it prints 'There are not
  enough slots available in the system to satisfy the 2 slots ...' and names no host.
- ``binary_not_found``: mpirun --allow-run-as-root -np 1 ./no_such_binary_perf -> 132: 'mpirun was unable
  to launch the specified application as it could not access' / 'or execute an executable:' (one sentence
  wrapped over two lines), then 'Executable: ./no_such_binary_perf' and 'Node: vm'.
- ``no_visible_gpu``: mpirun ... -x CUDA_VISIBLE_DEVICES= ./all_reduce_perf -g 1 -> 2: 'Test CUDA failure
  util.cu:674 'no CUDA-capable device is detected'', then mpirun's trailer.
- ``btl_tcp_if_nosuchif``: mpirun ... --mca btl_tcp_if_include nosuchif0 ./all_reduce_perf -g 1 -> 0: Open
  MPI warns ('An invalid value was given for btl_tcp_if_include ... Unknown interface name'), ignores the
  value, and the one-rank run (default sizes: 32 MiB only) passes.
- ``np1_map_by_nccl_info``: mpirun --allow-run-as-root -np 1 -H localhost:1 --map-by ppr:1:node
  -x LD_LIBRARY_PATH -x NCCL_DEBUG=INFO ./all_reduce_perf -b 1M -e 8M -f 2 -g 1 -> 0 (the collection's own
  argv shape; NCCL falls back to NET/Socket, there being no IB device).

Two misreadings found when these were captured are fixed in mpi_errors (scan_launcher_line), and these
tests hold the fixes: test_binary_not_found_is_binary_not_found (Open MPI 4.1.6 wraps its 'could not access
or execute an executable' sentence over two lines; the first line alone matched mpi_launch_failed's 'mpirun
was unable to launch': a wrapped sentence is now read whole) and test_binary_not_found_names_the_node (the
'Node: vm' line of that help text is now read as the host).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import pytest

from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.mpi_errors import (
    MPI_ERRORS, classify_launcher_line)
from ansible_collections.clusterops.commcheck.plugins.module_utils.planning.collective_plan import (
    FALLBACK_CAUSE, global_error, judge_run, named_hosts)
from nccl_captures import codes, error, lines_of, load, parse


NP1 = "all_reduce_perf_v2.19.6_1gpu_h200_mpirun_np1_real_device.txt"
NP2 = "all_reduce_perf_v2.19.6_1gpu_h200_mpirun_np2_one_gpu_real_device.txt"
NP2_WARN = "all_reduce_perf_v2.19.6_1gpu_h200_mpirun_np2_one_gpu_warn_real_device.txt"
SAME_GPU = "all_reduce_perf_v2.19.6_1gpu_h200_mpirun_np2_same_gpu_warn_real_device.txt"
NO_HOST = "all_reduce_perf_v2.19.6_1gpu_h200_mpirun_unresolvable_host_real_device.txt"
NO_BINARY = "all_reduce_perf_v2.19.6_1gpu_h200_mpirun_binary_not_found_real_device.txt"
NO_GPU = "all_reduce_perf_v2.19.6_1gpu_h200_mpirun_no_visible_gpu_real_device.txt"
BTL_IF = "all_reduce_perf_v2.19.6_1gpu_h200_mpirun_btl_tcp_if_nosuchif_real_device.txt"
MAP_BY_INFO = "all_reduce_perf_v2.19.6_1gpu_h200_mpirun_np1_map_by_nccl_info_real_device.txt"

# the exit status the capture noted at the end of each file, and the number of MPI processes (-np)
EXIT_STATUS = {NP1: 0, NP2: 5, NP2_WARN: 5, SAME_GPU: 3, NO_HOST: 1, NO_BINARY: 132, NO_GPU: 2, BTL_IF: 0,
               MAP_BY_INFO: 0}
NP = {NP1: 1, NP2: 2, NP2_WARN: 2, SAME_GPU: 2, NO_HOST: 2, NO_BINARY: 1, NO_GPU: 1, BTL_IF: 1, MAP_BY_INFO: 1}
FAILED = [NP2, NP2_WARN, SAME_GPU, NO_HOST, NO_BINARY, NO_GPU]
PASSED = [NP1, BTL_IF, MAP_BY_INFO]

HEADER_1M_8M = {"nccl_headers_code": 22809, "nccl_library_code": 22809, "nthread": 1, "ngpus": 1,
                "min_bytes": 1048576, "max_bytes": 8388608, "step_factor": 2, "warmup_iters": 1, "iters": 20,
                "agg_iters": 1, "validation": 1, "graph": 0, "unalign": 0}
HEADER_DEFAULT_SIZES = {"nccl_headers_code": 22809, "nccl_library_code": 22809, "nthread": 1, "ngpus": 1,
                        "min_bytes": 33554432, "max_bytes": 33554432, "step_bytes": 1048576, "warmup_iters": 1,
                        "iters": 20, "agg_iters": 1, "validation": 1, "graph": 0, "unalign": 0}
COLUMNS = {"lead": ["bytes", "count", "type", "redop", "root"],
           "groups": [["time_us", "algbw_gbs", "busbw_gbs", "wrong"]] * 2, "timestamp": False}

# (size, count, out-of-place time/algbw/busbw, in-place time/algbw/busbw), as printed
NP1_ROWS = [
    (1048576, 262144, 6.18, 169.81, 0.00, 0.61, 1706.5, 0.00),
    (2097152, 524288, 7.86, 266.87, 0.00, 0.24, 8908.9, 0.00),
    (4194304, 1048576, 4.95, 847.82, 0.00, 0.92, 4576.7, 0.00),
    (8388608, 2097152, 5.79, 1449.7, 0.00, 0.92, 9089.4, 0.00),
]
MAP_BY_INFO_ROWS = [
    (1048576, 262144, 4.66, 224.78, 0.00, 0.36, 2928.2, 0.00),
    (2097152, 524288, 5.75, 364.95, 0.00, 0.28, 7383.0, 0.00),
    (4194304, 1048576, 5.61, 747.31, 0.00, 0.18, 23406, 0.00),
    (8388608, 2097152, 5.69, 1473.0, 0.00, 0.19, 45173, 0.00),
]
BTL_IF_ROWS = [(33554432, 8388608, 19.01, 1765.4, 0.00, 0.99, 34029, 0.00)]

POOL = [{"address": "192.0.2.2", "name": "vm"}]


def rank(number, pid):
    return {"rank": number, "group": 0, "pid": pid, "host": "vm", "device": 0, "bus_id": "0000:00:06",
            "name": "NVIDIA H200"}


def judge(name, **kwargs):
    return judge_run("nccl", "all_reduce", NP[name], EXIT_STATUS[name], False, parse(name), **kwargs)


def expected_rows(rows):
    return [{"bytes": size, "count": count, "type": "float", "redop": "sum", "root": -1,
             "out_of_place": {"time_us": t1, "algbw_gbs": a1, "busbw_gbs": b1, "wrong": 0},
             "in_place": {"time_us": t2, "algbw_gbs": a2, "busbw_gbs": b2, "wrong": 0}}
            for size, count, t1, a1, b1, t2, a2, b2 in rows]


def without_position(row):
    return dict((k, v) for k, v in row.items() if k in ("bytes", "count", "type", "redop", "root",
                                                        "out_of_place", "in_place"))


# --- what the capture wrote around mpirun's output -------------------------------------------

@pytest.mark.parametrize("name", sorted(EXIT_STATUS))
def test_capture_lines_and_exit_status(name):
    lines = lines_of(name)
    assert lines[0].startswith("$ mpirun --allow-run-as-root -np %d " % NP[name])
    assert lines[-1] == "# exit status %d" % EXIT_STATUS[name]


# --- good runs: rows and numbers -------------------------------------------------------------

def test_np1_header_ranks_and_rows():
    r = parse(NP1)
    assert r["ok"] is True and r["completed"] is True and r["errors"] == [] and r["warnings"] == []
    assert r["version"] == "2.19.6" and r["nccl_version"] == "2.28.9"
    assert r["test"] == "all_reduce_perf" and r["collective"] == "all_reduce"
    header = dict(r["header"])
    assert header.pop("columns") == COLUMNS
    assert header.pop("time_kind") == "time" and header.pop("wrong_column") == "#wrong"
    assert header == HEADER_1M_8M
    assert r["ranks"] == [rank(0, 1135)] and r["nranks"] == 1 and r["hosts"] == ["vm"]
    assert [without_position(row) for row in r["rows"]] == expected_rows(NP1_ROWS)
    assert r["out_of_bounds"] == 0 and r["avg_busbw_gbs"] == 0.0
    assert r["transport"] is None


def test_np1_judged_a_pass():
    j = judge(NP1)
    assert j["verdict"] == "pass" and j["cause"] is None and j["errors"] == []
    assert j["rows"] == 4 and j["wrong"] == 0
    # one rank: busbw is 0 on every row (bus factor 0), algbw is the best row's (in-place 8 MiB)
    assert j["busbw_gbs"] == 0.0 and j["algbw_gbs"] == 9089.4


def test_np1_with_an_expectation_fails_on_bandwidth():
    """One rank moves nothing over a bus: any expectation judges it slow (and never a pass)."""
    j = judge(NP1, expected_busbw_gbs=40.0)
    assert j["verdict"] == "fail" and j["threshold_busbw_gbs"] == 32.0
    assert j["cause"].startswith("bus bandwidth 0.0 GB/s is below 32.0 GB/s")


def test_map_by_nccl_info_rows_and_socket_transport():
    r = parse(MAP_BY_INFO)
    assert r["ok"] is True and r["completed"] is True and r["errors"] == []
    assert r["nccl_version"] == "2.28.9+cuda13.0"
    assert r["ranks"] == [rank(0, 1407)] and r["hosts"] == ["vm"]
    assert {k: v for k, v in r["header"].items() if k in HEADER_1M_8M} == HEADER_1M_8M
    assert [without_position(row) for row in r["rows"]] == expected_rows(MAP_BY_INFO_ROWS)
    assert r["transport"] == "Socket"
    assert r["warnings"] == ["NCCL found no usable IB/RoCE device (NET/IB : No device found.)"]


def test_map_by_nccl_info_judged_pass_without_rdma_and_fail_with_rdma_devices():
    assert judge(MAP_BY_INFO)["verdict"] == "pass"
    j = judge(MAP_BY_INFO, ib_devices=["mlx5_0"])
    assert j["verdict"] == "fail" and j["cause"] == FALLBACK_CAUSE + " mlx5_0"
    assert "NCCL_IB_HCA=mlx5_0" in j["fix"]


def test_btl_tcp_if_include_bad_value_is_a_warning_and_the_run_passes():
    r = parse(BTL_IF)
    assert r["ok"] is True and r["completed"] is True and r["errors"] == []
    assert r["header"]["min_bytes"] == r["header"]["max_bytes"] == 33554432
    assert {k: v for k, v in r["header"].items() if k in HEADER_DEFAULT_SIZES} == HEADER_DEFAULT_SIZES
    assert r["ranks"] == [rank(0, 1371)]
    assert [without_position(row) for row in r["rows"]] == expected_rows(BTL_IF_ROWS)
    assert any(w.startswith("WARNING: An invalid value was given for btl_tcp_if_include") for w in r["warnings"])
    j = judge(BTL_IF)
    assert j["verdict"] == "pass" and j["algbw_gbs"] == 34029.0


def test_the_table_under_mpirun_is_the_table_without_it():
    """An MPI=1 build under mpirun prints the header, rank line and table of an MPI=0 build."""
    r = parse(NP1)
    direct = parse("all_reduce_perf_v2.19.6_1gpu_h200_check0_real_device.txt")  # the same sizes, no mpirun
    assert r["header"]["columns"] == direct["header"]["columns"]
    assert [row["bytes"] for row in r["rows"]] == [row["bytes"] for row in direct["rows"]]
    assert dict(r["header"], validation=0) == direct["header"]


# --- failures: never a passing result --------------------------------------------------------

@pytest.mark.parametrize("name", FAILED)
def test_failed_mpirun_run_is_never_a_pass(name):
    r = parse(name)
    assert r["ok"] is False and r["rows"] == [] and r["completed"] is False
    assert r["errors"] and r["errors"][-1]["code"] == "no_table"
    assert r["avg_busbw_gbs"] is None and r["out_of_bounds"] is None
    j = judge(name)
    assert j["verdict"] == "error" and j["cause"] and j["fix"]


@pytest.mark.parametrize("name", [NP2, NP2_WARN])
def test_two_ranks_one_gpu_is_a_gpu_count_mismatch(name):
    r = parse(name)
    assert codes(r) == ["gpu_count_mismatch", "rank_failed", "test_failure", "no_table"]
    assert error(r, "gpu_count_mismatch")["message"] == "Invalid number of GPUs: 2 requested but only 1 were found."
    assert error(r, "test_failure")["hosts"] == ["vm"]
    rank_failed = error(r, "rank_failed")
    # Open MPI wraps the sentence; the message is the whole of it (its two lines)
    assert rank_failed["message"] == ("mpirun detected that one or more processes exited with non-zero status, "
                                      "thus causing the job to be terminated. The first process to do so was:")
    assert rank_failed["cause"] == MPI_ERRORS["rank_failed"][0]
    assert r["version"] == "2.19.6" and r["ranks"] == [] and r["header"] == HEADER_1M_8M
    j = judge(name)
    assert j["cause"].startswith("The test asked for more GPUs than the node shows to the process.")
    assert "ranks per node" in j["fix"]
    assert global_error(j) is True


def test_nccl_debug_warn_adds_nothing_before_nccl_starts():
    plain, warn = parse(NP2), parse(NP2_WARN)
    assert codes(plain) == codes(warn)
    assert [e["message"] for e in plain["errors"] if e["code"] != "test_failure"] == \
        [e["message"] for e in warn["errors"] if e["code"] != "test_failure"]
    assert plain["warnings"] == warn["warnings"] == []


def test_two_ranks_on_the_same_gpu_is_nccl_invalid_usage():
    r = parse(SAME_GPU)
    assert codes(r) == ["nccl_invalid_usage", "rank_failed", "no_table"]
    assert r["ranks"] == [rank(0, 1242), rank(1, 1243)] and r["nranks"] == 2 and r["hosts"] == ["vm"]
    assert r["nccl_version"] == "2.28.9+cuda13.0"
    usage = error(r, "nccl_invalid_usage")
    # NCCL's reason, one WARN per rank, is the same error (since sweep 8): it comes first and gives the hint
    assert usage["count"] == 4 and usage["hosts"] == ["vm"]
    assert usage["message"] == "Duplicate GPU detected : rank 1 and rank 0 both on CUDA device 60"
    assert usage["evidence"][1] == ("vm: Test NCCL failure common.cu:222 "
                                    "'invalid usage (run with NCCL_DEBUG=WARN for details) / '")
    assert r["warnings"] == []
    j = judge(SAME_GPU)
    assert "two ranks on one GPU" in j["cause"] and "one rank per GPU" in j["fix"]
    assert global_error(j) is True


def test_unresolvable_host_shows_as_not_enough_slots():
    """Open MPI 4.1.6 without ssh never reached 'nosuchhost': it reports slots, naming no host."""
    text = load(NO_HOST).decode("utf-8")
    assert "nosuchhost" not in text.split("\n", 1)[1]
    r = parse(NO_HOST)
    assert codes(r) == ["mpi_launch_failed", "no_table"]
    launch = error(r, "mpi_launch_failed")
    assert launch["message"] == ("There are not enough slots available in the system to satisfy the 2 "
                                 "slots that were requested by the application:")
    assert launch["hint"].startswith("Give each hostfile entry slots=")
    assert launch["hosts"] == []
    assert r["version"] is None and r["header"] == {} and r["ranks"] == []
    j = judge(NO_HOST)
    assert j["cause"].startswith(MPI_ERRORS["mpi_launch_failed"][0])
    assert named_hosts(j, POOL) == []


def test_binary_not_found_is_binary_not_found():
    """Open MPI 4.1.6 prints 'mpirun was unable to launch the specified application as it could not access'
    and, on the next line, 'or execute an executable:'. The operator must fix the binary's path (or copy it
    to the node), not ssh, MPI versions or firewalls."""
    lines = lines_of(NO_BINARY)
    assert lines[2:4] == ["mpirun was unable to launch the specified application as it could not access",
                          "or execute an executable:"]
    r = parse(NO_BINARY)
    assert r["ok"] is False and r["rows"] == []
    # the sentence read whole (its first line alone would be mpi_launch_failed's 'mpirun was unable to launch')
    assert codes(r) == ["binary_not_found", "no_table"]
    j = judge(NO_BINARY)
    assert j["cause"].startswith(MPI_ERRORS["binary_not_found"][0])


def test_binary_not_found_names_the_node():
    """The help text names the node where the executable is missing ('Node: vm'); bisection and the
    finding records name a node through the error's hosts."""
    assert "Node: vm" in lines_of(NO_BINARY)
    r = parse(NO_BINARY)
    # the host from the help text's own 'Node: <host>' line
    assert [h for e in r["errors"] for h in e["hosts"]] == ["vm"]
    assert named_hosts(judge(NO_BINARY), POOL) == ["vm"]


def test_no_visible_gpu_through_mpirun():
    r = parse(NO_GPU)
    assert codes(r) == ["nccl_cuda_failure", "rank_failed", "no_table"]
    cuda = error(r, "nccl_cuda_failure")
    assert cuda["message"] == "vm: Test CUDA failure util.cu:674 'no CUDA-capable device is detected'"
    assert cuda["hosts"] == ["vm"]
    assert cuda["hint"] == "The process sees no (or fewer) GPUs: check CUDA_VISIBLE_DEVICES and the pod's GPU request."
    assert r["header"] == HEADER_DEFAULT_SIZES and r["ranks"] == []
    j = judge(NO_GPU)
    assert "no CUDA-capable device is detected" in j["cause"]
    assert j["fix"] == cuda["hint"]
    assert global_error(j) is False
    assert named_hosts(j, POOL) == ["vm"]


# --- mpi_errors on mpirun's own lines, as printed --------------------------------------------

def test_mpirun_trailer_lines():
    lines = lines_of(NP2)
    trailer = lines[lines.index("Primary job  terminated normally, but 1 process returned"):]
    found = [(line, classify_launcher_line(line)) for line in trailer]
    classified = [(line, f[0]) for line, f in found if f]
    assert classified == [("mpirun detected that one or more processes exited with non-zero status, thus causing",
                           "rank_failed")]
    assert "  Exit code:    5" in trailer


def test_slots_line_is_a_launch_failure_with_the_slots_hint():
    code, hint, host = classify_launcher_line("There are not enough slots available in the system to satisfy the 2")
    assert code == "mpi_launch_failed" and host is None
    assert hint.startswith("Give each hostfile entry slots=")


def test_the_binary_sentence_unwrapped_is_binary_not_found():
    """The rule itself works on the sentence as one line: the wrap in the real output is what defeats it."""
    lines = lines_of(NO_BINARY)
    sentence = lines[2] + " " + lines[3]
    assert classify_launcher_line(sentence)[0] == "binary_not_found"
    assert classify_launcher_line(lines[2])[0] == "mpi_launch_failed"


def test_a_wrapped_sentence_is_joined_only_where_it_goes_on():
    from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.mpi_errors import scan_launcher_line
    wrapped = ["mpirun was unable to launch the specified application as it could not access",
               "or execute an executable:", "", "Executable: ./x_perf", "Node: n7", "-" * 74, "Node: other"]
    code, message, _hint, host = scan_launcher_line(wrapped, 0)
    assert (code, host) == ("binary_not_found", "n7")
    assert message.endswith("could not access or execute an executable:")
    # a finished sentence, or a next line that starts a new one, stays alone; no host past the dashed line
    ended = ["mpirun was unable to launch the specified application.", "or this is another line", "-" * 74,
             "Node: n7"]
    assert scan_launcher_line(ended, 0)[:2] == ("mpi_launch_failed", ended[0])
    assert scan_launcher_line(ended, 0)[3] is None
    upper = ["mpirun was unable to launch the specified application as it could not access", "Node: n7"]
    assert scan_launcher_line(upper, 0)[:2] == ("mpi_launch_failed", upper[0])
