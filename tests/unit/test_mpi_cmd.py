# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Launcher and test-binary argv building (plugins/module_utils/commands/mpi_cmd.py)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import pytest
from hypothesis import given, settings, strategies as st

from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import mpi_cmd
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands.mpi_cmd import MpiCmdError
from property_budget import example_budget


def hosts(*items, slots=1):
    return mpi_cmd.normalize_hosts(list(items), slots)


# ----------------------------------------------------------------- sizes

@pytest.mark.parametrize("text,expected", [
    ("8", 8), (8, 8), ("8K", 8192), ("8k", 8192), ("64M", 64 * 2 ** 20), ("8G", 8 * 2 ** 30),
    (" 32M ", 32 * 2 ** 20), ("1KB", 1024), ("1024", 1024),
])
def test_parse_size(text, expected):
    assert mpi_cmd.parse_size(text) == expected


@pytest.mark.parametrize("text", ["", "0", "-8", "8X", "8 M B", "1.5M", "M", "8;rm", "2T", True, None, "$(id)"])
def test_parse_size_refuses(text):
    with pytest.raises(MpiCmdError):
        mpi_cmd.parse_size(text)


@pytest.mark.parametrize("number,text", [(8, "8"), (8192, "8K"), (3 * 2 ** 20, "3M"), (2 ** 30, "1G"),
                                         (1536, "1536"), (2 ** 20 + 1, "1048577")])
def test_format_size(number, text):
    assert mpi_cmd.format_size(number) == text
    assert mpi_cmd.parse_size(text) == number


@given(st.integers(min_value=1, max_value=2 ** 40))
def test_format_parse_roundtrip(number):
    assert mpi_cmd.parse_size(mpi_cmd.format_size(number)) == number


# ----------------------------------------------------------------- hosts

def test_hosts_strings_dicts_slots_and_ipv6():
    out = mpi_cmd.normalize_hosts(
        ["node1", "node2:8", "10.0.0.3", "[fe80::1]:4", "fe80::2",
         {"address": "10.0.0.9", "slots": 2, "name": "gpu-9"}], 1)
    assert out == [
        {"address": "node1", "slots": 1, "name": "node1"},
        {"address": "node2", "slots": 8, "name": "node2"},
        {"address": "10.0.0.3", "slots": 1, "name": "10.0.0.3"},
        {"address": "fe80::1", "slots": 4, "name": "fe80::1"},
        {"address": "fe80::2", "slots": 1, "name": "fe80::2"},
        {"address": "10.0.0.9", "slots": 2, "name": "gpu-9"},
    ]


@pytest.mark.parametrize("bad", [
    [], "node1", ["-oProxyCommand=id"], ["node 1"], ["node;id"], ["$(id)"], ["a|b"], ["node:0"],
    ["node:x"], ["node1", "node1"], [{"slots": 2}], [{"address": "a", "port": 22}], [42], ["[fe80::1"],
    ["a" * 300], ["node`id`"], ["\nnode"],
])
def test_hosts_refused(bad):
    with pytest.raises(MpiCmdError):
        mpi_cmd.normalize_hosts(bad, 1)


# ---------------------------------------------------------------- env/mca

def test_env_forwarded_sorted_and_stringified():
    assert mpi_cmd.check_env({"NCCL_IB_HCA": "mlx5_0,mlx5_1", "NCCL_IB_GID_INDEX": 3, "UCX_TLS": "tcp",
                              "NCCL_DEBUG": True}) == {
        "NCCL_DEBUG": "1", "NCCL_IB_GID_INDEX": "3", "NCCL_IB_HCA": "mlx5_0,mlx5_1", "UCX_TLS": "tcp"}


@pytest.mark.parametrize("env", [
    {"PATH": "/tmp"}, {"LD_PRELOAD": "/tmp/x.so"}, {"nccl_debug": "INFO"}, {"NCCL_": "x"},
    {"NCCL_DEBUG": "INFO\nX=1"}, {"NCCL_DEBUG": "a\x00b"}, {"NCCL_DEBUG": ["x"]}, {"NCCL DEBUG": "x"},
    {"NCCL_X": "a" * 5000}, "NCCL_DEBUG=INFO",
])
def test_env_refused(env):
    with pytest.raises(MpiCmdError):
        mpi_cmd.check_env(env)


