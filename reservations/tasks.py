"""Beat-driven digest tasks. Thin: find what is due, send each through reservations.digest.

``send_due_digests`` runs every 15 minutes (a django-celery-beat PeriodicTask
made by migration ``reservations.0002_digest_schedule``) and enqueues one
``send_digest`` per subscription whose latest period has no delivery yet, and one
``send_webhook`` per subscription with a webhook whose period has no post yet.
Running it twice, or redelivering ``send_digest`` after a worker died, sends
nothing twice: the delivery claim in ``reservations.digest.send_digest`` decides.
"""

from datetime import UTC, datetime

from celery import shared_task

from reservations import digest, webhook

SEND_DUE_DIGESTS_TASK = "reservations.tasks.send_due_digests"


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
