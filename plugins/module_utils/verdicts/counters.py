# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Port error counters: snapshots before / after the traffic, deltas per port, trends across runs (pure).

A *snapshot* is ``{"<device>/<port>": {"counters": {...}, "hw_counters":
{...}, "netdev": ..., "rate_gbps": ...}}``, taken from the ``commcheck_rdma``
fact (``rdma_facts`` reads sysfs ``ports/N/counters/`` and
``ports/N/hw_counters/``) before and after the traffic tests.

:func:`deltas` compares two snapshots: each counter that rose is attributed
to its port with a severity from :data:`COUNTERS` (``link_downed`` is an
error, bit errors and discards are warnings, RoCE congestion counters are
information). A counter that went down was reset (driver reload, counter
clear) and its delta is unknown. :func:`counter_records` turns one host's
deltas into ``port_counters`` records (one per port, absolute values and
deltas as metrics) for history; :func:`trend` reads those records back from
history and names counters that keep rising between runs (a flapping link,
a rising bit error rate).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.text import natural_key

# counter -> (severity when it rises, what it means, fix)
_LINK_FIX = ("check the cable, transceivers and switch port of this port (reseat / replace), its link speed and "
             "width, and the switch port's own error counters")
COUNTERS = {
    "link_downed": ("error", "the link went down and retrained", _LINK_FIX),
    "link_error_recovery": ("warning", "the link had to recover from errors (retraining)", _LINK_FIX),
    "symbol_error": ("warning", "symbol (bit) errors on the wire: a marginal cable, transceiver or port", _LINK_FIX),
    "port_rcv_errors": ("warning", "received packets with errors (bad CRC, malformed)", _LINK_FIX),
    "port_rcv_remote_physical_errors": ("warning", "packets marked bad by the remote side (EBP)", _LINK_FIX),
    "port_xmit_discards": ("warning", "outbound packets discarded (link down or congestion)",
                           "check the port's link state history and congestion (PFC / ECN settings, "
                           "switch buffers)"),
    "local_link_integrity_errors": ("warning", "local link integrity threshold exceeded", _LINK_FIX),
    "excessive_buffer_overrun_errors": ("warning", "receive buffer overruns (flow control not working)",
                                        "check flow control (PFC / credit) settings on both ends of the link"),
    "out_of_sequence": ("warning", "packets arrived out of sequence (drops and retransmissions)",
                        "look for packet loss on the path: switch drops, PFC not enabled for the RoCE priority"),
    "packet_seq_err": ("warning", "NAK sequence errors received (the peer saw loss)",
                       "look for packet loss on the path: switch drops, PFC not enabled for the RoCE priority"),
    "local_ack_timeout_err": ("warning", "transport retries after ACK timeouts (loss or a stalled peer)",
                              "look for packet loss and link flaps on the path and on the peer"),
    "rnr_nak_retry_err": ("warning", "receiver-not-ready retries exhausted",
                          "check the receiver application and its posted receive buffers"),
    "out_of_buffer": ("warning", "receive WQEs ran out (the receiver did not keep up)",
                      "check the receiving host's CPU / NUMA placement and load"),
    "np_cnp_sent": ("info", "congestion notifications sent (ECN marks seen as receiver)",
                    "congestion on the path; expected under load, check ECN / DCQCN tuning if it is large"),
    "np_ecn_marked_roce_packets": ("info", "ECN-marked RoCE packets received",
                                   "congestion on the path; check ECN / DCQCN tuning"),
    "rp_cnp_handled": ("info", "congestion notifications received (rate reduced)",
                       "congestion on the path; check ECN / DCQCN tuning"),
    "rp_cnp_ignored": ("info", "congestion notifications ignored", "check DCQCN settings"),
}
SEVERITY_ORDER = ("error", "warning", "info")
CURRENT_RUN = "(this run)"
LAST = u"\uffff"
# counters whose rise between runs is a trend worth naming
TREND_NAMES = {
    "link_downed": "flapping link",
    "link_error_recovery": "flapping link",
    "symbol_error": "rising bit error rate",
    "port_rcv_errors": "rising receive errors",
    "port_rcv_remote_physical_errors": "rising bit error rate",
    "local_link_integrity_errors": "rising bit error rate",
}


class CounterError(ValueError):
    """Input that cannot be compared."""


def _int(value):
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value == int(value):
        return int(value)
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value.strip())
    return None


