"""A reservation stays inside its team and its cluster, and never doubles another team's
GPUs (issue 28 item 2).

Cluster prod-gpu has nodes n1, n2 (8 GPUs each, pool=h100) and a node group h100 of
maxSize 4; cluster other-gpu has node y1. Team b already holds n1 for March 2026
(Reservation b-n1). Every path that writes a reservation goes through one service
(``reservations.services.save_reservation``): the API (400), YAML through
``load_config`` (exit 2) and the admin form, each naming object, field and reason,
and storing nothing.
"""

import io

import pytest
from builders import make_user

from tests.web.fixtures import gpu_node

pytestmark = pytest.mark.django_db

MARCH = {"start": "2026-03-01T00:00:00Z", "end": "2026-04-01T00:00:00Z"}
APRIL = {"start": "2026-04-01T00:00:00Z", "end": "2026-05-01T00:00:00Z"}
GROUP_SPEC = {
    "nodeSelector": {"pool": "h100"},
    "minSize": 0,
    "maxSize": 4,
    "template": {
        "allocatable": {"cpu": "8", "memory": "64Gi", "pods": "110", "nvidia.com/gpu": "8"}
    },
}


def labelled(node, labels):
    source, obj = node
    obj["metadata"]["labels"].update(labels)
    return source, obj


@pytest.fixture
def prod(cluster):
    """prod-gpu with its snapshot (n1, n2), group h100 and team b's b-n1 on n1 in March."""
    from reservations.services import save_reservation
    from tests.web.fixtures import TAKEN_AT
    from topology import services
    from topology.models import Cluster

    group = {"apiVersion": "capacityweb.io/v1alpha1", "kind": "NodeGroup"}
    services.save_node_groups(
        cluster=cluster, objects=[{**group, "metadata": {"name": "h100"}, "spec": GROUP_SPEC}]
    )
    nodes = [labelled(gpu_node(name, 8), {"pool": "h100"}) for name in ("n1", "n2")]
    services.ingest_snapshot(cluster=cluster, taken_at=TAKEN_AT, objects=nodes)
    other = Cluster.objects.create(name="other-gpu", source_kind="files")
    services.ingest_snapshot(cluster=other, taken_at=TAKEN_AT, objects=[gpu_node("y1", 8)])
    spec = {"owner": {"namespaces": ["team-b"]}, "nodeNames": ["n1"], **MARCH}
    save_reservation(cluster=cluster, name="b-n1", spec=spec)
    return cluster


def post(client, cluster, name, spec):
    return client.post(
        "/api/v1/reservations/", {"cluster": cluster.id, "name": name, "spec": spec}, format="json"
    )


def refusal(response):
    assert response.status_code == 400, response.content
    [message] = response.json()["spec"]
    return message


def stored_names():
    from reservations.models import Reservation

    return sorted(Reservation.objects.values_list("name", flat=True))


def test_it_refuses_a_reservation_co_owned_with_another_team(team_a_client, prod):
    spec = {"owner": {"namespaces": ["team-a", "team-b"]}, "nodeNames": ["n2"], **MARCH}

    message = refusal(post(team_a_client, prod, "steal", spec))

    assert message == (
        "Reservation/steal: spec.owner.namespaces: team-b: not one of your teams "
        "(every owner must be)"
    )
    assert stored_names() == ["b-n1"]


def test_it_refuses_a_node_of_another_cluster(team_a_client, prod):
    spec = {"owner": {"namespaces": ["team-a"]}, "nodeNames": ["n2", "y1"], **MARCH}

    message = refusal(post(team_a_client, prod, "a-y1", spec))

    assert message == "Reservation/a-y1: spec.nodeNames[1]: 'y1': no such node in cluster prod-gpu"
    assert stored_names() == ["b-n1"]


def test_it_refuses_another_teams_reserved_node_in_an_overlapping_window(team_a_client, prod):
    spec = {"owner": {"namespaces": ["team-a"]}, "nodeNames": ["n1"], **MARCH}

    message = refusal(post(team_a_client, prod, "a-n1", spec))

    assert message == (
        "Reservation/a-n1: spec.nodeNames: node(s) n1 already reserved "
        "by another team's reservation then"
    )
    assert "b-n1" not in message and "team-b" not in message  # team a may not see it
    assert stored_names() == ["b-n1"]


def test_it_refuses_a_selector_that_takes_in_another_teams_node(team_a_client, prod):
    spec = {"owner": {"namespaces": ["team-a"]}, "nodeSelector": {"pool": "h100"}, **MARCH}

    message = refusal(post(team_a_client, prod, "a-pool", spec))

    assert message.startswith("Reservation/a-pool: spec.nodeSelector: node(s) n1 already reserved")


def test_it_accepts_the_same_node_after_the_other_reservation_ends(team_a_client, prod):
    spec = {"owner": {"namespaces": ["team-a"]}, "nodeNames": ["n1"], **APRIL}

    response = post(team_a_client, prod, "a-n1-april", spec)

    assert response.status_code == 201, response.content


def test_it_accepts_a_second_reservation_of_the_same_owners_on_a_node(prod):
    client = make_client("bea", "team-b")
    spec = {"owner": {"namespaces": ["team-b"]}, "nodeNames": ["n1"], **MARCH}

    assert post(client, prod, "b-n1-again", spec).status_code == 201


def make_client(username, team):
    from builders import token_client

    return token_client(make_user(username, teams=(team,)))


GROUP_YAML = (
    "apiVersion: capacityweb.io/v1alpha1\nkind: NodeGroup\nmetadata: {name: h100}\n"
    "spec: {nodeSelector: {pool: h100}, minSize: 0, maxSize: 4, template: {allocatable: "
    '{cpu: "8", memory: 64Gi, pods: "110", nvidia.com/gpu: "8"}}}\n---\n'
)


