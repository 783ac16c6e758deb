"""A cluster-autoscaler card's ProvisioningRequests, each with the PodTemplate it names.

kubernetes/autoscaler ``cluster-autoscaler/apis/provisioningrequest/autoscaling.x-k8s.io/v1/
types.go``: ``spec.provisioningClassName`` and ``spec.podSets[].{count, podTemplateRef.name}``,
the PodTemplate in the request's namespace (the CRD,
``apis/config/crd/autoscaling.x-k8s.io_provisioningrequests.yaml``, is what the tests
validate against). The pods that consume the capacity carry the annotations
``autoscaling.x-k8s.io/consume-provisioning-request`` and
``autoscaling.x-k8s.io/provisioning-class-name``
(``provisioningrequest/pods/pods.go``).

cluster-autoscaler reads ProvisioningRequests only with
``--enable-provisioning-requests=true``; upstream's default is false
(``config/flags/flags.go``), so the request is said to need it.

A workload whose ProvisioningRequest Kueue creates (its ClusterQueue has an admission
check of controller ``kueue.x-k8s.io/provisioning-request``: kubernetes-sigs/kueue
``pkg/controller/admissionchecks/provisioning``) gets none from here: a second request
would ask for the same capacity twice.

Pure: no Django, no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import yaml

from recommender.engine.evaluate.evaluation import Evaluation, Recommendation, WorkloadEvaluation
from recommender.engine.evaluate.report import (
    ATOMIC_CLASS,
    CLASS_ANNOTATION,
    CONSUME_ANNOTATION,
    provisioning_request,
)
from topology.kube.kueue.queues import pod_queue
from topology.model.autoscalerstate import CHECK_CAPACITY
from topology.model.hardware import GPU_RESOURCE, Cluster, NodeGroup, Pod, QuotaQueue

FLAG_NOTE = (
    "# needs cluster-autoscaler running with --enable-provisioning-requests=true "
    "(upstream default false)"
)
PLACEHOLDER_IMAGE = "pause"  # cluster-autoscaler simulates the template, it runs nothing


def kueue_provisioned(cluster: Cluster, key: str) -> str | None:
    """The Kueue admission check that creates the workload's ProvisioningRequest and
    has it provisioned: its ClusterQueue runs one of controller
    ``kueue.x-k8s.io/provisioning-request`` whose class is not check-capacity (that
    class never scales up, ``kueue_check_capacity``)."""
    queue = _kueue_queue(cluster, key)
    if queue is None or queue.provisioning_class == CHECK_CAPACITY:
        return None
    return queue.provisioning_check


def kueue_check_capacity(cluster: Cluster, key: str) -> str | None:
    """The workload's Kueue admission check whose ProvisioningRequestConfig has class
    ``check-capacity.autoscaling.x-k8s.io``: cluster-autoscaler only looks for room on
    existing and upcoming nodes and never scales up for it
    (``provisioningrequest/checkcapacity/provisioningclass.go`` ``Provision``), so Kueue
    keeps the workload waiting while the capacity is missing."""
    queue = _kueue_queue(cluster, key)
    if queue is None or queue.provisioning_class != CHECK_CAPACITY:
        return None
    return queue.provisioning_check


def _kueue_queue(cluster: Cluster, key: str) -> QuotaQueue | None:
    pod = first_pending_pod(cluster, key)
    if pod is None:
        return None
    local = {name: q.name for q in cluster.queues for name in q.local_queues}
    queue = pod_queue(pod, {g.key: g for g in cluster.gangs}, local)
    return next((q for q in cluster.queues if q.name == queue and q.provisioning_check), None)


def kueue_text(rec: Recommendation, cluster: Cluster) -> str | None:
    """What Kueue already does for the card's workloads: said, nothing recommended twice."""
    lines = []
    for key in rec.workloads:
        waits = kueue_check_capacity(cluster, key)
        if waits is not None:
            lines.append(
                f"# Kueue's admission check {waits} asks for {key} with a ProvisioningRequest "
                f"of class {CHECK_CAPACITY}: cluster-autoscaler only checks that the "
                "capacity exists and never scales up for it, so Kueue keeps the workload "
                "waiting while the capacity is missing. What provisions it: the check's "
                "ProvisioningRequestConfig asking with class best-effort-atomic-scale-up "
                "(cluster-autoscaler then scales up for Kueue's own request), the "
                "ProvisioningRequest below (same class, for its pods), or nodes added by "
                "hand."
            )
        check = kueue_provisioned(cluster, key)
        if check is not None:
            lines.append(
                f"# Kueue creates the ProvisioningRequest of {key} itself (admission check "
                f"{check}, controller kueue.x-k8s.io/provisioning-request): nothing to apply "
                "for it here; a second request or a pool resize would ask for the same "
                "capacity twice. cluster-autoscaler provisions it with "
                "--enable-provisioning-requests=true."
            )
    return "\n".join(lines) + "\n" if lines else None


