"""Admin: YAML loading into a cluster, and node groups validated by the parser on save."""

from __future__ import annotations

import json
import uuid

import pytest
import yaml
from django.urls import reverse

from tests.ingest.kubeobjects import NODE_GROUP, RESERVATION

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


@pytest.fixture
def cluster():
    from topology.models import Cluster

    return Cluster.objects.create(name=f"admin-{uuid.uuid4().hex[:6]}", source_kind="files")


def test_it_loads_pasted_yaml_into_the_cluster(admin_client, cluster):
    from reservations.models import Reservation
    from topology.models import NodeGroup

    url = reverse("admin:topology_cluster_load_config", args=[cluster.pk])
    response = admin_client.post(url, {"document": yaml.safe_dump_all([NODE_GROUP, RESERVATION])})
    assert response.status_code == 302
    assert NodeGroup.objects.get(cluster=cluster).name == "h100-pool"
    assert Reservation.objects.get(cluster=cluster).name == "team-a-h100"


def test_it_shows_the_parser_error_and_saves_nothing(admin_client, cluster):
    from topology.models import NodeGroup

    bad = json.loads(json.dumps(NODE_GROUP))
    bad["spec"]["template"]["allocatable"]["memory"] = "a lot"
    url = reverse("admin:topology_cluster_load_config", args=[cluster.pk])
    response = admin_client.post(url, {"document": yaml.safe_dump(bad)})
    assert response.status_code == 200
    assert "NodeGroup/h100-pool" in response.content.decode()
    assert not NodeGroup.objects.filter(cluster=cluster).exists()


def test_it_refuses_an_invalid_node_group_edited_in_admin(admin_client, cluster):
    from topology.models import NodeGroup

    spec = json.loads(json.dumps(NODE_GROUP["spec"]))
    spec["template"]["allocatable"]["nvidia.com/gpu"] = "eight"
    response = admin_client.post(
        reverse("admin:topology_nodegroup_add"),
        {
            "cluster": cluster.pk,
            "name": "bad-pool",
            "spec": json.dumps(spec),
            "price_per_node_hour": "1.0",
            "min_size": "0",
            "max_size": "4",
        },
    )
    assert response.status_code == 200
    assert "NodeGroup/bad-pool" in response.content.decode()
    assert not NodeGroup.objects.filter(cluster=cluster).exists()


def test_it_schedules_the_ingest_of_a_cluster_saved_in_admin(admin_client):
    from django_celery_beat.models import PeriodicTask

    from topology.models import Cluster

    name = f"admin-{uuid.uuid4().hex[:6]}"
    response = admin_client.post(
        reverse("admin:topology_cluster_add"),
        {
            "name": name,
            "source_kind": "files",
            "source_settings": json.dumps({"path": "export.yaml"}),
            "topology_levels": "[]",
            "enabled": "on",
            "node_groups-TOTAL_FORMS": "0",
            "node_groups-INITIAL_FORMS": "0",
        },
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    cluster = Cluster.objects.get(name=name)
    assert PeriodicTask.objects.get(name=f"ingest cluster {cluster.pk}").enabled
