"""Move instead of buy (``recommender.engine.moves``), worked out by hand from
cluster-autoscaler's drain rules (``cluster-autoscaler/simulator/drainability/rules/``,
``utils/drain/drain.go``) and the descheduler's eviction rules
(``sigs.k8s.io/descheduler pkg/descheduler/evictions/evictions.go``
``PodEvictor``/``defaultevictor.go`` ``DefaultEvictor``): no Django."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from recommender.engine.autoscaler.caflags import parse_flags
from recommender.engine.autoscaler.plan import options_for
from recommender.engine.evaluate.evaluation import evaluate
from recommender.engine.moves.drainability import DrainContext, DrainSettings, movable
from recommender.engine.moves.owners import EVICT, INSTEAD, ROLLOUT
from recommender.engine.moves.reconcile import Reconciliation, Refusal, reconcile
from recommender.engine.moves.report import moves_for, reconciliation_actions, render_moves
from recommender.engine.moves.scaledown import ScaleDown, duration
from recommender.engine.moves.search import MoveSearch, Search
from recommender.engine.scheduler.state import ClusterState
from recommender.engine.scheduler.workloads import pending_workloads
from tests.action_checks import assert_next_runs_patch, assert_reconciliation_runs
from tests.builders import PodBuilder, make_gang, make_node, make_pod, make_reservation
from topology.kube.core.drainfields import drain_fields
from topology.kube.fields import ObjectContext
from topology.kube.parse import parse_objects
from topology.model.hardware import (
    Cluster,
    DisruptionBudget,
    LabelRequirement,
    NodeSelectorTerm,
    Pod,
    PodSelector,
)

AT = datetime(2025, 1, 1, tzinfo=UTC)
BLOCK = "cloud.google.com/gce-topology-block"

# an 8-GPU H100 node of block b1 (GPUs "<node>-gpu<i>", devices "<node>-dev<i>"); a
# one-CPU pod of ml, and a running one: a ReplicaSet's, labelled app=<name>
H100 = (
    make_node()
    .allocatable(96, 2**40, 110)
    .hostname()
    .label(BLOCK, "b1")
    .gpus(8, "H100", gpu_name="{node}-gpu{i}", device_name="{node}-dev{i}", capacity=None)
)
POD = make_pod(namespace="ml").requests(cpu=1)


def replicated(name: str, namespace: str = "ml") -> PodBuilder:
    """``name`` of ``namespace``, created by the ReplicaSet ``<name>-owner``."""
    owner = f"ReplicaSet/{namespace}/{name}-owner"
    return POD.named(name).namespace(namespace).label("app", name).controller(owner)


def search(cluster: Cluster, settings: DrainSettings = DrainSettings()) -> dict[str, Search]:  # noqa: B008
    state = ClusterState.from_cluster(cluster)
    options = options_for("default", AT)
    moves = MoveSearch(cluster, state, options, DrainContext.of(cluster, settings))
    return {w.key: moves.unblock(w) for w in pending_workloads(cluster)}


def two_small_pods(*extra: Pod, small: dict[str, Any] | None = None) -> Cluster:
    """n1: two 2-GPU pods (4 free); n2: a bare 4-GPU pod (4 free); an 8-GPU pod waits."""
    small = small or {}
    pods = (
        replicated("small-a").on("n1").gpus(2).set(**small).build(),
        replicated("small-b").on("n1").gpus(2).set(**small).build(),
        replicated("bare").controller(None).on("n2").gpus(4).build(),
        POD.named("big").gpus(8).build(),
        *extra,
    )
    return Cluster("c", nodes=(H100.named("n1").build(), H100.named("n2").build()), pods=pods)


def test_it_unblocks_an_8_gpu_pod_by_moving_two_small_pods_off_one_node() -> None:
    """Freeing n1 needs both 2-GPU pods gone (4 GPUs disrupted, 2 pods); they fit in
    n2's 4 free GPUs. n2's bare pod is never a candidate (``replicated`` rule)."""
    found = search(two_small_pods())["ml/big"]
    assert found.plan is not None
    moves = {(m.pod, m.from_node, m.to_node) for m in found.plan.moves}
    assert moves == {("ml/small-a", "n1", "n2"), ("ml/small-b", "n1", "n2")}
    assert found.plan.gpu_milli_disrupted == 4000
    assert [b.node for b in found.plan.bindings] == ["n1"]


def test_it_never_moves_a_bare_pod() -> None:
    """``rules/replicated/rule.go``: no controller reference blocks the drain
    (NotReplicated); the descheduler's ``DefaultEvictor`` also refuses pods without an
    owner (``IsPodWithoutOwnerReferences``). With n1's pods bare too nothing can move."""
    cluster = two_small_pods(small={"controller": None})
    assert search(cluster)["ml/big"].plan is None


def test_it_never_moves_a_bare_pod_even_when_annotated_safe_to_evict() -> None:
    """``rules/safetoevict/rule.go`` makes a bare pod drainable (cluster-autoscaler
    deletes it with its node); a move would lose it, so it is no move."""
    bare = replicated("loner").controller(None).safe_to_evict(True).on("n1").gpus(2).build()
    ctx = DrainContext.of(Cluster("c"), DrainSettings())
    status = movable(bare, ctx, priority_cap=None)
    assert (status.movable, status.rule) == (False, "bare")


