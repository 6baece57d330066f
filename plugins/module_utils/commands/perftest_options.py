# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The options of the ``perftest`` module: its argument spec, the keys a side carries and inherits, and the
check of one call (``checked_call``: every side merged over the top-level options, given only those its test
takes, and normalized) before anything runs. The module runs the sides; ``perftest_cmd`` builds their argv.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import pair_module as pm
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands import perftest_cmd as pc
from ansible_collections.clusterops.commcheck.plugins.module_utils.commands.side_options import shell_meta_error
from ansible_collections.clusterops.commcheck.plugins.module_utils.options import option_rules
from ansible_collections.clusterops.commcheck.plugins.module_utils.planning.per_test_options import side_options

SIDE_KEYS = ("role", "peer", "server", "device", "ib_port", "gid_index", "tcp_port", "rail", "step", "round",
             "test", "metric", "expected_gbps", "use_cuda", "use_cuda_dmabuf")
COMMON_KEYS = ("test", "metric", "device", "ib_port", "gid_index", "server", "tcp_port", "size", "all_sizes",
               "iterations", "duration", "lat_iterations", "qps", "bidirectional", "rdma_cm", "mtu", "use_cuda", "extra_args",
               "timeout", "connect_retries", "expected_gbps")


def argument_spec():
    return pm.pair_argument_spec(
        dict(
            test=dict(type="str", choices=list(pc.TESTS), default="write"),
            metric=dict(type="str", choices=list(pc.METRICS), default="bw"),
            device=dict(type="str"),
            ib_port=dict(type="int", default=1),
            gid_index=dict(type="str"),
            rdma_facts=dict(type="dict"),
            sysfs_root=dict(type="path", default="/sys"),
            cpu_governor=dict(type="str"),
            port_counters=dict(type="bool", default=False),
            size=dict(type="int"),
            all_sizes=dict(type="bool", default=False),
            iterations=dict(type="int"),
            duration=dict(type="int"),
            lat_iterations=dict(type="int"),
            qps=dict(type="int"),
            bidirectional=dict(type="bool", default=False),
            rdma_cm=dict(type="bool", default=False),
            mtu=dict(type="int", choices=list(pc.MTUS)),
            use_cuda=dict(type="int"),
            gpu_select=dict(type="str", choices=["given", "closest"], default="given"),
            numa_pin=dict(type="str", choices=["auto", "numactl", "taskset", "none"], default="auto"),
        ),
        dict(
            device=dict(type="str"),
            ib_port=dict(type="int"),
            gid_index=dict(type="str"),
            test=dict(type="str", choices=list(pc.TESTS)),
            metric=dict(type="str", choices=list(pc.METRICS)),
            use_cuda=dict(type="int"),
            use_cuda_dmabuf=dict(type="bool"),
        ),
        tcp_port=18515, timeout=120)


def side_test_options(options, side):
    """The top-level options the side's test takes (planning/per_test_options.py decides)."""
    test = {"test": side.get("test") or options.get("test"), "metric": side.get("metric") or options.get("metric")}
    return side_options("rdma", options, test)


def checked_call(params):
    """``pair_module.checked_call`` with perftest's keys, side check and per-test options (``extra_args`` first)."""
    err = shell_meta_error("extra_args", params.get("extra_args"))
    if err:
        raise option_rules.OptionError(err)
    return pm.checked_call(params, COMMON_KEYS, SIDE_KEYS, pc.normalize, per_test=side_test_options)
