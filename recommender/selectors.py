"""Reads of the recommender: evaluations, their rows and the heatmap payload, with bounded
queries.

The heatmap payload is cached::

    data.json ─► heatmap_etag(evaluation, domain, filters, encoding)   (no query)
                   ├─ client sent it (If-None-Match) ─► 304, nothing read or built
                   └─ heatmap_json ─► this process's LOCAL_PAYLOADS hit ─► the stored bytes
                                      default view: shared cache hit ─► bytes, kept
                                      miss ─► result["heatmap"] only ─► charts ─► bytes, kept
                                      (gzip: the JSON's bytes compressed once, kept too)

An evaluation's result is immutable once stored (rewritten only by a re-run of
the same snapshot, which moves ``stored_at``), so the key never needs
invalidating: a new evaluation is a new key, old keys age out.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from django.conf import settings
from django.core.cache import caches
from django.core.serializers.json import DjangoJSONEncoder
from django.db import connection
from django.db.models import OuterRef, Q, QuerySet, Subquery

from capacityweb import visibility
from recommender import adapters
from recommender.engine.scheduler.breakdown_summary import BreakdownSummary
from recommender.models import EvaluatedNode, Evaluation, Recommendation, WorkloadVerdict
from topology import charts, figures
from topology.models import Cluster, Snapshot

HEATMAP_SHARED_CACHE = "default"  # Redis when set: shared by the web processes
# Bump when the payload's shape changes: old entries stop matching (2: domain bars).
HEATMAP_PAYLOAD_VERSION = 2
# A payload is kept as JSON and, for clients that accept it (every browser), gzip: 0.8 MB
# of JSON is 38 kB for a 1k-node cluster. zlib's default level: 7 ms for 0.8 MB, once per
# payload (level 9: 35 ms, for 20 % less).
GZIP_LEVEL = 6


class BytesLRU:
    """Immutable payloads by key, in this process, least recently used out past ``max_bytes``.

    Django's local-memory cache pickles each value in and out (a copy of every
    megabyte per hit) and bounds entries by count, not size; bytes need neither.
    Thread-safe: the web process's request threads share it.
    """

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.size = 0
        self._entries: OrderedDict[str, bytes] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: str) -> bytes | None:
        with self._lock:
            body = self._entries.get(key)
            if body is not None:
                self._entries.move_to_end(key)
            return body

    def set(self, key: str, body: bytes) -> None:
        if len(body) > self.max_bytes:
            return
        with self._lock:
            previous = self._entries.pop(key, None)
            self.size += len(body) - (len(previous) if previous is not None else 0)
            self._entries[key] = body
            while self.size > self.max_bytes:
                _, evicted = self._entries.popitem(last=False)
                self.size -= len(evicted)


LOCAL_PAYLOADS = BytesLRU(settings.HEATMAP_LOCAL_BYTES)


# The snapshot's model, which an evaluation's pages never read through its snapshot
# (a page that needs it reads it by query): tens of MB of JSON on a large cluster,
# 1.3 of the demo's pending page's 1.9 s when it came along.
SNAPSHOT_MODEL = "snapshot__model_json"


def latest_evaluation(*, cluster_id: int) -> Evaluation | None:
    """The cluster's latest evaluation with its snapshot and cluster rows (one query),
    the snapshot's model left unread."""
    return (
        Evaluation.objects.filter(cluster_id=cluster_id)
        .select_related("snapshot", "cluster")
        .defer(SNAPSHOT_MODEL)
        .order_by("-taken_at", "-id")
        .first()
    )


def latest_evaluation_id(*, cluster_id: int) -> int | None:
    """The id of the cluster's latest evaluation, and nothing else (a live page's poll)."""
    return (
        Evaluation.objects.filter(cluster_id=cluster_id)
        .order_by("-taken_at", "-id")
        .values_list("id", flat=True)
        .first()
    )


