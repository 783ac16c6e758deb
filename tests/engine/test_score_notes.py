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
from tests.builders.objects import node_object, pod_object
from tests.engine.test_actions import AT
from topology.kube.parse import parse_objects

PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"
ZONE = "topology.kubernetes.io/zone"
NODE = node_object("n1").label(ZONE, "z1").allocatable(cpu="8", memory="32Gi", pods="110")
WEB = pod_object("ml", "web").label("app", "web").requests(cpu="1")


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
    parsed = parse_objects([("in.yaml", NODE.dict()), ("in.yaml", pod.dict())], cluster_name="t")
    evaluation = evaluate(parsed.cluster, at=AT, policy=policy)
    return {u.field: u.reason for u in evaluation.unsupported}


@pytest.mark.parametrize("policy", ["kube-default", "most-allocated"])
def test_it_lists_no_preferred_term_a_scoring_profile_scores(policy):
    assert notes(policy, WEB.pod_spec(affinity=POD_AFFINITY).spread(*SPREAD)) == {}


def test_it_says_the_fgd_profile_does_not_score_preferred_pod_affinity():
    assert notes("fgd", WEB.pod_spec(affinity=POD_AFFINITY)) == {
        f"spec.affinity.podAffinity.{PREFERRED}": (
            "not modelled (score only) in profile fgd: kube-scheduler's InterPodAffinity "
            "Score prefers nodes by it (profiles kube-default and most-allocated score it)"
        )
    }


def test_it_says_the_fgd_profile_does_not_score_schedule_anyway_spread():
    assert notes("fgd", WEB.spread(*SPREAD)) == {
        "spec.topologySpreadConstraints[0]": (
            "not modelled (score only) in profile fgd: kube-scheduler's PodTopologySpread "
            "Score prefers nodes by it (profiles kube-default and most-allocated score it)"
        )
    }


@pytest.mark.parametrize("policy", ["kube-default", "fgd"])
def test_it_lists_a_preferred_match_fields_term_under_every_profile(policy):
    field = f"spec.affinity.nodeAffinity.{PREFERRED}[0].preference.matchFields"

    assert notes(policy, WEB.pod_spec(affinity=MATCH_FIELDS)) == {
        field: "not modelled (score only): no profile scores a preferred term's matchFields"
    }
