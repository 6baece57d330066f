# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Property tests: the RDMA tool and iperf3 parsers never raise and keep their result types.

Inputs are the real corpus outputs mutated the way real captures get
damaged (lines lost or repeated, characters flipped, output cut off,
launcher prefixes and prompts, tabs and spaces swapped, CRLF, junk lines),
plus arbitrary text and bytes. Every example is fed to every parser.

Each public parser catches its own exceptions and reports them as an
``errors`` entry with code ``parser_error``; these tests fail on such an
entry, so a parser bug cannot hide behind that safety net.

Example counts in the full tier: 1000 mutated corpus + 500 arbitrary text +
300 arbitrary bytes + 400 mutated iperf3 JSON = 2200 examples (each run on all
parsers); the fast tier runs a tenth of each (see property_budget.py).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json
import os

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_ibdev2netdev import (
    parse_ibdev2netdev,
    parse_ibdev2netdev_full,
)
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_ibstat import (
    parse_ibstat,
    parse_ibstat_full,
    parse_ibstatus_full,
)
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_ibv_devinfo import (
    parse_ibv_devices_full,
    parse_ibv_devinfo,
    parse_ibv_devinfo_full,
)
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_iperf3 import parse_iperf3
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_rdma_link import (
    parse_rdma_link,
    parse_rdma_link_full,
    parse_rdma_system,
)
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_show_gids import (
    parse_show_gids,
    parse_show_gids_full,
)

from property_budget import example_budget

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURES = os.path.join(REPO, "tests", "fixtures")


def _load(folder):
    path = os.path.join(FIXTURES, folder)
    texts = []
    for name in sorted(os.listdir(path)):
        if name.endswith((".txt", ".json")):
            with open(os.path.join(path, name), "rb") as handle:
                texts.append(handle.read().decode("utf-8"))
    return texts


RDMA_TEXTS = _load(os.path.join("corpus", "rdma_tools"))
IPERF_TEXTS = _load("iperf3")
ALL_TEXTS = RDMA_TEXTS + IPERF_TEXTS
assert len(RDMA_TEXTS) >= 27 and len(IPERF_TEXTS) >= 10

STR_OR_NONE = (str, type(None))
INT_OR_NONE = (int, type(None))
NUMBER_OR_NONE = (int, float, type(None))


def _no_parser_error(errors):
    assert isinstance(errors, list)
    for entry in errors:
        assert isinstance(entry, dict)
        assert entry["code"] != "parser_error", entry["message"]
        for key in ("code", "message", "cause", "fix"):
            assert isinstance(entry[key], str)


def _not_bool_int(value):
    return isinstance(value, INT_OR_NONE) and not isinstance(value, bool)


def check_ibdev2netdev(text):
    full = parse_ibdev2netdev_full(text)
    _no_parser_error(full["errors"])
    assert parse_ibdev2netdev(text) == full["devices"]
    for item in full["devices"]:
        assert isinstance(item["device"], str) and item["device"]
        assert isinstance(item["port"], int)
        assert item["state"] in ("Up", "Down", None)
        for key in ("netdev", "pci", "hca_type", "part_id", "product", "description", "fw", "port_state"):
            assert isinstance(item[key], STR_OR_NONE), key


def _check_ca_list(cas, ibstatus=False):
    assert isinstance(cas, list)
    for ca in cas:
        assert isinstance(ca["name"], str)
        assert isinstance(ca["ports"], list)
        if not ibstatus:
            assert _not_bool_int(ca["num_ports"])
            for key in ("ca_type", "fw_version", "hw_version", "node_guid", "sys_image_guid"):
                assert isinstance(ca[key], STR_OR_NONE), key
        for port in ca["ports"]:
            assert _not_bool_int(port["port"])
            assert isinstance(port["rate"], NUMBER_OR_NONE)
            for key in ("base_lid", "lmc", "sm_lid"):
                assert _not_bool_int(port[key]), key
            for key in ("state", "phys_state", "capability_mask", "port_guid", "link_layer"):
                assert isinstance(port[key], STR_OR_NONE), key