def evaluations(*, cluster_id: int) -> QuerySet[Evaluation]:
    return Evaluation.objects.filter(cluster_id=cluster_id).order_by("-taken_at", "-id")


def recommendations(*, evaluation: Evaluation) -> QuerySet[Recommendation]:
    return Recommendation.objects.filter(evaluation=evaluation).order_by("id")


def all_verdicts() -> QuerySet[WorkloadVerdict]:
    """Every verdict, for a FilterSet to narrow (its ``evaluation`` filter is required)."""
    return WorkloadVerdict.objects.all()


def verdicts(
    *, evaluation: Evaluation, verdict: str | None = None, namespace: str | None = None
) -> QuerySet[WorkloadVerdict]:
    rows = WorkloadVerdict.objects.filter(evaluation=evaluation)
    if verdict:
        rows = rows.filter(verdict=verdict)
    if namespace:
        rows = rows.filter(namespace=namespace)
    return rows.order_by("workload")


def evaluation_of_snapshot(*, snapshot_id: int, with_result: bool = True) -> Evaluation | None:
    """The snapshot's evaluation (one query); ``with_result=False`` leaves the JSON unread."""
    evaluations = Evaluation.objects.filter(snapshot_id=snapshot_id)
    if not with_result:
        evaluations = evaluations.defer("result")
    return evaluations.first()


def latest_evaluation_of_cluster(*, cluster_id: int, with_result: bool = True) -> Evaluation | None:
    """The cluster's evaluation of its latest evaluated snapshot (one query), with that
    snapshot (its model left unread); ``with_result=False`` leaves the JSON unread."""
    evaluations = (
        Evaluation.objects.filter(cluster_id=cluster_id)
        .select_related("snapshot")
        .defer(SNAPSHOT_MODEL)
    )
    if not with_result:
        evaluations = evaluations.defer("result")
    return evaluations.order_by("-taken_at", "-id").first()


def newer_waiting_snapshot(snapshot: Snapshot) -> Snapshot | None:
    """The cluster's newest snapshot taken after ``snapshot`` that waits for its evaluation
    (none stored, neither skipped nor failed), if any: evaluating ``snapshot`` first would
    be work no live page shows (``tasks.evaluate_snapshot`` skips it)."""
    later = Q(taken_at__gt=snapshot.taken_at) | Q(taken_at=snapshot.taken_at, id__gt=snapshot.id)
    return (
        Snapshot.objects.filter(later, cluster_id=snapshot.cluster_id, evaluation__isnull=True)
        .filter(evaluation_state=Snapshot.EvaluationState.NONE)
        .only("id", "taken_at")
        .order_by("-taken_at", "-id")
        .first()
    )


def latest_unevaluated_snapshot(*, cluster_id: int) -> Snapshot | None:
    """The cluster's newest snapshot if it has no evaluation and none is ruled out
    (skipped or failed): one an ingest that found nothing new evaluates again."""
    latest = (
        Snapshot.objects.filter(cluster_id=cluster_id)
        .select_related("evaluation")
        .only("id", "evaluation_state", "evaluation__id")
        .order_by("-taken_at", "-id")
        .first()
    )
    if latest is None or latest.evaluation_state or hasattr(latest, "evaluation"):
        return None
    return latest


def pending_since_before(evaluation: Evaluation) -> dict[str, Any]:
    """Workload → ``pending_since`` in the cluster's evaluation just before ``evaluation``
    (one query; empty for the first): a workload it lists has been pending since then."""
    previous = (
        Evaluation.objects.filter(
            cluster_id=evaluation.cluster_id, taken_at__lt=evaluation.taken_at
        )
        .order_by("-taken_at", "-id")
        .values("id")[:1]
    )
    rows = WorkloadVerdict.objects.filter(evaluation_id__in=previous, pending_since__isnull=False)
    return dict(rows.values_list("workload", "pending_since"))