def test_it_keeps_a_pod_whose_disruption_budget_allows_no_disruption() -> None:
    """``rules/pdb/rule.go``: a budget selecting the pod with DisruptionsAllowed < 1
    blocks it (NotEnoughPdb); the Eviction API would refuse it too (429)."""
    budget = DisruptionBudget(
        "ml",
        "small",
        PodSelector((LabelRequirement("app", "In", ("small-a",)),)),
        disruptions_allowed=0,
    )
    cluster = two_small_pods()
    cluster = Cluster(
        cluster.name, nodes=cluster.nodes, pods=cluster.pods, disruption_budgets=(budget,)
    )
    assert search(cluster)["ml/big"].plan is None


def test_it_never_moves_a_daemonset_pod() -> None:
    """``rules/daemonset/rule.go`` drains a DaemonSet pod only with its node; kept on
    the node, the DaemonSet recreates it right there (the descheduler's
    ``DefaultEvictor`` never evicts DaemonSet pods: ``IsDaemonsetPod``)."""
    cluster = two_small_pods(small={"node_daemon": "DaemonSet/ml/agent"})
    assert search(cluster)["ml/big"].plan is None


def test_it_never_moves_a_pod_with_local_storage() -> None:
    """``rules/localstorage/rule.go`` ``HasBlockingLocalStorage``: an emptyDir not on
    Memory blocks the drain (--skip-nodes-with-local-storage defaults to true)."""
    cluster = two_small_pods(small={"blocking_local_volumes": ("scratch",)})
    assert search(cluster)["ml/big"].plan is None


def test_it_moves_a_pod_with_local_storage_when_the_flag_is_off() -> None:
    """The same rule is skipped with --skip-nodes-with-local-storage=false (rules.go)."""
    cluster = two_small_pods(small={"blocking_local_volumes": ("scratch",)})
    settings = DrainSettings(skip_nodes_with_local_storage=False)
    assert search(cluster, settings)["ml/big"].plan is not None


def test_it_never_moves_one_member_of_a_running_gang() -> None:
    """Evicting one member of a running gang stops its all-or-nothing work (the
    coscheduling Permit binds members only together): members are not movable."""
    cluster = two_small_pods(small={"gang": "ml/trainer"})
    cluster = replace(cluster, gangs=(make_gang("trainer", 2, "ml").build(),))
    assert search(cluster)["ml/big"].plan is None


def test_it_moves_no_pod_of_a_higher_priority_than_the_workload() -> None:
    """By default a pod above the workload's priority is not disrupted for it (the
    descheduler's ``DefaultEvictor`` ``priorityThreshold`` rule)."""
    cluster = two_small_pods(small={"priority": 100})
    assert search(cluster)["ml/big"].plan is None


def test_it_offers_no_move_that_frees_room_only_in_the_wrong_block() -> None:
    """A gang of two 8-GPU members requires one block. Block b1: n1 free, n2 held by a
    bare pod. Block b2: n3 has 4 free and a movable 4-GPU pod. Freeing n3 gives 8 GPUs
    in b2, not the 16 the gang needs in one block, and b1 cannot be freed: no plan."""
    gang = make_gang("train", 2, "ml").required(BLOCK).build()
    members = tuple(POD.named(f"train-{i}").gpus(8).gang("ml/train").build() for i in range(2))
    cluster = Cluster(
        "c",
        nodes=(
            H100.named("n1").build(),
            H100.named("n2").build(),
            H100.named("n3").label(BLOCK, "b2").build(),
        ),
        pods=(
            replicated("bare").controller(None).on("n2").gpus(8).build(),
            replicated("mover").on("n3").gpus(4).build(),
            *members,
        ),
        gangs=(gang,),
    )
    assert search(cluster)["ml/train"].plan is None


def test_it_frees_room_for_a_gang_inside_its_block() -> None:
    """The same gang, with n2's pod movable and room for it in b2 (n3: 8 free): moving
    it frees n2, so both members bind in b1."""
    gang = make_gang("train", 2, "ml").required(BLOCK).build()
    members = tuple(POD.named(f"train-{i}").gpus(8).gang("ml/train").build() for i in range(2))
    cluster = Cluster(
        "c",
        nodes=(
            H100.named("n1").build(),
            H100.named("n2").build(),
            H100.named("n3").label(BLOCK, "b2").build(),
        ),
        pods=(replicated("mover").on("n2").gpus(8).build(), *members),
        gangs=(gang,),
    )
    plan = search(cluster)["ml/train"].plan
    assert plan is not None
    assert [(m.pod, m.to_node) for m in plan.moves] == [("ml/mover", "n3")]
    assert sorted(b.node for b in plan.bindings) == ["n1", "n2"]


# --- reservation reconciliation ----------------------------------------------------------


