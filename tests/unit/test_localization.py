# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Localization over synthetic per-rail bandwidth matrices: host, rail, link, fabric, fleet, flaky."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import random

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import localization as loc
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import localization_fleet as loc_fleet
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import localization_hosts as loc_hosts
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import localization_links as loc_links
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import localization_view as loc_view
from ansible_collections.clusterops.commcheck.plugins.filter.commcheck_localize import commcheck_localize

RATE = 100.0
GOOD = 95.0
BAD = 30.0


def hosts(n):
    return ["h%d" % (i + 1) for i in range(n)]


def matrix(n, rails, bad, noise=0.0, seed=0):
    """A full mesh, rail k of every host against rail k of every other; bad(a, b, rail) -> True slows it."""
    rnd = random.Random(seed)
    names = hosts(n)
    grids = {}
    for rail in range(rails):
        grid = [[None] * n for dummy in names]
        for i in range(n):
            for j in range(i + 1, n):
                value = BAD if bad(names[i], names[j], rail) else GOOD
                grid[i][j] = value * (1 + rnd.uniform(-noise, noise))
        grids[rail] = grid
    return {"hosts": names, "rails": grids}


def localize(mat, **kwargs):
    obs = loc.observations_from_matrix(mat, expected=RATE, min_fraction=0.9,
                                       devices=dict((r, "mlx5_%d" % r) for r in mat["rails"]))
    return loc.localize(obs, **kwargs)


def kinds(result):
    return [(c["component"], c["host"], c["peer"], c["rail"]) for c in result["components"]]


def test_all_good_names_nothing():
    result = localize(matrix(4, 2, lambda a, b, r: False))
    assert result["components"] == [] and result["primary"] is None
    assert result["summary"]["verdict"] == "pass" and result["summary"]["links_total"] == 12


def test_slow_host_on_every_rail_is_the_host():
    result = localize(matrix(4, 2, lambda a, b, r: "h3" in (a, b)))
    assert kinds(result) == [("host", "h3", None, None)]
    comp = result["primary"]
    assert comp["finding"] == "bad_node" and comp["devices"] == ["mlx5_0", "mlx5_1"]
    assert comp["links"] == {"total": 6, "bad": 6}
    assert "6 of its 6 links are bad on every rail" in comp["cause"]
    assert "h3 rail 0 (mlx5_0): 3 of 3 links bad (with h1, h2, h4)" in comp["evidence"]
    assert result["summary"]["most_likely"] == "host h3" and result["summary"]["hosts"] == ["h3"]


def test_one_slow_rail_of_a_host_is_that_rail_not_the_host():
    result = localize(matrix(4, 2, lambda a, b, r: r == 1 and "h2" in (a, b)))
    assert kinds(result) == [("rail", "h2", None, 1)]
    comp = result["primary"]
    assert comp["finding"] == "bad_nic" and comp["devices"] == ["mlx5_1"]
    assert "its other rail (0) is fine" in comp["cause"]
    assert "h2 rail 0 (mlx5_0): 0 of 3 links bad" in comp["evidence"]
    assert result["summary"]["most_likely"] == "h2 rail 1 (mlx5_1)"
    # the victims of the bad rail are not blamed
    assert result["summary"]["links"] == [] and result["summary"]["hosts"] == []


def test_one_slow_pair_on_one_rail_is_the_link():
    result = localize(matrix(4, 2, lambda a, b, r: r == 0 and set((a, b)) == set(("h1", "h2"))))
    assert kinds(result) == [("link", "h1", "h2", 0)]
    comp = result["primary"]
    assert comp["finding"] == "bad_link" and comp["devices"] == ["mlx5_0"]
    assert "h1 rail 0 (mlx5_0): 1 of 3 links bad" in comp["evidence"]
    # not confirmed by a retest and no partner data: low confidence
    assert comp["confidence"] == "low"


def test_bad_pairs_that_share_no_host_without_retests_are_link_or_fabric():
    # 'fabric' needs both hosts of every pair to pass with known-good partners; without retests the
    # verdict says link and fabric were not separated (issue 14: fabric named with no retest at all)
    bad = (set(("h1", "h2")), set(("h3", "h4")))
    result = localize(matrix(6, 2, lambda a, b, r: r == 1 and set((a, b)) in bad))
    assert kinds(result) == [("link", "h1", "h2", 1), ("link", "h3", "h4", 1)]
    assert all(c["cause"].endswith("; link or fabric, not separated (no retests)") for c in result["components"])
    assert result["summary"]["fabric"] == []


