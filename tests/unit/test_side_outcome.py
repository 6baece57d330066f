# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which side of an error pair failed to answer: hung server, hung client, neither (issue 14)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import pytest

from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import localization as loc
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import pair_analysis as pa
from ansible_collections.clusterops.commcheck.plugins.module_utils.verdicts import side_outcome as so

BANNER = "\n************************************\n* Waiting for client to connect... *\n" \
         "************************************\n"
BW_WARNING = " WARNING: BW peak won't be measured in this run.\n"
CONNECTED = BANNER + " RDMA_Write BW Test\n local address: LID 0000 QPN 0x0200\n remote address: LID 0000 QPN 0x0100\n"
TIMEOUT_S = 32.0


def side(host, role, peer, rail=0, verdict="pass", code=None, stdout="", stderr="", timed_out=False, attempts=1,
         bw=95.0):
    """One side as the perftest module returns it (the fields pair_analysis and side_outcome read)."""
    out = {"host": host, "role": role, "peer": peer, "rail": rail, "round": 0, "step": 0, "test": "write",
           "metric": "bw", "device": "mlx5_%d" % rail, "expected_gbps": 100.0, "cmd": ["ib_write_bw"],
           "verdict": verdict, "stdout": stdout, "stderr": stderr, "timed_out": timed_out, "attempts": attempts,
           "rc": None if timed_out else (0 if verdict == "pass" else 1), "errors": [], "metrics": {}}
    if role == "client" and verdict == "pass":
        out["metrics"] = {"bw_gbps": bw, "bytes": 65536}
    if verdict == "error":
        out.update(cause="%s on %s" % (code, host), fix="fix %s" % code, errors=[{"code": code, "cause": code}])
    return out


def mesh_sides(hosts, rails, broken):
    """Every pair of ``hosts`` on every rail passes, except (server, client, rail) -> (server side, client side)."""
    out = []
    for rail in range(rails):
        for i, server in enumerate(hosts):
            for client in hosts[i + 1:]:
                pair = broken.get((server, client, rail))
                if pair:
                    out += list(pair)
                    continue
                out += [side(server, "server", client, rail, stdout=CONNECTED),
                        side(client, "client", server, rail, stdout="rows")]
    return out


def hung_server(server, client, rail=0, banner=False, refused=False):
    """The server was stopped as it started; its client waited (connected into the backlog) or was refused."""
    s = side(server, "server", client, rail, "error", "server_no_client",
             stdout=BW_WARNING + (BANNER if banner else ""), timed_out=True)
    if refused:
        c = side(client, "client", server, rail, "error", "connect_failed", timed_out=True, attempts=40,
                 stderr="Couldn't connect to 10.0.0.1:18515\n" * 3)
    else:
        c = side(client, "client", server, rail, "error", "client_timeout", stdout=BW_WARNING, timed_out=True)
    return s, c


def hung_client(server, client, rail=0):
    """The client was stopped once connected: its server had answered and printed the exchange, then waited."""
    return (side(server, "server", client, rail, "error", "client_timeout", stdout=CONNECTED, timed_out=True),
            side(client, "client", server, rail, "error", "client_timeout", stdout=BW_WARNING, timed_out=True))


def both_waiting(server, client, rail=0):
    """The server listened until its deadline, the client timed out without a word: nothing tells them apart."""
    return (side(server, "server", client, rail, "error", "server_no_client", stdout=BANNER, timed_out=True),
            side(client, "client", server, rail, "error", "client_timeout", timed_out=True))


def records_of(sides):
    return pa.analyze_pairs(sides, family="rdma", min_fraction=0.9)["records"]


def components(records):
    result = loc.localize_records(records)
    return [(c["component"], c["host"], c["peer"], c["rail"]) for c in result["components"]], result


# --- the outcome of one side --------------------------------------------------------------

@pytest.mark.parametrize("pair, outcomes", [
    (hung_server("h1", "h2"), ("silent", "silent")),
    (hung_server("h1", "h2", refused=True), ("silent", "refused")),
    (hung_server("h1", "h2", banner=True), ("waiting", "silent")),
    (hung_client("h1", "h2"), ("stalled", "silent")),
    (both_waiting("h1", "h2"), ("waiting", "silent")),
])
def test_side_outcome_reads_how_each_side_ended(pair, outcomes):
    assert (so.side_outcome(pair[0]), so.side_outcome(pair[1])) == outcomes