def reservation_cluster(*on_demand_pods: Pod) -> Cluster:
    """r1 holds n-res (8 idle GPUs) for team-a; od1 is on-demand at 30/h."""
    reservation = make_reservation("r1", "team-a").nodes("n-res").build()
    return Cluster(
        "c",
        nodes=(H100.named("n-res").build(), H100.named("od1").price(30.0).build()),
        pods=on_demand_pods,
        reservations=(reservation,),
    )


def reconciled(cluster: Cluster) -> tuple[tuple[Reconciliation, ...], tuple[Refusal, ...]]:
    state = ClusterState.from_cluster(cluster)
    ctx = DrainContext.of(cluster, DrainSettings())
    return reconcile(cluster, state, options_for("default", AT), ctx, AT)


def test_it_moves_a_teams_pods_from_an_on_demand_node_into_its_idle_reservation() -> None:
    owner = "ReplicaSet/team-a/job-owner"  # read, no Deployment owns it: patched
    pod = replicated("job", "team-a").set(template_owner=owner)
    cluster = reservation_cluster(pod.on("od1").gpus(4).build())
    (found,), refused = reconciled(cluster)
    assert (found.node, found.price_per_hour, found.reservations) == ("od1", 30.0, ("r1",))
    assert [(m.pod, m.to_node) for m in found.moves] == [("team-a/job", "n-res")]
    assert refused == ()


def test_it_never_moves_a_pod_whose_team_has_no_reservation() -> None:
    """team-b owns no reservation: its pod stays, so od1 never empties and nothing of
    it is offered (the reservation filter also keeps team-b off n-res)."""
    cluster = reservation_cluster(
        replicated("job", "team-a").on("od1").gpus(2).build(),
        replicated("other", "team-b").on("od1").gpus(2).build(),
    )
    found, (refusal,) = reconciled(cluster)
    assert found == ()
    assert refusal.node == "od1" and "team-b" in refusal.reason


def reservation_actions(cluster: Cluster) -> tuple[Reconciliation, list[str]]:
    """The one reconciliation of ``cluster``, and its actions checked as kubectl takes them."""
    (found,), refused = reconciled(cluster)
    assert refused == ()
    actions = reconciliation_actions(found)
    assert_reconciliation_runs(actions)
    return found, actions


def test_it_patches_the_deployment_that_owns_the_pods_replicaset_and_waits_for_its_rollout() -> (
    None
):
    """r1 holds n-res and n-res2 by name: its pods need a required node affinity, one
    ``matchFields`` term per node (a node field selector takes one value, validation.go
    ``validateNodeFieldSelectorRequirement``). The template is the Deployment's
    (``deployment/sync.go`` ``getNewReplicaSet``): patched, then its rollout replaces the
    pod; no eviction, which the old ReplicaSet would answer with an old-template pod.
    The rollout also replaces web-b (on n-res already): counted and said. Undo:
    ``kubectl rollout undo``, then uncordon."""
    reservation = make_reservation("r1", "team-a").nodes("n-res", "n-res2").build()
    pod = replicated("web", "team-a").set(template_owner="Deployment/team-a/web")
    cluster = Cluster(
        "c",
        nodes=(
            H100.named("n-res").build(),
            H100.named("n-res2").build(),
            H100.named("od1").price(30.0).build(),
        ),
        pods=(pod.on("od1").gpus(4).build(), pod.named("web-b").on("n-res").gpus(4).build()),
        reservations=(reservation,),
    )
    found, actions = reservation_actions(cluster)
    (step,) = found.owners
    assert (step.owner, step.pods, step.how) == ("Deployment/team-a/web", ("team-a/web",), ROLLOUT)
    # web-b, on n-res already, is replaced by the rollout too: verified to fit there
    # again with web's (4 + 4 of n-res and n-res2's 16 GPUs)
    assert step.others == 1
    assert [(m.pod, m.from_node) for m in found.rolled] == [("team-a/web-b", "n-res")]
    assert found.rolled[0].to_node in ("n-res", "n-res2")
    assert any("also its 1 pod(s) on other nodes, verified to fit in the" in a for a in actions)
    terms = [
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [name]}]}
        for name in ("n-res", "n-res2")
    ]
    required = {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}
    patch = {"spec": {"template": {"spec": {"affinity": {"nodeAffinity": required}}}}}
    commands = [a for a in actions if not a.startswith("#")]
    assert commands == [
        "kubectl cordon od1",
        "kubectl patch deployment web -n team-a --type=strategic "
        f"-p '{json.dumps(patch, sort_keys=True)}'",
        "kubectl rollout status deployment/web -n team-a --timeout=15m",
    ]
    assert actions[-2:] == [
        "# undo: kubectl rollout undo deployment/web -n team-a",
        "# undo: kubectl uncordon od1",
    ]