def partner_passes(pairs, rail, partners=("h5", "h6")):
    """Partner retests in which both sides of every pair pass with a known-good host."""
    out = []
    for server, client in pairs:
        out += [obs(server, partners[1], rail, "pass", GOOD, retest="partner", subject=server,
                    origin="%s-%s" % (server, client)),
                obs(partners[0], client, rail, "pass", GOOD, retest="partner", subject=client,
                    origin="%s-%s" % (server, client))]
    return out


def test_bad_pairs_that_share_no_host_are_the_fabric_when_partners_clear_every_host():
    bad = (set(("h1", "h2")), set(("h3", "h4")))
    mat = matrix(6, 2, lambda a, b, r: r == 1 and set((a, b)) in bad)
    data = loc.observations_from_matrix(mat, expected=RATE, min_fraction=0.9,
                                        devices=dict((r, "mlx5_%d" % r) for r in mat["rails"]))
    result = loc.localize(data + partner_passes([("h1", "h2"), ("h3", "h4")], 1))
    assert kinds(result) == [("fabric", "*", None, 1)]
    assert "2 bad pairs that share no host" in result["primary"]["cause"]
    assert result["summary"]["fabric"] == [1]
    # one host failing with its partner: the fabric is not named, that host's rail is
    data += partner_passes([("h1", "h2")], 1) + [
        obs("h3", "h6", 1, "pass", GOOD, retest="partner", subject="h3", origin="h3-h4"),
        obs("h5", "h4", 1, "fail", BAD, retest="partner", subject="h4", origin="h3-h4")]
    result = loc.localize(data)
    assert ("fabric", "*", None, 1) not in kinds(result)
    assert ("rail", "h4", None, 1) in kinds(result)


def test_bad_pairs_sharing_a_host_below_majority_are_links_with_a_note():
    bad = (set(("h1", "h2")), set(("h1", "h3")))
    result = localize(matrix(6, 1, lambda a, b, r: set((a, b)) in bad))
    assert kinds(result) == [("link", "h1", "h2", 0), ("link", "h1", "h3", 0)]
    assert any("h1 is in 2 of the bad pairs on rail 0" in line for line in result["primary"]["evidence"])


def test_every_host_bad_on_a_rail_is_fleet_wide():
    result = localize(matrix(5, 2, lambda a, b, r: r == 0))
    assert kinds(result) == [("fleet", "*", None, 0)]
    assert result["primary"]["links"] == {"total": 10, "bad": 10}


def test_two_hosts_only_cannot_tell_link_from_host():
    result = localize(matrix(2, 1, lambda a, b, r: True))
    assert kinds(result) == [("link", "h1", "h2", 0)]
    assert result["primary"]["confidence"] == "low"
    assert any("cannot be told apart" in line for line in result["primary"]["evidence"])


def test_single_rail_host_says_host_and_nic_are_the_same():
    result = localize(matrix(4, 1, lambda a, b, r: "h4" in (a, b)))
    assert kinds(result) == [("host", "h4", None, None)]
    assert "on its only rail" in result["primary"]["cause"]
    assert "one rail only: the host and its NIC cannot be told apart" in result["primary"]["evidence"]


def test_a_host_bad_on_two_of_three_rails_is_two_rails():
    result = localize(matrix(5, 3, lambda a, b, r: r in (0, 2) and "h5" in (a, b)))
    assert kinds(result) == [("rail", "h5", None, 0), ("rail", "h5", None, 2)]


def test_matrix_given_in_either_orientation():
    mat = matrix(4, 1, lambda a, b, r: "h2" in (a, b))
    grid = mat["rails"][0]
    flipped = [[grid[j][i] for j in range(4)] for i in range(4)]
    assert kinds(localize({"hosts": mat["hosts"], "rails": {0: flipped}})) == kinds(localize(mat))


@pytest.mark.parametrize("seed", range(12))
def test_random_fleets_with_noise(seed):
    rnd = random.Random(seed)
    n = rnd.randint(4, 10)
    rails = rnd.randint(2, 4)
    names = hosts(n)
    host = rnd.choice(names)
    rail = rnd.randrange(rails)
    a, b = rnd.sample(names, 2)
    cases = {
        "host": (lambda x, y, r: host in (x, y), [("host", host, None, None)]),
        "rail": (lambda x, y, r: r == rail and host in (x, y), [("rail", host, None, rail)]),
        "link": (lambda x, y, r: r == rail and set((x, y)) == set((a, b)),
                 [("link",) + tuple(sorted((a, b), key=loc.natural_key)) + (rail,)]),
    }
    for name, (bad, expected) in cases.items():
        result = localize(matrix(n, rails, bad, noise=0.03, seed=seed))
        assert kinds(result) == expected, (name, n, rails, result["components"])


def obs(host, peer, rail, verdict, value=None, **kw):
    return loc.observation(host, peer, rail, verdict, value, RATE, "write", "mlx5_%d" % rail, "mlx5_%d" % rail, **kw)


