# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tenth sweep of real tool outputs, pasted the way operators paste them (tests/fixtures/real, sources in each
SOURCES.md): what an operator reads from them.

Misread before: ``ibstat`` copied out of a tmux pane (every line behind the pane border) read nothing, silently;
``ibstat``, ``ibstatus`` and ``ibv_devinfo`` pasted one after the other let the last one's ``state:`` overwrite
the port state of the ones before (a prompt line did not end a block); ``ibv_devinfo`` pastes abridged by hand
(``| head``, an e-mail's elided ``.`` lines) put a port's ``state`` on the device and dropped its GID lines;
``rdma link`` wrapped onto a second, tab-indented line lost state, physical state and netdev; a vendor build of
nccl-tests naming the NCCL version as a code (``NCCL version: 22602``) gave no nccl_version; a ``show_gids`` whose
newlines a copy lost dropped its ``n_gids_found`` with no word of why.
Read right already, and now pinned: perftest 3.x/4.x prompt lines the terminal wrapped (inside the address, after
the binary), CPU-frequency warnings in and before the table, atomic and latency tables with percentiles, DC
transport (server and a patched client printing two runs), rdma_cm with four QPs and a forced IB link type,
whitespace collapsed by a wiki; nccl-tests 2.18.3 with NCCL 2.30 on 16 ranks after an Open MPI help frame,
``-c 0`` tables, lines whose ``#`` marks a log collector dropped, 0-byte alltoall rows with an ``N/A`` in-place
``#wrong``; ``show_gids`` inside a C comment block and of a Huawei bond; ``rdma system`` in an indented Markdown
block.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_ibstat import (
    parse_ibstat_full, parse_ibstatus_full)
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_ibv_devinfo import (
    parse_ibv_devinfo_full)
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_nccl_tests import parse_nccl_tests
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_perftest import parse_perftest
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_rdma_link import (
    parse_rdma_link_full, parse_rdma_system)
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_show_gids import (
    parse_show_gids_full)
from real_outputs import codes, real


def _row(result, size):
    return [row for row in result["rows"] if row["bytes"] == size][0]


# --- perftest ------------------------------------------------------------------------------------------

def test_read_bw_with_its_command_wrapped_inside_the_address_and_a_warning_in_the_table():
    result = parse_perftest(real("perftest", "ib_read_bw_a_mlx4_command_wrapped_mid_address_cpufreq_in_table.txt"))
    assert (result["test"], result["metric"], result["side"], result["ok"]) == ("read", "bw", "client", True)
    assert len(result["rows"]) == 23 and result["rows"][0]["bytes"] == 2 and result["rows"][-1]["bytes"] == 8388608
    # 3667.10 MB/sec at 2 MiB, the row right after the CPU-frequency line
    assert _row(result, 2097152)["bw_avg_gbps"] == round(3667.10 * 2 ** 20 * 8 / 1e9, 6)
    assert result["settings"]["outstand_reads"] == 16 and result["settings"]["mtu"] == 2048
    assert result["warnings"] == ["Conflicting CPU frequency values detected: 2398.515000 != 1223.359000. "
                                  "CPU Frequency is not max."]


def test_latency_tables_keep_their_percentiles():
    read_lat = parse_perftest(real("perftest", "ib_read_lat_a_mlx4_percentiles_command_wrapped_before_address.txt"))
    assert (read_lat["test"], read_lat["metric"], len(read_lat["rows"]), read_lat["errors"]) == ("read", "lat", 23, [])
    row = _row(read_lat, 65536)
    assert (row["t_min_us"], row["t_typical_us"], row["t_avg_us"], row["p99_us"], row["p99_9_us"]) == (
        19.62, 20.0, 20.07, 22.43, 28.74)
    send_lat = parse_perftest(real("perftest", "ib_send_lat_a_mlx4_address_wrapped_before_last_digit.txt"))
    assert (send_lat["test"], len(send_lat["rows"])) == ("send", 23)
    assert (_row(send_lat, 8388608)["t_max_us"], _row(send_lat, 8388608)["p99_9_us"]) == (4189.77, 3761.26)


def test_atomic_tests_with_cpu_frequency_warnings_before_their_one_row():
    bw = parse_perftest(real("perftest", "ib_atomic_bw_fetch_add_command_wrapped_after_binary_cpufreq_after_header.txt"))
    assert (bw["test"], bw["metric"], bw["atomic_type"], bw["ok"]) == ("atomic", "bw", "FETCH_AND_ADD", True)
    assert [(r["bytes"], r["msg_rate_mpps"]) for r in bw["rows"]] == [(8, 2.446776)]
    lat = parse_perftest(real("perftest", "ib_atomic_lat_two_cpufreq_lines_before_the_row.txt"))
    assert [(r["bytes"], r["t_typical_us"], r["p99_us"]) for r in lat["rows"]] == [(8, 2.34, 2.56)]
    assert len(lat["warnings"]) == 2 and lat["ok"] is True


def test_dc_transport_server_and_a_patched_client():
    server = parse_perftest(real("perftest", "ib_write_bw_dc_server_srq_on_gbits.txt"))
    assert (server["side"], server["settings"]["connection_type"], server["settings"]["using_srq"]) == (
        "server", "DC", True)
    assert [(r["bytes"], r["bw_avg_gbps"]) for r in server["rows"]] == [(8388608, 97.57)]
    assert server["local_addresses"][0]["srqn"] == "0x00c07a"
    client = parse_perftest(real("perftest", "ib_write_dc_bw_dc_client_two_runs_patched_debug_prints_qp_modify_failed.txt"))
    assert (client["side"], client["settings"]["connection_type"], client["settings"]["gid_index"]) == (
        "client", "DC", 3)
    assert len(client["rows"]) == 46      # two complete runs of 23 sizes
    assert client["rows"][0]["bw_peak_gbps"] == 0.093567 and client["rows"][23]["bw_peak_gbps"] == 0.094395
    # the QP failure between the runs is perftest's own error line: the result is not ok
    assert [(e["code"], e["message"]) for e in client["errors"]] == [
        ("qp_connect_failed", "Failed to modify QP 36885 dest")]


def test_rdma_cm_runs_with_four_qps_and_a_forced_ib_link_type():
    bw = parse_perftest(real("perftest", "ib_write_bw_rdma_cm_q4_force_link_ib_roce_gb10.txt"))
    assert (bw["settings"]["qps"], bw["settings"]["rdma_cm"], bw["settings"]["link_type"]) == (4, True, "IB")
    assert (len(bw["local_addresses"]), len(bw["remote_addresses"])) == (4, 4)
    assert [(r["bytes"], r["bw_peak_gbps"], r["bw_avg_gbps"]) for r in bw["rows"]] == [(65536, 111.72, 111.71)]
    lat = parse_perftest(real("perftest", "ib_write_lat_rdma_cm_percentiles_roce_gb10.txt"))
    assert (lat["test"], lat["metric"], lat["settings"]["rdma_cm"], lat["settings"]["device"]) == (
        "write", "lat", True, "rocep1s0f1")
    assert [(r["t_min_us"], r["t_stdev_us"], r["p99_us"]) for r in lat["rows"]] == [(1.42, 0.0, 1.57)]


def test_a_header_whose_blanks_a_wiki_collapsed():
    result = parse_perftest(real("perftest", "ib_send_bw_whitespace_collapsed_server_and_client_prompts_duration.txt"))
    assert (result["test"], result["banner"], result["side"]) == ("send", "Send BW Test", "client")
    settings = result["settings"]
    assert (settings["device"], settings["qps"], settings["transport_type"], settings["connection_type"],
            settings["mtu"], settings["link_type"]) == ("mlx5_0", 1, "IB", "RC", 4096, "IB")
    # duration mode prints BW peak 0.00: not measured
    assert [(r["bytes"], r["bw_peak_gbps"], r["bw_avg_gbps"]) for r in result["rows"]] == [(65536, None, 97.36)]


# --- nccl-tests ----------------------------------------------------------------------------------------

def test_nccl_2_30_on_sixteen_ranks_after_an_open_mpi_help_frame():
    result = parse_nccl_tests(real("nccl_tests", "all_reduce_perf_2_18_3_nccl_2_30_16_ranks_cx8_mca_help_integer_times.txt"))
    assert (result["version"], result["nccl_version"], result["nranks"], result["ok"]) == (
        "2.18.3", "2.30.3+cuda13.0", 16, True)
    assert result["hosts"] == ["R6KD-CX8aaS-GPU-14", "R6KD-CX8aaS-GPU-15"]
    assert (len(result["rows"]), result["avg_busbw_gbs"], result["out_of_bounds"]) == (24, 20.6323, 0)
    last = _row(result, 8589934592)
    assert (last["out_of_place"]["time_us"], last["in_place"]["busbw_gbs"]) == (323879.0, 49.83)
    assert result["errors"] == []


def test_alltoall_zero_byte_rows_and_an_in_place_wrong_of_na():
    result = parse_nccl_tests(real("nccl_tests", "alltoall_perf_v100_zero_byte_rows_in_place_wrong_na_padded_hosts.txt"))
    assert (result["nranks"], result["hosts"], len(result["rows"])) == (4, ["igt002", "igt007"], 27)
    assert [row["bytes"] for row in result["rows"][:4]] == [0, 0, 0, 16]
    assert all(row["in_place"]["wrong"] is None and row["out_of_place"]["wrong"] == 0 for row in result["rows"])
    assert (result["avg_busbw_gbs"], result["ok"]) == (2.00499, True)


def test_a_vendor_build_naming_the_nccl_version_as_a_code():
    result = parse_nccl_tests(real("nccl_tests", "all_reduce_perf_c0_vendor_banner_nccl_version_code_stray_line.txt"))
    assert result["nccl_version"] == "2.26.2"
    assert (result["test"], result["header"]["validation"], result["nranks"], len(result["rows"])) == (
        "all_reduce_perf", 0, 4, 29)
    assert all(row["out_of_place"]["wrong"] is None for row in result["rows"])     # -c 0: N/A
    assert (result["avg_busbw_gbs"], result["ok"], result["warnings"]) == (3.35322, True, [])


def test_lines_whose_hash_marks_a_log_collector_dropped():
    result = parse_nccl_tests(real("nccl_tests", "all_gather_perf_dstack_log_hash_marks_stripped_c0.txt"))
    assert (result["header"]["min_bytes"], result["header"]["iters"], result["header"]["validation"]) == (
        8388608, 200, 0)
    assert (len(result["rows"]), result["out_of_bounds"], result["avg_busbw_gbs"], result["ok"]) == (
        11, 0, 146.948, True)
    assert _row(result, 8589934592)["in_place"]["busbw_gbs"] == 188.59


# --- ibstat / ibstatus / ibv_devinfo ---------------------------------------------------------------------

def _ports(ca):
    return [(p["port"], p["state"], p["phys_state"], p["rate"], p["link_layer"]) for p in ca["ports"]]


def test_ibstat_copied_out_of_a_tmux_pane():
    result = parse_ibstat_full(real("ibstat", "ibstat_mlx4_tmux_pane_border_trailing_blanks.txt"))
    assert (result["errors"], result["warnings"]) == ([], [])
    [ca] = result["cas"]
    assert (ca["name"], ca["ca_type"], ca["num_ports"], ca["fw_version"]) == ("mlx4_0", "MT4099", 2, "2.42.5000")
    assert _ports(ca) == [(1, "Active", "LinkUp", 40, "InfiniBand"), (2, "Down", "Disabled", 10, "Ethernet")]


def test_three_tools_pasted_one_after_the_other_keep_their_own_states():
    text = real("ibstat", "ibstat_ibstatus_ibv_devinfo_cx7_hdr200_one_paste_mkdocs_admonition_indented.txt")
    ibstat = parse_ibstat_full(text)
    assert ibstat["source"] == "ibstat" and _ports(ibstat["cas"][0]) == [(1, "Active", "LinkUp", 200, "InfiniBand")]
    [status] = parse_ibstatus_full(text)["cas"][0]["ports"]
    assert (status["state"], status["state_num"], status["rate"], status["width"], status["base_lid"]) == (
        "Active", 4, 200, "4X", 48)
    [device] = parse_ibv_devinfo_full(text)["devices"]
    assert (device["vendor_part_id"], device["board_id"]) == (4129, "MT_0000000834")
    assert [(p["port"], p["state"], p["active_mtu"], p["port_lid"]) for p in device["ports"]] == [
        (1, "PORT_ACTIVE", 4096, 48)]


def test_devinfo_with_an_ib_port_and_an_ethernet_port_padded_with_blanks():
    result = parse_ibv_devinfo_full(real("ibv_devinfo", "ibv_devinfo_mlx4_ib_and_ethernet_port_trailing_blanks.txt"))
    assert (result["errors"], result["warnings"]) == ([], [])
    [device] = result["devices"]
    assert (device["hca_id"], device["vendor_part_id"], device["phys_port_cnt"]) == ("mlx4_0", 4099, 2)
    assert [(p["port"], p["state"], p["active_mtu"], p["link_layer"]) for p in device["ports"]] == [
        (1, "PORT_ACTIVE", 4096, "InfiniBand"), (2, "PORT_DOWN", 1024, "Ethernet")]


def test_devinfo_abridged_by_hand_reads_its_port_lines_into_a_port_of_unknown_number():
    quoted = parse_ibv_devinfo_full(real("ibv_devinfo", "ibv_devinfo_v_bnxt_re2_gid_types_quoted_eight_levels_port_elided.txt"))
    [device] = quoted["devices"]
    assert (device["hca_id"], device["fw_ver"], device["node_guid"]) == ("bnxt_re2", "216.0.220.0", "b226:28ff:fed3:b0f0")
    [port] = device["ports"]
    assert port["port"] is None and port["phys_state"] == "LINK_UP"
    assert [(g["index"], g["version"], g["ipv4"]) for g in port["gids"]] == [
        (0, "v1", None), (1, "v2", None), (2, "v1", "192.170.1.101"), (3, "v2", "192.170.1.101")]
    assert [w["code"] for w in quoted["warnings"]] == ["abridged_port"] and quoted["errors"] == []
    head = parse_ibv_devinfo_full(real("ibv_devinfo", "ibv_devinfo_head_irdma_falcon_state_with_note_rst_indented.txt"))
    [device] = head["devices"]
    assert device["hca_id"] == "irdma0" and "state" not in device
    assert [(p["port"], p["state"], p["state_num"]) for p in device["ports"]] == [(None, "PORT_ACTIVE", 4)]


def test_devinfo_and_rdma_link_in_one_unfenced_post():
    text = real("ibv_devinfo", "ibv_devinfo_cx5_huawei_oem_after_lsmod_then_rdma_link_ib.txt")
    result = parse_ibv_devinfo_full(text)
    assert (result["errors"], result["warnings"]) == ([], [])
    [device] = result["devices"]
    assert (device["vendor_part_id"], device["board_id"], device["fw_ver"]) == (4119, "HUA0000000005", "16.21.3002")
    assert [(p["state"], p["sm_lid"], p["port_lid"], p["link_layer"]) for p in device["ports"]] == [
        ("PORT_ACTIVE", 8, 70, "InfiniBand")]
    links = parse_rdma_link_full(text)["links"]
    assert [(link["device"], link["state"], link["lid"], link["sm_lid"], link["netdev"]) for link in links] == [
        ("mlx5_0", "ACTIVE", 70, 8, None)]


# --- rdma link / rdma system / show_gids -----------------------------------------------------------------

def test_rdma_link_wrapped_onto_a_second_line():
    result = parse_rdma_link_full(real("rdma_link", "rdma_link_show_one_port_wrapped_onto_tab_line.txt"))
    [link] = result["links"]
    assert (link["device"], link["port"], link["lid"], link["sm_lid"], link["state"], link["physical_state"],
            link["netdev"]) == ("mlx5_0", 1, 66, 3, "ACTIVE", "LINK_UP", "ibp196s0f0")


def test_rdma_link_and_rdma_system_in_indented_markdown_blocks():
    [link] = parse_rdma_link_full(real("rdma_link", "rdma_link_ib_no_netdev_markdown_indented_prompts.txt"))["links"]
    assert (link["device"], link["lid"], link["state"], link["physical_state"], link["netdev"]) == (
        "mlx5_0", 2, "ACTIVE", "LINK_UP", None)
    system = parse_rdma_system(real("rdma_link", "rdma_system_netns_exclusive_markdown_indented.txt"))
    assert system == {"netns_mode": "exclusive", "copy_on_fork": True, "errors": []}


def _gids(result):
    return [(g["device"], g["gid_index"], g["ipv4"], g["version"], g["netdev"]) for g in result["gids"]]


def test_show_gids_inside_a_c_comment_block():
    result = parse_show_gids_full(real("show_gids", "show_gids_in_c_comment_block_12_gids_three_devices.txt"))
    assert (result["n_gids_found"], len(result["gids"]), result["warnings"]) == (12, 12, [])
    assert _gids(result)[2:4] == [("mlx5_0", 2, "10.110.0.33", "v1", "eth05"), ("mlx5_0", 3, "10.110.0.33", "v2", "eth05")]
    assert _gids(result)[-1] == ("mlx5_2", 3, "26.110.178.29", "v2", "eth03")


def test_show_gids_of_a_huawei_bond_beside_a_mellanox_bond():
    result = parse_show_gids_full(real("show_gids", "show_gids_huawei_hrn3_bond_v2_only_and_mlx5_bond.txt"))
    assert _gids(result) == [("hrn3_bond_0", 0, None, "v2", "bond0"), ("hrn3_bond_0", 1, "27.105.180.3", "v2", "bond0"),
                             ("mlx5_bond_0", 0, None, "v1", "bond1"), ("mlx5_bond_0", 1, None, "v2", "bond1")]
    assert (result["n_gids_found"], result["warnings"], codes(result)) == (4, [], [])


def test_show_gids_whose_newlines_were_lost_says_its_rows_were_not_read():
    result = parse_show_gids_full(real("show_gids", "show_gids_newlines_lost_one_line.txt"))
    assert (result["gids"], result["n_gids_found"]) == ([], 2)
    assert result["warnings"] == ["n_gids_found=2 but 0 GID rows were read"]
