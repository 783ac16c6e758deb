"""The Kubernetes API client as the kube source uses it: how it is made (no urllib3
retries, a pool sized to the watched kinds, the bearer token trimmed as client-go trims
it), its backoff, and how an API error is said (``topology.ingest.kubesource`` reads
through these).

Not pure (network), free of Django.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass, field
from typing import Any

from kubernetes import client, config
from kubernetes.client.exceptions import ApiException

from topology.ingest.kubekinds import DEFAULT_KINDS, WatchedKind

# Idle connections kept per host beyond one per watched kind: every kind's list or watch
# runs at once, each on its own connection; a smaller pool discards and reopens
# connections (a TLS handshake each) on every read.
POOL_HEADROOM = 4


@dataclass
class Backoff:
    """Exponential backoff with full jitter: attempt n waits uniform(0, min(cap, base·2ⁿ)).

    ``random`` is passed in so tests and replays are deterministic.
    """

    base_seconds: float = 0.5
    cap_seconds: float = 30.0
    max_attempts: int = 6
    random: random.Random = field(default_factory=random.Random)

    def bound(self, attempt: int) -> float:
        return float(min(self.cap_seconds, self.base_seconds * 2 ** max(attempt - 1, 0)))

    def delay(self, attempt: int) -> float:
        return self.random.uniform(0.0, self.bound(attempt))


def api_client_from(
    *,
    kubeconfig: str | None = None,
    context: str | None = None,
    in_cluster: bool = False,
    concurrent_requests: int = len(DEFAULT_KINDS),
) -> client.ApiClient:
    """An ApiClient from a kubeconfig (or the pod's service account), without urllib3 retries:
    the source's own backoff is the only retry policy, so its bounds hold.

    Its connection pool holds ``concurrent_requests`` (one per watched kind) plus
    ``POOL_HEADROOM`` connections; the client's default is 5 per CPU. The bearer token
    is trimmed of surrounding whitespace as client-go trims a token file
    (``transport/token_source.go``, ``fileTokenSource.Token``: ``strings.TrimSpace``).
    """
    configuration = client.Configuration()
    if in_cluster:
        config.load_incluster_config(client_configuration=configuration)
    else:
        config.load_kube_config(
            config_file=kubeconfig, context=context, client_configuration=configuration
        )
    configuration.retries = 0
    configuration.connection_pool_maxsize = concurrent_requests + POOL_HEADROOM
    _trim_bearer_token(configuration)
    return client.ApiClient(configuration)


def _trim_bearer_token(configuration: client.Configuration) -> None:
    """Trim the token now and after every refresh: the kubeconfig loader's refresh hook
    (run before each request) sets the token again from the file, newline included, and
    installs itself anew, so the hook it installs is the one wrapped next time."""
    hooks = [configuration.refresh_api_key_hook]

    def trimmed(target: client.Configuration) -> None:
        if hooks[0] is not None:
            hooks[0](target)
            if target.refresh_api_key_hook is not trimmed:
                hooks[0] = target.refresh_api_key_hook
                target.refresh_api_key_hook = trimmed
        for key, value in list(target.api_key.items()):
            if isinstance(value, str):
                target.api_key[key] = value.strip()

    trimmed(configuration)
    configuration.refresh_api_key_hook = trimmed  # type: ignore[assignment]  # typed None upstream


def status_body(error: ApiException) -> dict[str, Any]:
    """The ``Status`` object an API error carries, or {}."""
    try:
        body = json.loads(error.body or "{}")
    except (ValueError, TypeError):
        return {}
    return body if isinstance(body, dict) else {}


def forbidden_reason(kind: WatchedKind, error: ApiException) -> str:
    message = str(status_body(error).get("message") or error.reason)
    return f"{message}; read as none until the role allows it: add {kind.rbac_rule()}"


def api_reason(error: ApiException) -> str:
    """``HTTP 429 Too Many Requests: storage is (re)initializing``: the status and the
    server's own message."""
    message = status_body(error).get("message")
    said = f"HTTP {error.status} {error.reason}"
    return f"{said}: {message}" if message else said


def retry_after(error: ApiException) -> float:
    """The wait a 429 asks for (``details.retryAfterSeconds``, else ``Retry-After``)."""
    details = status_body(error).get("details") or {}
    headers = error.headers or {}
    try:
        return float(details.get("retryAfterSeconds") or headers.get("Retry-After") or 0)
    except (TypeError, ValueError):
        return 0.0


def network_reason(error: Exception) -> str:
    """A connection error named by its cause (urllib3 wraps it in ``MaxRetryError``),
    without the connection object's address, so the same error reads the same."""
    cause = getattr(error, "reason", None)
    cause = cause if isinstance(cause, Exception) else error
    text = re.sub(r"<[^>]*? object at 0x[0-9a-f]+>: ", "", str(cause))
    return f"{type(cause).__name__}: {text}"


def attempts_said(failures: list[str]) -> str:
    """Each failure as it was, runs of the same one counted, then the attempts:
    ``410 Gone (…), then NewConnectionError: … ×5 (6 attempts)``."""
    runs: list[tuple[str, int]] = []
    for failure in failures:
        if runs and runs[-1][0] == failure:
            runs[-1] = (failure, runs[-1][1] + 1)
        else:
            runs.append((failure, 1))
    said = ", then ".join(f"{f} ×{n}" if n > 1 else f for f, n in runs)
    return f"{said} ({len(failures)} attempts)"
