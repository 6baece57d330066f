# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The equivalent mutants of the files tools/mutation.py took on second (issue mut34): bisection, retest and the
nccl-tests parsers. The same shape as EQUIVALENT there: (file, function, a regular expression the mutated line
matches, why the mutant behaves as the original for every input)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

_STUCK_ONLY_WITHOUT_GOOD = (
    "plan_stuck, its only caller, runs only while no run was good (a good run leaves min_size known-good hosts, "
    "partners enough for any half; with min_size 1 no half needs one) and so while no host is named (naming needs "
    "a good run: a confirmation beside known-good hosts, or a half that ran good beside a lone one)")

_CACHE_ONLY = (
    "CheckKeys keeps the names of each shape only to save sorting them again: a look-up that misses, or a shape "
    "kept without its names, computes them again, and a record whose params are not a plain dict goes through "
    "record_key, the same key")

_GROUPS_GIVEN = (
    "the groups a caller gives are shared_groups of the same records, and _shared finds no group in an empty dict: "
    "found again, or asked of no group, the answer is the same")
_CENTER_IS_MEDIAN = "the center callers give is the values' median: taking it again gives the same number"

EQUIVALENT = (
    ("planning/bisection.py", "bisect_pool",
     r'"(XXroundXX|ROUND)": (1|plan\["round"\])\}|"bad": True, "round": 2\}\]$',
     "bisect_plan reads only each run's hosts and bad (_match_round) and numbers the rounds itself: the round a "
     "run is handed in under is never read"),
    ("planning/bisection.py", "_Rounds.__init__",
     r"^def __init__\(self, pool, state, min_size=\d, confirm=(True|False), verify=(True|False)\):$",
     "bisect_plan, the only caller, passes min_size, confirm and verify"),
    ("planning/bisection.py", "_Rounds.__init__", r'^self\.hypothesis = ""',
     "hypothesis is only read for its truth before a round sets it: '' and None alike"),
    ("planning/bisection.py", "_Rounds.mark_bad", r"^self\.known\.add\(None\)$",
     "a host named bad never runs again (halves come from open suspects and waiting hosts, the hypothesis and "
     "verify runs leave the named out) and is in no suspect group or waiting list: known is not asked about it"),
    ("planning/bisection.py", "_Rounds.plan_halves", r'^groups\.append\(\("(XXwaitingXX|WAITING)", waiting\)\)$',
     "a group's kind is compared only with suspect, pair and hypothesis: any other name is the waiting group"),
    ("planning/bisection.py", "_Rounds.search",
     r'^while len\(self\.state\["rounds"\]\) (<|<=) (4|5) \* len\(self\.pool\) \+ (8|9):$',
     "a safety net no search reaches: each round of halves splits a suspect group or settles its hosts, and the "
     "rounds of pairs stop after 4 runs a host (plan_stuck), so a search ends well before 4 N + 8 rounds "
     "(thousands of simulated searches, flaky results too, never reached it)"),
    ("planning/bisection.py", "_Rounds.search_round", r"^self\.learn\(entries, None\)",
     "when nothing ran, every half's run index is None and learn never reads the results"),
    ("planning/bisection.py", "_Rounds.sole_suspect",
     r'^if test\["bad"\] or not bad\.intersection\(test\["hosts"\]\):$',
     _STUCK_ONLY_WITHOUT_GOOD + ": every run is bad and holds no named host, so both conditions hold for every run"),
    ("planning/bisection.py", "_Rounds.topped_up", r"^if need < 0:$",
     "a part of exactly min_size takes free[:0]: no partner and no host taken, the part as the early return gives"),
    ("planning/bisection.py", "bisect_plan", r"^\)$",
     "the state's unresolved list is filled only as the search ends, when it is stuck with no known-good host; "
     "then the pool without the named and the unresolved hosts is too small for a verify run, so no round is "
     "pending while it is filled: [] and the state's list are both empty"),
)

