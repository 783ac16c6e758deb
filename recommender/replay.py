"""The openb trace as a snapshot source: the cluster at simulated time t (mode
"time"), or a workload mix filling the cluster (mode "fill", a window per tick).

Answers with an already built model (no objects to parse). Not pure (files), but
free of Django so the benchmark and tests can drive it directly.
"""

from __future__ import annotations

import csv
import random
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from recommender.engine.scheduler.first_fit import bind_first_fit
from recommender.engine.scheduler.placement import PlacementOptions, place
from recommender.engine.scheduler.state import ClusterState
from recommender.engine.scheduler.workloads import pod_workload
from topology.ingest.files import OPENB_NODE_LIST
from topology.ingest.replayspecs import (
    GKE_POOL_LABEL,
    RESERVED_FOR_LABEL,
    AutoscaledPoolSpec,
    GangSpec,
    NodeLabelSpec,
    TeamSpec,
    ca_status_object,
    gke_instance_group,
)
from topology.ingest.sourceread import SourceRead
from topology.ingest.trace import trace_nodes, trace_pod, with_topology_overlay
from topology.kube.parse import parse_objects
from topology.kube.providers.prices import bundled_table
from topology.model.hardware import (
    WHOLE_GPU_MILLI,
    Cluster,
    Node,
    Pod,
    Reservation,
)

REPLAY_MODES = ("time", "fill")
# openb trace time late in the trace, when the most pods are alive: where replays start.
BUSIEST_TRACE_SECONDS = 12_800_000


@dataclass(frozen=True)
class TracePodRow:
    pod: Pod
    creation_seconds: int
    deletion_seconds: int | None
    scheduled_seconds: int | None