BREAKDOWN_SECONDS = 3600  # the latest evaluations' pages read theirs; older ones re-run
BREAKDOWN_NODES = 200  # per-node rows kept per workload; the rest are counted
NOT_PENDING = "not pending"  # cached for a workload the engine does not find pending


def verdict_of(*, evaluation: Evaluation, workload: str) -> WorkloadVerdict | None:
    return WorkloadVerdict.objects.filter(evaluation=evaluation, workload=workload).first()


def workload_breakdown(*, evaluation: Evaluation, workload: str) -> BreakdownSummary | None:
    """The engine's per-node breakdown of ``workload`` in ``evaluation``'s snapshot, summed
    up (``breakdown_summary``); None when the engine does not find it pending.

    ``keep_breakdowns`` puts every pending workload's summary in the default cache once
    the evaluation is stored (a worker task), so a visit reads one key. On a miss
    (evicted, expired, the task not done yet) the visit runs the scheduler pass again on
    the snapshot (seconds at a thousand nodes: parsing it is most of that) and keeps
    them all.
    """
    prefix = _breakdown_prefix(evaluation)
    found = caches["default"].get(_breakdown_key(prefix, workload))
    if found is None:
        every = _breakdowns(evaluation)
        found = every.get(workload, NOT_PENDING)
        _keep(prefix, {**every, workload: found})
    return None if found == NOT_PENDING else found


def keep_breakdowns(*, evaluation: Evaluation) -> int:
    """Sum up and cache every pending workload's breakdown of ``evaluation`` (the
    worker's ``keep_workload_breakdowns`` task, once the evaluation is stored)."""
    every = _breakdowns(evaluation)
    _keep(_breakdown_prefix(evaluation), every)
    return len(every)


def _breakdowns(evaluation: Evaluation) -> dict[str, BreakdownSummary]:
    """The pass the evaluation ran: its snapshot, with the scheduler profile it used."""
    profile = (evaluation.result or {}).get("schedulerProfile") or "default"
    return adapters.workload_breakdowns(
        evaluation.snapshot, policy=str(profile), limit=BREAKDOWN_NODES
    )


def _breakdown_prefix(evaluation: Evaluation) -> str:
    # the evaluation's identity: a re-run of the same snapshot changes stored_at
    return f"workload-breakdown:{evaluation.pk}:{evaluation.stored_at.isoformat()}:"


def _keep(prefix: str, every: Mapping[str, BreakdownSummary | str]) -> None:
    cache = caches["default"]
    cache.set_many(
        {_breakdown_key(prefix, key): value for key, value in every.items()}, BREAKDOWN_SECONDS
    )


def _breakdown_key(prefix: str, workload: str) -> str:
    """The workload by digest: its name is any text a file holds (spaces, line breaks),
    which a cache key must not carry."""
    return prefix + hashlib.sha256(workload.encode()).hexdigest()[:32]


def node_places(*, evaluation: Evaluation, names: Iterable[str]) -> list[EvaluatedNode]:
    """The named GPU nodes of the evaluation with their zone, block and rack (one query)."""
    return list(
        EvaluatedNode.objects.filter(evaluation=evaluation, name__in=list(names)).only(
            "name", "zone", "block", "rack"
        )
    )


def workload_history(*, cluster_id: int, workload: str, limit: int) -> list[WorkloadVerdict]:
    """The workload's verdict in the last ``limit`` evaluations of the cluster that list
    it, newest first (one query; the results' JSON unread)."""
    return list(
        WorkloadVerdict.objects.filter(evaluation__cluster_id=cluster_id, workload=workload)
        .select_related("evaluation")
        .defer("evaluation__result")
        .order_by("-evaluation__taken_at", "-evaluation_id")[:limit]
    )


