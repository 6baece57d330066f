# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""One line of perftest output at a time: a table of line handlers.

Each handler recognises one kind of line (a result row, the banner, a header
field, an address, a warning, an error, ...), stores what it read in the state
and returns True; the first handler that takes a line wins, so their order is
part of the parser.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import ipaddress
import re

from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.perftest_errors import (
    classify,
    is_warning,
)
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.perftest_result import (
    COMMAND_RE,
    MAX_PROBE,
    MAX_UNKNOWN_LISTED,
    add_error,
    add_warning,
    finish_row,
    parse_row,
    start_table,
)
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.text import (
    is_context_line,
    is_diagnostic_line,
    snake_case,
    to_float,
)

_CUDA_NEEDLES = ("initializing cuda", "cuda device", "cumemalloc", "cuda ctx", "--use_cuda", "cuinit", "cuda tests",
                 "cuda latency tests")
_ROCM_NEEDLES = ("using rocm device", "hipmalloc", "--use_rocm", "rocm device")

_BANNER_RE = re.compile(
    r"^(?P<verb>RDMA_Write_imm|RDMA_Write|RDMA_Read|Send|Atomic|Write_imm)\s+"
    r"(?:(?P<atomic>CMP_AND_SWAP|FETCH_AND_ADD)\s+)?"
    r"(?P<bidir>Bidirectional\s+)?"
    r"(?:Post\s+List\s+)?"
    r"(?:(?P<metric>BW|Latency)\s+)?"
    r"(?:forwarding\s+)?(?:Multicast\s+)?Test\b", re.I)
_VERB_TEST = {"send": "send", "rdma_write": "write", "rdma_write_imm": "write", "write_imm": "write",
              "rdma_read": "read", "atomic": "atomic"}
_SEPARATOR_RE = re.compile(r"^(?:-{10,}|={10,})$")
_STARS_RE = re.compile(r"^\*+$")
_WAITING_RE = re.compile(r"Waiting for client (?:to connect|rdma_cm QP to connect)", re.I)
_ADDRESS_RE = re.compile(r"^(local|remote)\s+address\s*:\s*(.*)$", re.I)
_GID_LINE_RE = re.compile(r"^(M?GID)\s*:\s*(\S+)", re.I)
_PAIR_RE = re.compile(r"([A-Za-z][A-Za-z0-9_]*)\s+(\S+)")
_HEADER_KEY_RE = re.compile(r"^[A-Za-z][A-Za-z0-9 .*_\-/()]{0,47}$")
_NUM_UNIT_RE = re.compile(r"^(-?\d+(?:\.\d+)?)\s*\[([A-Za-z/%]+)\]$")
_INT_RE = re.compile(r"^-?\d+$")
# get_clock.c prints this on stderr; merged with stdout it can end up glued to a table row.
_CPU_FREQ_GLUED_RE = re.compile(
    r"Conflicting CPU frequency values detected: [0-9.]+ != [0-9.]+\.?(?: CPU Frequency is not max\.)?")
_HISTOGRAM_UNIT_RE = re.compile(r"^#,\s*(usec|cycles)\s*$", re.I)
_CONNECTED_RE = re.compile(r"^Connected:\s*(.+)$")
_COMPLETED_RE = re.compile(r"^Completed:\s*(.+)$")
_RUN_TIME_RE = re.compile(r"^Total run time:\s*(\d+(?:\.\d+)?)\s*s", re.I)
_CYCLES_FLAG_RE = re.compile(r"(?:^|\s)(?:-C|--report-cycles)(?:\s|$)")

# Header fields perftest prints (snake_cased); recognised even outside the
# banner block (for output whose first lines were cut off).
_KNOWN_HEADER_KEYS = frozenset((
    "dual_port", "device", "number_of_qps", "transport_type", "connection_type", "using_srq",
    "pcie_relax_order", "ibv_wr_api", "tx_depth", "rx_depth", "cq_moderation", "cqe_poll_batch", "mtu",
    "link_type", "gid_index", "gid_index2", "max_inline_data", "outstand_reads", "rdma_cm_qps",
    "data_ex_method", "lock_free", "using_ddp", "cpu_freq", "using_enhanced_reorder", "post_list",
    "recv_post_list", "use_rocm_memory", "buffer_size", "dcs_num_streams", "block_size",
))


