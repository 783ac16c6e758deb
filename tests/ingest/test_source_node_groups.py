"""The node groups a source gives (discovered from GKE pool labels and the
cluster-autoscaler status here) are stored by the ingest and listed by the API and the
recommendations page, for a files ingest like any other; a user's own NodeGroup keeps
overriding them."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
import yaml
from django.core.management import call_command
from django.urls import reverse

pytestmark = [pytest.mark.integration, pytest.mark.django_db]
DISCOVERED = (
    Path(__file__).resolve().parents[1] / "engine" / "fixtures" / "discovered-gke-cluster.yaml"
)
A2_STATUS = "cluster-autoscaler status ConfigMap + GKE node pool label"


def _ingest_files(tmp_path: Path, documents: list | None = None) -> tuple[str, int]:
    from topology.models import Cluster

    name = f"groups-{uuid.uuid4().hex[:6]}"
    path = tmp_path / "cluster.yaml"
    path.write_text(DISCOVERED.read_text() if documents is None else yaml.safe_dump_all(documents))
    call_command("ingest", name, "--source", "files", "--path", str(path))
    return name, Cluster.objects.get(name=name).pk


def _groups(client, cluster_id: int) -> dict[str, dict]:
    response = client.get("/api/v1/node-groups/", {"cluster": cluster_id})
    assert response.status_code == 200
    return {g["name"]: g for g in response.json()["results"]}


@pytest.fixture
def signed_in(client, django_user_model):
    client.force_login(django_user_model.objects.create_user("viewer", password="x"))
    return client


def test_it_lists_the_groups_a_files_ingest_discovered_in_the_api(tmp_path, signed_in):
    _name, cluster_id = _ingest_files(tmp_path)
    groups = _groups(signed_in, cluster_id)
    assert sorted(groups) == ["a2-pool", "cpu-pool"]
    a2 = groups["a2-pool"]
    assert (a2["origin"], a2["source"]) == ("source", A2_STATUS)
    assert (a2["min_size"], a2["max_size"], a2["current_size"]) == (0, 4, 2)
    assert a2["price_per_node_hour"] == 29.38708  # a2-highgpu-8g in us-central1
    assert a2["spec"]["nodeSelector"] == {"cloud.google.com/gke-nodepool": "a2-pool"}
    template = a2["spec"]["template"]
    assert template["allocatable"]["nvidia.com/gpu"] == "8"
    assert template["taints"] == [
        {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}
    ]


def test_it_drops_a_group_the_source_no_longer_has(tmp_path, signed_in):
    documents = list(yaml.safe_load_all(DISCOVERED.read_text()))
    name, cluster_id = _ingest_files(tmp_path, documents)
    without_cpu_pool = [
        d
        for d in documents
        if d
        and not (
            d.get("kind") == "Node"
            and d["metadata"]["labels"].get("cloud.google.com/gke-nodepool") == "cpu-pool"
        )
    ]
    (tmp_path / "cluster.yaml").write_text(yaml.safe_dump_all(without_cpu_pool))
    call_command("ingest", name)
    assert sorted(_groups(signed_in, cluster_id)) == ["a2-pool"]


def test_it_keeps_a_user_written_group_over_the_discovered_one(tmp_path, signed_in):
    from topology import services
    from topology.models import Cluster

    name, cluster_id = _ingest_files(tmp_path)
    override = {
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
    services.save_node_groups(cluster=Cluster.objects.get(pk=cluster_id), objects=[override])
    (tmp_path / "cluster.yaml").write_text(DISCOVERED.read_text() + "\n")
    call_command("ingest", name)
    a2 = _groups(signed_in, cluster_id)["a2-pool"]
    assert (a2["origin"], a2["source"], a2["max_size"]) == ("project", "", 6)
    assert a2["spec"] == override["spec"]


def test_it_shows_every_node_group_on_the_recommendations_page(tmp_path, signed_in):
    _name, cluster_id = _ingest_files(tmp_path)
    page = signed_in.get(reverse("recommendations", args=[cluster_id])).content.decode()
    row = page[page.index('data-node-group-row="cpu-pool"') :].split("</tr>")[0]
    assert "<td>1</td><td>1–3</td>" in row
    assert "GKE node pool label" in row
