"""Topology levels from the objects that already define them in a cluster.

Pure: no Django, no I/O. Sources, in the order they win:

1. Kueue ``Topology`` (kubernetes-sigs/kueue ``apis/kueue/v1beta1/topology_types.go``):
   ``spec.levels[].nodeLabel``, outermost first. Kueue allows several (one per
   ResourceFlavor); the first read defines the levels, the others are noted.
2. KAI ``Topology`` (NVIDIA/KAI-Scheduler ``pkg/apis/kai/v1alpha1/topology_types.go``,
   group ``kai.scheduler``): the same ``spec.levels[].nodeLabel`` shape.
3. Volcano ``HyperNode`` (volcano-sh/apis ``pkg/apis/topology/v1alpha1/hypernode_types.go``):
   a tree of named network domains, ``spec.tier`` 1 innermost, members chosen
   by ``selector.exactMatch`` / ``regexMatch`` / ``labelMatch``. A tier becomes
   a level only where every node member of every HyperNode of that tier is
   chosen by ``labelMatch`` on one and the same label key (the key is then a
   level like any other). Members named one by one, by regex, or tiers built
   from other HyperNodes are not node labels: reported as unsupported, never
   guessed.
4. The project's ``capacityweb.io`` ``Topology``, only where none of the above
   exists (otherwise it is noted as not used).
5. The default levels.

``Cluster.topology_source`` says which one was used.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from topology.kube.fields import ObjectContext
from topology.model.hardware import Topology, TopologyLevel

KUEUE = "kueue.x-k8s.io"
KAI = "kai.scheduler"
VOLCANO_TOPOLOGY = "topology.volcano.sh"
PRECEDENCE = (KUEUE, KAI)
LEVEL_NAMES = {lv.key: lv.name for lv in Topology.default().levels}


@dataclass(slots=True)
class Discovered:
    """What the first pass keeps: level lists per source, HyperNodes per tier."""

    levels: list[tuple[str, str, Topology]] = field(default_factory=list)  # (group, label, topo)
    hypernodes: list[tuple[str, int, list[dict[str, Any]]]] = field(default_factory=list)


def level_topology(ctx: ObjectContext, spec: dict[str, Any]) -> Topology:
    levels = []
    for path, level in ctx.items(spec.get("levels"), "spec.levels"):
        key = ctx.text(level.get("nodeLabel"), f"{path}.nodeLabel", required=True)
        levels.append(TopologyLevel(key, LEVEL_NAMES.get(key) or key.rpartition("/")[2]))
    if not levels:
        ctx.fail("spec.levels", "needs at least one level")
    if len({lv.key for lv in levels}) != len(levels):
        ctx.fail("spec.levels", "a node label appears twice")
    return Topology(tuple(levels))


def collect_levels(collected: Any, ctx: ObjectContext, obj: dict[str, Any]) -> None:
    """topology.kube.parse handler for Kueue and KAI ``Topology``."""
    group = str(obj.get("apiVersion", "")).rpartition("/")[0]
    topology = level_topology(ctx, ctx.mapping(obj.get("spec"), "spec"))
    collected.topology_found.levels.append((group, ctx.object, topology))


def collect_hypernode(collected: Any, ctx: ObjectContext, obj: dict[str, Any]) -> None:
    """topology.kube.parse handler for Volcano ``HyperNode``."""
    spec = ctx.mapping(obj.get("spec"), "spec")
    tier = ctx.integer(spec.get("tier"), "spec.tier", minimum=1)
    members = [m for _, m in ctx.items(spec.get("members"), "spec.members")]
    collected.topology_found.hypernodes.append((ctx.object, tier, members))


def choose(project: Topology | None, discovered: Discovered) -> tuple[Topology, str, list[str]]:
    """The levels to use, which object they came from, and what was not used (notes)."""
    notes: list[str] = []
    chosen: tuple[Topology, str] | None = None
    for group in PRECEDENCE:
        for found_group, label, topology in discovered.levels:
            if found_group != group:
                continue
            if chosen is None:
                chosen = (topology, f"{label} ({group})")
            else:
                notes.append(f"{label} ({group}): not used, levels come from {chosen[1]}")
    volcano, volcano_notes = hypernode_levels(discovered.hypernodes)
    notes += volcano_notes
    if volcano is not None:
        if chosen is None:
            chosen = (volcano, f"HyperNode tiers ({VOLCANO_TOPOLOGY})")
        else:
            notes.append(
                f"HyperNode tiers ({VOLCANO_TOPOLOGY}): not used, levels come from {chosen[1]}"
            )
    if project is not None:
        if chosen is None:
            return project, "Topology (capacityweb.io)", notes
        notes.append(f"Topology (capacityweb.io): not used, levels come from {chosen[1]}")
    if chosen is None:
        return Topology.default(), "default", notes
    return chosen[0], chosen[1], notes


def hypernode_levels(
    hypernodes: list[tuple[str, int, list[dict[str, Any]]]],
) -> tuple[Topology | None, list[str]]:
    """Label-based HyperNode tiers as levels (outermost first); the others as notes."""
    keys_by_tier: dict[int, set[str | None]] = {}
    notes = []
    for label, tier, members in sorted(hypernodes, key=lambda h: (-h[1], h[0])):
        for member in members:
            key, reason = _member_label_key(member)
            keys_by_tier.setdefault(tier, set()).add(key)
            if reason:
                notes.append(f"{label}: tier {tier} unsupported: {reason}")
    levels = []
    for tier in sorted(keys_by_tier, reverse=True):
        keys = keys_by_tier[tier]
        if len(keys) == 1 and None not in keys:
            key = next(iter(keys))
            assert key is not None
            levels.append(TopologyLevel(key, LEVEL_NAMES.get(key) or key.rpartition("/")[2]))
        elif None not in keys:
            notes.append(f"HyperNode tier {tier} unsupported: its members use different labels")
    topology = Topology(tuple(levels)) if levels else None
    return topology, list(dict.fromkeys(notes))


def _member_label_key(member: dict[str, Any]) -> tuple[str | None, str]:
    if member.get("type") == "HyperNode":
        return None, "members are HyperNodes (a domain of domains, not a node label)"
    raw = member.get("selector")
    selector: dict[str, Any] = raw if isinstance(raw, dict) else {}
    raw_match = selector.get("labelMatch")
    match: dict[str, Any] | None = raw_match if isinstance(raw_match, dict) else None
    if match is not None:
        labels = match.get("matchLabels") or {}
        if isinstance(labels, dict) and len(labels) == 1 and not match.get("matchExpressions"):
            return str(next(iter(labels))), ""
        return None, "labelMatch on other than exactly one label key"
    if "exactMatch" in selector:
        return None, "nodes listed by name (not a node label)"
    if "regexMatch" in selector:
        return None, "nodes chosen by a name regex (not a node label)"
    return None, "members without a selector"