def rolled_cluster(*others: str) -> Cluster:
    """Deployment web (4 GPUs a pod): web-a on od1 (40/h), one more pod on od2 (30/h)
    per name in ``others``; r1 holds n-res's 8 GPUs for team-a."""
    reservation = make_reservation("r1", "team-a").nodes("n-res").build()
    web = replicated("web-a", "team-a").set(template_owner="Deployment/team-a/web")
    return Cluster(
        "c",
        nodes=(
            H100.named("n-res").build(),
            H100.named("od1").price(40.0).build(),
            H100.named("od2").price(30.0).build(),
        ),
        pods=(
            web.on("od1").gpus(4).build(),
            *(web.named(name).on("od2").gpus(4).build() for name in others),
        ),
        reservations=(reservation,),
    )


def test_it_verifies_that_the_pods_a_rollout_replaces_on_other_nodes_fit_too() -> None:
    """The Deployment's patch rolls all its pods (``pkg/controller/deployment/rolling.go``
    ``rolloutRolling``): web-b on od2 comes back from the patched template too, so it
    must bind in r1 as well: 4 + 4 of n-res's 8 GPUs, it does. od1 is offered (40/h)
    with web-b rolled od2 -> n-res; od2 is then empty (not offered: nothing left)."""
    found, refused = reconciled(rolled_cluster("web-b"))
    (offer,) = found
    assert (offer.node, offer.price_per_hour) == ("od1", 40.0)
    assert [(m.pod, m.from_node, m.to_node) for m in offer.moves] == [
        ("team-a/web-a", "od1", "n-res")
    ]
    assert [(m.pod, m.from_node, m.to_node) for m in offer.rolled] == [
        ("team-a/web-b", "od2", "n-res")
    ]
    assert refused == ()


def test_it_refuses_a_node_when_the_rollouts_other_pods_do_not_fit_in_the_reservation() -> None:
    """web-a alone fits n-res's 8 GPUs, but the rollout also replaces web-b and web-c
    on od2 from the patched template: 12 GPUs for 8. Refused, saying the rollout's
    other pods do not fit (before: od1 offered, its 40/h counted, and the rollout would
    have left two pods pending). od2 likewise: web-b and web-c fit (8 GPUs), but the
    rollout also replaces web-a on od1: 12 GPUs."""
    found, refused = reconciled(rolled_cluster("web-b", "web-c"))
    assert found == ()
    assert [r.node for r in refused] == ["od1", "od2"]
    assert refused[0].reason.startswith(
        "the rollout of Deployment/team-a/web replaces its 2 pod(s) on other nodes too"
    )
    assert refused[1].reason.startswith(
        "the rollout of Deployment/team-a/web replaces its 1 pod(s) on other nodes too"
    )


def test_it_patches_a_statefulset_selecting_the_reservations_labels_then_evicts() -> None:
    """r1 holds the nodes labelled pool=reserved: a nodeSelector picks them. A
    StatefulSet recreates an evicted pod at its update revision
    (``stateful_set_utils.go`` ``newVersionedStatefulSetPod``): patch, then evict."""
    reservation = make_reservation("r1", "team-a").selector({"pool": "reserved"}).build()
    cluster = Cluster(
        "c",
        nodes=(
            H100.named("n-res").label("pool", "reserved").build(),
            H100.named("od1").price(30.0).build(),
        ),
        pods=(
            replicated("db-0", "team-a")
            .controller("StatefulSet/team-a/db")
            .on("od1")
            .gpus(2)
            .build(),
        ),
        reservations=(reservation,),
    )
    found, actions = reservation_actions(cluster)
    (step,) = found.owners
    assert (step.owner, step.how, step.fields) == (
        "StatefulSet/team-a/db",
        EVICT,
        {"nodeSelector": {"pool": "reserved"}},
    )
    patch = '{"spec": {"template": {"spec": {"nodeSelector": {"pool": "reserved"}}}}}'
    patch_at = actions.index(
        f"kubectl patch statefulset db -n team-a --type=strategic -p '{patch}'"
    )
    (eviction,) = [a for a in actions if a.endswith("/pods/db-0/eviction -f -")]
    assert patch_at < actions.index(eviction)
    assert "# undo: kubectl rollout undo statefulset/db -n team-a" in actions


def test_it_verifies_a_statefulsets_other_pods_its_rolling_update_replaces() -> None:
    """A StatefulSet under RollingUpdate (the default) replaces every pod not at its
    update revision (``stateful_set_control.go`` ``updateStatefulSet``): db-1 on od2
    comes back from the patched template too. 2 + 2 of n-res's 8 GPUs: both fit; db-0
    is evicted, db-1 rolled, said in a comment."""
    reservation = make_reservation("r1", "team-a").selector({"pool": "reserved"}).build()
    db = replicated("db-0", "team-a").controller("StatefulSet/team-a/db")
    cluster = Cluster(
        "c",
        nodes=(
            H100.named("n-res").label("pool", "reserved").build(),
            H100.named("od1").price(30.0).build(),
            H100.named("od2").price(20.0).build(),
        ),
        pods=(db.on("od1").gpus(2).build(), db.named("db-1").on("od2").gpus(2).build()),
        reservations=(reservation,),
    )
    found, actions = reservation_actions(cluster)
    assert [(m.pod, m.from_node, m.to_node) for m in found.rolled] == [
        ("team-a/db-1", "od2", "n-res")
    ]
    assert (
        "# StatefulSet/team-a/db: under RollingUpdate (the default) the patch also replaces "
        "its 1 pod(s) on other nodes, verified to fit in the reservation too (under OnDelete "
        "they stay where they are)"
    ) in actions
    assert [a for a in actions if a.endswith("/eviction -f -")] == [
        a for a in actions if a.endswith("/pods/db-0/eviction -f -")
    ]