def mesh_obs(names, rails, bad):
    out = []
    for rail in range(rails):
        for i, x in enumerate(names):
            for y in names[i + 1:]:
                failing = bad(x, y, rail)
                out.append(obs(x, y, rail, "fail" if failing else "pass", BAD if failing else GOOD))
    return out


def test_flaky_links_are_never_failures():
    names = hosts(4)
    data = mesh_obs(names, 2, lambda x, y, r: r == 0 and set((x, y)) == set(("h1", "h2")))
    data.append(obs("h1", "h2", 0, "pass", GOOD, retest="as_is", attempt=1))
    result = loc.localize(data)
    assert kinds(result) == [("flaky", "h1", "h2", 0)]
    assert result["summary"]["verdict"] == "flaky" and result["summary"]["links_bad"] == 0
    assert result["summary"]["links_flaky"] == 1
    assert "passed on retest" in result["primary"]["cause"]


def test_a_slow_moment_on_one_host_is_a_flaky_host():
    names = hosts(4)
    data = mesh_obs(names, 2, lambda x, y, r: "h3" in (x, y))
    for rail in range(2):
        for peer in ("h1", "h2", "h4"):
            data.append(obs("h3", peer, rail, "pass", GOOD, retest="as_is", attempt=1))
    result = loc.localize(data)
    assert kinds(result) == [("flaky", "h3", None, None)]
    assert result["summary"]["verdict"] == "flaky"


def test_confirmed_retests_raise_confidence():
    names = hosts(4)
    data = mesh_obs(names, 2, lambda x, y, r: r == 1 and "h2" in (x, y))
    for peer in ("h1", "h3", "h4"):
        data.append(obs("h2", peer, 1, "fail", BAD, retest="as_is", attempt=1))
    result = loc.localize(data)
    assert kinds(result) == [("rail", "h2", None, 1)]
    assert result["primary"]["confidence"] == "high"
    assert result["summary"]["links_confirmed"] == 3
    assert any("retest as is: 1 of 1 failed again" in line for line in result["primary"]["evidence"])


def test_partner_retests_blame_the_side_that_fails_with_everyone():
    # only the pair h1-h2 ran (pattern "pairs"); partner retests decide
    data = [obs("h1", "h2", 0, "fail", BAD), obs("h1", "h2", 1, "pass", GOOD),
            obs("h1", "h2", 0, "fail", BAD, retest="as_is", attempt=1),
            obs("h1", "h3", 0, "fail", BAD, retest="partner", subject="h1", origin="h1-h2"),
            obs("h4", "h2", 0, "pass", GOOD, retest="partner", subject="h2", origin="h1-h2")]
    result = loc.localize(data)
    assert kinds(result) == [("rail", "h1", None, 0)]
    assert "fails with a known-good partner" in result["primary"]["cause"]
    assert "h1 rail 0 (mlx5_0) with known-good h3: fail 30.0" in result["primary"]["evidence"]


def test_partner_retests_that_pass_on_both_sides_point_at_the_path():
    data = mesh_obs(hosts(4), 1, lambda x, y, r: set((x, y)) == set(("h1", "h2")))
    data += [obs("h1", "h2", 0, "fail", BAD, retest="as_is", attempt=1),
             obs("h1", "h3", 0, "pass", GOOD, retest="partner", subject="h1", origin="h1-h2"),
             obs("h4", "h2", 0, "pass", GOOD, retest="partner", subject="h2", origin="h1-h2")]
    result = loc.localize(data)
    assert kinds(result) == [("link", "h1", "h2", 0)]
    assert result["primary"]["confidence"] == "high"
    assert "and with known-good partners" in result["primary"]["cause"]


def low_partner_pass(partner_value):
    """h1-h2 fails twice; h1 passes with a known-good partner at ``partner_value`` (below the rail's other
    links, 95), h2 at 95."""
    data = mesh_obs(hosts(4), 1, lambda x, y, r: set((x, y)) == set(("h1", "h2")))
    return data + [obs("h1", "h2", 0, "fail", BAD, retest="as_is", attempt=1),
                   obs("h1", "h3", 0, "pass", partner_value, retest="partner", subject="h1", origin="h1-h2"),
                   obs("h4", "h2", 0, "pass", GOOD, retest="partner", subject="h2", origin="h1-h2")]


