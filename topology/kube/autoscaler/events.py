"""What the autoscalers report of themselves → ``topology.model.hardware.AutoscalerEvent``.

Read here:

- core v1 Events (and events.k8s.io/v1 ones in exported files) reported by
  cluster-autoscaler (``source.component`` ``cluster-autoscaler``: ``TriggeredScaleUp``,
  ``NotTriggerScaleUp``, ``FailedScaleUp``, ``ScaleDown``, ``ScaleDownEmpty``,
  ``ScaleDownFailed`` ..., kubernetes/autoscaler ``processors/status/
  eventing_scale_up_processor.go``, ``core/scaledown``) or by Karpenter (``karpenter``:
  ``InsufficientCapacityError`` on a NodeClaim it then deletes, kubernetes-sigs/karpenter
  ``pkg/controllers/nodeclaim/lifecycle/launch.go``); every other Event is counted
  ignored. The time kept is when the Event was first reported (``eventTime``, else
  ``firstTimestamp``): a repeat (``count``, ``lastTimestamp``) is not a change of the
  model, so an autoscaler saying the same thing every loop makes no new snapshot;
- the status conditions of cluster-autoscaler's status ConfigMap that report activity
  (``clusterstate/api/types.go``: ``Health`` not ``Healthy``, ``ScaleUp`` other than
  ``NoActivity``/``NotNeeded``, ``ScaleDown`` ``CandidatesPresent``), cluster-wide and
  per node group, in both formats, at their ``lastTransitionTime`` (never
  ``lastProbeTime``, which moves every loop);
- a Karpenter NodeClaim's ``Launched``, ``Registered`` and ``Initialized`` conditions
  (``pkg/apis/v1/nodeclaim_status.go``).

ProvisioningRequest conditions are made events by ``topology.kube.autoscaler.provreq``.

Pure: no Django, no I/O, no clock.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import yaml

from topology.kube.autoscaler.provreq import rfc3339
from topology.kube.fields import ObjectContext, object_label
from topology.model.autoscalerstate import AutoscalerEvent

REPORTERS = ("cluster-autoscaler", "karpenter")
EVENT_SOURCE = "Event"
CA_STATUS_SOURCE = "cluster-autoscaler status"
NODECLAIM_SOURCE = "NodeClaim"
NODECLAIM_CONDITIONS = ("Launched", "Registered", "Initialized")
IDLE = {
    "Health": ("Healthy",),
    "ScaleUp": ("NoActivity", "NotNeeded"),
    "ScaleDown": ("NoCandidates",),
}
_GO_TIME = re.compile(r"(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d)(?:\.\d+)? ([+-]\d\d)(\d\d)")


# --- Events -------------------------------------------------------------------------------


def kube_event(collected: Any, ctx: ObjectContext, obj: dict[str, Any]) -> None:
    """One Event, core v1 or events.k8s.io/v1; kept only if an autoscaler reported it."""
    new_api = str(obj.get("apiVersion") or "").startswith("events.k8s.io/")
    source = ctx.mapping(obj.get("deprecatedSource" if new_api else "source"), "source")
    reporter = ctx.text(source.get("component"), "source.component") or ctx.text(
        obj.get("reportingController" if new_api else "reportingComponent"), "reportingComponent"
    )
    if reporter not in REPORTERS:
        collected.ignored[f"Event ({obj.get('apiVersion', '')}) not from an autoscaler"] += 1
        return
    about = ctx.mapping(obj.get("regarding" if new_api else "involvedObject"), "involvedObject")
    first = obj.get("eventTime") or obj.get(
        "deprecatedFirstTimestamp" if new_api else "firstTimestamp"
    )
    meta = ctx.mapping(obj.get("metadata"), "metadata")
    collected.autoscaler_events.append(
        AutoscalerEvent(
            source=f"{EVENT_SOURCE} ({reporter})",
            object=object_label(
                ctx.text(about.get("kind"), "involvedObject.kind") or "?",
                ctx.text(about.get("namespace"), "involvedObject.namespace"),
                ctx.text(about.get("name"), "involvedObject.name") or "?",
            ),
            reason=ctx.text(obj.get("reason"), "reason", required=True),
            message=ctx.text(obj.get("note" if new_api else "message"), "message"),
            type=ctx.text(obj.get("type"), "type"),
            time=rfc3339(ctx, first or meta.get("creationTimestamp"), "firstTimestamp"),
        )
    )


# --- Karpenter NodeClaim conditions ------------------------------------------------------------


def node_claim_events(ctx: ObjectContext, obj: dict[str, Any], pool: str) -> list[AutoscalerEvent]:
    status = ctx.mapping(obj.get("status"), "status")
    events = []
    for path, item in ctx.items(status.get("conditions"), "status.conditions"):
        kind = ctx.text(item.get("type"), f"{path}.type")
        if kind not in NODECLAIM_CONDITIONS:
            continue
        reason = ctx.text(item.get("reason"), f"{path}.reason")
        state = ctx.text(item.get("status"), f"{path}.status")
        events.append(
            AutoscalerEvent(
                source=NODECLAIM_SOURCE,
                object=ctx.object,
                reason=f"{kind}={state}" + (f" {reason}" if reason else ""),
                message=ctx.text(item.get("message"), f"{path}.message"),
                time=rfc3339(ctx, item.get("lastTransitionTime"), f"{path}.lastTransitionTime"),
                node_group=pool,
            )
        )
    return events


# --- cluster-autoscaler's status ConfigMap -------------------------------------------------------


def ca_status_events(ctx: ObjectContext, text: str) -> list[AutoscalerEvent]:
    """The activity the status reports, either format (see the module)."""
    if text.lstrip().startswith("Cluster-autoscaler status at"):
        return _text_events(ctx, text)
    document = yaml.safe_load(text)
    status = ctx.mapping(document, "data.status")
    events = _yaml_conditions(ctx, ctx.mapping(status.get("clusterWide"), "clusterWide"), "")
    for path, item in ctx.items(status.get("nodeGroups"), "data.status.nodeGroups"):
        name = ctx.text(item.get("name"), f"{path}.name")
        events += _yaml_conditions(ctx, item, name)
    return events


def _yaml_conditions(
    ctx: ObjectContext, block: Mapping[str, Any], group: str
) -> list[AutoscalerEvent]:
    events = []
    for key, kind in (("health", "Health"), ("scaleUp", "ScaleUp"), ("scaleDown", "ScaleDown")):
        condition = ctx.mapping(block.get(key), key)
        status = ctx.text(condition.get("status"), f"{key}.status")
        if not status or status in IDLE[kind]:
            continue
        backoff = ctx.mapping(condition.get("backoffInfo"), f"{key}.backoffInfo")
        detail = ": ".join(str(backoff[k]) for k in ("errorCode", "errorMessage") if backoff.get(k))
        events.append(
            _status_event(ctx, group, kind, status, detail, condition.get("lastTransitionTime"))
        )
    return events


def _text_events(ctx: ObjectContext, text: str) -> list[AutoscalerEvent]:
    """The readable format: ``Health:``/``ScaleUp:``/``ScaleDown:`` lines, each followed
    by its ``LastTransitionTime:`` where CA wrote one; ``Name:`` opens a node group."""
    events: list[AutoscalerEvent] = []
    group = ""
    current: list[str] = []  # kind, status, detail, time of the condition being read

    def flush() -> None:
        if current and current[1] not in IDLE[current[0]]:
            events.append(_status_event(ctx, group, *current))
        current.clear()

    for line in text.splitlines():
        label, _, rest = line.strip().partition(":")
        rest = rest.strip()
        if label == "Name":
            flush()
            group = rest
        elif label in IDLE:
            flush()
            status, _, detail = rest.partition(" ")
            current.extend((label, status, detail.strip(), ""))
        elif label == "LastTransitionTime" and current:
            current[3] = _go_time(rest)
    flush()
    return events


def _status_event(
    ctx: ObjectContext, group: str, kind: str, status: str, detail: str, when: Any
) -> AutoscalerEvent:
    return AutoscalerEvent(
        source=CA_STATUS_SOURCE,
        object=f"NodeGroup/{group}" if group else "cluster-wide",
        reason=f"{kind} {status}",
        message=detail,
        time=rfc3339(ctx, when, "lastTransitionTime"),
        node_group=group,
    )


def _go_time(text: str) -> str:
    """Go's ``time.Time.String()`` (``2018-07-25 00:38:36.41372897 +0000 UTC``) as RFC 3339."""
    found = _GO_TIME.search(text)
    if found is None:
        return ""
    day, clock, hours, minutes = found.groups()
    return f"{day}T{clock}{hours}:{minutes}"