def test_mca_values_stay_one_argv_item():
    mca = mpi_cmd.check_mca({"btl": "^openib", "btl_tcp_if_include": "10.0.0.0/24", "pml_ucx_tls": "rc,ud"})
    assert mca == {"btl": "^openib", "btl_tcp_if_include": "10.0.0.0/24", "pml_ucx_tls": "rc,ud"}


@pytest.mark.parametrize("mca", [{"--prefix": "/x"}, {"Btl": "tcp"}, {"btl tcp": "x"}, {"btl": "tcp\nself"},
                                 {"": "x"}, ["btl", "tcp"], {"btl": "-tcp"}, {"btl": "tcp self"},
                                 {"btl_tcp_if_include": "^-x"}, {"no_such_param": "1"}])
def test_mca_refused(mca):
    with pytest.raises(MpiCmdError):
        mpi_cmd.check_mca(mca)


@pytest.mark.parametrize("key", [
    "plm_rsh_agent", "plm_ssh_agent", "orte_rsh_agent", "pls_rsh_agent", "orte_launch_agent", "prte_launch_agent",
    "plm_rsh_args", "plm_rsh_no_tree_spawn", "orte_prefix", "opal_prefix", "opal_install_dirs_bindir",
    "mca_base_param_files", "mca_base_envar_file_prefix", "orte_fork_agent", "odls_base_sigkill_timeout",
    "btl_tcp_agent", "btl_openib_exec", "mpi_show_mca_params_file", "pml_ucx_path", "btl_openib_prefix",
    "coll_tuned_dynamic_rules_filename", "plm", "orte", "prte", "pmix_server_tmpdir"])
def test_launch_agents_exec_paths_and_prefixes_are_refused_whatever_the_allow_list(key, monkeypatch):
    """Even a key someone put on the allow-list is refused when it names a program, an agent or a location."""
    monkeypatch.setattr(mpi_cmd, "MCA_ALLOWED", mpi_cmd.MCA_ALLOWED + (key,))
    with pytest.raises(MpiCmdError, match="refused"):
        mpi_cmd.check_mca({key: "x"})
    with pytest.raises(MpiCmdError, match="refused"):
        mpi_cmd.check_env({"OMPI_MCA_" + key: "x"})


@pytest.mark.parametrize("name", ["OMPI_MCA_plm_rsh_agent", "PMIX_MCA_plm_rsh_agent", "PRTE_MCA_plm_ssh_agent",
                                  "OMPI_MCA_PLM_RSH_AGENT", "OMPI_MCA_orte_launch_agent", "NCCL_NET_PLUGIN",
                                  "NCCL_DEBUG_FILE", "UCX_MODULE_DIR", "ASCEND_OPP_PATH", "CUDA_HOME",
                                  "LD_PRELOAD", "LD_AUDIT", "LD_LIBRARY_PATH", "PATH", "OMPI_MCA_no_such_param",
                                  "NCCL_TUNER_PLUGIN", "NCCL_TOPO_FILE"])
def test_env_that_loads_code_or_sets_the_launcher_is_refused(name):
    with pytest.raises(MpiCmdError) as err:
        mpi_cmd.check_env({name: "x"})
    assert name in str(err.value)


def test_env_may_set_allowed_mca_parameters_and_common_tuning():
    env = {"OMPI_MCA_btl_tcp_if_include": "eth0", "NCCL_P2P_DIRECT_DISABLE": "1", "NCCL_IB_HCA": "=mlx5_0:1",
           "NCCL_SOCKET_IFNAME": "^docker,lo", "OMPI_ALLOW_RUN_AS_ROOT": "1"}
    assert mpi_cmd.check_env(env) == env