def test_it_patches_a_replicaset_no_deployment_owns_and_undoes_with_nulls() -> None:
    reservation = make_reservation("r1", "team-a").selector({"pool": "reserved"}).build()
    owner = "ReplicaSet/team-a/web-owner"
    cluster = Cluster(
        "c",
        nodes=(
            H100.named("n-res").label("pool", "reserved").build(),
            H100.named("od1").price(30.0).build(),
        ),
        pods=(replicated("web", "team-a").set(template_owner=owner).on("od1").gpus(2).build(),),
        reservations=(reservation,),
    )
    _, actions = reservation_actions(cluster)
    assert any(a.startswith("kubectl patch replicaset web-owner -n team-a ") for a in actions)
    assert any(a.endswith("/pods/web/eviction -f -") for a in actions)
    undo = '{"spec": {"template": {"spec": {"nodeSelector": {"pool": null}}}}}'
    assert f"# undo: kubectl patch replicaset web-owner -n team-a --type=strategic -p '{undo}'" in (
        actions
    )


def test_it_never_frees_a_node_a_jobs_pod_keeps_nor_counts_its_price() -> None:
    """batch/v1 ``ValidateJobSpecUpdate`` (``pkg/apis/batch/validation/validation.go``):
    a started Job's pod template is immutable, and an evicted pod comes back from it
    wherever the scheduler puts it, its work lost: a Job's pod is never moved, so od1
    never empties. Refused, saying which pod keeps it; nothing offered, nothing saved."""
    cluster = reservation_cluster(
        replicated("train", "team-a").controller("Job/team-a/train").on("od1").gpus(4).build()
    )
    found, (refusal,) = reconciled(cluster)
    assert found == ()
    assert refusal.node == "od1"
    assert refusal.reason.startswith("kept by Job team-a/train's pod team-a/train: ")
    assert "never moved" in refusal.reason
    (step,) = refusal.owners
    assert (step.owner, step.how) == ("Job/team-a/train", INSTEAD)


def test_it_gives_the_cronjob_patch_that_sends_the_next_runs_to_the_reservation() -> None:
    """A CronJob makes each run's Job by copying ``spec.jobTemplate.spec``
    (``pkg/controller/cronjob/utils.go`` ``getJobFromTemplate2``): the running Job's
    pod stays (immutable template), but the CronJob's template can send the next runs
    to r1, which holds the nodes labelled pool=reserved. The strategic merge patch of
    ``spec.jobTemplate.spec.template.spec`` sets that nodeSelector; its undo sets the
    key to null."""
    reservation = make_reservation("r1", "team-a").selector({"pool": "reserved"}).build()
    job = replicated("nightly-1", "team-a").controller("Job/team-a/nightly-1")
    cluster = Cluster(
        "c",
        nodes=(
            H100.named("n-res").label("pool", "reserved").build(),
            H100.named("od1").price(30.0).build(),
        ),
        pods=(job.set(cron_job="CronJob/team-a/nightly").on("od1").gpus(4).build(),),
        reservations=(reservation,),
    )
    found, (refusal,) = reconciled(cluster)
    assert found == () and refusal.reservations == ("r1",)
    (step,) = refusal.owners
    assert step.next_runs == "CronJob/team-a/nightly"
    report = moves_for(cluster, evaluate(cluster, at=AT)).to_json()
    (shown,) = report["reconciliationRefusals"]
    (runs,) = shown["nextRuns"]
    patch = {
        "spec": {
            "jobTemplate": {"spec": {"template": {"spec": {"nodeSelector": {"pool": "reserved"}}}}}
        }
    }
    undo = {
        "spec": {"jobTemplate": {"spec": {"template": {"spec": {"nodeSelector": {"pool": None}}}}}}
    }
    prefix = "kubectl patch cronjob nightly -n team-a --type=strategic -p "
    assert runs["patch"] == prefix + f"'{json.dumps(patch, sort_keys=True)}'"
    assert runs["undo"] == prefix + f"'{json.dumps(undo, sort_keys=True)}'"
    assert (runs["cronJob"], runs["job"]) == ("CronJob/team-a/nightly", "Job/team-a/nightly-1")
    assert_next_runs_patch(runs["patch"])
    assert_next_runs_patch(runs["undo"], undo=True)


def test_it_gives_no_next_runs_patch_for_a_job_no_cronjob_made() -> None:
    cluster = reservation_cluster(
        replicated("train", "team-a").controller("Job/team-a/train").on("od1").gpus(4).build()
    )
    report = moves_for(cluster, evaluate(cluster, at=AT)).to_json()
    (shown,) = report["reconciliationRefusals"]
    assert shown["nextRuns"] == [] and shown["reason"].startswith("kept by Job team-a/train")