def _convert_value(value):
    """Header value -> bool (ON/OFF), int, number with a [unit], or the string."""
    text = value.strip()
    upper = text.upper()
    if upper == "ON":
        return True, None
    if upper == "OFF":
        return False, None
    if _INT_RE.match(text):
        return int(text), None
    match = _NUM_UNIT_RE.match(text)
    if match:
        number = to_float(match.group(1))
        if number is not None and number == int(number):
            number = int(number)
        unit = match.group(2)
        return number, (None if unit.upper() == "B" else snake_case(unit))
    return text, None


def _split_fields(line):
    """' Number of qps   : 1\t\tTransport type : IB' -> [('Number of qps', '1'), ('Transport type', 'IB')]."""
    fields = []
    rest = line.strip()
    for _field in range(8):
        idx = rest.find(":")
        if idx <= 0:
            break
        key = rest[:idx].strip()
        after = rest[idx + 1:].strip()
        value, rest = after, ""
        if ":" in after:
            parts = after.split(None, 1)
            if len(parts) == 2 and ":" in parts[1] and ":" not in parts[0]:
                value, rest = parts[0], parts[1]
        fields.append((key, value))
        if not rest:
            break
    return fields


def _gid_addresses(raw):
    """perftest prints GIDs as 16 decimal bytes 'a:b:...:p'; return (ipv6 text, ipv4 text or None)."""
    parts = raw.split(":")
    try:
        if len(parts) == 16 and all(part.isdigit() and int(part) <= 255 for part in parts):
            address = ipaddress.IPv6Address(bytes(int(part) for part in parts))
        elif len(parts) == 16 and all(re.match(r"^[0-9a-fA-F]{1,2}$", part) for part in parts):
            address = ipaddress.IPv6Address(bytes(int(part, 16) for part in parts))
        else:
            address = ipaddress.IPv6Address(raw)
    except (ValueError, TypeError):
        return None, None
    mapped = address.ipv4_mapped
    return str(address), (str(mapped) if mapped else None)


def _store_header_fields(state, line, header_block):
    """Store 'Key : value' fields; outside the header block only perftest's own keys count."""
    fields = _split_fields(line)
    if not fields:
        return False
    parsed = []
    for key, value in fields:
        if not _HEADER_KEY_RE.match(key):
            return False
        name = snake_case(key)
        if not header_block and name not in _KNOWN_HEADER_KEYS:
            return False
        parsed.append((name, value))
    for name, value in parsed:
        converted, unit = _convert_value(value)
        if unit:
            name = name + "_" + unit
        state.raw_settings[name] = converted
    return True


# Handlers of a whole (stripped) line, chosen by its first character and tried before anything else:
# result rows are the hot path.

def _take_row(state, line):
    if not state.columns or state.in_usage:
        return False
    values = parse_row(state, line)
    if values is None:
        values = _row_with_glued_values(state, line)
    rows = [values] if values is not None else _glued_rows(state, line)
    if not rows:
        return False
    if len(rows) > 1:
        add_warning(state, "%d result rows on one line: the output of two perftest processes (a server and a "
                           "client started in one terminal) is merged" % len(rows))
    state.result["rows"].extend(finish_row(state, values) for values in rows)
    return True


# Two-decimal values run together: perftest prints the columns with printf widths and no separator, so a wide
# value fills its field and touches the next one ("2465.901216.65": t_stdev 2465.90, 99% percentile 1216.65).
_GLUED_VALUES_RE = re.compile(r"^(\d+\.\d\d)(\d+\.\d+)$")


