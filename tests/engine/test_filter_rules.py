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
from topology.model.hardware import (
    Device,
    DeviceClaim,
    DeviceClass,
    DeviceRequest,
    Gpu,
    GpuRequest,
    Node,
    Pod,
    Resources,
    Taint,
    Toleration,
)

GIB = 1024**3
CHECK_PARAMETERS = ["info", "alloc", "pod", "ctx"]


def _node(**extra: object) -> Node:
    fields: dict[str, object] = {
        "labels": {"pool": "a"},
        "allocatable": Resources(8000, 64 * GIB, 110, {"nvidia.com/mig-1g.5gb": 1}),
        "gpus": (Gpu("gpu-0", model="V100M16"),),
        "devices": (Device("gpu-0", gpu="gpu-0", model="V100M16"),),
    }
    fields.update(extra)
    return Node(name="n1", **fields)  # type: ignore[arg-type]


def _pod(**extra: object) -> Pod:
    fields: dict[str, object] = {"namespace": "team-a", "name": "p"}
    fields.update(extra)
    return Pod(**fields)  # type: ignore[arg-type]


def _nothing_free(info: NodeInfo) -> NodeAlloc:
    """The node with every cpu, byte, pod slot, extended resource and device taken."""
    alloc = NodeAlloc(info)
    alloc.cpu_free_milli = alloc.memory_free_bytes = alloc.pods_free = 0
    alloc.extended_free = {name: 0 for name in alloc.extended_free}
    alloc.exclusive = set(info.devices)
    alloc.gpu_milli = {gpu: 1000 for gpu in info.gpus}
    return alloc


NODES = [
    _node(),
    _node(unschedulable=True),
    _node(ready=False),
    _node(taints=(Taint("dedicated", "ml"),)),
]
PODS = [
    _pod(requests=Resources(1000, GIB, 1)),
    _pod(requests=Resources(1000, GIB, 1, {"nvidia.com/mig-1g.5gb": 1})),
    _pod(gpu=GpuRequest(1)),
    _pod(claims=(DeviceClaim("c", (DeviceRequest("one", "gpu"),)),)),
    _pod(node_selector={"pool": "b"}),
    _pod(tolerations=(Toleration("dedicated", "Equal", "ml"),)),
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
