"""pending-workloads/ rows carry what the pages show: GPUs asked for, each plan's price,
pending since, and the pods a preempting workload evicts.

Expectations from the scenarios' hand derivations (tests/scenarios/*.expected.yaml).
"""

from datetime import timedelta

import pytest

from tests.web.fixtures import TAKEN_AT, ingest_and_evaluate, scenario_objects

pytestmark = pytest.mark.django_db


def rows_of(client, evaluation, **query):
    response = client.get(
        "/api/v1/pending-workloads/", {"evaluation": evaluation.pk, "latest": "false", **query}
    )
    assert response.status_code == 200, response.content
    return {row["workload"]: row for row in response.json()["results"]}


def test_it_prices_each_plan_for_the_workload(staff_client, cluster):
    """partial-gang: the naive autoscaler buys 2 h100 nodes at 80/h for ml/pretrain (3
    members × 8 GPUs; only 2 fit, the group's maxSize is 2); the joint plan buys nothing
    (the gang cannot start): 160/h against 0/h."""
    evaluation = ingest_and_evaluate(cluster, scenario_objects("partial-gang"))
    row = rows_of(staff_client, evaluation)["ml/pretrain"]
    assert row["requested_gpus"] == 24.0
    assert row["naive_cost_per_hour"] == 160.0
    assert row["joint_cost_per_hour"] == 0.0
    assert row["verdict"] == "blocked"
    assert row["preempts"] == []
    assert row["pending_since"] == TAKEN_AT.isoformat().replace("+00:00", "Z")


def test_it_keeps_pending_since_across_snapshots(staff_client, cluster):
    """The same pending pod in a second snapshot an hour later (plus a CPU-only node,
    so the content differs) is pending since the first snapshot."""
    objects = scenario_objects("reservation-idle-nodes")
    ingest_and_evaluate(cluster, objects)
    spare = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "spare"},
        "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"}},
    }
    later = [*objects, ("spare.yaml", spare)]
    second = ingest_and_evaluate(cluster, later, taken_at=TAKEN_AT + timedelta(hours=1))
    row = rows_of(staff_client, second)["team-a/finetune"]
    assert row["pending_since"] == TAKEN_AT.isoformat().replace("+00:00", "Z")
    assert row["taken_at"] == (TAKEN_AT + timedelta(hours=1)).isoformat().replace("+00:00", "Z")


def test_it_lists_the_pods_a_preempting_workload_evicts(staff_client, cluster):
    """preemption-pdb: ml/trainer (8 GPUs) fits no node; DefaultPreemption picks n2,
    whose victim batch/sim-0 violates no budget; no node group, so nothing is bought."""
    evaluation = ingest_and_evaluate(cluster, scenario_objects("preemption-pdb"))
    row = rows_of(staff_client, evaluation, verdict="preempts")["ml/trainer"]
    assert row["verdict"] == "preempts"
    assert row["preempts"] == ["batch/sim-0"]
    assert row["requested_gpus"] == 8.0
    assert row["naive_cost_per_hour"] == 0.0
    assert row["joint_cost_per_hour"] == 0.0


def test_it_orders_by_the_naive_price(staff_client, cluster):
    """topology-block: ml/train's naive nodes cost 160/h; its fillers run, so it is the
    only row; ordering by the new columns is accepted."""
    evaluation = ingest_and_evaluate(cluster, scenario_objects("topology-block"))
    rows = rows_of(staff_client, evaluation, ordering="-naive_cost_per_hour")
    assert rows["ml/train"]["naive_cost_per_hour"] == 160.0
    assert rows["ml/train"]["requested_gpus"] == 16.0


def test_provisioning_paid_reservation_nodes_costs_the_workload_nothing(staff_client, cluster):
    """reservation-paid-unprovisioned: the joint plan provisions team-a's paid,
    unprovisioned h100 node (group price 80/h) for team-a/eval: no extra spend, so its
    joint price is 0/h; the naive autoscaler buys a fresh h100 at 80/h."""
    evaluation = ingest_and_evaluate(cluster, scenario_objects("reservation-paid-unprovisioned"))
    row = rows_of(staff_client, evaluation)["team-a/eval"]
    assert row["verdict"] == "uses_reservation"
    assert row["joint_cost_per_hour"] == 0.0
    assert row["naive_cost_per_hour"] == 80.0
