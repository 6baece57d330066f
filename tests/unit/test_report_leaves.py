# -*- coding: utf-8 -*-
# Copyright: commcheck contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The report's leaf switches: each host's leaf per rail, from the localization record's topology."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.clusterops.commcheck.plugins.module_utils.records import report_html
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import report_markdown
from ansible_collections.clusterops.commcheck.plugins.module_utils.records import report_model


def _pair(host, peer, rail):
    return {"kind": "rdma_bw", "host": host, "peer": peer, "params": {"op": "write", "rail": rail},
            "metrics": {"bw_gbps": 97.0, "expected_gbps": 100.0}, "verdict": "pass"}


def _localization(topology):
    return {"kind": "localization", "host": "*", "peer": None, "params": {"topology": topology}, "metrics": {},
            "verdict": "pass"}


# rail 1 of h2 on another leaf than rail 0's, h10 after h2 (name order), an InfiniBand leaf without a port; every
# source a leaf is read from (inventory, lldp, smpquery, iblinkinfo, ibnetdiscover) on a cell of its own
TOPOLOGY = {
    "h10": {"0": {"leaf": "LEAF01", "port": "Ethernet8", "source": "inventory"},
            "1": {"leaf": "ib-leaf-9", "port": None, "source": "smpquery"},
            "2": {"leaf": "Quantum Mellanox Technologies", "port": "39", "source": "iblinkinfo"}},
    "h2": {"0": {"leaf": "LEAF01", "port": "Ethernet4", "source": "lldp"},
           "1": {"leaf": "LEAF02", "port": "17", "source": "smpquery"},
           "2": {"leaf": "ib-i1l1s01", "port": "11", "source": "ibnetdiscover"}},
}
RECORDS = [_pair("h2", "h10", 0), _pair("h2", "h10", 1), _localization(TOPOLOGY)]


def _render(render, records):
    return render(records, report_model.summarize(records))


def test_the_view_model_lists_each_hosts_leaf_per_rail_and_each_leafs_hosts():
    leaves = report_model.leaf_table(RECORDS)
    assert (leaves["hosts"], leaves["rails"]) == (["h2", "h10"], [0, 1, 2])
    assert leaves["cells"][("h2", 1)] == {"leaf": "LEAF02", "port": "17", "source": "smpquery"}
    assert leaves["by_leaf"] == [{"leaf": "LEAF01", "rails": [0], "hosts": ["h2", "h10"],
                                  "sources": ["inventory", "lldp"]},
                                 {"leaf": "LEAF02", "rails": [1], "hosts": ["h2"], "sources": ["smpquery"]},
                                 {"leaf": "Quantum Mellanox Technologies", "rails": [2], "hosts": ["h10"],
                                  "sources": ["iblinkinfo"]},
                                 {"leaf": "ib-i1l1s01", "rails": [2], "hosts": ["h2"], "sources": ["ibnetdiscover"]},
                                 {"leaf": "ib-leaf-9", "rails": [1], "hosts": ["h10"], "sources": ["smpquery"]}]


def test_markdown_shows_a_host_by_rail_table_of_leaves_their_ports_and_where_each_was_read():
    page = _render(report_markdown.render_markdown, RECORDS)
    section = page.split("## Leaf switches (2 hosts, 5 leaves)", 1)[1].split("##", 1)[0]
    assert "| host \\ rail | 0 | 1 | 2 |" in section
    assert ("| h2 | LEAF01 port Ethernet4 (lldp) | LEAF02 port 17 (smpquery) | ib-i1l1s01 port 11 (ibnetdiscover) |"
            in section)
    assert ("| h10 | LEAF01 port Ethernet8 (inventory) | ib-leaf-9 (smpquery) | Quantum Mellanox Technologies port 39 "
            "(iblinkinfo) |" in section)
    assert section.index("| h2 |") < section.index("| h10 |")


def test_html_folds_the_same_table():
    page = _render(report_html.render_html, RECORDS)
    assert "Leaf switches (2 hosts, 5 leaves)" in page
    assert ("<td>h2</td><td>LEAF01 port Ethernet4 (lldp)</td><td>LEAF02 port 17 (smpquery)</td>"
            "<td>ib-i1l1s01 port 11 (ibnetdiscover)</td>" in page)
    assert "<td>Quantum Mellanox Technologies port 39 (iblinkinfo)</td>" in page


def test_a_fleet_larger_than_a_matrix_lists_each_leaf_with_its_hosts():
    # more hosts than either format's matrix holds (Markdown's is the smaller)
    hosts = ["n%d" % k for k in range(report_model.MATRIX_MAX_HOSTS + 4)]
    topology = dict((h, {"0": {"leaf": "LEAF%d" % (k % 2), "port": None,
                               "source": "iblinkinfo" if k % 4 == 1 else "inventory" if k % 2 == 0 else "ibnetdiscover"}})
                    for k, h in enumerate(hosts))
    records = [_pair(hosts[0], hosts[1], 0), _localization(topology)]
    page = _render(report_markdown.render_markdown, records)
    assert "| leaf | rails | hosts | source |" in page
    assert "| LEAF0 | 0 | 34: n0, n2, n4, n6, n8, n10, n12, n14 and 26 more | inventory |" in page
    html = _render(report_html.render_html, records)
    assert ("<td>LEAF1</td><td>0</td><td>34: n1, n3, n5, n7, n9, n11, n13, n15 and 26 more</td>"
            "<td>iblinkinfo, ibnetdiscover</td>" in html)


def test_no_topology_no_section():
    records = RECORDS[:2]
    assert "Leaf switches" not in _render(report_markdown.render_markdown, records)
    assert "Leaf switches" not in _render(report_html.render_html, records)
