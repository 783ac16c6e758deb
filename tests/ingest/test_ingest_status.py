"""How the ingest goes is said where an operator looks: the cluster's pages, the overview
card and /metrics, from real reads of the local API server."""

from __future__ import annotations

import time
import uuid

import pytest
from django.urls import reverse

from topology.ingest.sourceread import SourceUnreachable

pytestmark = [pytest.mark.integration, pytest.mark.django_db]
HYPERNODE = "HyperNode.topology.volcano.sh"


@pytest.fixture
def quick_retries(settings):
    settings.INGEST_RETRY_BASE_SECONDS = 0.01
    settings.INGEST_RETRY_CAP_SECONDS = 0.05


@pytest.fixture
def kube_cluster(kube_server, tmp_path, quick_retries):
    from topology import services

    kubeconfig = kube_server.kubeconfig(tmp_path / "kubeconfig")
    return services.save_cluster(
        name=f"status-{uuid.uuid4().hex[:6]}",
        source_kind="kube",
        source_settings={"kubeconfig": str(kubeconfig), "request_timeout_seconds": 2},
    )


@pytest.fixture
def signed_in(client, django_user_model):
    client.force_login(django_user_model.objects.create_user("operator", password="x"))
    return client


def _ingest(cluster):
    from django.utils import timezone

    from topology import services

    return services.ingest_from_source(cluster=cluster, now=timezone.now())


def _unreachable(kube_server, cluster):
    assert _ingest(cluster) is not None
    kube_server.go_away()
    with pytest.raises(SourceUnreachable):
        _ingest(cluster)


def test_it_says_on_the_cluster_page_that_the_source_is_unreachable(
    kube_server, kube_cluster, signed_in
):
    _unreachable(kube_server, kube_cluster)
    page = signed_in.get(reverse("topology", args=[kube_cluster.pk])).content.decode()
    assert 'data-ingest-state="unreachable"' in page
    assert "has not answered since" in page
    assert "Connection refused" in page


def test_it_keeps_the_previous_snapshot_while_the_source_is_unreachable(kube_server, kube_cluster):
    from topology.models import Snapshot

    _unreachable(kube_server, kube_cluster)
    snapshots = Snapshot.objects.filter(cluster=kube_cluster)
    assert [s.object_counts["nodes"] for s in snapshots] == [40]


def test_it_reports_an_unreachable_source_in_metrics(kube_server, kube_cluster, client):
    _unreachable(kube_server, kube_cluster)
    text = client.get("/metrics").content.decode()
    assert f'capacityweb_ingest_up{{cluster="{kube_cluster.name}"}} 0.0' in text
    assert (
        f'capacityweb_ingest_down_seconds{{cluster="{kube_cluster.name}",state="unreachable"}}'
        in (text)
    )


def test_it_lists_a_forbidden_kind_with_the_rule_to_add_on_the_cluster_page(
    kube_server, kube_cluster, signed_in
):
    kube_server.forbidden.add(HYPERNODE)
    _ingest(kube_cluster)
    page = signed_in.get(reverse("topology", args=[kube_cluster.pk])).content.decode()
    row = page[page.index(f'data-kind="{HYPERNODE}"') :].split("</tr>")[0]
    assert "<td>forbidden</td>" in row
    assert "add ClusterRole: apiGroups: [&quot;topology.volcano.sh&quot;]" in row


def test_it_counts_kinds_by_state_in_metrics(kube_server, kube_cluster, client):
    kube_server.forbidden.add(HYPERNODE)
    kube_server.unserved.add("JobSet.jobset.x-k8s.io")
    _ingest(kube_cluster)
    text = client.get("/metrics").content.decode()
    name = kube_cluster.name
    assert f'capacityweb_ingest_up{{cluster="{name}"}} 1.0' in text
    assert f'capacityweb_ingest_kinds{{cluster="{name}",state="forbidden"}} 1.0' in text
    assert f'capacityweb_ingest_kinds{{cluster="{name}",state="not served"}} 1.0' in text


def test_it_stores_a_stored_configuration_change_on_a_quiet_cluster(kube_server, kube_cluster):
    from reservations.services import save_reservation

    first = _ingest(kube_cluster)
    assert _ingest(kube_cluster) is None  # quiet: nothing new
    save_reservation(
        cluster=kube_cluster,
        name="team-a-nodes",
        spec={"owner": {"namespaces": ["team-a"]}, "nodeNames": ["openb-node-0000"]},
    )
    second = _ingest(kube_cluster)
    assert second is not None and second.content_hash != first.content_hash


def test_it_stores_a_topology_levels_change_on_a_quiet_cluster(kube_server, kube_cluster):
    from topology.models import Cluster

    _ingest(kube_cluster)
    Cluster.objects.filter(pk=kube_cluster.pk).update(
        topology_levels=[{"key": "kubernetes.io/hostname", "name": "host"}]
    )
    kube_cluster.refresh_from_db()
    assert _ingest(kube_cluster) is not None


def test_it_says_not_answering_at_once_while_open_watches_outlive_new_requests(
    kube_server, kube_cluster, signed_in
):
    """A slowly shutting-down API server (issue 45): new requests refused, open watches kept."""
    from django.utils import timezone

    from topology import services

    try:
        services.ingest_from_source(cluster=kube_cluster, now=timezone.now(), follow=True)
        services.ingest_from_source(cluster=kube_cluster, now=timezone.now(), follow=True)
        kube_server.shut_down_slowly()
        started = time.monotonic()
        with pytest.raises(SourceUnreachable, match="does not answer new requests"):
            services.ingest_from_source(cluster=kube_cluster, now=timezone.now(), follow=True)
        assert time.monotonic() - started < 2.0
    finally:
        services.close_source(cluster=kube_cluster)
    page = signed_in.get(reverse("topology", args=[kube_cluster.pk])).content.decode()
    assert 'data-ingest-state="unreachable"' in page
    text = signed_in.get("/metrics").content.decode()
    assert f'capacityweb_ingest_up{{cluster="{kube_cluster.name}"}} 0.0' in text


def test_it_stores_a_kind_turning_forbidden_on_a_quiet_cluster(kube_server, kube_cluster):
    """The kinds' states and counts are part of what is stored (issue 45), not only the model."""
    kube_cluster.source_settings = {**kube_cluster.source_settings, "forbidden_after_seconds": 0}
    kube_cluster.save(update_fields=["source_settings"])
    _ingest(kube_cluster)
    assert _ingest(kube_cluster) is None  # quiet: nothing new
    kube_server.forbidden.add(HYPERNODE)  # the role loses a kind it had read (as empty)
    snapshot = _ingest(kube_cluster)
    assert snapshot is not None
    assert snapshot.object_counts["forbidden"] == [HYPERNODE]