def _row_with_glued_values(state, line):
    """The row's values once each token holding two values run together is split in two, or None.

    Only when the split gives exactly as many values as the header has columns: a line that is not a row, or
    one that is short for another reason, stays what it was (the whole row was dropped before, leaving a
    latency run with a table header and no result).
    """
    tokens = line.split()
    if len(tokens) >= len(state.columns):
        return None
    split = []
    for token in tokens:
        glued = _GLUED_VALUES_RE.match(token)
        split.extend(glued.groups() if glued else (token,))
    if len(split) != len(state.columns):
        return None
    values = parse_row(state, " ".join(split))
    if values is not None:
        add_warning(state, "a result row had values run together (a value too wide for its column), read "
                           "apart: %s" % line[:200])
    return values


def _glued_rows(state, line):
    """Whole rows printed on one line (two processes writing to one terminal): the values of each, or []."""
    tokens = line.split()
    width = len(state.columns)
    if len(tokens) < 2 * width or len(tokens) % width:
        return []
    rows = [parse_row(state, " ".join(tokens[at:at + width])) for at in range(0, len(tokens), width)]
    return rows if all(values is not None for values in rows) else []


def _take_separator(state, line):
    if _SEPARATOR_RE.match(line):
        state.in_header = False
        return True
    return False


def _take_stars(state, line):
    return _STARS_RE.match(line) is not None


# By the line's first character: most lines start with none of these.
_WHOLE_LINE_HANDLERS = dict([(digit, _take_row) for digit in "0123456789"]
                            + [("-", _take_separator), ("=", _take_separator), ("*", _take_stars)])


# Handlers of a line's probe (its first MAX_PROBE characters) and the probe lowercased.

def _take_banner(state, probe, low):
    """'RDMA_Write BW Test': the test, metric and direction; the header block starts."""
    match = _BANNER_RE.match(probe)
    if not match:
        return False
    verb = match.group("verb")
    test = _VERB_TEST.get(verb.lower())
    metric = match.group("metric")
    metric = {"bw": "bw", "latency": "lat"}.get(metric.lower()) if metric else None
    signature = (test, metric)
    if state.seen_banners and signature not in state.seen_banners:
        add_warning(state, "more than one perftest run in the input (%s): rows of all runs are listed" % probe)
    state.seen_banners.add(signature)
    result = state.result
    if result["banner"] is None:
        result["banner"] = probe
        result["verb"] = verb
        result["test"] = test
        result["metric"] = metric
        result["bidirectional"] = bool(match.group("bidir"))
        result["atomic_type"] = match.group("atomic").upper() if match.group("atomic") else None
    state.in_header = True
    return True


def _take_table_header(state, probe, low):
    """'#bytes #iterations BW peak[MB/sec] ...': the columns of the result table."""
    if probe[0] == "#" and low[:6] == "#bytes":
        start_table(state, probe)
        return True
    return False


def _take_histogram_unit(state, probe, low):
    """'#, usec' / '#, cycles': the unit of a latency histogram."""
    if probe[0] != "#":
        return False
    match = _HISTOGRAM_UNIT_RE.match(probe)
    if not match:
        return False
    if match.group(1).lower() == "cycles":
        state.result["time_unit"] = "cycles"
    return True


def _take_waiting(state, probe, low):
    """The server's 'Waiting for client to connect...' banner."""
    if "aiting for client" in probe and _WAITING_RE.search(probe):
        state.result["side"] = "server"
        return True
    return False


def _take_address(state, probe, low):
    """' local address: LID 0x00 QPN 0x0111 PSN ...': one QP's address fields."""
    match = _ADDRESS_RE.match(probe)
    if not match:
        return False
    entry = {}
    for key, value in _PAIR_RE.findall(match.group(2)[:MAX_PROBE]):
        entry[key.lower()] = value
    side = match.group(1).lower()
    target = state.result["local_addresses" if side == "local" else "remote_addresses"]
    if len(target) < 4096:
        target.append(entry)
    state.last_address = entry
    return True


