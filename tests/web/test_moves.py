"""Move instead of buy where it shows: the worker's task, the workload and recommendations
pages, ``/api/v1/moves/`` (JSON and CSV), ``/metrics`` and the digest's fourth section.

The cluster (tests/web/move_cluster.yaml), by hand: two 8-GPU nodes each run a 4-GPU
pod of a ReplicaSet; team-b/train-0 needs 8 GPUs; the h100 group adds a node for 40/h.
Moving one web pod onto the other node frees its node: 1 pod, 4 GPUs disrupted (fewer
than the 8 the workload gets), so the move is recommended and avoids 40/h, all of it
team-b's. The section says "being worked out" until the task has stored the report.
"""

from __future__ import annotations

import csv
import html
import io
import re
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from capacityweb.visibility import OTHER_TEAM
from tests.web.fixtures import TAKEN_AT, ingest_and_evaluate, make_cluster

pytestmark = pytest.mark.django_db

CLUSTER_FILE = Path(__file__).resolve().parent / "move_cluster.yaml"
WORKLOAD = "team-b/train-0"


def move_cluster(cluster: Any) -> Any:
    from topology.ingest.files import read_objects

    return ingest_and_evaluate(cluster, read_objects(CLUSTER_FILE))


def moves_section(content: str) -> str:
    return content.split('<section aria-labelledby="moves-title"', 1)[1].split("</section>", 1)[0]


