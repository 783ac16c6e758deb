"""A cluster's scheduler profile reaches the stored evaluation (the setting otherwise)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

TAKEN_AT = datetime(2026, 12, 1, 10, 5, tzinfo=UTC)
WHAT_IF = Path(__file__).resolve().parents[1] / "scenarios" / "profile-fgd-what-if.yaml"


def test_the_model_offers_exactly_the_engines_profiles():
    from recommender.engine.scheduler.profiles import PROFILES
    from topology.models import Cluster

    field = Cluster._meta.get_field("scheduler_profile")
    assert tuple(value for value, _ in field.choices) == PROFILES


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("chosen", "profile", "extra"), [("", "kube-default", 8), ("fgd", "fgd", None)]
)
def test_a_stored_evaluation_runs_the_clusters_profile(settings, chosen, profile, extra):
    from recommender.services import store_evaluation
    from topology import services
    from topology.ingest.files import read_objects
    from topology.models import Cluster

    settings.SCHEDULER_PROFILE = "kube-default"
    cluster = Cluster.objects.create(
        name=f"profile-{uuid.uuid4().hex[:6]}",
        source_kind=Cluster.SourceKind.FILES,
        scheduler_profile=chosen,
    )
    snapshot = services.ingest_snapshot(
        cluster=cluster, taken_at=TAKEN_AT, objects=read_objects(WHAT_IF)
    )
    result = store_evaluation(snapshot=snapshot).result
    assert result["schedulerProfile"] == profile
    # see tests/scenarios/profile-fgd-what-if.expected.yaml
    assert (result["whatIf"] or {}).get("extraGpusPlaced") == extra


@pytest.mark.django_db
def test_a_setting_naming_no_profile_is_refused_with_the_valid_names(settings):
    from recommender.services import store_evaluation
    from topology import services
    from topology.ingest.files import read_objects
    from topology.models import Cluster

    settings.SCHEDULER_PROFILE = "bestfit"  # a placement policy, not a scheduler profile
    cluster = Cluster.objects.create(
        name=f"profile-{uuid.uuid4().hex[:6]}", source_kind=Cluster.SourceKind.FILES
    )
    snapshot = services.ingest_snapshot(
        cluster=cluster, taken_at=TAKEN_AT, objects=read_objects(WHAT_IF)
    )
    with pytest.raises(ValueError, match="valid: kube-default, most-allocated, fgd"):
        store_evaluation(snapshot=snapshot)