def _take_gid(state, probe, low):
    """' GID: 00:00:...:10:01' after an address line: its GID, decoded to IPv6 / IPv4."""
    match = _GID_LINE_RE.match(probe)
    if not match:
        return False
    entry = state.last_address
    key = "mgid" if match.group(1).upper() == "MGID" else "gid"
    if entry is None or key in entry:
        return True
    raw = match.group(2)
    entry[key] = raw
    if key == "gid":
        entry["gid_ip"], entry["gid_ipv4"] = _gid_addresses(raw)
    return True


# 'Connected: <date>', 'Completed: <date>', 'Total run time: 5.00 s': (regex, result key, value of group 1).
_RESULT_FIELDS = (
    (_CONNECTED_RE, "connected_at", str.strip),
    (_COMPLETED_RE, "completed_at", str.strip),
    (_RUN_TIME_RE, "total_run_time_s", to_float),
)


def _take_result_field(state, probe, low):
    for regex, key, convert in _RESULT_FIELDS:
        match = regex.match(probe)
        if match:
            state.result[key] = convert(match.group(1))
            return True
    return False


def _take_known_header_field(state, probe, low):
    """perftest's own header fields, wherever they are (never error messages)."""
    return _store_header_fields(state, probe, False)


def _take_warning(state, probe, low):
    if not is_warning(low):
        return False
    if "won't be measured" in low:
        state.result["peak_measured"] = False
    state.read_warning = True
    add_warning(state, probe)
    return True


def _take_errno(state, probe, low):
    """'errno: ...' right after an error belongs to that error."""
    if probe[:6].upper() != "ERRNO:" or state.last_error is None:
        return False
    if len(state.last_error["evidence"]) < 20:
        state.last_error["evidence"].append(probe)
    return True


def _is_command(probe):
    return "ib_" in probe and bool(COMMAND_RE.search(probe))


def _take_error(state, probe, low):
    """A line an error rule knows ('Usage:' starts perftest's help text: its command line was rejected)."""
    code = classify(low)
    if code is None or (code == "unknown" and _is_command(probe)):
        return False
    if code == "invalid_option" and low.startswith("usage:"):
        state.in_usage = True
        return True
    add_error(state, code, probe)
    return True


def _take_command(state, probe, low):
    """The perftest command line (a prompt line or a launcher's echo)."""
    if not _is_command(probe):
        return False
    result = state.result
    if result["command"] is None:
        result["command"] = probe
        if _CYCLES_FLAG_RE.search(probe):
            result["time_unit"] = "cycles"
    return True


def _take_header_block_field(state, probe, low):
    """Any 'Key : value' field inside the header block (between the banner and its closing line)."""
    return state.in_header and _store_header_fields(state, probe, True)


_PROBE_HANDLERS = (
    _take_banner, _take_table_header, _take_histogram_unit, _take_waiting, _take_address, _take_gid,
    _take_result_field, _take_known_header_field, _take_warning, _take_errno, _take_error,
    _take_command, _take_header_block_field,
)
# Handlers of 'key: value' lines: a line without ':' skips them.
_COLON_ONLY = (_take_address, _take_gid, _take_result_field, _take_known_header_field, _take_header_block_field)
_PROBE_HANDLERS_NO_COLON = tuple(handler for handler in _PROBE_HANDLERS if handler not in _COLON_ONLY)


def _note_program(state, line):
    """Remember the first ib_*_bw / ib_*_lat name seen anywhere (the command line may be missing)."""
    if state.program is None and "ib_" in line:
        match = COMMAND_RE.search(line[:MAX_PROBE])
        state.program = match.group(0) if match else None


def _note_gpu_memory(state, low):
    result = state.result
    if result["gpu_memory"] is None:
        if any(needle in low for needle in _CUDA_NEEDLES):
            result["gpu_memory"] = "cuda"
        elif any(needle in low for needle in _ROCM_NEEDLES):
            result["gpu_memory"] = "rocm"


