"""The scheduler pass retries what it left unplaced, as kube-scheduler's queue does.

Worked by hand from kubernetes/kubernetes: ``pkg/scheduler/schedule_one.go``
(``ScheduleOne``: one pod per cycle, the failure sent to the unschedulable queue),
``pkg/scheduler/backend/queue/scheduling_queue.go`` (``MoveAllToActiveOrBackoffQueue``
on an assigned pod added or a pod deleted, filtered by the plugins' queueing hints;
the active queue pops by PrioritySort), ``framework/plugins/interpodaffinity``
(``filtering.go`` and the ``isSchedulableAfterPodChange`` hint) and
``framework/preemption/preemption.go`` (victims are chosen per node).
"""

from __future__ import annotations

from typing import Any

from recommender.engine.scheduler.placement import place
from recommender.engine.scheduler.workloads import pending_workloads
from tests.builders.objects import KubeObject, PodObjectBuilder, as_dicts, node_object, pod_object
from topology.kube.parse import parse_objects

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"


ZONE_NODE = node_object("").hostname().allocatable(memory="64Gi", pods="110")
ML_POD = pod_object("ml", "")


def app_pod(name: str, app: str, priority: int, cpu: str) -> PodObjectBuilder:
    return ML_POD.named(name).label("app", app).priority(priority).requests(cpu=cpu)


def required(kind: str, app: str, key: str) -> dict[str, Any]:
    term = {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": key}
    return {kind: {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}


def parsed(*objects: KubeObject):  # type: ignore[no-untyped-def]
    snapshot = parse_objects((("t.yaml", o) for o in as_dicts(*objects)), cluster_name="t")
    assert [str(e) for e in snapshot.errors] == []
    return snapshot.cluster


def test_it_places_a_pod_whose_required_affinity_names_a_lower_priority_pending_pod() -> None:
    # web (priority 100) pops first: no pod app=db runs and web does not match its own
    # term, so every node fails "didn't match pod affinity rules". db (priority 0) binds
    # to n2 (its nodeSelector). db's binding matches web's term: the hint requeues web,
    # which now fits only in db's zone z2.
    cluster = parsed(
        ZONE_NODE.named("n1").label(ZONE, "z1").allocatable(cpu="8"),
        ZONE_NODE.named("n2").label(ZONE, "z2").allocatable(cpu="8"),
        app_pod("web", "web", 100, "1").pod_spec(affinity=required("podAffinity", "db", ZONE)),
        app_pod("db", "db", 0, "1").node_selector({ZONE: "z2"}),
    )
    result = place(cluster, pending_workloads(cluster))
    nodes = {b.pod: b.node for o in result.outcomes for b in o.bindings}
    assert nodes == {"ml/web": "n2", "ml/db": "n2"}


def test_it_lists_a_retried_pod_after_the_pods_bound_before_it() -> None:
    cluster = parsed(
        ZONE_NODE.named("n1").label(ZONE, "z1").allocatable(cpu="8"),
        app_pod("web", "web", 100, "1").pod_spec(affinity=required("podAffinity", "db", ZONE)),
        app_pod("db", "db", 0, "1"),
    )
    result = place(cluster, pending_workloads(cluster))
    assert [o.workload for o in result.outcomes] == ["ml/web", "ml/db"]
    assert result.placed_order == ("ml/db", "ml/web")


def test_it_retries_a_preemptor_once_another_preemptor_evicted_a_zone_mate() -> None:
    # guard-1 (n1) and guard-2 (n2), priority 0, both in zone z1, repel app=a zone-wide.
    # a (1000) pops first: on either node, evicting that node's guard leaves the other
    # guard in the zone, so no node is a candidate ("No preemption victims found").
    # b (1000, same priority, later name) needs 4 cpu: only n2 without guard-2 has it;
    # b preempts guard-2. The deletion requeues a: now only guard-1 repels it, and
    # evicting it makes n1 fit (1 cpu of 2), so a preempts guard-1 on n1.
    repels_a = required("podAntiAffinity", "a", ZONE)
    cluster = parsed(
        ZONE_NODE.named("n1").label(ZONE, "z1").allocatable(cpu="2"),
        ZONE_NODE.named("n2").label(ZONE, "z1").allocatable(cpu="8"),
        app_pod("guard-1", "guard", 0, "1").on("n1").pod_spec(affinity=repels_a),
        app_pod("guard-2", "guard", 0, "7").on("n2").pod_spec(affinity=repels_a),
        app_pod("a", "a", 1000, "1"),
        app_pod("b", "b", 1000, "4"),
    )
    result = place(cluster, pending_workloads(cluster))
    outcomes = {o.workload: (o.bindings[0].node, o.preempted) for o in result.outcomes}
    assert outcomes == {"ml/a": ("n1", ("ml/guard-1",)), "ml/b": ("n2", ("ml/guard-2",))}
