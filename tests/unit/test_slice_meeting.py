# -*- coding: utf-8 -*-
"""Slices of one run meet in a shared directory: posts, waiting, merging, refusals (injected clock, no real waits)."""
import json
import os
import threading

import pytest

from ansible_collections.clusterops.commcheck.plugins.plugin_utils.pair_engine import share
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import slice_meeting as sm

RAILS_A = {"rails": {"h1": [{"rail": 0}], "h2": [{"rail": 0}]}}
RAILS_B = {"rails": {"h10": [{"rail": 0}], "h3": [{"rail": 0}]}}


class FakeClock(object):
    """time only moves when the meeting sleeps; ``on_sleep`` lets a test make another slice arrive."""

    def __init__(self, on_sleep=None):
        self.now, self.sleeps, self.on_sleep = 0.0, 0, on_sleep

    def clock(self):
        return self.now

    def sleep(self, seconds):
        self.sleeps += 1
        self.now += seconds
        if self.on_sleep:
            self.on_sleep(self.sleeps)


def test_one_slice_touches_nothing_and_returns_its_own_facts(tmp_path):
    met = sm.meet(str(tmp_path / "never"), "run-1", "rdma-rails", 1, ["h1", "h2"], RAILS_A)
    assert met == {"hosts": ["h1", "h2"], "facts": RAILS_A, "unreachable": [], "own": ["h1", "h2"],
                   "leader": True, "slices": 1}
    assert not (tmp_path / "never").exists()


def test_the_second_slice_to_arrive_sees_both_without_waiting(tmp_path):
    clock = FakeClock()
    folder = sm.meeting_dir(str(tmp_path), "run-1", "rdma-rails")
    os.makedirs(folder)
    other = {"schema": 1, "hosts": ["h3", "h10"], "facts": RAILS_B, "unreachable": ["h11"]}
    with open(os.path.join(folder, sm.slice_name(["h3", "h10"]) + ".json"), "w") as handle:
        json.dump(other, handle)
    met = sm.meet(str(tmp_path), "run-1", "rdma-rails", 2, ["h2", "h1"], RAILS_A, clock=clock.clock, sleep=clock.sleep)
    assert clock.sleeps == 0
    assert met["hosts"] == ["h1", "h2", "h3", "h10"]            # natural order, whatever each slice's order
    assert met["facts"]["rails"] == dict(RAILS_A["rails"], **RAILS_B["rails"])
    assert met["unreachable"] == ["h11"] and met["own"] == ["h2", "h1"] and met["slices"] == 2
    # exactly one of the two slices leads (publishes the records of no host)
    leader_name = min(sm.slice_name(["h1", "h2"]), sm.slice_name(["h3", "h10"]))
    assert met["leader"] == (leader_name == sm.slice_name(["h1", "h2"]))


def test_the_first_slice_waits_until_the_other_posts(tmp_path):
    def other_arrives(sleeps):
        if sleeps == 3:
            with open(os.path.join(sm.meeting_dir(str(tmp_path), "r1", "s"), "b.json"), "w") as handle:
                json.dump({"hosts": ["h3"], "facts": {"rails": {"h3": []}}}, handle)
    clock = FakeClock(other_arrives)
    met = sm.meet(str(tmp_path), "r1", "s", 2, ["h1"], {"rails": {"h1": []}}, wait=60,
                  clock=clock.clock, sleep=clock.sleep)
    assert clock.sleeps == 3 and met["hosts"] == ["h1", "h3"]