def text_of(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", html))


@pytest.fixture
def evaluated(cluster: Any) -> Any:
    return move_cluster(cluster)


def test_it_stores_a_verified_plan_for_the_evaluation(evaluated: Any) -> None:
    from recommender.models import MoveReport
    from recommender.tasks import find_moves

    report_id = find_moves(evaluated.pk)
    row = MoveReport.objects.get(pk=report_id)
    assert row.evaluation_id == evaluated.pk
    assert (row.workloads_searched, row.workloads_unblocked) == (1, 1)
    assert row.avoided_per_hour == 40.0 and row.saved_per_hour == 0.0
    assert row.team_savings == {"team-b": 40.0}
    (plan,) = row.result["plans"]
    assert plan["workload"] == WORKLOAD and plan["recommend"] == "move"
    (move,) = plan["move"]["moves"]
    assert move["pod"] in ("team-a/web-1", "team-a/web-2")
    assert {move["from"], move["to"]} == {"gpu-1", "gpu-2"}
    assert plan["move"]["bindings"] == {WORKLOAD: move["from"]}
    assert plan["move"]["gpusDisrupted"] == 4


def test_it_says_being_worked_out_then_shows_the_plan_on_the_workload_page(
    signed_in: Any, evaluated: Any
) -> None:
    from recommender.tasks import find_moves

    url = f"/clusters/{evaluated.cluster_id}/workloads/{WORKLOAD}/"
    before = moves_section(signed_in.get(url).content.decode())
    assert "Being worked out" in before
    assert 'data-moves-state="working"' in before
    assert f'data-moves-url="/api/v1/moves/?evaluation={evaluated.pk}"' in before
    assert "data-move-workload" not in before
    find_moves(evaluated.pk)
    after = moves_section(signed_in.get(url).content.decode())
    assert "Being worked out" not in after
    assert f'data-move-workload="{WORKLOAD}" data-recommend="move"' in after
    text = text_of(after)
    assert "avoids $40.00/h" in text and "1 × h100, $40.00/h" in text
    assert "/eviction -f -" in after and "capacityweb.io/move-for-" in after


def test_it_never_shows_the_report_of_an_earlier_write_of_the_evaluation(
    signed_in: Any, evaluated: Any
) -> None:
    from recommender.models import MoveReport
    from recommender.services import store_evaluation
    from recommender.tasks import find_moves
    from topology.models import Snapshot

    find_moves(evaluated.pk)
    again = store_evaluation(snapshot=Snapshot.objects.get(pk=evaluated.snapshot_id))
    assert again.pk == evaluated.pk  # the same snapshot stored again: a new write
    assert not MoveReport.objects.filter(evaluation=again).exists()
    url = f"/clusters/{evaluated.cluster_id}/recommendations/"
    assert "Being worked out" in moves_section(signed_in.get(url).content.decode())


def test_it_shows_every_plan_and_the_savings_on_the_recommendations_page(
    signed_in: Any, evaluated: Any
) -> None:
    from recommender.tasks import find_moves

    find_moves(evaluated.pk)
    content = signed_in.get(f"/clusters/{evaluated.cluster_id}/recommendations/").content
    section = moves_section(content.decode())
    assert re.search(r'data-figure="moves-savings-per-hour">\$40\.00/h<', section)
    assert f'data-move-workload="{WORKLOAD}"' in section
    assert "1 of 1 workload searched unblocked without buying" in text_of(section)
    assert "No on-demand node runs work" in section


def test_it_lists_the_report_in_the_api_filtered_by_cluster(signed_in: Any, evaluated: Any) -> None:
    from recommender.tasks import find_moves

    other = move_cluster(make_cluster("other"))
    find_moves(evaluated.pk)
    find_moves(other.pk)
    listed = signed_in.get(f"/api/v1/moves/?cluster={evaluated.cluster_id}").json()
    assert [r["evaluation"] for r in listed["results"]] == [evaluated.pk]
    (row,) = listed["results"]
    assert row["savings_per_hour"] == 40.0 and row["workloads_unblocked"] == 1
    assert "result" not in row
    detail = signed_in.get(f"/api/v1/moves/{row['id']}/").json()
    assert detail["result"]["plans"][0]["workload"] == WORKLOAD


def test_it_lists_nothing_for_an_evaluation_being_worked_out(
    signed_in: Any, evaluated: Any
) -> None:
    response = signed_in.get(f"/api/v1/moves/?evaluation={evaluated.pk}")
    assert response.status_code == 200 and response.json()["count"] == 0


def test_it_describes_the_endpoint_in_the_openapi_schema(signed_in: Any) -> None:
    schema = signed_in.get("/api/schema/?format=json").json()
    assert "/api/v1/moves/" in schema["paths"]
    assert "/api/v1/moves/rows/" in schema["paths"]


def test_it_writes_one_csv_row_per_plan(signed_in: Any, evaluated: Any) -> None:
    from recommender.moves.reports import CSV_COLUMNS
    from recommender.tasks import find_moves

    find_moves(evaluated.pk)
    response = signed_in.get(f"/api/v1/moves/rows/?cluster={evaluated.cluster_id}&format=csv")
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
    rows = list(csv.reader(io.StringIO(response.content.decode())))
    assert tuple(rows[0]) == CSV_COLUMNS
    (line,) = [dict(zip(rows[0], row, strict=True)) for row in rows[1:]]
    assert line["workload"] == WORKLOAD and line["kind"] == "unblock"
    assert (line["recommend"], line["pods_moved"], line["gpus_disrupted"]) == ("move", "1", "4")
    assert line["avoided_per_hour"] == "40.0" and line["buy_add_nodes"] == "h100=1"


def test_it_exports_the_savings_to_prometheus_once_stored(client: Any, evaluated: Any) -> None:
    from recommender.tasks import find_moves

    assert "capacityweb_move_savings_per_hour{" not in client.get("/metrics").content.decode()
    find_moves(evaluated.pk)
    text = client.get("/metrics").content.decode()
    assert re.search(
        r'capacityweb_move_savings_per_hour\{cluster="web-test",currency="\w+"\} 40\.0', text
    )
    assert 'capacityweb_move_workloads{cluster="web-test",state="unblocked"} 1.0' in text


def test_it_says_per_team_what_moving_would_save_in_the_digest(evaluated: Any, user: Any) -> None:
    from recommender.tasks import find_moves
    from reservations.digest import build_message, digest_figures
    from reservations.models import Subscription

    subscription = Subscription.objects.create(
        user=user, recipients="ops@example.test", team="team-b"
    )
    subscription.clusters.add(evaluated.cluster_id)
    start, end = TAKEN_AT - timedelta(hours=12), TAKEN_AT + timedelta(hours=12)
    unknown = build_message(subscription, digest_figures(subscription, start, end)).body
    assert "no move search of the clusters covers this period" in unknown
    find_moves(evaluated.pk)
    figures = digest_figures(subscription, start, end)
    assert figures.moves is not None and figures.moves.teams == (("team-b", 40.0),)
    message = build_message(subscription, figures)
    assert re.search(r"team-b: \S*40\.00\S*/h", message.body)
    html = message.alternatives[0][0]
    assert "Move instead of buy" in html and "team-b" in html


# --- reservation reconciliation (tests/web/reconcile_cluster.yaml, its header by hand) ---

RECONCILE_FILE = Path(__file__).resolve().parent / "reconcile_cluster.yaml"
DEPLOYMENT_PATCH = (
    "kubectl patch deployment web -n team-a --type=strategic -p "
    """'{"spec": {"template": {"spec": {"nodeSelector": {"pool": "reserved"}}}}}'"""
)


@pytest.fixture
def reconciled(cluster: Any) -> Any:
    from recommender.tasks import find_moves
    from topology.ingest.files import read_objects

    evaluation = ingest_and_evaluate(cluster, read_objects(RECONCILE_FILE))
    find_moves(evaluation.pk)
    return evaluation


def member_of(client: Any, username: str, team: str) -> Any:
    from django.contrib.auth.models import Group, User

    from capacityweb.teams import team_group_name

    user = User.objects.create_user(username, password="member-password-1")
    user.groups.add(Group.objects.get_or_create(name=team_group_name(team))[0])
    client.force_login(user)
    return client


def test_it_shows_the_owners_patch_before_the_rollout_on_the_recommendations_page(
    signed_in: Any, reconciled: Any
) -> None:
    url = f"/clusters/{reconciled.cluster_id}/recommendations/"
    section = moves_section(signed_in.get(url).content.decode())
    assert 'data-move-node="od-1"' in section
    assert re.search(r'data-figure="reconciliation-saved-per-hour">\$30\.00/h<', section)
    assert 'data-owner="Deployment/team-a/web" data-how="rollout"' in section
    article = section.split('data-move-node="od-1"', 1)[1].split("</article>", 1)[0]
    assert 'data-move-node="od-2"' not in section and "Job/team-a/train" not in article
    refusal = "od-2 not offered: kept by Job team-a/train's pod team-a/train-x: "
    assert refusal in html.unescape(text_of(section))
    assert 'data-next-runs="CronJob/team-a/nightly"' in section
    assert "kubectl patch cronjob nightly -n team-a --type=strategic" in html.unescape(section)
    commands = html.unescape(section.split('id="reconcile-1"', 1)[1])
    rollout = "kubectl rollout status deployment/web -n team-a --timeout=15m"
    assert commands.index("kubectl cordon od-1") < commands.index(DEPLOYMENT_PATCH)
    assert commands.index(DEPLOYMENT_PATCH) < commands.index(rollout)


def test_it_gives_the_owner_patches_in_the_api_and_withholds_them_from_another_team(
    client: Any, reconciled: Any
) -> None:
    from recommender.moves.reports import WITHHELD
    from tests.action_checks import assert_reconciliation_runs

    owner = member_of(client, "alice", "team-a")
    (row,) = owner.get(f"/api/v1/moves/?evaluation={reconciled.pk}").json()["results"]
    (found,) = owner.get(f"/api/v1/moves/{row['id']}/").json()["result"]["reconciliations"]
    assert [s["owner"] for s in found["ownerPatches"]] == ["Deployment/team-a/web"]
    assert found["ownerPatches"][0]["fields"] == {"nodeSelector": {"pool": "reserved"}}
    assert_reconciliation_runs(found["actions"])
    result = owner.get(f"/api/v1/moves/{row['id']}/").json()["result"]
    (refusal,) = result["reconciliationRefusals"]
    assert refusal["nextRuns"][0]["patch"].startswith("kubectl patch cronjob nightly ")

    outsider = member_of(client, "bob", "team-b")
    (found,) = outsider.get(f"/api/v1/moves/{row['id']}/").json()["result"]["reconciliations"]
    assert found["reservations"] == [OTHER_TEAM]
    assert "team-a-h100" not in str(found) and "reserved" not in str(found["ownerPatches"])
    assert found["actions"] == [f"# {WITHHELD}"]
    # the CronJob patch for the Job's next runs selects the reservation too
    (refusal,) = outsider.get(f"/api/v1/moves/{row['id']}/").json()["result"][
        "reconciliationRefusals"
    ]
    assert refusal["reservations"] == [OTHER_TEAM]
    (runs,) = refusal["nextRuns"]
    assert runs == {
        "cronJob": "CronJob/team-a/nightly",
        "job": "Job/team-a/train",
        "pods": ["team-a/train-x"],
        "note": WITHHELD,
    }


def test_it_writes_what_each_reconciliation_patches_in_the_csv(
    client: Any, reconciled: Any
) -> None:
    """reconcile_cluster.yaml's header: od-1's reconciliation patches Deployment web's
    pod template with the reservation's nodeSelector {pool: reserved}; a viewer of
    another team reads only that the owner is patched (the selector is withheld)."""
    url = f"/api/v1/moves/rows/?evaluation={reconciled.pk}&format=csv"

    def reconcile_rows() -> list[dict[str, str]]:
        response = client.get(url)
        assert response.status_code == 200
        rows = list(csv.reader(io.StringIO(response.content.decode())))
        lines = [dict(zip(rows[0], row, strict=True)) for row in rows[1:]]
        return [line for line in lines if line["kind"] == "reconcile"]

    member_of(client, "alice", "team-a")
    (line,) = reconcile_rows()
    assert (line["node"], line["saved_per_hour"]) == ("od-1", "30.0")
    assert line["owner_patches"] == 'Deployment/team-a/web={"nodeSelector":{"pool":"reserved"}}'
    member_of(client, "bob", "team-b")
    (line,) = reconcile_rows()
    assert line["owner_patches"] == "Deployment/team-a/web=(withheld)"


def test_it_documents_the_csv_columns_in_the_openapi_schema(signed_in: Any) -> None:
    from recommender.moves.reports import CSV_COLUMNS

    schema = signed_in.get("/api/schema/?format=json").json()
    description = schema["paths"]["/api/v1/moves/rows/"]["get"]["description"]
    assert ", ".join(CSV_COLUMNS) in description and "owner_patches" in CSV_COLUMNS
    assert "owner_patches: reconcile rows: what the reconciliation patches" in description


def test_it_says_when_the_emptied_node_goes_from_the_clusters_autoscaler_command_line(
    signed_in: Any, cluster: Any
) -> None:
    """The cluster's cluster-autoscaler command line (its setting: the ingest reads no
    cluster-autoscaler Deployment) sets --scale-down-unneeded-time=3m; the stored
    evaluation ran with it, and the worker reads the delays from it (flags.go:
    --scale-down-delay-after-add not given, 10m)."""
    from recommender.tasks import find_moves
    from topology.ingest.files import read_objects

    cluster.autoscaler_args = "--scale-down-unneeded-time=3m"
    cluster.save(update_fields=["autoscaler_args"])
    evaluation = ingest_and_evaluate(cluster, read_objects(RECONCILE_FILE))
    find_moves(evaluation.pk)
    (row,) = signed_in.get(f"/api/v1/moves/?evaluation={evaluation.pk}").json()["results"]
    result = signed_in.get(f"/api/v1/moves/{row['id']}/").json()["result"]
    assert result["scaleDownSettings"] == {
        "unneededSeconds": 180.0,
        "delayAfterAddSeconds": 600.0,
        "enabled": True,
        "read": True,
    }
    page = signed_in.get(f"/clusters/{cluster.id}/recommendations/").content.decode()
    text = html.unescape(text_of(moves_section(page)))
    assert "unneeded for --scale-down-unneeded-time=3m" in text
    assert "read from the cluster's cluster-autoscaler command line" in text


def test_it_says_the_scale_down_defaults_were_not_read_without_a_command_line(
    signed_in: Any, reconciled: Any
) -> None:
    page = signed_in.get(f"/clusters/{reconciled.cluster_id}/recommendations/").content.decode()
    text = html.unescape(text_of(moves_section(page)))
    assert "unneeded for --scale-down-unneeded-time=10m" in text
    assert "no cluster-autoscaler command line was given" in text
