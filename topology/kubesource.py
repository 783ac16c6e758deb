"""The Kubernetes API as a snapshot source: list, then watch, every kind of
``topology.kubekinds``.

::

    KubeSource    list ─► store (uid → object) ─► watch from resourceVersion ─┐
                   ▲        ADDED/MODIFIED/DELETED update the store, BOOKMARK  │
                   └── 410 Gone: relist ◄── errors: bounded backoff + jitter ◄─┘

Read-only: only list and watch requests. Not pure (network, threads), but free of
Django so the benchmark and tests can drive it directly.
"""

from __future__ import annotations

import json
import random
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import urllib3
from kubernetes import client, config, watch
from kubernetes.client.exceptions import ApiException

from topology.kubekinds import DEFAULT_KINDS, WatchedKind
from topology.sourceread import KubeObject, SourcedObject, SourceError, SourceRead


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
        return min(self.cap_seconds, self.base_seconds * 2 ** max(attempt - 1, 0))

    def delay(self, attempt: int) -> float:
        return self.random.uniform(0.0, self.bound(attempt))


def api_client_from(
    *, kubeconfig: str | None = None, context: str | None = None, in_cluster: bool = False
) -> client.ApiClient:
    """An ApiClient from a kubeconfig (or the pod's service account), without urllib3 retries:
    the source's own backoff is the only retry policy, so its bounds hold."""
    configuration = client.Configuration()
    if in_cluster:
        config.load_incluster_config(client_configuration=configuration)
    else:
        config.load_kube_config(
            config_file=kubeconfig, context=context, client_configuration=configuration
        )
    configuration.retries = 0
    return client.ApiClient(configuration)


@dataclass
class KubeStats:
    lists: int = 0
    relists_after_gone: int = 0
    watch_events: int = 0
    bookmarks: int = 0
    errors: int = 0
    retry_delays_seconds: list[float] = field(default_factory=list)