def check_ibstat(text):
    full = parse_ibstat_full(text)
    _no_parser_error(full["errors"])
    assert parse_ibstat(text) == full["cas"]
    _check_ca_list(full["cas"], ibstatus=full["source"] == "ibstatus")
    status = parse_ibstatus_full(text)
    _no_parser_error(status["errors"])
    _check_ca_list(status["cas"], ibstatus=True)


def check_ibv_devinfo(text):
    full = parse_ibv_devinfo_full(text)
    _no_parser_error(full["errors"])
    _no_parser_error(full["warnings"])
    assert parse_ibv_devinfo(text) == full["devices"]
    for device in full["devices"]:
        assert isinstance(device["hca_id"], str)
        for key in ("transport", "fw_ver", "node_guid", "sys_image_guid", "vendor_id", "hw_ver", "board_id"):
            assert isinstance(device[key], STR_OR_NONE), key
        assert _not_bool_int(device["vendor_part_id"]) and _not_bool_int(device["phys_port_cnt"])
        for port in device["ports"]:
            assert _not_bool_int(port["port"])
            for key in ("max_mtu", "active_mtu", "sm_lid", "port_lid", "port_lmc"):
                assert _not_bool_int(port[key]), key
            assert isinstance(port["state"], STR_OR_NONE) and isinstance(port["link_layer"], STR_OR_NONE)
            for gid in port["gids"]:
                assert isinstance(gid["index"], int) and isinstance(gid["gid"], str)
                assert gid["version"] in ("v1", "v2", None)
                assert isinstance(gid["ipv4"], STR_OR_NONE)
    devices = parse_ibv_devices_full(text)
    _no_parser_error(devices["errors"])
    for item in devices["devices"]:
        assert isinstance(item["device"], str) and isinstance(item["node_guid"], STR_OR_NONE)


def check_rdma_link(text):
    full = parse_rdma_link_full(text)
    _no_parser_error(full["errors"])
    assert parse_rdma_link(text) == full["links"]
    for link in full["links"]:
        assert isinstance(link["device"], str) and link["device"]
        assert isinstance(link["port"], int) and not isinstance(link["port"], bool)
        for key in ("state", "physical_state", "netdev"):
            assert isinstance(link[key], STR_OR_NONE), key
        for key in ("index", "lid", "sm_lid", "lmc", "netdev_index"):
            assert _not_bool_int(link.get(key)), key
    system = parse_rdma_system(text)
    _no_parser_error(system["errors"])
    assert isinstance(system["netns_mode"], STR_OR_NONE)
    assert system["copy_on_fork"] in (True, False, None)


def check_show_gids(text):
    full = parse_show_gids_full(text)
    _no_parser_error(full["errors"])
    assert parse_show_gids(text) == full["gids"]
    assert _not_bool_int(full["n_gids_found"])
    for gid in full["gids"]:
        assert isinstance(gid["device"], str) and gid["device"]
        assert isinstance(gid["port"], int) and isinstance(gid["gid_index"], int)
        assert isinstance(gid["gid"], str) and gid["gid"]
        assert isinstance(gid["ipv4"], STR_OR_NONE) and isinstance(gid["netdev"], STR_OR_NONE)
        assert gid["version"] in ("v1", "v2", None)


def check_iperf3(text):
    result = parse_iperf3(text)
    assert isinstance(result, dict)
    _no_parser_error(result["errors"])
    assert isinstance(result["ok"], bool)
    assert result["ok"] == (not result["errors"] and (result["sent_gbps"] is not None
                                                      or result["received_gbps"] is not None))
    for key in ("sent_gbps", "received_gbps", "duration_s", "jitter_ms", "lost_percent",
                "cpu_host_percent", "cpu_remote_percent"):
        assert isinstance(result[key], (float, int, type(None))) and not isinstance(result[key], bool), key
    for key in ("retransmits", "streams", "lost_packets", "packets", "remote_port", "sent_bytes", "received_bytes"):
        assert _not_bool_int(result[key]), key
    for key in ("protocol", "remote_host", "local_host", "role", "version"):
        assert isinstance(result[key], STR_OR_NONE), key
    assert result["reverse"] in (True, False, None) and result["bidirectional"] in (True, False, None)
    assert all(isinstance(w, str) for w in result["warnings"])
    assert all(isinstance(g, float) for g in result["interval_gbps"])
    assert isinstance(result["bidir_reverse"], (dict, type(None)))


