"""Dashboard pages of the recommender: why each workload is pending, and what to add.

Every cluster page (these, the topology heatmap and the reservations page)
shares one context (``cluster_page``): the cluster picker, the snapshot picker
(``?snapshot=<id>`` shows the same page as of that snapshot) and the evaluation
of the chosen snapshot — a fixed number of queries, whatever the cluster's size.
The page filters are the API's FilterSets.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.contrib.auth.decorators import login_required
from django.db.models import Case, F, IntegerField, Q, QuerySet, When
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render

from capacityweb import visibility
from recommender import pending_causes, selectors
from recommender.engine.evaluate.report import group_yaml
from recommender.filters import DISAGREEMENT_CLASSES, WorkloadVerdictFilterSet
from recommender.models import Evaluation, WorkloadVerdict
from topology import selectors as topology_selectors
from topology.models import Cluster, Snapshot

SNAPSHOT_PICKER_LIMIT = 50
VERDICT_CHOICES = WorkloadVerdict.Verdict.choices


@dataclass
class ClusterPage:
    """What every cluster page shows above its own content."""

    cluster: Cluster
    clusters: list[Cluster]
    snapshots: list[Snapshot]
    snapshot: Snapshot | None
    evaluation: Evaluation | None
    is_latest: bool
    newer_snapshot: Snapshot | None = None  # ingested after the one shown, not evaluated yet

    def context(self, section: str) -> dict[str, Any]:
        return {
            "cluster": self.cluster,
            "clusters": self.clusters,
            "snapshots": self.snapshots,
            "snapshot": self.snapshot,
            "evaluation": self.evaluation,
            "result": self.evaluation.result if self.evaluation else None,
            "is_latest": self.is_latest,
            # the snapshot links keep (None: live)
            "pinned_snapshot": None if self.is_latest or not self.snapshot else self.snapshot.id,
            "newer_snapshot": self.newer_snapshot,
            "section": section,
        }


def requested_snapshot_id(request: HttpRequest) -> int | None:
    raw = request.GET.get("snapshot", "")
    if not raw:
        return None
    if not (raw.isascii() and raw.isdigit() and len(raw) <= 18):  # "²": isdigit, not int()
        raise Http404("snapshot must be a snapshot id")
    return int(raw)


def cluster_page(request: HttpRequest, cluster_id: int, *, with_result: bool = True) -> ClusterPage:
    """Load the cluster, the picker lists and the shown snapshot's evaluation (4 queries).

    Live (no ``?snapshot=``), the page shows the latest *evaluated* snapshot: a snapshot
    ingested since is being evaluated, and showing it would empty every table until its
    evaluation is stored. That newer snapshot is named (``newer_snapshot``) so the page
    can say so; the live update that brings its evaluation re-renders the page without it.
    ``with_result=False`` leaves the evaluation's result JSON unread, for views that
    need only its id and columns.
    """
    clusters = topology_selectors.cluster_choices()
    cluster = next((c for c in clusters if c.id == cluster_id), None)
    if cluster is None:
        raise Http404("no such cluster")
    snapshots = topology_selectors.recent_snapshots(
        cluster_id=cluster_id, limit=SNAPSHOT_PICKER_LIMIT
    )
    wanted = requested_snapshot_id(request)
    if wanted is None:
        return live_cluster_page(cluster, clusters, snapshots, with_result=with_result)
    snapshot = next((s for s in snapshots if s.id == wanted), None)
    if snapshot is None:
        snapshot = topology_selectors.snapshot_of_cluster(cluster_id=cluster_id, snapshot_id=wanted)
        if snapshot is None:
            raise Http404("no such snapshot in this cluster")
        snapshots.append(snapshot)
    evaluation = selectors.evaluation_of_snapshot(snapshot_id=snapshot.id, with_result=with_result)
    is_latest = snapshot.id == snapshots[0].id
    return ClusterPage(cluster, clusters, snapshots, snapshot, evaluation, is_latest)


def live_cluster_page(
    cluster: Cluster, clusters: list[Cluster], snapshots: list[Snapshot], *, with_result: bool
) -> ClusterPage:
    """The page as of the cluster's latest evaluation, naming a newer snapshot if any."""
    evaluation = selectors.latest_evaluation_of_cluster(
        cluster_id=cluster.id, with_result=with_result
    )
    if evaluation is None:  # nothing evaluated yet: the newest snapshot, with its notice
        return ClusterPage(cluster, clusters, snapshots, next(iter(snapshots), None), None, True)
    snapshot = next((s for s in snapshots if s.id == evaluation.snapshot_id), None)
    if snapshot is None:  # older than the picker's list: 50 snapshots since, none evaluated
        snapshot = evaluation.snapshot
        snapshots.append(snapshot)
    newer = snapshots[0] if snapshots[0].taken_at > snapshot.taken_at else None
    return ClusterPage(cluster, clusters, snapshots, snapshot, evaluation, True, newer)