def test_launch_settings_come_only_from_launch_mca():
    assert mpi_cmd.launch_mca(agent="/tmp/commcheck-kubexec/kubexec.sh") == {
        "plm_rsh_agent": "/tmp/commcheck-kubexec/kubexec.sh", "plm_rsh_no_tree_spawn": "1"}
    assert mpi_cmd.launch_mca(ssh_config="/lab/ssh_config") == {"plm_rsh_args": "-F /lab/ssh_config"}
    for bad in ({"agent": "kubexec.sh"}, {"agent": "/a/../b"}, {"agent": "/a b/kubexec.sh"},
                {"ssh_config": "rel/config"}, {"ssh_config": "/a/../b"}, {"ssh_config": "/a b"},
                {"agent": "/a/k.sh", "ssh_config": "/c"}):
        with pytest.raises(MpiCmdError):
            mpi_cmd.launch_mca(**bad)
    pool = hosts("a", "b")
    layout = mpi_cmd.ranks_layout("nccl", pool)
    argv = mpi_cmd.launcher_argv("openmpi", pool, layout, ["prog"], mca={"btl": "tcp,self"},
                                 launch=mpi_cmd.launch_mca(ssh_config="/lab/ssh_config"))
    assert argv[-7:] == ["--mca", "btl", "tcp,self", "--mca", "plm_rsh_args", "-F /lab/ssh_config", "prog"]
    with pytest.raises(MpiCmdError, match="launch setting"):
        mpi_cmd.launcher_argv("openmpi", pool, layout, ["prog"], launch={"orte_launch_agent": "/x"})


@pytest.mark.parametrize("mpirun", ["../bin/mpirun", "bin/mpirun", "-np", "/opt/../bin/mpirun", "mpi run", ""])
def test_mpirun_is_a_name_or_an_absolute_path(mpirun):
    with pytest.raises(MpiCmdError, match="mpirun"):
        mpi_cmd.check_mpirun(mpirun)


# --------------------------------------------------------------- binaries

def test_nccl_argv_matches_nccl_tests_flags():
    params = mpi_cmd.test_params("nccl", "all_reduce", "32M", "8G", 2, 20, 5, 1, None, "sum",
                                 gpus_per_process=8)
    argv = mpi_cmd.binary_argv("/opt/nccl-tests/build/all_reduce_perf", params)
    assert argv == ["/opt/nccl-tests/build/all_reduce_perf", "-b", "32M", "-e", "8G", "-f", "2", "-g", "8",
                    "-n", "20", "-w", "5", "-c", "1", "-d", "float", "-o", "sum"]


def test_nccl_json_flag_and_root_only_where_they_apply():
    params = mpi_cmd.test_params("nccl", "broadcast", "1M", "1M", root=1, datatype="half")
    argv = mpi_cmd.binary_argv("broadcast_perf", params, json_file="/tmp/w/run-1.json")
    assert "-o" not in argv
    assert argv[argv.index("-r") + 1] == "1"
    assert argv[-2:] == ["-J", "/tmp/w/run-1.json"]
    with pytest.raises(MpiCmdError, match="suffix"):
        mpi_cmd.binary_argv("broadcast_perf", params, json_file="/tmp/w/run-1.txt")


def test_hccl_argv_matches_hccl_test_readme():
    # mpirun -f hostfile -n 16 ./bin/all_reduce_test -p 8 -b 8K -e 64M -f 2 -d fp32 -o sum
    params = mpi_cmd.test_params("hccl", "all_reduce", "8K", "64M", 2, 20, 5, 1, "fp32", "sum", gpus_per_node=8)
    argv = mpi_cmd.binary_argv("./bin/all_reduce_test", params)
    assert argv == ["./bin/all_reduce_test", "-p", "8", "-b", "8K", "-e", "64M", "-f", "2", "-n", "20",
                    "-w", "5", "-c", "1", "-d", "fp32", "-o", "sum"]
    with pytest.raises(MpiCmdError):
        mpi_cmd.binary_argv("./bin/all_reduce_test", params, json_file="/tmp/x.json")