EQUIVALENT += (
    ("verdicts/retest.py", "_comparable", r'^kind = str\(rec\.get\("kind"\) or "XXXX"\)$',
     "a record without a kind is keyed 'XXXX' instead of '', the first pass's and the retests' alike: the same "
     "groups"),
    ("verdicts/retest.py", "tag_retest_records", r'^if not str\(rec\.get\("kind"\) or "XXXX"\)\.endswith\(RETEST_SUFFIX\):$',
     "a record without a kind reads as 'XXXX' instead of '': neither ends in _retest, so both get the suffix"),
    ("verdicts/retest.py", "judged_by_first_pass", r'\.get\("metric"\) or "(XXbwXX|BW)"$',
     "the metric is only compared with 'lat': any other default is bandwidth, as 'bw' is"),
    ("verdicts/retest.py", "judged_by_first_pass",
     r'^return dict\(rec, verdict="fail", cause=far_text\(value, why, metric != "lat", len\(values\), '
     r'fleet_min_fraction,$',
     "dict(rec, ...) already carries the record's fix: fix=rec.get('fix') sets it to itself"),
)

EQUIVALENT += (
    ("parsers/parse_nccl_tests.py", "_find_embedded_json", r"^return doc if \(isinstance\(doc, dict\)\) or True else None$",
     "raw_decode starts at the '{' the search found: what it decodes is always an object"),
    ("parsers/parse_nccl_tests.py", "_pasted_json", r"^whole = _whole_json\(cleaned, undecodable=None\)$",
     "undecodable is only read for its truth: None is False"),
    ("parsers/parse_nccl_tests.py", "parse_nccl_tests_json", r'^result\["warnings"\] = Notes\(width=1000\)$',
     "Notes' default limit is 100, which MAX_WARNINGS is"),
    ("parsers/parse_nccl_tests.py", "parse_nccl_tests_json", r"^finish\(result, errors, (None|True)\)$",
     "proxy_service only adds a hint to a segfault error, and the JSON forms never add one (no WARN rule or last "
     "error is a segfault)"),
)

EQUIVALENT += (
    ("verdicts/collective_retest.py", "_with_outcome",
     r'^if \(judged\.get\("verdict"\), judged\.get\((None|"XXcauseXX"|"CAUSE")\)\) == \(rec\.get\("verdict"\), '
     r'rec\.get\("cause"\)\) and \\$|^if \(judged\.get\("verdict"\), judged\.get\("cause"\)\) == '
     r'\(rec\.get\("verdict"\), rec\.get\((None|"XXcauseXX"|"CAUSE")\)\) and \\$',
     "a view that comes back with its verdict has its cause and fix as view copied them (classify changes a "
     "first-pass record's cause only with its verdict, judged_by_first_pass a retest's likewise): the record "
     "rebuilt from them is equal to the one returned as it is"),
)

# parse_iperf3.py and nccl_table.py (issue mut34b)
EQUIVALENT += (
    ("parsers/parse_iperf3.py", "_fill_bidir", r'bool\(to_int\(test\.get\("bidir"\), ?(None|)\)\)$',
     "a bidir flag that is no number reads as None instead of 0: bool() of either is False"),
    ("parsers/parse_iperf3.py", "_fill_start", r'bool\(to_int\(test\.get\("reverse"\), ?(None|)\)\)$',
     "a reverse flag that is no number reads as None instead of 0: bool() of either is False"),
    ("parsers/parse_iperf3.py", "_from_json_stream",
     r'^assembled\["(server_output_json|XXserver_output_jsonXX|SERVER_OUTPUT_JSON)"\] = (None|data)$',
     "the server's output is kept under no key _fill reads (it reads start, end, intervals and error): only that "
     "the stream had an event counts, whatever the key and its value"),
    ("parsers/parse_iperf3.py", "_json_objects", r"or newline (<= 0|< 1):$",
     "the line break is found from the start of an object, a '{': it is never at position 0"),
    ("parsers/parse_iperf3.py", "_json_objects", r"^end = newline - 1$",
     "the scan goes on from the last character of the deep line instead of the next line's first: only a '{' "
     "there could start an object, and a '{' with a line break behind it and the next line's text after is no "
     "JSON object (a key or '}' must follow): one more failed start, which neither the result nor a warning counts"),
    ("parsers/parse_iperf3.py", "_known_bare_message", r'if bare else "XXXX"$',
     "a line without 'iperf3:' reads as the message 'XXXX' instead of '': classify knows neither, so both give ''"),
    ("parsers/parse_iperf3.py", "_result_object", r"^return None, 1$",
     "where the object ends is read only when there is one"),
)

