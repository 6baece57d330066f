# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The inventory checked before a run tests anything: each test host is one machine of its own (pure).

An inventory name is a label: records, reports and the history keep it as it
is; peers reach a host by its address (``commcheck_address`` /
``commcheck_tcp_address``, else ``ansible_host``, else the name itself).
Before anything runs (:func:`inventory_problems`): a name no record can
carry (control characters), an address that is not one (a name with a space
used as the address), a loopback address on a host that has peers, and two
inventory names that share an address are refused. Right after discovery
(:func:`discovery_problems`): two names whose rails share an IPv4 address,
and two names whose discovery read one machine (the same boot id and host
name), are refused. Each problem names the hosts, the address or machine,
and what to fix.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import ipaddress

from ansible_collections.clusterops.commcheck.plugins.module_utils.options import option_rules

NAME_MAX = 255
# (what the address is used for, the variables that give it, in order; the inventory name comes last)
ADDRESS_KINDS = (
    ("RDMA and collective address", ("commcheck_address", "ansible_host")),
    ("TCP address", ("commcheck_tcp_address", "ansible_host")),
)
ADDRESS_VARIABLES = ("commcheck_address", "commcheck_tcp_address", "ansible_host")
OPTION_VARIABLES = ("commcheck_address", "commcheck_tcp_address")
RDMA_ADDRESS, TCP_ADDRESS = (kind for kind, _variables in ADDRESS_KINDS)
LOOPBACK_NAMES = ("localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback")
SHOWN_HOSTS = 10
# What discovery reads of a machine (host_facts.machine_identity): one kernel, one network stack; the
# host name stands in for the network namespace where that could not be read.
IDENTITY_KEYS = ("boot_id", "netns")
FALLBACK_IDENTITY_KEYS = ("boot_id", "hostname")


def name_problems(names):
    """One problem per inventory name that no record, report or message may carry (control characters)."""
    problems = []
    for name in names:
        try:
            option_rules.check_text("inventory host name", name, NAME_MAX)
        except option_rules.OptionError as exc:
            problems.append("%s: rename the host in the inventory (a name is only a label; ansible_host "
                            "gives its address)" % exc)
    return problems


def host_address(name, variables, kind_variables):
    """(address, where it comes from) of one host: the first variable of kind_variables set, else the name."""
    for variable in kind_variables:
        value = variables.get(variable)
        if value not in (None, ""):
            return value, variable
    return name, "its inventory name"


def address_key(address):
    """The form two spellings of one address share (case, a trailing dot, IPv6 zeros)."""
    text = str(address).strip().lower().rstrip(".")
    try:
        return str(ipaddress.ip_address(text))
    except ValueError:
        return text


def is_loopback(address):
    key = address_key(address)
    if key in LOOPBACK_NAMES or key.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(key).is_loopback
    except ValueError:
        return False


def _shown(hosts):
    hosts = list(hosts)
    text = ", ".join(option_rules.show(h, 80) for h in hosts[:SHOWN_HOSTS])
    return text + (" and %d more" % (len(hosts) - SHOWN_HOSTS) if len(hosts) > SHOWN_HOSTS else "")


def _address_variable(kind):
    return "commcheck_tcp_address" if kind.startswith("TCP") else "commcheck_address"


def unusable_address_problem(name, address, source, kind, has_peers=True):
    """A problem when a host's address cannot reach it (not an address; a loopback one with peers), else None."""
    if not option_rules.is_host(address):
        if source == "its inventory name":
            return ("host %s has no ansible_host or %s, so its inventory name would be its %s, and it is not a "
                    "host name or an IP address: set ansible_host (the name stays a label in the records)"
                    % (option_rules.show(name, 80), _address_variable(kind), kind))
        return ("host %s: %s %s (its %s) is not a host name or an IP address"
                % (option_rules.show(name, 80), source, option_rules.show(address, 80), kind))
    if has_peers and is_loopback(address):
        return ("host %s: %s %s (its %s) is a loopback address: a peer would reach itself there; set %s to an "
                "address its peers reach it at" % (option_rules.show(name, 80), source,
                                                   option_rules.show(address, 80), kind, _address_variable(kind)))
    return None


def shared_address_problems(addresses):
    """Problems for addresses two or more hosts share.

    addresses: [(host, address, source, kind)]. One problem per shared
    address, listing its hosts and what each one's address came from.
    """
    by_key = {}
    for host, address, source, kind in addresses:
        by_key.setdefault(address_key(address), []).append((host, address, source, kind))
    problems = []
    for entries in by_key.values():
        hosts = []
        for entry in entries:
            if entry[0] not in hosts:
                hosts.append(entry[0])
        if len(hosts) < 2:
            continue
        kinds = sorted(set(entry[3] for entry in entries))
        sources = sorted(set(entry[2] for entry in entries))
        problems.append(
            "hosts %s share the address %s (%s, as their %s): two inventory names that reach one machine would "
            "test it against itself; remove the extra name from the inventory or the target, or give each host "
            "its own address" % (_shown(hosts), option_rules.show(entries[0][1], 80), " / ".join(sources),
                                 " and ".join(kinds)))
    return problems