def _take_usage_line(state, probe, low):
    """perftest's help text follows "Usage:"; only real messages (printed on stderr, so possibly merged
    after it) are still read."""
    if probe[0] == "-" or low.startswith(("note", "usage:", "options:")) or is_warning(low):
        return
    code = classify(low)
    if code is not None and code != "unknown":
        add_error(state, code, probe)


def process_line(state, raw_line):
    """Read one line into the state: the first handler that recognises it takes it."""
    line = raw_line.strip()
    if not line:
        return
    if len(line) > 4 * MAX_PROBE:
        line = line[:4 * MAX_PROBE]
    handler = _WHOLE_LINE_HANDLERS.get(line[0])
    if handler is not None and handler(state, line):
        return
    _note_program(state, line)
    probe = line[:MAX_PROBE]
    low = probe.lower()
    if state.in_usage:
        _take_usage_line(state, probe, low)
        return
    _note_gpu_memory(state, low)
    for handler in (_PROBE_HANDLERS if ":" in probe else _PROBE_HANDLERS_NO_COLON):
        if handler(state, probe, low):
            return
    _unknown_line(state, probe)


def _unknown_line(state, line):
    """A line no rule knows is never an error: a warning when it reports a problem in words,
    else chatter (CUDA set-up notes, wrapped command lines) that is left out."""
    if not is_diagnostic_line(line) or is_context_line(line):
        return
    state.unknown_lines += 1
    if state.unknown_lines <= MAX_UNKNOWN_LISTED:
        add_warning(state, line)


_NUMBER_TOKEN = re.compile(r"^[+-]?\d+(?:\.\d+)?$")
_COLUMN_WORD = re.compile(r"^[A-Za-z0-9_.%/]+(?:\[[^\]\s]*\])?$")


_MAX_WRAPPED = 4   # continuation lines a wrapped header or row may take


def unwrap(state, lines, index):
    """(line, index of the next line to read) for lines[index]: a result row or a table header a paste wrapped
    onto the next lines (a wiki's or an e-mail's width; latency rows are 130 columns wide) is read whole.

    A row is joined only when its numbers and those of the next lines make exactly the table's columns; a
    header only with next lines of column names (at least one with a [unit]) and no number."""
    line = lines[index]
    tokens = line.split()
    if not tokens:
        return line, index + 1
    if state.columns and not state.in_usage and 2 <= len(tokens) < len(state.columns) and tokens[0].isdigit():
        return _joined(lines, index, _row_continuation, len(state.columns))
    if tokens[0].lower() == "#bytes":
        return _joined(lines, index, _header_continuation, None)
    return line, index + 1


def _joined(lines, index, continues, width):
    """lines[index] with the continuation lines after it (as many as `continues` accepts), and the next index;
    with a width, only when the tokens then number exactly width."""
    parts = [lines[index]]
    count = len(lines[index].split())
    at = index + 1
    while at < len(lines) and at - index <= _MAX_WRAPPED and (width is None or count < width):
        following = lines[at].split()
        if not following or not continues(lines[index].split()[0], following):
            break
        parts.append(lines[at])
        count += len(following)
        at += 1
    if width is not None and count != width:
        return lines[index], index + 1
    return " ".join(parts), at


def _row_continuation(_first, following):
    return all(_NUMBER_TOKEN.match(token) for token in following)


def _header_continuation(_first, following):
    return (following[0][:1] != "#" and any("]" in word for word in following)
            and all(_COLUMN_WORD.match(word) and not _NUMBER_TOKEN.match(word) for word in following))


def split_glued(line):
    """Split a CPU-frequency warning glued to other text (merged stderr) into separate lines."""
    if "Conflicting CPU" not in line:
        return [line]
    match = _CPU_FREQ_GLUED_RE.search(line[:MAX_PROBE])
    if not match or (match.start() == 0 and not line[match.end():].strip()):
        return [line]
    return [line[:match.start()], match.group(0), line[match.end():]]