@pytest.mark.parametrize("library,operation,binary", [
    ("nccl", "all_reduce", "all_reduce_perf"), ("nccl", "alltoall", "alltoall_perf"),
    ("nccl", "sendrecv", "sendrecv_perf"), ("hccl", "all_gather", "all_gather_test"),
    ("hccl", "alltoallv", "alltoallv_test"), ("hccl", "reduce_scatter", "reduce_scatter_test"),
])
def test_binary_names(library, operation, binary):
    assert mpi_cmd.binary_name(library, operation) == binary
    assert mpi_cmd.binary_path(library, operation, "/opt/bin") == "/opt/bin/" + binary


@pytest.mark.parametrize("call", [
    lambda: mpi_cmd.binary_name("rccl", "all_reduce"),
    lambda: mpi_cmd.binary_name("hccl", "sendrecv"),
    lambda: mpi_cmd.binary_name("nccl", "alltoallv"),
    lambda: mpi_cmd.binary_path("nccl", "all_reduce", "relative/dir"),
    lambda: mpi_cmd.binary_path("nccl", "all_reduce", "/opt/x\n"),
    lambda: mpi_cmd.test_params("nccl", "all_reduce", "64M", "8M"),
    lambda: mpi_cmd.test_params("nccl", "all_reduce", datatype="fp32x"),
    lambda: mpi_cmd.test_params("hccl", "all_reduce", datatype="float"),
    lambda: mpi_cmd.test_params("hccl", "all_reduce", reduce_op="avg"),
    lambda: mpi_cmd.test_params("nccl", "all_reduce", iterations=0),
    lambda: mpi_cmd.test_params("nccl", "all_reduce", iterations="5; id"),
    lambda: mpi_cmd.test_params("nccl", "all_reduce", step_factor=-1),
    lambda: mpi_cmd.test_params("nccl", "all_reduce", check=True),
])
def test_bad_test_parameters(call):
    with pytest.raises(MpiCmdError):
        call()


def test_json_support_detected_from_help():
    new = "USAGE: all_reduce_perf \n\t[-C,--report_cputime <0/1>] \n\t[-J,--output_file <file> write output"
    old = "USAGE: all_reduce_perf \n\t[-C,--report_cputime <0/1>] \n\t[-a,--average <0/1/2/3>]"
    assert mpi_cmd.nccl_json_supported(new)
    assert not mpi_cmd.nccl_json_supported(old)
    assert not mpi_cmd.nccl_json_supported(None)


# --------------------------------------------------------------- launchers

def test_openmpi_argv_seed_workflow():
    # mpirun -np 2 -H a,b ... all_reduce_perf -b 32M -e 8G -f 2 -g 8 with -x NCCL_* and MCA options
    pool = hosts("a", "b", slots=1)
    layout = mpi_cmd.ranks_layout("nccl", pool, gpus_per_node=8, gpus_per_process=8)
    assert layout == {"processes_per_node": 1, "np": 2, "ranks": 16}
    program = ["all_reduce_perf", "-b", "32M", "-e", "8G", "-f", "2", "-g", "8"]
    argv = mpi_cmd.launcher_argv(
        "openmpi", pool, layout, program, mpirun="/usr/bin/mpirun", allow_run_as_root=True,
        env={"NCCL_SOCKET_IFNAME": "bond0", "NCCL_IB_HCA": "mlx5_0", "NCCL_IB_GID_INDEX": 3},
        mca={"btl_tcp_if_include": "bond0", "pml": "ob1"})
    assert argv == ["/usr/bin/mpirun", "--allow-run-as-root", "-np", "2", "-H", "a:1,b:1",
                    "--map-by", "ppr:1:node",
                    "-x", "NCCL_IB_GID_INDEX=3", "-x", "NCCL_IB_HCA=mlx5_0", "-x", "NCCL_SOCKET_IFNAME=bond0",
                    "--mca", "btl_tcp_if_include", "bond0", "--mca", "pml", "ob1"] + program


def test_openmpi_one_process_per_gpu_and_ipv6():
    pool = hosts("[fe80::1]:8", "n2:8")
    layout = mpi_cmd.ranks_layout("nccl", pool, gpus_per_node=8, gpus_per_process=1)
    assert layout == {"processes_per_node": 8, "np": 16, "ranks": 16}
    argv = mpi_cmd.launcher_argv("openmpi", pool, layout, ["x"])
    assert argv[argv.index("-H") + 1] == "[fe80::1]:8,n2:8"
    assert argv[argv.index("--map-by") + 1] == "ppr:8:node"
    assert "--allow-run-as-root" not in argv