def snapshot(rdma_facts):
    """``{"dev/port": {"counters", "hw_counters", "netdev", "rate_gbps", "device", "port"}}`` from the fact."""
    if rdma_facts is None:
        return {}
    if not isinstance(rdma_facts, dict):
        raise CounterError("expected the commcheck_rdma fact (a dict), got %s" % type(rdma_facts).__name__)
    out = {}
    for dev in rdma_facts.get("devices") or []:
        for port in dev.get("ports") or []:
            key = "%s/%s" % (dev.get("name"), port.get("port"))
            out[key] = {
                "device": dev.get("name"),
                "port": port.get("port"),
                "netdev": port.get("netdev"),
                "rate_gbps": port.get("rate_gbps"),
                "counters": dict((k, v) for k, v in (port.get("counters") or {}).items() if _int(v) is not None),
                "hw_counters": dict((k, v) for k, v in (port.get("hw_counters") or {}).items()
                                    if _int(v) is not None),
            }
    return out


def _flat(entry):
    values = {}
    for group in ("counters", "hw_counters"):
        for name, value in (entry.get(group) or {}).items():
            number = _int(value)
            if number is not None:
                values[name] = number
    return values


def deltas(before, after, host=None, include_info=True):
    """Counters that changed on each port between two snapshots, worst first.

    Each item: ``host``, ``device``, ``port``, ``netdev``, ``counter``,
    ``before``, ``after``, ``delta`` (None when the counter went down: a
    reset), ``severity``, ``meaning``, ``fix``. Counters the module does not
    know rise as ``info``. Ports or counters present only on one side are
    left out (nothing to compare).
    """
    if not isinstance(before, dict) or not isinstance(after, dict):
        raise CounterError("before and after must be counter snapshots (dicts)")
    out = []
    for key in sorted(set(before) & set(after), key=natural_key):
        old, new = _flat(before[key]), _flat(after[key])
        meta = after[key]
        for name in sorted(set(old) & set(new)):
            if new[name] == old[name]:
                continue
            severity, meaning, fix = COUNTERS.get(name, ("info", "counter %s changed" % name, None))
            reset = new[name] < old[name]
            if reset:
                severity, meaning = "info", "the counter went down (reset or driver reload): delta unknown"
            if severity == "info" and not include_info:
                continue
            out.append({"host": host, "device": meta.get("device") or key.split("/")[0],
                        "port": meta.get("port") if meta.get("port") is not None else _int(key.split("/")[-1]),
                        "netdev": meta.get("netdev"), "counter": name, "before": old[name], "after": new[name],
                        "delta": None if reset else new[name] - old[name], "severity": severity,
                        "meaning": meaning, "fix": fix})
    order = dict((s, i) for i, s in enumerate(SEVERITY_ORDER))
    out.sort(key=lambda d: (order.get(d["severity"], 9), natural_key(d["device"]), d["port"] or 0, d["counter"]))
    return out


def counter_records(host, before, after, check="rdma_perf"):
    """One ``port_counters`` record per port of ``host``: absolute values after, deltas during the run.

    Verdict: ``fail`` when an error counter rose (``link_downed``),
    ``warn`` for warning counters, else ``pass``; cause and fix name the worst.
    """
    if not host:
        raise CounterError("counter records need a host name")
    changed = deltas(before, after, host)
    by_port = {}
    for item in changed:
        by_port.setdefault("%s/%s" % (item["device"], item["port"]), []).append(item)
    records = []
    for key in sorted(set(before) & set(after), key=natural_key):
        entry = after[key]
        items = by_port.get(key, [])
        metrics = dict(_flat(entry))
        for item in items:
            if item["delta"] is not None:
                metrics["%s_delta" % item["counter"]] = item["delta"]
        worst = items[0] if items else None
        verdict = {"error": "fail", "warning": "warn"}.get(worst["severity"], "pass") if worst else "pass"
        cause = fix = None
        if worst and verdict != "pass":
            cause = "%s rose by %s during the run on %s port %s: %s" % (
                worst["counter"], worst["delta"], worst["device"], worst["port"], worst["meaning"])
            fix = worst["fix"]
        evidence = []
        for item in items:
            change = "+%d" % item["delta"] if item["delta"] is not None else "reset"
            evidence.append("%s: %s -> %s (%s)" % (item["counter"], item["before"], item["after"], change))
        records.append({"kind": "port_counters", "host": host, "peer": None,
                        "params": {"check": check, "device": entry.get("device") or key.split("/")[0],
                                   "port": entry.get("port"), "netdev": entry.get("netdev")},
                        "metrics": metrics, "verdict": verdict, "cause": cause, "fix": fix, "evidence": evidence})
    return records