def test_outlier_z_decides_whether_a_low_partner_pass_clears_a_host():
    data = low_partner_pass(88.0)
    # z of 88 against the rail's 95s (MAD floored at 0.475) is about -10: an outlier by default, so the pass
    # does not clear h1 and the link's cause cannot say both hosts passed with known-good partners
    strict = loc.localize(data)
    assert kinds(strict) == [("link", "h1", "h2", 0)] and strict["primary"]["confidence"] == "medium"
    assert "known-good partners" not in strict["primary"]["cause"]
    lenient = loc.localize(data, outlier_z=30.0)
    assert kinds(lenient) == [("link", "h1", "h2", 0)] and lenient["primary"]["confidence"] == "high"
    assert lenient["primary"]["cause"].endswith("and with known-good partners")


def test_both_sides_failing_with_partners_blames_both():
    data = [obs("h1", "h2", 0, "fail", BAD),
            obs("h1", "h3", 0, "fail", BAD, retest="partner", subject="h1"),
            obs("h4", "h2", 0, "fail", BAD, retest="partner", subject="h2")]
    result = loc.localize(data)
    assert sorted(kinds(result)) == [("host", "h1", None, None), ("host", "h2", None, None)]


def test_errors_are_bad_and_skipped_are_unknown():
    data = mesh_obs(hosts(4), 1, lambda x, y, r: False)
    data = [dict(o, verdict="error") if "h4" in (o["host"], o["peer"]) else o for o in data]
    data.append(obs("h1", "h5", 0, "skipped"))
    result = loc.localize(data)
    assert kinds(result) == [("host", "h4", None, None)]
    assert [l["status"] for l in result["links"] if "h5" in (l["host"], l["peer"])] == ["unknown"]


def test_an_error_that_names_its_side_blames_that_side():
    data = [obs("h4", "h1", 0, "error", cause="server side on h4: No RDMA device is visible"),
            obs("h4", "h1", 1, "error", cause="server side on h4: No RDMA device is visible")]
    result = loc.localize(data)
    assert kinds(result) == [("host", "h4", None, None)]
    assert "(its side of the tests failed)" in result["primary"]["cause"]
    assert "h4 rail 0 (mlx5_0): its side of the test failed: server side on h4: No RDMA device is visible" in \
        result["primary"]["evidence"]
    # both sides named: no side blamed
    data = [obs("h1", "h2", 0, "error", cause="no result from h1 and h2 (host unreachable, or ...)")]
    assert kinds(loc.localize(data)) == [("link", "h1", "h2", 0)]
    assert loc.error_side(data[0]) == ["h1", "h2"]
    assert loc.error_side(obs("h1", "h2", 0, "error", cause="client side on h9: x")) is None


def test_bad_verdicts_can_include_warn():
    data = mesh_obs(hosts(4), 1, lambda x, y, r: False)
    data = [dict(o, verdict="warn") if "h4" in (o["host"], o["peer"]) else o for o in data]
    assert loc.localize(data)["components"] == []
    assert kinds(loc.localize(data, bad_verdicts=("fail", "error", "warn"))) == [("host", "h4", None, None)]


def test_bad_input_is_refused():
    with pytest.raises(loc.LocalizationError):
        loc.observation("h1", "h1")
    with pytest.raises(loc.LocalizationError):
        loc.observation("h1", "h2", rail="x")
    with pytest.raises(loc.LocalizationError):
        loc.observation("h1", "h2", retest="partner", subject="h9")
    with pytest.raises(loc.LocalizationError):
        loc.localize([], host_fraction=1.5)
    with pytest.raises(loc.LocalizationError):
        loc.observations_from_matrix({"hosts": ["a", "b"], "rails": {0: [[None]]}})


def pair_record(host, peer, rail, verdict, value, **params):
    base = {"op": "write", "metric": "bw", "rail": rail, "device": "mlx5_%d" % rail,
            "peer_device": "mlx5_%d" % rail}
    base.update(params)
    return {"kind": "rdma_bw", "host": host, "peer": peer, "params": base,
            "metrics": {"bw_gbps": value, "expected_gbps": RATE}, "verdict": verdict,
            "cause": "slow" if verdict == "fail" else None, "fix": None, "evidence": []}


def mesh_records(names, rails, bad):
    out = []
    for rail in range(rails):
        for i, x in enumerate(names):
            for y in names[i + 1:]:
                failing = bad(x, y, rail)
                out.append(pair_record(x, y, rail, "fail" if failing else "pass", BAD if failing else GOOD))
    return out


