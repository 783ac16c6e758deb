"""The recommendations page says "price unknown" for a card whose group has no price
(issue 30 item 2), never 0.00/h."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from tests.web.fixtures import ingest_and_evaluate
from topology.ingest.files import read_objects

pytestmark = pytest.mark.django_db

DISCOVERED = (
    Path(__file__).resolve().parents[1] / "engine" / "fixtures" / "discovered-gke-cluster.yaml"
)


def unpriced_objects() -> list[tuple[str, dict[str, Any]]]:
    """The discovered GKE cluster with its a2 pool on a type the price table lacks."""
    objects = []
    for source, obj in read_objects(DISCOVERED):
        obj = copy.deepcopy(obj)
        if obj["kind"] == "Node" and "a2-pool" in obj["metadata"]["name"]:
            obj["metadata"]["labels"]["node.kubernetes.io/instance-type"] = "z9-notlisted-8g"
        objects.append((source, obj))
    return objects


def test_the_card_of_an_unpriced_group_reads_price_unknown(signed_in: Any, cluster: Any) -> None:
    evaluation = ingest_and_evaluate(cluster, unpriced_objects())
    content = signed_in.get(f"/clusters/{evaluation.cluster_id}/recommendations/").content.decode()
    assert "Add 2 × a2-pool" in content
    assert "· price unknown</span></h2>" in content
    # the joint total names what it leaves out
    assert "+ price unknown for 2 × a2-pool" in content
