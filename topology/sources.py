"""Where snapshots come from: the Kubernetes API, exported files, the openb trace replay.

::

    KubeSource    list ─► store (uid → object) ─► watch from resourceVersion ─┐
                   ▲        ADDED/MODIFIED/DELETED update the store, BOOKMARK  │
                   └── 410 Gone: relist ◄── errors: bounded backoff + jitter ◄─┘
    FilesSource   read_objects(path) again when a file's mtime/size changed
    ReplaySource  the openb trace: at simulated time t (mode "time"), or as a
                  workload mix filling the cluster (mode "fill", a window per tick)

Every source answers ``read(now)`` with a ``SourceRead``: Kubernetes objects
for ``kube.parse_objects``, or an already built model (the replay), or
nothing when it knows nothing changed. Sources never write to a cluster: the
Kubernetes source only issues list and watch requests.

Not pure (network, files, threads), but free of Django so the benchmark and
tests can drive it directly.
"""

from __future__ import annotations

import csv
import functools
import json
import random
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

import urllib3
from kubernetes import client, config, watch
from kubernetes.client.exceptions import ApiException

from recommender.engine.scheduler.first_fit import bind_first_fit
from recommender.engine.scheduler.placement import PlacementOptions, place
from recommender.engine.scheduler.state import ClusterState
from recommender.engine.scheduler.workloads import pod_workload
from topology.files import OPENB_NODE_LIST, read_objects
from topology.hardware import (
    WHOLE_GPU_MILLI,
    Cluster,
    Gang,
    GpuRequest,
    Node,
    Pod,
    Reservation,
    Resources,
)
from topology.trace import BLOCK_LABEL, trace_nodes, trace_pod, with_topology_overlay

KubeObject = dict[str, Any]
SourcedObject = tuple[str, KubeObject]


@dataclass(frozen=True)
class SourceRead:
    """One read of a source: objects to parse, or a model, or neither (unchanged)."""

    objects: list[SourcedObject] | None = None
    model: Cluster | None = None

    @property
    def unchanged(self) -> bool:
        return self.objects is None and self.model is None


class Source(Protocol):
    def read(self, now: datetime) -> SourceRead: ...


class SourceError(Exception):
    """A source gave up after its bounded retries; the message says on what."""


# --- backoff --------------------------------------------------------------------------


@dataclass
class Backoff:
    """Exponential backoff with full jitter: attempt n waits uniform(0, min(cap, base·2ⁿ)).

    ``random`` is passed in so tests and replays are deterministic.
    """

    base_seconds: float = 0.5
    cap_seconds: float = 30.0
    max_attempts: int = 6
    random: random.Random = field(default_factory=random.Random)

    def bound(self, attempt: int) -> float:
        return min(self.cap_seconds, self.base_seconds * 2 ** max(attempt - 1, 0))

    def delay(self, attempt: int) -> float:
        return self.random.uniform(0.0, self.bound(attempt))


# --- the Kubernetes API -------------------------------------------------------------------


@dataclass(frozen=True)
class WatchedKind:
    """One kind the source lists and watches, and how to reach its list call."""

    kind: str
    api_version: str
    list_call: Callable[[client.ApiClient], Callable[..., Any]]


def _custom(group: str, version: str, plural: str) -> Callable[[client.ApiClient], Any]:
    def build(api: client.ApiClient) -> Any:
        return functools.partial(
            client.CustomObjectsApi(api).list_cluster_custom_object, group, version, plural
        )

    return build


DEFAULT_KINDS: tuple[WatchedKind, ...] = (
    WatchedKind("Node", "v1", lambda api: client.CoreV1Api(api).list_node),
    WatchedKind("Pod", "v1", lambda api: client.CoreV1Api(api).list_pod_for_all_namespaces),
    WatchedKind(
        "ResourceSlice",
        "resource.k8s.io/v1",
        lambda api: client.ResourceV1Api(api).list_resource_slice,
    ),
    WatchedKind(
        "ResourceClaim",
        "resource.k8s.io/v1",
        lambda api: client.ResourceV1Api(api).list_resource_claim_for_all_namespaces,
    ),
    WatchedKind(
        "DeviceClass",
        "resource.k8s.io/v1",
        lambda api: client.ResourceV1Api(api).list_device_class,
    ),
    WatchedKind(
        "PodGroup",
        "scheduling.x-k8s.io/v1alpha1",
        _custom("scheduling.x-k8s.io", "v1alpha1", "podgroups"),
    ),
)


