"""cluster-autoscaler's filter-out-schedulable puts a pod on the first node that passes.

Worked by hand from kubernetes/autoscaler ``cluster-autoscaler/core/podlistprocessor/
filter_out_schedulable.go`` (pods sorted by priority, highest first, then
``HintingSimulator.TrySchedulePods``), ``simulator/scheduling/hinting_simulator.go``
(``trySchedule`` → ``SchedulePodOnAnyNodeMatching``) and
``simulator/clustersnapshot/predicate/plugin_runner.go`` (``RunFiltersUntilPassingNode``:
the Filter phase node after node from ``lastIndex``, the first node that passes wins and
``lastIndex`` moves past it): no score decides, unlike kube-scheduler's LeastAllocated.

Worked with the search as written, one node after another. Upstream checks
``--predicate-parallelism`` (4) nodes at once and lists nodes in its snapshot's map
order, so among the first nodes that pass, any may win in a given run: these are the
outcomes of the sequential reading, which capacityweb models (one of that range).
"""

from __future__ import annotations

from datetime import UTC, datetime

from recommender.engine.autoscaler.cluster_autoscaler import naive_scale_up
from recommender.engine.scheduler.state import ClusterState
from recommender.engine.scheduler.workloads import pending_workloads
from tests.builders.objects import KubeObject, as_dicts, node_group_object, node_object, pod_object
from topology.kube.parse import parse_objects

AT = datetime(2026, 12, 5, tzinfo=UTC)
POOL = "cloud.google.com/gke-nodepool"


CPU_NODE = (
    node_object("").label(POOL, "cpu").hostname().allocatable(cpu="8", memory="64Gi", pods="110")
)
ML_POD = pod_object("ml", "").requests(memory="1Gi")
GROUP = (
    node_group_object("cpu")
    .selector({POOL: "cpu"})
    .size(0, 5)
    .price(1.0)
    .template({}, {"cpu": "8", "memory": "64Gi", "pods": "110"})
)


def naive_plan(*objects: KubeObject):  # type: ignore[no-untyped-def]
    snapshot = parse_objects((("t.yaml", o) for o in as_dicts(*objects, GROUP)), cluster_name="t")
    assert [str(e) for e in snapshot.errors] == []
    cluster = snapshot.cluster
    state = ClusterState.from_cluster(cluster)
    return naive_scale_up(cluster, pending_workloads(cluster), state=state, at=AT, nominated={})


def test_it_fills_the_first_node_that_passes_not_the_emptiest() -> None:
    # n1 has 2 cpu free (busy takes 6), n2 is empty. a-small (2 cpu, first by name): the first node
    # that passes from lastIndex 0 is n1, lastIndex moves to n2; b-big (8 cpu) then
    # passes on n2. Both fit existing nodes: cluster-autoscaler adds nothing.
    # (LeastAllocated would put a-small on the emptier n2 and leave b-big no room.)
    plan = naive_plan(
        CPU_NODE.named("n1"),
        CPU_NODE.named("n2"),
        ML_POD.named("busy").requests(cpu="6").on("n1"),
        ML_POD.named("b-big").requests(cpu="8"),
        ML_POD.named("a-small").requests(cpu="2"),
    )
    assert plan.additions == ()
    assert {key: p.verdict for key, p in plan.outcomes.items()} == {
        "ml/b-big": "runs_now",
        "ml/a-small": "runs_now",
    }


def test_it_searches_on_from_the_node_after_the_last_one_found() -> None:
    # two empty 8-cpu nodes. a (4 cpu) passes on n1 first; lastIndex moves to n2, so b
    # (4 cpu) lands on n2, not next to a; c (8 cpu) then passes on neither (4 free on
    # each) and triggers one new node of the group.
    plan = naive_plan(
        CPU_NODE.named("n1"),
        CPU_NODE.named("n2"),
        *(
            ML_POD.named(name).requests(cpu=cpu)
            for name, cpu in (("a", "4"), ("b", "4"), ("c", "8"))
        ),
    )
    assert [(a.node_group, a.count, a.workloads) for a in plan.additions] == [("cpu", 1, ("ml/c",))]
