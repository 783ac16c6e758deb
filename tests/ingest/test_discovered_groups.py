"""Discovered node groups through the ingest: stored NodeGroups override them field by field."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

TAKEN_AT = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)
DISCOVERED = (
    Path(__file__).resolve().parents[1] / "engine" / "fixtures" / "discovered-gke-cluster.yaml"
)


@pytest.mark.django_db
def test_a_stored_node_group_overrides_a_discovered_one_and_keeps_its_autoscaler():
    from topology import services
    from topology.adapters import cluster_from_snapshot
    from topology.ingest.files import read_objects
    from topology.models import Cluster

    cluster = Cluster.objects.create(
        name=f"discovered-{uuid.uuid4().hex[:6]}", source_kind=Cluster.SourceKind.FILES
    )
    stored = {
        "apiVersion": "capacityweb.io/v1alpha1",
        "kind": "NodeGroup",
        "metadata": {"name": "a2-pool"},
        "spec": {
            "nodeSelector": {"cloud.google.com/gke-nodepool": "a2-pool"},
            "minSize": 0,
            "maxSize": 6,
            "pricePerNodeHour": 20.0,
            "template": {"allocatable": {"cpu": "90", "pods": "110", "nvidia.com/gpu": "8"}},
        },
    }
    services.save_node_groups(cluster=cluster, objects=[stored])
    snapshot = services.ingest_snapshot(
        cluster=cluster, taken_at=TAKEN_AT, objects=read_objects(DISCOVERED)
    )
    model = cluster_from_snapshot(snapshot)
    groups = {g.name: g for g in model.node_groups}
    a2 = groups["a2-pool"]
    # the stored fields win; what only discovery knows stays
    assert (a2.max_size, a2.price_per_node_hour, a2.current_size) == (6, 20.0, 2)
    assert a2.autoscaler.kind == "cluster-autoscaler"
    assert a2.autoscaler.pool == "a2-pool"
    assert a2.source == (
        "cluster-autoscaler status ConfigMap + GKE node pool label + "
        "capacityweb.io NodeGroup overrides"
    )
    # the other discovered pool is untouched; nodes carry the overriding price
    assert groups["cpu-pool"].max_size == 3
    assert {n.name: n.price_per_node_hour for n in model.nodes if n.node_group == "a2-pool"} == {
        "gke-prod-a2-pool-1": 20.0,
        "gke-prod-a2-pool-2": 20.0,
    }


@pytest.mark.django_db
def test_a_stored_evaluation_keeps_the_actions_and_sources_of_discovered_groups():
    from recommender.models import Recommendation
    from recommender.services import store_evaluation
    from topology import services
    from topology.ingest.files import read_objects
    from topology.models import Cluster

    cluster = Cluster.objects.create(
        name=f"discovered-{uuid.uuid4().hex[:6]}", source_kind=Cluster.SourceKind.FILES
    )
    snapshot = services.ingest_snapshot(
        cluster=cluster, taken_at=TAKEN_AT, objects=read_objects(DISCOVERED)
    )
    evaluation = store_evaluation(snapshot=snapshot)
    assert evaluation.result["currency"] == "USD"
    sources = {g["name"]: g["source"] for g in evaluation.result["nodeGroups"]}
    assert sources["a2-pool"] == "cluster-autoscaler status ConfigMap + GKE node pool label"
    (rec,) = evaluation.result["recommendations"]
    assert [a["kind"] for a in rec["actions"]] == ["ProvisioningRequest", "gcloud", "gcloud"]
    # what the page shows to apply: the autoscaler's actions apart, not a capacityweb.io
    # NodeGroup patch; either the request or the pool's size, then the bounds restored
    (row,) = Recommendation.objects.filter(evaluation=evaluation)
    assert [(a["kind"], a["role"]) for a in row.actions] == [
        ("ProvisioningRequest", "either"),
        ("gcloud", "or"),
        ("gcloud", "afterwards"),
    ]
    assert row.yaml == row.actions[0]["text"]  # the first action alone
    assert row.yaml.startswith("# needs cluster-autoscaler")
    assert "gcloud container node-pools update a2-pool" in row.actions[2]["text"]
    assert all("kind: NodeGroup" not in a["text"] for a in row.actions)


@pytest.mark.django_db
def test_a_stored_evaluation_runs_the_clusters_own_autoscaler_profile():
    from recommender.services import store_evaluation
    from topology import services
    from topology.ingest.files import read_objects
    from topology.models import Cluster

    cluster = Cluster.objects.create(
        name=f"profile-{uuid.uuid4().hex[:6]}",
        source_kind=Cluster.SourceKind.FILES,
        autoscaler_profile="cluster-autoscaler:1.36",
    )
    snapshot = services.ingest_snapshot(
        cluster=cluster, taken_at=TAKEN_AT, objects=read_objects(DISCOVERED)
    )
    assert store_evaluation(snapshot=snapshot).result["autoscalerProfile"] == (
        "cluster-autoscaler:1.36"
    )
    cluster.autoscaler_profile = "no-such-autoscaler"
    cluster.save()
    snapshot.refresh_from_db()
    with pytest.raises(ValueError, match="valid profiles: cluster-autoscaler"):
        store_evaluation(snapshot=snapshot)


@pytest.mark.django_db
def test_a_stored_evaluation_runs_the_clusters_own_cluster_autoscaler_flags(settings):
    from recommender.services import store_evaluation
    from topology import services
    from topology.ingest.files import read_objects
    from topology.models import Cluster

    settings.CLUSTER_AUTOSCALER_ARGS = "--max-nodes-total=500"
    cluster = Cluster.objects.create(
        name=f"flags-{uuid.uuid4().hex[:6]}", source_kind=Cluster.SourceKind.FILES
    )
    snapshot = services.ingest_snapshot(
        cluster=cluster, taken_at=TAKEN_AT, objects=read_objects(DISCOVERED)
    )
    # blank field: the setting
    flags = store_evaluation(snapshot=snapshot).result["autoscalerFlags"]
    assert flags["inEffect"] == {"--max-nodes-total": 500}
    # the cluster's own command line wins
    cluster.autoscaler_args = "--expander=price"
    cluster.save()
    snapshot.refresh_from_db()
    flags = store_evaluation(snapshot=snapshot).result["autoscalerFlags"]
    assert flags["inEffect"] == {"--expander": "price"}
    cluster.autoscaler_args = "--expander=cheapest"
    cluster.save()
    snapshot.refresh_from_db()
    with pytest.raises(ValueError, match="--expander: expander 'cheapest' not supported"):
        store_evaluation(snapshot=snapshot)


@pytest.mark.django_db
def test_a_cluster_price_override_prices_its_discovered_group():
    from topology import services
    from topology.adapters import cluster_from_snapshot
    from topology.ingest.files import read_objects
    from topology.models import Cluster

    cluster = Cluster.objects.create(
        name=f"priced-{uuid.uuid4().hex[:6]}",
        source_kind=Cluster.SourceKind.FILES,
        price_overrides={"a2-highgpu-8g": {"us-central1": 21.0}},
    )
    snapshot = services.ingest_snapshot(
        cluster=cluster, taken_at=TAKEN_AT, objects=read_objects(DISCOVERED)
    )
    groups = {g.name: g for g in cluster_from_snapshot(snapshot).node_groups}
    # the override wins over the bundled table's 29.38708 for a2-highgpu-8g us-central1
    assert groups["a2-pool"].price_per_node_hour == 21.0
    assert groups["a2-pool"].price_source.startswith("cluster on-demand us-central1")
    assert f"price override of cluster {cluster.name}" in groups["a2-pool"].price_source


@pytest.mark.django_db
def test_a_price_override_that_is_not_a_price_is_refused():
    from django.core.exceptions import ValidationError

    from topology.models import Cluster

    cluster = Cluster(
        name="bad-prices",
        source_kind=Cluster.SourceKind.FILES,
        price_overrides={"a3-highgpu-8g": "cheap"},
    )
    with pytest.raises(ValidationError, match="price_overrides.a3-highgpu-8g: must be a number"):
        cluster.full_clean()
