# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The expected inter-node bus bandwidth of a collective run from discovery, and how it shows."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json
import os
import subprocess
import sys

import pytest

from ansible_collections.clusterops.commcheck.plugins.module_utils.commands.collective_spec import expectation_of
from ansible_collections.clusterops.commcheck.plugins.module_utils.planning import collective_expectation as ce
from ansible_collections.clusterops.commcheck.plugins.module_utils.planning import collective_plan as cp
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_nccl_tests import parse_nccl_tests

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
COLLECTIONS = os.path.join(REPO, ".build", "collections")
MODULE = os.path.join(REPO, "plugins", "modules", "collective.py")
CORPUS = os.path.join(REPO, "tests", "fixtures", "corpus")
L40S = os.path.join(CORPUS, "nccl_tests", "all_reduce_perf_2pod_l40s_reducing_maxbytes.txt")  # peak ~8 GB/s


def port(rate, state="ACTIVE", num=1):
    return {"port": num, "state": state, "link_layer": "InfiniBand", "rate_gbps": rate}


def rdma(*devices):
    """A commcheck_rdma fact: devices as (name, [ports])."""
    return {"devices": [{"name": name, "ports": ports} for name, ports in devices]}


FOUR_RAILS = rdma(*[("mlx5_%d" % i, [port(100)]) for i in range(4)])


def test_host_rates_are_its_active_ports_in_rail_order():
    facts = rdma(("mlx5_10", [port(200)]), ("mlx5_2", [port(100)]), ("mlx5_3", [port(400, state="DOWN")]),
                 ("mlx5_4", [port(400, state="4: INIT")]), ("mlx5_5", [port(None)]))
    assert ce.host_nic_rates(facts) == [100.0, 200.0]
    assert ce.host_nic_rates(None) == [] and ce.host_nic_rates({}) == []


@pytest.mark.parametrize("hca,rates", [
    ("", [100.0, 100.0, 100.0, 100.0]),
    ("mlx5_0,mlx5_1", [100.0, 100.0]),
    ("^mlx5_3", [100.0, 100.0, 100.0]),
    ("=mlx5_0:1", [100.0]),
    ("mlx5_0:2", []),
    ("mlx5", [100.0, 100.0, 100.0, 100.0]),
    ("=mlx5", []),
])
def test_nccl_ib_hca_narrows_the_ports_as_nccl_does(hca, rates):
    assert ce.host_nic_rates(FOUR_RAILS, hca) == rates


def test_the_slowest_host_sets_the_expectation():
    facts = {"h1": FOUR_RAILS,
             "h2": rdma(("mlx5_0", [port(200)]), ("mlx5_1", [port(200)])),
             "h3": rdma(("mlx5_0", [port(100)]), ("mlx5_1", [port(100)]), ("mlx5_2", [port(100, state="DOWN")]))}
    found = ce.expected_from_discovery(facts, ["h1", "h2", "h3"])
    assert found == {"rates": [100.0, 100.0], "host": "h3", "source": "discovery", "unrated": []}
    # hosts outside the run do not count
    assert ce.expected_from_discovery(facts, ["h1", "h2"])["host"] == "h1"


def test_hosts_without_facts_are_left_out_and_none_known_gives_none():
    facts = {"h1": FOUR_RAILS, "h2": rdma(("mlx5_0", [port(100, state="DOWN")]))}
    found = ce.expected_from_discovery(facts, ["h1", "h2", "h9"])
    assert found["host"] == "h1" and found["unrated"] == ["h2", "h9"]
    assert ce.expected_from_discovery({}, ["h1", "h2"]) is None
    assert ce.expected_from_discovery(facts, ["h2"]) is None


def test_configured_rates_win_over_discovery():
    facts = {"h1": FOUR_RAILS}
    assert ce.nic_rates_choice([400, 400], facts, ["h1"]) == {
        "rates": [400.0, 400.0], "host": None, "source": "configured", "note": "rates configured"}
    derived = ce.nic_rates_choice([], facts, ["h1", "h2"])
    assert derived["rates"] == [100.0] * 4 and derived["source"] == "discovery"
    assert derived["note"] == "rates from discovery, slowest host h1; no known rate on h2"
    assert ce.nic_rates_choice([], {}, ["h1"]) == {"rates": [], "host": None, "source": None, "note": None}


def test_the_choice_takes_discovery_unless_rates_are_configured():
    assert ce.nic_rates_choice([], {"h1": FOUR_RAILS}, ["h1"])["rates"] == [100.0] * 4
    assert ce.nic_rates_choice([25], {"h1": FOUR_RAILS}, ["h1"])["rates"] == [25.0]


def test_formula_text_is_the_one_formula_spelled_out():
    assert ce.busbw_formula([100] * 4, 0.9) == "4 x 100 Gb/s / 8 x 0.9"
    assert cp.expected_busbw([100] * 4, 0.9) == 45.0
    assert ce.busbw_formula([100, 200], 0.85) == "(100 + 200) Gb/s / 8 x 0.85"
    assert ce.busbw_formula([0.5, 0.5], 0.9) == "2 x 0.5 Gb/s / 8 x 0.9"
    assert ce.busbw_formula([], 0.9) is None
    assert ce.expectation_text(45.0, "4 x 100 Gb/s / 8 x 0.9", "rates from discovery, slowest host h3") == (
        "expected 45.0 GB/s = 4 x 100 Gb/s / 8 x 0.9 efficiency (rates from discovery, slowest host h3)")
    assert ce.expectation_text(None, "x") is None