def check_all(text):
    check_ibdev2netdev(text)
    check_ibstat(text)
    check_ibv_devinfo(text)
    check_rdma_link(text)
    check_show_gids(text)
    check_iperf3(text)


# ---- mutations ----------------------------------------------------------------------

PREFIXES = ["[1,0]<stdout>:", "[0] ", "0: ", "node-7: ", "root@gpu1:~# ", "$ ", "\x1b[32m", "  ", "\t"]
JUNK_LINES = [
    "bash: ibstat: command not found",
    "ibpanic: [1] main: stat of IB device 'mlx5_9' failed: No such file or directory",
    "libibverbs: Warning: couldn't open config directory '/etc/libibverbs.d'.",
    "No IB devices found",
    "iperf3: error - unable to connect to server: Connection refused",
    "warning: something odd",
    "n_gids_found=7",
    "CA 'mlx5_x'",
    "Port 9:",
    "hca_id:",
    "port:",
    "GID[  1]: ::ffff:10.0.0.1, RoCE v2",
    "link mlx5_0/ state",
    "0/1: mlx5_0/1:",
    "mlx5_0 port 1 ==>",
    "DEV PORT INDEX GID IPv4 VER DEV",
    "ib_dev net_dev port idx gid type ip link",
    "{", "}", "[", "]", '{"error": "x"', '{"event":"end","data":{}}', '"end": {"sum": {"bits_per_second": "x"}}',
    "Infiniband device 'mlx5_0' port 1 status:",
    "rate: 400 Gb/sec (4X NDR)",
    "state: 4: ACTIVE",
    "netns exclusive copy-on-fork",
]
FLIP_CHARS = list(":()[]{}'\"=<>/,.-_ \t\n0123456789abcdefxX") + ["\u00e9", "\x00", "\r"]

mutation = st.one_of(
    st.tuples(st.just("delete_line"), st.integers(0, 10 ** 6)),
    st.tuples(st.just("duplicate_line"), st.integers(0, 10 ** 6)),
    st.tuples(st.just("flip_char"), st.integers(0, 10 ** 6), st.sampled_from(FLIP_CHARS)),
    st.tuples(st.just("truncate"), st.integers(0, 10 ** 6)),
    st.tuples(st.just("prefix_lines"), st.sampled_from(PREFIXES)),
    st.tuples(st.just("prefix_text"), st.sampled_from(JUNK_LINES + PREFIXES)),
    st.tuples(st.just("insert_line"), st.integers(0, 10 ** 6), st.sampled_from(JUNK_LINES)),
    st.tuples(st.just("tabs_to_spaces"), st.integers(1, 8)),
    st.tuples(st.just("spaces_to_tabs"),),
    st.tuples(st.just("crlf"),),
)


def mutate(text, mutations):
    for op in mutations:
        kind = op[0]
        lines = text.split("\n")
        if kind == "delete_line" and lines:
            del lines[op[1] % len(lines)]
            text = "\n".join(lines)
        elif kind == "duplicate_line" and lines:
            index = op[1] % len(lines)
            lines.insert(index, lines[index])
            text = "\n".join(lines)
        elif kind == "flip_char" and text:
            index = op[1] % len(text)
            text = text[:index] + op[2] + text[index + 1:]
        elif kind == "truncate":
            text = text[:op[1] % (len(text) + 1)]
        elif kind == "prefix_lines":
            text = "\n".join(op[1] + line for line in lines)
        elif kind == "prefix_text":
            text = op[1] + "\n" + text
        elif kind == "insert_line":
            lines.insert(op[1] % (len(lines) + 1), op[2])
            text = "\n".join(lines)
        elif kind == "tabs_to_spaces":
            text = text.replace("\t", " " * op[1])
        elif kind == "spaces_to_tabs":
            text = text.replace("    ", "\t").replace("  ", "\t")
        elif kind == "crlf":
            text = text.replace("\n", "\r\n")
    return text


