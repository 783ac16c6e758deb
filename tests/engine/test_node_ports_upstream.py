"""NodePorts, checked against kube-scheduler's own test table and through placement.

Cases from kubernetes/kubernetes
``pkg/scheduler/framework/plugins/nodeports/node_ports_test.go`` (``TestNodePorts``),
named as upstream names them; a port is written as upstream's ``newPod`` helper
takes it, ``"PROTOCOL/hostIP/hostPort"``. Upstream's Success is our "", its
Unschedulable our reason text (the plugin's ErrReason).
"""

from __future__ import annotations

import pytest

from recommender.engine.scheduler.filters import NODE_PORTS_TAKEN, FilterContext, node_ports
from recommender.engine.scheduler.placement import place
from recommender.engine.scheduler.records import NodeAlloc, NodeInfo
from recommender.engine.scheduler.workloads import pending_workloads
from tests.builders import make_pod
from topology.model.hardware import Cluster, HostPort, Node, Pod, Resources


def ports(*specs: str) -> tuple[HostPort, ...]:
    found = []
    for spec in specs:
        protocol, ip, port = spec.split("/")
        found.append(HostPort(ip, protocol, int(port)))
    return tuple(found)


# (upstream name, the incoming pod's ports, the ports of the pod already on the node, reason)
CASES = [
    ("nothing running", (), (), ""),
    ("other port", ports("UDP/127.0.0.1/8080"), ports("UDP/127.0.0.1/9090"), ""),
    ("same udp port", ports("UDP/127.0.0.1/8080"), ports("UDP/127.0.0.1/8080"), NODE_PORTS_TAKEN),
    ("same tcp port", ports("TCP/127.0.0.1/8080"), ports("TCP/127.0.0.1/8080"), NODE_PORTS_TAKEN),
    ("different host ip", ports("TCP/127.0.0.1/8080"), ports("TCP/127.0.0.2/8080"), ""),
    ("different protocol", ports("UDP/127.0.0.1/8080"), ports("TCP/127.0.0.1/8080"), ""),
    (
        "second udp port conflict",
        ports("UDP/127.0.0.1/8000", "UDP/127.0.0.1/8080"),
        ports("UDP/127.0.0.1/8080"),
        NODE_PORTS_TAKEN,
    ),
    (
        "first tcp port conflict",
        ports("TCP/127.0.0.1/8001", "UDP/127.0.0.1/8080"),
        ports("TCP/127.0.0.1/8001", "UDP/127.0.0.1/8081"),
        NODE_PORTS_TAKEN,
    ),
    (
        "first tcp port conflict due to 0.0.0.0 hostIP",
        ports("TCP/0.0.0.0/8001"),
        ports("TCP/127.0.0.1/8001"),
        NODE_PORTS_TAKEN,
    ),
    (
        "TCP hostPort conflict due to 0.0.0.0 hostIP",
        ports("TCP/10.0.10.10/8001", "TCP/0.0.0.0/8001"),
        ports("TCP/127.0.0.1/8001"),
        NODE_PORTS_TAKEN,
    ),
    (
        "second tcp port conflict to 0.0.0.0 hostIP",
        ports("TCP/127.0.0.1/8001"),
        ports("TCP/0.0.0.0/8001"),
        NODE_PORTS_TAKEN,
    ),
    ("second different protocol", ports("UDP/127.0.0.1/8001"), ports("TCP/0.0.0.0/8001"), ""),
    (
        "UDP hostPort conflict due to 0.0.0.0 hostIP",
        ports("TCP/0.0.0.0/8001", "UDP/0.0.0.0/8001"),
        ports("TCP/127.0.0.1/8001"),
        NODE_PORTS_TAKEN,
    ),
]

NODE = Node("n1", allocatable=Resources(cpu_milli=8000, memory_bytes=2**34, pods=110))


@pytest.mark.parametrize(("name", "wanted", "existing", "reason"), CASES, ids=[c[0] for c in CASES])
def test_it_matches_upstream_node_ports_table(
    name: str, wanted: tuple[HostPort, ...], existing: tuple[HostPort, ...], reason: str
) -> None:
    info = NodeInfo(NODE)
    alloc = NodeAlloc(info)
    alloc.placed = (Pod("default", "existing", node_name="n1", host_ports=existing),)
    status = node_ports(info, alloc, Pod("default", "incoming", host_ports=wanted), FilterContext())
    assert status.reason == reason


# web pods of 100m, each wanting one host port
WEB = make_pod(namespace="web").requests("100m")


def test_it_places_two_pods_wanting_one_host_port_on_two_nodes() -> None:
    nodes = (NODE, Node("n2", allocatable=NODE.allocatable))
    cluster = Cluster(
        "c",
        nodes=nodes,
        pods=(
            WEB.named("a").host_ports(*ports("TCP/0.0.0.0/80")).arrival(1.0).build(),
            WEB.named("b").host_ports(*ports("TCP/0.0.0.0/80")).arrival(1.0).build(),
        ),
    )
    result = place(cluster, pending_workloads(cluster))
    nodes_used = sorted(b.node for o in result.outcomes for b in o.bindings)
    assert nodes_used == ["n1", "n2"]


def test_it_keeps_the_second_pod_pending_when_one_node_has_the_port_taken() -> None:
    cluster = Cluster(
        "c",
        nodes=(NODE,),
        pods=(
            WEB.named("running").host_ports(*ports("TCP/0.0.0.0/80")).arrival(7.0).on("n1").build(),
            WEB.named("b").host_ports(*ports("TCP/0.0.0.0/80")).arrival(1.0).build(),
            WEB.named("c").host_ports(*ports("TCP/0.0.0.0/81")).arrival(1.0).build(),
        ),
    )
    outcomes = {o.workload: o for o in place(cluster, pending_workloads(cluster)).outcomes}
    assert outcomes["web/c"].placed
    blocked = outcomes["web/b"]
    assert not blocked.placed and blocked.diagnosis is not None
    assert blocked.diagnosis.summary == f"0/1 nodes are available: 1 {NODE_PORTS_TAKEN}."
