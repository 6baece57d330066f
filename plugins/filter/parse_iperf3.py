# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
name: parse_iperf3
short_description: Parse iperf3 -J output into bandwidth, retransmits, UDP loss, CPU and errors
version_added: 1.0.0
description:
  - Reads the JSON that C(iperf3 -J) prints (client or server side, TCP or UDP, C(-R), C(-P), C(--bidir)) and
    C(--json-stream) event lines, and returns one flat dictionary with bandwidth in Gb/s (10^9 bit/s).
  - Text before or after the JSON (warnings, launcher noise) is tolerated, of several concatenated objects the
    last complete one is used, and truncated JSON or iperf3's own C(error) becomes an C(errors) entry with a
    likely cause and fix instead of a failure.
  - iperf3 3.12 exits 0 with C(-J) even when it could not connect, so check C(ok) and C(errors), not the exit
    status.
extends_documentation_fragment:
  - clusterops.commcheck.tool_output
'''

EXAMPLES = r'''
- name: Measure TCP bandwidth to the peer
  ansible.builtin.command:
    argv: [iperf3, -J, -c, "{{ peer_address }}", -t, "10"]
  register: iperf
  changed_when: false
  failed_when: false

- name: Fail when iperf3 reported an error or fell short
  ansible.builtin.assert:
    that:
      - result.ok
      - result.received_gbps >= 10
    fail_msg: "{{ result.errors | map(attribute='cause') | join('; ') or result.received_gbps }}"
  vars:
    result: "{{ iperf | clusterops.commcheck.parse_iperf3 }}"
'''

RETURN = r'''
_value:
  description: The parsed result.
  type: dict
  contains:
    ok:
      description: True when iperf3 printed end-of-test totals and no error.
      type: bool
    sent_gbps:
      description: Bandwidth of the data stream as sent (C(end.sum_sent), or C(end.sum) for old UDP output), Gb/s.
      type: float
      sample: 19.885541
    received_gbps:
      description: Bandwidth of the data stream as received (C(end.sum_received)), Gb/s.
      type: float
      sample: 19.882346
    retransmits:
      description: TCP retransmits of the sender (null for UDP).
      type: int
    errors:
      description: >-
        Errors as C({code, message, cause, fix}); codes C(connection_refused), C(server_busy), C(no_route),
        C(connect_timeout), C(resolve_failed), C(control_closed), C(listen_failed), C(bind_failed), C(auth_failed),
        C(bad_option), C(interrupted), C(no_output), C(truncated_json), C(invalid_json), C(no_results), C(unknown).
        The C(invalid_json) message quotes the first line of a text from which nothing was read.
      type: list
      elements: dict
    warnings:
      description: Warning lines iperf3 printed outside the JSON, and notes about ignored incomplete JSON.
      type: list
      elements: str
    protocol:
      description: C(TCP), C(UDP) or C(SCTP).
      type: str
    streams:
      description: Number of parallel streams (C(-P)).
      type: int
    duration_s:
      description: Test duration asked for, seconds.
      type: float
    reverse:
      description: True for C(-R) (the server sends).
      type: bool
    bidirectional:
      description: True for C(--bidir).
      type: bool
    bidir_reverse:
      description: With C(--bidir), the reverse direction as C({sent_gbps, received_gbps, retransmits, sent_bytes, received_bytes}).
      type: dict
    role:
      description: C(client) or C(server) (the side that printed the JSON).
      type: str
    remote_host:
      description: The peer's address.
      type: str
    jitter_ms:
      description: UDP jitter, milliseconds.
      type: float
    lost_packets:
      description: UDP packets lost.
      type: int
    lost_percent:
      description: UDP loss, percent.
      type: float
    cpu_host_percent:
      description: CPU use of this host during the test, percent.
      type: float
    cpu_remote_percent:
      description: CPU use of the peer during the test, percent.
      type: float
    interval_gbps:
      description: Bandwidth of each measured reporting interval, Gb/s (the C(--omit) warm-up intervals are left out).
      type: list
      elements: float
'''

from ansible_collections.clusterops.commcheck.plugins.plugin_utils.filter_input import tool_text_filter_module
from ansible_collections.clusterops.commcheck.plugins.module_utils.parsers.parse_iperf3 import parse_iperf3

FilterModule = tool_text_filter_module("parse_iperf3", parse_iperf3)
