"""Project-level tasks: a trivial ping that proves a worker consumes the broker."""

from celery import shared_task


@shared_task(name="capacityweb.tasks.ping")
def ping() -> str:
    """Answer "pong"; readiness checks and tests use it to prove a worker is consuming."""
    return "pong"