def test_side_outcome_ok_missing_and_exited():
    assert so.side_outcome(None) == "missing"
    assert so.side_outcome(side("h1", "server", "h2")) == "ok"
    died = side("h1", "server", "h2", 0, "error", "no_device", stderr="No IB devices found")
    assert so.side_outcome(died) == "exited"
    # refused before its deadline (connect retries spent) is still refused
    assert so.side_outcome(side("h2", "client", "h1", 0, "error", "connect_failed")) == "refused"
    # a side without its output (older results) is not taken as silent
    bare = side("h1", "server", "h2", 0, "error", "server_no_client", timed_out=True)
    del bare["stdout"], bare["stderr"]
    assert so.side_outcome(bare) == "waiting"
    # nor is the server of a tool that says nothing before its client comes (iperf3 -J)
    iperf3 = side("h1", "server", "h2", 0, "error", "server_no_client", timed_out=True)
    iperf3["cmd"] = ["iperf3", "-s", "-1", "-J"]
    assert so.side_outcome(iperf3) == "waiting"
    assert so.side_outcome(dict(iperf3, cmd=["/usr/bin/ib_write_bw"])) == "silent"


def test_a_client_refused_by_a_listening_server_is_the_client():
    # the server listened until its deadline (iperf3: no banner at all); the client was refused all along:
    # it was sent somewhere else (address, port, path), as in the tcp_perf lab's wrong-address test
    server = side("h1", "server", "h2", 0, "error", "server_no_client", timed_out=True)
    server["cmd"] = ["iperf3", "-s", "-1", "-J"]
    client = side("h2", "client", "h1", 0, "error", "connect_failed", timed_out=True, attempts=30)
    client["cmd"] = ["iperf3", "-c", "10.0.0.4"]
    assert so.error_cause((("h1", server), ("h2", client)))[0] == "client side on h2: connect_failed on h2"


@pytest.mark.parametrize("server, client, blamed", [
    ("silent", "stalled", ("server", "hung")),
    ("silent", "refused", ("server", "hung")),
    ("silent", "silent", ("server", "hung")),
    # the lab's hung server: stopped before its banner; its client got in, then the exchange broke
    ("silent", "exited", ("server", "hung")),
    ("stalled", "silent", ("client", "hung")),
    ("exited", "refused", ("server", "error")),
    ("waiting", "exited", ("client", "error")),
    ("ok", "stalled", ("client", "hung")),
    ("ok", "refused", ("client", "error")),
    ("waiting", "refused", ("client", "error")),
    ("missing", "ok", ("server", "error")),
    ("waiting", "silent", (None, None)),
    ("waiting", "stalled", (None, None)),
    ("stalled", "stalled", (None, None)),
    ("exited", "exited", (None, None)),
    ("missing", "missing", (None, None)),
])
def test_failed_side_table(server, client, blamed):
    assert so.failed_side(server, client) == blamed


# --- end to end: sides -> records -> localization -------------------------------------------

HOSTS = ["h1", "h2", "h3", "h4"]


def test_hung_server_blames_the_server_host_not_its_client():
    # issue 14: h1's server was stopped (SIGSTOP) in its pair with h2; the report named h2
    records = records_of(mesh_sides(HOSTS, 2, {("h1", "h2", 0): hung_server("h1", "h2")}))
    bad = [r for r in records if r["verdict"] == "error"]
    assert len(bad) == 1 and bad[0]["cause"] == "server side on h1: server_no_client on h1"
    keys = ("server_outcome", "client_outcome", "failed_side", "failed_how")
    assert dict((k, bad[0]["params"][k]) for k in keys) == {
        "server_outcome": "silent", "client_outcome": "silent", "failed_side": "h1", "failed_how": "hung"}
    kinds, result = components(records)
    assert kinds == [("host", "h1", None, None)]
    assert result["primary"]["cause"].startswith("h1: its side of a test never answered")
    assert any("h1 rail 0 (mlx5_0): its side of the test never answered: server side on h1" in line
               for line in result["primary"]["evidence"])


def test_hung_server_refusing_its_client_blames_the_server_host():
    records = records_of(mesh_sides(HOSTS, 2, {("h1", "h2", 0): hung_server("h1", "h2", refused=True)}))
    assert components(records)[0] == [("host", "h1", None, None)]


def test_hung_client_blames_the_client_host():
    records = records_of(mesh_sides(HOSTS, 2, {("h1", "h2", 1): hung_client("h1", "h2", 1)}))
    bad = [r for r in records if r["verdict"] == "error"][0]
    assert bad["cause"].startswith("client side on h2: ") and bad["params"]["failed_side"] == "h2"
    assert components(records)[0] == [("host", "h2", None, None)]


