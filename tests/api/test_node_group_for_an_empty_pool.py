"""A NodeGroup saved through the API for a pool with no node yet keeps the bounds
cluster-autoscaler's status ConfigMap gives the pool (issue 43): the row sets the
template and price it knows, never minSize/maxSize it was not given."""

from datetime import UTC, datetime

import pytest

from tests.builders.objects import GPU, ca_status_object, node_object
from tests.engine.test_discovery import ca_status_text

pytestmark = [pytest.mark.django_db, pytest.mark.integration]

MIG = "gke-prod-spare-pool-1a2b3c4d-grp"  # GKE's instance group of pool spare-pool
TEMPLATE = {
    "labels": {
        "node.kubernetes.io/instance-type": "a2-highgpu-8g",
        "cloud.google.com/gke-nodepool": "spare-pool",
    },
    "allocatable": {"cpu": "94", "memory": "1300Gi", "pods": "110", GPU: "8"},
}


def cluster_objects() -> list[tuple[str, dict]]:
    member = (
        node_object("g1")
        .hostname()
        .labels({"cloud.google.com/gke-nodepool": "gpu-pool"})
        .allocatable({"cpu": "94", "memory": "1300Gi", "pods": "110", GPU: 8})
        .ready()
    )
    status = ca_status_object(ca_status_text(MIG, 2, 7, 0, 0))
    return [("cluster.yaml", member.dict()), ("cluster.yaml", status.dict())]


def spare_pool_after_ingest(cluster):
    from topology import services
    from topology.model.serialize import cluster_from_json

    snapshot = services.ingest_snapshot(
        cluster=cluster, taken_at=datetime(2026, 12, 7, tzinfo=UTC), objects=cluster_objects()
    )
    assert snapshot is not None
    assert snapshot.errors == []
    model = cluster_from_json(snapshot.model_json)
    return next(g for g in model.node_groups if g.name == "spare-pool")


def test_a_template_saved_through_the_api_keeps_the_ca_configmaps_bounds(staff_client, cluster):
    response = staff_client.post(
        "/api/v1/node-groups/",
        {
            "cluster": cluster.id,
            "name": "spare-pool",
            "spec": {"template": TEMPLATE, "pricePerNodeHour": 30.0},
        },
        format="json",
    )
    assert response.status_code == 201, response.content
    spare = spare_pool_after_ingest(cluster)
    # bounds from the ConfigMap (minSize=2, maxSize=7), price and template from the row
    assert (spare.min_size, spare.max_size, spare.current_size) == (2, 7, 0)
    assert spare.price_per_node_hour == 30.0
    assert spare.template.gpu_count == 8
    assert spare.autoscaler is not None and spare.autoscaler.name == MIG


def test_bounds_saved_through_the_api_win_over_the_configmaps(staff_client, cluster):
    response = staff_client.post(
        "/api/v1/node-groups/",
        {
            "cluster": cluster.id,
            "name": "spare-pool",
            "spec": {"template": TEMPLATE, "minSize": 0, "maxSize": 3},
        },
        format="json",
    )
    assert response.status_code == 201, response.content
    spare = spare_pool_after_ingest(cluster)
    assert (spare.min_size, spare.max_size) == (0, 3)
