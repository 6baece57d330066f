# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type


class ModuleDocFragment(object):
    # The options every pair module (perftest, iperf3) takes from commands/pair_module.py's argument spec and its
    # CPU governor hold, as they behave the same for both; the sides, the tool's options and the defaults that
    # differ (tcp_port, timeout) stay in each module.
    DOCUMENTATION = r'''
options:
  role:
    description:
      - Which side of a single test to run. Mutually exclusive with O(sides); one of the two is required.
    type: str
    choices: [server, client]
  server:
    description:
      - Address (IP or host name, never one that starts with C(-)) of the server side. Required with O(role=client).
    type: str
  connect_retries:
    description:
      - How many more times a client tries again while the server is not listening yet (always within
        O(timeout)); 0 to 100000.
    type: int
    default: 100
  min_fraction:
    description: Share of O(expected_gbps) a bandwidth must reach to pass; above 0, at most 1.
    type: float
    default: 0.9
  fail_on_error:
    description:
      - Fail the task when a side's verdict is V(error) (the tool could not run or did not finish).
        A V(fail) verdict (it ran, and was slow) never fails the task. The roles set this to false and
        analyse every result.
    type: bool
    default: true
  cpu_governor:
    description:
      - CPU frequency governor (for example V(performance)) every CPU of the host runs at while the sides of this
        task run. The module sets it before the first side starts and restores each CPU's previous governor when
        the sides end, on every path of this module (results, errors, timeouts, SIGTERM, SIGHUP, SIGINT) - also
        when the controller was interrupted, since the module then still runs to the deadlines of its sides.
      - A governor a CPU does not offer fails the task before any side runs. Hosts without cpufreq, or whose
        governor files cannot be written (an unprivileged pod's read-only C(/sys), no right to write), are left alone
        with the C(governor_unmanaged) finding (RV(cpu_governor.unmanaged)). With the kubectl transport the pod's own
        files are switched and put back through C(kubectl exec) where the pod may write them (a privileged pod).
    type: str
attributes:
  check_mode:
    support: full
    description: Builds and validates every command line and returns it; runs nothing (verdict V(skipped)).
'''
