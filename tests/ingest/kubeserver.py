"""A small Kubernetes list/watch API server on 127.0.0.1 for driving the real client.

It keeps objects per resource path with one cluster-wide resourceVersion
counter (as etcd does), answers paginated lists and chunked watch streams
(``ADDED``/``MODIFIED``/``DELETED``, ``BOOKMARK``, ``ERROR`` 410), and can be
told to misbehave: answer 410 mid-watch, drop the connection, stall, fail, refuse a
kind as the RBAC authorizer does (403, without ending the watches already open, as
kube-apiserver authorizes a request once, when it starts), or go away altogether
(``go_away``: the port closed, connections cut) and come back on the same port, as it
was (a network cut) or restarted (``restart``: a fresh watch cache answering 410 for
every earlier resourceVersion, 403 for everything while the RBAC authorizer's caches
load, 429 "storage is (re)initializing" for custom kinds). ``shut_down_slowly`` is
kube-apiserver after SIGTERM: new connections refused, open watches kept.
It runs aiohttp in a thread of its own; tests call its methods from theirs.
"""

from __future__ import annotations

import asyncio
import copy
import json
import threading
import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiohttp import web


def _crd(group: str, version: str, plural: str) -> tuple[str, str]:
    return (f"/apis/{group}/{version}/{plural}", f"{group}/{version}")


# What this server serves, by resource key (``Kind`` for the core group, else
# ``Kind.group``, as topology.ingest.kubekinds names them): path and the version served at.
# Written out here, not taken from the source's table, so a wrong path or plural there
# shows as a kind the source cannot read. Kueue is served at v1beta1 only (its older
# version), so the source's fall-back to an older version is exercised.
RESOURCE_PATHS: dict[str, tuple[str, str]] = {
    "Node": ("/api/v1/nodes", "v1"),
    "Pod": ("/api/v1/pods", "v1"),
    "PodTemplate": ("/api/v1/podtemplates", "v1"),
    "Namespace": ("/api/v1/namespaces", "v1"),
    "PersistentVolume": ("/api/v1/persistentvolumes", "v1"),
    "PersistentVolumeClaim": ("/api/v1/persistentvolumeclaims", "v1"),
    "ConfigMap": ("/api/v1/namespaces/kube-system/configmaps", "v1"),  # kube-system only
    "Event": ("/api/v1/events", "v1"),  # listed by fieldSelector source=<component>
    "PriorityClass.scheduling.k8s.io": _crd("scheduling.k8s.io", "v1", "priorityclasses"),
    "StorageClass.storage.k8s.io": _crd("storage.k8s.io", "v1", "storageclasses"),
    "PodDisruptionBudget.policy": _crd("policy", "v1", "poddisruptionbudgets"),
    "ResourceSlice.resource.k8s.io": _crd("resource.k8s.io", "v1", "resourceslices"),
    "ResourceClaim.resource.k8s.io": _crd("resource.k8s.io", "v1", "resourceclaims"),
    "ResourceClaimTemplate.resource.k8s.io": _crd(
        "resource.k8s.io", "v1", "resourceclaimtemplates"
    ),
    "DeviceClass.resource.k8s.io": _crd("resource.k8s.io", "v1", "deviceclasses"),
    "DaemonSet.apps": _crd("apps", "v1", "daemonsets"),
    "Deployment.apps": _crd("apps", "v1", "deployments"),
    "ReplicaSet.apps": _crd("apps", "v1", "replicasets"),
    "StatefulSet.apps": _crd("apps", "v1", "statefulsets"),
    "Job.batch": _crd("batch", "v1", "jobs"),
    "Workload.scheduling.k8s.io": _crd("scheduling.k8s.io", "v1alpha2", "workloads"),
    "PodGroup.scheduling.k8s.io": _crd("scheduling.k8s.io", "v1alpha2", "podgroups"),
    "PodGroup.scheduling.x-k8s.io": _crd("scheduling.x-k8s.io", "v1alpha1", "podgroups"),
    "NodePool.karpenter.sh": _crd("karpenter.sh", "v1", "nodepools"),
    "NodeClaim.karpenter.sh": _crd("karpenter.sh", "v1", "nodeclaims"),
    "ProvisioningRequest.autoscaling.x-k8s.io": _crd(
        "autoscaling.x-k8s.io", "v1", "provisioningrequests"
    ),
    "EC2NodeClass.karpenter.k8s.aws": _crd("karpenter.k8s.aws", "v1", "ec2nodeclasses"),
    "JobSet.jobset.x-k8s.io": _crd("jobset.x-k8s.io", "v1alpha2", "jobsets"),
    "LeaderWorkerSet.leaderworkerset.x-k8s.io": _crd(
        "leaderworkerset.x-k8s.io", "v1", "leaderworkersets"
    ),
    "Workload.kueue.x-k8s.io": _crd("kueue.x-k8s.io", "v1beta1", "workloads"),
    "ClusterQueue.kueue.x-k8s.io": _crd("kueue.x-k8s.io", "v1beta1", "clusterqueues"),
    "Cohort.kueue.x-k8s.io": _crd("kueue.x-k8s.io", "v1beta1", "cohorts"),
    "LocalQueue.kueue.x-k8s.io": _crd("kueue.x-k8s.io", "v1beta1", "localqueues"),
    "AdmissionCheck.kueue.x-k8s.io": _crd("kueue.x-k8s.io", "v1beta1", "admissionchecks"),
    "ProvisioningRequestConfig.kueue.x-k8s.io": _crd(
        "kueue.x-k8s.io", "v1beta1", "provisioningrequestconfigs"
    ),
    "ResourceFlavor.kueue.x-k8s.io": _crd("kueue.x-k8s.io", "v1beta1", "resourceflavors"),
    "Topology.kueue.x-k8s.io": _crd("kueue.x-k8s.io", "v1beta1", "topologies"),
    "PyTorchJob.kubeflow.org": _crd("kubeflow.org", "v1", "pytorchjobs"),
    "MPIJob.kubeflow.org": _crd("kubeflow.org", "v2beta1", "mpijobs"),
    "TrainJob.trainer.kubeflow.org": _crd("trainer.kubeflow.org", "v1alpha1", "trainjobs"),
    "Job.batch.volcano.sh": _crd("batch.volcano.sh", "v1alpha1", "jobs"),
    "PodGroup.scheduling.volcano.sh": _crd("scheduling.volcano.sh", "v1beta1", "podgroups"),
    "Queue.scheduling.volcano.sh": _crd("scheduling.volcano.sh", "v1beta1", "queues"),
    "HyperNode.topology.volcano.sh": _crd("topology.volcano.sh", "v1alpha1", "hypernodes"),
    "PodGroup.scheduling.run.ai": _crd("scheduling.run.ai", "v2alpha2", "podgroups"),
    "Queue.scheduling.run.ai": _crd("scheduling.run.ai", "v2", "queues"),
    "Topology.kai.scheduler": _crd("kai.scheduler", "v1alpha1", "topologies"),
    "NodeGroup.capacityweb.io": _crd("capacityweb.io", "v1alpha1", "nodegroups"),
    "Reservation.capacityweb.io": _crd("capacityweb.io", "v1alpha1", "reservations"),
    "Topology.capacityweb.io": _crd("capacityweb.io", "v1alpha1", "topologies"),
}