COMMON = dict(deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])


@example_budget(1000)
def test_mutated_corpus(examples):
    @settings(max_examples=examples, **COMMON)
    @given(base=st.sampled_from(ALL_TEXTS), mutations=st.lists(mutation, min_size=1, max_size=6))
    def mutated_corpus(base, mutations):
        check_all(mutate(base, mutations))
    mutated_corpus()


TEXTY = st.text(
    alphabet=st.one_of(
        st.sampled_from(list("CAPortStateRatemlx_05 \t\n:'()[]{}\"=>-/.,GIDhcaidlinknetdevUpDownv12ff")),
        st.characters(),
    ),
    max_size=600,
)


@example_budget(500)
def test_arbitrary_text(examples):
    @settings(max_examples=examples, **COMMON)
    @given(pieces=st.lists(st.one_of(TEXTY, st.sampled_from(JUNK_LINES)), max_size=12))
    def arbitrary_text(pieces):
        check_all("\n".join(pieces))
    arbitrary_text()


@example_budget(300)
def test_arbitrary_bytes_and_odd_types(examples):
    @settings(max_examples=examples, **COMMON)
    @given(data=st.one_of(st.binary(max_size=800), st.none(), st.lists(st.text(max_size=40), max_size=5)))
    def arbitrary_bytes_and_odd_types(data):
        check_all(data)
    arbitrary_bytes_and_odd_types()


def _json_values():
    scalar = st.one_of(st.none(), st.booleans(), st.integers(-5, 10 ** 12), st.floats(allow_nan=True),
                       st.text(max_size=12))
    return st.recursive(scalar, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                        st.dictionaries(st.text(max_size=8), inner, max_size=3)),
                        max_leaves=8)


IPERF_OBJECTS = [json.loads(text) for text in IPERF_TEXTS]
IPERF_PATHS = [
    ("start",), ("start", "test_start"), ("start", "connecting_to"), ("start", "connected"), ("end",),
    ("end", "sum_sent"), ("end", "sum_received"), ("end", "sum"), ("end", "cpu_utilization_percent"),
    ("end", "sum_sent_bidir_reverse"), ("intervals",), ("error",), ("start", "test_start", "protocol"),
    ("end", "sum_sent", "bits_per_second"), ("end", "sum_received", "bytes"), ("start", "test_start", "reverse"),
]


def iperf3_json_with(index, path, value, concat):
    """An iperf3 JSON output with ``value`` at ``path`` (after another output with ``concat``)."""
    obj = json.loads(json.dumps(IPERF_OBJECTS[index]))
    node = obj
    for key in path[:-1]:
        node = node.setdefault(key, {}) if isinstance(node, dict) else {}
    if isinstance(node, dict):
        node[path[-1]] = value
    text = json.dumps(obj, indent="\t", allow_nan=True)
    if concat:
        text = IPERF_TEXTS[(index + 1) % len(IPERF_TEXTS)] + "\n" + text
    return text


@example_budget(400)
def test_iperf3_json_with_wrong_types(examples):
    """Valid JSON whose fields have unexpected types or values."""
    @settings(max_examples=examples, **COMMON)
    @given(index=st.integers(0, len(IPERF_OBJECTS) - 1), path=st.sampled_from(IPERF_PATHS), value=_json_values(),
           concat=st.booleans())
    def iperf3_json_with_wrong_types(index, path, value, concat):
        check_all(iperf3_json_with(index, path, value, concat))
    iperf3_json_with_wrong_types()
