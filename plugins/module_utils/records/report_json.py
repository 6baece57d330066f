# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""results.json: the summary, the baseline settings, the records and the regressions.

Compact: one line, no indentation or padding (a 128-host x 8-rail mesh has
about 140,000 records, and indentation alone was over a third of the file);
``json.load`` reads it the same. Each record is written once, in
``records``; ``regressions`` holds one entry per regressed check (its
metrics merged over the check's records, baseline.regressions()).
"""

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
    if view.gpus["rows"]:
        # the GPU x NIC table (report_gpu.gpu_table) where GPUs were tested, its cells keyed by rail as text
        document["gpus"] = {"rails": view.gpus["rails"], "rows": [
            dict(row, cells=dict((str(k), v) for k, v in row["cells"].items())) for row in view.gpus["rows"]]}
    # records are trees read from JSON or from module results, never cyclic: the encoder's check of every list and
    # dict it enters for a cycle is a sixth of its time at 100,000 records (a cycle would still raise, as a
    # RecursionError)
    return json.dumps(document, separators=(",", ":"), sort_keys=True, default=str, check_circular=False) + "\n"


def render_results_json(records, summary, meta=None):
    return render(ReportView(records, summary, meta))
