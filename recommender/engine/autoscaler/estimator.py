"""cluster-autoscaler's binpacking estimator: how many template nodes for these pods?

``cluster-autoscaler/estimator/binpacking_estimator.go`` ``Estimate``:
first-fit decreasing. Pods are ordered by ``decreasing_pod_orderer.go``
``calculatePodScore`` (cpu / template allocatable cpu + memory / template
allocatable memory, highest first; upstream's ``sort.Slice`` is not stable,
ours keeps the given order among equal scores). Each pod goes to a node the
estimate already added if the scheduler's filters accept it there
(``tryToScheduleOnExistingNodes``); otherwise a fresh template node is added
(``tryToScheduleOnNewNodes``) unless the limiter refuses (node group max size,
cluster-wide limits: ``threshold_based_limiter.go``) or the last added node
is still empty (a pod that does not fit an empty template node never will).
The count is the nodes that got a pod.

The filters are the scheduler simulation's own (``placement.Placer`` on a
state holding only the estimate's nodes): labels, taints, affinity, resources,
GPU model and memory, devices and DRA claims as the scheduler checks them.
Inter-pod terms (affinity, topology spread) are judged against the nodes
around by the caller (``admit``), as upstream runs them on the whole snapshot.

Pure: no Django, no I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime

from recommender.engine.autoscaler.plan import options_for, without_topology
from recommender.engine.scheduler.placement import Placer, place_one
from recommender.engine.scheduler.state import ClusterState
from topology.hardware import HOSTNAME_LABEL, NO_POD_TERMS, Cluster, Node, Pod


@dataclass(slots=True)
class Estimate:
    """The estimate's nodes in order, each with the pods it took."""

    nodes: list[tuple[Node, list[Pod]]] = field(default_factory=list)

    @property
    def node_count(self) -> int:
        return sum(1 for _, pods in self.nodes if pods)

    @property
    def pods(self) -> tuple[Pod, ...]:
        return tuple(p for _, pods in self.nodes for p in pods)


def pod_score(pod: Pod, template: Node) -> float:
    """``calculatePodScore``: cpu and memory requests as fractions of the template."""
    score = 0.0
    if template.allocatable.cpu_milli > 0:
        score += pod.requests.cpu_milli / template.allocatable.cpu_milli
    if template.allocatable.memory_bytes > 0:
        score += pod.requests.memory_bytes / template.allocatable.memory_bytes
    return score


def decreasing(pods: Sequence[Pod], template: Node) -> list[Pod]:
    return sorted(pods, key=lambda p: -pod_score(p, template))


def estimate(
    cluster: Cluster,
    template: Node,
    pods: Sequence[Pod],
    *,
    limit: int,
    policy: str,
    at: datetime,
    admit: Callable[[Pod, Node, list[Pod]], bool] | None = None,
) -> Estimate:
    """``Estimate``: at most ``limit`` nodes like ``template`` for ``pods`` (first-fit decreasing).

    ``admit(pod, node, pods on it)``: the inter-pod check of the caller (None: none).
    """
    run = _Binpacking(cluster, policy, at, admit)
    for pod in decreasing(pods, template):
        if run.nodes and run.try_place(pod):
            continue
        if run.nodes and not run.nodes[-1][1]:
            continue  # the last node is empty and still refused it: so would a new one
        if len(run.nodes) >= limit:
            continue  # the limiter refuses another node
        run.add_node(template)
        run.try_place(pod)
    return Estimate([(n, p) for n, p in run.nodes if p])


class _Binpacking:
    """The estimate's own state: only its template nodes, each with the pods it took."""

    def __init__(
        self,
        cluster: Cluster,
        policy: str,
        at: datetime,
        admit: Callable[[Pod, Node, list[Pod]], bool] | None,
    ) -> None:
        self.alone = replace(cluster, nodes=(), pods=(), gangs=(), reservations=())
        self.options = options_for(policy, at)
        self.state = ClusterState.from_cluster(self.alone)
        self.placer = Placer(self.alone, self.state, self.options, diagnose=False)
        self.admit = admit
        self.nodes: list[tuple[Node, list[Pod]]] = []
        self.by_name: dict[str, list[Pod]] = {}

    def add_node(self, template: Node) -> None:
        name = f"{template.name}-e-{len(self.nodes)}"
        node = replace(template, name=name, labels={**template.labels, HOSTNAME_LABEL: name})
        self.state.add_node(node)
        self.nodes.append((node, []))
        self.by_name[name] = self.nodes[-1][1]

    def try_place(self, pod: Pod) -> bool:
        bare = without_topology(replace(pod, pod_terms=NO_POD_TERMS))
        if self.admit is None:
            outcome = self.placer.place_one(bare)
            if outcome.placed:
                self.by_name[outcome.bindings[0].node].append(pod)
            return outcome.placed
        # inter-pod terms: try on a copy, keep it only if the caller admits the node
        trial = self.state.copy()
        outcome = place_one(self.alone, bare, trial, self.options, diagnose=False)
        if not outcome.placed:
            return False
        name = outcome.bindings[0].node
        if not self.admit(pod, trial.node(name), self.by_name[name]):
            return False
        self.state = trial
        self.placer = Placer(self.alone, trial, self.options, diagnose=False)
        self.by_name[name].append(pod)
        return True
