"""A pod's preferred terms: what each scoring profile does with them, said exactly.

kube-default and most-allocated score preferred node affinity, preferred inter-pod
(anti-)affinity and ScheduleAnyway spread as kube-scheduler's NodeAffinity,
InterPodAffinity and PodTopologySpread Score plugins do (``scheduler.profiles``,
``preferred_score``): those fields are modelled there and not listed as "not
modelled". The fgd profile scores GPU fragmentation only: there they are listed,
naming the profile and the plugin that would score them. A preferred node term with
``matchFields`` is scored by no profile (``topology.kube.core.preferred`` leaves it out): listed
under every profile.
"""

import pytest

from recommender.engine.evaluate.evaluation import evaluate
from tests.engine.test_actions import AT
from topology.kube.parse import parse_objects

PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"
ZONE = "topology.kubernetes.io/zone"
NODE = {
    "apiVersion": "v1",
    "kind": "Node",
    "metadata": {"name": "n1", "labels": {ZONE: "z1"}},
    "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"}},
}


def pod_with(affinity=None, spread=None):
    spec = {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}
    if affinity:
        spec["affinity"] = affinity
    if spread:
        spec["topologySpreadConstraints"] = spread
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "web", "namespace": "ml", "labels": {"app": "web"}},
        "spec": spec,
        "status": {"phase": "Pending"},
    }


POD_AFFINITY = {
    "podAffinity": {
        PREFERRED: [
            {
                "weight": 10,
                "podAffinityTerm": {
                    "topologyKey": ZONE,
                    "labelSelector": {"matchLabels": {"app": "db"}},
                },
            }
        ]
    }
}
SPREAD = [{"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "ScheduleAnyway"}]
MATCH_FIELDS = {
    "nodeAffinity": {
        PREFERRED: [
            {
                "weight": 5,
                "preference": {
                    "matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]
                },
            }
        ]
    }
}


def notes(policy, pod):
    parsed = parse_objects([("in.yaml", NODE), ("in.yaml", pod)], cluster_name="t")
    evaluation = evaluate(parsed.cluster, at=AT, policy=policy)
    return {u.field: u.reason for u in evaluation.unsupported}


@pytest.mark.parametrize("policy", ["kube-default", "most-allocated"])
def test_it_lists_no_preferred_term_a_scoring_profile_scores(policy):
    assert notes(policy, pod_with(POD_AFFINITY, SPREAD)) == {}


def test_it_says_the_fgd_profile_does_not_score_preferred_pod_affinity():
    assert notes("fgd", pod_with(POD_AFFINITY)) == {
        f"spec.affinity.podAffinity.{PREFERRED}": (
            "not modelled (score only) in profile fgd: kube-scheduler's InterPodAffinity "
            "Score prefers nodes by it (profiles kube-default and most-allocated score it)"
        )
    }


def test_it_says_the_fgd_profile_does_not_score_schedule_anyway_spread():
    assert notes("fgd", pod_with(spread=SPREAD)) == {
        "spec.topologySpreadConstraints[0]": (
            "not modelled (score only) in profile fgd: kube-scheduler's PodTopologySpread "
            "Score prefers nodes by it (profiles kube-default and most-allocated score it)"
        )
    }


@pytest.mark.parametrize("policy", ["kube-default", "fgd"])
def test_it_lists_a_preferred_match_fields_term_under_every_profile(policy):
    field = f"spec.affinity.nodeAffinity.{PREFERRED}[0].preference.matchFields"

    assert notes(policy, pod_with(MATCH_FIELDS)) == {
        field: "not modelled (score only): no profile scores a preferred term's matchFields"
    }
