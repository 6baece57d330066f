# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""results.json written in pieces (issue 37 §6): the same bytes as the document encoded whole, made as written.

The records are encoded a batch at a time between the rest of the document, so that a 128-host mesh's 145 MB
text is never held, joined or copied whole. ``_whole`` is how the file was made before (one ``json.dumps`` of the
document and its newline), kept here as the reference.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import datetime
import json
import math
import os
from unittest import mock

import pytest
from ansible.playbook.play_context import PlayContext

from ansible_collections.clusterops.commcheck.plugins.action import report as report_action
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import report_json
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import report_model
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import report_render
from ansible_collections.clusterops.commcheck.plugins.module_utils.records.atomic_file import write_atomic


def _whole(view):
    return json.dumps(report_json.document_of(view), separators=(",", ":"), sort_keys=True, default=str,
                      check_circular=False) + "\n"


class Told(object):
    """A value JSON cannot encode (``default=str`` writes its text), noting when it is encoded."""

    def __init__(self, text, noted):
        self.text, self.noted = text, noted

    def __str__(self):
        self.noted.append(self.text)
        return self.text


def _record(index, noted=None):
    host, peer = "h%02d" % (index % 7), "h%02d" % ((index + 3) % 7)
    record = {"kind": "rdma_bw", "host": host, "peer": peer, "run_id": "r1",
              "verdict": ("pass", "fail", "error")[index % 3],
              "params": {"op": "write", "rail": index % 4, "device": "mlx5_%d" % (index % 4), "size": 65536},
              "metrics": {"bw_gbps": 90.0 + index / 7.0, "bw_peak_gbps": float(index)}}
    if index % 5 == 1:
        # what a hostile or odd value looks like in a record: quotes, a NUL, non-ASCII, the records' key itself
        record["params"]["note"] = 'a "quoted" \x00 text, \u00e9t\u00e9, "records":[] and ],"x":['
    if index % 5 == 2:
        record["metrics"].update(lat_us=float("nan"), other=float("inf"), count=index)
    if noted is not None:
        record["raw"] = Told("record %d" % index, noted)
    return record


def _view(records, summary_extra=None):
    summary = report_model.summarize(records, run_id="r1")
    summary.update(summary_extra or {})
    return report_model.ReportView(records, summary, {"baseline": {"k": 5}})


@pytest.mark.parametrize("count", [0, 1, 2, 3, 4, 7, 9])
def test_the_pieces_join_to_the_document_encoded_whole(count):
    # batches of 3: no record, less than a batch, a batch, a batch and one, full batches and a part
    view = _view([_record(i) for i in range(count)])
    pieces = list(report_json.pieces(view, per_piece=3))
    assert "".join(pieces) == _whole(view) == report_json.render(view)
    assert len(json.loads("".join(pieces))["records"]) == count
    batches = [p for p in pieces[1:-1] if p != ","]
    assert len(batches) == math.ceil(count / 3.0)


def test_a_document_that_holds_the_mark_itself_is_encoded_whole_and_the_same():
    # the mark that stands for the records, found elsewhere in the document (a value, a key): the pieces cannot be
    # cut around it, so the document is one piece
    mark = "\x00commcheck records of results.json \x00"
    for extra in ({"note": mark}, {mark: 1}):
        records = [_record(i) for i in range(5)]
        records[2]["host"] = "h" + mark
        view = _view(records, extra)
        pieces = list(report_json.pieces(view, per_piece=2))
        assert "".join(pieces) == _whole(view)
    assert len(pieces) == 1


def test_each_batch_of_records_is_encoded_when_its_piece_is_taken():
    noted = []
    view = _view([_record(i, noted) for i in range(7)])
    pieces = report_json.pieces(view, per_piece=3)
    head = next(pieces)
    assert head.endswith('"records":[') and noted == []
    assert next(pieces).count('"raw":"record ') == 3 and noted == ["record 0", "record 1", "record 2"]
    rest = list(pieces)
    assert len(noted) == 7 and "".join([head] + rest).count('"raw":"record ') == 4
    assert rest[-1].startswith("]") and rest[-1].endswith("}\n")


def test_each_format_in_pieces_gives_the_same_texts():
    records = [_record(i) for i in range(11)]
    summary = report_model.summarize(records, run_id="r1")
    formats = list(report_render.FORMATS)
    now = datetime.datetime(2026, 12, 4, 23, 0, 0, tzinfo=datetime.timezone.utc)
    whole = report_render.render_formats(formats, records, summary, {"baseline": None}, now=now)
    in_pieces = report_render.each_format(formats, records, summary, {"baseline": None}, now=now, in_pieces=True)
    assert dict((fmt, "".join(text)) for fmt, text in in_pieces) == whole


def test_a_file_is_written_from_its_pieces_and_a_failing_piece_leaves_the_old_one(tmp_path):
    path = str(tmp_path / "results.json")
    write_atomic(path, iter(["{", '"a":', "1}\n"]))
    with open(path) as handle:
        assert handle.read() == '{"a":1}\n'

    def failing():
        yield '{"b":'
        raise ValueError("a record that cannot be encoded")

    with pytest.raises(ValueError):
        write_atomic(path, failing())
    with open(path) as handle:
        assert handle.read() == '{"a":1}\n'
    assert os.listdir(str(tmp_path)) == ["results.json"]


def test_check_mode_takes_every_piece_as_a_run_would_and_writes_nothing(tmp_path, monkeypatch):
    taken, made = [], []
    real = report_json.pieces

    def noting(view, per_piece=report_json.RECORDS_PER_PIECE):
        made.extend(real(view, per_piece=2))
        for piece in made:
            taken.append(piece)
            yield piece

    monkeypatch.setattr(report_json, "pieces", noting)
    task = mock.MagicMock()
    task.args = {"report_dir": str(tmp_path), "run_subdir": True, "run_id": "r1", "compare": False,
                 "formats": ["json"], "records": [_record(i) for i in range(5)]}
    task.check_mode, task.async_val, task.diff = True, 0, False
    action = report_action.ActionModule(task, mock.MagicMock(), PlayContext(), loader=mock.MagicMock(),
                                        templar=mock.MagicMock(), shared_loader_obj=mock.MagicMock())
    result = action.run(task_vars={})
    assert not result.get("failed"), result
    assert len(made) == 7 and taken == made
    assert os.listdir(str(tmp_path)) == []