def config_yaml(name, owner, spec_lines):
    """A Reservation in YAML, after the NodeGroup it may name (a file is parsed whole)."""
    return GROUP_YAML + (
        "apiVersion: capacityweb.io/v1alpha1\nkind: Reservation\n"
        f"metadata: {{name: {name}}}\nspec:\n  owner: {{namespaces: [{owner}]}}\n"
        f'  start: "2026-03-01T00:00:00Z"\n  end: "2026-04-01T00:00:00Z"\n{spec_lines}'
    )


def load_config(cluster, text, tmp_path):
    from django.core.management import call_command

    path = tmp_path / f"config-{len(list(tmp_path.iterdir()))}.yaml"
    path.write_text(text)
    call_command("load_config", cluster.name, str(path), stdout=io.StringIO())


def test_it_refuses_the_same_overlap_from_yaml_with_exit_2(prod, tmp_path):
    from django.core.management.base import CommandError

    text = config_yaml("a-n1", "team-a", "  nodeNames: [n1]\n")
    with pytest.raises(CommandError) as refused:
        load_config(prod, text, tmp_path)

    assert refused.value.returncode == 2
    assert str(refused.value).endswith(
        ".yaml: Reservation/a-n1: spec.nodeNames: node(s) n1 already reserved "
        "by Reservation/b-n1 (team-b) then"
    )
    assert stored_names() == ["b-n1"]


def test_it_refuses_group_capacity_reserved_past_the_groups_max_size(prod, tmp_path):
    from django.core.management.base import CommandError

    load_config(
        prod, config_yaml("b-3", "team-b", "  nodeGroup: {name: h100, count: 3}\n"), tmp_path
    )
    with pytest.raises(CommandError) as refused:
        load_config(
            prod, config_yaml("a-2", "team-a", "  nodeGroup: {name: h100, count: 2}\n"), tmp_path
        )

    assert str(refused.value).endswith(
        ".yaml: Reservation/a-2: spec.nodeGroup.count: 5 nodes of group h100 reserved at once, "
        "its maxSize is 4 by Reservation/b-3 (team-b) then"
    )
    assert stored_names() == ["b-3", "b-n1"]


def test_it_refuses_the_same_overlap_in_the_admin_form(client, prod):
    from django.contrib.auth.models import User

    client.force_login(User.objects.create_superuser("admin", password="admin-password-1"))
    spec = '{"owner": {"namespaces": ["team-a"]}, "nodeNames": ["n1"]}'
    response = client.post(
        "/admin/reservations/reservation/add/",
        {
            "cluster": prod.id,
            "name": "a-n1",
            "owner_namespaces": '["team-a"]',
            "spec": spec,
            "price_per_gpu_hour": "1.0",
            "start_0": "2026-03-02",
            "start_1": "00:00:00",
            "end_0": "2026-03-03",
            "end_1": "00:00:00",
        },
    )

    assert response.status_code == 200  # the form again, with the error
    assert "spec.nodeNames: node(s) n1 already reserved by Reservation/b-n1" in (
        response.content.decode()
    )
    assert stored_names() == ["b-n1"]


@pytest.fixture
def shared(prod):
    """Reservation ab-n2 on n2, co-owned by team-a and team-b (made by an operator)."""
    from reservations.services import save_reservation

    spec = {"owner": {"namespaces": ["team-a", "team-b"]}, "nodeNames": ["n2"], **MARCH}
    return save_reservation(cluster=prod, name="ab-n2", spec=spec)


def test_it_refuses_a_co_owner_dropping_the_other_team(team_a_client, shared):
    from reservations.models import Reservation

    spec = {"owner": {"namespaces": ["team-a"]}, "nodeNames": ["n2"], **MARCH}
    response = team_a_client.put(
        f"/api/v1/reservations/{shared.id}/",
        {"cluster": shared.cluster_id, "name": "ab-n2", "spec": spec},
        format="json",
    )

    assert refusal(response) == (
        "Reservation/ab-n2: spec.owner.namespaces: team-b: co-owns it and is not one of your teams"
    )
    assert Reservation.objects.get(name="ab-n2").owner_namespaces == ["team-a", "team-b"]


def test_it_refuses_a_co_owner_deleting_the_other_teams_share(team_a_client, shared):
    response = team_a_client.delete(f"/api/v1/reservations/{shared.id}/")

    assert refusal(response).endswith("team-b: co-owns it and is not one of your teams")
    assert stored_names() == ["ab-n2", "b-n1"]


def test_it_refuses_another_teams_reservation_name_without_saying_it_exists(team_a_client, prod):
    """issue 42 item 6: DRF's "The fields cluster, name must make a unique set." told team a
    that team b holds a reservation named b-n1."""
    spec = {"owner": {"namespaces": ["team-a"]}, "nodeNames": ["n2"], **APRIL}

    response = post(team_a_client, prod, "b-n1", spec)

    assert response.status_code == 400
    assert response.json() == {"name": ["not available in this cluster; choose another name"]}
    assert stored_names() == ["b-n1"]


def test_it_refuses_a_taken_name_alike_whichever_team_holds_it(team_a_client, prod):
    """The refusal says nothing of whose the name is: team a's own name reads the same."""
    spec = {"owner": {"namespaces": ["team-a"]}, "nodeNames": ["n2"], **APRIL}
    assert post(team_a_client, prod, "a-n2", spec).status_code == 201

    own = post(team_a_client, prod, "a-n2", spec)
    others = post(team_a_client, prod, "b-n1", spec)

    assert (own.status_code, own.json()) == (others.status_code, others.json())
