"""The recommendations page of a cluster without capacityweb.io objects."""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Any

import pytest
from django.test import override_settings

from tests.web.fixtures import ingest_and_evaluate
from topology.ingest.files import read_objects

DISCOVERED = (
    Path(__file__).resolve().parents[1] / "engine" / "fixtures" / "discovered-gke-cluster.yaml"
)


@pytest.fixture
def discovered_evaluation(cluster: Any) -> Any:
    return ingest_and_evaluate(cluster, list(read_objects(DISCOVERED)))


def test_it_shows_where_the_group_was_found_and_its_autoscaler_actions(
    signed_in: Any, discovered_evaluation: Any
) -> None:
    url = f"/clusters/{discovered_evaluation.cluster_id}/recommendations/"
    content = html.unescape(signed_in.get(url).content.decode())
    assert "Add 2 × a2-pool" in content
    assert (
        "Node group found in: cluster-autoscaler status ConfigMap + GKE node pool label"
        " · price: gcp on-demand us-central1 as of 2024-06-01" in content
    )
    assert "gcloud container node-pools update a2-pool" in content
    assert "kind: NodeGroup" not in content
    assert "$58.77/h" in content


@override_settings(CURRENCY="EUR")
def test_it_shows_money_in_the_configured_currency(
    signed_in: Any, discovered_evaluation: Any
) -> None:
    url = f"/clusters/{discovered_evaluation.cluster_id}/recommendations/"
    content = signed_in.get(url).content.decode()
    assert "€58.77/h" in content
    assert not re.search(r"\$\d|USD", content)
