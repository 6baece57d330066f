# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Mutation testing of the core (``make mutation``): mutmut over the files in TARGETS, each with its unit tests.

  python tools/mutation.py                 every file of TARGETS
  python tools/mutation.py discovery/gid.py ...   only these (paths under plugins/module_utils/)
  python tools/mutation.py --show          also print each survivor's diff

Everything happens under .build/mutation/: a copy of the working tree (git's tracked and untracked,
not ignored, files) laid out as ``ansible_collections/clusterops/commcheck``, so that mutmut's
module names are the ones the tests import, and mutmut's own ``mutants/`` copy beside it. The
tracked tree is never written. A run prints, per file, the mutants, how many the tests killed,
and every survivor that EQUIVALENT does not explain; it exits 1 when there is such a survivor
(or a mutant no test reached, or one that timed out).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import argparse
import json
import os
import re
import shutil
import subprocess
import sys

import mutation_equivalent  # pylint: disable=import-error

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORK = os.path.join(ROOT, ".build", "mutation")
COLLECTION = os.path.join("ansible_collections", "clusterops", "commcheck")
CORE = "plugins/module_utils"
# what a run reported, kept in WORK for the next --survivors or --report-only (mutmut's record of a --survivors run
# has only the mutants it ran again)
STATUSES = "statuses.json"
# what counts as killed: a timeout is a mutant that made a test hang (and --survivors would wait for it again)
KILLED = ("killed", "caught by type check", "timeout")

# Each file of the core under mutation, with the unit tests that cover it. mutmut runs, for each
# mutant, only those of these tests that call the mutated function (it records which do first).
TARGETS = {
    "commands/perftest_cmd.py": ["test_perftest_cmd.py"],
    "discovery/gid.py": ["test_gid.py", "test_rdma_discovery.py", "test_endpoint.py"],
    "discovery/endpoint.py": ["test_endpoint.py", "test_perftest_cmd.py"],
    "verdicts/thresholds.py": ["test_thresholds.py", "test_thresholds_parts.py", "test_good_pairs.py"],
    "verdicts/good_pairs.py": ["test_good_pairs.py"],
    "verdicts/culprits.py": ["test_culprits.py", "test_culprits_order.py"],
    "parsers/perftest_result.py": ["test_parse_perftest.py", "test_parse_unread_and_pasted.py", "test_perftest_result.py"],
    "verdicts/stats.py": ["test_stats.py"],
    "planning/schedule.py": ["test_schedule.py", "test_schedule_rails.py", "test_pair_analysis.py", "test_retest.py",
                             "test_roce_consistency.py", "test_gpudirect_plan.py"],
    "planning/bisection.py": ["test_bisection.py", "test_bisection_parts.py", "test_collective_steps.py",
                              "test_collective_retest.py"],
    "verdicts/retest.py": ["test_retest.py", "test_retest_parts.py", "test_judge_retests.py",
                           "test_late_rail_retested.py", "test_good_pairs.py", "test_retest_design.py",
                           "test_collective_retest.py"],
    "parsers/parse_nccl_tests.py": ["test_parse_nccl_tests.py", "test_parse_nccl_tests_parts.py", "test_nccl_parts.py",
                                    "test_nccl_real_device_capture.py", "test_nccl_real_device_failures.py"],
    "verdicts/collective_retest.py": ["test_collective_retest.py", "test_collective_retest_parts.py",
                                      "test_collective_ib_loopback.py", "test_collective_slices.py"],
    "parsers/parse_iperf3.py": ["test_parse_iperf3.py", "test_parse_iperf3_parts.py", "test_parse_rdma_tools.py",
                                "test_parse_unread_and_pasted.py", "test_real_outputs_sweep2.py",
                                "test_real_outputs_sweep5.py", "test_real_outputs_sweep7.py",
                                "test_real_outputs_sweep9.py"],
    "parsers/nccl_table.py": ["test_nccl_table_parts.py", "test_parse_nccl_tests.py", "test_parse_nccl_tests_parts.py",
                              "test_nccl_parts.py", "test_nccl_real_device_capture.py",
                              "test_nccl_real_device_failures.py", "test_real_outputs_sweep.py",
                              "test_real_outputs_sweep3.py", "test_real_outputs_sweep6.py",
                              "test_real_outputs_sweep10.py"],
    "verdicts/baseline.py": ["test_baseline.py", "test_baseline_exact.py", "test_history.py",
                             "test_history_known_lines.py", "test_shared_regressions.py", "test_thresholds.py",
                             "test_thresholds_parts.py", "test_report_mesh_lines.py", "test_report_mesh_passes.py",
                             "test_report_mesh_speed.py", "test_report_consumers.py", "test_report_render.py",
                             "test_report_prometheus.py", "test_record_flow.py"],
    "verdicts/localization_fleet.py": ["test_fleet_components.py", "test_localization.py", "test_fault_scenarios.py",
                                       "test_fault_scenarios_hidden.py", "test_culprits.py", "test_culprits_order.py",
                                       "test_loopback.py", "test_side_outcome.py"],
}
# Tests of those files that start processes or draw hundreds of examples, for what other modules do (the side
# runner, the real perftest binaries, ansible-playbook, the shell-metacharacter property): seconds each, which
# every surviving mutant of a function they call would pay again. make unit runs them.
SLOW_ELSEWHERE = (
    "test_perftest_cmd.py::test_no_shell_metacharacter_reaches_an_argv",
    "test_perftest_cmd.py::test_run_sides_client_retries_until_server_listens",
    "test_perftest_cmd.py::test_run_sides_client_gives_up_at_deadline",
    "test_perftest_cmd.py::test_run_sides_retry_limit",
    "test_perftest_cmd.py::test_run_sides_server_stopped_at_deadline_and_steps_in_order",
    "test_perftest_cmd.py::test_run_sides_stops_when_the_controller_goes_away",
    "test_perftest_cmd.py::test_run_sides_missing_binary",
    "test_perftest_cmd.py::test_controller_gone_only_for_a_pipe_nobody_reads",
    "test_perftest_cmd.py::test_the_installed_tool_reads_the_table_as_we_do",
    "test_parse_perftest.py::test_filter_in_a_real_ansible_run",
    "test_rdma_discovery.py::test_collect_on_this_machine",
    "test_parse_rdma_tools.py::test_filters_in_a_playbook",
    "test_parse_iperf3.py::test_live_iperf3_on_loopback",
)

