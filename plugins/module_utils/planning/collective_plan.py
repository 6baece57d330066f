# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pure decisions for collective tests: bandwidth, verdicts, launch errors, records.

Bisection is in ``bisection.py``.

- ``bus_factor`` / ``expected_busbw`` / ``measured_busbw``: nccl-tests'
  bus-bandwidth formulas (doc/PERFORMANCE.md) and the expectation derived
  from the NICs' link rates.
- ``merge_json_result``: nccl-tests' ``-J`` JSON numbers with the transport
  and errors read from its stdout.
- ``named_hosts`` / ``global_error``: hosts a failed run's errors name, and
  failures no subset of hosts would avoid.
- ``judge_run``: one run's verdict (pass | warn | fail | error) with cause/fix.
- ``collective_records``: records for ``clusterops.commcheck.record``.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import math

# ----------------------------------------------------------------- bandwidth

# busbw = algbw * factor(n) (nccl-tests doc/PERFORMANCE.md and src/*.cu getBw).
_FACTORS = {
    "all_reduce": lambda n: 2.0 * (n - 1) / n,
    "reduce_scatter": lambda n: float(n - 1) / n,
    "all_gather": lambda n: float(n - 1) / n,
    "alltoall": lambda n: float(n - 1) / n,
    "alltoallv": lambda n: float(n - 1) / n,
    "gather": lambda n: float(n - 1) / n,
    "scatter": lambda n: float(n - 1) / n,
    "hypercube": lambda n: float(n - 1) / n,
    "broadcast": lambda n: 1.0,
    "reduce": lambda n: 1.0,
    "sendrecv": lambda n: 1.0,
}


def bus_factor(operation, nranks):
    """The factor turning algorithm bandwidth into bus bandwidth for n ranks."""
    nranks = int(nranks)
    if nranks < 1:
        raise ValueError("nranks must be >= 1")
    return _FACTORS.get(operation, lambda n: 1.0)(nranks)


def expected_busbw(nic_rates_gbps, efficiency=0.9):
    """Expected bus bandwidth in GB/s from the NICs one node uses.

    A ring collective moves each node's share over all of its NICs at once, so
    the ceiling is the sum of their link rates (Gb/s) / 8; ``efficiency`` is
    the part of line rate a healthy fabric reaches. None when no rate is known.
    """
    rates = [float(r) for r in (nic_rates_gbps or []) if r is not None and float(r) > 0]
    if not rates:
        return None
    return round(sum(rates) / 8.0 * float(efficiency), 6)


def _row_busbw(row):
    values = [(row.get(side) or {}).get("busbw_gbs") for side in ("out_of_place", "in_place")]
    values = [v for v in values if isinstance(v, (int, float)) and math.isfinite(v)]
    return max(values) if values else None


def _row_algbw(row):
    values = [(row.get(side) or {}).get("algbw_gbs") for side in ("out_of_place", "in_place")]
    values = [v for v in values if isinstance(v, (int, float)) and math.isfinite(v)]
    return max(values) if values else None


def measured_busbw(result, metric="max"):
    """The bus bandwidth a run is judged by (GB/s), or None.

    ``max``: the best row (the plateau of a size sweep); ``largest``: the
    largest message size; ``avg``: nccl-tests' own "Avg bus bandwidth".
    """
    rows = [r for r in (result or {}).get("rows") or [] if _row_busbw(r) is not None]
    if metric == "avg":
        avg = (result or {}).get("avg_busbw_gbs")
        if isinstance(avg, (int, float)):
            return round(float(avg), 6)
        if not rows:
            return None
        return round(sum(_row_busbw(r) for r in rows) / len(rows), 6)
    if not rows:
        return None
    if metric == "largest":
        return round(_row_busbw(max(rows, key=lambda r: r.get("bytes") or 0)), 6)
    return round(max(_row_busbw(r) for r in rows), 6)


def hccl_rows_with_busbw(result, operation, nranks):
    """hccl_test rows in nccl-tests' row shape, busbw = algbw * bus_factor.

    hccl_test prints only the algorithm bandwidth; its ``check`` column maps to
    ``wrong`` (0 for success, 1 for failed, null for NULL).
    """
    factor = bus_factor(operation, nranks)
    rows = []
    for row in (result or {}).get("rows") or []:
        algbw = row.get("algbw_gbs")
        check = (row.get("check") or "").lower() if isinstance(row.get("check"), str) else row.get("check")
        wrong = {"success": 0, "failed": 1, "fail": 1}.get(check) if isinstance(check, str) else None
        rows.append({
            "bytes": row.get("bytes"),
            "count": None, "type": None, "redop": None, "root": None,
            "out_of_place": {
                "time_us": row.get("avg_time_us"),
                "algbw_gbs": algbw,
                "busbw_gbs": round(algbw * factor, 5) if isinstance(algbw, (int, float)) else None,
                "wrong": wrong,
            },
            "in_place": None,
        })
    return rows