class KubeSource:
    """List then watch each kind, keeping objects in memory keyed by uid.

    ``sync(watch_seconds=N)`` lists kinds it has no resourceVersion for, then
    watches every kind for up to N seconds (server-side ``timeoutSeconds``),
    all kinds in parallel. Called again it resumes from the last
    resourceVersion (advanced by events and BOOKMARKs); a 410 Gone relists.
    A custom resource not served at one version (404) is tried at the next; a kind
    served at none is left out, not retried, and named in ``unavailable`` (by
    ``WatchedKind.key``), which every read reports.
    """

    def __init__(
        self,
        api_client: client.ApiClient,
        *,
        kinds: Iterable[WatchedKind] = DEFAULT_KINDS,
        request_timeout_seconds: float = 30.0,
        list_page_size: int = 500,
        backoff: Backoff | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.api_client = api_client
        self.kinds = tuple(kinds)
        self.request_timeout_seconds = request_timeout_seconds
        self.list_page_size = list_page_size
        self.backoff = backoff or Backoff()
        self.sleep = sleep
        self.stores: dict[str, dict[str, KubeObject]] = {}
        self.resource_versions: dict[str, str] = {}
        self.unavailable: set[str] = set()
        self.version_index: dict[str, int] = {}  # key → which of the kind's versions
        self.stats = KubeStats()
        self._lock = threading.Lock()

    # reads

    def read(self, now: datetime, *, watch_seconds: int = 1) -> SourceRead:
        self.sync(watch_seconds=watch_seconds)
        return SourceRead(objects=self.objects(), unavailable=tuple(sorted(self.unavailable)))

    def objects(self) -> list[SourcedObject]:
        """Every stored object, ordered by kind then namespace/name (stable input for hashing)."""
        with self._lock:
            items = [
                (f"kube:{key}", obj) for key, store in self.stores.items() for obj in store.values()
            ]
        return sorted(items, key=lambda item: (item[0], *_namespaced_name(item[1])))

    def version(self, kind: WatchedKind) -> str:
        """The version the kind is read at: the first its server answered a list for."""
        return kind.versions[self.version_index.get(kind.key, 0)]

    # list + watch

    def sync(self, *, watch_seconds: int) -> None:
        kinds = [k for k in self.kinds if k.key not in self.unavailable]
        if len(kinds) <= 1:
            for kind in kinds:
                self.catch_up(kind, watch_seconds=watch_seconds)
            return
        with ThreadPoolExecutor(max_workers=len(kinds), thread_name_prefix="kube-watch") as pool:
            futures = [pool.submit(self.catch_up, k, watch_seconds=watch_seconds) for k in kinds]
            for future in futures:
                future.result()

    def catch_up(self, kind: WatchedKind, *, watch_seconds: int) -> None:
        """List if needed, then one watch; retry errors with backoff, relist on 410."""
        attempt = 0
        while True:
            try:
                if kind.key not in self.resource_versions:
                    self.relist(kind)
                self.watch(kind, watch_seconds=watch_seconds)
                return
            except ApiException as error:
                if error.status == 404:
                    with self._lock:
                        self.stores.pop(kind.key, None)
                    self.resource_versions.pop(kind.key, None)
                    index = self.version_index.get(kind.key, 0) + 1
                    if index < len(kind.versions):  # not served at this version: the next
                        self.version_index[kind.key] = index
                        continue
                    self.unavailable.add(kind.key)
                    return
                if error.status == 410:
                    # Expected when the watch falls behind: relist at once, no backoff.
                    self.stats.relists_after_gone += 1
                    self.resource_versions.pop(kind.key, None)
                    attempt += 1
                    if attempt >= self.backoff.max_attempts:
                        raise SourceError(f"{kind.key}: 410 Gone on every relist") from error
                    continue
                reason = f"HTTP {error.status} {error.reason}"
            except (urllib3.exceptions.HTTPError, OSError) as error:
                reason = f"{type(error).__name__}: {error}"
            self.stats.errors += 1
            attempt += 1
            if attempt >= self.backoff.max_attempts:
                raise SourceError(f"{kind.key}: gave up after {attempt} attempts: {reason}")
            delay = self.backoff.delay(attempt)
            self.stats.retry_delays_seconds.append(delay)
            self.sleep(delay)

    def relist(self, kind: WatchedKind) -> None:
        """A full paginated list: the kind's store is replaced, so nothing is lost or doubled."""
        version = self.version(kind)
        list_call = kind.list_call(self.api_client, version)
        items: dict[str, KubeObject] = {}
        continue_token: str | None = None
        while True:
            arguments: dict[str, Any] = {"limit": self.list_page_size}
            if continue_token:
                arguments["_continue"] = continue_token
            response = list_call(
                **arguments,
                timeout_seconds=int(self.request_timeout_seconds),
                _request_timeout=self.request_timeout_seconds,
                _preload_content=False,
            )
            body = json.loads(response.data)
            for obj in body.get("items") or []:
                obj.setdefault("kind", kind.kind)
                obj.setdefault("apiVersion", kind.api_version(version))
                items[_uid(obj)] = obj
            metadata = body.get("metadata") or {}
            continue_token = metadata.get("continue")
            if not continue_token:
                break
        self.stats.lists += 1
        with self._lock:
            self.stores[kind.key] = items
            self.resource_versions[kind.key] = str(metadata.get("resourceVersion") or "")

    def watch(self, kind: WatchedKind, *, watch_seconds: int) -> int:
        """One watch from the stored resourceVersion until the server ends it; events applied."""
        watcher = watch.Watch(return_type="object")
        events = 0
        version = self.version(kind)
        store = self.stores.setdefault(kind.key, {})
        stream = watcher.stream(
            kind.list_call(self.api_client, version),
            resource_version=self.resource_versions[kind.key],
            allow_watch_bookmarks=True,
            timeout_seconds=watch_seconds,
            _request_timeout=(
                self.request_timeout_seconds,
                watch_seconds + self.request_timeout_seconds,
            ),
        )
        for event in stream:
            event_type = event["type"]
            obj = event["raw_object"]
            if event_type == "BOOKMARK":
                self.stats.bookmarks += 1
            else:
                obj.setdefault("kind", kind.kind)
                obj.setdefault("apiVersion", kind.api_version(version))
                with self._lock:
                    if event_type == "DELETED":
                        store.pop(_uid(obj), None)
                    else:
                        store[_uid(obj)] = obj
                events += 1
            if watcher.resource_version:
                self.resource_versions[kind.key] = str(watcher.resource_version)
        self.stats.watch_events += events
        return events


def _uid(obj: Mapping[str, Any]) -> str:
    metadata = obj.get("metadata") or {}
    uid = metadata.get("uid")
    if uid:
        return str(uid)
    namespace, name = _namespaced_name(obj)
    return f"{namespace}/{name}"


def _namespaced_name(obj: Mapping[str, Any]) -> tuple[str, str]:
    metadata = obj.get("metadata") or {}
    return str(metadata.get("namespace") or ""), str(metadata.get("name") or "")
