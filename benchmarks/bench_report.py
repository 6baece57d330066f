# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Benchmark of the report at cluster sizes: synthetic runs rendered through playbooks/report.yml from the history.

Not a test: it prints a table. For each size it generates one run of records
with the fields real runs have (pair_analysis.pair_records, the collective
plan, discovery's records), writes it with the history writer into a fresh
history directory (after ``--earlier-runs`` passing runs, so baselines and
regressions are exercised), then runs

    ansible-playbook playbooks/report.yml -e commcheck_history_dir=<dir> -e commcheck_report_from_history=<run>

with Ansible's main process looking at its worker every 10 ms, as the recommended ansible.cfg sets it
(``--poll-interval``), and reports its wall seconds, the CPU seconds of the ansible-playbook process
tree, its peak memory (the largest process's resident set), the wall milliseconds per record (flat from one
size to the next when nothing grows faster than the records) and the size of every file it wrote, against the
budgets of issues 15 and 37:

- ``ring1024``: 1,024 hosts x 8 rails, ring (each host with the next, per rail: write bandwidth and latency):
  at most 10 s, report.html and commcheck.prom at most 5 MB each;
- ``ring4096``: 4,096 hosts x 8 rails, ring (about 74,000 records): at most 45 s and 2 GB, report.html and
  commcheck.prom at most 5 MB each;
- ``mesh128``: 128 hosts x 8 rails, full mesh (every pair, per rail): at most 30 s (90 s before issue 37) and
  2 GB, report.html and commcheck.prom at most 5 MB each.

The run's model: every host has a discover record and 8 rails (mlx5_0..7, 400 Gb/s); bandwidth is
about 0.95 of expected with noise; one host is bad (all its links at 0.4), one NIC (host x rail) is bad,
two links are bad, two links fail once and pass their as-is retest (flaky), about 3 % of hosts have
findings (CPU governor, PCIe width), one TCP check per pair on rail 0, one pool all_reduce with its
size table, and a summary line. The earlier runs are healthy, so the failing links of the measured run
are also regressions.

    .venv/bin/python benchmarks/bench_report.py [--sizes ring1024 ring4096 mesh128] [--smaller 8] [--json OUT]
        [--keep DIR [--reuse]] [--poll-interval SECONDS]
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import argparse
import datetime
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COLLECTIONS = os.path.join(REPO, ".build", "collections")
sys.path.insert(0, COLLECTIONS)

from ansible_collections.clusterops.commcheck.plugins.module_utils.records import history  # noqa: E402

UTC = datetime.timezone.utc
# internal_poll_interval of the ansible.cfg docs/quickstart.md, AWX's project file and the execution environment
# recommend: at Ansible's 1 ms its main process's poll loop costs CPU for every second the render takes, more
# the more loaded the machine (the figures before 2026-12-03's third mesh round were measured at 1 ms)
RECOMMENDED_POLL_INTERVAL = 0.01
MB = 1000 * 1000
RAILS = 8
LINK_GBPS = 400.0
SIZES = {
    "ring1024": {"hosts": 1024, "topology": "ring", "budget_s": 10, "html_mb": 5, "prom_mb": 5, "rss_mb": 2000},
    "ring4096": {"hosts": 4096, "topology": "ring", "budget_s": 45, "html_mb": 5, "prom_mb": 5, "rss_mb": 2000},
    "mesh128": {"hosts": 128, "topology": "mesh", "budget_s": 30, "html_mb": 5, "prom_mb": 5, "rss_mb": 2000},
}
# runs the command and writes the peak resident set of its largest process (KiB) to the file named first: a fresh
# process per render, so that the peak is this render's alone
PEAK_WRAPPER = ("import resource, subprocess, sys; rc = subprocess.call(sys.argv[2:]); "
                "open(sys.argv[1], 'w').write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)); "
                "sys.exit(rc)")
OUTPUTS = ("report.html", "report.md", "results.json", "junit.xml", "commcheck.prom")


# --------------------------------------------------------------------------
# the synthetic run
# --------------------------------------------------------------------------

def host_names(count):
    return ["gpu-%04d" % i for i in range(count)]


def ring_pairs(hosts):
    """(server, client): each host serves the one before it (the ring's one round of disjoint pairs per rail)."""
    if len(hosts) < 2:
        return []
    return [(hosts[(i + 1) % len(hosts)], hosts[i]) for i in range(len(hosts) if len(hosts) > 2 else 1)]


def mesh_pairs(hosts):
    return [(hosts[i], hosts[j]) for i in range(len(hosts)) for j in range(i + 1, len(hosts))]


class Faults(object):
    """Which host, NIC and links of the synthetic run are bad, flaky or regressed."""

    def __init__(self, hosts, pairs):
        self.bad_host = hosts[len(hosts) // 3]
        self.bad_nic = (hosts[len(hosts) // 2], 5)
        plain = [p for p in pairs if self.bad_host not in p and self.bad_nic[0] not in p]
        self.bad_links = set((p, 2) for p in plain[1:len(plain):max(1, len(plain) // 2)][:2])
        self.flaky_links = set((p, 6) for p in plain[3:len(plain):max(1, len(plain) // 3)][:2])
        self.finding_hosts = hosts[7::33]

    def fraction(self, pair, rail, rng):
        value = min(0.99, rng.gauss(0.95, 0.01))
        if self.bad_host in pair:
            return 0.4
        if self.bad_nic[0] in pair and rail == self.bad_nic[1]:
            return 0.55
        if (pair, rail) in self.bad_links or (pair, rail) in self.flaky_links:
            return 0.6
        return value


def _pair_params(server, client, rail, op, metric, round_index):
    return {"op": op, "metric": metric, "server": server, "client": client, "rail": rail, "round": round_index,
            "step": 0, "device": "mlx5_%d" % rail, "peer_device": "mlx5_%d" % rail, "tcp_port": 18515 + rail,
            "size": 65536 if metric == "bw" else 2, "qps": 4 if metric == "bw" else 1, "duration": 5}


def _evidence(server, client, rail, test):
    port = 18515 + rail
    return ["client %s: ib_%s -d mlx5_%d -x 3 -p %d --report_gbits -D 5 %s" % (client, test, rail, port, server),
            "server %s: ib_%s -d mlx5_%d -x 3 -p %d --report_gbits -D 5" % (server, test, rail, 18515 + rail),
            "client %s: pinned with numactl --cpunodebind=%d --membind=%d (NUMA node of mlx5_%d)" % (
                client, rail // 4, rail // 4, rail)]


def bw_record(server, client, rail, fraction, round_index=0):
    bw = round(LINK_GBPS * fraction, 2)
    failing = fraction < 0.9
    return {"kind": "rdma_bw", "host": server, "peer": client,
            "params": _pair_params(server, client, rail, "write", "bw", round_index),
            "metrics": {"bw_gbps": bw, "bw_peak_gbps": round(bw * 1.02, 2), "expected_gbps": LINK_GBPS,
                        "fraction": round(fraction, 4)},
            "verdict": "fail" if failing else "pass",
            "cause": "%.2f Gb/s is below 90%% of the expected %.2f Gb/s" % (bw, LINK_GBPS) if failing else None,
            "fix": "check the cable, the port counters and the switch port of the link" if failing else None,
            "evidence": _evidence(server, client, rail, "write_bw")}


def lat_record(server, client, rail, lat_us, round_index=0):
    return {"kind": "rdma_lat", "host": server, "peer": client,
            "params": _pair_params(server, client, rail, "write", "lat", round_index),
            "metrics": {"lat_us": lat_us, "lat_avg_us": round(lat_us * 1.05, 2), "lat_p99_us": round(lat_us * 1.6, 2)},
            "verdict": "pass", "cause": None, "fix": None, "evidence": _evidence(server, client, rail, "write_lat")}


def tcp_record(server, client, rng):
    sent = round(rng.gauss(90, 2), 2)
    return {"kind": "tcp_bw", "host": server, "peer": client,
            "params": {"op": "tcp", "metric": "bw", "server": server, "client": client, "rail": 0, "round": 0,
                       "step": 0, "tcp_port": 5201, "duration": 5, "parallel": 4},
            "metrics": {"bw_gbps": round(sent * 0.99, 2), "sent_gbps": sent, "received_gbps": round(sent * 0.99, 2),
                        "retransmits": rng.randint(0, 20)},
            "verdict": "pass", "cause": None, "fix": None,
            "evidence": ["client %s: iperf3 -c %s -p 5201 -P 4 -t 5 -J" % (client, server)]}


def retest_record(record):
    params = dict(record["params"], retest=True, retest_purpose="as_is", retest_id="rt-%s-%s" % (
        record["host"], record["params"]["rail"]))
    metrics = dict(record["metrics"], bw_gbps=round(LINK_GBPS * 0.96, 2), fraction=0.96)
    return dict(record, kind="rdma_bw_retest", params=params, metrics=metrics, verdict="pass", cause=None, fix=None)


def discover_record(host):
    ports = [{"device": "mlx5_%d" % r, "port": 1, "state": "ACTIVE", "rate_gbps": LINK_GBPS,
              "link_layer": "InfiniBand"} for r in range(RAILS)]
    return {"kind": "discover", "host": host, "peer": None, "params": {"sysfs_root": "/sys"},
            "metrics": {"devices": RAILS, "ports": RAILS, "active_ports": RAILS, "errors": 0, "warnings": 0,
                        "ports_detail": ports},
            "verdict": "pass", "cause": None, "fix": None, "evidence": []}


def finding_records(host, index):
    governor = {"kind": "finding", "host": host, "peer": None,
                "params": {"check": "discover", "code": "cpu_governor", "severity": "warning", "device": None,
                           "port": None},
                "metrics": {}, "verdict": "warn", "cause": "CPU frequency governor is powersave, not performance",
                "fix": "cpupower frequency-set -g performance (or the role's cpu_governor option)",
                "evidence": ["/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor: powersave"]}
    if index % 2:
        return [governor]
    pcie = {"kind": "finding", "host": host, "peer": None,
            "params": {"check": "discover", "code": "pcie_width", "severity": "error", "device": "mlx5_3", "port": 1},
            "metrics": {}, "verdict": "fail", "cause": "mlx5_3 runs at PCIe x8, its slot is x16",
            "fix": "reseat the card or move it to an x16 slot", "evidence": ["LnkSta: Speed 32GT/s, Width x8"]}
    return [governor, pcie]


def collective_record(hosts, rng):
    rows = [{"bytes": 2 ** e, "busbw_gbs": round(min(360.0, 2 ** e / 2 ** 22) * rng.uniform(0.97, 1.0), 2)}
            for e in range(10, 33)]
    return {"kind": "collective", "host": hosts[0], "peer": None,
            "params": {"library": "nccl", "op": "all_reduce", "hosts": list(hosts), "nodes": len(hosts),
                       "gpus_per_node": 8, "stage": "pool", "min_bytes": 1024, "max_bytes": 2 ** 32},
            "metrics": {"busbw_gbs": rows[-1]["busbw_gbs"], "algbw_gbs": round(rows[-1]["busbw_gbs"] / 1.9, 2),
                        "expected_busbw_gbs": 360.0, "threshold_busbw_gbs": 288.0, "duration_s": 93.4,
                        "transport": "IB", "nccl_version": "2.21.5", "nccl_tests_version": "2.13.9", "rows": rows},
            "verdict": "pass", "cause": None, "fix": None,
            "evidence": ["mpirun -np %d -N 8 all_reduce_perf -b 1K -e 4G -f 2" % (8 * len(hosts))]}


def _link_records(pairs, faults, rng, earlier):
    records = []
    for rail in range(RAILS):
        for round_index, pair in enumerate(pairs):
            fraction = rng.gauss(0.95, 0.01) if earlier else faults.fraction(pair, rail, rng)
            record = bw_record(pair[0], pair[1], rail, fraction, round_index)
            records.append(record)
            if not earlier and (pair, rail) in faults.flaky_links:
                records.append(retest_record(record))
            records.append(lat_record(pair[0], pair[1], rail, round(rng.gauss(2.1, 0.05), 2), round_index))
    return records


def synthetic_run(hosts, pairs, seed=1, earlier=False):
    """The check records of one run (no summary line); ``earlier``: a healthy run to compare with."""
    rng = random.Random(seed)
    faults = Faults(hosts, pairs)
    records = [discover_record(h) for h in hosts]
    if not earlier:
        for index, host in enumerate(faults.finding_hosts):
            records.extend(finding_records(host, index))
    records.extend(_link_records(pairs, faults, rng, earlier))
    records.extend(tcp_record(s, c, rng) for s, c in pairs)
    records.append(collective_record(hosts, rng))
    return records


def write_history(directory, runs):
    """Append each (run_id, when, records) with the product's writer, each run ended by its summary line."""
    for run_id, when, records in runs:
        normalized, _removed = history.normalize_records(records)
        counts = {}
        for record in normalized:
            counts[record["verdict"]] = counts.get(record["verdict"], 0) + 1
        hosts = sorted(set(r["host"] for r in normalized))
        summary = history.summary_record("playbooks/commcheck.yml", "bench", {"ok": hosts}, counts, len(normalized))
        history.append_records(directory, normalized + [summary], run_id, when=when, fsync=False)


# --------------------------------------------------------------------------
# rendering and measuring
# --------------------------------------------------------------------------

def render(history_dir, report_dir, run_id, poll_interval=RECOMMENDED_POLL_INTERVAL):
    """(wall seconds, CPU seconds of the process tree, peak resident bytes of its largest process, completed
    process) of playbooks/report.yml on the run, Ansible's main process looking at its worker every
    ``poll_interval`` seconds (``internal_poll_interval``, in an ansible.cfg of its own beside the reports)."""
    argv = ["ansible-playbook", os.path.join(REPO, "playbooks", "report.yml"),
            "-e", json.dumps({"commcheck_history_dir": history_dir, "commcheck_report_from_history": run_id,
                              "commcheck_report_dir": report_dir, "commcheck_report_publish_regressions": False})]
    config = report_dir + ".ansible.cfg"
    with open(config, "w") as handle:
        handle.write("[defaults]\ninternal_poll_interval = %s\n" % poll_interval)
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=COLLECTIONS, ANSIBLE_CONFIG=config)
    bin_dir = os.path.dirname(sys.executable)
    env["PATH"] = bin_dir + os.pathsep + env.get("PATH", "")
    peak_file = report_dir + ".peak"
    argv = [sys.executable, "-c", PEAK_WRAPPER, peak_file] + argv
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    proc = subprocess.run(argv, env=env, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, check=False)
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    with open(peak_file) as handle:
        peak = int(handle.read()) * 1024
    os.remove(peak_file)
    os.remove(config)
    return wall, cpu, peak, proc


def scaled(name, smaller):
    spec = dict(SIZES[name], name=name)
    if smaller > 1:
        spec["hosts"] = max(4, spec["hosts"] // smaller)
        spec["name"] = "%s/%d" % (name, smaller)
    return spec


def bench_size(spec, workdir, earlier_runs, reuse=False, poll_interval=RECOMMENDED_POLL_INTERVAL):
    hosts = host_names(spec["hosts"])
    pairs = ring_pairs(hosts) if spec["topology"] == "ring" else mesh_pairs(hosts)
    history_dir = os.path.join(workdir, "history")
    report_dir = os.path.join(workdir, "reports")
    now = datetime.datetime.now(UTC).replace(microsecond=0)
    run_id = "bench-%s" % spec["name"].replace("/", "-")
    runs = [("earlier-%d" % i, now - datetime.timedelta(days=earlier_runs - i),
             synthetic_run(hosts, pairs, seed=100 + i, earlier=True)) for i in range(earlier_runs)]
    records = synthetic_run(hosts, pairs)
    runs.append((run_id, now - datetime.timedelta(hours=1), records))
    started = time.monotonic()
    if not (reuse and os.path.isdir(history_dir)):
        write_history(history_dir, runs)
    written = time.monotonic() - started
    shutil.rmtree(report_dir, ignore_errors=True)
    wall, cpu, rss, proc = render(history_dir, report_dir, run_id, poll_interval)
    out_dir = os.path.join(report_dir, run_id)
    sizes = dict((name, os.path.getsize(os.path.join(out_dir, name)))
                 for name in OUTPUTS if os.path.exists(os.path.join(out_dir, name)))
    return {"size": spec["name"], "hosts": spec["hosts"], "rails": RAILS, "topology": spec["topology"],
            "records": len(records), "poll_interval_s": poll_interval,
            "history_write_s": round(written, 1), "wall_s": round(wall, 1),
            "cpu_s": round(cpu, 1), "rc": proc.returncode, "bytes": sizes, "peak_rss_mb": round(rss / float(MB)),
            "ms_per_record": round(1000.0 * wall / len(records), 3),
            "budget": {"wall_s": spec["budget_s"], "html_mb": spec["html_mb"], "prom_mb": spec["prom_mb"],
                       "rss_mb": spec["rss_mb"]},
            "within_budget": within_budget(spec, wall, rss, sizes, proc.returncode),
            "output_tail": proc.stdout[-3000:] if proc.returncode else ""}


def within_budget(spec, wall, rss, sizes, rc):
    return (rc == 0 and wall <= spec["budget_s"] and rss <= spec["rss_mb"] * MB
            and sizes.get("report.html", 0) <= spec["html_mb"] * MB
            and sizes.get("commcheck.prom", 0) <= spec["prom_mb"] * MB)


def _mb(value):
    return "-" if value is None else "%.2f" % (value / float(MB))


def table(rows):
    head = ("| size | records | wall s (budget) | wall ms per record | CPU s | peak MB (budget) "
            "| report.html MB (budget) | commcheck.prom MB (budget) "
            "| results.json MB | report.md MB | junit.xml MB | within budget |")
    lines = [head, "|" + "---|" * 12]
    for row in rows:
        sizes, budget = row["bytes"], row["budget"]
        lines.append("| %s | %d | %.1f (%d) | %.3f | %.1f | %d (%d) | %s (%d) | %s (%d) | %s | %s | %s | %s |" % (
            row["size"], row["records"], row["wall_s"], budget["wall_s"], row["ms_per_record"], row["cpu_s"],
            row["peak_rss_mb"], budget["rss_mb"],
            _mb(sizes.get("report.html")), budget["html_mb"], _mb(sizes.get("commcheck.prom")), budget["prom_mb"],
            _mb(sizes.get("results.json")), _mb(sizes.get("report.md")), _mb(sizes.get("junit.xml")),
            "yes" if row["within_budget"] else "no" + (" (rc %d)" % row["rc"] if row["rc"] else "")))
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n", maxsplit=1)[0])
    parser.add_argument("--sizes", nargs="+", choices=sorted(SIZES), default=["ring1024", "mesh128"])
    parser.add_argument("--smaller", type=int, default=1, help="divide the host counts by this (a quick check)")
    parser.add_argument("--earlier-runs", type=int, default=3, help="healthy runs before the measured one")
    parser.add_argument("--json", help="write the figures here")
    parser.add_argument("--keep", help="keep the history and the reports under this directory")
    parser.add_argument("--reuse", action="store_true",
                        help="with --keep: render again from the history kept there (the same seed makes the same runs)")
    parser.add_argument("--poll-interval", type=float, default=RECOMMENDED_POLL_INTERVAL,
                        help="Ansible's internal_poll_interval for the render: %s s, the recommended ansible.cfg's "
                             "(docs/quickstart.md), by default; 0.001 is Ansible's own default" % (
                                 RECOMMENDED_POLL_INTERVAL))
    args = parser.parse_args()
    if not 0 < args.poll_interval <= 1:
        parser.error("--poll-interval: a number of seconds above 0, at most 1")
    rows = []
    for name in args.sizes:
        spec = scaled(name, args.smaller)
        workdir = os.path.join(args.keep, spec["name"].replace("/", "-")) if args.keep else tempfile.mkdtemp(
            prefix="bench-report-")
        if args.keep and os.path.isdir(workdir) and not args.reuse:
            shutil.rmtree(workdir)
        try:
            row = bench_size(spec, workdir, args.earlier_runs, reuse=bool(args.keep and args.reuse),
                             poll_interval=args.poll_interval)
        finally:
            if not args.keep:
                shutil.rmtree(workdir, ignore_errors=True)
        rows.append(row)
        if row["rc"]:
            print(row["output_tail"], file=sys.stderr)
        print("%s: %d records, history written in %.1f s, rendered in %.1f s (CPU %.1f s)" % (
            row["size"], row["records"], row["history_write_s"], row["wall_s"], row["cpu_s"]), file=sys.stderr)
    print(table(rows))
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(rows, handle, indent=1, sort_keys=True)
    return 0 if all(r["rc"] == 0 for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