@dataclass
class ReplaySource:
    """The openb trace, replayed in one of two modes.

    Mode ``"fill"`` (the FGD paper's protocol, see ``filled``): the pod list
    is a workload mix arriving in a seeded random order and bound by the real
    placement engine until the cluster is busy; each tick the oldest pods
    leave and as many new ones arrive.

    Mode ``"time"``: at trace time t the cluster holds the trace's GPU nodes (with a
    deterministic synthetic topology overlay) and the pods alive at t
    (creation ≤ t < deletion). A pod already scheduled at t is bound by a
    deterministic first-fit (the trace names no nodes); one not yet scheduled
    is pending. ``reserved_nodes`` take no trace pods (they are held for their
    owners), and ``gangs`` are pending multi-pod jobs added on top of the trace.
    Wall-clock time maps to trace time as start + speed × (now − origin),
    wrapped over the trace's span, so the same ``now`` gives the same model.
    """

    data_dir: Path
    cluster_name: str
    origin: datetime
    pod_list: str = "default"
    speed: float = 600.0
    start_seconds: float = 0.0
    zones: int = 2
    blocks_per_zone: int = 3
    racks_per_block: int = 4
    seed: int = 0
    reserved_nodes: tuple[str, ...] = ()
    gangs: tuple[GangSpec, ...] = ()
    mode: str = "time"
    fill_target: float = 0.9
    max_pending: int = 25
    tick_seconds: float = 60.0
    pods_per_tick: int = 20
    ticks_per_cycle: int = 60
    teams: tuple[TeamSpec, ...] = ()
    # Kubernetes objects added as they are (hand-made nodes, pods, queues): parsed like
    # any snapshot and appended after the trace is bound, so the fill never uses them
    objects: tuple[Mapping[str, Any], ...] = ()
    # labels a cloud would give trace nodes (node pool, instance type), matched by label
    node_labels: tuple[NodeLabelSpec, ...] = ()
    # instance type → price per node-hour, before the bundled price table (as a cluster's
    # price_overrides): what the replay's discovered node groups are priced with
    prices: Mapping[str, Any] | None = None
    # GKE pools cluster-autoscaler grows: written into its status ConfigMap each read
    autoscaled_pools: tuple[AutoscaledPoolSpec, ...] = ()
    _nodes: tuple[Node, ...] | None = None
    _rows: tuple[TracePodRow, ...] | None = None
    _order: tuple[int, ...] | None = None
    _cycle_fill: tuple[int, _Fill] | None = None

    def __post_init__(self) -> None:
        if self.mode not in REPLAY_MODES:
            raise ValueError(f"replay mode must be one of {REPLAY_MODES}, got {self.mode!r}")

    def trace_seconds_at(self, now: datetime) -> float:
        elapsed = (now - self.origin).total_seconds()
        span = max(self.span_seconds(), 1)
        return (self.start_seconds + self.speed * elapsed) % span

    def span_seconds(self) -> int:
        rows = self.rows()
        return max((r.deletion_seconds or r.creation_seconds for r in rows), default=0) + 1

    def read(self, now: datetime) -> SourceRead:
        if self.mode == "fill":
            return SourceRead(model=self.filled(self.tick_at(now)))
        return SourceRead(model=self.at(self.trace_seconds_at(now)))

    def tick_at(self, now: datetime) -> int:
        """Fill mode's tick number: whole ``tick_seconds`` since ``origin`` (0 before it)."""
        return max(0, int((now - self.origin).total_seconds() // self.tick_seconds))

    def nodes(self) -> tuple[Node, ...]:
        if self._nodes is None:
            folder = _openb_csv_folder(self.data_dir)
            nodes = with_topology_overlay(
                trace_nodes(_csv_rows(folder / OPENB_NODE_LIST)),
                zones=self.zones,
                blocks_per_zone=self.blocks_per_zone,
                racks_per_block=self.racks_per_block,
                seed=self.seed,
            )
            self._nodes = tuple(self._cloud_labelled(n) for n in nodes)
        return self._nodes

    def _cloud_labelled(self, node: Node) -> Node:
        added = {
            key: value
            for spec in self.node_labels
            if spec.applies_to(node.labels)
            for key, value in spec.labels.items()
        }
        return replace(node, labels={**node.labels, **added}) if added else node

    def rows(self) -> tuple[TracePodRow, ...]:
        if self._rows is None:
            folder = _openb_csv_folder(self.data_dir)
            rows = _csv_rows(folder / f"openb_pod_list_{self.pod_list}.csv")
            self._rows = tuple(
                TracePodRow(
                    pod=trace_pod(row, index),
                    creation_seconds=_seconds(row.get("creation_time")) or 0,
                    deletion_seconds=_seconds(row.get("deletion_time")),
                    scheduled_seconds=_seconds(row.get("scheduled_time")),
                )
                for index, row in enumerate(rows)
            )
        return self._rows

    def at(self, trace_seconds: float) -> Cluster:
        """The model at trace time t (seconds since the trace start)."""
        alive = [
            r
            for r in self.rows()
            if r.creation_seconds <= trace_seconds
            and (r.deletion_seconds is None or trace_seconds < r.deletion_seconds)
        ]
        running = [
            r.pod
            for r in alive
            if r.scheduled_seconds is not None and r.scheduled_seconds <= trace_seconds
        ]
        waiting = [
            r.pod
            for r in alive
            if r.scheduled_seconds is None or r.scheduled_seconds > trace_seconds
        ]
        nodes = self.nodes()
        reserved = set(self.reserved_nodes)
        bound, unplaced = bind_first_fit(running, [n for n in nodes if n.name not in reserved])
        gang_pods = tuple(p for g in self.gangs for p in g.pods())
        return self._with_objects(
            Cluster(
                name=self.cluster_name,
                nodes=nodes,
                pods=(*bound, *unplaced, *waiting, *gang_pods),
                gangs=tuple(g.gang() for g in self.gangs),
            )
        )

    # --- fill mode ---------------------------------------------------------------------

    def filled(self, tick: int) -> Cluster:
        """The busy cluster of fill mode at ``tick`` (a pure function of tick and settings).

        ::

            arrivals: seeded permutation of the pod list, read as a ring
            cycle c = tick // ticks_per_cycle starts at arrival c·ticks_per_cycle·k
              fill ─► place(arrivals) until their GPU requests reach fill_target
                      of capacity, then on until max_pending do not fit
            step s = tick % ticks_per_cycle (k = pods_per_tick)
              the oldest s·k of the fill leave (the rest keep their nodes),
              pending ones and the next s·k arrivals are placed on what is left

        Bound by ``place`` with the fgd profile (the paper's scheduler, as the fill
        always ran; the evaluation's default profile is kube-default); reserved nodes take only
        their team's pods. Pending trace pods are capped at ``max_pending``
        (the latest arrivals are kept) so the evaluation stays fast. A new
        cycle re-fills from scratch, which bounds the cost of any tick.
        """
        cycle, step = divmod(tick, max(self.ticks_per_cycle, 1))
        fill = self._fill_of_cycle(cycle)
        if step == 0:
            running, pending = fill.bound, fill.pending
        else:
            leaving = step * self.pods_per_tick
            kept = [p for p in (*fill.bound, *fill.pending) if fill.position[p.key] >= leaving]
            survivors = tuple(p for p in kept if p.node_name is not None)
            retried = [p for p in kept if p.node_name is None]
            arrivals = [self._arrival(fill.end + i) for i in range(leaving)]
            base = self._placement_cluster(survivors)
            placed, pending, _state = self._bind(
                base, [*retried, *arrivals], ClusterState.from_cluster(base)
            )
            running = (*survivors, *placed)
        pending = pending[-self.max_pending :] if self.max_pending else ()
        gang_pods = tuple(p for g in self.gangs for p in g.pods())
        return self._with_objects(
            Cluster(
                name=self.cluster_name,
                nodes=self._fill_nodes(),
                pods=(*running, *pending, *gang_pods),
                gangs=tuple(g.gang() for g in self.gangs),
            )
        )

    def _with_objects(self, cluster: Cluster) -> Cluster:
        """``cluster`` plus what ``objects`` describe, its nodes grouped as a kube ingest
        groups them (``parse_objects`` with the trace nodes given: managed pools from
        their labels, cluster-autoscaler's status ConfigMap joined to them, NodeGroups
        among the objects over them); an object in error refuses the read."""
        if not self.objects and not self.node_labels and not self.autoscaled_pools:
            return cluster
        objects = [dict(o) for o in self.objects]
        if self.autoscaled_pools:
            objects.append(self._ca_status(cluster.nodes, objects))
        parsed = parse_objects(
            ((f"replay.objects[{i}]", o) for i, o in enumerate(objects)),
            cluster_name=self.cluster_name,
            prices=bundled_table().with_overrides(self.prices or {}, self.cluster_name),
            nodes=cluster.nodes,
        )
        if parsed.errors:
            raise parsed.errors[0]  # a ModelError naming object, field and reason
        extra = parsed.cluster
        return replace(
            cluster,
            nodes=extra.nodes,
            node_groups=extra.node_groups,
            pods=(*cluster.pods, *extra.pods),
            gangs=(*cluster.gangs, *extra.gangs),
            device_classes=(*cluster.device_classes, *extra.device_classes),
            queues=(*cluster.queues, *extra.queues),
            namespace_labels={**cluster.namespace_labels, **extra.namespace_labels},
            ignored={**cluster.ignored, **extra.ignored},
            unsupported=(*cluster.unsupported, *extra.unsupported),
            autoscaler_events=(*cluster.autoscaler_events, *extra.autoscaler_events),
        )

    def _ca_status(self, nodes: Iterable[Node], objects: list[dict[str, Any]]) -> dict[str, Any]:
        """cluster-autoscaler's status ConfigMap for ``autoscaled_pools``: each pool's
        members (trace nodes and Node objects carrying its GKE pool label) registered,
        ready and at target; its time the replay's origin."""
        members = Counter(n.labels.get(GKE_POOL_LABEL) for n in nodes)
        members.update(
            ((o.get("metadata") or {}).get("labels") or {}).get(GKE_POOL_LABEL)
            for o in objects
            if o.get("kind") == "Node"
        )
        groups = [
            (
                gke_instance_group(self.cluster_name, p.zone, self.cluster_name, p.pool),
                p.min_size,
                p.max_size,
                members[p.pool],
            )
            for p in self.autoscaled_pools
        ]
        return ca_status_object(groups, at=self.origin.isoformat())

    def _fill_of_cycle(self, cycle: int) -> _Fill:
        if self._cycle_fill is not None and self._cycle_fill[0] == cycle:
            return self._cycle_fill[1]
        start = cycle * max(self.ticks_per_cycle, 1) * self.pods_per_tick
        capacity_milli = sum(n.gpu_count for n in self.nodes()) * WHOLE_GPU_MILLI
        target_milli = self.fill_target * capacity_milli
        arrivals: list[Pod] = []
        requested = 0
        while requested < target_milli and len(arrivals) < len(self.rows()):
            pod = self._arrival(start + len(arrivals))
            arrivals.append(pod)
            requested += pod.gpu.total_milli if pod.gpu else 0
        base = self._placement_cluster(())
        state = ClusterState.from_cluster(base)
        bound, pending, state = self._bind(base, arrivals, state)
        # The queue's tail: more arrivals until max_pending do not fit (or the list ends).
        chunk = 200
        while len(pending) < self.max_pending and len(arrivals) < len(self.rows()):
            tail = [self._arrival(start + len(arrivals) + i) for i in range(chunk)]
            tail = tail[: len(self.rows()) - len(arrivals)]
            result = place(
                base, [pod_workload(p) for p in tail], state=state, options=self._options()
            )
            failed = [i for i, o in enumerate(result.outcomes) if not o.placed]
            if len(pending) + len(failed) > self.max_pending:
                tail = tail[: failed[self.max_pending - len(pending) - 1] + 1]
            more_bound, more_pending, state = self._bind(base, tail, state)
            bound, pending = (*bound, *more_bound), (*pending, *more_pending)
            arrivals.extend(tail)
        position = {p.key: i for i, p in enumerate(arrivals)}
        fill = _Fill(bound=bound, pending=pending, position=position, end=start + len(arrivals))
        self._cycle_fill = (cycle, fill)
        return fill

    def _bind(
        self, base: Cluster, pods: list[Pod], state: ClusterState
    ) -> tuple[tuple[Pod, ...], tuple[Pod, ...], ClusterState]:
        """Place pods in order with the real engine: bound, pending, and the state after."""
        result = place(base, [pod_workload(p) for p in pods], state=state, options=self._options())
        bound, pending = [], []
        for pod, outcome in zip(pods, result.outcomes, strict=True):
            if outcome.placed:
                bound.append(replace(pod, node_name=outcome.bindings[0].node))
            else:
                pending.append(pod)
        return tuple(bound), tuple(pending), result.state

    def _options(self) -> PlacementOptions:
        return PlacementOptions(policy="fgd", seed=self.seed)

    def _placement_cluster(self, bound: Iterable[Pod]) -> Cluster:
        """The nodes with their reservations, so only a team's pods land on its nodes."""
        teams = {node: t.namespace for t in self.teams for node in t.nodes}
        held = tuple(n for n in self.reserved_nodes if n not in teams)
        reservations = [
            Reservation(name=t.namespace, owner_namespaces=(t.namespace,), node_names=t.nodes)
            for t in self.teams
        ]
        if held:
            reservations.append(Reservation(name="held", owner_namespaces=(), node_names=held))
        return Cluster(
            name=self.cluster_name,
            nodes=self._fill_nodes(),
            pods=tuple(bound),
            reservations=tuple(reservations),
        )

    def _fill_nodes(self) -> tuple[Node, ...]:
        teams = {node: t.namespace for t in self.teams for node in t.nodes}
        return tuple(
            replace(n, labels={**n.labels, RESERVED_FOR_LABEL: teams[n.name]})
            if n.name in teams
            else n
            for n in self.nodes()
        )

    def _arrival(self, index: int) -> Pod:
        """Arrival ``index`` of the ring: a trace pod, renamed per lap, maybe a team's."""
        rows = self.rows()
        lap, offset = divmod(index, len(rows))
        pod = rows[self._arrival_order()[offset]].pod
        name = pod.name if lap == 0 else f"{pod.name}-r{lap}"
        for team in self.teams:
            if random.Random(f"{self.seed}/{team.namespace}/{name}").random() < team.share:
                return replace(
                    pod,
                    namespace=team.namespace,
                    name=name,
                    node_selector={RESERVED_FOR_LABEL: team.namespace},
                    arrival=float(index),
                )
        return replace(pod, name=name, arrival=float(index))

    def _arrival_order(self) -> tuple[int, ...]:
        if self._order is None:
            order = list(range(len(self.rows())))
            random.Random(self.seed).shuffle(order)
            self._order = tuple(order)
        return self._order


@dataclass(frozen=True)
class _Fill:
    """One cycle's initial fill: bound and pending pods, each pod's arrival position."""

    bound: tuple[Pod, ...]
    pending: tuple[Pod, ...]
    position: dict[str, int]
    end: int  # ring index of the first arrival after the fill


def _openb_csv_folder(data_dir: Path) -> Path:
    return data_dir / "csv" if (data_dir / "csv").is_dir() else data_dir


def _csv_rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def _seconds(text: str | None) -> int | None:
    text = (text or "").strip()
    return int(float(text)) if text else None


def source_from_settings(
    settings: Mapping[str, Any], *, cluster_name: str, data_dir: Path
) -> ReplaySource:
    """The replay a Cluster row describes (``source_kind`` "replay"), registered with
    ``topology.ingest.sources`` by ``RecommenderConfig.ready``."""
    return ReplaySource(
        data_dir=Path(settings.get("data_dir") or data_dir),
        cluster_name=cluster_name,
        origin=datetime.fromisoformat(settings["origin"]),
        pod_list=settings.get("pod_list", "default"),
        speed=float(settings.get("speed", 600.0)),
        start_seconds=float(settings.get("start_seconds", 0.0)),
        zones=int(settings.get("zones", 2)),
        blocks_per_zone=int(settings.get("blocks_per_zone", 3)),
        racks_per_block=int(settings.get("racks_per_block", 4)),
        seed=int(settings.get("seed", 0)),
        reserved_nodes=tuple(settings.get("reserved_nodes") or ()),
        gangs=tuple(GangSpec.from_json(g) for g in settings.get("gangs") or ()),
        mode=str(settings.get("mode", "time")),
        fill_target=float(settings.get("fill_target", 0.9)),
        max_pending=int(settings.get("max_pending", 25)),
        tick_seconds=float(settings.get("tick_seconds", 60.0)),
        pods_per_tick=int(settings.get("pods_per_tick", 20)),
        ticks_per_cycle=int(settings.get("ticks_per_cycle", 60)),
        teams=tuple(TeamSpec.from_json(t) for t in settings.get("teams") or ()),
        objects=tuple(settings.get("objects") or ()),
        node_labels=tuple(NodeLabelSpec.from_json(n) for n in settings.get("node_labels") or ()),
        prices=settings.get("prices") or None,
        autoscaled_pools=tuple(
            AutoscaledPoolSpec.from_json(p) for p in settings.get("autoscaled_pools") or ()
        ),
    )