def spec_params(**kw):
    params = {"expected_busbw_gbs": None, "nic_rates_gbps": [], "link_efficiency": 0.9, "nic_rates_source": None}
    params.update(kw)
    return params


def test_module_expectation_explicit_busbw_wins_over_rates():
    assert expectation_of(spec_params(nic_rates_gbps=[100] * 4, nic_rates_source="rates from discovery, slowest "
                                      "host h3")) == (
        45.0, "4 x 100 Gb/s / 8 x 0.9",
        "expected 45.0 GB/s = 4 x 100 Gb/s / 8 x 0.9 efficiency (rates from discovery, slowest host h3)")
    assert expectation_of(spec_params(nic_rates_gbps=[100] * 4, expected_busbw_gbs=40.0)) == (
        40.0, None, "expected 40.0 GB/s (configured)")
    assert expectation_of(spec_params()) == (None, None, None)


def test_slow_cause_shows_the_numbers_side_by_side():
    parsed = parse_nccl_tests(open(L40S).read())
    measured = cp.measured_busbw(parsed)
    judged = cp.judge_run("nccl", "all_reduce", 2, 0, False, parsed, expected_busbw_gbs=45.0, min_fraction=0.8,
                          expected_formula="4 x 100 Gb/s / 8 x 0.9")
    assert judged["verdict"] == "fail"
    assert judged["cause"] == ("bus bandwidth %s GB/s is below 36.0 GB/s (80%% of the expected 45.0 GB/s = "
                               "4 x 100 Gb/s / 8 x 0.9)" % measured)
    # no expectation: no threshold, the formula is not shown
    free = cp.judge_run("nccl", "all_reduce", 2, 0, False, parsed, expected_formula="4 x 100 Gb/s / 8 x 0.9")
    assert free["verdict"] == "pass" and free["threshold_busbw_gbs"] is None and free["expected_formula"] is None


def test_records_carry_the_expectation_after_the_command():
    res = {"verdict": "pass", "expected_busbw_gbs": 45.0, "threshold_busbw_gbs": 36.0,
           "expectation": "expected 45.0 GB/s = 4 x 100 Gb/s / 8 x 0.9 efficiency (rates configured)",
           "params": {"library": "nccl", "operation": "all_reduce"},
           "runs": [{"hosts": ["h1", "h2"], "cmd": ["mpirun", "-np", "2"], "verdict": "pass", "busbw_gbs": 40.0}]}
    [record] = cp.collective_records([res])
    assert record["evidence"] == ["mpirun -np 2", res["expectation"]]
    assert record["metrics"]["expected_busbw_gbs"] == 45.0
    [bare] = cp.collective_records([dict(res, expectation=None)])
    assert bare["evidence"] == ["mpirun -np 2"]


MPIRUN = "import os, sys\nsys.stdout.write(open(os.environ['REPLAY_FILE']).read())\n"


def script(path, body):
    path.write_text("#!%s\n%s" % (sys.executable, body))
    path.chmod(0o755)


def test_module_fails_a_slow_pool_with_the_formula_in_the_cause(tmp_path):
    bindir, tests = tmp_path / "bin", tmp_path / "tests"
    bindir.mkdir()
    tests.mkdir()
    script(bindir / "mpirun", MPIRUN)
    script(tests / "all_reduce_perf", "print('USAGE: all_reduce_perf [-b,--minbytes <min size in bytes>]')\n")
    args = {"library": "nccl", "hosts": ["h1", "h2"], "binary_dir": str(tests), "gpus_per_node": 1,
            "nic_rates_gbps": [100] * 4, "link_efficiency": 0.9, "min_fraction": 0.8,
            "nic_rates_source": "rates from discovery, slowest host h2"}
    argfile = tmp_path / "args.json"
    argfile.write_text(json.dumps({"ANSIBLE_MODULE_ARGS": args}))
    env = dict(os.environ, PYTHONPATH=COLLECTIONS, REPLAY_FILE=L40S)
    env["PATH"] = str(bindir) + os.pathsep + env.get("PATH", "")
    proc = subprocess.run([sys.executable, MODULE, str(argfile)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, env=env, timeout=60, check=False)
    out = json.loads(proc.stdout[proc.stdout.index("{"):])
    assert out["verdict"] == "fail", out
    assert out["expected_busbw_gbs"] == 45.0 and out["threshold_busbw_gbs"] == 36.0
    assert "(80% of the expected 45.0 GB/s = 4 x 100 Gb/s / 8 x 0.9)" in out["cause"]
    assert out["expectation"] == ("expected 45.0 GB/s = 4 x 100 Gb/s / 8 x 0.9 efficiency "
                                  "(rates from discovery, slowest host h2)")


def test_the_note_stays_within_what_the_module_takes():
    from ansible_collections.clusterops.commcheck.plugins.module_utils.planning import collective_expectation as ce
    from ansible_collections.clusterops.commcheck.plugins.module_utils.options import option_rules as rules
    facts = {"h1": {"devices": [{"name": "mlx5_0", "ports": [{"port": 1, "state": "ACTIVE", "rate_gbps": 100}]}]}}
    short = ce.nic_rates_choice([], facts, ["h1"] + ["n%d" % i for i in range(40)])
    assert short["host"] == "h1" and short["note"].endswith("no known rate on n0, n1, n2, n3, n4 and 35 more")
    long_names = ["h1"] + ["a-very-long-host-name-%03d.cluster.example.com" % i for i in range(40)]
    choice = ce.nic_rates_choice([], facts, long_names)
    assert len(choice["note"]) == 200 and choice["note"].endswith("...")
    assert rules.check_text("nic_rates_source", choice["note"], 200) == choice["note"]