def test_records_findings_summary_and_annotations():
    records = mesh_records(hosts(4), 2, lambda x, y, r: r == 1 and "h2" in (x, y))
    records.append({"kind": "rdma_lat", "host": "h1", "peer": "h2", "params": {"rail": 0}, "metrics": {},
                    "verdict": "fail"})
    result = commcheck_localize(records, kind="rdma_bw", check="rdma_perf")
    assert [(f["params"]["finding"], f["host"], f["params"]["rail"], f["params"].get("devices"))
            for f in result["findings"]] == [("bad_nic", "h2", 1, ["mlx5_1"])]
    finding = result["findings"][0]
    assert finding["kind"] == "finding" and finding["verdict"] == "fail" and finding["evidence"]
    assert finding["params"]["component"] == "rail" and finding["params"]["confidence"] in ("high", "medium", "low")
    summary = result["summary_record"]
    assert summary["kind"] == "localization" and summary["host"] == "*" and summary["verdict"] == "fail"
    assert summary["cause"].startswith("most likely: h2 rail 1 (mlx5_1)")
    assert summary["metrics"]["bad_links"] == 3
    annotated = [r for r in result["records"] if r["verdict"] == "fail" and r["kind"] == "rdma_bw"]
    assert len(annotated) == 3
    assert all("localized: h2 rail 1 (mlx5_1) (rail, " in r["evidence"][-1] for r in annotated)
    assert all(r["fix"].startswith("h2 rail 1 (mlx5_1): check that NIC and its port only") for r in annotated)
    # the input records are not changed in place
    assert all(r["evidence"] == [] for r in records if r["kind"] == "rdma_bw")
    # other kinds are not localized here
    assert result["records"][-1] == records[-1]


def test_counter_deltas_join_the_evidence_of_their_component():
    records = mesh_records(hosts(4), 2, lambda x, y, r: r == 1 and "h2" in (x, y))
    deltas = [{"host": "h2", "device": "mlx5_1", "port": 1, "counter": "symbol_error", "delta": 40,
               "severity": "warning", "meaning": "bit errors"},
              {"host": "h2", "device": "mlx5_0", "port": 1, "counter": "symbol_error", "delta": 1,
               "severity": "warning", "meaning": "bit errors"},
              {"host": "h2", "device": "mlx5_1", "port": 1, "counter": "np_cnp_sent", "delta": 9,
               "severity": "info", "meaning": "congestion"},
              {"host": "h3", "device": "mlx5_1", "port": 1, "counter": "link_downed", "delta": 1,
               "severity": "error", "meaning": "down"}]
    result = commcheck_localize(records, counter_deltas=deltas)
    comp = result["primary"]
    assert comp["evidence"][-1] == "h2 mlx5_1/1: symbol_error +40 during the run (bit errors)"
    assert comp["counter_evidence"] == 1
    assert result["findings"][0]["evidence"][-1] == comp["evidence"][-1]


def test_summary_record_counts_retests():
    records = mesh_records(hosts(3), 1, lambda x, y, r: False)
    result = commcheck_localize(records, retest_summary={"retests": 3, "failing_pairs": 1, "confirmed": [],
                                                         "flaky": ["h1-h2 rail 0 write bw"]})
    rec = result["summary_record"]
    assert rec["verdict"] == "pass" and rec["metrics"]["retests"] == 3 and rec["metrics"]["flaky_pairs"] == 1
    assert "flaky: h1-h2 rail 0 write bw" in rec["evidence"][-1]


def test_filter_errors_are_clear():
    with pytest.raises(AnsibleFilterError, match="must be a list"):
        commcheck_localize({"not": "a list"})
    with pytest.raises(AnsibleFilterError, match="host_fraction"):
        commcheck_localize([], host_fraction=2)
    for bad in (0, -1, "nan"):
        with pytest.raises(AnsibleFilterError, match="outlier_z must be a finite number above 0"):
            commcheck_localize([], outlier_z=bad)


def test_the_filter_passes_outlier_z_to_localization():
    records = mesh_records(hosts(4), 1, lambda x, y, r: set((x, y)) == set(("h1", "h2")))
    records += [pair_record("h1", "h2", 0, "fail", BAD, retest=True, retest_purpose="as_is", attempt=1),
                pair_record("h1", "h3", 0, "pass", 88.0, retest=True, retest_purpose="partner", subject="h1",
                            origin="h1-h2"),
                pair_record("h4", "h2", 0, "pass", GOOD, retest=True, retest_purpose="partner", subject="h2",
                            origin="h1-h2")]
    assert commcheck_localize(records)["primary"]["confidence"] == "medium"
    assert commcheck_localize(records, outlier_z="30")["primary"]["confidence"] == "high"


# --- the steps of localize, one component kind each (localization_*) ------------------------------

def view_of(data, label=None):
    return loc.link_view(data, loc.BAD_VERDICTS, "%s links" % label if label else "links")


def test_suspect_host_rails_need_a_majority_of_bad_links():
    view = view_of(mesh_obs(hosts(4), 2, lambda x, y, r: r == 1 and "h2" in (x, y)))
    assert loc_fleet.suspect_host_rails(view, 0.5, 2) == set([("h2", 1)])
    # three bad links of three: a minimum of four names nobody
    assert loc_fleet.suspect_host_rails(view, 0.5, 4) == set()


