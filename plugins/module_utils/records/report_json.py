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


# records encoded this many at a time by ``pieces``, each batch written before the next is made: the file's text
# (145 MB at a 128-host mesh) is never held whole, joined from the encoder's parts, copied to add its newline and
# copied again into bytes (at that size four fresh buffers of 145 MB, each page of them faulted in anew)
RECORDS_PER_PIECE = 1000
# how a document is encoded: compact, one line, keys sorted. Records are trees read from JSON or from module results,
# never cyclic: the encoder's check of every list and dict it enters for a cycle is a sixth of its time at 100,000
# records (a cycle would still raise, as a RecursionError)
_ENCODE = json.JSONEncoder(separators=(",", ":"), sort_keys=True, default=str, check_circular=False).encode
# stands for the records while the rest of the document is encoded; its encoding is looked for in that text
_RECORDS_MARK = "\x00commcheck records of results.json \x00"


def document_of(view):
    """The results.json document of a report view, as ``json.loads`` of the file gives it back."""
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
    return document


def pieces(view, per_piece=RECORDS_PER_PIECE):
    """The text of results.json in pieces, each made when the one before is taken: joined, they are ``render``'s
    text, byte for byte (the records' list encoded ``per_piece`` records at a time, between the rest of the
    document encoded around a mark that stands for it)."""
    document = document_of(view)
    records = document["records"]
    document["records"] = _RECORDS_MARK
    around = _ENCODE(document)
    mark = _ENCODE(_RECORDS_MARK)
    if around.count(mark) != 1:
        # a value of the document holds the mark's text itself: the document encoded whole, as one piece
        document["records"] = records
        yield _ENCODE(document) + "\n"
        return
    head, tail = around.split(mark)
    yield head + "["
    for start in range(0, len(records), per_piece):
        if start:
            yield ","
        # a list's encoding without its brackets is its items', as they are within any longer list
        yield _ENCODE(records[start:start + per_piece])[1:-1]
    yield "]" + tail + "\n"


def render(view):
    return "".join(pieces(view))


def render_results_json(records, summary, meta=None):
    return render(ReportView(records, summary, meta))