# Groups kube-apiserver serves itself; every other group here is a CustomResourceDefinition,
# whose storage answers 429 while it initialises after a restart.
BUILT_IN_GROUPS = {"", "scheduling.k8s.io", "storage.k8s.io", "policy", "resource.k8s.io"}
BUILT_IN_GROUPS |= {"apps", "batch"}


def resource_key(obj: dict[str, Any]) -> str:
    """``Kind`` for the core group, else ``Kind.group``, from an object's kind and apiVersion."""
    group = str(obj.get("apiVersion") or "").rpartition("/")[0]
    return f"{obj['kind']}.{group}" if group else str(obj["kind"])


@dataclass
class Misbehaviour:
    """What the next watch of a kind does after ``after_events`` events."""

    action: str  # "gone" | "drop"
    after_events: int


@dataclass
class Resource:
    kind: str
    items: dict[str, dict[str, Any]] = field(default_factory=dict)
    log: list[tuple[int, str, dict[str, Any]]] = field(default_factory=list)
    compacted_before: int = 0  # watches from an older resourceVersion get 410
    misbehaviours: list[Misbehaviour] = field(default_factory=list)


class KubeServer:
    def __init__(self) -> None:
        self.resources = {kind: Resource(kind) for kind in RESOURCE_PATHS}
        self.unserved: set[str] = set()
        self.forbidden: set[str] = set()  # kinds the caller's role may not list (403)
        self.away = False
        self.refusing = False  # shutting down slowly: new requests cut, open watches kept
        self.forbidden_until = 0.0  # after a restart: every resource request answers 403
        self.initializing_until = 0.0  # after a restart: custom kinds answer 429
        self.resource_version = 1
        self.requests: list[tuple[str, str, dict[str, str]]] = []
        self.authorizations: set[str] = set()  # every Authorization header received
        self.stall_seconds = 0.0
        self.discovery_fails = False  # /apis answers 503 (an aggregated API down)
        self.fail_next: list[int] = []
        self.bookmark_every_seconds = 0.2
        self.close_when_idle = False  # end each watch once its backlog is sent (benchmarks)
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._changed: asyncio.Condition | None = None
        self._runner: web.AppRunner | None = None
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)

    # lifecycle

    def start(self) -> KubeServer:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self._loop).result(10)
        return self

    async def _start(self) -> None:
        self._changed = asyncio.Condition()
        await self._serve()

    async def _serve(self) -> None:
        app = web.Application()
        for kind, (path, _api_version) in RESOURCE_PATHS.items():
            app.router.add_get(path, self._handler(kind))
        app.router.add_get("/version", self._version)
        app.router.add_get("/apis", self._groups)
        app.router.add_get("/apis/{group}/{version}", self._group_resources)
        app.router.add_route("*", "/{tail:.*}", self._not_found)
        self._runner = web.AppRunner(
            app, handle_signals=False, access_log=None, shutdown_timeout=1.0
        )
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", self.port, reuse_address=True)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

    def go_away(self) -> None:
        """Close the port and cut every connection, as a control plane being upgraded:
        clients get "connection refused" until ``come_back``."""
        self.away = True
        assert self._runner is not None
        asyncio.run_coroutine_threadsafe(self._cut_and_close(), self._loop).result(10)

    async def _cut_and_close(self) -> None:
        assert self._changed is not None and self._runner is not None
        async with self._changed:
            self._changed.notify_all()  # open watches see ``away`` and abort
        await self._runner.cleanup()

    def come_back(self) -> None:
        """Listen again on the same port, with every object and resourceVersion kept
        (the API server was cut off, not restarted)."""
        asyncio.run_coroutine_threadsafe(self._serve(), self._loop).result(10)
        self.away = False
        self.refusing = False

    def restart(self, *, forbidden_seconds: float = 1.5, initializing_seconds: float = 3.0) -> None:
        """Go away (if not already) and come back as a restarted kube-apiserver: objects
        and resourceVersions are etcd's, kept; the watch cache is new, so a watch from
        any earlier resourceVersion gets 410 "too old resource version"
        (``k8s.io/apiserver/pkg/storage/cacher/watch_cache.go``); for
        ``forbidden_seconds`` every resource request answers 403, as a real one does
        for 1–2 s after it starts listening, before its RBAC authorizer's informers
        have synced (issue 45: the audit log says ``decision: forbid``, no reason); for
        ``initializing_seconds`` custom kinds answer 429 "storage is (re)initializing"
        with ``retryAfterSeconds`` 1 (``k8s.io/apiserver/pkg/storage/cacher/cacher.go``,
        the cacher not ready yet)."""
        if not self.away:
            self.go_away()
        self._call(self._new_watch_cache)
        started = time.monotonic()
        self.forbidden_until = started + forbidden_seconds
        self.initializing_until = started + initializing_seconds
        self.come_back()

    def shut_down_slowly(self) -> None:
        """kube-apiserver after SIGTERM: the port stops accepting and idle keep-alive
        connections are closed (Go's ``http.Server.Shutdown``), so every new request
        fails, while the watches already open go on delivering until ``go_away``."""
        self.refusing = True
        assert self._runner is not None
        for site in self._runner.sites:
            server = site._server  # type: ignore[attr-defined]
            self._loop.call_soon_threadsafe(server.close)

    def stop(self) -> None:
        self.stall_seconds = 0.0
        if self._runner is not None:
            asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def kubeconfig(self, path: Path) -> Path:
        """A kubeconfig file pointing at this server (the client's own loader reads it)."""
        path.write_text(
            json.dumps(
                {
                    "apiVersion": "v1",
                    "kind": "Config",
                    "clusters": [{"name": "local", "cluster": {"server": self.url}}],
                    "users": [{"name": "reader", "user": {"token": "read-only"}}],
                    "contexts": [
                        {"name": "local", "context": {"cluster": "local", "user": "reader"}}
                    ],
                    "current-context": "local",
                }
            )
        )
        return path

    # changes, from the test's thread

    def _call(self, function: Any, *args: Any) -> Any:
        async def run() -> Any:
            result = function(*args)
            assert self._changed is not None
            async with self._changed:
                self._changed.notify_all()
            return result

        return asyncio.run_coroutine_threadsafe(run(), self._loop).result(10)

    def put(self, obj: dict[str, Any]) -> dict[str, Any]:
        """Create or replace an object (ADDED or MODIFIED); returns the stored copy."""
        return self._call(self._put, obj)

    def put_many(self, objects: Iterable[dict[str, Any]]) -> None:
        self._call(lambda items: [self._put(o) for o in items], list(objects))

    def delete(self, kind: str, name: str, namespace: str = "") -> None:
        """``kind``: the resource key (``Kind`` or ``Kind.group``)."""
        self._call(self._delete, kind, name, namespace)

    def compact(self) -> None:
        """Forget the event log: watches from any earlier resourceVersion get 410 Gone."""
        self._call(self._compact)

    def misbehave(self, kind: str, action: str, after_events: int) -> None:
        self.resources[kind].misbehaviours.append(Misbehaviour(action, after_events))

    def _put(self, obj: dict[str, Any]) -> dict[str, Any]:
        obj = copy.deepcopy(obj)
        kind = resource_key(obj)
        obj["apiVersion"] = RESOURCE_PATHS[kind][1]  # served at this version, as a server converts
        resource = self.resources[kind]
        metadata = obj.setdefault("metadata", {})
        key = _key(obj)
        existing = resource.items.get(key)
        metadata["uid"] = (existing or {}).get("metadata", {}).get("uid") or str(
            uuid.uuid5(uuid.NAMESPACE_URL, f"{kind}/{key}")
        )
        self.resource_version += 1
        metadata["resourceVersion"] = str(self.resource_version)
        resource.items[key] = obj
        resource.log.append((self.resource_version, "MODIFIED" if existing else "ADDED", obj))
        return obj

    def _delete(self, kind: str, name: str, namespace: str) -> None:
        resource = self.resources[kind]
        obj = resource.items.pop(f"{namespace}/{name}")
        self.resource_version += 1
        obj = {
            **obj,
            "metadata": {**obj["metadata"], "resourceVersion": str(self.resource_version)},
        }
        resource.log.append((self.resource_version, "DELETED", obj))

    def _new_watch_cache(self) -> None:
        """A restarted server's watch cache starts at etcd's resourceVersion, which has
        moved on meanwhile (leases and events are written every few seconds): every
        resourceVersion a client holds is older."""
        self.resource_version += 1
        self._compact()

    def _compact(self) -> None:
        for resource in self.resources.values():
            resource.log.clear()
            resource.compacted_before = self.resource_version

    def state(self, kind: str) -> dict[str, dict[str, Any]]:
        """The server's objects of a kind by uid (what a correct client store equals)."""
        return {o["metadata"]["uid"]: o for o in self.resources[kind].items.values()}

    # HTTP

    def _served_paths(self) -> list[tuple[str, str, str]]:
        """(group, version, plural) of every kind of a named group served now."""
        served = []
        for kind, (path, _api_version) in RESOURCE_PATHS.items():
            parts = path.split("/")
            if parts[1] == "apis" and kind not in self.unserved:
                served.append((parts[2], parts[3], parts[-1]))
        return served

    async def _version(self, request: web.Request) -> web.StreamResponse:
        """``/version``, which every user may read (``system:public-info-viewer``)."""
        self.requests.append((request.method, request.path, dict(request.query)))
        if self.refusing:
            return _cut(request)
        return web.json_response({"major": "1", "minor": "36", "gitVersion": "v1.36.0"})

    async def _groups(self, request: web.Request) -> web.Response:
        """Discovery's ``APIGroupList``: the groups and versions of the kinds served now
        (a kind in ``unserved`` is a CRD not installed, so absent here too)."""
        self.requests.append((request.method, request.path, dict(request.query)))
        if self.refusing:
            return _cut(request)
        if self.discovery_fails or time.monotonic() < self.forbidden_until:
            return _status(503, "ServiceUnavailable", "discovery failed")
        versions: dict[str, list[str]] = {}
        for group, version, _plural in self._served_paths():
            versions.setdefault(group, [])
            if version not in versions[group]:
                versions[group].append(version)
        groups = [
            {
                "name": group,
                "versions": [{"groupVersion": f"{group}/{v}", "version": v} for v in served],
                "preferredVersion": {"groupVersion": f"{group}/{served[0]}", "version": served[0]},
            }
            for group, served in sorted(versions.items())
        ]
        return web.json_response({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})

    async def _group_resources(self, request: web.Request) -> web.Response:
        """Discovery's ``APIResourceList`` of one group-version; 404 if none is served."""
        self.requests.append((request.method, request.path, dict(request.query)))
        group, version = request.match_info["group"], request.match_info["version"]
        plurals = [p for g, v, p in self._served_paths() if (g, v) == (group, version)]
        if not plurals:
            return _status(404, "NotFound", f"the server could not find {request.path}")
        body = {
            "kind": "APIResourceList",
            "apiVersion": "v1",
            "groupVersion": f"{group}/{version}",
            "resources": [
                {"name": p, "namespaced": True, "verbs": ["get", "list", "watch"]} for p in plurals
            ],
        }
        return web.json_response(body)

    async def _not_found(self, request: web.Request) -> web.Response:
        self.requests.append((request.method, request.path, dict(request.query)))
        return _status(404, "NotFound", f"the server could not find {request.path}")

    def _handler(self, kind: str) -> Any:
        async def handle(request: web.Request) -> web.StreamResponse:
            self.requests.append((request.method, request.path, dict(request.query)))
            self.authorizations.add(request.headers.get("Authorization", ""))
            if self.refusing:
                return _cut(request)
            if time.monotonic() < self.forbidden_until or kind in self.forbidden:
                return _forbidden(kind)
            if kind in self.unserved:
                return _status(404, "NotFound", f"{kind} is not served")
            if time.monotonic() < self.initializing_until and _group(kind) not in BUILT_IN_GROUPS:
                return _initializing()
            stalled_at = asyncio.get_running_loop().time()
            while asyncio.get_running_loop().time() - stalled_at < self.stall_seconds:
                await asyncio.sleep(0.05)  # re-read: a test may end the stall early
            if self.fail_next:
                return _status(self.fail_next.pop(0), "InternalError", "scripted failure")
            if request.query.get("watch", "").lower() in ("true", "1"):
                return await self._watch(kind, request)
            return self._list(kind, request)

        return handle

    def _list(self, kind: str, request: web.Request) -> web.Response:
        items = [self.resources[kind].items[k] for k in sorted(self.resources[kind].items)]
        items = [o for o in items if _selected(o, request)]
        limit = int(request.query.get("limit") or 0) or len(items) or 1
        offset = int(request.query.get("continue") or 0)
        page = items[offset : offset + limit]
        metadata: dict[str, Any] = {"resourceVersion": str(self.resource_version)}
        if offset + limit < len(items):
            metadata["continue"] = str(offset + limit)
        _path, api_version = RESOURCE_PATHS[kind]
        list_kind = f"{kind.partition('.')[0]}List"
        body = {"kind": list_kind, "apiVersion": api_version, "metadata": metadata}
        body["items"] = [_without_type(o) for o in page]
        return web.json_response(body)

    async def _watch(self, kind: str, request: web.Request) -> web.StreamResponse:
        resource = self.resources[kind]
        since = int(request.query.get("resourceVersion") or 0)
        timeout_seconds = float(request.query.get("timeoutSeconds") or 30)
        bookmarks = request.query.get("allowWatchBookmarks", "").lower() in ("true", "1")
        response = web.StreamResponse(headers={"Content-Type": "application/json"})
        response.enable_chunked_encoding()
        await response.prepare(request)
        if since < resource.compacted_before:
            await _send(response, _gone_event())
            return response
        misbehaviour = resource.misbehaviours.pop(0) if resource.misbehaviours else None
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_seconds
        sent = 0
        assert self._changed is not None
        while loop.time() < deadline:
            if self.away:
                assert request.transport is not None
                request.transport.abort()
                return response
            pending = [entry for entry in resource.log if entry[0] > since]
            for version, event_type, obj in pending:
                if misbehaviour and sent >= misbehaviour.after_events:
                    return await self._misbehave(misbehaviour, request, response)
                if not _selected(obj, request):
                    since = version
                    continue
                await _send(response, {"type": event_type, "object": obj})
                since = version
                sent += 1
            if misbehaviour and sent >= misbehaviour.after_events:
                return await self._misbehave(misbehaviour, request, response)
            if self.close_when_idle:
                break
            async with self._changed:
                try:
                    wait = min(self.bookmark_every_seconds, max(deadline - loop.time(), 0))
                    await asyncio.wait_for(self._changed.wait(), wait)
                except TimeoutError:
                    # a change made while the wait timed out is sent first: a bookmark
                    # past it would tell the client it has seen it (it would be lost)
                    if bookmarks and not any(entry[0] > since for entry in resource.log):
                        since = max(since, self.resource_version)
                        await _send(response, _bookmark(kind, since))
        await response.write_eof()
        return response

    async def _misbehave(
        self, misbehaviour: Misbehaviour, request: web.Request, response: web.StreamResponse
    ) -> web.StreamResponse:
        if misbehaviour.action == "gone":
            self._compact()
            await _send(response, _gone_event())
            await response.write_eof()
            return response
        assert request.transport is not None
        request.transport.abort()  # no terminating chunk: the client sees a broken stream
        return response