# --------------------------------------------------------- parsed results

def merge_json_result(text_result, json_result):
    """Rows and summary from nccl-tests' JSON file, transport and errors from its stdout.

    The JSON file has full-precision numbers but no NCCL INFO lines and no
    launcher errors; stdout has those. Errors are merged by code.
    """
    if not json_result or not json_result.get("rows"):
        return text_result
    merged = dict(json_result)
    text_result = text_result or {}
    for key in ("transport", "transport_kind", "networks", "channel_transports", "gdr"):
        if text_result.get(key) is not None:
            merged[key] = text_result[key]
    if not merged.get("ranks") and text_result.get("ranks"):
        merged["ranks"] = text_result["ranks"]
        merged["nranks"] = text_result.get("nranks")
        merged["hosts"] = text_result.get("hosts")
    codes = set(e.get("code") for e in merged.get("errors") or [])
    errors = list(merged.get("errors") or [])
    for error in text_result.get("errors") or []:
        if error.get("code") not in codes and error.get("code") != "no_table":
            errors.append(error)
            codes.add(error.get("code"))
    merged["errors"] = errors
    warnings = list(merged.get("warnings") or [])
    merged["warnings"] = warnings + [w for w in text_result.get("warnings") or [] if w not in warnings]
    merged["ok"] = bool(merged.get("rows")) and not errors
    merged["format"] = "json"
    return merged


# ----------------------------------------------------------------- verdicts

# Errors no choice of hosts avoids: bisecting on them would only repeat them.
GLOBAL_ERROR_CODES = ("mpirun_not_found", "invalid_arguments", "json_invalid", "gpu_count_mismatch",
                      "nccl_invalid_usage", "nccl_invalid_argument", "hccl_e_para")
# Consequences of another error; never the cause to report first.
SECONDARY_CODES = ("no_table", "rank_failed", "test_failure")

# What a good run prints with NCCL_DEBUG=INFO, and what a fall-back prints.
TRANSPORT_LOG_LINES = ("with NCCL_DEBUG=INFO a run on RDMA prints 'NET/IB : Using [0]mlx5_0:1/RoCE ...', "
                       "'Using network IB' and channels 'via NET/IB/0' (or NET/IB/0/GDRDMA); a fall-back "
                       "prints 'NET/IB : No device found', 'NET/Socket : Using', 'Using network Socket' and "
                       "'via NET/Socket/0'")
_FIX_TEMPLATE = ("point NCCL_IB_HCA at the RDMA devices (%s), "
                 "NCCL_SOCKET_IFNAME at the data network's interface (bootstrap only), and NCCL_IB_GID_INDEX "
                 "at the RoCE v2 GID index discovery chose (commcheck_rdma.gid_index); make sure NCCL_IB_DISABLE "
                 "is not 1, the image has the IB/RoCE net plugin (libnccl-net.so from nccl-rdma-sharp-plugins, "
                 "or name it with NCCL_NET_PLUGIN) and the verbs libraries (libibverbs, rdma-core), and the "
                 "pod has /dev/infiniband; " + TRANSPORT_LOG_LINES)
TRANSPORT_FIX = _FIX_TEMPLATE % "for example NCCL_IB_HCA=mlx5_0,mlx5_1"


def transport_fallback(library, transport, ib_expected=False, ib_devices=None):
    """True when NCCL ran on TCP sockets (NET/Socket) although the hosts have RDMA devices."""
    return library == "nccl" and transport == "Socket" and (bool(ib_expected) or bool(ib_devices))


FALLBACK_CAUSE = "NCCL used NET/Socket although the hosts have RDMA devices"


def transport_fallback_cause(ib_devices=None):
    """Why a run on NET/Socket is a failure, naming the RDMA devices when they are known."""
    names = ", ".join(sorted(set(str(d) for d in ib_devices or [])))
    return FALLBACK_CAUSE + (" %s" % names if names else "")


