"""Beat-driven digest tasks. Thin: find what is due, send each through reservations.digest.

``send_due_digests`` runs every 15 minutes (a django-celery-beat PeriodicTask
made by migration ``reservations.0002_digest_schedule``) and enqueues one
``send_digest`` per subscription whose latest period has no delivery yet, and one
``send_webhook`` per subscription with a webhook whose period has no post yet.
Running it twice, or redelivering ``send_digest`` after a worker died, sends
nothing twice: the delivery claim in ``reservations.digest.send_digest`` decides.

``measure_utilisation`` (every 15 minutes, migration ``0006_utilisation_schedule``)
measures allocated-but-idle GPUs of each cluster with a Prometheus source.
"""

import logging
from datetime import UTC, datetime

from celery import shared_task
from django.conf import settings

from reservations import checks, digest, webhook
from reservations.models import PrometheusSource
from reservations.utilisation import services as utilisation_services
from topology.models import Cluster

SEND_DUE_DIGESTS_TASK = "reservations.tasks.send_due_digests"
logger = logging.getLogger(__name__)


@shared_task(name=SEND_DUE_DIGESTS_TASK)
def send_due_digests() -> int:
    """Enqueue the digest email and webhook post of every subscription that is due;
    returns how many."""
    now = datetime.now(UTC)
    due = digest.due_subscriptions(now=now)
    for subscription_id, period_start in due:
        send_digest.delay(subscription_id, period_start.isoformat())
    hooks = webhook.due_webhooks(now=now)
    for subscription_id, period_start in hooks:
        send_webhook.delay(subscription_id, period_start.isoformat())
    if (due or hooks) and checks.links_are_paths():
        logger.warning("%s %s", checks.RELATIVE_LINKS, checks.RELATIVE_LINKS_HINT)
    return len(due) + len(hooks)


@shared_task(name="reservations.tasks.send_digest")
def send_digest(subscription_id: int, period_start: str) -> str:
    """Send one subscription's digest for the period starting at ``period_start`` (ISO 8601)."""
    outcome = digest.send_digest(
        subscription_id=subscription_id, period_start=datetime.fromisoformat(period_start)
    )
    return outcome.status


@shared_task(name="reservations.tasks.send_webhook")
def send_webhook(subscription_id: int, period_start: str) -> str:
    """Post one subscription's digest to its webhook for the period at ``period_start``."""
    outcome = webhook.send_webhook(
        subscription_id=subscription_id, period_start=datetime.fromisoformat(period_start)
    )
    return outcome.status


@shared_task(name="reservations.tasks.measure_utilisation")
def measure_utilisation() -> int:
    """Enqueue one measurement per cluster with an enabled Prometheus source (beat: 15 min),
    and delete reports older than SNAPSHOT_RETENTION_DAYS."""
    cluster_ids = list(
        PrometheusSource.objects.filter(enabled=True, cluster__enabled=True).values_list(
            "cluster_id", flat=True
        )
    )
    for cluster_id in cluster_ids:
        measure_cluster_utilisation.delay(cluster_id)
    utilisation_services.delete_old_reports(
        now=datetime.now(UTC), retention_days=settings.SNAPSHOT_RETENTION_DAYS
    )
    return len(cluster_ids)


@shared_task(name="reservations.tasks.measure_cluster_utilisation")
def measure_cluster_utilisation(cluster_id: int) -> int | None:
    """Measure the cluster's next window; the stored report's id, or None (nothing to do)."""
    cluster = Cluster.objects.filter(pk=cluster_id).first()
    if cluster is None:
        return None
    report = utilisation_services.measure_cluster(cluster=cluster, now=datetime.now(UTC))
    return report.pk if report is not None else None