async def _send(response: web.StreamResponse, event: dict[str, Any]) -> None:
    await response.write(json.dumps(event).encode() + b"\n")


def _gone_event() -> dict[str, Any]:
    return {
        "type": "ERROR",
        "object": {
            "kind": "Status",
            "apiVersion": "v1",
            "status": "Failure",
            "message": "too old resource version",
            "reason": "Expired",
            "code": 410,
        },
    }


def _bookmark(kind: str, version: int) -> dict[str, Any]:
    _path, api_version = RESOURCE_PATHS[kind]
    return {
        "type": "BOOKMARK",
        "object": {
            "kind": kind.partition(".")[0],
            "apiVersion": api_version,
            "metadata": {"resourceVersion": str(version)},
        },
    }


def _group(kind: str) -> str:
    return kind.partition(".")[2]


def _cut(request: web.Request) -> web.Response:
    """The connection closed under the request: what a client of a port that stopped
    accepting sees on its kept-alive connection."""
    assert request.transport is not None
    request.transport.abort()
    return web.Response(status=503)


def _initializing() -> web.Response:
    body = {"kind": "Status", "apiVersion": "v1", "status": "Failure"}
    body.update({"message": "storage is (re)initializing", "reason": "TooManyRequests"})
    body.update({"details": {"retryAfterSeconds": 1}, "code": 429})
    return web.json_response(body, status=429, headers={"Retry-After": "1"})