# Survivors that no test can kill because the mutant behaves as the original for every input:
# (file, function, a regular expression the mutated line matches, why).
EQUIVALENT = (
    ("parsers/perftest_result.py", "_column_spec", r'"(XXfloatXX|FLOAT)"',
     "a column kind other than int, bw and time is read as a plain number: the name 'float' is compared nowhere"),
    ("parsers/perftest_result.py", "_row_plan", r'or "USEC"\)\.lower\(\)',
     "the default unit is lower-cased right after: 'USEC'.lower() is 'usec'"),
    ("parsers/perftest_result.py", "_row_plan", r'_BW_UNITS\.get\(\(result\["bw_unit"\] or "XXXX"\)\.lower\(\)\)',
     "no unit and an unknown unit both have no factor (_BW_UNITS has neither '' nor 'xxxx')"),
    ("commands/perftest_cmd.py", "_counter_list", r"absolute=None\)$",
     "option_rules.check_path treats absolute=None and absolute=False alike (both only 'if absolute')"),
    ("commands/perftest_cmd.py", "side_verdict", r'or "XXXX"\)',
     "an empty stdout or stderr padded with XXXX: no pattern side_verdict looks for (unrecognized option, "
     "remote address:, #bytes) can match the padding, which stays a line of its own"),
    ("commands/perftest_cmd.py", "_length_args", r'^argv = \["-s", str\(p\["size"\]\)\]$',
     "-a and -s exclude each other: when -s is added the list is still empty, so '=' and '+=' give the same"),
    ("commands/perftest_cmd.py", "_transfer_args", r'^argv = \["-q", str\(p\["qps"\]\)\]$',
     "-q is the first argument _transfer_args adds: the list is still empty, so '=' and '+=' give the same"),
    ("commands/perftest_cmd.py", "_run_options", r'"report_gbits": p\.get\("report_gbits", ?(None|)\) is not False',
     "a missing report_gbits read as None is not False, as the default True is not: the same answer"),
    ("commands/perftest_cmd.py", "_verdict", r'if \(errors\) or True else None',
     "without errors 'first' is {}: its cause, message and fix are None either way"),
    ("discovery/gid.py", "subnet_error", r"strict=None\)$",
     "ipaddress.ip_network only tests 'if strict': None is False"),
    ("discovery/gid.py", "_in_subnet", r"strict=None\)$",
     "ipaddress.ip_network only tests 'if strict': None is False"),
    ("discovery/gid.py", "normalize_gid", r'^if getattr\(addr, "scope_id", \) is not None:$',
     "every IPv6Address has scope_id from Python 3.9 on (the tests' Python); the default keeps Python 3.8 targets, "
     "which refuse a scoped address before, from an AttributeError"),
    ("discovery/gid.py", "normalize_gid", r"^text = text\.strip\(\)\.upper\(\)$",
     "an upper-case GID misses the kernel pattern, but IPv6Address reads it and its exploded form is lower case: "
     "the same answer"),
    ("discovery/gid.py", "select_gid", r'^addresses = \[str\(a\)\.split\("/", ?(2|)\)\[0\]',
     "the text before the first '/' is the same however many splits are allowed"),
    ("discovery/gid.py", "select_gid", r'^addresses = \[str\(a\)\.rsplit\("/", 1\)\[0\]',
     "the same for every address ip, sysfs and the facts hold (ADDRESS or ADDRESS/PREFIX: at most one '/'); "
     "only a malformed text with two '/' would differ"),
    ("discovery/endpoint.py", "gid_index_from_facts", r'or "XXXX"\)\.lower\(\) == "infiniband"',
     "a port without a link layer reads as 'xxxx' instead of '': neither is 'infiniband'"),
    ("commands/perftest_cmd.py", "side_verdict", r"if _UNRECOGNIZED_RE\.search\(ln\)\), \)$",
     "the branch runs only when the pattern matched the text, and it has no newline: some line matches, so next() "
     "never needs its default"),
    ("parsers/perftest_result.py", "_empty_result", r'^"ok": True,$',
     "finish() sets ok from the rows and errors on every result before it is returned"),
    ("parsers/perftest_result.py", "_complete_rows", r"setdefault\(key, \)$",
     "setdefault's default is None: setdefault(key) and setdefault(key, None) are the same call"),
    ("parsers/perftest_result.py", "_without_note", r"min\(len\(tokens\), width \+ 4\)\):$",
     "a row cut after 3 more values still has more than width + 2 tokens, which parse_row refuses as it refuses "
     "the uncut row"),
    ("parsers/perftest_result.py", "parse_row", r'lstrip\("XX\+-XX"\)',
     "the token is lower-cased before: it has no 'X' for the padding to strip"),
    ("parsers/perftest_result.py", "finish_row", r"^break$",
     "parse_row fills the columns in order: the keys a row lacks are the last ones, so stopping at the first "
     "missing one skips the same keys as skipping each"),
    ("parsers/perftest_result.py", "_fill_from_command", r'(\["command"\]|state\.program) or "XXXX"',
     "no command (or program) read as 'XXXX' instead of '': neither matches an ib_* name or the -b flag"),
    ("parsers/perftest_result.py", "_column_spec", r'"(XXtpsXX|TPS)": \("tps", "float"\)',
     "a column named tps that the table misses is keyed by its name, snake_case('tps'): 'tps', a float, the same"),
    ("parsers/perftest_result.py", "_column_spec", r'(" PCT "|"NUM "|replace\("%", "PCT"\))',
     "snake_case lower-cases: 'PCT' and 'NUM' give the keys 'pct' and 'num' give"),
    ("parsers/perftest_result.py", "_column_spec", r're\.sub\(r"XX\\s\+XX", " ", ',
     "a column name is header words joined by single spaces (_split_columns): no run of white space to fold"),
    ("parsers/perftest_result.py", "_explain_zero_gid", r'or "XXXX"\)\.lower\(\) != "ethernet"',
     "no link type read as 'xxxx' instead of '': neither is ethernet"),
    ("parsers/perftest_result.py", "State.__init__",
     r'^self\.(in_header|in_usage|seen_row_header|read_warning) = None|^self\.(columns|plan|plan_signature) = ""',
     "each is only read for its truth (None and False, None and '' alike), or, plan, only when plan_signature "
     "equals a tuple, which neither None nor '' does"),
    ("parsers/perftest_result.py", "_is_zero_gid", r'address\.get\("gid"\) or "XXXX"$',
     "an address without a GID is no all-zero GID whether it reads as '' or as 'XXXX'"),
    ("verdicts/culprits.py", "_explains", r'in \("nic", "link", "(XXhostXX|HOST)"\)',
     "a host culprit is keyed by its host: another one of the same host was merged into it before any "
     "explaining, so a host never explains a host"),
    ("verdicts/culprits.py", "_ends", r'if \(item\["component"\] == "link"\) or True else',
     "only host, NIC and link culprits are asked for their ends; a host's or NIC's peer is None, no host's name"),
    ("verdicts/culprits.py", "_from_generic_finding", r'"medium", (None|params\.get\((None|"XXcheckXX"|"CHECK")\)),',
     "a generic finding is one without a check (_finding_source): its check is None whichever way it is read"),
    ("discovery/endpoint.py", "sysfs_gid_entries", r'^(kind|ndev) = read_file\("%s/gid_attrs/(types|ndevs)/%d" % '
     r'\(base, idx\), (None|)\) or ""$',
     "read_file(path, None) or '', read_file(path) or '' and read_file(path, '') or '' are all '' for a missing "
     "file: the transports' readers default to None"),
    ("discovery/endpoint.py", "sysfs_gid_entries", r'^gid = read_file\("%s/gids/%d" % \(base, idx\), \)$',
     "read_file(path) is read_file(path, None): the transports' readers default to None"),
    ("discovery/endpoint.py", "sysfs_gid_entries", r"^misses = 1$",
     "the count of empty slots only ends the table after a GID, and every GID sets it back to 0: where it starts "
     "is never read"),
    ("discovery/endpoint.py", "port_gid_index", r'^return select_gid\(gids, (None, |)netdev=netdev',
     "select_gid takes a missing link layer (None, or its default 'Ethernet') as RoCE: the same choice"),
    ("verdicts/stats.py", "spread", r"max\(mad\(values, (None|)\), ",
     "mad without a center takes the values' median, which med already is: the same MAD"),
    ("verdicts/stats.py", "spread_bounds", r"^nearest = 0\.0 if med_low (< 0 <=|<= 0 <) med_high else",
     "the two differ only when a bound is exactly 0, and then min(abs(med_low), abs(med_high)) is 0 too"),
    ("verdicts/culprits.py", "_key", r'^return \("(XX(host|nic|link|fabric|config)XX|HOST|NIC|LINK|FABRIC|CONFIG)", ',
     "the tag only keeps the components' keys apart, and their shapes already do (host and fabric: a name and a "
     "rail number; nic and link: a host and a host pair; config: four parts): any spelling keeps them apart"),
    ("verdicts/culprits.py", "measured_rails", r'str\(rec\.get\("kind"\) or "XXXX"\)\.endswith',
     "a record without a kind reads as 'XXXX' instead of '': neither ends in _bw or _lat"),
    ("verdicts/culprits.py", "_pair_kinds_to_localize", r'^kind = rec\.get\("kind"\) or "XXXX"$',
     "a record without a kind reads as 'XXXX' instead of '': neither ends in _bw or _lat"),
    ("verdicts/culprits.py", "sort_key", r"-2 if item\[\"rail\"\] is None else item\[\"rail\"\]\)$",
     "any number below 0 puts a culprit without a rail before rail 0, the first"),
    ("verdicts/culprits.py", "roce_config_culprits", r"key=lambda item: -2 if item\[0\] is None else item\[0\]\)",
     "any number below 0 puts the settings without a rail before rail 0, the first"),
    ("verdicts/culprits.py", "_explainer", r'^(if other is item and \(|if other is item or \(other\["verdict"\] != "fail" and '
     r'item\["verdict"\] == "(XXfailXX|FAIL)"\):$|break$)',
     "merge, the only caller, asks in _explaining_order, failing culprits first: when a failing one is asked about "
     "every kept one fails too, and an item is never among the kept, so the skip is never taken"),
    ("verdicts/culprits.py", "_explaining_order", r'"fabric": 7\}\[comp\]$',
     "fabric was already the last rank (6): 7 keeps it last"),
    ("verdicts/culprits.py", "_explaining_order", r"^rank = 6$",
     "a fabric culprit explains nothing and nothing explains it: a link measured without rails ranked with it "
     "is asked about the same kept culprits"),
    ("verdicts/culprits.py", "_rail", r'^return None if (\(value is None or value == ""\) and False|value is None and value == ""|'
     r'value is None or value == "XXXX") else int\(value\)$',
     "int('') and int(None) raise ValueError and TypeError, which the except answers with None, as the test does"),
    ("verdicts/culprits.py", "with_discovery_notes", r"sorted\(notes\.items\(\), ?(key=None)?\)$",
     "the notes' keys are (host, device) pairs of names: as tuples they sort as their text does"),
    ("verdicts/culprits.py", "with_discovery_notes", r'if \(item\["device"\]\) or True else \[\]$',
     "every note's key has a device (_note_label needs one): a culprit without one finds none either way"),
    ("planning/schedule.py", "pack_pairs", r"^if pairs is None and isinstance\(pairs, \(str, bytes\)\) or not isinstance",
     "None, text and bytes are none of them a list or a tuple: the last test alone decides"),
    ("planning/schedule.py", "_is_active", r'^text = str\(state or "XXXX"\)\.upper\(\)$',
     "a port without a state reads as 'XXXX' instead of '': neither is ACTIVE"),
    ("planning/schedule.py", "_by_number", r'^out\[int\(rail\.get\("rail", (None|)\)\) if rail\.get\("rail"\) is not None else',
     "the default is read only when the rail has a number, so it is never used"),
    ("planning/schedule.py", "_by_number", r'if \(rail\.get\("rail"\) is not None\) or True else num\]',
     "a rail without a number reads as rail.get('rail', num): its place, as the else branch gives"),
    ("planning/schedule.py", "_parse_device_spec", r"^def _parse_device_spec\(spec, default_port=2\):$",
     "select_rails, the only caller, always passes default_port"),
    ("planning/schedule.py", "_parse_device_spec", r'^out\.pop\((None|"XXib_portXX"|"IB_PORT"), None\)$',
     "an ib_port left in a device's spec is read by nobody: _rail takes only gid_index, rate_gbps, address, netdev "
     "and link_layer from it"),
    ("planning/schedule.py", "_parse_device_spec", r'text\.(r?split\(":", ?(1|2|)\))',
     "the branch is taken only for a text with exactly one ':', which every split of it cuts the same"),
    ("planning/schedule.py", "_port_address", r'^return str\(value\)\.(split\("/", ?(2|)\)|rsplit\("/", 1\))\[0\]$',
     "the text before the first '/' of an address or ADDRESS/PREFIX (at most one '/'); only a malformed text with "
     "two would differ under rsplit"),
    ("planning/schedule.py", "_port_address", r'str\(gid\.get\("type", "(XXv2XX|V2)"\)\)\.lower\(\)',
     "a GID without a type reads as 'xxv2xx' or 'v2' once lower-cased: both hold 'v2', as the default does"),
    ("planning/schedule.py", "like_port_rates", r"^out\[key\] = max\(out\.get\(key, 1\), rate\)$",
     "a start of 1 instead of 0 differs only for a link below 1 Gb/s, and no RDMA link is (InfiniBand SDR 1x, the "
     "slowest, is 2.5)"),
    ("planning/schedule.py", "plan_rounds", r"^window = min\(int\(port_window or PORT_WINDOW\), slots, (\)|max\(total, 2\)\))$",
     "steps run from 0 to total - 1: a window of at least total (or of 2 for one step) gives every step its own "
     "number either way"),
    ("planning/schedule.py", "round_plan", r'else \[\{"(XXrailXX|RAIL)": 0\}\]\)$',
     "a host without rails gets one anonymous rail: without a 'rail' key it is numbered by its place, 0, the same"),
    ("planning/schedule.py", "aligned_rails", r'^slot\[rail\["device"\]\] = slot\.get\(rail\["device"\], (1\) \+ 1|0\) \+ 2)$',
     "every count shifted by one or doubled: the name most hosts have at a place is the same"),
    ("planning/schedule.py", "pair_rate", r'if \(rail\.get\("model"\)\) or True else None$',
     "like_port_rates, which makes the map pair_rate is given, keeps no port without a model: the look-up finds "
     "nothing, as skipping it does"),
    ("verdicts/thresholds.py", "evaluate", r"^result\[\"history\"\] = _history_check\(rec, None, ",
     "the metric's name is read only to look up a threshold of its own, and evaluate's RegressionRule has none"),
    ("verdicts/thresholds.py", "_history_check", r"^verdict = _judge_history\(rule, None, ",
     "the metric's name is read only to look up a threshold of its own, and evaluate's RegressionRule has none"),
    ("verdicts/thresholds.py", "_hosts_below", r'^verdict = _judge_history\(rule, (None|"XXbw_gbpsXX"|"BW_GBPS"), ',
     "the metric's name is read only to look up a threshold of its own, and evaluate's RegressionRule has none"),
    ("verdicts/thresholds.py", "_judge_history", r'^return rule\.judge\((None, value, base\["values"\], HIGHER|name, value, base\["values"\], ?(None|)\)$)',
     "evaluate's RegressionRule has no threshold of a metric's own, so the name is read only for a direction when "
     "none is given, and the names _metric gives say the one given (_gbps and _gbs higher, _us lower)"),
    ("verdicts/thresholds.py", "evaluate", r"^_late_against_other_rails\(rec, value, None, ",
     "a record's direction follows from its kind and metric, both in its group: no bandwidth record shares a group "
     "(but its rail) with the latency records other_rails_best keeps, so its lookup finds nothing either way"),
    ("verdicts/thresholds.py", "_late_against_other_rails", r"if \(not higher\) or True else None$",
     "a record's direction follows from its kind and metric, both in its group: no bandwidth record shares a group "
     "(but its rail) with the latency records other_rails_best keeps, so its lookup finds nothing either way"),
    ("verdicts/thresholds.py", "_late_against_other_rails", r"^if _far_from_best\(value, best, None\):$",
     "_far_from_best only asks 'if higher': None is False"),
    ("verdicts/thresholds.py", "other_rails_best", r"best_quarter\(values, None\)",
     "best_quarter only sorts with reverse=bool(higher): None is False"),
    ("verdicts/thresholds.py", "_hardware_check", r'op = params\.get\("op"\) or \("TCP" if ',
     "efficiency_for looks ops up in lower case: TCP is tcp"),
    ("verdicts/thresholds.py", "_metric", r'str\(rec\.get\("kind", ?(None|"XXXX"|)\)\)\.endswith\("_lat"\)',
     "a record without a kind reads as 'None' or 'XXXX' instead of '': none of them ends in _lat"),
    ("verdicts/thresholds.py", "_efficiency_table", r'^override\["DEFAULT"\] = number$',
     "every key of the override is lower-cased into the table: DEFAULT is default"),
    ("verdicts/thresholds.py", "_record_trip", r'not in \(rec\.get\("cause"\) or "XXXX"\):$',
     "a record without a cause reads as 'XXXX' instead of '': neither says thresholds tripped"),
)