def transport_fallback_fix(ib_devices=None):
    """The fix of a Socket fall-back; NCCL_IB_HCA names the devices found when they are known."""
    names = ",".join(sorted(set(str(d) for d in ib_devices or [])))
    return _FIX_TEMPLATE % ("NCCL_IB_HCA=" + names) if names else TRANSPORT_FIX


def _primary_error(errors):
    for error in errors:
        if error.get("code") not in SECONDARY_CODES:
            return error
    return errors[0] if errors else None


def _wrong_values(rows, parsed):
    """Wrong values the check counted in the rows, or the out-of-bounds count when larger."""
    wrong = 0
    for row in rows:
        for side in ("out_of_place", "in_place"):
            value = (row.get(side) or {}).get("wrong")
            if isinstance(value, (int, float)) and value > 0:
                wrong += int(value)
    oob = parsed.get("out_of_bounds")
    if isinstance(oob, int) and oob > wrong:
        wrong = oob
    return wrong


def _measurements(library, operation, nranks, parsed, expected_busbw_gbs, min_fraction, busbw_metric):
    """The numbers of one run: the judgement before its verdict, and its rows."""
    if library == "hccl":
        rows = hccl_rows_with_busbw(parsed, operation, nranks)
        measured = {"rows": rows}
    else:
        rows = parsed.get("rows") or []
        measured = parsed
    algbws = [a for a in (_row_algbw(r) for r in rows) if a is not None]
    threshold = None
    if expected_busbw_gbs:
        threshold = round(float(expected_busbw_gbs) * float(min_fraction), 6)
    out = {
        "verdict": "pass", "cause": None, "fix": None,
        "busbw_gbs": measured_busbw(measured, busbw_metric),
        "algbw_gbs": round(max(algbws), 6) if algbws else None,
        "expected_busbw_gbs": expected_busbw_gbs,
        "threshold_busbw_gbs": threshold,
        "transport": parsed.get("transport"),
        "errors": [e for e in parsed.get("errors") or [] if isinstance(e, dict)],
        "warnings": [],
        "wrong": _wrong_values(rows, parsed),
        "rows": len(rows),
    }
    return out, rows


def _timed_out_verdict(timeout):
    return {"verdict": "error",
            "cause": "the collective did not finish within %ss and was stopped" % (timeout,),
            "fix": "a hung rank usually means a host that cannot reach the others on the data "
                   "network (firewall, wrong NCCL_SOCKET_IFNAME / HCCL_SOCKET_IFNAME); raise "
                   "timeout for very large max_bytes"}


def _no_result_verdict(rc, rows, errors):
    first = _primary_error([e for e in errors if e.get("code") != "wrong_results"])
    if first:
        message = first.get("message") or ""
        cause = "%s (%s)" % (first.get("cause"), message[:300]) if message else first.get("cause")
        return {"verdict": "error", "cause": cause, "fix": first.get("hint") or first.get("fix")}
    return {"verdict": "error",
            "cause": "the launcher exited with rc=%s and %s" % (
                rc, "printed no result table" if not rows else "no error message"),
            "fix": "read stdout/stderr of the run; run the binary by hand on one host"}


def _wrong_data_verdict(wrong):
    return {"verdict": "fail",
            "cause": "%d wrong value(s) in the results: data was corrupted in transit" % wrong,
            "fix": "bisect to find the node; check GPU/NPU health (ECC, XID errors) and the NICs' "
                   "error counters; never ignore data corruption"}


def _slow_verdict(out, min_fraction):
    formula = out.get("expected_formula")
    cause = "bus bandwidth %s GB/s is below %s GB/s (%d%% of the expected %s GB/s%s)" % (
        out["busbw_gbs"], out["threshold_busbw_gbs"], int(round(float(min_fraction) * 100)),
        out["expected_busbw_gbs"], " = " + formula if formula else "")
    fix = ("bisect the pool to name the slow node(s); then check their NIC link rate, PCIe width, "
           "GPU clocks, and switch port errors")
    return {"verdict": "fail", "cause": cause, "fix": fix}


def _fallback_verdict(out, slow, ib_devices):
    """A run on NET/Socket with RDMA devices there fails, slow or not: the fabric was never tested."""
    out["warnings"].append("NCCL used the Socket transport although RDMA devices exist")
    cause = transport_fallback_cause(ib_devices)
    if slow:
        cause += "; " + slow["cause"]
    return {"verdict": "fail", "cause": cause, "fix": transport_fallback_fix(ib_devices)}


