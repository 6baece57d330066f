# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The words of a tripped threshold (pure): the cause of a far fleet outlier, where a hardware expectation came
from, and the evidence line that gives each tripped check's numbers (``thresholds.evaluate``)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts.values import fmt_value


def far_outlier_text(fleet, name, value):
    """The cause of a far fleet outlier: what it is far from (another rail's best, its best quarter, the median)."""
    if fleet.get("other_rail"):
        return "%s is %s x or more slower than the best quarter %s of another rail's comparable records (far " \
            "fleet outlier: rails built alike answer alike)" % (
                fmt_value(value), fmt_value(fleet["best_factor"]), fmt_value(fleet["best"]))
    if fleet.get("good") is not None:
        return "%s is %s the good pairs' level %s %s %s: the pairs without %s (far fleet outlier, fleet median " \
            "%s, %d comparable records)" % (
                fmt_value(value), "above" if name == "lat_us" else "below", fmt_value(fleet["good"]),
                "/" if name == "lat_us" else "x", fleet["min_fraction"], ", ".join(fleet["suspects"]),
                fmt_value(fleet["median"]), fleet["n"])
    if fleet.get("best") is not None:
        return "%s is %s x or more %s than the best quarter %s of %d comparable records (far fleet outlier, " \
            "fleet median %s)" % (fmt_value(value), fmt_value(fleet["best_factor"]),
                                  "slower" if name == "lat_us" else "lower", fmt_value(fleet["best"]), fleet["n"],
                                  fmt_value(fleet["median"]))
    if name == "lat_us":
        return "%s is above the fleet median %s / %s (far fleet outlier, robust z %s, %d comparable records)" % (
            fmt_value(value), fmt_value(fleet["median"]), fleet["min_fraction"], fleet["robust_z"], fleet["n"])
    return "%s is below %s x the fleet median %s (far fleet outlier, robust z %s, %d comparable records)" % (
        fmt_value(value), fleet["min_fraction"], fmt_value(fleet["median"]), fleet["robust_z"], fleet["n"])


def hw_text(hw):
    """Where a hardware expectation came from: link rate x efficiency, the run's own pass line, ..."""
    if "link_rate" in hw:
        return "link rate %s x efficiency %s" % (fmt_value(hw["link_rate"]), hw["efficiency"])
    if hw.get("efficiency") is None:
        return hw.get("source") or "expectation"
    return "%s, efficiency %s" % (hw.get("source") or "rails x rate x efficiency", hw["efficiency"])


def tripped_evidence(result):
    """The evidence line of a record whose thresholds tripped: each tripped check's numbers."""
    parts = []
    if "hardware" in result["tripped"]:
        hw = result["hardware"]
        parts.append("hardware: %s < %s (%s)" % (fmt_value(hw["value"]), fmt_value(hw["expected"]), hw_text(hw)))
    if "fleet" in result["tripped"]:
        parts.append(_fleet_evidence(result["fleet"]))
    if "history" in result["tripped"]:
        hi = result["history"]
        parts.append("history: %+.0f%% against the %s baseline %s (%d runs)" % (
            hi["change"] * 100, hi["scope"], fmt_value(hi["baseline"]), hi["runs"]))
    return "thresholds tripped (%s) -- %s" % (", ".join(result["tripped"]), "; ".join(parts))


def _fleet_evidence(fleet):
    """The fleet check's numbers: its robust z when its group had one (a rail of fewer than three records has none
    and is judged only against another rail's best), and the best quarter it was far from, its own or another rail's."""
    words = []
    if fleet.get("robust_z") is not None:
        words.append("robust z %s against the median %s of %d" % (fleet["robust_z"], fmt_value(fleet["median"]),
                                                                  fleet["n"]))
    if fleet.get("best") is not None:
        words.append("%s x or more off %s best quarter %s" % (
            fmt_value(fleet["best_factor"]), "another rail's" if fleet.get("other_rail") else "its",
            fmt_value(fleet["best"])))
    if fleet.get("good") is not None:
        words.append("far off the good pairs' level %s (the pairs without %s)" % (
            fmt_value(fleet["good"]), ", ".join(fleet["suspects"])))
    return "fleet: " + ", ".join(words)
