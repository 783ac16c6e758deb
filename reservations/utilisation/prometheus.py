"""The Prometheus HTTP API, as far as utilisation needs it: one range query.

``GET <url>/api/v1/query_range?query=&start=&end=&step=&timeout=`` (Prometheus docs,
"HTTP API › Range queries"): the answer is ``{"status": "success", "data":
{"resultType": "matrix", "result": [...]}}`` or ``{"status": "error", "errorType",
"error"}`` with a 4xx/5xx status. urllib3 (already a dependency): a bearer token,
TLS verification on or off, one timeout for connect + read.

Every failure is one ``PrometheusError`` whose text names the server and the query,
so the stored report says why utilisation is unknown.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import urllib3

USER_AGENT = "capacityweb-utilisation"


class PrometheusError(Exception):
    """The server could not be asked, or did not answer a range query."""


@dataclass(frozen=True, slots=True)
class PrometheusEndpoint:
    url: str
    bearer_token: str = ""
    verify_tls: bool = True
    timeout_seconds: float = 30.0


def query_range(
    endpoint: PrometheusEndpoint, query: str, *, start: datetime, end: datetime, step: float
) -> dict[str, Any]:
    """The decoded JSON answer of one range query (``status`` success, else an error)."""
    pool = urllib3.PoolManager(
        cert_reqs="CERT_REQUIRED" if endpoint.verify_tls else "CERT_NONE",
        timeout=urllib3.Timeout(total=endpoint.timeout_seconds),
        retries=False,
    )
    headers = {"User-Agent": USER_AGENT, "Accept": "application/json"}
    if endpoint.bearer_token:
        headers["Authorization"] = f"Bearer {endpoint.bearer_token}"
    fields = {
        "query": query,
        "start": f"{start.timestamp():.3f}",
        "end": f"{end.timestamp():.3f}",
        "step": f"{step:g}",
        "timeout": f"{endpoint.timeout_seconds:g}s",
    }
    where = f"{endpoint.url.rstrip('/')}/api/v1/query_range"
    try:
        response = pool.request("GET", where, fields=fields, headers=headers)
    except urllib3.exceptions.HTTPError as error:
        raise PrometheusError(f"{where}: {query}: {error}") from error
    try:
        payload = json.loads(response.data)
    except ValueError as error:
        # the body is not repeated: the error is shown on pages every user reads
        kind = response.headers.get("Content-Type", "no content type")
        raise PrometheusError(
            f"{where}: {query}: HTTP {response.status}, not JSON ({kind})"
        ) from error
    if response.status != 200 or payload.get("status") != "success":
        reason = payload.get("error") if isinstance(payload, dict) else None
        raise PrometheusError(f"{where}: {query}: HTTP {response.status}: {reason or payload}")
    return dict(payload)