def test_it_reads_the_cronjob_that_made_a_jobs_pod() -> None:
    """The Job's controller owner reference names the CronJob
    (``getJobFromTemplate2``: ``NewControllerRef(cj, ...)``); a Job without one, or a
    Job not read, leaves ``cron_job`` None."""

    def job(name: str, owners: list[dict[str, Any]]) -> dict[str, Any]:
        return {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": name, "namespace": "ml", "ownerReferences": owners},
            "spec": {
                "parallelism": 1,
                "completions": 1,
                "template": {
                    "metadata": {"labels": {"job-name": name}},
                    "spec": {"restartPolicy": "Never", "containers": [{"name": "c"}]},
                },
            },
            "status": {"active": 1},
        }

    def pod(name: str, job: str) -> dict[str, Any]:
        ref = {"apiVersion": "batch/v1", "kind": "Job", "name": job, "uid": "u"}
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": name,
                "namespace": "ml",
                "labels": {"job-name": job},
                "ownerReferences": [{**ref, "controller": True}],
            },
            "spec": {"containers": [{"name": "c"}]},
        }

    cron_ref = {"apiVersion": "batch/v1", "kind": "CronJob", "name": "nightly", "uid": "c"}
    objects = [
        job("nightly-29000", [{**cron_ref, "controller": True}]),
        job("once", []),
        pod("nightly-29000-a", "nightly-29000"),
        pod("once-a", "once"),
        pod("gone-a", "gone"),
    ]
    snapshot = parse_objects((("t", o) for o in objects), cluster_name="t")
    crons = {p.name: p.cron_job for p in snapshot.cluster.pods}
    assert crons == {"nightly-29000-a": "CronJob/ml/nightly", "once-a": None, "gone-a": None}


def test_it_leaves_the_reserved_room_a_refused_node_would_have_taken_to_the_next() -> None:
    """Dearest first (``reconcile``): od1 (40/h) runs a Deployment's 4-GPU pod and a
    Job's 4-GPU pod, which keeps od1 (``ValidateJobSpecUpdate``); od2 (30/h) runs a
    Deployment's 8-GPU pod. r1 holds n-res's 8 GPUs. Were od1 counted freed, its two
    pods would take all 8 reserved GPUs and od2's pod would fit nowhere; od1 refused,
    od2 is offered: 30/h saved, not 40."""
    reservation = make_reservation("r1", "team-a").nodes("n-res").build()
    web = replicated("web", "team-a").set(template_owner="Deployment/team-a/web")
    big = replicated("big", "team-a").set(template_owner="Deployment/team-a/big")
    job = replicated("train", "team-a").controller("Job/team-a/train")
    cluster = Cluster(
        "c",
        nodes=(
            H100.named("n-res").build(),
            H100.named("od1").price(40.0).build(),
            H100.named("od2").price(30.0).build(),
        ),
        pods=(
            web.on("od1").gpus(4).build(),
            job.on("od1").gpus(4).build(),
            big.on("od2").gpus(8).build(),
        ),
        reservations=(reservation,),
    )
    found, (refusal,) = reconciled(cluster)
    assert [(f.node, f.price_per_hour) for f in found] == [("od2", 30.0)]
    assert [(m.pod, m.to_node) for m in found[0].moves] == [("team-a/big", "n-res")]
    assert refusal.node == "od1" and refusal.reason.startswith(
        "kept by Job team-a/train's pod team-a/train: "
    )
    # the Deployment's pod could move, but moving it frees nothing: not offered alone
    assert [(s.owner, s.how) for s in refusal.owners] == [
        ("Deployment/team-a/web", ROLLOUT),
        ("Job/team-a/train", INSTEAD),
    ]
    report = moves_for(cluster, evaluate(cluster, at=AT))
    assert report.saved_per_hour == 30.0


def test_it_refuses_a_node_whose_template_has_a_required_node_affinity_giving_the_terms() -> None:
    """nodeSelectorTerms are a list without a merge key: a strategic merge patch would
    replace the template's own terms (dropping its requirement on the block). So no
    patch: the pod stays and od1 is refused; the matchFields term to add is said on
    the owner's step."""
    within_b1 = NodeSelectorTerm((LabelRequirement(BLOCK, "In", ("b1",)),))
    pod = replicated("web", "team-a").set(
        template_owner="ReplicaSet/team-a/web-owner", affinity=(within_b1,)
    )
    found, (refusal,) = reconciled(reservation_cluster(pod.on("od1").gpus(4).build()))
    assert found == ()
    assert refusal.reason.startswith("kept by ReplicaSet team-a/web-owner's pod team-a/web: ")
    assert "a patch would replace them" in refusal.reason
    (step,) = refusal.owners
    assert step.how == INSTEAD and "a patch would replace them" in step.note
    assert '"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n-res"]}]' in (
        step.note
    )
    assert "matchFields" not in refusal.reason  # the reason is shown to other teams too


