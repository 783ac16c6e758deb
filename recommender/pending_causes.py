"""The compact pending page's words: each workload's cause, its verdict in plain words, and
the scheduler reasons every row shares, said once (issue 34).

    verdict + reasons + disagreements + diagnosis ─► cause ("sharing", "topology", …)
                                                  └► one line: "Blocked: no node group
                                                     can give it a GPU share"

A cause is what holds the workload, named after what would have to change: a queue's
quota, a scheduling gate, GPU sharing, a GPU model, a group's maximum size, a topology
domain, a gang's members, or capacity. The first rule that applies wins, in the order of
``CAUSES`` (most specific first), so each workload is in exactly one group. The words come
from the evaluation's own reasons (``recommender.engine.autoscaler.explain``,
``recommender.engine.scheduler.diagnosis``, ``topology.kube.kueue.quotas``); nothing is guessed: a
workload no rule names stays under its verdict ("no capacity", "fits now" …).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from recommender.engine.scheduler.allocate import INSUFFICIENT_SHARE
from topology.kube.kueue.quotas import QUOTA_WAIT_PREFIX


@dataclass(frozen=True)
class Cause:
    key: str
    title: str
    explanation: str


CAUSES: tuple[Cause, ...] = (
    Cause("unsupported", "Not modelled", "It uses a rule the simulation does not model."),
    Cause(
        "sharing",
        "GPU sharing",
        "It asks for a share of a GPU, and no node (or node group) it may use gives that share.",
    ),
    Cause("gpu-model", "GPU model", "No node group offers the GPU model it asks for."),
    Cause(
        "group-max",
        "Node group at its maximum",
        "The node groups that could host it cannot grow any further.",
    ),
    Cause(
        "partial-gang",
        "Gang does not fit whole",
        "Only some of the gang's members fit; it runs all of them or none.",
    ),
    Cause(
        "topology",
        "Topology",
        "It needs its GPUs inside one domain (block, rack …), and no domain has them free now.",
    ),
    Cause("no-capacity", "No capacity", "No node fits it, and no scale-up is found that would."),
    Cause(
        "scale-up",
        "Waits for new nodes",
        "No node fits it now; the nodes the joint plan adds would.",
    ),
    Cause("reservation", "Reservation", "An idle reservation its team owns fits it."),
    Cause("preemption", "Preemption", "It fits once lower-priority pods are evicted."),
    Cause("quota", "Quota wait", "Its queue's quota holds it before the scheduler sees it."),
    Cause("gate", "Scheduling gate", "A scheduling gate holds it before the scheduler sees it."),
    Cause("fits-now", "Fits now", "It fits on the nodes there are now."),
)
CAUSE_BY_KEY = {cause.key: cause for cause in CAUSES}

BY_VERDICT = {"preempts": "preemption", "uses_reservation": "reservation", "runs_now": "fits-now"}
# a gang's sentence (recommender.engine.scheduler.diagnosis) naming a topology domain:
# "needs 16 GPUs in one block; …", "does not fit in any single block"
TOPOLOGY_WORDS = (" in one ", " any single ")
NO_GROUP_PREFIX = "no node group can host its pods: "
GPU_MODEL_PREFIX = "no node group offers GPU model"
GROUP_FULL_MARKERS = ("max size ", "the room left in node group ")
# kube-scheduler's aggregate: "0/N nodes are available: 3 reason, 2 other reason. Gang."
NODES_HEAD = re.compile(
    r"^(?P<head>0/\d+ nodes are available)(?::\s*(?P<parts>.*?))?\.(?:\s+(?P<tail>.*))?$", re.S
)
PART_SPLIT = re.compile(r", (?=\d+ )")  # a part starts with its node count


def cause_of(verdict: Any, diagnosis: dict[str, Any]) -> Cause:
    """The first cause (in ``CAUSES`` order) the verdict, its reasons and diagnosis name."""
    reasons = [r for r in verdict.reasons or [] if isinstance(r, str)]
    disagreements = set(verdict.disagreements or [])
    state = verdict.verdict
    if state == "waiting":
        quota = any(r.startswith(QUOTA_WAIT_PREFIX) for r in reasons)
        return CAUSE_BY_KEY["quota" if quota else "gate"]
    if str(diagnosis.get("summary") or "").startswith("unsupported:"):
        return CAUSE_BY_KEY["unsupported"]
    if state in BY_VERDICT:
        return CAUSE_BY_KEY[BY_VERDICT[state]]
    return CAUSE_BY_KEY[unplaced_cause(state, reasons, disagreements, diagnosis)]


def unplaced_cause(
    state: str, reasons: list[str], disagreements: set[str], diagnosis: dict[str, Any]
) -> str:
    """The cause of a workload that needs a scale-up (topology, else new nodes) or is
    blocked (what the joint plan's reason says must change first)."""
    gang = str(diagnosis.get("gangReason") or "")
    topology = "topology" in disagreements or any(word in gang for word in TOPOLOGY_WORDS)
    if state == "runs_after_scale_up":
        return "topology" if topology else "scale-up"
    if "sharing" in disagreements or any(INSUFFICIENT_SHARE in r for r in reasons):
        return "sharing"
    if any(r.startswith(GPU_MODEL_PREFIX) for r in reasons):
        return "gpu-model"
    if any(r.startswith(GROUP_FULL_MARKERS) for r in reasons):
        return "group-max"
    if "partial-gang" in disagreements:
        return "partial-gang"
    return "topology" if topology else "no-capacity"


def plain_verdict(verdict: Any, cause: Cause, diagnosis: dict[str, Any]) -> str:
    """The verdict in plain words, the action or the reason first: one short sentence."""
    reasons = [r for r in verdict.reasons or [] if isinstance(r, str)]
    joint = verdict.joint or {}
    state = verdict.verdict
    if state == "runs_now":
        return "Fits on the nodes there are now"
    if state == "preempts":
        return "Runs after preempting lower-priority pods"
    if state == "uses_reservation":
        names = ", ".join(joint.get("reservations") or []) or "an idle reservation"
        return f"Runs on reservation {names}"
    if state == "waiting":
        return sentence(reasons[0] if reasons else "held by a scheduling gate")
    if state == "runs_after_scale_up":
        return scale_up_words(joint, reasons)
    return "Blocked: " + blocked_words(reasons, cause, diagnosis)


def scale_up_words(joint: dict[str, Any], reasons: list[str]) -> str:
    nodes = joint.get("addNodes") or {}
    added = ", ".join(f"{count} × {group}" for group, count in nodes.items())
    if added:
        return f"Runs after adding {added}"
    return f"Runs after a scale-up: {reasons[0]}" if reasons else "Runs after a scale-up"


def blocked_words(reasons: list[str], cause: Cause, diagnosis: dict[str, Any]) -> str:
    """The first reason, shortened where the evaluation lists every group's rejection."""
    first = reasons[0] if reasons else ""
    if cause.key == "sharing" and (not first or first.startswith(NO_GROUP_PREFIX)):
        return "no node group can give it the GPU share it asks for"
    if first.startswith(NO_GROUP_PREFIX):
        return "no node group can host its pods"
    if first:
        return first
    return str(diagnosis.get("gangReason") or diagnosis.get("summary") or "no reason recorded")


def agreement(verdict: Any) -> str:
    """What a row with no disagreement class says of naive and joint: "" where both take
    the same action for this workload (the page says the glossary's "agree"), else how
    their actions for it differ. Both plans may still add the same nodes in all: a node
    one buys "for" a workload the other counts as room for another (cluster-autoscaler
    fits later pods on the nodes an earlier one asked for: ``estimator/binpacking``)."""
    naive, joint = verdict.naive or {}, verdict.joint or {}
    naive_nodes, joint_nodes = naive.get("addNodes") or {}, joint.get("addNodes") or {}
    stranded = naive.get("strandedGpus") or 0
    if stranded:
        return f"same verdict, but the naive nodes strand {stranded} GPU{'s' * (stranded != 1)}"
    if naive_nodes == joint_nodes and not joint.get("reservations"):
        return ""
    return (
        f"same verdict, different actions for it: the naive autoscaler {added_words(naive_nodes)}"
        f"{' (it counts room on nodes it adds for other workloads)' * (not naive_nodes)}, "
        f"the joint plan {added_words(joint_nodes, joint.get('reservations') or ())}"
    )


def added_words(nodes: dict[str, int], reservations: Sequence[str] = ()) -> str:
    parts = [f"adds {count} × {group}" for group, count in nodes.items()]
    parts += [f"reuses {name}" for name in reservations]
    return ", ".join(parts) or "adds nothing"


def sentence(text: str) -> str:
    return text[:1].upper() + text[1:]


def group_rejections(reasons: Sequence[str]) -> list[str]:
    """ "no node group can host its pods: g1: …; g2: …" → ["g1: …", "g2: …"] (else [])."""
    for reason in reasons:
        if isinstance(reason, str) and reason.startswith(NO_GROUP_PREFIX):
            return [part.strip() for part in reason[len(NO_GROUP_PREFIX) :].split("; ") if part]
    return []


@dataclass(frozen=True)
class SplitSummary:
    head: str  # "0/1216 nodes are available"
    parts: tuple[str, ...]  # "895 Insufficient cpu", …
    tail: str  # the gang's sentence, if any


def split_summary(summary: str) -> SplitSummary | None:
    """kube-scheduler's aggregate message in its pieces; None for any other text."""
    match = NODES_HEAD.match(summary.strip())
    if match is None:
        return None
    parts = tuple(PART_SPLIT.split(match["parts"])) if match["parts"] else ()
    return SplitSummary(head=match["head"], parts=parts, tail=match["tail"] or "")


def shared_parts(summaries: Iterable[str]) -> tuple[str, ...]:
    """The node reasons (count and words) every listed diagnosis has, in the first one's
    order: a cluster-wide taint refuses every workload on the same nodes, so the page
    says it once, not on every row. Fewer than two diagnoses with reasons: none."""
    split = [s for s in (split_summary(text) for text in summaries) if s and s.parts]
    if len(split) < 2:
        return ()
    common = set(split[0].parts).intersection(*(s.parts for s in split[1:]))
    return tuple(part for part in split[0].parts if part in common)


def without_parts(summary: str, shared: Sequence[str]) -> str:
    """The summary minus the shared parts, marked so no count seems to be lost."""
    split = split_summary(summary)
    if split is None or not shared or not set(shared) & set(split.parts):
        return summary
    kept = [part for part in split.parts if part not in shared]
    text = split.head + (": " + ", ".join(kept) if kept else "")
    text += " (and the reasons every workload shares, above)."
    return f"{text} {split.tail}".strip()