def page_labels(request: HttpRequest, evaluation: Evaluation | None) -> Any:
    """The shown evaluation's reservation names as the user may read them."""
    owners = evaluation.reservation_owners if evaluation is not None else {}
    return visibility.request_viewer(request).labels(owners)


def redacted_verdict(verdict: WorkloadVerdict, labels: Any) -> WorkloadVerdict:
    """The verdict (not saved) with its reasons and joint plan as the viewer may read them."""
    shown = visibility.workload(
        {
            "reasons": verdict.reasons,
            "joint": verdict.joint,
            "naive": verdict.naive,
            "relaxations": verdict.relaxations,
        },
        labels,
    )
    verdict.reasons, verdict.joint = shown["reasons"], shown["joint"]
    verdict.naive, verdict.relaxations = shown["naive"], shown["relaxations"]
    return verdict


def pending_rows(
    verdicts: list[WorkloadVerdict], result: dict[str, Any], labels: Any
) -> list[dict[str, Any]]:
    """Each verdict with the scheduler's diagnosis from the evaluation JSON, its cause and
    its verdict in plain words (``pending_causes``); what would change the answer is the
    verdict's own ``relaxations``."""
    diagnoses = result.get("diagnoses") or {}
    rows = []
    for verdict in verdicts:
        shown = redacted_verdict(verdict, labels)
        diagnosis = visibility.result(diagnoses.get(verdict.workload) or {}, labels)
        cause = pending_causes.cause_of(shown, diagnosis)
        rows.append(
            {
                "verdict": shown,
                "diagnosis": diagnosis,
                "cause": cause,
                "plain": pending_causes.plain_verdict(shown, cause, diagnosis),
                "rejections": pending_causes.group_rejections(shown.reasons or []),
                "agreement": pending_causes.agreement(shown),
            }
        )
    return rows


def grouped_rows(rows: list[dict[str, Any]], sort: str) -> list[dict[str, Any]]:
    """Rows under their cause (in ``pending_causes.CAUSES`` order), each group in the
    page's order; a sort the user chose shows one list in that order instead."""
    if sort:
        return [{"cause": None, "rows": rows}] if rows else []
    groups = []
    for cause in pending_causes.CAUSES:
        members = [row for row in rows if row["cause"].key == cause.key]
        if members:
            groups.append({"cause": cause, "rows": members})
    return groups


def with_shared_reasons(rows: list[dict[str, Any]]) -> tuple[str, ...]:
    """The node reasons every shown row's diagnosis has (cluster-wide taints, …), taken
    out of each row's diagnosis (``diagnosis_shown``) so the page says them once."""
    shared = pending_causes.shared_parts(str(r["diagnosis"].get("summary") or "") for r in rows)
    for row in rows:
        summary = str(row["diagnosis"].get("summary") or "")
        row["diagnosis_shown"] = pending_causes.without_parts(summary, shared)
    return shared


PENDING_SORTS = {  # ?sort= → order; the default puts gangs, then blocked workloads, first
    "": ("-is_gang", "-is_blocked", "workload"),
    "age": (F("pending_since").asc(nulls_last=True), "workload"),
    "gpus": ("-requested_gpus", "workload"),
    "cost": ("-naive_cost_per_hour", "-joint_cost_per_hour", "workload"),
}
PENDING_SORT_CHOICES = (
    ("", "by cause (gangs and blocked first)"),
    ("age", "pending longest"),
    ("gpus", "most GPUs"),
    ("cost", "naive autoscaler's cost"),
)