EQUIVALENT += mutation_equivalent.EQUIVALENT


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    parser.add_argument("files", nargs="*", help="files under %s (default: all of TARGETS)" % CORE)
    parser.add_argument("--show", action="store_true", help="print each survivor's diff")
    parser.add_argument("--work", default=WORK, help="the directory the run works in (default %(default)s)")
    parser.add_argument("--survivors", action="store_true",
                        help="run again only what the last run in --work left alive (after new tests): its "
                             "survivors, the functions no test reached, and whole any file changed since")
    parser.add_argument("--report-only", action="store_true", help="print the last run's results again")
    parser.add_argument("--max-children", type=int, default=2, help="mutants tested at once (default 2)")
    args = parser.parse_args(argv)
    unknown = [f for f in args.files if f not in TARGETS]
    if unknown:
        parser.error("not a target: %s (targets: %s)" % (", ".join(unknown), ", ".join(sorted(TARGETS))))
    args.files = args.files or sorted(TARGETS)
    return args


def tree_files():
    """The working tree's files as git sees them: tracked, and untracked but not ignored."""
    out = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, check=True,
                         stdout=subprocess.PIPE).stdout
    return [name for name in out.decode("utf-8").split("\0") if name]


def make_workspace(files):
    """A fresh copy of the tree under WORK and mutmut's configuration for ``files``; returns WORK."""
    if os.path.isdir(WORK):
        shutil.rmtree(WORK)
    dest = os.path.join(WORK, COLLECTION)
    for name in tree_files():
        source = os.path.join(ROOT, name)
        if not os.path.isfile(source):
            continue        # deleted in the working tree, or a submodule
        target = os.path.join(dest, name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copy2(source, target)
    tests = sorted(set(t for f in files for t in TARGETS[f] if os.path.isfile(os.path.join(ROOT, "tests", "unit", t))))
    mutate = ["%s/%s/%s" % (COLLECTION, CORE, f) for f in files]
    selection = ["%s/tests/unit/%s" % (COLLECTION, t) for t in tests]
    with open(os.path.join(WORK, "setup.cfg"), "w") as handle:
        handle.write("[mutmut]\nsource_paths = %s\n" % COLLECTION.split(os.sep)[0])
        handle.write("only_mutate =\n%s\n" % "".join("    %s\n" % m for m in mutate))
        handle.write("pytest_add_cli_args_test_selection =\n%s\n" % "".join("    %s\n" % s for s in selection))
        handle.write("pytest_add_cli_args =\n    -p\n    no:xdist\n    -p\n    no:cacheprovider\n")
        handle.write("".join("    --deselect\n    %s/tests/unit/%s\n" % (COLLECTION, test) for test in SLOW_ELSEWHERE))
        # every run starts from a fresh copy: nothing cached to invalidate, and no git outside the copy to ask
        handle.write("use_git_change_detection = false\n")
    return WORK


def mutmut(*args, **kwargs):
    env = dict(os.environ)
    # the copy's tests make their own collection link; one set for the real tree would be used instead
    env.pop("ANSIBLE_COLLECTIONS_PATH", None)
    env.setdefault("CI", "1")     # Hypothesis derandomized, as in CI: a mutant's verdict is reproducible
    command = [os.path.join(os.path.dirname(sys.executable), "mutmut")] + list(args)
    return subprocess.run(command, cwd=WORK, env=env, check=False, universal_newlines=True, **kwargs)


def collect_results():
    """(``--collect-results``, run by :func:`results` in WORK with mutmut importable) print every mutant of the
    last run as JSON: {name: [status, diff of a survivor]}."""
    from mutmut.mutation.diff_apply import get_diff_for_mutant  # pylint: disable=import-outside-toplevel,import-error
    from mutmut.mutation.data import SourceFileMutationData  # pylint: disable=import-outside-toplevel,import-error
    from mutmut.stats import status_by_exit_code  # pylint: disable=import-outside-toplevel,import-error
    from mutmut.utils.file_utils import walk_mutatable_files  # pylint: disable=import-outside-toplevel,import-error
    found = {}
    for path in walk_mutatable_files():
        data = SourceFileMutationData(path=path)
        data.load()
        for name, code in data.exit_code_by_key.items():
            status = status_by_exit_code[code]
            # a diff is slow to make (the file parsed again): only for what the report shows a line of
            found[name] = [status, get_diff_for_mutant(name, path=path) if status not in ("killed", "not checked")
                           else ""]
    print(json.dumps(found))


def results():
    """{mutant name: (status, diff)} of every mutant of the last run."""
    env = dict(os.environ, PYTHONPATH="")
    out = subprocess.run([sys.executable, os.path.abspath(__file__), "--collect-results"], cwd=WORK, env=env,
                         check=True, stdout=subprocess.PIPE, universal_newlines=True).stdout
    return dict((name, tuple(value)) for name, value in json.loads(out).items())


def saved_results():
    """The statuses the last run in WORK reported (STATUSES: a --survivors run's own and those the runs before it
    killed), else mutmut's own record, which holds only what that run itself ran."""
    path = os.path.join(WORK, STATUSES)
    if not os.path.isfile(path):
        return results()
    with open(path) as handle:
        return dict((name, tuple(value)) for name, value in json.load(handle).items())


def file_of(name):
    """'discovery/gid.py' of a mutant name (module.function__mutmut_N)."""
    module = name.split("__mutmut_")[0].rsplit(".", 1)[0]
    return module.split(".module_utils.", 1)[1].replace(".", "/") + ".py"


def function_of(name):
    """'select_gid' or 'Endpoint.from_side' of a mutant name."""
    mangled = name.split("__mutmut_")[0].rsplit(".", 1)[1]
    return mangled[2:] if mangled.startswith("x_") else mangled.replace("x\u01c1", "", 1).replace("\u01c1", ".")


def mutated_lines(diff):
    """The lines a mutant's diff adds, stripped, joined by ' / ' (what EQUIVALENT is keyed by)."""
    return " / ".join(line[1:].strip() for line in diff.splitlines() if line.startswith("+") and
                      not line.startswith("+++"))


def equivalent(name, function, line):
    """The reason a survivor is an equivalent mutant (EQUIVALENT), or None."""
    for where, which, pattern, why in EQUIVALENT:
        if (where, which) == (name, function) and re.search(pattern, line):
            return why
    return None


def report(statuses, files, show):
    """Print the table and the unexplained survivors; return how many mutants need a test. A timeout counts as
    killed: the mutant made a test hang, and mutmut stopped it."""
    rows = dict((f, {"mutants": 0, "killed": 0, "survived": 0, "equivalent": 0, "other": 0}) for f in files)
    unexplained = []
    for name, (status, diff) in sorted(statuses.items()):
        row = rows.get(file_of(name))
        if row is None:
            continue
        row["mutants"] += 1
        if status in KILLED:
            row["killed"] += 1
            continue
        function, line = function_of(name), mutated_lines(diff)
        if status == "survived" and equivalent(file_of(name), function, line):
            row["equivalent"] += 1
            continue
        row["survived" if status == "survived" else "other"] += 1
        unexplained.append((name, status, function, line, diff))
    print("%-28s %8s %8s %10s %9s %7s" % ("file", "mutants", "killed", "equivalent", "survived", "other"))
    for name in files:
        row = rows[name]
        print("%-28s %8d %8d %10d %9d %7d" % (
            name, row["mutants"], row["killed"], row["equivalent"], row["survived"], row["other"]))
    print()
    for name, status, function, line, diff in unexplained:
        print("%s %s %s %s: %s" % (status, file_of(name), function, name.rsplit(".", 1)[1], line))
        if show:
            print(diff + "\n")
    return len(unexplained)


def changed_since(name):
    """Whether the product file ``name`` (under CORE) differs from its copy in WORK (the earlier run's)."""
    paths = [os.path.join(ROOT, CORE, name), os.path.join(WORK, COLLECTION, CORE, name)]
    contents = []
    for path in paths:
        if not os.path.isfile(path):
            return True
        with open(path, "rb") as handle:
            contents.append(handle.read())
    return contents[0] != contents[1]


def rerun_patterns(earlier, files, changed):
    """mutmut names (fnmatch patterns) of what to run again: every mutant of a file changed since, every
    mutant of a function no test reached (new tests may reach it), and each other mutant that was not killed."""
    patterns = set()
    for name, (status, _diff) in earlier.items():
        if file_of(name) not in files or status in KILLED:
            continue
        module, function = name.split("__mutmut_")[0].rsplit(".", 1)
        if file_of(name) in changed:
            patterns.add(module + ".*")
        elif status == "no tests":
            patterns.add("%s.%s__mutmut_*" % (module, function))
        else:
            patterns.add(name)
    return sorted(patterns)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv == ["--collect-results"]:
        return collect_results()
    args = parse_args(argv)
    global WORK  # pylint: disable=global-statement
    WORK = os.path.abspath(args.work)
    if not WORK.startswith(os.path.join(ROOT, ".build") + os.sep):
        print("--work must be a directory under %s" % os.path.join(ROOT, ".build"))
        return 2
    earlier, again, changed = {}, [], set()
    if args.survivors:
        earlier = saved_results() if os.path.isdir(os.path.join(WORK, "mutants")) else {}
        changed = set(name for name in args.files if changed_since(name))
        again = rerun_patterns(earlier, args.files, changed)
        if not again:
            print("no earlier run in %s with a mutant of %s left to run again" % (WORK, ", ".join(args.files)))
            return 2
    if not args.report_only:
        make_workspace(args.files)
        run = mutmut("run", "--max-children", str(args.max_children), *again)
        if run.returncode != 0:
            print("mutmut run failed (exit %d); its files are in %s" % (run.returncode, WORK))
            return run.returncode
    statuses = saved_results() if args.report_only else results()
    # --survivors: the mutants killed last time stay killed (tests were added, none taken away), but in a file
    # that changed since, a name may be another mutant now: that file ran whole
    statuses.update((name, value) for name, value in earlier.items()
                    if value[0] in KILLED and name in statuses and file_of(name) not in changed)
    with open(os.path.join(WORK, STATUSES), "w") as handle:
        json.dump(statuses, handle)
    left = report(statuses, args.files, args.show)
    print("\n%d mutant(s) need a test or an entry in EQUIVALENT (tools/mutation.py)" % left if left else
          "\nevery mutant was killed or is equivalent")
    return 1 if left else 0


if __name__ == "__main__":
    sys.exit(main())