def provisioning_text(
    rec: Recommendation, evaluation: Evaluation, cluster: Cluster, group: NodeGroup
) -> str | None:
    """One PodTemplate + ProvisioningRequest per workload of the card (all YAML
    documents of one action), but none for a workload whose request Kueue creates;
    None when there is none to make."""
    return cards_provisioning_text((rec,), evaluation, cluster, group)


def cards_provisioning_text(
    recs: Iterable[Recommendation], evaluation: Evaluation, cluster: Cluster, group: NodeGroup
) -> str | None:
    """``provisioning_text`` of several cards as one action (a group's "apply all"):
    each workload's PodTemplate selects its own card's domain."""
    workloads = {w.key: w for w in evaluation.workloads}
    documents = [
        _documents(workloads[key], cluster, group, rec.placement)
        for rec in recs
        for key in rec.workloads
        if key in workloads and kueue_provisioned(cluster, key) is None
    ]
    if not documents:
        return None
    return FLAG_NOTE + "\n" + "---\n".join(documents)


def _documents(
    workload: WorkloadEvaluation, cluster: Cluster, group: NodeGroup, placement: Mapping[str, str]
) -> str:
    namespace, _, name = workload.key.partition("/")
    member = first_pending_pod(cluster, workload.key)
    template = {
        "apiVersion": "v1",
        "kind": "PodTemplate",
        "metadata": {"name": name, "namespace": namespace},
        "template": {
            "metadata": {"annotations": {CONSUME_ANNOTATION: name, CLASS_ANNOTATION: ATOMIC_CLASS}},
            "spec": pod_spec(member, {**group.node_selector, **placement}),
        },
    }
    ca_group = group.autoscaler.name if group.autoscaler else group.name
    comment = (
        f"# cluster-autoscaler group {ca_group}: all {workload.pods} pods of "
        f"{workload.key} or none\n"
    )
    return comment + _yaml(template) + "---\n" + _yaml(provisioning_request(workload))


def first_pending_pod(cluster: Cluster, key: str) -> Pod | None:
    return next(iter(pending_pods(cluster, key)), None)


def pending_pods(cluster: Cluster, key: str) -> list[Pod]:
    """The pending pods of one workload (a gang's members, or the pod itself)."""
    return [
        pod
        for pod in cluster.pending_pods()
        if pod.gang == key or (pod.gang is None and pod.key == key)
    ]


def pod_spec(pod: Pod | None, selector: Mapping[str, str]) -> dict[str, Any]:
    """A member's scheduling-relevant spec: requests, nodeSelector, tolerations."""
    requests: dict[str, str] = {}
    tolerations: list[dict[str, str]] = []
    if pod is not None:
        if pod.requests.cpu_milli:
            requests["cpu"] = f"{pod.requests.cpu_milli}m"
        if pod.requests.memory_bytes:
            requests["memory"] = str(pod.requests.memory_bytes)
        if pod.gpu_count:
            requests[GPU_RESOURCE] = str(pod.gpu_count)
        requests.update({k: str(v) for k, v in sorted(pod.requests.extended.items())})
        tolerations = [
            {
                k: v
                for k, v in (
                    ("key", t.key),
                    ("operator", t.operator),
                    ("value", t.value),
                    ("effect", t.effect),
                )
                if v
            }
            for t in pod.tolerations
        ]
    spec: dict[str, Any] = {
        "nodeSelector": dict(sorted(selector.items())),
        "containers": [
            {"name": "member", "image": PLACEHOLDER_IMAGE, "resources": {"requests": requests}}
        ],
    }
    if tolerations:
        spec["tolerations"] = tolerations
    return spec


def _yaml(body: Mapping[str, Any]) -> str:
    return yaml.safe_dump(dict(body), sort_keys=False, default_flow_style=False)