def inventory_problems(hosts, play_values=None, kinds=None):
    """Everything wrong with the test hosts of a run before anything runs (a list of messages).

    hosts: {inventory name: {variable: value}} with the host's own (templated)
    ``commcheck_address``, ``commcheck_tcp_address`` and ``ansible_host``
    where set. play_values: those variables where the play, a role or the
    extra vars set them for every host (a host's own value wins). kinds: the
    address kinds (of ``ADDRESS_KINDS``) the run's checks use; all by default.
    A value of ``commcheck_address`` / ``commcheck_tcp_address`` that is no
    address is the option check's to refuse (role_options), not repeated here.
    """
    play_values = dict(play_values or {})
    address_kinds = [k for k in ADDRESS_KINDS if kinds is None or k[0] in kinds]
    problems = name_problems(hosts)
    addresses = []
    refused = set()
    found = []
    for name, own in hosts.items():
        if option_rules.CONTROL_CHARACTERS.search(str(name)):
            continue
        variables = dict(play_values)
        variables.update(dict((k, v) for k, v in (own or {}).items() if v not in (None, "")))
        for kind, kind_variables in address_kinds:
            found.append((name, kind) + host_address(name, variables, kind_variables))
    # Hosts that all sit on distinct loopback addresses are processes of one machine (one node's pods): they
    # reach each other there. A loopback address among peers elsewhere is one a peer would reach itself at.
    has_peers = len(hosts) > 1 and not all(is_loopback(address) for _n, _k, address, _s in found)
    for name, kind, address, source in found:
        problem = unusable_address_problem(name, address, source, kind, has_peers=has_peers)
        if problem and source in OPTION_VARIABLES and not is_loopback(address):
            continue
        if problem:
            if (name, address) not in refused:
                refused.add((name, address))
                problems.append(problem)
            continue
        addresses.append((name, address, source, kind))
    return problems + shared_address_problems(addresses)


def identity_key(identity):
    """What two names reaching one machine share (boot id and network namespace, else host name), or None."""
    identity = identity or {}
    for keys in (IDENTITY_KEYS, FALLBACK_IDENTITY_KEYS):
        key = tuple(identity.get(k) for k in keys)
        if all(key):
            return key
    return None


def same_machine_problems(identities):
    """Problems for inventory names whose discovery read one machine.

    identities: {host: {boot_id, netns, hostname, machine_id}} (host_facts.machine_identity).
    The boot id is the running kernel's; network namespaces (and containers)
    of one kernel are separate hosts to their peers, so two names reach one
    machine when their boot id and network namespace are the same (the host
    name of their UTS namespace where the namespace is unknown). A host whose
    identity is unknown is not compared.
    """
    by_key = {}
    for host, identity in identities.items():
        key = identity_key(identity)
        if key:
            by_key.setdefault(key, []).append(host)
    problems = []
    for hosts in by_key.values():
        if len(hosts) < 2:
            continue
        identity = identities[hosts[0]] or {}
        seen = ", ".join("%s %s" % (label, option_rules.show(identity[key], 80)) for key, label in (
            ("hostname", "host name"), ("boot_id", "boot id"), ("netns", "network namespace"),
            ("machine_id", "machine id")) if identity.get(key))
        problems.append(
            "hosts %s are one machine (%s): each check would test it against itself; remove the extra name from "
            "the inventory or the target" % (_shown(hosts), seen))
    return problems


def rail_address_problems(rails):
    """Problems for rails of different hosts that share an IPv4 address (rails: {host: [{rail, address}]})."""
    addresses = []
    for host, host_rails in rails.items():
        for rail in host_rails or []:
            if rail.get("address"):
                addresses.append((host, rail["address"], "discovered", "rail %s address" % rail.get("rail", 0)))
    by_rail = {}
    for entry in addresses:
        by_rail.setdefault(entry[3], []).append(entry)
    problems = []
    for kind in sorted(by_rail):
        problems += shared_address_problems(by_rail[kind])
    return problems


def discovery_problems(identities, rails=None):
    """What discovery shows wrong with the test hosts: one machine behind two names, a shared rail address."""
    return same_machine_problems(identities or {}) + rail_address_problems(rails or {})


SHOWN_GROUPS = 20


def target_problem(pattern, matched, group_sizes, limit=None):
    """A message when the run's host pattern matched no host (None when it matched some).

    group_sizes: {group: number of hosts} of the inventory (``all`` and
    ``ungrouped`` left out of the list); at most SHOWN_GROUPS are named.
    """
    if matched:
        return None
    groups = sorted((g, n) for g, n in group_sizes.items() if g not in ("all", "ungrouped"))
    shown = ", ".join("%s (%d host%s)" % (g, n, "" if n == 1 else "s") for g, n in groups[:SHOWN_GROUPS])
    if len(groups) > SHOWN_GROUPS:
        shown += " and %d more" % (len(groups) - SHOWN_GROUPS)
    return ("no hosts matched commcheck_target=%s%s: nothing would be checked, so the run stops here. The "
            "inventory has %d host(s) and the groups: %s. Set commcheck_target to a group or host pattern "
            "of the inventory that has hosts" % (
                option_rules.show(pattern, 200), " within --limit %s" % option_rules.show(limit, 200) if limit else "",
                group_sizes.get("all", 0), shown or "none"))
