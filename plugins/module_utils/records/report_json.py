# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""results.json: the summary, the baseline settings, the records and the regressions."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json

from ansible_collections.clusterops.commcheck.plugins.module_utils.records.report_model import ReportView

RESULTS_SCHEMA = 1


def render(view):
    document = {
        "schema": RESULTS_SCHEMA,
        "run_id": view.summary.get("run_id"),
        "generated": view.summary.get("generated"),
        "summary": view.summary,
        "baseline": view.meta.get("baseline"),
        "records": [r for r in view.records if r.get("kind") != "regression"],
        "regressions": view.regressions,
    }
    return json.dumps(document, indent=2, sort_keys=True, default=str) + "\n"


def render_results_json(records, summary, meta=None):
    return render(ReportView(records, summary, meta))
