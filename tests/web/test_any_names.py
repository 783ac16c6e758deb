"""Pages stay up whatever a workload is called (issue 28 item 7).

The API server refuses a `/` in a pod's name or namespace, but files, traces and
hand-written snapshots reach the parser unchecked: a pending pod named `a/b` (or
in namespace `ns/x`) made the whole pending page answer 500 (NoReverseMatch when
linking the workload). Every mention still links to the workload's page, and the
link opens it.
"""

from __future__ import annotations

import html
import re
from typing import Any

import pytest

from tests.web.fixtures import gpu_node, ingest_and_evaluate

pytestmark = pytest.mark.django_db

ODD_WORKLOADS = ("team-x/a/b", "ns/x/train", "team-x/with space?#%", "team-x/line\nbreak")


def pending_pod(namespace: str, name: str) -> tuple[str, dict[str, Any]]:
    """A pending pod asking for more GPUs than any node has: it stays pending."""
    requests = {"cpu": "1", "nvidia.com/gpu": "16"}
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"containers": [{"name": "c", "resources": {"requests": requests}}]},
        "status": {"phase": "Pending"},
    }
    return ("test", pod)


@pytest.fixture
def odd_evaluation(cluster: Any) -> Any:
    objects = [gpu_node("n1", 8)]
    for workload in ODD_WORKLOADS:
        namespace, _, name = workload.partition("/")
        objects.append(pending_pod(namespace, name))
    return ingest_and_evaluate(cluster, objects)


def pending_page(client: Any, evaluation: Any) -> Any:
    return client.get(f"/clusters/{evaluation.cluster_id}/pending/")


def test_it_shows_the_pending_page_with_a_slash_in_a_workload_name(
    signed_in: Any, odd_evaluation: Any
) -> None:
    response = pending_page(signed_in, odd_evaluation)
    assert response.status_code == 200
    content = response.content.decode()
    for workload in ODD_WORKLOADS:
        assert html.escape(workload) in content


def test_it_links_every_odd_workload_to_its_own_page(signed_in: Any, odd_evaluation: Any) -> None:
    content = pending_page(signed_in, odd_evaluation).content.decode()
    found = re.findall(r'<a class="workload-link" href="([^"]+)">([^<]+)</a>', content)
    links = {html.unescape(text): html.unescape(href) for href, text in found}
    for workload in ODD_WORKLOADS:
        page = signed_in.get(links[workload])
        assert page.status_code == 200, (workload, links[workload])
        assert f": {html.escape(workload)}</h1>" in page.content.decode()
