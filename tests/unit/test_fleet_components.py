# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every field of the ``fleet`` components (``localization_fleet``), checked against the run's own link table
(``localized["links"]``, what the report shows): a rail at its pass line, a rail whose every host fails (on four
hosts not separable from three bad hosts, on six the fabric; with the control pairs that rule the hosts out),
and every rail at once. The fault scenarios (test_fault_scenarios.py) pin which component is named; these pin
what it says: the counts, the order and the limit of its evidence, its confidence and its fix."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import pytest

from fault_lab import Fabric
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import localization_fleet as lf
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import localization_view as lv
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import stats as robust
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts.localization_view import FIX, fmt
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts.stats import median

LINE_LIMIT = 6   # link lines a component shows before "... and N more"


def localized(fabric):
    fabric.run()
    return fabric.judged["localized"]


def the_fleet_component(loc):
    found = [c for c in loc["components"] if c["component"] == "fleet"]
    assert len(found) == 1 and len(loc["components"]) == 1, [c["cause"] for c in loc["components"]]
    return found[0]


def rail_links(loc, rail):
    return [link for link in loc["links"] if link["rail"] == rail and link["status"] != "unknown"]


def with_status(links, status):
    return [link for link in links if link["status"] == status]


def pairs(n):
    return n * (n - 1) // 2


def link_prefix(link):
    return "%s-%s rail %s: " % (link["host"], link["peer"], link["rail"])


def assert_link_lines(lines, links):
    """The component's link lines: one per link in this order, at most LINE_LIMIT, then how many more."""
    shown = links[:LINE_LIMIT]
    assert [line[:len(link_prefix(link))] for line, link in zip(lines, shown)] == [link_prefix(l) for l in shown]
    more = ["... and %d more" % (len(links) - LINE_LIMIT)] if len(links) > LINE_LIMIT else []
    assert lines[len(shown):] == more, lines


def test_a_rail_at_its_pass_line_is_one_fleet_component_whose_counts_are_its_links():
    loc = localized(Fabric(8, 2, "mesh").slow(0.945, rail=1))
    comp = the_fleet_component(loc)
    links = rail_links(loc, 1)
    assert len(links) == pairs(8) == 28
    bad, flaky = with_status(links, "bad"), with_status(links, "flaky")
    # chance picks which fail: some did for good, some once, others passed
    assert bad and flaky and with_status(links, "good")
    failed_hosts = set(h for link in bad + flaky for h in (link["host"], link["peer"]))
    values = [v for link in links for v in link["values"] if v is not None]
    assert {k: comp[k] for k in ("host", "peer", "rail", "rails", "devices", "confidence", "verdict", "links")} == {
        "host": "*", "peer": None, "rail": 1, "rails": [1], "devices": ["mlx5_1"], "confidence": "medium",
        "verdict": "fail", "links": {"total": 28, "bad": len(bad)}}
    assert comp["cause"] == (
        "rail 1: its links all measure about the same (median %s) and that is at the pass line: %d of 28 failed and "
        "%d more failed once, on %d hosts, as chance had it" % (fmt(median(values)), len(bad), len(flaky),
                                                                len(failed_hosts)))
    assert comp["evidence"][0] == "rail 1: %d bad and %d flaky of 28 links, within the rail's usual spread" % (
        len(bad), len(flaky))
    # the bad links first, then the flaky ones, each in host order
    assert_link_lines(comp["evidence"][1:], bad + flaky)
    assert comp["fix"] == lf.SHORTFALL_FIX
    assert comp["fix"].startswith("the rail's links all run at about the same rate and that rate is at the pass line")