def latest_evaluation_columns(cluster_ids: Iterable[int]) -> dict[int, Evaluation]:
    """Cluster id → its latest evaluation's columns, without the result JSON (one query)."""
    latest = (
        Evaluation.objects.filter(cluster_id=OuterRef("cluster_id"))
        .order_by("-taken_at", "-id")
        .values("id")[:1]
    )
    rows = Evaluation.objects.filter(cluster_id__in=list(cluster_ids), id=Subquery(latest))
    return {evaluation.cluster_id: evaluation for evaluation in rows.defer("result")}


def overview_identity() -> list[tuple[Any, ...]]:
    """Per cluster, by name: id, name, source settings, ingest state and since when,
    latest snapshot id, the latest evaluation's id, write time (of that snapshot, or
    an older one while it is being evaluated) and deferred parts not stored yet (a part
    stored leaves ``stored_at`` as it was) — what the overview cards are rendered from.

    One query, written out: it runs on every overview request, and the ORM's building
    and compiling of the same query (three correlated subqueries) cost more CPU than
    the rest of a cached page.
    """
    cluster, snapshot = Cluster._meta.db_table, Snapshot._meta.db_table
    evaluation = Evaluation._meta.db_table
    sql = f"""
        SELECT c.id, c.name, c.source_settings, c.ingest_state, c.ingest_since,
            c.latest_snapshot_id, e.id, e.stored_at, e.missing, e.parts_failed
        FROM (
            SELECT id, name, source_settings, ingest_state, ingest_since, (
                SELECT s.id FROM {snapshot} s WHERE s.cluster_id = {cluster}.id
                ORDER BY s.taken_at DESC LIMIT 1
            ) AS latest_snapshot_id
            FROM {cluster}
        ) c
        LEFT JOIN {evaluation} e ON e.id = (
            SELECT l.id FROM {evaluation} l WHERE l.cluster_id = c.id
            ORDER BY l.taken_at DESC, l.id DESC LIMIT 1
        )
        ORDER BY c.name, c.id, e.id
    """  # noqa: S608 - table names from the models, no input
    with connection.cursor() as cursor:
        cursor.execute(sql)
        return cursor.fetchall()


def shown_evaluation(cluster_id: int, snapshot_id: int | None) -> Evaluation | None:
    """The evaluation a cluster page shows (``?snapshot=``'s, else the latest evaluated
    snapshot's), with only its ids and ``stored_at``; None when there is none
    (``cluster_page`` says why).

    One query, written out: every heatmap data request runs it, and the ORM's building
    and compiling of it cost more CPU than the query.
    """
    evaluations = Evaluation._meta.db_table
    columns = (
        f"SELECT id, snapshot_id, cluster_id, stored_at, reservation_owners FROM {evaluations}"  # noqa: S608
    )
    if snapshot_id is None:
        sql = f"{columns} WHERE cluster_id = %s ORDER BY taken_at DESC, id DESC LIMIT 1"
        params = [cluster_id]
    else:
        sql = f"{columns} WHERE snapshot_id = %s AND cluster_id = %s LIMIT 1"
        params = [snapshot_id, cluster_id]
    return next(iter(Evaluation.objects.raw(sql, params)), None)


ALL_NAMES = visibility.STAFF.labels({})  # every reservation by name: staff, the warm-up


def heatmap_etag(
    *,
    evaluation: Evaluation,
    domain: Sequence[str],
    filters: charts.HeatmapFilters,
    encoding: str = "identity",
    labels: visibility.ReservationLabels = ALL_NAMES,
) -> str:
    """A strong ETag naming one heatmap payload: evaluation, its write, domain and filters,
    the reservation names hidden from the viewer, and its content coding (each coding is
    different bytes, so it has its own tag)."""
    identity = [
        HEATMAP_PAYLOAD_VERSION,
        evaluation.pk,
        evaluation.stored_at.isoformat(),
        list(domain),
        [filters.node_group, filters.gpu_model, filters.reservation, filters.team],
        sorted(filters.team_reservations),
        labels.key(),
    ]
    digest = hashlib.sha256(json.dumps(identity).encode()).hexdigest()[:32]
    return f'"{digest}"' if encoding == "identity" else f'"{digest}-{encoding}"'


