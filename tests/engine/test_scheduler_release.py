"""Which kube-scheduler release the scheduler side scores as: set, read from the nodes,
or the default, and said on the evaluation.

kube-scheduler 1.36 changed NodeResourcesBalancedAllocation with no feature gate
(kubernetes/kubernetes ``pkg/scheduler/framework/plugins/noderesources/
balanced_allocation.go``, ``balancedResourceScorer``: up to 1.35 the balance after
placing the pod, from 1.36 how much the pod improves it). A profile that names no release
scores as the newest kubelet's minor (``status.nodeInfo.kubeletVersion``): by the version
skew policy no kubelet is newer than kube-apiserver, and kube-scheduler runs at
kube-apiserver's minor.

The cluster below is worked by hand so the two releases pick different nodes. Two
nodes of 16 cpu / 64Gi; x holds a pod of 4 cpu / 16Gi, y one of 5 cpu / 2Gi; the
pending pod asks 4 cpu / 8Gi (every request non-zero, so NodeResourcesFit's non-zero
defaults play no part). No taint, affinity or owner: the other default Score plugins
give both nodes the same.

- x with the pod: cpu 8/16 = 0.5, memory 24/64 = 0.375. LeastAllocated (``least_
  allocated.go``, int64): (16-8)*100/16 = 50, (64-24)*100/64 = 62 -> (50+62)/2 = 56.
  Balance after: std |0.5-0.375|/2 = 0.0625 -> 93; before: 0.25, 0.25 -> 100.
  1.35: 56 + 93 = 149. 1.36: 50 + (50 + 93 - 100)/2 = 71 -> 56 + 71 = 127.
- y with the pod: cpu 9/16 = 0.5625, memory 10/64 = 0.15625. LeastAllocated:
  (16-9)*100/16 = 43, (64-10)*100/64 = 84 -> (43+84)/2 = 63. Balance after: std 0.203125
  -> 79; before: 0.3125, 0.03125 -> std 0.140625 -> 85.
  1.35: 63 + 79 = 142. 1.36: 50 + (50 + 79 - 85)/2 = 72 -> 63 + 72 = 135.

So 1.35 binds the pod to x (149 > 142), 1.36 to y (135 > 127).
"""

from datetime import UTC, datetime

import pytest

from recommender.engine.evaluate.evaluation import critical_pass
from recommender.engine.evaluate.report import render_text
from recommender.engine.scheduler.profiles import scheduler_release
from topology.kube.parse import parse_objects

AT = datetime(2026, 12, 2, tzinfo=UTC)


def node(name: str, kubelet: str | None) -> dict:
    status: dict = {"allocatable": {"cpu": "16", "memory": "64Gi", "pods": "110"}}
    if kubelet is not None:
        status["nodeInfo"] = {"kubeletVersion": kubelet}
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}, "status": status}


def pod(name: str, cpu: str, memory: str, on: str | None = None) -> dict:
    spec: dict = {
        "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu, "memory": memory}}}]
    }
    if on is not None:
        spec["nodeName"] = on
    phase = "Running" if on else "Pending"
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "t"},
        "spec": spec,
        "status": {"phase": phase},
    }


def placed(kubelets: tuple[str | None, str | None], profile: str = "default"):
    objects = [
        node("x", kubelets[0]),
        node("y", kubelets[1]),
        pod("on-x", "4", "16Gi", on="x"),
        pod("on-y", "5", "2Gi", on="y"),
        pod("new", "4", "8Gi"),
    ]
    snapshot = parse_objects((("c.yaml", o) for o in objects), cluster_name="c")
    assert snapshot.errors == ()
    critical = critical_pass(snapshot.cluster, at=AT, policy=profile)
    (outcome,) = critical.basis.scheduler.outcomes
    (binding,) = outcome.bindings
    return binding.node, critical.evaluation


def test_nodes_at_kubelet_1_36_score_as_kube_scheduler_1_36() -> None:
    chosen, evaluation = placed(("v1.36.2", "v1.35.4"))
    assert chosen == "y"
    assert evaluation.scheduler_profile == "kube-default:1.36"
    assert evaluation.to_json()["schedulerRelease"] == {
        "version": "1.36",
        "source": "read from nodes (newest kubelet v1.36.2)",
    }


def test_nodes_at_kubelet_1_35_score_as_kube_scheduler_1_35() -> None:
    chosen, evaluation = placed(("v1.35.4", "v1.34.1"))
    assert chosen == "x"
    assert evaluation.scheduler_release is not None
    assert evaluation.scheduler_release.source == "read from nodes (newest kubelet v1.35.4)"


def test_a_set_release_wins_over_the_nodes() -> None:
    chosen, evaluation = placed(("v1.36.2", "v1.36.2"), profile="kube-default:1.35")
    assert chosen == "x"
    assert evaluation.to_json()["schedulerRelease"] == {"version": "1.35", "source": "set"}


def test_without_kubelet_versions_the_default_release_is_said() -> None:
    chosen, evaluation = placed((None, None))
    assert chosen == "x"  # 1.35, the default
    assert evaluation.scheduler_profile == "kube-default"
    assert evaluation.to_json()["schedulerRelease"] == {"version": "1.35", "source": "default"}
    text = render_text(evaluation, ())
    assert "scheduler profile: kube-default, as kube-scheduler 1.35 (default)\n" in text


@pytest.mark.parametrize(
    ("kubelets", "expected"),
    [
        # minor compared as a number, not as text ("v1.9" is older than "v1.36")
        (("v1.9.0", "v1.36.0"), ("kube-default:1.36", "v1.36.0")),
        # provider suffixes are kept as written and do not disturb the order
        (("v1.36.1-gke.1200", "v1.35.9+k3s1"), ("kube-default:1.36", "v1.36.1-gke.1200")),
        # a string that is no version is passed over
        (("unknown", "v1.35.2"), ("kube-default:1.35", "v1.35.2")),
    ],
)
def test_it_takes_the_newest_kubelet(kubelets, expected) -> None:
    profile, release = scheduler_release("kube-default", kubelets)
    assert release is not None
    assert (profile, release.source) == (
        expected[0],
        f"read from nodes (newest kubelet {expected[1]})",
    )


def test_a_profile_without_balanced_allocation_has_no_release() -> None:
    assert scheduler_release("fgd", ["v1.36.2"]) == ("fgd", None)