def test_fleet_components_need_every_host_of_the_rail_and_three_hosts():
    view = view_of(mesh_obs(hosts(4), 2, lambda x, y, r: r == 0))
    comps, rails = loc_fleet.fleet_components(view, loc_fleet.majority_host_rails(view, 0.5, 2))
    assert rails == set([0])
    # every pair of four failing reads the same as three of the hosts bad at once: named, not certain
    assert [(c["component"], c["host"], c["rail"], c["confidence"]) for c in comps] == [("fleet", "*", 0, "medium")]
    assert comps[0]["links"] == {"total": 6, "bad": 6} and comps[0]["devices"] == ["mlx5_0"]
    assert "rail 0: not separable from 3 of its 4 hosts bad at once" in " ".join(comps[0]["evidence"])
    five = view_of(mesh_obs(hosts(5), 2, lambda x, y, r: r == 0))
    comps, rails = loc_fleet.fleet_components(five, loc_fleet.majority_host_rails(five, 0.5, 2))
    assert [(c["rail"], c["confidence"]) for c in comps] == [(0, "high")]
    assert not [line for line in comps[0]["evidence"] if "not separable" in line]
    two = view_of(mesh_obs(hosts(2), 1, lambda x, y, r: True))
    assert loc_fleet.fleet_components(two, loc_fleet.suspect_host_rails(two, 0.5, 1)) == ([], set())


def test_blamed_sides_by_partner_retests_and_by_error_causes():
    data = [obs("h1", "h2", 0, "fail", BAD),
            obs("h1", "h3", 0, "fail", BAD, retest="partner", subject="h1"),
            obs("h4", "h2", 0, "pass", GOOD, retest="partner", subject="h2")]
    assert loc_hosts.blamed_sides(view_of(data), 0, ("h1", "h2")) == [("h1", "partner")]
    data = [obs("h4", "h1", 0, "error", cause="server side on h4: boom")]
    assert loc_hosts.blamed_sides(view_of(data), 0, ("h1", "h4")) == [("h4", "error")]
    data = [obs("h1", "h2", 0, "fail", BAD)]
    assert loc_hosts.blamed_sides(view_of(data), 0, ("h1", "h2")) == []


def test_blame_sides_keeps_open_the_links_no_side_explains():
    data = [obs("h1", "h2", 0, "fail", BAD), obs("h3", "h4", 0, "fail", BAD),
            obs("h1", "h5", 0, "fail", BAD, retest="partner", subject="h1")]
    implicated, open_links = loc_hosts.blame_sides(view_of(data), {}, set())
    assert implicated == {("h1", 0): "partner"}
    assert [(rail, pair) for rail, pair, _link in open_links] == [(0, ("h3", "h4"))]
    # an implicated side explains the link: nothing is open, nothing is added
    implicated, open_links = loc_hosts.blame_sides(view_of(data[:1]), {("h2", 0): "majority"}, set())
    assert implicated == {("h2", 0): "majority"} and open_links == []


def test_node_components_host_on_every_rail_else_one_rail_each():
    view = view_of(mesh_obs(hosts(4), 2, lambda x, y, r: "h3" in (x, y) or (r == 1 and "h2" in (x, y))))
    comps = loc_hosts.node_components(view, {("h3", 0): "majority", ("h3", 1): "majority", ("h2", 1): "majority"}, set())
    assert [(c["component"], c["host"], c["rail"], c["rails"]) for c in comps] == [
        ("rail", "h2", 1, [1]), ("host", "h3", None, [0, 1])]
    assert "its other rail (0) is fine" in comps[0]["cause"]
    assert comps[1]["cause"] == "h3: 6 of its 6 links are bad on every rail"


def test_host_component_names_what_the_links_are_and_its_only_rail():
    view = view_of(mesh_obs(hosts(4), 1, lambda x, y, r: "h1" in (x, y)), label="rdma_bw")
    comp = loc_hosts.host_component(view, "h1", {0: "majority"})
    assert comp["cause"] == "h1: 3 of its 3 rdma_bw links are bad on its only rail"
    assert "one rail only: the host and its NIC cannot be told apart" in comp["evidence"]
    assert comp["links"] == {"total": 3, "bad": 3} and comp["finding"] == "bad_node"


