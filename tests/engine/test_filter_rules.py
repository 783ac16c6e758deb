"""Filter rules are data: each is registered with its kind, and the groups the
placement relies on (static verdicts kept per node) come from the kind, never
from a position in a list."""

import inspect

import pytest

from recommender.engine.scheduler import filters
from recommender.engine.scheduler.filters import (
    KINDS,
    RESOURCE_RULES,
    RULES,
    STATIC_RULES,
    FilterContext,
    Rule,
    node_ready,
)
from recommender.engine.scheduler.records import NodeAlloc, NodeInfo
from tests.builders import make_claim, make_node, make_pod
from topology.model.hardware import (
    DeviceClass,
    Toleration,
)

GIB = 1024**3
CHECK_PARAMETERS = ["info", "alloc", "pod", "ctx"]


# n1 in pool a: one V100M16 GPU (a device without capacity), one MIG 1g.5gb instance
V100 = (
    make_node("n1")
    .label("pool", "a")
    .allocatable(8, "64Gi", 110, {"nvidia.com/mig-1g.5gb": 1})
    .gpus(1, "V100M16", capacity=None)
)
POD = make_pod("p", "team-a")


def _nothing_free(info: NodeInfo) -> NodeAlloc:
    """The node with every cpu, byte, pod slot, extended resource and device taken."""
    alloc = NodeAlloc(info)
    alloc.cpu_free_milli = alloc.memory_free_bytes = alloc.pods_free = 0
    alloc.extended_free = {name: 0 for name in alloc.extended_free}
    alloc.exclusive = set(info.devices)
    alloc.gpu_milli = {gpu: 1000 for gpu in info.gpus}
    return alloc


NODES = [
    V100.build(),
    V100.unschedulable().build(),
    V100.not_ready().build(),
    V100.taint("dedicated", "ml").build(),
]
PODS = [
    POD.requests(1, "1Gi").build(),
    POD.requests(1, "1Gi", extended={"nvidia.com/mig-1g.5gb": 1}).build(),
    POD.gpus(1).build(),
    POD.claim(make_claim("c").request("one", "gpu").build()).build(),
    POD.node_selector({"pool": "b"}).build(),
    POD.toleration(Toleration("dedicated", "Equal", "ml")).build(),
]


def _verdicts(rule: Rule) -> list[tuple[bool, bool]]:
    """(fits with everything free, fits with nothing free) for every node and pod."""
    context = FilterContext(
        device_classes={"gpu": DeviceClass("gpu")}, reserved_for={"n1": frozenset({"team-b"})}
    )
    found = []
    for node in NODES:
        info = NodeInfo(node)
        for pod in PODS:
            free = rule.check(info, NodeAlloc(info), pod, context).ok
            full = rule.check(info, _nothing_free(info), pod, context).ok
            found.append((free, full))
    return found


def test_it_registers_every_filter_function_with_a_kind() -> None:
    registered = {rule.check for rule in RULES}
    checks = [
        function
        for name, function in vars(filters).items()
        if inspect.isfunction(function)
        and not name.startswith("_")
        and function is not filters.run_filters
        and list(inspect.signature(function).parameters) == CHECK_PARAMETERS
    ]
    assert len(checks) >= 9
    assert [c.__name__ for c in checks if c not in registered] == []
    assert all(rule.kind in KINDS for rule in RULES)


def test_it_refuses_a_rule_without_a_known_kind() -> None:
    with pytest.raises(ValueError, match="kind 'cheap'"):
        Rule("node_ready", "cheap", node_ready)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        filters.rule()  # type: ignore[call-arg]


def test_it_runs_static_rules_then_resource_then_device() -> None:
    order = [KINDS.index(rule.kind) for rule in RULES]
    assert order == sorted(order)
    assert tuple(r.check for r in RULES if r.kind == "static") == STATIC_RULES
    assert tuple(r.check for r in RULES if r.kind == "resource") == RESOURCE_RULES
    assert {r.name for r in RULES if r.kind == "static"} == {
        "node_ready",
        "node_schedulable",
        "taints_tolerated",
        "node_affinity",
        "reservation",
    }


@pytest.mark.parametrize("rule", [r for r in RULES if r.kind == "static"], ids=lambda r: r.name)
def test_it_keeps_static_rules_blind_to_what_is_free(rule: Rule) -> None:
    assert all(free == full for free, full in _verdicts(rule))


@pytest.mark.parametrize(
    "rule", [r for r in RULES if r.kind in ("resource", "device")], ids=lambda r: r.name
)
def test_it_lets_resource_and_device_rules_see_what_is_free(rule: Rule) -> None:
    assert any(free and not full for free, full in _verdicts(rule))


@pytest.mark.parametrize("rule", [r for r in RULES if r.kind == "pods"], ids=lambda r: r.name)
def test_it_keeps_pod_rules_blind_to_what_is_free(rule: Rule) -> None:
    """InterPodAffinity and PodTopologySpread read the pods around a node, never its
    free resources (and pass pods without terms when no pod around matters)."""
    assert all(free and full for free, full in _verdicts(rule))


def test_it_has_the_inter_pod_rules_after_the_device_rules() -> None:
    assert [r.name for r in RULES if r.kind == "pods"] == [
        "node_ports",
        "pod_topology_spread",
        "inter_pod_affinity",
    ]
