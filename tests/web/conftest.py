"""Fixtures of the dashboard page and consumer tests: a signed-in client, real evaluations."""

from __future__ import annotations

from typing import Any

import pytest

from tests.web.fixtures import (
    SCRIPT_POD_NAME,
    gpu_node,
    ingest_and_evaluate,
    make_cluster,
    running_pod,
    scenario_objects,
)


@pytest.fixture(autouse=True)
def empty_cache() -> Any:
    """Sessions and cached page parts live in the default cache; each test starts without."""
    from django.core.cache import cache

    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def user(db: None) -> Any:
    from django.contrib.auth.models import User

    return User.objects.create_user("viewer", password="viewer-password-1", is_staff=True)


@pytest.fixture
def signed_in(client: Any, user: Any) -> Any:
    client.force_login(user)
    return client


@pytest.fixture
def cluster(db: None) -> Any:
    return make_cluster()


@pytest.fixture
def evaluation(cluster: Any) -> Any:
    """The reservation scenario (idle reserved node r1, a pending pod cluster-autoscaler
    adds nothing for: never-scales), plus node x1 (2 GPUs) running a pod whose name is a
    script tag."""
    objects = scenario_objects("reservation-idle-nodes")
    objects += [gpu_node("x1", 2), running_pod(SCRIPT_POD_NAME, "team-x", "x1", 1)]
    return ingest_and_evaluate(cluster, objects)


@pytest.fixture
def topology_evaluation(cluster: Any) -> Any:
    """The topology scenario: a gang that needs one block, so naive additions strand GPUs."""
    return ingest_and_evaluate(cluster, scenario_objects("topology-block"))
