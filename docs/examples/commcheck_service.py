# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A small Python service that runs the commcheck one-click playbook with ansible-runner.

It starts ``ansible_runner.run()`` with the playbook, the history callback
enabled and a run id of its own, then returns what a service needs:

* the run's status and Ansible's host stats (``runner.stats``);
* the summary the report role publishes with ``set_stats``
  (``commcheck_summary``, from the ``playbook_on_stats`` event's artifact data);
* the run's records and its summary line, read back from the history with
  the collection's Python API, plus the failing and regressed checks.

Usage::

    python3 commcheck_service.py -i inventory.yml --history-dir /var/lib/commcheck/history \\
        --private-data-dir /var/lib/commcheck/runner -e commcheck_checks='["discover","rdma"]'

Needs ansible-runner and the collection installed (or ANSIBLE_COLLECTIONS_PATH
pointing at it); the history API is imported from the installed collection.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import argparse
import json
import os
import sys
import uuid

import ansible_runner

DEFAULT_PLAYBOOK = "clusterops.commcheck.commcheck"
HISTORY_CALLBACK = "clusterops.commcheck.commcheck_history"


def _history_api():
    """The collection's history module (found through ANSIBLE_COLLECTIONS_PATH or the default paths)."""
    paths = [p for p in os.environ.get("ANSIBLE_COLLECTIONS_PATH", "").split(os.pathsep) if p]
    paths += [os.path.expanduser("~/.ansible/collections"), "/usr/share/ansible/collections"]
    for path in paths:
        if os.path.isdir(os.path.join(path, "ansible_collections", "clusterops", "commcheck")) and path not in sys.path:
            sys.path.insert(0, path)
    from ansible_collections.clusterops.commcheck.plugins.module_utils.records import history  # noqa: E402
    return history


# Files of private_data_dir/env/ that ansible-runner applies over the values of every run that uses the directory.
STALE_ENV_FILES = ("envvars", "extravars")


def run_commcheck(inventory, history_dir, private_data_dir, playbook=DEFAULT_PLAYBOOK, extravars=None,
                  run_id=None, envvars=None, limit=None, forks=None, timeout=None, quiet=True):
    """Run the check and return a JSON-ready dict: status, stats, summary, records, failing, regressions.

    ``inventory``: the path of an inventory file or directory (made absolute; ansible-runner would take any
    other string as the inventory's text), or a dict (the inventory itself). ``private_data_dir`` may be
    shared by every run: nothing of one run's variables is written there for the next one to take.
    """
    run_id = run_id or "svc-%s" % uuid.uuid4().hex[:12]
    history_dir = os.path.abspath(history_dir)
    if not isinstance(inventory, dict):
        inventory = os.path.abspath(inventory)
        if not os.path.exists(inventory):
            raise ValueError("no inventory at %s (ansible-runner would take the path as the inventory's text)"
                             % inventory)
    if not os.path.isdir(private_data_dir):
        os.makedirs(private_data_dir, 0o700)
    for name in STALE_ENV_FILES:
        stale = os.path.join(private_data_dir, "env", name)
        if os.path.exists(stale):
            raise ValueError("remove %s: ansible-runner would apply it over this run's own values" % stale)
    env = {
        # the history callback is a notification callback: it runs beside
        # ansible-runner's own stdout callback (awx_display)
        "ANSIBLE_CALLBACKS_ENABLED": HISTORY_CALLBACK,
        "COMMCHECK_HISTORY_DIR": history_dir,
        "COMMCHECK_RUN_ID": run_id,
    }
    if os.environ.get("ANSIBLE_COLLECTIONS_PATH"):
        env["ANSIBLE_COLLECTIONS_PATH"] = os.environ["ANSIBLE_COLLECTIONS_PATH"]
    env.update(envvars or {})
    # suppress_env_files: ansible-runner would otherwise write envvars and extravars into private_data_dir/env/,
    # and apply them to every later run there (that run's COMMCHECK_RUN_ID, extra variables it does not set)
    kwargs = dict(private_data_dir=private_data_dir, playbook=playbook, inventory=inventory,
                  extravars=dict(extravars or {}), envvars=env, ident=run_id, quiet=quiet, suppress_env_files=True)
    if limit:
        kwargs["limit"] = limit
    if forks:
        kwargs["forks"] = forks
    if timeout:
        kwargs["timeout"] = timeout
    runner = ansible_runner.run(**kwargs)

    # 1. what ansible-runner knows: status, rc and Ansible's per-host stats
    result = {"run_id": run_id, "status": runner.status, "rc": runner.rc, "stats": runner.stats}

    # 2. the summary the report role published with set_stats (artifact data of the stats event)
    summary = None
    for event in runner.events:
        if event.get("event") == "playbook_on_stats":
            summary = (event.get("event_data", {}).get("artifact_data") or {}).get("commcheck_summary")
    result["summary"] = summary

    # 3. the history: this run's records and its summary line
    history = _history_api()
    problems = history.ReadReport()
    records = history.query(history_dir, run_id=run_id, include_summary=True, report=problems)
    result["history_summary"] = next((r for r in records if r.get("kind") == "summary"), None)
    checks = [r for r in records if r.get("kind") not in ("summary", "regression")]
    result["records"] = len(checks)
    result["failing"] = [dict((k, r.get(k)) for k in ("kind", "host", "peer", "verdict", "cause", "fix"))
                         for r in checks if r.get("verdict") in ("fail", "error")]
    result["regressions"] = [dict((k, r.get(k)) for k in ("host", "peer", "params", "metrics", "cause"))
                             for r in records if r.get("kind") == "regression"]
    result["history_problems"] = problems.problems
    return result


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n", maxsplit=1)[0])
    parser.add_argument("-i", "--inventory", required=True)
    parser.add_argument("--history-dir", required=True)
    parser.add_argument("--private-data-dir", required=True)
    parser.add_argument("--playbook", default=DEFAULT_PLAYBOOK)
    parser.add_argument("--run-id")
    parser.add_argument("-l", "--limit")
    parser.add_argument("-e", "--extra-var", action="append", default=[], metavar="NAME=JSON",
                        help="extra variable; the value is parsed as JSON when it can be")
    args = parser.parse_args(argv)
    extravars = {}
    for item in args.extra_var:
        name, _sep, value = item.partition("=")
        try:
            extravars[name] = json.loads(value)
        except ValueError:
            extravars[name] = value
    result = run_commcheck(os.path.abspath(args.inventory), args.history_dir, args.private_data_dir,
                           playbook=args.playbook, extravars=extravars, run_id=args.run_id, limit=args.limit)
    json.dump(result, sys.stdout, indent=2, sort_keys=True, default=str)
    sys.stdout.write("\n")
    return 0 if result["status"] == "successful" else 1


if __name__ == "__main__":
    sys.exit(main())