def api_client_from(
    *, kubeconfig: str | None = None, context: str | None = None, in_cluster: bool = False
) -> client.ApiClient:
    """An ApiClient from a kubeconfig (or the pod's service account), without urllib3 retries:
    the source's own backoff is the only retry policy, so its bounds hold."""
    configuration = client.Configuration()
    if in_cluster:
        config.load_incluster_config(client_configuration=configuration)
    else:
        config.load_kube_config(
            config_file=kubeconfig, context=context, client_configuration=configuration
        )
    configuration.retries = 0
    return client.ApiClient(configuration)


@dataclass
class KubeStats:
    lists: int = 0
    relists_after_gone: int = 0
    watch_events: int = 0
    bookmarks: int = 0
    errors: int = 0
    retry_delays_seconds: list[float] = field(default_factory=list)


class KubeSource:
    """List then watch each kind, keeping objects in memory keyed by uid.

    ``sync(watch_seconds=N)`` lists kinds it has no resourceVersion for, then
    watches every kind for up to N seconds (server-side ``timeoutSeconds``),
    all kinds in parallel. Called again it resumes from the last
    resourceVersion (advanced by events and BOOKMARKs); a 410 Gone relists.
    Kinds the server does not serve (404) are left out, not retried.
    """

    def __init__(
        self,
        api_client: client.ApiClient,
        *,
        kinds: Iterable[WatchedKind] = DEFAULT_KINDS,
        request_timeout_seconds: float = 30.0,
        list_page_size: int = 500,
        backoff: Backoff | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.api_client = api_client
        self.kinds = tuple(kinds)
        self.request_timeout_seconds = request_timeout_seconds
        self.list_page_size = list_page_size
        self.backoff = backoff or Backoff()
        self.sleep = sleep
        self.stores: dict[str, dict[str, KubeObject]] = {}
        self.resource_versions: dict[str, str] = {}
        self.unavailable: set[str] = set()
        self.stats = KubeStats()
        self._lock = threading.Lock()

    # reads

    def read(self, now: datetime, *, watch_seconds: int = 1) -> SourceRead:
        self.sync(watch_seconds=watch_seconds)
        return SourceRead(objects=self.objects())

    def objects(self) -> list[SourcedObject]:
        """Every stored object, ordered by kind then namespace/name (stable input for hashing)."""
        with self._lock:
            items = [
                (f"kube:{kind}", obj)
                for kind, store in self.stores.items()
                for obj in store.values()
            ]
        return sorted(items, key=lambda item: (item[0], *_namespaced_name(item[1])))

    # list + watch

    def sync(self, *, watch_seconds: int) -> None:
        kinds = [k for k in self.kinds if k.kind not in self.unavailable]
        if len(kinds) <= 1:
            for kind in kinds:
                self.catch_up(kind, watch_seconds=watch_seconds)
            return
        with ThreadPoolExecutor(max_workers=len(kinds), thread_name_prefix="kube-watch") as pool:
            futures = [pool.submit(self.catch_up, k, watch_seconds=watch_seconds) for k in kinds]
            for future in futures:
                future.result()

    def catch_up(self, kind: WatchedKind, *, watch_seconds: int) -> None:
        """List if needed, then one watch; retry errors with backoff, relist on 410."""
        attempt = 0
        while True:
            try:
                if kind.kind not in self.resource_versions:
                    self.relist(kind)
                self.watch(kind, watch_seconds=watch_seconds)
                return
            except ApiException as error:
                if error.status == 404:
                    self.unavailable.add(kind.kind)
                    return
                if error.status == 410:
                    # Expected when the watch falls behind: relist at once, no backoff.
                    self.stats.relists_after_gone += 1
                    self.resource_versions.pop(kind.kind, None)
                    attempt += 1
                    if attempt >= self.backoff.max_attempts:
                        raise SourceError(f"{kind.kind}: 410 Gone on every relist") from error
                    continue
                reason = f"HTTP {error.status} {error.reason}"
            except (urllib3.exceptions.HTTPError, OSError) as error:
                reason = f"{type(error).__name__}: {error}"
            self.stats.errors += 1
            attempt += 1
            if attempt >= self.backoff.max_attempts:
                raise SourceError(f"{kind.kind}: gave up after {attempt} attempts: {reason}")
            delay = self.backoff.delay(attempt)
            self.stats.retry_delays_seconds.append(delay)
            self.sleep(delay)

    def relist(self, kind: WatchedKind) -> None:
        """A full paginated list: the kind's store is replaced, so nothing is lost or doubled."""
        list_call = kind.list_call(self.api_client)
        items: dict[str, KubeObject] = {}
        continue_token: str | None = None
        while True:
            arguments: dict[str, Any] = {"limit": self.list_page_size}
            if continue_token:
                arguments["_continue"] = continue_token
            response = list_call(
                **arguments,
                timeout_seconds=int(self.request_timeout_seconds),
                _request_timeout=self.request_timeout_seconds,
                _preload_content=False,
            )
            body = json.loads(response.data)
            for obj in body.get("items") or []:
                obj.setdefault("kind", kind.kind)
                obj.setdefault("apiVersion", kind.api_version)
                items[_uid(obj)] = obj
            metadata = body.get("metadata") or {}
            continue_token = metadata.get("continue")
            if not continue_token:
                break
        self.stats.lists += 1
        with self._lock:
            self.stores[kind.kind] = items
            self.resource_versions[kind.kind] = str(metadata.get("resourceVersion") or "")

    def watch(self, kind: WatchedKind, *, watch_seconds: int) -> int:
        """One watch from the stored resourceVersion until the server ends it; events applied."""
        watcher = watch.Watch(return_type="object")
        events = 0
        store = self.stores.setdefault(kind.kind, {})
        stream = watcher.stream(
            kind.list_call(self.api_client),
            resource_version=self.resource_versions[kind.kind],
            allow_watch_bookmarks=True,
            timeout_seconds=watch_seconds,
            _request_timeout=(
                self.request_timeout_seconds,
                watch_seconds + self.request_timeout_seconds,
            ),
        )
        for event in stream:
            event_type = event["type"]
            obj = event["raw_object"]
            if event_type == "BOOKMARK":
                self.stats.bookmarks += 1
            else:
                obj.setdefault("kind", kind.kind)
                obj.setdefault("apiVersion", kind.api_version)
                with self._lock:
                    if event_type == "DELETED":
                        store.pop(_uid(obj), None)
                    else:
                        store[_uid(obj)] = obj
                events += 1
            if watcher.resource_version:
                self.resource_versions[kind.kind] = str(watcher.resource_version)
        self.stats.watch_events += events
        return events


def _uid(obj: Mapping[str, Any]) -> str:
    metadata = obj.get("metadata") or {}
    uid = metadata.get("uid")
    if uid:
        return str(uid)
    namespace, name = _namespaced_name(obj)
    return f"{namespace}/{name}"


def _namespaced_name(obj: Mapping[str, Any]) -> tuple[str, str]:
    metadata = obj.get("metadata") or {}
    return str(metadata.get("namespace") or ""), str(metadata.get("name") or "")


# --- exported files ----------------------------------------------------------------------------


class FilesSource:
    """A file or directory of exported objects, re-read only when a file changed."""

    def __init__(self, path: str | Path, *, max_bytes: int, max_objects: int) -> None:
        self.path = Path(path)
        self.max_bytes = max_bytes
        self.max_objects = max_objects
        self._signature: tuple[tuple[str, int, int], ...] | None = None

    def signature(self) -> tuple[tuple[str, int, int], ...]:
        files = sorted(self.path.iterdir()) if self.path.is_dir() else [self.path]
        return tuple((str(f), f.stat().st_mtime_ns, f.stat().st_size) for f in files if f.is_file())

    def read(self, now: datetime) -> SourceRead:
        signature = self.signature()
        if signature == self._signature:
            return SourceRead()
        objects = read_objects(self.path, max_bytes=self.max_bytes, max_objects=self.max_objects)
        self._signature = signature
        return SourceRead(objects=objects)


# --- the openb trace replay ---------------------------------------------------------------------


@dataclass(frozen=True)
class GangSpec:
    """A multi-pod job added on top of the trace (the trace has no gangs)."""

    namespace: str
    name: str
    members: int
    gpus_per_member: int
    gpu_models: tuple[str, ...] = ()
    required_topology: str | None = BLOCK_LABEL
    cpu_milli_per_member: int = 16_000
    memory_mib_per_member: int = 65_536
    gpu_milli_per_gpu: int = WHOLE_GPU_MILLI  # < 1000: each member takes a share of one GPU

    def pods(self) -> tuple[Pod, ...]:
        return tuple(
            Pod(
                namespace=self.namespace,
                name=f"{self.name}-{index}",
                requests=Resources(
                    cpu_milli=self.cpu_milli_per_member,
                    memory_bytes=self.memory_mib_per_member * 2**20,
                    pods=1,
                ),
                gpu=GpuRequest(
                    count=self.gpus_per_member,
                    milli_per_gpu=self.gpu_milli_per_gpu,
                    models=self.gpu_models,
                ),
                labels={"scheduling.x-k8s.io/pod-group": self.name},
                gang=f"{self.namespace}/{self.name}",
                required_topology=self.required_topology,
            )
            for index in range(self.members)
        )

    def gang(self) -> Gang:
        return Gang(
            namespace=self.namespace,
            name=self.name,
            min_member=self.members,
            required_topology=self.required_topology,
        )

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> GangSpec:
        return cls(
            namespace=str(data["namespace"]),
            name=str(data["name"]),
            members=int(data["members"]),
            gpus_per_member=int(data["gpus_per_member"]),
            gpu_models=tuple(data.get("gpu_models") or ()),
            required_topology=data.get("required_topology", BLOCK_LABEL),
            gpu_milli_per_gpu=int(data.get("gpu_milli_per_gpu", WHOLE_GPU_MILLI)),
        )


@dataclass(frozen=True)
class TeamSpec:
    """A team owning reserved nodes; a seeded share of the fill's arrivals are its pods.

    Its pods select its nodes by ``RESERVED_FOR_LABEL`` (the label is added to
    those nodes), so the fill uses part of the reservation and leaves the rest idle.
    """

    namespace: str
    nodes: tuple[str, ...]
    share: float = 0.0

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> TeamSpec:
        return cls(
            namespace=str(data["namespace"]),
            nodes=tuple(data.get("nodes") or ()),
            share=float(data.get("share", 0.0)),
        )


RESERVED_FOR_LABEL = "capacityweb.io/reserved-for"
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
            self._nodes = with_topology_overlay(
                trace_nodes(_csv_rows(folder / OPENB_NODE_LIST)),
                zones=self.zones,
                blocks_per_zone=self.blocks_per_zone,
                racks_per_block=self.racks_per_block,
                seed=self.seed,
            )
        return self._nodes

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
        return Cluster(
            name=self.cluster_name,
            nodes=nodes,
            pods=(*bound, *unplaced, *waiting, *gang_pods),
            gangs=tuple(g.gang() for g in self.gangs),
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
        return Cluster(
            name=self.cluster_name,
            nodes=self._fill_nodes(),
            pods=(*running, *pending, *gang_pods),
            gangs=tuple(g.gang() for g in self.gangs),
        )

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


# --- from a cluster's stored settings -------------------------------------------------------------


def source_from_settings(
    kind: str,
    settings: Mapping[str, Any],
    *,
    cluster_name: str,
    data_dir: Path,
    max_bytes: int,
    max_objects: int,
) -> Source:
    """Build the source a Cluster row describes (``source_kind`` + ``source_settings``)."""
    if kind == "files":
        return FilesSource(settings["path"], max_bytes=max_bytes, max_objects=max_objects)
    if kind == "kube":
        api = api_client_from(
            kubeconfig=settings.get("kubeconfig"),
            context=settings.get("context"),
            in_cluster=bool(settings.get("in_cluster")),
        )
        return KubeSource(
            api, request_timeout_seconds=float(settings.get("request_timeout_seconds", 30))
        )
    if kind == "replay":
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
        )
    raise ValueError(f"unknown source kind {kind!r}")