def test_it_refuses_a_node_whose_pods_replicaset_it_did_not_read() -> None:
    """A ReplicaSet pod whose ReplicaSet was not read: a Deployment may own it (then a
    patch of the ReplicaSet would be rolled back by the Deployment): not patched, so
    the pod stays and the node is not freed."""
    cluster = reservation_cluster(replicated("web", "team-a").on("od1").gpus(4).build())
    found, (refusal,) = reconciled(cluster)
    assert found == ()
    assert refusal.reason.startswith("kept by ReplicaSet team-a/web-owner's pod team-a/web: ")
    assert "was not read" in refusal.reason


def test_it_reads_the_deployment_owning_a_pods_replicaset_as_its_template_owner() -> None:
    """The ReplicaSet's ownerReferences name the Deployment; a ReplicaSet without one
    owns its template itself; a pod whose ReplicaSet is not read gets None."""

    def replica_set(name: str, owners: list[dict[str, Any]]) -> dict[str, Any]:
        labels = {"app": name}
        return {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {"name": name, "namespace": "ml", "ownerReferences": owners},
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": labels},
                "template": {
                    "metadata": {"labels": labels},
                    "spec": {"containers": [{"name": "c"}]},
                },
            },
        }

    def pod(name: str, replica_set: str) -> dict[str, Any]:
        ref = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": replica_set}
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": name,
                "namespace": "ml",
                "labels": {"app": replica_set},
                "ownerReferences": [{**ref, "uid": "u", "controller": True}],
            },
            "spec": {"containers": [{"name": "c"}]},
        }

    deployment_ref = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "uid": "d"}
    objects = [
        replica_set("web-5d8f", [{**deployment_ref, "controller": True}]),
        replica_set("solo", []),
        pod("web-5d8f-a", "web-5d8f"),
        pod("solo-a", "solo"),
        pod("gone-a", "gone"),
    ]
    snapshot = parse_objects((("t", o) for o in objects), cluster_name="t")
    owners = {p.name: p.template_owner for p in snapshot.cluster.pods}
    assert owners["web-5d8f-a"] == "Deployment/ml/web"
    assert owners["solo-a"] == "ReplicaSet/ml/solo"
    assert owners["gone-a"] is None


# --- what the parser reads for the rules --------------------------------------------------


def test_it_reads_the_controller_the_annotation_and_blocking_local_volumes() -> None:
    """``utils/drain/drain.go``: ``ControllerRef``, ``HasSafeToEvictAnnotation``,
    ``isLocalVolume`` (hostPath, emptyDir not on Memory) less the volumes named in
    safe-to-evict-local-volumes."""
    meta = {
        "namespace": "ml",
        "ownerReferences": [
            {"kind": "Deployment", "name": "not-controller"},
            {"kind": "ReplicaSet", "name": "web-123", "controller": True},
        ],
    }
    spec = {
        "volumes": [
            {"name": "cache", "emptyDir": {}},
            {"name": "shm", "emptyDir": {"medium": "Memory"}},
            {"name": "host", "hostPath": {"path": "/var/x"}},
            {"name": "scratch", "emptyDir": {"sizeLimit": "1Gi"}},
            {"name": "data", "persistentVolumeClaim": {"claimName": "d"}},
        ]
    }
    annotations = {
        "cluster-autoscaler.kubernetes.io/safe-to-evict": "false",
        "cluster-autoscaler.kubernetes.io/safe-to-evict-local-volumes": "scratch",
    }
    ctx = ObjectContext("test", "Pod/ml/web-123-x")
    assert drain_fields(ctx, meta, spec, annotations) == {
        "controller": "ReplicaSet/ml/web-123",
        "safe_to_evict": False,
        "blocking_local_volumes": ("cache", "host"),
    }


# --- the report beside the buy plan --------------------------------------------------------


def test_it_prices_the_move_beside_the_buy_plan_and_orders_its_actions() -> None:
    """The 8-GPU pod fits nowhere and no group can be bought: the move wins (the rule
    "nothing can be bought for it"); the actions taint n1, let the pod tolerate it,
    evict the two pods through the Eviction API, wait, then untaint (the undo)."""
    cluster = two_small_pods()
    report = moves_for(cluster, evaluate(cluster, at=AT))
    (priced,) = report.plans
    assert (priced.buy_verdict, priced.recommend) == ("blocked", "move")
    plan = priced.to_json()["move"]
    assert (plan["podsRestarted"], plan["gpusDisrupted"], plan["freedNodes"]) == (2, 4, ["n1"])
    actions = plan["actions"]
    assert actions[1].startswith("kubectl taint nodes n1 capacityweb.io/move-for=ml.big:NoSchedule")
    evictions = [a for a in actions if "/eviction" in a]
    assert [e.split("/pods/")[1].split("/")[0] for e in evictions] == ["small-a", "small-b"]
    assert '"kind": "Eviction"' in evictions[0] and '"apiVersion": "policy/v1"' in evictions[0]
    assert not any("bare" in a for a in actions)
    assert actions.index(evictions[-1]) < actions.index(plan["undo"][0])
    assert plan["undo"] == ["kubectl taint nodes n1 capacityweb.io/move-for-"]