def test_both_sides_timing_out_with_nothing_to_tell_them_apart_is_the_link():
    records = records_of(mesh_sides(HOSTS, 2, {("h1", "h2", 0): both_waiting("h1", "h2")}))
    bad = [r for r in records if r["verdict"] == "error"][0]
    assert bad["cause"].startswith("neither side can be singled out (server on h1 listened until its deadline and "
                                   "no client reached it; client on h2 timed out without a word")
    assert bad["params"]["failed_side"] is None and bad["fix"] == so.NO_SIDE_FIX
    kinds, result = components(records)
    assert kinds == [("link", "h1", "h2", 0)]
    assert result["summary"]["hosts"] == []
    # the same pair with the banner printed before the server was stopped looks alike: the link
    records = records_of(mesh_sides(HOSTS, 2, {("h1", "h2", 0): hung_server("h1", "h2", banner=True)}))
    assert components(records)[0] == [("link", "h1", "h2", 0)]


def stuck(pair, role, how="stopped"):
    """``pair`` with its ``role`` side found stopped (or wedged in the kernel) at its deadline."""
    server, client = (dict(x) for x in pair)
    (server if role == "server" else client)["stuck"] = how
    return server, client


def test_a_stuck_side_outranks_what_it_printed():
    # the lab's hung client: stopped before it connected, its server listened until its deadline. Its output
    # alone looks like a server hung after its banner; the runner saw the client's process stopped
    pair = stuck(both_waiting("h1", "h2"), "client")
    assert (so.side_outcome(pair[0]), so.side_outcome(pair[1])) == ("waiting", "stuck")
    # only at a deadline: an exit is an exit whatever the state was
    assert so.side_outcome(dict(side("h1", "server", "h2", 0, "error", "no_device"), stuck="stopped")) == "exited"


@pytest.mark.parametrize("server, client, blamed", [
    ("waiting", "stuck", ("client", "hung")),
    ("stuck", "silent", ("server", "hung")),
    ("stuck", "exited", ("server", "hung")),
    ("stalled", "stuck", ("client", "hung")),
    ("ok", "stuck", ("client", "hung")),
    ("stuck", "stuck", (None, None)),
])
def test_failed_side_blames_the_stuck_side(server, client, blamed):
    assert so.failed_side(server, client) == blamed


def test_hung_client_before_it_connected_blames_the_client_host():
    records = records_of(mesh_sides(HOSTS, 2, {("h1", "h2", 0): stuck(both_waiting("h1", "h2"), "client")}))
    bad = [r for r in records if r["verdict"] == "error"][0]
    assert bad["cause"] == ("client side on h2: its process was stopped when its deadline came (its peer only "
                            "waited for it)")
    assert bad["fix"] == so.STUCK_FIX
    assert (bad["params"]["failed_side"], bad["params"]["failed_how"]) == ("h2", "hung")
    assert components(records)[0] == [("host", "h2", None, None)]
    # a server wedged in the kernel after its banner: the server's host
    wedged = stuck(hung_server("h1", "h2", banner=True), "server", "stuck in the kernel (uninterruptible sleep)")
    records = records_of(mesh_sides(HOSTS, 2, {("h1", "h2", 0): wedged}))
    assert components(records)[0] == [("host", "h1", None, None)]


def test_error_records_without_side_outcomes_still_read_the_cause():
    rec = {"kind": "rdma_bw", "host": "h4", "peer": "h1", "verdict": "error", "params": {"rail": 0},
           "cause": "server side on h4: No RDMA device is visible"}
    assert loc.error_side(loc.observations_from_records([rec])[0]) == ["h4"]
    # with outcomes, they decide (a cause naming a side is not read)
    rec["params"].update(failed_side=None, failed_how=None)
    assert loc.error_side(loc.observations_from_records([rec])[0]) is None


def test_a_server_that_spoke_is_waiting_even_when_the_role_dropped_its_output():
    # the rdma_perf role keeps sides without their stdout / stderr (they are large): the module's
    # "spoke" says the listen banner was printed, so the server was alive and its client is to blame
    from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import side_runner
    banner = "\n************************************\n* Waiting for client to connect... *\n"
    assert side_runner.spoke(" WARNING: BW peak won't be measured in this run.\n" + banner, "")
    assert not side_runner.spoke(" WARNING: BW peak won't be measured in this run.\n", "")
    server = {"role": "server", "verdict": "error", "timed_out": True, "cmd": ["ib_write_bw"],
              "errors": [{"code": "server_no_client"}], "stdout": "", "stderr": "", "spoke": True}
    client = {"role": "client", "verdict": "error", "timed_out": True, "cmd": ["ib_write_bw", "10.0.0.1"],
              "errors": [{"code": "client_timeout"}], "stdout": "", "stderr": "", "spoke": False}
    assert so.side_outcome(server) == so.WAITING and so.side_outcome(client) == so.SILENT
    assert so.side_outcome(dict(server, spoke=False)) == so.SILENT