def _forbidden(kind: str) -> web.Response:
    """The RBAC authorizer's answer (``k8s.io/apiserver`` ``responsewriters.forbiddenMessage``)."""
    path, _api_version = RESOURCE_PATHS[kind]
    resource = path.rsplit("/", 1)[-1]
    group = kind.partition(".")[2]
    qualified = f"{resource}.{group}" if group else resource
    message = (
        f'{qualified} is forbidden: User "system:serviceaccount:capacityweb:capacityweb-reader"'
        f' cannot list resource "{resource}" in API group "{group}" at the cluster scope'
    )
    return _status(403, "Forbidden", message)


def _status(code: int, reason: str, message: str) -> web.Response:
    body = {"kind": "Status", "apiVersion": "v1", "status": "Failure"}
    body.update({"message": message, "reason": reason, "code": code})
    return web.json_response(body, status=code)


def _selected(obj: dict[str, Any], request: web.Request) -> bool:
    """The field selectors the source sends: ``metadata.name=X`` (the CA status
    ConfigMap) and an Event's ``source=X`` (``source.component``, as the API server's
    event strategy selects it)."""
    selector = request.query.get("fieldSelector", "")
    if not selector:
        return True
    field_name, _, value = selector.partition("=")
    if field_name == "source":
        return (obj.get("source") or {}).get("component") == value
    assert field_name == "metadata.name", f"unsupported fieldSelector {selector}"
    return (obj.get("metadata") or {}).get("name") == value


def _key(obj: dict[str, Any]) -> str:
    metadata = obj.get("metadata") or {}
    return f"{metadata.get('namespace') or ''}/{metadata['name']}"


def _without_type(obj: dict[str, Any]) -> dict[str, Any]:
    """List items come without kind/apiVersion, as the API server sends them."""
    return {k: v for k, v in obj.items() if k not in ("kind", "apiVersion")}
