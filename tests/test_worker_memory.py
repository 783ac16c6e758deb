"""Issue 27 item 6: an idle `make run` keeps a bounded footprint.

The leak found (bench/idle_rss.py): with DEBUG on, Django logs each query's SQL in
the connection until a request starts, and the embedded worker's thread never
starts one; a demo ingest and evaluation logged 41 queries and 11.6 MB of SQL (the
snapshot's JSON in its INSERT), kept up to 9,000 queries deep. Tasks now leave no
logged query behind.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection

from tests.web.fixtures import TAKEN_AT, make_cluster, scenario_objects


@pytest.mark.django_db
def test_it_leaves_no_logged_query_after_a_task_with_debug_on(settings: Any) -> None:
    from recommender.tasks import evaluate_snapshot
    from topology import services

    settings.DEBUG = True
    objects = scenario_objects("reservation-idle-nodes")
    snapshot = services.ingest_snapshot(cluster=make_cluster(), taken_at=TAKEN_AT, objects=objects)
    assert evaluate_snapshot.apply(args=[snapshot.pk]).successful()
    assert list(connection.queries_log) == []
