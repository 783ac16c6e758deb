"""What a pod's preferred terms do under the evaluation's scoring profile, said exactly.

The parse lists every preferred term as "not modelled (score only)"
(``topology.kube.core.podspec``): it cannot know the profile. Here that note is made true
for the profile the evaluation ran::

    field                                       kube-scheduler Score plugin
    affinity.nodeAffinity preferred terms       NodeAffinity
    affinity.pod(Anti)Affinity preferred terms  InterPodAffinity
    topologySpreadConstraints ScheduleAnyway    PodTopologySpread

- a profile that scores them (``Policy.preferred_scores``: kube-default and
  most-allocated, ``scheduler.preferred_score``) models them: the note goes, as it
  does for the required terms;
- any other (fgd scores GPU fragmentation only) keeps it, naming the profile, the
  plugin that would score the field and the profiles that do.

Notes with another reason (a preferred term's ``matchFields``, scored by no profile)
stay as they are. Pure: no Django, no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from recommender.engine.scheduler.profiles import PROFILES
from recommender.engine.scheduler.scores import POLICIES, Policy
from topology.model.hardware import SCORE_ONLY, UnsupportedField

PLUGINS = (
    ("spec.affinity.nodeAffinity", "NodeAffinity"),
    ("spec.affinity.podAffinity", "InterPodAffinity"),
    ("spec.affinity.podAntiAffinity", "InterPodAffinity"),
    ("spec.topologySpreadConstraints", "PodTopologySpread"),
)


def scoring_profiles() -> tuple[str, ...]:
    """The profiles that score preferred terms as kube-scheduler does."""
    return tuple(name for name in PROFILES if name in POLICIES and POLICIES[name].preferred_scores)


def plugin_of(field: str) -> str:
    return next((plugin for prefix, plugin in PLUGINS if field.startswith(prefix)), "a Score")


def for_profile(
    unsupported: Iterable[UnsupportedField], policy: Policy
) -> tuple[UnsupportedField, ...]:
    """``unsupported`` with each "score only" note as true under ``policy``."""
    notes = []
    for item in unsupported:
        if item.reason != SCORE_ONLY:
            notes.append(item)
        elif not policy.preferred_scores:
            notes.append(replace(item, reason=not_scored(item.field, policy.name)))
    return tuple(notes)


def not_scored(field: str, profile: str) -> str:
    scoring = " and ".join(scoring_profiles())
    return (
        f"{SCORE_ONLY} in profile {profile}: kube-scheduler's {plugin_of(field)} Score "
        f"prefers nodes by it (profiles {scoring} score it)"
    )