@pytest.mark.parametrize("hosts,confidence", [(4, "medium"), (5, "high"), (6, "high")])
def test_a_rail_whose_every_host_fails_counts_its_links_and_says_when_three_bad_hosts_would_look_the_same(
        hosts, confidence):
    loc = localized(Fabric(hosts, 2, "mesh").slow(0.3, rail=1))
    comp = the_fleet_component(loc)
    links = rail_links(loc, 1)
    bad = with_status(links, "bad")
    assert len(links) == len(bad) == pairs(hosts)
    small = hosts < lf.SEPARABLE_FLEET
    assert {k: comp[k] for k in ("host", "peer", "rail", "rails", "devices", "confidence", "links", "fix")} == {
        "host": "*", "peer": None, "rail": 1, "rails": [1], "devices": ["mlx5_1"], "confidence": confidence,
        "links": {"total": len(links), "bad": len(bad)}, "fix": FIX["fleet"]}
    suffix = ", or %d of its %d hosts at once: not separable by these tests" % (hosts - 1, hosts) if small else ""
    assert comp["cause"] == "rail 1: every host has mostly bad links (%d of %d links bad)%s" % (
        len(bad), len(links), suffix)
    separable = ["rail 1: not separable from %d of its %d hosts bad at once, which would fail every pair too; a "
                 "fifth host, or a host known to be good, tells them apart" % (hosts - 1, hosts)] if small else []
    head = ["rail 1: %d of %d links bad, on all %d hosts" % (len(bad), len(links), hosts)] + separable
    assert comp["evidence"][:len(head)] == head
    # then bad links of the rail, each once (in the order the view holds them), at most LINE_LIMIT
    lines = comp["evidence"][len(head):]
    shown = [link for line in lines for link in bad if line.startswith(link_prefix(link))]
    assert len(shown) == len(set(id(link) for link in shown)) == min(len(bad), LINE_LIMIT)
    assert_link_lines(lines, shown + [link for link in bad if link not in shown])


def test_the_control_pairs_that_fail_too_are_the_evidence_against_the_hosts():
    # a ring of four: h1-h2, h2-h3, h3-h4, h4-h1, and the retests' control pairs between hosts no bad link needs
    loc = localized(Fabric(4, 1, "ring").slow(0.3, rail=0))
    comp = the_fleet_component(loc)
    assert comp["evidence"][:3] == [
        "rail 0: 6 of 6 links bad, on all 4 hosts",
        "rail 0: the control pairs (hosts that no bad link needs, with each other) fail too: h2-h4",
        "rail 0: not separable from 3 of its 4 hosts bad at once, which would fail every pair too; a fifth host, "
        "or a host known to be good, tells them apart"]
    assert lf.control_lines(0, [{"hosts": ("h1", "h3"), "purpose": "partner"}]) == []
    assert lf.control_lines(3, [{"hosts": ("h1", "h3"), "purpose": "control"}, {"hosts": ("h2", "h4")},
                                {"hosts": ("h5", "h6"), "purpose": "control"}]) == [
        "rail 3: the control pairs (hosts that no bad link needs, with each other) fail too: h1-h3, h5-h6"]


def test_every_rail_of_a_ring_keeps_its_control_pairs_and_first_link():
    comp = the_fleet_component(localized(Fabric(6, 2, "ring").slow(0.3)))
    for rail in (0, 1):
        lines = [line for line in comp["evidence"] if line.startswith("rail %d: " % rail)]
        assert lines == ["rail %d: 8 of 8 links bad, on all 6 hosts" % rail,
                         "rail %d: the control pairs (hosts that no bad link needs, with each other) fail too: h2-h4"
                         % rail]
        link_line = comp["evidence"][comp["evidence"].index(lines[-1]) + 1]
        assert link_line.startswith("h") and " rail %d: fail at " % rail in link_line
    assert len(comp["evidence"]) == 6 and comp["confidence"] == "high"


def test_every_rail_at_its_pass_line_is_one_component_of_both_rails_counts():
    loc = localized(Fabric(8, 2, "mesh").slow(0.945))
    comp = the_fleet_component(loc)
    per_rail = dict((rail, rail_links(loc, rail)) for rail in (0, 1))
    bad = dict((rail, with_status(links, "bad")) for rail, links in per_rail.items())
    flaky = dict((rail, with_status(links, "flaky")) for rail, links in per_rail.items())
    # the two rails differ, so that a count of one rail taken for both shows
    assert len(bad[0]) != len(bad[1])
    assert {k: comp[k] for k in ("host", "peer", "rail", "rails", "devices", "confidence", "links")} == {
        "host": "*", "peer": None, "rail": None, "rails": [0, 1], "devices": ["mlx5_0", "mlx5_1"],
        "confidence": "medium", "links": {"total": 56, "bad": len(bad[0]) + len(bad[1])}}
    assert comp["cause"] == ("every rail fails across its hosts (%d of 56 links bad, 8 hosts, 2 rails): one cause "
                             "they all share" % (len(bad[0]) + len(bad[1])))
    # each rail's first two lines: its counts and its first link
    evidence = comp["evidence"]
    assert len(evidence) == 4
    for num, rail in enumerate((0, 1)):
        assert evidence[2 * num] == "rail %d: %d bad and %d flaky of 28 links, within the rail's usual spread" % (
            rail, len(bad[rail]), len(flaky[rail]))
        assert evidence[2 * num + 1].startswith(link_prefix(bad[rail][0]))
    assert comp["fix"] == FIX["fleet"] + "; on every rail at once, the expectation and the test first"


