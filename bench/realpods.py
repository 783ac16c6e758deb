"""Running pods shaped like the ones a real cluster serves, for the ingest memory figure.

A Deployment's pod as kube-apiserver returns it (Kubernetes 1.3x): labels and
annotations, an owner reference, ``managedFields`` of the three writers every such pod
has (kube-controller-manager creating it, kube-scheduler's binding, the kubelet's
status), two containers with environment variables, probes, volume mounts and a
security context, an init container, the projected service-account token volume, a
ConfigMap and an emptyDir volume, the default not-ready/unreachable tolerations, and
a status with conditions and container statuses. About 10 kB of JSON each (the
issue's 1.12 GB at 20,000 pods came from pods of this kind); the earlier benchmark
pods were one container with requests, about 360 bytes.
"""

from __future__ import annotations

import json
from typing import Any

CREATED = "2026-12-01T08:00:00Z"
STARTED = "2026-12-01T08:00:07Z"


def _fields(keys: list[str]) -> dict[str, Any]:
    """A ``fieldsV1`` tree naming ``keys`` (``f:``-prefixed), as server-side apply writes it."""
    return {f"f:{k}": {} for k in keys}


def _container(name: str, index: int) -> dict[str, Any]:
    env = [{"name": f"APP_SETTING_{i}", "value": f"value-{index}-{i}"} for i in range(14)]
    env += [
        {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
        {"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
        {
            "name": "DB_PASSWORD",
            "valueFrom": {"secretKeyRef": {"name": "app-db", "key": "password"}},
        },
    ]
    probe = {
        "httpGet": {"path": "/healthz", "port": 8080, "scheme": "HTTP"},
        "initialDelaySeconds": 10,
        "periodSeconds": 10,
        "timeoutSeconds": 1,
        "successThreshold": 1,
        "failureThreshold": 3,
    }
    return {
        "name": name,
        "image": f"registry.example/team/{name}:1.{index % 40}.3",
        "imagePullPolicy": "IfNotPresent",
        "command": ["/app/bin/server"],
        "args": ["--config=/etc/app/config.yaml", "--log-level=info", "--port=8080"],
        "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"}],
        "env": env,
        "envFrom": [{"configMapRef": {"name": "app-settings"}}],
        "resources": {
            "requests": {"cpu": "100m", "memory": "128Mi"},
            "limits": {"cpu": "500m", "memory": "256Mi"},
        },
        "livenessProbe": probe,
        "readinessProbe": {**probe, "httpGet": {**probe["httpGet"], "path": "/ready"}},
        "volumeMounts": [
            {"name": "config", "mountPath": "/etc/app", "readOnly": True},
            {"name": "cache", "mountPath": "/var/cache/app"},
            {
                "name": "kube-api-access-x7k2p",
                "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
                "readOnly": True,
            },
        ],
        "securityContext": {
            "allowPrivilegeEscalation": False,
            "capabilities": {"drop": ["ALL"]},
            "readOnlyRootFilesystem": True,
            "runAsNonRoot": True,
        },
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File",
    }


def _container_status(name: str, index: int, node: str) -> dict[str, Any]:
    return {
        "name": name,
        "ready": True,
        "started": True,
        "restartCount": index % 3,
        "image": f"registry.example/team/{name}:1.{index % 40}.3",
        "imageID": f"registry.example/team/{name}@sha256:{index:064x}",
        "containerID": f"containerd://{(index * 7919):064x}",
        "state": {"running": {"startedAt": STARTED}},
        "lastState": {},
        "volumeMounts": [
            {
                "name": "config",
                "mountPath": "/etc/app",
                "readOnly": True,
                "recursiveReadOnly": "Disabled",
            }
        ],
        "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}},
        "user": {"linux": {"uid": 1000, "gid": 1000, "supplementalGroups": [1000]}},
        "allocatedResources": {"cpu": "100m", "memory": "128Mi"},
        "hostIP": node,
    }


def _managed_fields() -> list[dict[str, Any]]:
    container = {
        'k:{"name":"app"}': _fields(
            [
                "args",
                "command",
                "env",
                "envFrom",
                "image",
                "imagePullPolicy",
                "livenessProbe",
                "name",
                "ports",
                "readinessProbe",
                "resources",
                "securityContext",
                "terminationMessagePath",
                "terminationMessagePolicy",
                "volumeMounts",
            ]
        ),
    }
    return [
        {
            "manager": "kube-controller-manager",
            "operation": "Update",
            "apiVersion": "v1",
            "time": CREATED,
            "fieldsType": "FieldsV1",
            "fieldsV1": {
                "f:metadata": {
                    "f:generateName": {},
                    "f:labels": _fields(["app", "pod-template-hash", "team", "version"]),
                    "f:ownerReferences": {'k:{"uid":"b1e0"}': {}},
                },
                "f:spec": {
                    "f:containers": container,
                    "f:dnsPolicy": {},
                    "f:enableServiceLinks": {},
                    "f:initContainers": {'k:{"name":"init"}': _fields(["image", "name"])},
                    "f:restartPolicy": {},
                    "f:schedulerName": {},
                    "f:securityContext": {},
                    "f:terminationGracePeriodSeconds": {},
                    "f:volumes": {
                        'k:{"name":"cache"}': _fields(["emptyDir", "name"]),
                        'k:{"name":"config"}': _fields(["configMap", "name"]),
                    },
                },
            },
        },
        {
            "manager": "kubelet",
            "operation": "Update",
            "apiVersion": "v1",
            "time": STARTED,
            "fieldsType": "FieldsV1",
            "subresource": "status",
            "fieldsV1": {
                "f:status": {
                    "f:conditions": {
                        f'k:{{"type":"{t}"}}': _fields(
                            ["lastProbeTime", "lastTransitionTime", "status", "type"]
                        )
                        for t in (
                            "ContainersReady",
                            "Initialized",
                            "PodReadyToStartContainers",
                            "Ready",
                        )
                    },
                    "f:containerStatuses": {},
                    "f:hostIP": {},
                    "f:hostIPs": {},
                    "f:initContainerStatuses": {},
                    "f:phase": {},
                    "f:podIP": {},
                    "f:podIPs": {'k:{"ip":"10.0.0.1"}': _fields(["ip"])},
                    "f:startTime": {},
                }
            },
        },
    ]


