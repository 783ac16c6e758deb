"""The Prometheus HTTP API, as far as utilisation needs it: one range query.

``GET <url>/api/v1/query_range?query=&start=&end=&step=&timeout=`` (Prometheus docs,
"HTTP API › Range queries"): the answer is ``{"status": "success", "data":
{"resultType": "matrix", "result": [...]}}`` or ``{"status": "error", "errorType",
"error"}`` with a 4xx/5xx status. urllib3 (already a dependency): a bearer token,
TLS verification on or off, one timeout for connect + read.

Every failure is one ``PrometheusError`` whose text names the server and the query,
so the stored report says why utilisation is unknown. It never repeats the answer's
body (nor Prometheus's own ``error`` text): what a server answers is not ours to
store, and the URL may point anywhere on an internal network. A Prometheus error
is named by its ``errorType`` when it is one Prometheus defines.
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
    basic_auth: tuple[str, str] | None = None  # (user, password)
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
    elif endpoint.basic_auth is not None:
        basic = urllib3.util.make_headers(basic_auth=":".join(endpoint.basic_auth))
        headers["Authorization"] = basic["authorization"]
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
        # the body is not repeated, and of the server's own words only a short type
        kind = response.headers.get("Content-Type", "no content type")[:60]
        raise PrometheusError(
            f"{where}: {query}: HTTP {response.status}, not JSON ({kind})"
        ) from error
    if (
        response.status != 200
        or not isinstance(payload, dict)
        or payload.get("status") != "success"
    ):
        raise PrometheusError(f"{where}: {query}: HTTP {response.status}, {_answer_kind(payload)}")
    return dict(payload)


# the errorType values of the Prometheus HTTP API (web/api/v1/api.go, errorType consts)
ERROR_TYPES = frozenset(
    {
        "timeout",
        "canceled",
        "execution",
        "bad_data",
        "internal",
        "unavailable",
        "not_found",
        "not_acceptable",
    }
)


def _answer_kind(payload: Any) -> str:
    """What the answer was, in words of ours: its body is never repeated."""
    if isinstance(payload, dict) and payload.get("status") == "error":
        kind = payload.get("errorType")
        return f"Prometheus error {kind}" if kind in ERROR_TYPES else "Prometheus error"
    return "not a Prometheus answer"