def test_two_real_slices_in_threads_meet_and_agree(tmp_path):
    results = {}

    def run(name, hosts, facts):
        results[name] = sm.meet(str(tmp_path), "run-t", "sides", 2, hosts, facts, wait=3600)
    threads = [threading.Thread(target=run, args=("a", ["h1", "h2"], RAILS_A)),
               threading.Thread(target=run, args=("b", ["h3", "h10"], RAILS_B))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results["a"]["hosts"] == results["b"]["hosts"] == ["h1", "h2", "h3", "h10"]
    assert results["a"]["facts"] == results["b"]["facts"]
    assert results["a"]["leader"] != results["b"]["leader"]


def test_a_missing_slice_fails_after_the_wait_naming_how_many_came(tmp_path):
    clock = FakeClock()
    with pytest.raises(sm.SliceMeetingError, match=r"only 1 of 3 slices reached step rdma-rails of run r1 within 30 s"):
        sm.meet(str(tmp_path), "r1", "rdma-rails", 3, ["h1"], {}, wait=30, clock=clock.clock, sleep=clock.sleep)
    assert clock.now >= 30


def test_a_run_id_used_twice_is_refused_at_the_first_meeting(tmp_path):
    folder = sm.meeting_dir(str(tmp_path), "r1", "s")
    os.makedirs(folder)
    with open(os.path.join(folder, sm.slice_name(["h1"]) + ".json"), "w") as handle:
        json.dump({"hosts": ["h1"]}, handle)
    with pytest.raises(sm.SliceMeetingError, match="already met at step s of run r1"):
        sm.meet(str(tmp_path), "r1", "s", 2, ["h1"], {}, wait=5)


def test_more_slices_than_announced_and_overlapping_slices_are_refused(tmp_path):
    folder = sm.meeting_dir(str(tmp_path), "r1", "s")
    os.makedirs(folder)
    for name, hosts in (("x", ["h5"]), ("y", ["h6"])):
        with open(os.path.join(folder, name + ".json"), "w") as handle:
            json.dump({"hosts": hosts}, handle)
    with pytest.raises(sm.SliceMeetingError, match="3 slices met at step s of run r1, 2 expected"):
        sm.meet(str(tmp_path), "r1", "s", 2, ["h1"], {}, wait=5)
    folder = sm.meeting_dir(str(tmp_path), "r2", "s")
    os.makedirs(folder)
    with open(os.path.join(folder, "x.json"), "w") as handle:
        json.dump({"hosts": ["h1", "h9"]}, handle)
    with pytest.raises(sm.SliceMeetingError, match="host h1 is in two slices"):
        sm.meet(str(tmp_path), "r2", "s", 2, ["h1"], {}, wait=5)


@pytest.mark.parametrize("directory, run_id, step, message", [
    ("relative/dir", "r1", "s", "must be absolute|relative"),
    ("/tmp/a/../etc", "r1", "s", r"\.\."),
    ("/tmp/a\nb", "r1", "s", "line break|control"),
    ("", "r1", "s", "empty|not set"),
    ("/tmp/ok", "../r1", "s", "is not one"),
    ("/tmp/ok", "a/b", "s", "is not one"),
    ("/tmp/ok", "-r", "s", "is not one"),
    ("/tmp/ok", "", "s", "is not one"),
    ("/tmp/ok", None, "s", "is not one"),
    ("/tmp/ok", "r1", "../x", "bad meeting step"),
    ("/tmp/ok", "r1", "S/1", "bad meeting step"),
])
def test_paths_never_leave_the_directory_named(directory, run_id, step, message):
    with pytest.raises((sm.SliceMeetingError, ValueError), match=message):
        sm.meet(directory, run_id, step, 2, ["h1"], {}, wait=1)


@pytest.mark.parametrize("slices", [0, -1, sm.SLICES_MAX + 1, "2", 1.5, True])
def test_slice_count_has_a_range(tmp_path, slices):
    with pytest.raises(sm.SliceMeetingError, match="commcheck_slices must be 1 to"):
        sm.meet(str(tmp_path), "r1", "s", slices, ["h1"], {})


def test_a_slice_without_hosts_is_refused_but_a_run_of_one_goes_on(tmp_path):
    with pytest.raises(sm.SliceMeetingError, match="no reachable host of the check at step s"):
        sm.meet(str(tmp_path), "r1", "s", 2, [], {})
    # one controller whose chosen hosts are all unreachable still judges them (as unreachable)
    met = sm.meet(str(tmp_path), "r1", "s", 1, [], {"rails": {}}, unreachable=["h2", "h1"])
    assert met["hosts"] == [] and met["unreachable"] == ["h2", "h1"]


def test_each_slice_publishes_its_hosts_records_and_the_leader_the_rest():
    records = [{"host": "h1"}, {"host": "h3"}, {"host": "fleet"}, {"host": "h11"}]
    fleet = ["h1", "h2", "h3"]
    mine = sm.my_share(records, ["h1", "h2"], fleet, leader=True)
    theirs = sm.my_share(records, ["h3"], fleet, leader=False)
    assert mine == [{"host": "h1"}, {"host": "fleet"}, {"host": "h11"}]
    assert theirs == [{"host": "h3"}]
    assert sorted(r["host"] for r in mine + theirs) == sorted(r["host"] for r in records)


def test_the_share_keeps_everything_in_a_run_of_one_slice():
    records = [{"host": "h1"}, {"host": "h3"}, "not a record"]
    assert share(records, {"slices": 1, "own": ["h1"], "hosts": ["h1", "h3"], "leader": True}) == \
        [{"host": "h1"}, {"host": "h3"}]
    assert share(records, {"slices": 2, "own": ["h3"], "hosts": ["h1", "h3"], "leader": False}) == \
        [{"host": "h3"}]


def test_fleet_facts_reads_a_variable_or_a_key_inside_one_and_takes_the_missing_value():
    from ansible_collections.clusterops.commcheck.plugins.plugin_utils.host_vars import plain, read_var
    host_vars = {"rails": [{"rail": 0}], "ansible_facts": {"commcheck_rdma": {"devices": ["mlx5_0"]}}, "none": None}
    assert read_var(host_vars, "rails") == [{"rail": 0}]
    assert read_var(host_vars, "ansible_facts.commcheck_rdma") == {"devices": ["mlx5_0"]}
    assert read_var(host_vars, "ansible_facts.missing", {}) == {}
    assert read_var(host_vars, "rails.0", "x") == "x"            # a list is not walked by name
    assert read_var(host_vars, "none", []) == []
    assert read_var(host_vars, "nothing") is None
    assert plain({"a": (1, 2), "b": object}) == {"a": [1, 2], "b": str(object)}


def test_fleet_facts_takes_values_derived_for_all_hosts_beside_the_variables_it_reads():
    from ansible_collections.clusterops.commcheck.plugins.action.fleet_facts import gather
    hostvars = {"h1": {"rails": [{"rail": 0}]}, "h2": {}}
    got = gather(hostvars, ["h1", "h2", "h3"], {"rails": "rails"},
                 {"counters": {"h1": {"records": [1]}, "h2": None}}, {"rails": [], "counters": {}})
    assert got == {"rails": {"h1": [{"rail": 0}], "h2": [], "h3": []},
                   "counters": {"h1": {"records": [1]}, "h2": {}, "h3": {}}}
    with pytest.raises(ValueError, match="values.counters must map hosts to values, got list"):
        gather(hostvars, ["h1"], {}, {"counters": [{}]}, {})
    # a name in both: a host's given value wins, the others' variables are read
    hostvars["h2"] = {"rails": [{"rail": 5}]}
    got = gather(hostvars, ["h1", "h2", "h3"], {"rails": "rails"}, {"rails": {"h1": [{"rail": 1}], "h2": None}},
                 {"rails": []})
    assert got == {"rails": {"h1": [{"rail": 1}], "h2": [{"rail": 5}], "h3": []}}
    with pytest.raises(ValueError, match="facts.rails must name a variable"):
        gather(hostvars, ["h1"], {"rails": ""}, {}, {})


def test_fleet_facts_reads_the_first_variable_a_host_has_and_tags_list_items_with_their_host():
    """The sides of a pipelined run are the module result's; a host whose run was skipped (a skipped
    result has no sides) or that ran round by round has them in the variable its rounds built."""
    from ansible_collections.clusterops.commcheck.plugins.action.fleet_facts import gather
    pipelined = {"job": {"sides": [{"round": 0, "rail": 0}], "changed": False}, "sides": []}
    rounds = {"job": {"skipped": True}, "sides": [{"round": 0}, {"round": 1, "host": "stale"}]}
    hostvars = {"h1": pipelined, "h2": rounds, "h3": {"job": {"sides": None}, "sides": None}}
    got = gather(hostvars, ["h1", "h2", "h3", "h4"], {"sides": ["job.sides", "sides"]}, {}, {"sides": []},
                 host_field={"sides": "host"})
    assert got == {"sides": {"h1": [{"round": 0, "rail": 0, "host": "h1"}],
                             "h2": [{"round": 0, "host": "h2"}, {"round": 1, "host": "h2"}],
                             "h3": [], "h4": []}}
    assert pipelined["job"]["sides"] == [{"round": 0, "rail": 0}]          # the host's own variable is untouched
    with pytest.raises(ValueError, match="facts.sides must name a variable or list variables"):
        gather(hostvars, ["h1"], {"sides": ["job.sides", 3]}, {}, {})
    with pytest.raises(ValueError, match="facts.sides must name a variable or list variables"):
        gather(hostvars, ["h1"], {"sides": []}, {}, {})
    with pytest.raises(ValueError, match="host_field.rails must be a key name for a result named in facts or values"):
        gather(hostvars, ["h1"], {"sides": "sides"}, {}, {}, host_field={"rails": "host"})
    with pytest.raises(ValueError, match="host_field.sides must be a key name"):
        gather(hostvars, ["h1"], {"sides": "sides"}, {}, {}, host_field={"sides": ""})


class _HostVars(dict):
    """hostvars as Ansible gives them: raw_get returns a host's variables untemplated, [] a templating view."""

    def __init__(self, raw, rendered):
        super(_HostVars, self).__init__(rendered)
        self.raw = raw
        self.templated = []

    def raw_get(self, host):
        return self.raw[host]

    def __getitem__(self, host):
        self.templated.append(host)
        return dict.__getitem__(self, host)


def test_fleet_facts_takes_values_without_templates_as_they_are_and_templates_the_rest():
    from ansible_collections.clusterops.commcheck.plugins.action.fleet_facts import gather
    result = {"sides": [{"round": 0, "msg": "ok"}], "changed": False}
    raw = {"h1": {"job": result, "addr": "10.0.0.1"},
           "h2": {"job": "{{ other_job }}", "addr": "{{ ansible_host }}"},       # set by templates
           "h3": {"job": {"sides": [{"round": 0, "note": "{% raw %}x{% endraw %}"}]}},
           "h4": {"job": {"sides": None}, "sides": [{"round": 1}]},
           "h5": {"job": {"skipped": True}, "addr": None}}
    rendered = {"h1": raw["h1"], "h2": {"job": {"sides": [{"round": 3}]}, "addr": "10.0.0.2"},
                "h3": {"job": {"sides": [{"round": 0, "note": "x"}]}}, "h4": raw["h4"], "h5": raw["h5"]}
    hostvars = _HostVars(raw, rendered)
    got = gather(hostvars, ["h1", "h2", "h3", "h4", "h5"], {"sides": ["job.sides", "sides"], "addr": "addr"}, {},
                 {"sides": [], "addr": "none"})
    assert got == {"sides": {"h1": [{"round": 0, "msg": "ok"}], "h2": [{"round": 3}],
                             "h3": [{"round": 0, "note": "x"}], "h4": [{"round": 1}], "h5": []},
                   "addr": {"h1": "10.0.0.1", "h2": "10.0.0.2", "h3": "none", "h4": "none", "h5": "none"}}
    # only the hosts whose values hold a template went through templating
    assert sorted(set(hostvars.templated)) == ["h2", "h3"]