def sorted_verdicts(verdicts: QuerySet[WorkloadVerdict], sort: str) -> QuerySet[WorkloadVerdict]:
    """The page's order (PENDING_SORTS), done by the database."""
    flags = verdicts.annotate(
        is_gang=Case(When(kind="gang", then=1), default=0, output_field=IntegerField()),
        is_blocked=Case(
            When(verdict=WorkloadVerdict.Verdict.BLOCKED, then=1),
            default=0,
            output_field=IntegerField(),
        ),
    )
    return flags.order_by(*PENDING_SORTS.get(sort, PENDING_SORTS[""]))


def searched(verdicts: QuerySet[WorkloadVerdict], query: str) -> QuerySet[WorkloadVerdict]:
    """Workloads whose name or namespace (the team) contains ``query``, in the database."""
    if not query:
        return verdicts
    return verdicts.filter(Q(workload__icontains=query) | Q(namespace__icontains=query))


def pending_summary(result: dict[str, Any]) -> dict[str, Any]:
    """N pending, M blocked, K that the naive autoscaler buys unusable GPUs for, at $X/h
    (the evaluation's stranded cost: the unused part of every node it would add)."""
    workloads = result.get("workloads") or []
    return {
        "pending": len(workloads),
        "blocked": sum(1 for w in workloads if w.get("verdict") == WorkloadVerdict.Verdict.BLOCKED),
        "wasting": sum(1 for w in workloads if (w.get("naive") or {}).get("strandedGpus")),
        "waste_per_hour": float((result.get("cost") or {}).get("strandedPerHour") or 0.0),
    }


@login_required
def pending_page(request: HttpRequest, cluster_id: int) -> HttpResponse:
    """Scheduler diagnosis, naive action and what it strands, joint recommendation;
    searched (``q``), filtered and sorted (``sort``) in the database."""
    page = cluster_page(request, cluster_id)
    chosen = {
        key: request.GET.get(key, "").strip()
        for key in ("verdict", "disagreement", "namespace", "q", "sort")
    }
    rows: list[dict[str, Any]] = []
    filterset = None
    errors: dict[str, list[str]] = {}
    if "\x00" in chosen["q"]:
        # Postgres text holds no NUL (a DataError, 500): refused as Django's form fields do
        errors["q"] = ["Null characters are not allowed."]
        chosen["q"] = chosen["q"].replace("\x00", "")
    result = (page.evaluation.result or {}) if page.evaluation is not None else {}
    if page.evaluation is not None and not errors:
        data = {key: chosen[key] for key in ("verdict", "disagreement", "namespace") if chosen[key]}
        data["evaluation"] = str(page.evaluation.id)
        filterset = WorkloadVerdictFilterSet(data, queryset=selectors.all_verdicts())
        if filterset.is_valid():
            verdicts = sorted_verdicts(searched(filterset.qs, chosen["q"]), chosen["sort"])
            rows = pending_rows(list(verdicts), result, page_labels(request, page.evaluation))
    shared = with_shared_reasons(rows)
    sort = chosen["sort"] if chosen["sort"] in PENDING_SORTS else ""
    context = page.context("pending")
    context.update(
        {
            "rows": rows,
            "groups": grouped_rows(rows, sort),
            "grouped": not sort,
            "shared_reasons": shared,
            "chosen": chosen,
            "filtered": any(chosen[k] for k in ("verdict", "disagreement", "namespace", "q")),
            "filter_errors": {**(filterset.errors if filterset is not None else {}), **errors},
            "verdict_choices": VERDICT_CHOICES,
            "disagreement_classes": DISAGREEMENT_CLASSES,
            "sort_choices": PENDING_SORT_CHOICES,
            "summary": pending_summary(result),
            "not_modelled": not_modelled(result),
        }
    )
    return render(request, "dashboard/pending.html", context, status=400 if errors else 200)


NOT_MODELLED_SHOWN = 200