def port_evidence(items, host, device=None):
    """Evidence lines for one host (and device) from :func:`deltas` items (warning and worse)."""
    out = []
    for item in items or []:
        if item.get("host") not in (None, host) or item["severity"] == "info":
            continue
        if device is not None and item.get("device") != device:
            continue
        out.append("%s %s/%s: %s +%s during the run (%s)" % (
            host, item["device"], item["port"], item["counter"], item["delta"], item["meaning"]))
    return out


def trend(history_records, min_runs=3, min_rises=None, names=None):
    """Counters that keep rising between runs, from ``port_counters`` history records.

    Per (host, device, port, counter): the value at the end of each run, in
    time order (a run's last record counts). It *keeps rising* when it rose in
    at least ``min_rises`` (default: all) of the intervals between the last
    ``min_runs`` runs. A value that drops is a reset: only the intervals after
    it count. Records without ``run_id`` and ``time`` are the current run's
    (not written to history yet) and come last. Returns items with ``host``, ``device``, ``port``, ``counter``,
    ``name`` (flapping link, rising bit error rate, ...), ``values``,
    ``runs``, ``rises``, ``increase``.
    """
    min_rises = _check_trend_options(min_runs, min_rises)
    names = TREND_NAMES if names is None else dict((n, TREND_NAMES.get(n, "rising %s" % n)) for n in names)
    out = []
    for key, runs in _counter_series(history_records, names).items():
        window = _since_last_reset(_in_run_order(runs))[-min_runs:]
        if len(window) < min_runs:
            continue
        rises = sum(1 for a, b in zip(window, window[1:]) if b > a)
        if rises >= min_rises:
            host, device, port, counter = key
            out.append({"host": host, "device": device, "port": port, "counter": counter,
                        "name": names[counter], "values": window, "runs": len(window), "rises": rises,
                        "increase": window[-1] - window[0]})
    out.sort(key=lambda t: (natural_key(t["host"] or ""), natural_key(t["device"] or ""), t["port"] or 0,
                            t["counter"]))
    return out


def _check_trend_options(min_runs, min_rises):
    """``min_rises`` checked, its default (every interval) filled in."""
    if isinstance(min_runs, bool) or not isinstance(min_runs, int) or min_runs < 2:
        raise CounterError("min_runs must be an integer >= 2, got %r" % (min_runs,))
    if min_rises is None:
        min_rises = min_runs - 1
    if isinstance(min_rises, bool) or not isinstance(min_rises, int) or not 1 <= min_rises <= min_runs - 1:
        raise CounterError("min_rises must be an integer from 1 to min_runs - 1 (%d), got %r" % (min_runs - 1,
                                                                                                 min_rises))
    return min_rises


def _counter_series(history_records, names):
    """(host, device, port, counter) -> {run: (time, value)}, a run's last record winning."""
    series = {}
    for rec in history_records or []:
        if not isinstance(rec, dict) or rec.get("kind") != "port_counters":
            continue
        params = rec.get("params") or {}
        # a record without run_id / time is this run's (not in history yet): it comes last
        run = rec.get("run_id") or rec.get("time") or CURRENT_RUN
        when = rec.get("time") or LAST
        for counter, value in (rec.get("metrics") or {}).items():
            if counter not in names or _int(value) is None:
                continue
            key = (rec.get("host"), params.get("device"), params.get("port"), counter)
            runs = series.setdefault(key, {})
            if run not in runs or runs[run][0] <= when:
                runs[run] = (when, _int(value))
    return series


def _in_run_order(runs):
    return [v for _run, (_when, v) in sorted(runs.items(), key=lambda item: (item[1][0], str(item[0])))]


def _since_last_reset(values):
    """The values from the last drop (a counter reset) on."""
    start = 0
    for idx in range(1, len(values)):
        if values[idx] < values[idx - 1]:
            start = idx
    return values[start:]


def trend_records(items, check="counters"):
    """``finding`` records for :func:`trend` items (verdict ``warn``)."""
    out = []
    for item in items or []:
        meaning = COUNTERS.get(item["counter"], ("warning", item["counter"], _LINK_FIX))
        out.append({"kind": "finding", "host": item["host"], "peer": None,
                    "params": {"check": check, "finding": "counter_trend", "device": item["device"],
                               "port": item["port"], "counter": item["counter"]},
                    "metrics": {"increase": item["increase"], "runs": item["runs"], "rises": item["rises"]},
                    "verdict": "warn",
                    "cause": "%s on %s %s/%s: %s rose in %d of the last %d intervals between runs (%s)" % (
                        item["name"], item["host"], item["device"], item["port"], item["counter"], item["rises"],
                        item["runs"] - 1, " -> ".join(str(v) for v in item["values"])),
                    "fix": meaning[2], "evidence": []})
    return out