def test_mpich_argv_and_hostfile_hccl_readme():
    # mpirun -f hostfile -n 16 ./bin/all_reduce_test -p 8 ...
    pool = hosts("10.78.130.22", "10.78.130.21", slots=8)
    layout = mpi_cmd.ranks_layout("hccl", pool, gpus_per_node=8)
    assert layout["np"] == 16
    argv = mpi_cmd.launcher_argv("mpich", pool, layout, ["./bin/all_reduce_test", "-p", "8"],
                                 env={"HCCL_SOCKET_IFNAME": "eth0"}, hostfile="/tmp/w/hostfile-1")
    assert argv == ["mpirun", "-f", "/tmp/w/hostfile-1", "-n", "16", "-genv", "HCCL_SOCKET_IFNAME", "eth0",
                    "./bin/all_reduce_test", "-p", "8"]
    assert mpi_cmd.hostfile_lines(pool, 8) == ["10.78.130.22:8", "10.78.130.21:8"]


def test_launcher_refusals():
    pool = hosts("a", "b")
    layout = mpi_cmd.ranks_layout("nccl", pool)
    with pytest.raises(MpiCmdError, match="mca"):
        mpi_cmd.launcher_argv("mpich", pool, layout, ["x"], mca={"pml": "ob1"}, hostfile="/h")
    with pytest.raises(MpiCmdError, match="hostfile"):
        mpi_cmd.launcher_argv("mpich", pool, layout, ["x"])
    with pytest.raises(MpiCmdError, match="launcher"):
        mpi_cmd.launcher_argv("slurm", pool, layout, ["x"])
    with pytest.raises(MpiCmdError, match="slot"):
        mpi_cmd.ranks_layout("nccl", hosts("a:2", "b:2"), gpus_per_node=8)
    with pytest.raises(MpiCmdError, match="multiple"):
        mpi_cmd.ranks_layout("nccl", hosts("a:8"), gpus_per_node=8, gpus_per_process=3)


@example_budget(200)
def test_hostile_env_never_becomes_an_option_or_shell(examples):
    """Whatever comes in: refused, or every item lands as one -x NAME=value argument."""
    @settings(max_examples=examples, deadline=None)
    @given(st.dictionaries(st.text(min_size=1, max_size=20), st.text(max_size=40), max_size=4))
    def hostile_env_never_becomes_an_option_or_shell(env):
        pool = hosts("a", "b")
        layout = mpi_cmd.ranks_layout("nccl", pool)
        try:
            argv = mpi_cmd.launcher_argv("openmpi", pool, layout, ["prog"], env=env)
        except MpiCmdError:
            return
        forwarded = [argv[i + 1] for i, item in enumerate(argv) if item == "-x"]
        assert len(forwarded) == len(env)
        for item in forwarded:
            name, dummy, value = item.partition("=")
            assert mpi_cmd.check_env_name(name) == name
            assert env[name] == value
            assert not any(ord(c) < 32 for c in value)
        assert argv[-1] == "prog"
    hostile_env_never_becomes_an_option_or_shell()


def test_topology_file_is_the_one_file_variable_allowed():
    """NCCL_TOPO_FILE (read only, Azure ND topologies) passes with an absolute path; other file variables never do."""
    assert mpi_cmd.check_env({"NCCL_TOPO_FILE": "/opt/microsoft/ndv4-topo.xml"}) == {
        "NCCL_TOPO_FILE": "/opt/microsoft/ndv4-topo.xml"}
    for value in ("topo.xml", "/opt/../etc/shadow", "-x"):
        with pytest.raises(mpi_cmd.MpiCmdError, match="NCCL_TOPO_FILE"):
            mpi_cmd.check_env({"NCCL_TOPO_FILE": value})
    with pytest.raises(mpi_cmd.MpiCmdError, match="NCCL_DEBUG_FILE"):
        mpi_cmd.check_env({"NCCL_DEBUG_FILE": "/tmp/x"})