def not_modelled(result: dict[str, Any]) -> dict[str, Any]:
    """What the evaluation read but does not model (kinds ignored, fields unsupported),
    the first ``NOT_MODELLED_SHOWN`` fields listed and the rest counted."""
    unsupported = result.get("unsupported") or []
    return {
        "ignored": result.get("ignored") or [],
        "unsupported": unsupported[:NOT_MODELLED_SHOWN],
        "more": max(0, len(unsupported) - NOT_MODELLED_SHOWN),
    }


def with_prices_known(recommendations: list[Any], result: dict[str, Any]) -> list[Any]:
    """Each recommendation row marked ``price_known`` from the evaluation's JSON (its
    ``priceKnown``; results stored before it was added: known), so a card of a group
    without a price reads "price unknown", never 0/h."""
    known = {
        (r["nodeGroup"], tuple(r["workloads"])): r.get("priceKnown", True)
        for r in result.get("recommendations") or []
    }
    for rec in recommendations:
        rec.price_known = known.get((rec.node_group, tuple(rec.workloads)), True)
    return recommendations


# how a card introduces each of its actions (``recommender.actions.report`` roles)
ACTION_LEADS = {
    "apply": "Apply",
    "either": "Either",
    "or": "Or",
    "afterwards": "Then, once the work is done (undoes the “Or” step)",
    "note": "Note",
}


def card_actions(item: dict[str, Any], fallback: str, labels: Any) -> list[dict[str, str]]:
    """A card's actions as the page shows them, each copied on its own: kind, role, the
    lead saying how it relates to the others, and the relabelled text (a result stored
    before its actions were: the one stored text)."""
    actions = item.get("actions")
    if actions is None:
        actions = [{"kind": "YAML", "role": "apply", "text": fallback}] if fallback else []
    return [
        {**a, "lead": ACTION_LEADS.get(a["role"], ""), "text": labels.text(a["text"])}
        for a in actions
    ]


def with_actions(recommendations: list[Any], result: dict[str, Any], labels: Any) -> list[Any]:
    """Each recommendation row given its actions (``card_actions``) and the reservation
    paying for it, from the evaluation's JSON."""
    items = {
        (r["nodeGroup"], tuple(r["workloads"])): r for r in result.get("recommendations") or []
    }
    for rec in recommendations:
        item = items.get((rec.node_group, tuple(rec.workloads)), {})
        rec.actions = card_actions(item, labels.text(rec.yaml or ""), labels)
        rec.reservation = labels.label(item.get("reservation"))
        rec.id_text = str(rec.id)  # the actions' element ids: yaml-<id>-<n>
    return recommendations


def group_totals(result: dict[str, Any], labels: Any) -> list[dict[str, Any]]:
    """The "apply all" of each group with several cards to buy: its actions (a result
    stored before they were: the project group's patch)."""
    totals = [t for t in result.get("nodeGroupTotals", []) if t["cards"] > 1]
    return [
        {**t, "actions": card_actions(t, group_yaml(t) if t.get("patch") else "", labels)}
        for t in totals
    ]


@login_required
def recommendations_page(request: HttpRequest, cluster_id: int) -> HttpResponse:
    """Each scale-up with the YAML to apply and the workloads it unblocks."""
    page = cluster_page(request, cluster_id)
    recommendations = (
        list(selectors.recommendations(evaluation=page.evaluation)) if page.evaluation else []
    )
    context = page.context("recommendations")
    labels = page_labels(request, page.evaluation)
    context["recommendations"] = recommendations
    result = (page.evaluation.result or {}) if page.evaluation else {}
    groups = {g["name"]: g for g in result.get("nodeGroups", [])}  # where each was found
    with_actions(recommendations, result, labels)
    for rec in with_prices_known(recommendations, result):
        rec.group_source = groups.get(rec.node_group, {}).get("source")
        rec.group_price_source = groups.get(rec.node_group, {}).get("priceSource")
    context["joint_unpriced"] = ((result.get("cost") or {}).get("unpricedNodes") or {}).get("joint")
    context["idle_reservations"] = visibility.idle_reservations(
        result.get("idleReservations", []), labels
    )
    context["group_totals"] = group_totals(result, labels)
    return render(request, "dashboard/recommendations.html", context)