def test_it_moves_two_pods_of_a_budget_allowing_one_only_one_after_another() -> None:
    """``core/scaledown/pdb/basic.go`` ``CanRemovePods``: a budget with fewer disruptions
    allowed than pods selected (but at least one) lets them go, not in parallel."""
    selector = PodSelector((LabelRequirement("tier", "In", ("small",)),))
    budget = DisruptionBudget("ml", "small", selector, disruptions_allowed=1)
    cluster = two_small_pods(small={"labels": {"tier": "small"}})
    plan = search(replace(cluster, disruption_budgets=(budget,)))["ml/big"].plan
    assert plan is not None and plan.sequential_budgets == ("ml/small",)


# --- when the emptied node goes (cluster-autoscaler's scale-down flags) -------------------


def test_it_reads_the_scale_down_delays_from_the_cluster_autoscaler_command_line() -> None:
    """``config/flags/flags.go``: --scale-down-unneeded-time and
    --scale-down-delay-after-add are Go durations (defaults 10m each); the node goes
    once unneeded that long (``core/scaledown/unneeded/nodes.go`` ``RemovableAt``)."""
    flags = parse_flags(["--scale-down-unneeded-time=5m", "--scale-down-delay-after-add", "1h30m"])
    scale_down = ScaleDown.of(flags)
    assert (scale_down.unneeded_seconds, scale_down.delay_after_add_seconds) == (300.0, 5400.0)
    note = scale_down.note()
    assert "unneeded for --scale-down-unneeded-time=5m" in note
    assert "--scale-down-delay-after-add=1h30m of its last scale-up" in note
    assert "read from the cluster's cluster-autoscaler command line" in note
    # a command line without them: upstream's defaults, read from it all the same
    other = ScaleDown.of(parse_flags(["--expander=price"]))
    assert (other.unneeded_seconds, other.delay_after_add_seconds, other.read) == (
        600.0,
        600.0,
        True,
    )
    disabled = ScaleDown.of(parse_flags(["--scale-down-enabled=false"])).note()
    assert disabled.startswith("cluster-autoscaler removes no node (--scale-down-enabled=false")


def test_it_says_the_defaults_and_that_they_were_not_read_without_a_command_line() -> None:
    """No command line given (and the ingest reads no cluster-autoscaler Deployment):
    10m and 10m, flags.go's defaults, said as not read; the report carries it."""
    cluster = reservation_cluster(
        replicated("job", "team-a")
        .set(template_owner="ReplicaSet/team-a/job-owner")
        .on("od1")
        .gpus(4)
        .build()
    )
    report = moves_for(cluster, evaluate(cluster, at=AT))
    data = report.to_json()
    assert data["scaleDownSettings"] == {
        "unneededSeconds": 600.0,
        "delayAfterAddSeconds": 600.0,
        "enabled": True,
        "read": False,
    }
    assert "unneeded for --scale-down-unneeded-time=10m" in data["scaleDown"]
    assert "no cluster-autoscaler command line was given" in data["scaleDown"]
    assert "its Deployment is not read" in data["scaleDown"]
    with_flags = evaluate(cluster, at=AT, ca_flags=parse_flags(["--scale-down-unneeded-time=2m"]))
    text = render_moves(moves_for(cluster, with_flags))
    assert "unneeded for --scale-down-unneeded-time=2m" in text
    assert [duration(s) for s in (45, 90, 600, 3600, 5400)] == [
        "45s",
        "1m30s",
        "10m",
        "1h",
        "1h30m",
    ]


def test_the_bounded_search_takes_a_blocked_gang_before_single_pods_named_first() -> None:
    """21 blocked 16-GPU pods of ml (no node holds 16) would fill the search's bound of
    20 by name; the gang of zz (2 x 8 GPUs in one block: b1 has n1 free and n2 taken by
    a movable pod, b2 only n3) is searched first, and unblocked by moving that pod to n3
    as in ``test_it_frees_room_for_a_gang_inside_its_block``."""
    gang = make_gang("train", 2, "zz").required(BLOCK).build()
    members = tuple(
        POD.named(f"train-{i}").namespace("zz").gpus(8).gang("zz/train").build() for i in range(2)
    )
    singles = tuple(POD.named(f"a-{i:02}").gpus(16).build() for i in range(21))
    cluster = Cluster(
        "c",
        nodes=(
            H100.named("n1").build(),
            H100.named("n2").build(),
            H100.named("n3").label(BLOCK, "b2").build(),
        ),
        pods=(replicated("mover").on("n2").gpus(8).build(), *members, *singles),
        gangs=(gang,),
    )
    evaluation = evaluate(cluster, at=AT)
    assert {w.key: w.joint.verdict for w in evaluation.workloads}["zz/train"] == "blocked"
    report = moves_for(cluster, evaluation)
    searched = [plan.workload for plan in report.plans]
    assert searched[0] == "zz/train" and len(searched) == 20
    assert report.not_searched == ("ml/a-19", "ml/a-20")
    assert [m.pod for m in report.plans[0].plan.moves] == ["ml/mover"]