def _verdict(out, rows, rc, timed_out, timeout, min_fraction, fallback, ib_devices=None):
    """The verdict, cause and fix to set on ``out``, the first that applies; None for a pass."""
    if timed_out:
        return _timed_out_verdict(timeout)
    if not rows or (rc != 0 and not out["wrong"]):
        return _no_result_verdict(rc, rows, out["errors"])
    if out["wrong"]:
        return _wrong_data_verdict(out["wrong"])
    threshold = out["threshold_busbw_gbs"]
    slow = None
    if threshold is not None and (out["busbw_gbs"] is None or out["busbw_gbs"] < threshold):
        slow = _slow_verdict(out, min_fraction)
    if fallback:
        return _fallback_verdict(out, slow, ib_devices)
    return slow


def judge_run(library, operation, nranks, rc, timed_out, parsed, expected_busbw_gbs=None,
              min_fraction=0.8, busbw_metric="max", ib_expected=False, timeout=None, ib_devices=None,
              expected_formula=None):
    """The verdict of one collective run from its parsed output.

    Returns {verdict, cause, fix, busbw_gbs, algbw_gbs, expected_busbw_gbs,
    threshold_busbw_gbs, expected_formula, transport, errors, warnings, wrong, rows}.
    ``expected_formula`` (how the expectation was computed, e.g.
    ``4 x 100 Gb/s / 8 x 0.9``) follows the expected value in a slow run's cause.
    ``verdict`` is ``error`` when no result came back, ``fail`` for wrong data,
    bandwidth under the threshold, or NCCL on its Socket transport while
    ``ib_expected`` or ``ib_devices`` (the RDMA devices of the hosts) say RDMA
    is there, else ``pass``. For hccl_test, whose table has only the
    algorithm bandwidth, bus bandwidth is computed with nccl-tests' factors.
    """
    parsed = parsed or {}
    out, rows = _measurements(library, operation, nranks, parsed, expected_busbw_gbs, min_fraction, busbw_metric)
    out["expected_formula"] = expected_formula if expected_busbw_gbs else None
    fallback = transport_fallback(library, out["transport"], ib_expected, ib_devices)
    out.update(_verdict(out, rows, rc, timed_out, timeout, min_fraction, fallback, ib_devices) or {})
    return out


def named_hosts(judgement, hosts):
    """Pool hosts a run's errors name directly (ssh to X failed, a rank on node X died).

    ``hosts``: [{'address', 'name'}]; errors name either. Returns host names.
    """
    named = []
    for error in judgement.get("errors") or []:
        if error.get("code") in GLOBAL_ERROR_CODES:
            continue
        for mention in error.get("hosts") or []:
            for host in hosts:
                if mention in (host.get("address"), host.get("name")) and host["name"] not in named:
                    named.append(host["name"])
    return named


def global_error(judgement):
    """True when a run failed for a reason no subset of hosts would avoid."""
    if judgement.get("verdict") != "error":
        return False
    return any(e.get("code") in GLOBAL_ERROR_CODES for e in judgement.get("errors") or [])


# ------------------------------------------------------------------ records

def _result_runs(res, params):
    runs = list(res.get("runs") or [])
    if runs:
        return runs
    # Nothing ran (binary or mpirun missing, check mode): one record of the pool as planned.
    return [{"hosts": params.get("hosts") or [], "cmd": res.get("cmd"), "verdict": res.get("verdict"),
             "cause": res.get("cause"), "fix": res.get("fix")}]


def _run_record(res, params, index, run):
    names = list(run.get("hosts") or [])
    printed = res.get("result") if params.get("library") == "nccl" and isinstance(res.get("result"), dict) else {}
    return {
        "kind": "collective",
        "host": names[0] if names else "unknown",
        "peer": names[1] if len(names) == 2 else None,
        "params": dict(params, hosts=names, nodes=len(names), stage="pool" if index == 0 else "bisect"),
        "metrics": {
            "busbw_gbs": run.get("busbw_gbs"),
            "algbw_gbs": run.get("algbw_gbs"),
            "expected_busbw_gbs": res.get("expected_busbw_gbs"),
            "threshold_busbw_gbs": res.get("threshold_busbw_gbs"),
            "duration_s": run.get("duration_s"),
            # the network NCCL used (IB, Socket, ...); the pool run's is the module result's
            "transport": run.get("transport") or (res.get("transport") if index == 0 else None),
            # what rank 0 printed: the run's, else the pool run's parsed output
            "nccl_version": run.get("nccl_version") or (printed.get("nccl_version") if index == 0 else None),
            "nccl_tests_version": run.get("nccl_tests_version") or (printed.get("version") if index == 0 else None),
            # bus bandwidth per message size, for the report's chart (the pool run's table)
            "rows": _size_rows(res.get("result")) if index == 0 else [],
        },
        "verdict": run.get("verdict") or "error",
        "cause": run.get("cause"),
        "fix": run.get("fix"),
        "evidence": _run_evidence(res, run),
    }