def test_path_components_fabric_only_when_partner_retests_clear_every_host():
    data = mesh_obs(hosts(6), 1, lambda x, y, r: set((x, y)) in (set(("h1", "h2")), set(("h3", "h4"))))
    view = view_of(data + partner_passes([("h1", "h2"), ("h3", "h4")], 0))
    _implicated, open_links = loc_hosts.blame_sides(view, {}, set())
    comps = loc_links.path_components(view, open_links)
    assert [(c["component"], c["rail"], c["links"]) for c in comps] == [("fabric", 0, {"total": 15, "bad": 2})]
    # no retests: two links, each saying link and fabric were not separated
    view = view_of(data)
    comps = loc_links.path_components(view, loc_hosts.blame_sides(view, {}, set())[1])
    assert [(c["component"], c["host"], c["peer"]) for c in comps] == [("link", "h1", "h2"), ("link", "h3", "h4")]
    assert comps[0]["cause"] == ("link h1 - h2 (rail 0) is bad while both hosts are good with their other peers; "
                                 "link or fabric, not separated (no retests)")
    # some retests, not every host cleared
    view = view_of(data + partner_passes([("h1", "h2")], 0))
    comps = loc_links.path_components(view, loc_hosts.blame_sides(view, {}, set())[1])
    assert [c["component"] for c in comps] == ["link", "link"]
    assert comps[1]["cause"].endswith("(not every host passed with known-good partners)")
    assert loc_links.separated(view, 0, [(("h1", "h2"), None)]) is True
    assert loc_links.separated(view, 0, [(("h3", "h4"), None)]) is False
    assert loc_links.has_disjoint([(("h1", "h2"), None), (("h2", "h3"), None)]) is False


def test_link_components_point_out_a_host_in_several_bad_pairs():
    data = mesh_obs(hosts(6), 1, lambda x, y, r: set((x, y)) in (set(("h1", "h2")), set(("h1", "h3"))))
    view = view_of(data)
    _implicated, open_links = loc_hosts.blame_sides(view, {}, set())
    comps = loc_links.link_components(view, 0, [(pair, link) for _rail, pair, link in open_links])
    assert [(c["host"], c["peer"], c["confidence"]) for c in comps] == [("h1", "h2", "low"), ("h1", "h3", "low")]
    assert "h1 is in 2 of the bad pairs on rail 0: check its port too" in comps[0]["evidence"]


def test_flaky_components_group_a_host_and_leave_single_links():
    data = mesh_obs(hosts(5), 1, lambda x, y, r: "h3" in (x, y) or set((x, y)) == set(("h1", "h2")))
    data += [obs(x, y, 0, "pass", GOOD, retest="as_is", attempt=1) for x, y in
             (("h3", "h1"), ("h3", "h2"), ("h3", "h4"), ("h3", "h5"), ("h1", "h2"))]
    view = view_of(data)
    comps = loc_links.flaky_components(view, 0.5, 2)
    assert [(c["component"], c["host"], c["peer"], c["rail"]) for c in comps] == [
        ("flaky", "h3", None, None), ("flaky", "h1", "h2", 0)]
    hosts_only, grouped = loc_links.flaky_host_components(view, 0.5, 2)
    assert len(hosts_only) == 1 and (0, ("h1", "h3")) in grouped and (0, ("h1", "h2")) not in grouped


def test_confidence_scores():
    assert loc_view.confidence(True, 3, True, False) == "high"
    assert loc_view.confidence(True, 1, False, True) == "medium"
    assert loc_view.confidence(False, 2, False, True) == "low"
    link = {"confirmed": True}
    assert loc_view.link_confidence(link, True, 2) == "low"
    assert loc_view.link_confidence(link, True, 4) == "high"
    assert loc_view.link_confidence(link, False, 4) == "medium"


def test_a_blamed_host_explains_its_earlier_links_too():
    # issue 14: one run named h1 a bad node and its link h1-h2 'bad while both hosts are good' because
    # h1-h2 came first in link order, before the error that implicated h1
    data = mesh_obs(hosts(5), 1, lambda x, y, r: set((x, y)) == set(("h1", "h2")))
    data = [o for o in data if set((o["host"], o["peer"])) != set(("h1", "h3"))]
    data.append(obs("h1", "h3", 0, "error", cause="server side on h1: No RDMA device is visible"))
    result = loc.localize(data)
    assert kinds(result) == [("host", "h1", None, None)]
    assert not any("both hosts are good" in c["cause"] for c in result["components"])
    _implicated, open_links = loc_hosts.blame_sides(view_of(data), {}, set())
    assert open_links == []


def test_a_link_says_both_hosts_are_good_only_when_they_are():
    # h1 has two bad links of four on rail 0 (no majority): not 'good with its other peers'
    data = mesh_obs(hosts(5), 1, lambda x, y, r: set((x, y)) in (set(("h1", "h2")), set(("h1", "h3"))))
    causes = [c["cause"] for c in loc.localize(data)["components"]]
    assert causes[0] == "link h1 - h2 (rail 0) is bad while neither host is bad with most of its peers"
    data = mesh_obs(hosts(5), 1, lambda x, y, r: set((x, y)) == set(("h1", "h2")))
    assert loc.localize(data)["primary"]["cause"] == \
        "link h1 - h2 (rail 0) is bad while both hosts are good with their other peers"