def running_pod(index: int, node: str) -> dict[str, Any]:
    """Pod ``app-<index>`` in ``team-<index % 20>``, bound to ``node`` and Running."""
    name = f"app-{index // 20}-{index % 20:02d}x7k2p"
    namespace = f"team-{index % 20}"
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "generateName": f"app-{index // 20}-",
            "namespace": namespace,
            "uid": f"{index:08d}-0000-4000-8000-{index:012d}",
            "resourceVersion": str(1000 + index),
            "creationTimestamp": CREATED,
            "labels": {
                "app": "app",
                "pod-template-hash": "5d8f7c9b6d",
                "team": namespace,
                "version": f"1.{index % 40}.3",
            },
            "annotations": {
                "kubectl.kubernetes.io/restartedAt": CREATED,
                "prometheus.io/scrape": "true",
                "prometheus.io/port": "8080",
            },
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "ReplicaSet",
                    "name": f"app-{index // 20}-5d8f7c9b6d",
                    "uid": "b1e0",
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
            "managedFields": _managed_fields(),
        },
        "spec": {
            "volumes": [
                {"name": "config", "configMap": {"name": "app-config", "defaultMode": 420}},
                {"name": "cache", "emptyDir": {"sizeLimit": "1Gi"}},
                {
                    "name": "kube-api-access-x7k2p",
                    "projected": {
                        "defaultMode": 420,
                        "sources": [
                            {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                            {
                                "configMap": {
                                    "name": "kube-root-ca.crt",
                                    "items": [{"key": "ca.crt", "path": "ca.crt"}],
                                }
                            },
                            {
                                "downwardAPI": {
                                    "items": [
                                        {
                                            "path": "namespace",
                                            "fieldRef": {
                                                "apiVersion": "v1",
                                                "fieldPath": "metadata.namespace",
                                            },
                                        }
                                    ]
                                }
                            },
                        ],
                    },
                },
            ],
            "initContainers": [
                {
                    "name": "init",
                    "image": "registry.example/team/init:2.1",
                    "command": ["/bin/sh", "-c", "until nslookup app-db; do sleep 2; done"],
                    "resources": {"requests": {"cpu": "50m", "memory": "64Mi"}},
                    "volumeMounts": [{"name": "config", "mountPath": "/etc/app"}],
                    "terminationMessagePath": "/dev/termination-log",
                    "terminationMessagePolicy": "File",
                    "imagePullPolicy": "IfNotPresent",
                }
            ],
            "containers": [_container("app", index), _container("sidecar", index)],
            "restartPolicy": "Always",
            "terminationGracePeriodSeconds": 30,
            "dnsPolicy": "ClusterFirst",
            "serviceAccountName": "app",
            "serviceAccount": "app",
            "nodeName": node,
            "securityContext": {"runAsUser": 1000, "fsGroup": 1000},
            "schedulerName": "default-scheduler",
            "tolerations": [
                {
                    "key": "node.kubernetes.io/not-ready",
                    "operator": "Exists",
                    "effect": "NoExecute",
                    "tolerationSeconds": 300,
                },
                {
                    "key": "node.kubernetes.io/unreachable",
                    "operator": "Exists",
                    "effect": "NoExecute",
                    "tolerationSeconds": 300,
                },
            ],
            "priority": 0,
            "enableServiceLinks": True,
            "preemptionPolicy": "PreemptLowerPriority",
        },
        "status": {
            "phase": "Running",
            "conditions": [
                {"type": t, "status": "True", "lastProbeTime": None, "lastTransitionTime": STARTED}
                for t in (
                    "PodReadyToStartContainers",
                    "Initialized",
                    "Ready",
                    "ContainersReady",
                    "PodScheduled",
                )
            ],
            "hostIP": "10.128.0.17",
            "hostIPs": [{"ip": "10.128.0.17"}],
            "podIP": f"10.{index // 65536 % 256}.{index // 256 % 256}.{index % 256}",
            "podIPs": [{"ip": f"10.{index // 65536 % 256}.{index // 256 % 256}.{index % 256}"}],
            "startTime": CREATED,
            "initContainerStatuses": [_container_status("init", index, node)],
            "containerStatuses": [
                _container_status("app", index, node),
                _container_status("sidecar", index, node),
            ],
            "qosClass": "Burstable",
        },
    }


def json_bytes(pod: dict[str, Any]) -> int:
    return len(json.dumps(pod, separators=(",", ":")))