def heatmap_json(
    *,
    evaluation: Evaluation,
    domain: Sequence[str],
    filters: charts.HeatmapFilters,
    encoding: str = "identity",
    labels: visibility.ReservationLabels = ALL_NAMES,
) -> bytes:
    """The heatmap payload as JSON bytes (``encoding`` "gzip": compressed), built once and
    then kept.

    Each web process keeps payloads in memory (LOCAL_PAYLOADS: a hit is the bytes
    themselves, not a megabyte over the network). The default view (no domain, no filter),
    which every page load and live update fetches, is also kept in the shared cache,
    where ``warm_heatmap`` puts it when the evaluation is published: no web process
    builds it (before, each built it once, holding up its other requests meanwhile).
    """
    view = {"evaluation": evaluation, "domain": domain, "filters": filters, "labels": labels}
    key = heatmap_key(**view, encoding=encoding)
    body: bytes | None = LOCAL_PAYLOADS.get(key)
    if body is None:
        shared = is_default_view(domain, filters)
        body = caches[HEATMAP_SHARED_CACHE].get(key) if shared else None
        if body is None:
            if encoding == "gzip":
                body = gzip_payload(heatmap_json(**view))
            else:
                body = build_heatmap_json(**view)
            if shared:
                keep_shared(key, body)
        LOCAL_PAYLOADS.set(key, body)
    return body


def gzip_payload(body: bytes) -> bytes:
    return gzip.compress(body, compresslevel=GZIP_LEVEL, mtime=0)  # same bytes every time


def heatmap_key(
    *,
    evaluation: Evaluation,
    domain: Sequence[str],
    filters: charts.HeatmapFilters,
    encoding: str = "identity",
    labels: visibility.ReservationLabels = ALL_NAMES,
) -> str:
    return "heatmap:" + heatmap_etag(
        evaluation=evaluation, domain=domain, filters=filters, encoding=encoding, labels=labels
    )


def keep_shared(key: str, body: bytes) -> None:
    caches[HEATMAP_SHARED_CACHE].set(key, body, timeout=settings.HEATMAP_CACHE_SECONDS)


def is_default_view(domain: Sequence[str], filters: charts.HeatmapFilters) -> bool:
    return not domain and filters == charts.HeatmapFilters()


def build_heatmap_json(
    *,
    evaluation: Evaluation,
    domain: Sequence[str],
    filters: charts.HeatmapFilters,
    labels: visibility.ReservationLabels = ALL_NAMES,
) -> bytes:
    stored = (
        Evaluation.objects.filter(pk=evaluation.pk)
        .values_list("result__heatmap", "result__cluster", "result__idleReservations")
        .first()
    )
    heatmap, cluster, idle = stored or (None, None, None)
    cells = visibility.heatmap_cells(heatmap or [], labels)
    view = charts.heatmap_view(cells, domain=domain, filters=filters)
    view["snapshot"] = evaluation.snapshot_id
    view["evaluation"] = evaluation.pk
    # the whole cluster's totals line, unfiltered: GPU counts only (visibility.py)
    view["clusterFigures"] = figures.figures_json(
        {"heatmap": heatmap or [], "cluster": cluster or {}, "idleReservations": idle or []}
    )
    return json.dumps(view, cls=DjangoJSONEncoder).encode()


def warm_heatmap(evaluation: Evaluation) -> None:
    """Put the evaluation's default heatmap view in the shared cache, as JSON and gzip
    (at publish time)."""
    view = {"evaluation": evaluation, "domain": (), "filters": charts.HeatmapFilters()}
    body = build_heatmap_json(**view)
    keep_shared(heatmap_key(**view), body)
    keep_shared(heatmap_key(**view, encoding="gzip"), gzip_payload(body))
