"""The Kubernetes API as a snapshot source: list, then watch, every kind of
``topology.ingest.kubekinds``.

::

    KubeSource    list ─► store (uid → slim JSON) ─► watch from resourceVersion ─┐
                   ▲        ADDED/MODIFIED/DELETED update the store, BOOKMARK     │
                   └── 410 Gone: relist ◄── errors: bounded backoff + jitter ◄────┘

Each kind has a status (``KindStatus``), as an informer's reflector keeps going per
resource: *served*; *not served* (404 at every version: the CRD is not installed) and
*forbidden* (403: the role lacks the rule, which the status names) are read as none,
never retried within a read, and looked at again every ``recheck_every_passes`` reads
(a role re-applied later is picked up); a kind not served is read on the very next pass
once API discovery lists it (a CRD installed while the source runs: ``discovered``, one
request for ``/apis`` per pass while some kind is not served, and one per group-version
of theirs that the server serves); *failing* (connection errors, 5xx, 429, after the
read's bounded retries) keeps the kind's last state. A 403 on a kind read before is
transient until it has gone on for ``forbidden_after_seconds``: kube-apiserver answers
403 to everything for 1–2 s after it starts, before its RBAC caches are loaded, and
client-go's reflector never takes a 403 for final either (``tools/cache/reflector.go``:
every list error is backed off and retried). A 429 ("storage is (re)initializing": a
CRD's storage starting) is retried after the ``retryAfterSeconds`` it asks for, as the
reflector does (``IsTooManyRequests``: back off, watch again), and never counted as an
error. A read whose kinds all fail, where a kind never read yet fails, or where a
required kind (Nodes, Pods) is not freshly read (failing, reconnecting, forbidden, not
served), raises: nothing half-read or stale is stored, the stores and resourceVersions
stay, and the next read resumes from them.

Between reads the watches can be kept open (``topology.ingest.kubewatch``: ``keep_watching``):
a read then syncs only the kinds no watch covers, and ``wait_for_change`` returns as soon
as an event changed the store. Open watches say nothing of new requests: an API server
shutting down refuses new connections while its open watches go on for a minute or more.
So while watches are kept, every read and every ``probe_every_seconds`` of a wait ask
``/version`` (readable by every user: ``system:public-info-viewer``); no answer makes
the read ``SourceUnreachable`` at once.

Each object is kept less what no parse reads (``topology.ingest.kubeslim``: managedFields,
containers' environment and probes, container statuses). Read-only: only list and
watch requests. Not pure (network, threads), but free of
Django so the benchmark and tests can drive it directly.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any, Protocol

import urllib3
from kubernetes import client, watch
from kubernetes.client.exceptions import ApiException

from topology.ingest.kubeapi import (
    Backoff,
    api_reason,
    attempts_said,
    forbidden_reason,
    network_reason,
    retry_after,
)
from topology.ingest.kubekinds import DEFAULT_KINDS, WatchedKind
from topology.ingest.kubeslim import slimmed
from topology.ingest.kubestore import Stored, StoredObjects, object_uid, pack
from topology.ingest.sourceread import (
    KubeObject,
    SourceError,
    SourceRead,
    SourceUnreachable,
)


class Watchers(Protocol):
    """The watches kept open between reads (``topology.ingest.kubewatch.Watchers``,
    which imports this module)."""

    def ensure(self) -> None: ...

    def stop(self) -> None: ...


# Generations of every source in the process: a store that changed takes the next one,
# so two reads hold the same generation only if nothing changed in between.
_GENERATIONS = itertools.count(1)


class KindState(StrEnum):
    SERVED = "served"
    NOT_SERVED = "not served"
    FORBIDDEN = "forbidden"
    FAILING = "failing"


@dataclass(frozen=True)
class KindStatus:
    """What the last read of one kind found; ``reason`` says why when not served."""

    state: KindState
    version: str = ""
    reason: str = ""

    def as_dict(self) -> dict[str, str]:
        return {"state": self.state.value, "version": self.version, "reason": self.reason}


# How long a kind read before must go on answering 403 to be read as forbidden: well past
# the 1–2 s kube-apiserver answers 403 to everything after it starts (issue 45).
FORBIDDEN_AFTER_SECONDS = 10.0
# While watches are kept open, how often a wait asks whether the API server still
# answers new requests.
PROBE_EVERY_SECONDS = 5.0


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
    served at none is left out and named in ``unavailable`` (by ``WatchedKind.key``),
    a kind the role may not list (403) likewise in ``forbidden``; both are asked again
    every ``recheck_every_passes`` syncs. ``status`` holds every kind's ``KindStatus``.
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
        recheck_every_passes: int = 5,
        forbidden_after_seconds: float = FORBIDDEN_AFTER_SECONDS,
        probe_every_seconds: float = PROBE_EVERY_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.api_client = api_client
        self.kinds = tuple(kinds)
        self.request_timeout_seconds = request_timeout_seconds
        self.list_page_size = list_page_size
        self.backoff = backoff or Backoff()
        self.sleep = sleep
        self.recheck_every_passes = recheck_every_passes
        self.forbidden_after_seconds = forbidden_after_seconds
        self.probe_every_seconds = probe_every_seconds
        self.clock = clock
        # kind key → when it first answered 403 since it was last served (``catch_up``)
        self.denied_since: dict[str, float] = {}
        # kinds whose last request failed and whose next has not succeeded yet: their
        # store may lag the cluster (a watch thread between retries)
        self.reconnecting: dict[str, str] = {}
        self.ever_read: set[str] = set()  # kinds read at least once (as none included)
        # kind key → uid → the object as compact JSON (``Stored``): a fifth of the memory
        # the same objects take as dicts; decoded one at a time as a read parses them
        self.stores: dict[str, dict[str, Stored]] = {}
        self.resource_versions: dict[str, str] = {}
        self.status: dict[str, KindStatus] = {}
        self.passes = 0
        self.generation = 0  # see SourceRead.generation
        self.version_index: dict[str, int] = {}  # key → which of the kind's versions
        self.stats = KubeStats()
        self.appeared: set[str] = set()  # not-served kinds discovery lists now (this pass)
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)  # notified when generation moves
        self.read_generation = 0  # the generation of the objects the last read returned
        self.watched: set[str] = set()  # kinds a kept-open watch covers (topology.ingest.kubewatch)
        self.watchers: Watchers | None = None

    # reads

    def read(self, now: datetime, *, watch_seconds: int = 1) -> SourceRead:
        self.sync(watch_seconds=watch_seconds)
        if self.watchers is not None:
            self.watchers.ensure()
        objects = self.objects()
        return SourceRead(
            objects=objects,
            unavailable=tuple(sorted(self.unavailable)),
            kinds=self.kind_report(),
            generation=self.read_generation,
            counts=objects.counts(),
        )

    def keep_watching(self, watchers: Watchers) -> None:
        """From the next read on, ``watchers`` keep each served kind's watch open."""
        if self.watchers is None:
            self.watchers = watchers

    def stop_watching(self) -> None:
        if self.watchers is not None:
            self.watchers.stop()

    def wait_for_change(self, timeout_seconds: float) -> bool:
        """Block until the store holds a change the last read did not return (True), or
        ``timeout_seconds`` pass (False). Without kept-open watches nothing changes
        between reads: it waits the whole timeout. With them, the API server is asked
        every ``probe_every_seconds`` whether it still answers: no answer is news too
        (True: the next read says the source is unreachable, at once)."""
        deadline = self.clock() + timeout_seconds
        while True:
            left = deadline - self.clock()
            step = min(left, self.probe_every_seconds) if self.watched else left
            with self._changed:
                if self._changed.wait_for(
                    lambda: self.generation != self.read_generation, max(step, 0.0)
                ):
                    return True
            if self.watched and self.not_answering():
                return True
            if self.clock() >= deadline:
                return False

    def not_answering(self) -> str:
        """Why the API server does not answer a new request (``/version``), or "": any
        HTTP answer, an error status included, is an answer."""
        try:
            self._discovery("/version")
        except (urllib3.exceptions.HTTPError, OSError) as error:
            return network_reason(error)
        except (ApiException, ValueError):
            pass
        return ""

    @property
    def unavailable(self) -> set[str]:
        """Kinds the cluster serves at none of their versions (read as none)."""
        return self._keys_in(KindState.NOT_SERVED)

    @property
    def forbidden(self) -> set[str]:
        """Kinds the role may not list (read as none; ``status`` names the rule to add)."""
        return self._keys_in(KindState.FORBIDDEN)

    def _keys_in(self, state: KindState) -> set[str]:
        return {key for key, status in self.status.items() if status.state is state}

    def kind_report(self) -> dict[str, dict[str, str]]:
        return {key: self.status[key].as_dict() for key in sorted(self.status)}

    def objects(self) -> StoredObjects:
        """Every stored object, ordered by kind then namespace/name (stable input for
        hashing), decoded as it is read; ``read_generation`` becomes the generation they
        are at (taken under the same lock, as watches may apply events meanwhile)."""
        with self._lock:
            items = [
                (f"kube:{key}", stored)
                for key, store in self.stores.items()
                for stored in store.values()
            ]
            self.read_generation = self.generation
        items.sort(key=lambda item: (item[0], item[1][0], item[1][1]))
        return StoredObjects(items)

    def store(self, key: str) -> dict[str, KubeObject]:
        """One kind's objects by uid, decoded (what the API server holds, less
        ``topology.ingest.kubeslim``'s fields)."""
        with self._lock:
            stored = dict(self.stores.get(key) or {})
        return {uid: json.loads(packed[2]) for uid, packed in stored.items()}

    def version(self, kind: WatchedKind) -> str:
        """The version the kind is read at: the first its server answered a list for."""
        return kind.versions[self.version_index.get(kind.key, 0)]

    # list + watch

    def sync(self, *, watch_seconds: int) -> None:
        """One pass over the kinds due (``due``); raises ``SourceUnreachable`` or
        ``SourceError`` when what it read cannot stand for the cluster."""
        self.passes += 1
        if self.watched and (reason := self.not_answering()):
            raise SourceUnreachable(
                f"the API server does not answer new requests ({reason}), whatever its "
                f"{len(self.watched)} open watches still deliver; what was read before is kept",
                self.kind_report(),
            )
        self.appeared = self.discovered()
        kinds = [k for k in self.kinds if self.due(k)]
        unwatched = [k for k in kinds if k.key not in self.watched]
        if len(unwatched) <= 1:
            for kind in unwatched:
                self.catch_up(kind, watch_seconds=watch_seconds)
        else:
            with ThreadPoolExecutor(
                max_workers=len(unwatched), thread_name_prefix="kube-sync"
            ) as pool:
                futures = [
                    pool.submit(self.catch_up, k, watch_seconds=watch_seconds) for k in unwatched
                ]
                for future in futures:
                    future.result()
        self.check_readable()

    def due(self, kind: WatchedKind) -> bool:
        """Served, failing, new and required kinds every pass; a kind not served once
        discovery lists it; the others every few passes."""
        status = self.status.get(kind.key)
        if status is None or status.state in (KindState.SERVED, KindState.FAILING):
            return True
        if kind.required:
            self.version_index.pop(kind.key, None)
            return True
        if kind.key not in self.appeared and self.passes % self.recheck_every_passes:
            return False
        self.version_index.pop(kind.key, None)  # a newer version may be served now
        return True

    def discovered(self) -> set[str]:
        """Kinds not served at their last read that API discovery lists now, at one of
        their versions (kube-apiserver's ``/apis`` group list, then the resource list of
        each such group-version: what ``kubectl api-resources`` reads). Discovery
        answering badly changes nothing: the every-few-passes recheck still holds."""
        waiting = [
            k
            for k in self.kinds
            if k.group and k.key in self.status and self.status[k.key].state is KindState.NOT_SERVED
        ]
        if not waiting:
            return set()
        try:
            served = self._group_versions()
            resources: dict[tuple[str, str], set[str]] = {}
            found = set()
            for kind in waiting:
                for version in (v for v in kind.versions if v in served.get(kind.group, ())):
                    if (kind.group, version) not in resources:
                        resources[(kind.group, version)] = self._resources(kind.group, version)
                    if kind.plural in resources[(kind.group, version)]:
                        found.add(kind.key)
                        break
            return found
        except (ApiException, urllib3.exceptions.HTTPError, OSError, ValueError, KeyError):
            return set()

    def _discovery(self, path: str) -> Any:
        """One discovery document, read as JSON through the client's own auth and TLS."""
        method, url, headers, _body, _post = self.api_client.param_serialize(
            "GET", path, header_params={"Accept": "application/json"}, auth_settings=["BearerToken"]
        )
        response = self.api_client.call_api(
            method, url, header_params=headers, _request_timeout=self.request_timeout_seconds
        )
        response.read()
        if not 200 <= response.status < 300:
            raise ValueError(f"{path}: HTTP {response.status}")
        body: bytes = response.data or b""
        return json.loads(body)

    def _group_versions(self) -> dict[str, set[str]]:
        """Group → the versions served (``APIGroupList``)."""
        groups = self._discovery("/apis").get("groups") or []
        return {g["name"]: {v["version"] for v in g.get("versions") or []} for g in groups}

    def _resources(self, group: str, version: str) -> set[str]:
        """The resources one group-version serves (``APIResourceList``)."""
        listed = self._discovery(f"/apis/{group}/{version}").get("resources") or []
        return {r["name"] for r in listed}

    def check_readable(self) -> None:
        """Refuse a read that would stand for a cluster it did not see: every kind is
        looked at, the ones a watch thread keeps and the ones not due this pass too.
        A required kind (Nodes, Pods) must be served and its store whole: forbidden or
        not served refuses the read (``SourceError``); failing, or reconnecting (a
        watch between retries), makes it unreachable, as do all kinds failing or a
        kind never read failing."""
        unknown = KindStatus(KindState.FAILING)
        status = {k.key: self.status.get(k.key) or unknown for k in self.kinds}
        for kind in self.kinds:
            said = status[kind.key]
            if kind.required and said.state in (KindState.FORBIDDEN, KindState.NOT_SERVED):
                raise SourceError(f"{kind.key}: {said.state}: {said.reason}")
        asked_states = (KindState.SERVED, KindState.FAILING)
        asked = [k for k in self.kinds if status[k.key].state in asked_states]
        failing = [k for k in asked if status[k.key].state is KindState.FAILING]
        never_read = [k for k in failing if k.key not in self.ever_read]
        required = [k for k in failing if k.required]
        reconnecting = [k for k in self.kinds if k.required and k.key in self.reconnecting]
        if reconnecting and not required:
            kind = reconnecting[0]
            raise SourceUnreachable(
                f"{kind.key}: reconnecting after {self.reconnecting.get(kind.key, '')}: not "
                "read afresh; what was read before is kept",
                self.kind_report(),
            )
        if failing and (len(failing) == len(asked) or never_read or required):
            first = (required or never_read or failing)[0]
            raise SourceUnreachable(
                f"{len(failing)} of {len(asked)} kinds unreachable ({first.key}: "
                f"{status[first.key].reason}); what was read before is kept",
                self.kind_report(),
            )

    def catch_up(self, kind: WatchedKind, *, watch_seconds: int) -> None:
        """List if needed, then one watch; retry errors with backoff, relist on 410.
        Sets the kind's ``status``; raises nothing the server answers. Each failed
        attempt is kept as it was, so a kind that ends failing says what happened
        (``attempts_said``)."""
        failures: list[str] = []
        while True:
            try:
                if kind.key not in self.resource_versions:
                    self.relist(kind)
                self.watch(kind, watch_seconds=watch_seconds)
                self._served(kind)
                return
            except ApiException as error:
                if error.status == 404:
                    self._forget(kind)
                    index = self.version_index.get(kind.key, 0) + 1
                    if index < len(kind.versions):  # not served at this version: the next
                        self.version_index[kind.key] = index
                        continue
                    versions = ", ".join(kind.versions)
                    reason = f"not served at {versions}: read as none"
                    self._settled(kind, KindStatus(KindState.NOT_SERVED, reason=reason))
                    return
                if error.status == 403 and self._forbidden_for_good(kind):
                    self._forget(kind)
                    reason = forbidden_reason(kind, error)
                    self._settled(kind, KindStatus(KindState.FORBIDDEN, self.version(kind), reason))
                    return
                if error.status == 410:
                    # Expected when the watch falls behind or the API server restarted
                    # (its new watch cache knows no earlier resourceVersion): relist at
                    # once, no backoff.
                    self.stats.relists_after_gone += 1
                    self.resource_versions.pop(kind.key, None)
                    failures.append("410 Gone (resourceVersion too old: relisted)")
                    if len(failures) < self.backoff.max_attempts:
                        continue
                    self._fail(kind, failures)
                    return
                reason = api_reason(error)
                delay_at_least = retry_after(error) if error.status == 429 else 0.0
                if error.status != 429:  # 429 is the server pacing us, not an error
                    self.stats.errors += 1
            except (urllib3.exceptions.HTTPError, OSError) as error:
                reason = network_reason(error)
                delay_at_least = 0.0
                self.stats.errors += 1
            failures.append(reason)
            self.reconnecting[kind.key] = reason
            if len(failures) >= self.backoff.max_attempts:
                self._fail(kind, failures)
                return
            delay = max(self.backoff.delay(len(failures)), delay_at_least)
            self.stats.retry_delays_seconds.append(delay)
            self.sleep(delay)

    def _forbidden_for_good(self, kind: WatchedKind) -> bool:
        """A 403 is final for a kind never read, or one that has answered 403 for
        ``forbidden_after_seconds``; before that, for a kind read before (served, or
        answered "not served": a restarted API server's authorizer refuses kinds it does
        not serve too), it is retried as transient (an API server that has just started)."""
        now = self.clock()
        since = self.denied_since.setdefault(kind.key, now)
        if kind.key not in self.ever_read:
            return True
        return now - since >= self.forbidden_after_seconds

    def _served(self, kind: WatchedKind) -> None:
        self._settled(kind, KindStatus(KindState.SERVED, self.version(kind)))
        self.denied_since.pop(kind.key, None)

    def _settled(self, kind: WatchedKind, status: KindStatus) -> None:
        """The server's answer about the kind, read whole: served, not served, forbidden."""
        self.status[kind.key] = status
        self.ever_read.add(kind.key)
        self.reconnecting.pop(kind.key, None)

    def _fail(self, kind: WatchedKind, failures: list[str]) -> None:
        """Failing: its store and resourceVersion stay, so the next read resumes from them."""
        self.reconnecting.pop(kind.key, None)
        self.status[kind.key] = KindStatus(
            KindState.FAILING, self.version(kind), attempts_said(failures)
        )

    def _forget(self, kind: WatchedKind) -> None:
        with self._lock:
            if self.stores.pop(kind.key, None):
                self.generation = next(_GENERATIONS)
                self._changed.notify_all()
        self.resource_versions.pop(kind.key, None)

    def relist(self, kind: WatchedKind) -> None:
        """A full paginated list: the kind's store is replaced, so nothing is lost or doubled."""
        version = self.version(kind)
        list_call = kind.list_call(self.api_client, version)
        items: dict[str, Stored] = {}
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
                items[object_uid(obj)] = pack(slimmed(obj))
            metadata = body.get("metadata") or {}
            continue_token = metadata.get("continue")
            if not continue_token:
                break
        self.stats.lists += 1
        with self._lock:
            self.stores[kind.key] = items
            self.resource_versions[kind.key] = str(metadata.get("resourceVersion") or "")
            self.generation = next(_GENERATIONS)
            self._changed.notify_all()

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
                slimmed(obj)
                with self._lock:
                    if event_type == "DELETED":
                        store.pop(object_uid(obj), None)
                    else:
                        store[object_uid(obj)] = pack(obj)
                    self.generation = next(_GENERATIONS)
                    self._changed.notify_all()
                events += 1
            if watcher.resource_version:
                self.resource_versions[kind.key] = str(watcher.resource_version)
        self.stats.watch_events += events
        return events