def _size_rows(result, limit=64):
    """[{bytes, busbw_gbs}] of a parsed result's table (out-of-place when a row has both), at most ``limit``."""
    rows = (result or {}).get("rows") if isinstance(result, dict) else None
    out = []
    for row in rows if isinstance(rows, list) else []:
        if not isinstance(row, dict):
            continue
        value = row.get("busbw_gbs")
        if value is None and isinstance(row.get("out_of_place"), dict):
            value = row["out_of_place"].get("busbw_gbs")
        if row.get("bytes") and isinstance(value, (int, float)) and not isinstance(value, bool):
            out.append({"bytes": row["bytes"], "busbw_gbs": value})
    return out[:limit]


def _run_evidence(res, run):
    """The run's evidence (else its command line), then how its expectation was reached."""
    evidence = list(run.get("evidence") or []) or ([" ".join(run.get("cmd") or [])] if run.get("cmd") else [])
    if res.get("expectation") and res["expectation"] not in evidence:
        evidence.append(res["expectation"])
    return evidence


def _fell_back_to_socket(runs, node):
    """True when the bad runs with ``node`` failed because NCCL fell back to NET/Socket."""
    bad = [r for r in runs if node in (r.get("hosts") or []) and r.get("verdict") in ("fail", "error")]
    return bool(bad) and all(str(r.get("cause") or "").startswith(FALLBACK_CAUSE) for r in bad)


def _bad_node_finding(res, params, runs, node):
    bisected = bool(res.get("bisect"))
    if bisected:
        cause = ("%s %s runs that include %s are bad and runs without it are good (named by "
                 "bisection after %d runs)" % (
                     params.get("library", ""), params.get("operation", ""), node, len(runs)))
    else:
        cause = "the launcher's errors name %s: %s" % (node, res.get("cause"))
    return {
        "kind": "finding",
        "host": node,
        "peer": None,
        "params": _finding_params(params, runs, node, bisected),
        "metrics": {"runs": len(runs)},
        "verdict": "fail",
        "cause": cause,
        "fix": res.get("fix") or "check this node's NICs, GPUs and links",
        "evidence": ["%s: %s%s" % (",".join(r.get("hosts") or []), r.get("verdict"),
                                   " (%s GB/s)" % r["busbw_gbs"] if r.get("busbw_gbs") is not None else "")
                     for r in runs],
    }


def _finding_params(params, runs, node, bisected):
    out = dict(params, check="collective", stage="bisect" if bisected else "pool",
               code="collective_node_bisected" if bisected else "collective_node_named_by_launcher")
    if _fell_back_to_socket(runs, node):
        # the node's NCCL/RDMA setup, not its hardware: the culprit is its configuration
        out["component"] = "config"
    return out


def _unreachable_finding(host, mode):
    return {
        "kind": "finding", "host": host, "peer": None,
        "params": {"check": "collective", "mode": mode, "code": "collective_host_unreachable"},
        "metrics": {}, "verdict": "error",
        "cause": "the host was unreachable for Ansible and was left out of the collective runs",
        "fix": "bring the host back (ssh, power, network) and run the check again",
        "evidence": [],
    }


def collective_records(results, mode="pool", unreachable=None):
    """Records for clusterops.commcheck.record from collective module results.

    ``results``: module results (a registered loop's ``results`` items or
    single results). One ``collective`` record per run (the pool run and each
    bisection run, ``params.stage`` pool or bisect), one ``finding`` record
    per node named bad, and one ``finding`` record (verdict error) per host in
    ``unreachable`` (left out of the runs).
    """
    records = []
    for res in results or []:
        if not isinstance(res, dict) or (res.get("skipped") and not res.get("runs")):
            continue
        params = dict(res.get("params") or {})
        params["mode"] = mode
        runs = _result_runs(res, params)
        records.extend(_run_record(res, params, index, run) for index, run in enumerate(runs))
        records.extend(_bad_node_finding(res, params, runs, node) for node in res.get("bad_nodes") or [])
    records.extend(_unreachable_finding(host, mode) for host in unreachable or [])
    return records