def test_every_rail_is_as_sure_as_its_least_sure_rail():
    # rail 0: every host of six fails (high); rail 1: at its pass line (medium)
    comp = the_fleet_component(localized(Fabric(6, 2, "mesh").slow(0.3, rail=0).slow(0.945, rail=1)))
    assert (comp["rail"], comp["rails"], comp["confidence"]) == (None, [0, 1], "medium")
    assert comp["evidence"][0] == "rail 0: 15 of 15 links bad, on all 6 hosts"


@pytest.mark.parametrize("hosts,confidence", [(4, "medium"), (6, "high")])
def test_every_rail_whose_every_host_fails_keeps_what_its_rails_could_not_separate(hosts, confidence):
    loc = localized(Fabric(hosts, 2, "mesh").slow(0.3))
    comp = the_fleet_component(loc)
    total = 2 * pairs(hosts)
    small = hosts < lf.SEPARABLE_FLEET
    suffix = ", or %d of its %d hosts at once: not separable by these tests" % (hosts - 1, hosts) if small else ""
    assert comp["cause"] == "every rail fails across its hosts (%d of %d links bad, %d hosts, 2 rails): one cause " \
        "they all share%s" % (total, total, hosts, suffix)
    assert (comp["rails"], comp["devices"], comp["confidence"], comp["links"]) == (
        [0, 1], ["mlx5_0", "mlx5_1"], confidence, {"total": total, "bad": total})
    separable = "not separable from %d of its %d hosts bad at once" % (hosts - 1, hosts)
    for rail in (0, 1):
        lines = [line for line in comp["evidence"] if line.startswith("rail %d: " % rail)]
        assert lines[0] == "rail %d: %d of %d links bad, on all %d hosts" % (rail, total // 2, total // 2, hosts)
        assert [line for line in lines if separable in line] == ([
            "rail %d: %s, which would fail every pair too; a fifth host, or a host known to be good, tells them "
            "apart" % (rail, separable)] if small else [])
        # and its first link (once the lines of the rail are said)
        [link_line] = [line for line in comp["evidence"] if line.startswith("h") and " rail %d: " % rail in line]
        assert comp["evidence"].index(link_line) == comp["evidence"].index(lines[-1]) + 1
    # per rail: its counts, (small) what it could not separate, its first link line
    assert len(comp["evidence"]) == 2 * (2 + small)


def statuses_view(statuses):
    """:func:`rail_view` of rail 0 from {"hA-hB": status} (the values do not matter to the control-pair rule)."""
    return rail_view(dict((pair, (status, 90.0)) for pair, status in statuses.items()), rail=0)


RING4 = {"h1-h2": "bad", "h2-h3": "bad", "h3-h4": "bad", "h1-h4": "bad"}


@pytest.mark.parametrize("statuses,suspects,explained", [
    # two opposite hosts of a ring of four are in every bad link, and the other two pass with each other
    (dict(RING4, **{"h2-h4": "good"}), {("h1", 0), ("h3", 0)}, True),
    # ... unless that control pair fails too
    (dict(RING4, **{"h2-h4": "bad"}), {("h1", 0), ("h3", 0)}, False),
    # ... or there is no such pair: a good link of a suspect says nothing about the others
    (dict(RING4, **{"h1-h3": "good"}), {("h1", 0), ("h3", 0)}, False),
    # a bad link that no suspect is in
    ({"h1-h2": "bad", "h2-h3": "bad", "h3-h4": "good"}, {("h1", 0)}, False),
    # suspects of another rail, none, or every host of the rail
    (dict(RING4, **{"h2-h4": "good"}), {("h1", 1), ("h3", 1)}, False),
    (dict(RING4, **{"h2-h4": "good"}), set(), False),
    (dict(RING4, **{"h2-h4": "good"}), {("h1", 0), ("h2", 0), ("h3", 0), ("h4", 0)}, False),
])
def test_some_hosts_explain_a_rail_only_where_two_others_pass_with_each_other(statuses, suspects, explained):
    view = statuses_view(statuses)
    assert lf.explained_by_some_hosts(view, 0, suspects) is explained


def test_some_hosts_explain_the_bad_pairs_given_and_a_rail_without_hosts_is_never_explained():
    view = statuses_view({"h1-h2": "bad", "h2-h3": "bad", "h4-h5": "good"})
    # of the rail's own bad links, h2-h3 has no suspect in it; of those given, every one has
    assert lf.explained_by_some_hosts(view, 0, {("h1", 0)}) is False
    assert lf.explained_by_some_hosts(view, 0, {("h1", 0)}, bad_pairs=[("h1", "h2")]) is True
    assert lf.explained_by_some_hosts(view, 7, {("h1", 7)}) is False
    # no suspect of the rail explains nothing, even where no link of it failed
    quiet = statuses_view({"h1-h2": "good", "h2-h3": "good"})
    assert lf.explained_by_some_hosts(quiet, 0, {("h1", 1)}) is False


def test_a_share_is_the_part_of_its_count_and_nothing_of_none():
    assert (lf._share(1, 4), lf._share(3, 4), lf._share(2, 0)) == (0.25, 0.75, 0.0)


# --- a rail at its pass line, on a view built by hand (values as fractions of a rate of 100) --------------------

def rail_view(statuses_values, rail=1, expected=None):
    """A LinkView of one rail from {"hA-hB": (status, value)}: a failed link failed its first pass, a flaky one
    then passed its retest; ``expected``: {"hA-hB": its expected rate} where not 100."""
    links = {}
    for pair, (status, value) in statuses_values.items():
        hosts = tuple(pair.split("-"))
        failed = status in ("bad", "flaky")
        links[(rail, hosts)] = {
            "hosts": hosts, "rail": rail, "status": status, "confirmed": False, "values": [value],
            "original": ["fail" if failed else "pass"], "retests": ["pass"] if status == "flaky" else [],
            "retest_values": [value] if status == "flaky" else [], "expected": (expected or {}).get(pair, 100.0)}
    devices = dict(((h, rail), "mlx5_%d" % rail) for key in links for h in key[1])
    return lv.LinkView(links, {}, devices, {}, lv.host_rail_stats(links))


def rails_view(*views):
    """One LinkView of the links and devices of several :func:`rail_view` views, each of its own rail."""
    links, devices = {}, {}
    for view in views:
        links.update(view.links)
        devices.update(view.devices)
    return lv.LinkView(links, {}, devices, {}, lv.host_rail_stats(links))


def failed_pairs(found):
    return sorted("-".join(link["hosts"]) for link in found)


def test_three_links_are_enough_for_a_rail_at_its_pass_line_and_two_failures_are_enough():
    view = rail_view({"h1-h2": ("bad", 89.0), "h2-h3": ("flaky", 89.4), "h1-h3": ("good", 90.5)})
    assert failed_pairs(lf.shortfall_links(view, 1, set())) == ["h1-h2", "h2-h3"]
    # one failure is a link's, not the rail's
    view = rail_view({"h1-h2": ("bad", 89.0), "h2-h3": ("good", 89.4), "h1-h3": ("good", 90.5)})
    assert lf.shortfall_links(view, 1, set()) == []
    # two links are no population
    assert lf.shortfall_links(rail_view({"h1-h2": ("bad", 89.0), "h2-h3": ("flaky", 89.4)}), 1, set()) == []


def test_a_rail_at_its_pass_line_needs_a_failure_for_good_and_counts_a_flaky_link_as_passed_too():
    # failed once each, then passed: nothing failed for good
    view = rail_view({"h1-h2": ("flaky", 89.0), "h2-h3": ("flaky", 89.4), "h1-h3": ("good", 90.5)})
    assert lf.shortfall_links(view, 1, set()) == []
    # no link passed the first time, but the flaky ones passed on their retest, above the bad one
    view = rail_view({"h1-h2": ("bad", 89.0), "h2-h3": ("flaky", 89.4), "h1-h3": ("flaky", 89.2)})
    assert failed_pairs(lf.shortfall_links(view, 1, set())) == ["h1-h2", "h1-h3", "h2-h3"]


def test_a_rail_spread_wider_than_its_pass_line_is_not_one_population():
    values = {"h1-h2": ("bad", 83.0), "h1-h3": ("bad", 85.0), "h1-h4": ("good", 88.0), "h2-h3": ("good", 92.0),
              "h2-h4": ("good", 95.0), "h3-h4": ("good", 97.0)}
    med, spread = robust.spread([v / 100.0 for _s, v in values.values()])
    # wider than SHORTFALL_SPREAD of the median, though not wider than it times the median
    assert spread * abs(med) <= lf.SHORTFALL_SPREAD < spread / abs(med)
    assert lf.shortfall_links(rail_view(values), 1, set()) == []
    tight = dict((pair, (status, 89.0 + (value - 83.0) / 10.0)) for pair, (status, value) in values.items())
    assert failed_pairs(lf.shortfall_links(rail_view(tight), 1, set())) == ["h1-h2", "h1-h3"]


def test_a_host_a_little_slow_on_a_rail_at_its_pass_line_is_the_hosts_when_its_links_sit_below_the_others():
    values = {"h1-h2": ("bad", 88.0), "h1-h3": ("bad", 88.0), "h1-h4": ("flaky", 88.0),
              "h2-h3": ("good", 91.0), "h2-h4": ("good", 91.1), "h3-h4": ("good", 91.2)}
    view = rail_view(values)
    # the rail is one population at its pass line ...
    assert failed_pairs(lf.shortfall_links(view, 1, set())) == ["h1-h2", "h1-h3", "h1-h4"]
    # ... unless a suspect of this rail is in every bad link, and its links sit distinctly below the others'
    assert lf.shortfall_links(view, 1, {("h1", 1)}) == []
    assert failed_pairs(lf.shortfall_links(view, 1, {("h1", 0)})) == ["h1-h2", "h1-h3", "h1-h4"]


def test_the_failures_of_a_noisy_rail_whose_typical_link_passes_are_noise_from_three_links_on():
    view = rail_view({"h1-h2": ("bad", 88.0), "h1-h3": ("good", 95.0), "h2-h3": ("good", 97.0)})
    assert failed_pairs(lf.noise_links(view, 1, set())) == ["h1-h2"]
    assert lf.noise_links(rail_view({"h1-h2": ("bad", 88.0), "h1-h3": ("good", 95.0)}), 1, set()) == []


def test_a_noisy_rail_of_mixed_nic_speeds_compares_its_links_as_fractions_of_their_rates():
    values = {"h1-h2": ("bad", 88.0), "h1-h3": ("good", 94.0), "h2-h4": ("good", 192.0), "h3-h4": ("good", 196.0)}
    view = rail_view(values, expected={"h2-h4": 200.0, "h3-h4": 200.0})
    assert failed_pairs(lf.noise_links(view, 1, set())) == ["h1-h2"]


def test_a_failed_link_far_below_a_noisy_rail_is_no_noise():
    # the rail's median level 0.955; 0.83 is more than NOISE_BAND (12 %) of it below, 0.90 is not
    values = {"h1-h2": ("bad", 83.0), "h3-h4": ("bad", 90.0), "h1-h3": ("good", 95.0), "h2-h4": ("good", 96.0),
              "h1-h4": ("good", 97.0)}
    assert failed_pairs(lf.noise_links(rail_view(values), 1, set())) == ["h3-h4"]


# --- the bounds of the noise rule, the order suspects are named in, the least fleet -------------------------------

NOISY = {"h1-h2": ("bad", 93.0), "h3-h4": ("bad", 93.5), "h1-h3": ("good", 97.0), "h2-h4": ("good", 98.0)}


def test_a_noisy_rail_needs_more_than_half_of_its_measurements_passed():
    # two of four passed: its typical link does not meet the expectation
    assert lf.noise_links(rail_view(NOISY), 1, set()) == []
    three_of_five = dict(NOISY, **{"h1-h4": ("good", 96.0)})
    assert failed_pairs(lf.noise_links(rail_view(three_of_five), 1, set())) == ["h1-h2", "h3-h4"]


@pytest.mark.parametrize("relative_spread, noisy", [
    (0.01, False),    # NOISE_SPREAD itself: as tight as a rail at its line
    (0.05, True),
    (0.1, True),      # twice SHORTFALL_SPREAD: still one population
    (0.12, False),
    (0.2, False),
])
def test_a_noisy_rail_spreads_more_than_noise_spread_and_at_most_twice_shortfall_spread(
        monkeypatch, relative_spread, noisy):
    view = rail_view(dict(NOISY, **{"h1-h4": ("good", 96.0)}))
    monkeypatch.setattr(lf.robust, "spread", lambda values: (1.0, relative_spread))
    assert bool(lf.noise_links(view, 1, set())) is noisy


def test_the_noise_taken_out_of_a_view_adds_to_what_it_held():
    view = rail_view(dict(NOISY, **{"h1-h4": ("good", 96.0)}))
    view.noisy.add((9, ("h8", "h9")))
    cleaned = lf.without_noise(view, set())
    assert cleaned.noisy == {(9, ("h8", "h9")), (1, ("h1", "h2")), (1, ("h3", "h4"))}
    assert cleaned.links[(1, ("h1", "h2"))]["status"] == "good"


def test_of_two_hosts_as_bad_as_each_other_the_first_in_natural_order_is_named():
    # one failed link between h10 and h9, each host's only link: naming either explains the other
    view = rail_view({"h10-h9": ("bad", 50.0)}, rail=0)
    assert lf.suspect_host_rails(view, 0.5, 1) == {("h9", 0)}
    two_rails = rails_view(view, rail_view({"h10-h9": ("bad", 50.0)}, rail=1))
    assert lf.suspect_host_rails(two_rails, 0.5, 1) == {("h9", 0), ("h9", 1)}


def test_a_host_is_judged_by_its_links_left_once_a_suspect_took_its_own():
    # h1 fails with everyone; of h2's other three links two failed: h2 is a suspect by those, not by four
    statuses = {"h1-h2": "bad", "h1-h3": "bad", "h1-h4": "bad", "h1-h5": "bad", "h2-h4": "bad", "h2-h5": "bad",
                "h2-h3": "good", "h3-h4": "good", "h3-h5": "good", "h4-h5": "good"}
    view = rail_view(dict((pair, (status, 90.0 if status == "good" else 40.0)) for pair, status in statuses.items()),
                     rail=0)
    assert lf.suspect_host_rails(view, 0.5, 2) == {("h1", 0), ("h2", 0)}


def test_three_hosts_whose_every_link_fails_are_the_least_fleet():
    view = statuses_view({"h1-h2": "bad", "h2-h3": "bad", "h1-h3": "bad"})
    every = {("h1", 0), ("h2", 0), ("h3", 0)}
    comps, rails = lf.fleet_components(view, every, every)
    assert rails == {0} and [c["component"] for c in comps] == ["fleet"]
    smaller = statuses_view({"h1-h2": "bad"})
    assert lf.fleet_components(smaller, {("h1", 0), ("h2", 0)}, {("h1", 0), ("h2", 0)})[1] == set()


def test_a_rail_at_its_pass_line_is_no_component_where_a_suspect_explains_its_failures():
    values = {"h1-h2": ("bad", 88.0), "h1-h3": ("bad", 88.0), "h1-h4": ("flaky", 88.0),
              "h2-h3": ("good", 91.0), "h2-h4": ("good", 91.1), "h3-h4": ("good", 91.2)}
    view = rail_view(values)
    comps, after = lf.shortfall_components(view, {("h1", 1)})
    assert comps == [] and after.links == view.links
    comps, after = lf.shortfall_components(view, set())
    assert [c["component"] for c in comps] == ["fleet"]
    assert after.links[(1, ("h1", "h2"))]["status"] == "good"


def test_a_fleet_component_counts_the_links_with_a_known_status_only():
    view = statuses_view({"h1-h2": "bad", "h2-h3": "bad", "h1-h3": "bad", "h3-h4": "unknown"})
    comp = lf.fleet_component(view, 0, {"h1", "h2", "h3"})
    assert comp["evidence"][0] == "rail 0: 3 of 3 links bad, on all 3 hosts"
    assert comp["links"] == {"total": 3, "bad": 3}


def test_a_failed_link_exactly_noise_band_below_a_noisy_rail_is_noise():
    # the median level is 1.0; the bad link at 0.88 is NOISE_BAND (12 %) below it, exactly
    values = {"h1-h2": ("bad", 88.0), "h1-h3": ("good", 99.0), "h2-h3": ("good", 100.0), "h1-h4": ("good", 101.0),
              "h2-h4": ("good", 102.0)}
    assert failed_pairs(lf.noise_links(rail_view(values), 1, set())) == ["h1-h2"]


PASS_LINE = {"h1-h2": ("bad", 99.0), "h1-h3": ("flaky", 99.5), "h2-h3": ("good", 101.0)}


@pytest.mark.parametrize("relative_spread, one_population", [(0.05, True), (0.0501, False)])
def test_a_rail_at_its_pass_line_spreads_at_most_shortfall_spread(monkeypatch, relative_spread, one_population):
    view = rail_view(PASS_LINE)
    monkeypatch.setattr(lf.robust, "spread", lambda values: (1.0, relative_spread))
    assert bool(lf.shortfall_links(view, 1, set())) is one_population


def _z_of(monkeypatch, scores):
    """robust.z_score answering the z of each level (value / 100) as given."""
    monkeypatch.setattr(lf.robust, "z_score", lambda value, center, scale: scores[round(value * 100, 6)])


def test_a_link_exactly_outlier_z_above_a_rail_at_its_pass_line_is_still_of_its_population(monkeypatch):
    view = rail_view(dict(PASS_LINE, **{"h3-h4": ("good", 103.0)}))
    _z_of(monkeypatch, {99.0: -0.5, 99.5: -0.2, 101.0: 0.2, 103.0: 3.5})
    assert failed_pairs(lf.shortfall_links(view, 1, set())) == ["h1-h2", "h1-h3"]
    _z_of(monkeypatch, {99.0: -0.5, 99.5: -0.2, 101.0: 0.2, 103.0: 3.6})
    assert lf.shortfall_links(view, 1, set()) == []


def test_a_failed_link_exactly_outlier_z_below_a_rail_at_its_pass_line_is_typical_of_it(monkeypatch):
    view = rail_view(dict(PASS_LINE, **{"h3-h4": ("bad", 97.0)}))
    _z_of(monkeypatch, {97.0: -3.5, 99.0: -0.5, 99.5: -0.2, 101.0: 0.2})
    assert failed_pairs(lf.shortfall_links(view, 1, set())) == ["h1-h2", "h1-h3", "h3-h4"]
    _z_of(monkeypatch, {97.0: -3.6, 99.0: -0.5, 99.5: -0.2, 101.0: 0.2})
    assert failed_pairs(lf.shortfall_links(view, 1, set())) == ["h1-h2", "h1-h3"]


# h1 in every bad link of the rail; h2-h3 and h3-h4 pass without it
EXPLAINED = {"h1-h2": ("bad", 90.0), "h1-h3": ("bad", 90.0), "h2-h3": ("good", 100.0), "h3-h4": ("good", 100.0),
             "h2-h4": ("good", 100.0)}


def test_suspects_without_a_level_of_their_own_explain_their_links():
    view = rail_view(EXPLAINED)
    levels = {("h2", "h3"): 1.0, ("h3", "h4"): 1.0, ("h2", "h4"): 1.0}
    assert lf._hosts_explain(view, 1, {("h1", 1)}, None, levels) is True


@pytest.mark.parametrize("z, theirs, others, shortfall, explained", [
    (-3.5, 0.99, 1.0, 0.05, False),   # exactly outlier_z below the others, and close to them: as unlucky as they are
    (-3.6, 0.99, 1.0, 0.05, True),
    # exactly SHORTFALL_SPREAD of the others' median below them (a bound a float holds exactly: a quarter of 2)
    (-1.0, 1.5, 2.0, 0.25, False),
    (-1.0, 1.49, 2.0, 0.25, True),
])
def test_suspects_explain_their_links_when_they_measure_distinctly_below_the_others(
        monkeypatch, z, theirs, others, shortfall, explained):
    view = rail_view(EXPLAINED)
    monkeypatch.setattr(lf.robust, "z_score", lambda value, center, scale: z)
    monkeypatch.setattr(lf, "SHORTFALL_SPREAD", shortfall)
    levels = {("h1", "h2"): theirs, ("h1", "h3"): theirs, ("h2", "h3"): others, ("h3", "h4"): others,
              ("h2", "h4"): others}
    assert lf._hosts_explain(view, 1, {("h1", 1)}, None, levels) is explained


def test_the_suspects_of_a_rail_at_its_pass_line_need_to_explain_its_typical_failures_only():
    # h1's links fail and sit distinctly below the others; h4-h5 failed far below the rail, a NIC's, not typical
    values = {"h1-h2": ("bad", 95.0), "h1-h3": ("bad", 95.1), "h2-h3": ("good", 101.0), "h3-h4": ("good", 101.2),
              "h2-h4": ("good", 101.1), "h4-h5": ("bad", 80.0)}
    view = rail_view(values)
    assert lf.shortfall_links(view, 1, {("h1", 1)}) == []
    assert failed_pairs(lf.shortfall_links(view, 1, set())) == ["h1-h2", "h1-h3"]


def test_a_host_whose_bad_links_all_join_suspects_is_hidden_by_them_when_most_partner_retests_fail():
    view = statuses_view({"h1-h2": "bad", "h2-h3": "bad", "h3-h4": "good"})
    links = [("h1", "bad"), ("h3", "bad")]
    suspects = {("h1", 0), ("h3", 0)}
    view.partners = {(0, "h2"): [{"bad": True, "verdict": "fail"}, {"bad": False, "verdict": "pass"}]}
    assert lf.hidden_by_suspects(view, ("h2", 0), links, suspects, 0.5, 1) is False     # half is not most
    view.partners[(0, "h2")].append({"bad": True, "verdict": "fail"})
    assert lf.hidden_by_suspects(view, ("h2", 0), links, suspects, 0.5, 1) is True


@pytest.mark.parametrize("depths, failed", [
    ({0: 0.5, 1: 2.0}, True),     # another rail as deep as COMPARABLE_DEPTH times this one's: its failure counts
    ({0: 0.5, 1: 2.5}, False),    # deeper: a broken NIC there says nothing of this rail
    ({0: 2.0, 1: 3.0}, True),
])
def test_an_outliers_failure_on_another_rail_counts_up_to_comparable_depth_times_as_deep(depths, failed):
    view = rails_view(rail_view({"h1-h2": ("good", 90.0)}, rail=0), rail_view({"h1-h3": ("bad", 40.0)}, rail=1))
    view.outliers = lambda: {("h1", 0), ("h1", 1)}
    view.outlier_depth = lambda node, rail: depths[rail]
    assert lf._outlier_failed(view, "h1", 0) is failed
    # a failure with a suspect is the suspect's
    assert lf._outlier_failed(view, "h1", 0, suspects={("h3", 1)}) is False


def _with_outlier(statuses, outlier):
    view = statuses_view(statuses)
    view.outliers = lambda: {(outlier, 0)}
    view.outlier_depth = lambda node, rail: 0.5
    return view


def test_an_outlier_that_counts_all_its_links_bad_is_named_before_a_host_with_a_smaller_share():
    # h1 measures far below its rail and failed with h2: all its three links count as bad (a share of 1), against
    # h2's two bad of three; once h1 is named, h2's failure with it is h1's and h2 is left at one of two
    view = _with_outlier({"h1-h2": "bad", "h1-h3": "good", "h1-h4": "good", "h2-h5": "bad", "h2-h6": "good",
                          "h3-h5": "good", "h4-h5": "good"}, "h1")
    assert lf.suspect_host_rails(view, 0.5, 1) == {("h1", 0)}


def test_at_the_same_share_the_host_with_more_of_its_links_left_measured_bad_is_named_first():
    # h2's only link failed (a share of 1 of its links, all measured bad); h1 counts its three as bad as an
    # outlier, but measured one of them bad: h2 first, and then h1's only failure is h2's
    view = _with_outlier({"h1-h2": "bad", "h1-h3": "good", "h1-h4": "good"}, "h1")
    assert lf.suspect_host_rails(view, 0.5, 1) == {("h2", 0)}


def test_a_hosts_neighbours_on_a_rail_are_its_links_of_known_status_every_one_of_them():
    view = statuses_view({"h1-h4": "unknown", "h1-h2": "bad", "h2-h3": "good", "h3-h4": "unknown"})
    assert lf._rail_neighbours(view) == {("h1", 0): [("h2", "bad")], ("h2", 0): [("h1", "bad"), ("h3", "good")],
                                         ("h3", 0): [("h2", "good")]}


def test_a_rail_at_its_pass_line_counts_the_links_with_a_known_status_only():
    values = dict(PASS_LINE, **{"h3-h4": ("good", 100.0)})
    view = rail_view(values)
    view.links[(1, ("h3", "h4"))]["status"] = "unknown"
    links = [view.links[(1, ("h1", "h2"))], view.links[(1, ("h1", "h3"))]]
    comp = lf.shortfall_component(view, 1, links)
    assert comp["evidence"][0] == "rail 1: 1 bad and 1 flaky of 3 links, within the rail's usual spread"
    assert comp["links"] == {"total": 3, "bad": 1}