def test_an_error_whose_side_hung_implicates_the_whole_host():
    data = mesh_obs(hosts(4), 2, lambda x, y, r: False)
    data = [o for o in data if not (o["rail"] == 0 and set((o["host"], o["peer"])) == set(("h1", "h2")))]
    data.append(obs("h1", "h2", 0, "error", cause="server side on h1: the server waited", failed=("h1", "hung")))
    result = loc.localize(data)
    assert kinds(result) == [("host", "h1", None, None)]
    assert result["primary"]["rails"] == [0, 1]
    # the same error from a side that ended with its own error is that side's rail only
    data[-1] = obs("h1", "h2", 0, "error", cause="server side on h1: no device", failed=("h1", "error"))
    assert kinds(loc.localize(data)) == [("rail", "h1", None, 0)]


@pytest.mark.parametrize("n", [4, 6, 8])
def test_a_slow_host_explains_its_links_so_a_second_fault_is_named_as_itself(n):
    names = hosts(n)
    slow, a, b = names[1], names[-2], names[-1]
    result = localize(matrix(n, 2, lambda x, y, r: slow in (x, y) or (set((x, y)) == set((a, b)) and r == 0)))
    assert kinds(result) == [("host", slow, None, None), ("link", a, b, 0)]


def test_two_slow_hosts_are_both_named_one_after_the_other():
    result = localize(matrix(6, 1, lambda x, y, r: "h2" in (x, y) or "h3" in (x, y)))
    assert sorted(c["host"] for c in result["components"] if c["component"] in ("host", "rail")) == ["h2", "h3"]
    assert [c for c in result["components"] if c["component"] == "link"] == []


def test_suspects_are_taken_worst_first():
    # h2 fails with everyone on rail 0; h3's only other bad link is h3-h4: with h2's links
    # explained, h3 has one bad link of two and is not a suspect
    view = view_of(mesh_obs(hosts(4), 1, lambda x, y, r: "h2" in (x, y) or set((x, y)) == set(("h3", "h4"))))
    assert loc_fleet.majority_host_rails(view, 0.5, 2) == set([("h2", 0), ("h3", 0), ("h4", 0)])
    assert loc_fleet.suspect_host_rails(view, 0.5, 2) == set([("h2", 0)])


def racked(n, per_leaf, rail, key=None):
    """The topology of ``n`` hosts, ``per_leaf`` behind each leaf of ``rail`` (keyed by ``key``: the rail by
    default, or a device name)."""
    return dict((h, {rail if key is None else key: {"leaf": "leaf-%d" % (i // per_leaf + 1), "port": "Eth1/%d" % i}})
                for i, h in enumerate(hosts(n)))


def test_a_leaf_whose_hosts_fail_with_everyone_is_one_leaf_component_kept_in_the_summary_record():
    behind = ("h3", "h4")
    result = localize(matrix(8, 2, lambda a, b, r: r == 1 and (a in behind or b in behind)),
                      topology=racked(8, 2, 1))
    assert kinds(result) == [("leaf", "*", None, 1)]
    comp = result["primary"]
    assert comp["switch"] == {"part": "leaf", "leaves": ["leaf-2"], "hosts": ["h3", "h4"], "groups": [["h3", "h4"]]}
    assert (comp["finding"], comp["links"], comp["devices"]) == ("fabric", {"total": 13, "bad": 13}, ["mlx5_1"])
    assert result["summary"]["switches"] == ["leaf switch leaf-2 (rail 1)"]
    record = loc.summary_record(result)
    assert record["params"]["topology"]["h3"] == {"1": {"leaf": "leaf-2", "port": "Eth1/2", "source": "inventory"}}
    finding = loc.finding_records(result)[0]
    assert finding["params"]["switch"]["leaves"] == ["leaf-2"] and "leaf-2" in finding["fix"]


def test_a_topology_of_another_rail_or_of_unmeasured_devices_changes_nothing():
    def bad(a, b, r):
        return r == 1 and (a in ("h3", "h4") or b in ("h3", "h4"))

    plain = kinds(localize(matrix(8, 2, bad)))
    assert kinds(localize(matrix(8, 2, bad), topology=racked(8, 2, 0))) == plain
    assert kinds(localize(matrix(8, 2, bad), topology=racked(8, 2, None, key="mlx5_9"))) == plain
    assert plain == [("rail", "h3", None, 1), ("rail", "h4", None, 1)]
    assert kinds(localize(matrix(8, 2, bad), topology=racked(8, 2, None, key="mlx5_1"))) == [("leaf", "*", None, 1)]
