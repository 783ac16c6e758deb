"""Liveness and readiness probes (JSON), for load balancers and orchestrators.

/health/live answers as long as the process serves requests. /health/ready
checks what a request needs: a database query, a broker connection and a
channel layer round trip; ``?deep=1`` also runs the ``ping`` task through a
worker. Each check reports ``ok`` or the error text, so a 503 names its cause.
"""

import uuid
from collections.abc import Callable

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.conf import settings
from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache

from capacityweb.celery import app as celery_app

CHECK_TIMEOUT_SECONDS = 3.0


@never_cache
def live(request: HttpRequest) -> JsonResponse:
    """Always 200: the process is up and routing requests."""
    return JsonResponse({"status": "ok"})


def check_database() -> None:
    """Run a trivial query on the default database."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        cursor.fetchone()


def check_broker() -> None:
    """Connect to the broker named by settings now (not the one cached at startup)."""
    with celery_app.connection_for_write(settings.CELERY_BROKER_URL) as broker:
        broker.ensure_connection(max_retries=1, timeout=CHECK_TIMEOUT_SECONDS)


def check_channel_layer() -> None:
    """Send a message to a fresh channel and receive it back."""
    async_to_sync(_channel_layer_roundtrip)()


async def _channel_layer_roundtrip() -> None:
    import asyncio

    layer = get_channel_layer()
    if layer is None:
        raise RuntimeError("no channel layer configured")
    channel_name = await layer.new_channel()
    token = uuid.uuid4().hex
    await layer.send(channel_name, {"type": "health.ping", "token": token})
    message = await asyncio.wait_for(layer.receive(channel_name), CHECK_TIMEOUT_SECONDS)
    if message.get("token") != token:
        raise RuntimeError("channel layer returned a different message")


def check_worker() -> None:
    """Run the ping task through the broker and wait for a worker's answer."""
    from capacityweb.tasks import ping

    answer = ping.delay().get(timeout=CHECK_TIMEOUT_SECONDS)
    if answer != "pong":
        raise RuntimeError(f"worker answered {answer!r}")


READINESS_CHECKS: dict[str, Callable[[], None]] = {
    "database": check_database,
    "broker": check_broker,
    "channel_layer": check_channel_layer,
}


def run_checks(checks: dict[str, Callable[[], None]]) -> dict[str, str]:
    """Run each check, mapping its name to "ok" or "error: <reason>"."""
    results = {}
    for name, check in checks.items():
        try:
            check()
            results[name] = "ok"
        except Exception as error:  # noqa: BLE001 - a probe reports every failure
            results[name] = f"error: {type(error).__name__}: {error}"
    return results


@never_cache
def ready(request: HttpRequest) -> JsonResponse:
    """200 when every check passes, else 503 with each check's result."""
    checks = dict(READINESS_CHECKS)
    if request.GET.get("deep") == "1":
        checks["worker"] = check_worker
    results = run_checks(checks)
    healthy = all(result == "ok" for result in results.values())
    body = {"status": "ok" if healthy else "unavailable", "checks": results}
    return JsonResponse(body, status=200 if healthy else 503)