EQUIVALENT += (
    ("parsers/nccl_table.py", "_add_groups", r"^row\.setdefault\(key, ?(None|)\)$",
     "setdefault's default is None: setdefault(key) and setdefault(key, None) are the same call"),
    ("parsers/nccl_table.py", "_read_header_columns", r'lstrip\("XX#XX"\)|rstrip\("XX%XX"\)',
     "the name is lower-cased before: it has no 'X' for the padding to strip"),
    ("parsers/nccl_table.py", "_read_header_columns", r'^time_kind = (None|"XXtimeXX"|"TIME")$',
     "a layout is made only with groups, and each group starts at a time or cputime column, which sets time_kind"),
    ("parsers/nccl_table.py", "_strip_row_prefix", r'not in "XX:\]XX":$',
     "the early return only spares the prefix pattern, which needs a ':' or ']' at the end: a first token ending "
     "in 'X' fails it, and the tokens come back whole either way"),
    ("parsers/nccl_table.py", "may_start_row", r'token\[-1\] in "XX:\]XX"$',
     "a pre-filter: a line whose first token is a word ending in 'X' is no row start, no continuation and no "
     "fragment (a word is no number), so feed says False for it as the filter does"),
    ("parsers/nccl_table.py", "Table.__init__",
     r'^self\.pending_layout = ""$|^self\.pending_extra = None$|^self\.pending_lines = (None|1)$',
     "each is set when a row starts, before it is read (no row is open while pending is None)"),
    ("parsers/nccl_table.py", "Table._emit", r"^self\.pending_extra = None$",
     "set again when the next row starts, before it is read"),
    ("parsers/nccl_table.py", "Table._extend", r"^self\._emit\(partial=None\)$",
     "partial is read as bool(partial) and 'if partial': None and False alike"),
    ("parsers/nccl_table.py", "Table._extend", r"^while position <= lead_n and not validators",
     "at position lead_n the column is the first group's time (each group starts at its time column), which "
     "_blank_lead_cell never takes for a blank redop or root"),
    ("parsers/nccl_table.py", "Table._infer", r'^wrong_kind = ""$',
     "an inferred layout's wrong_kind is only read for its truth (_emit): '' and None alike"),
    ("parsers/nccl_table.py", "Table._infer", r'^wrong_kind = "(XXmax_errorXX|MAX_ERROR)" if',
     "_emit compares wrong_kind with 'count' only: any other name is the error column"),
    ("parsers/nccl_table.py", "Table._infer", r"^has_root = None$",
     "default_layout reads has_root only for its truth: None and False alike"),
    ("parsers/nccl_table.py", "_Layout.__init__", r'specs\.extend\(\("(XXgroupXX|GROUP)", field, index\)',
     "a spec's kind is compared with 'lead' and 'ts' only: any other is a group column"),
    ("parsers/nccl_table.py", "_Layout.__init__", r'\("ts", "(XXclockXX|CLOCK)", None\)\]\)$',
     "_validator compares a timestamp column's name with 'date' only: any other is the clock"),
    # localization_fleet.py (2026-12-04)
    ("verdicts/localization_fleet.py", "shortfall_component", r"^nodes = view\.hosts_of_rail\.get\(rail, (None|)\)$",
     "shortfall_components calls it for the rails of view.hosts_of_rail only: the default is never taken"),
    ("verdicts/localization_fleet.py", "every_rail_component",
     r"for n in view\.hosts_of_rail\.get\(r, (None|)\)\)$",
     "its fleets are components of rails of view.hosts_of_rail (fleet_components, shortfall_components): the "
     "default is never taken"),
    ("verdicts/localization_fleet.py", "fleet_component", r'^None, nodes, bad, rail_links\) else ""\),$',
     "the cause reads not_separable_lines only for whether it has lines, which the rail does not change"),
    ("verdicts/localization_fleet.py", "explained_by_some_hosts",
     r"^if not named or named > view\.hosts_of_rail\.get\(rail, set\(\)\):$",
     "where the suspects are every host of the rail, every link has one of them, so the last test (a good link "
     "without a suspect) is False as the early return is"),
    ("verdicts/localization_fleet.py", "_without_suspect", r"^whole\[each\] = None$",
     "whole's values are read only for their truth: None and False alike"),
    ("verdicts/localization_fleet.py", "shortfall_components",
     r"^return out, \(view\.without\(covered\) if \(covered\) or True else view\)$",
     "a view without no links is a view of the same links, partners, devices and noise: the same answers"),
    # baseline.py (2026-12-04)
    ("verdicts/baseline.py", "_keep", r"^shapes\[shape\] = None$", _CACHE_ONLY),
    ("verdicts/baseline.py", "CheckKeys.key",
     r"^(params = None|names = None|names = self\._params\.get\(None\)|"
     r"_keep\(self\._params, (None, names|shape, None)\)|if params\.__class__ is dict:)$", _CACHE_ONLY),
    ("verdicts/baseline.py", "CheckKeys.key", r"if \(value\.__class__ is str\) and False else \(name, _param_value",
     "_param_value gives a text back as it is: (name, value) either way"),
    ("verdicts/baseline.py", "CheckKeys.metrics",
     r"^(names = None|names = self\._metrics\.get\(None\)|_keep\(self\._metrics, (None, names|shape, None)\))$",
     _CACHE_ONLY),
    ("verdicts/baseline.py", "_param_value",
     r"^(tag = None|tag = _SCALAR_TAGS\.get\(None\)|return \(tag, value\) if \(tag\) and False else _frozen\(value\))$",
     "_frozen of a scalar is (its type's name, the value), and _SCALAR_TAGS holds those names: the same pair"),
    ("verdicts/baseline.py", "_regressed_checks",
     r'regression\.get\("(baseline_runs|metrics)", (None|)\)',
     "every regression compare_record makes holds its baseline_runs and metrics: the default is never taken"),
    ("verdicts/baseline.py", "compare", r"^(keys = None|builder = BaselineBuilder\(k=k, (keys=None, |)exclude_runs=)",
     "without keys the builder keeps every check of the history, those of the records among them: the same "
     "baselines for the records, more memory"),
    ("verdicts/baseline.py", "regressions",
     r"(groups = shared_groups\(records\) if \(groups is None\) or True else groups|"
     r"_shared\(record, metrics, groups\) if \(groups\) or True else None)", _GROUPS_GIVEN),
    ("verdicts/baseline.py", "regression_records",
     r"(groups = shared_groups\(records\) if \(groups is None\) or True else groups|"
     r"_shared\(record, metrics, groups\) if \(groups\) or True else None)", _GROUPS_GIVEN),
    ("verdicts/baseline.py", "relative_spread",
     r"(med = median\(values\) if \(center is None\) or True else center|return mad\(values, (None|)\) / abs\(med\))$",
     _CENTER_IS_MEDIAN),
    ("verdicts/baseline.py", "RegressionRule.judge", r"spread = relative_spread\(run_values, (None|)\)$",
     _CENTER_IS_MEDIAN),
    ("verdicts/baseline.py", "shared_groups",
     r"(for record in records if \(tests\) or True else \(\):|"
     r"params = _test_params\(record\) if \(params is None\) or True else params)$",
     "without a regressed test nothing is wanted, so the pass adds nothing; a record's test params made again are "
     "the same"),
    ("verdicts/baseline.py", "BaselineBuilder.add", r"^entry\[2\] = None$",
     "an entry's single flag is read only for its truth: None and False alike"),
    ("verdicts/baseline.py", "BaselineBuilder.baseline",
     r"if \(len\(values\) == 1\) and False else median\(values\)\)$",
     "the median of one value is that value (the values are floats: CheckKeys.metrics makes them so)"),
    ("verdicts/baseline.py", "RegressionRule.judge", r"or not base or base < 0 or len\(run_values\) < needed:$",
     "a baseline of 0 is caught by 'not base' before it: < 0 and <= 0 differ only there"),
)
