# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
name: parse_perftest
short_description: Parse the console output of perftest (ib_write_bw, ib_read_lat, ...)
version_added: 1.0.0
description:
  - Reads what a perftest tool (C(ib_write_bw), C(ib_read_bw), C(ib_send_bw), C(ib_atomic_bw) and the
    C(_lat) variants) printed, server or client side, and returns the test type, the header settings,
    the QP address lines, the result rows and the errors with a likely cause and a fix.
  - Bandwidth is always returned in Gb/s (10^9 bit/s). perftest's C(MB/sec) and C(MiB/sec) columns are
    MiB/s and are converted; C(Gb/sec) columns (C(--report_gbits)) are kept. The unit is read from the
    table header, never guessed from magnitudes. Latency is returned in microseconds.
  - Tolerates shell prompts and wrapped command lines, launcher prefixes (C(mpirun --tag-output),
    C(srun --label)), indentation, tabs, CPU-frequency warnings inside the table, the server's waiting
    banner, C(Connected:) / C(Completed:) / C(Total run time) trailers and truncated output.
  - Never fails on odd input; what cannot be read is reported in C(errors) and C(warnings).
extends_documentation_fragment:
  - clusterops.commcheck.tool_output.pasted_text
options:
  _input:
    description: perftest output (stdout, or stdout and stderr merged), as a string or a list of lines.
    type: raw
    required: true
'''

EXAMPLES = r'''
- name: Run the client side of an RDMA write bandwidth test
  ansible.builtin.command:
    argv: [ib_write_bw, -d, mlx5_0, --report_gbits, -F, 10.0.0.1]
  register: client
  changed_when: false

- name: Show the average bandwidth of the largest message size
  ansible.builtin.debug:
    msg: "{{ (client.stdout | clusterops.commcheck.parse_perftest).rows | map(attribute='bw_avg_gbps') | last }} Gb/s"

- name: Fail with perftest's likely cause and fix
  ansible.builtin.fail:
    msg: "{{ result.errors[0].code }}: {{ result.errors[0].cause }} -> {{ result.errors[0].fix }}"
  vars:
    result: "{{ (client.stdout ~ '\n' ~ client.stderr) | clusterops.commcheck.parse_perftest }}"
  when: result.errors | length > 0
'''

RETURN = r'''
_value:
  description: What was read from the output.
  type: dict
  contains:
    test:
      description: Verb under test, C(write), C(read), C(send), C(atomic), or null when unknown.
      type: str
    metric:
      description: C(bw) or C(lat), or null when unknown.
      type: str
    bidirectional:
      description: Whether the banner says C(Bidirectional) (C(-b)).
      type: bool
    side:
      description: C(server) (waiting banner), C(client) (results or client-only errors), or null.
      type: str
    verb:
      description: perftest's own verb name from the banner (for example C(RDMA_Write)).
      type: str
    atomic_type:
      description: C(FETCH_AND_ADD) or C(CMP_AND_SWAP) for atomic tests.
      type: str
    banner:
      description: The banner line, for example C(RDMA_Write Bidirectional BW Test).
      type: str
    command:
      description: The first perftest command line found in the text (prompt line), if any.
      type: str
    settings:
      description:
        - Every header field, snake_cased (C(number_of_qps), C(cq_moderation), C(outstand_reads),
          C(max_inline_data), C(tx_depth), C(lock_free), C(cpu_freq_mhz), ...). C(ON)/C(OFF) become
          booleans, numbers become numbers, C(N[B]) becomes N bytes.
        - Always has C(device), C(qps) (int), C(transport_type), C(connection_type), C(mtu) (int bytes),
          C(link_type) (C(IB) or C(Ethernet)), C(gid_index) (int or null) and C(rdma_cm) (bool, or null
          when the header was not printed).
      type: dict
    local_addresses:
      description: One dict per C(local address) line (C(lid), C(qpn), C(psn), C(rkey), C(vaddr), C(out)
        as printed, and C(gid), C(gid_ip), C(gid_ipv4) from the following C(GID) line).
      type: list
      elements: dict
    remote_addresses:
      description: Same as I(local_addresses) for the C(remote address) lines.
      type: list
      elements: dict
    columns:
      description: The result table's column names as printed.
      type: list
      elements: str
    bw_unit:
      description: The bandwidth unit of the table header (C(MB/sec), C(MiB/sec) or C(Gb/sec)).
      type: str
    time_unit:
      description: The latency unit (C(usec), or C(cycles) with C(-C)).
      type: str
    duration_mode:
      description: Latency table in duration form (C(-D)), where only C(t_avg_us) and C(tps) are set.
      type: bool
    peak_measured:
      description: False when perftest said the BW peak is not measured (C(-N), C(-D)); then C(bw_peak_gbps) is null.
      type: bool
    gpu_memory:
      description: C(cuda) or C(rocm) when the test used GPU buffers, else null.
      type: str
    rows:
      description:
        - For C(bw) tests C(bytes), C(iterations), C(bw_peak_gbps), C(bw_avg_gbps), C(msg_rate_mpps)
          (plus C(sl), C(bw_port1_gbps), C(msg_rate_port1_mpps), ... and C(cpu_util_pct) when printed).
        - For C(lat) tests C(bytes), C(iterations), C(t_min_us), C(t_max_us), C(t_typical_us), C(t_avg_us),
          C(t_stdev_us), C(p99_us), C(p99_9_us), C(tps); values perftest did not print are null.
      type: list
      elements: dict
    errors:
      description: One entry per error kind, in order of first appearance, with C(code) (for example
        C(no_device), C(port_down), C(mr_alloc_failed), C(connect_failed), C(exchange_failed),
        C(resources_failed), C(unknown)), C(message) (the first line), C(cause), C(fix), C(evidence)
        (all matching lines) and C(detail) (extra advice or null).
      type: list
      elements: dict
    warnings:
      description: CPU-frequency warnings, MTU adjustments, BW-peak and duration-mode notes, the warnings
        libraries print (for example libibverbs and mlx4 on SR-IOV pods) and lines no rule knows that report
        a problem; none of them makes C(ok) false. An error-looking line no rule knows is an C(unknown) error
        only when no result table was read. A text from which nothing was read says so in a warning that quotes its first line.
      type: list
      elements: str
    connected_at:
      description: The C(Connected:) time newer perftest prints, as text.
      type: str
    completed_at:
      description: The C(Completed:) time newer perftest prints, as text.
      type: str
    total_run_time_s:
      description: The C(Total run time) newer perftest prints, in seconds.
      type: float
    ok:
      description: True when result rows were read and there is no error.
      type: bool
'''

from ansible_collections.clusterops.commcheck.plugins.plugin_utils.filter_input import filter_module
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_perftest import parse_perftest

FilterModule = filter_module("parse_perftest", parse_perftest)
