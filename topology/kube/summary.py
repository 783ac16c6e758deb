"""What a snapshot held: read, found, ignored, unsupported (nothing dropped silently).

Pure. ``snapshot_summary`` turns a parsed Snapshot (plus files that could not
be read at all) into a JSON-ready dict; ``render_summary`` into the text the
``evaluate`` command prints before the evaluation. Keys camelCase, lists
sorted, so the same input gives the same bytes.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from topology.kube.kueue.quotas import amount_text
from topology.model.hardware import Gang, ModelError, Snapshot


def snapshot_summary(snapshot: Snapshot, refused: Sequence[ModelError] = ()) -> dict[str, Any]:
    """``ignored`` and ``unsupported`` as the output contract has them; the rest under ``input``."""
    cluster = snapshot.cluster
    pending = [p for p in cluster.pods if p.node_name is None]
    synthesized = Counter(p.synthesized_by for p in cluster.pods if p.synthesized_by)
    names: dict[str, list[str]] = {}
    for pod in cluster.pods:
        if pod.synthesized_by:
            names.setdefault(pod.synthesized_by, []).append(f"{pod.namespace}/{pod.name}")
    return {
        "ignored": [{"kind": k, "count": n} for k, n in sorted(snapshot.ignored.items())],
        "unsupported": [
            {"object": f"Pod/{pod.namespace}/{pod.name}", "field": "", "reason": reason}
            for pod in sorted(cluster.pods, key=lambda p: (p.namespace, p.name))
            for reason in pod.unsupported
        ],
        "input": {
            "read": [{"kind": k, "count": n} for k, n in sorted(snapshot.read.items())],
            "rejected": [str(e) for e in [*refused, *snapshot.errors]],
            "nodes": len(cluster.nodes),
            "pods": {"bound": len(cluster.pods) - len(pending), "pending": len(pending)},
            "synthesized": [
                {"controller": c, "pods": n, "podNames": names[c]}
                for c, n in sorted(synthesized.items())
            ],
            "gangs": [_gang(g) for g in cluster.gangs],
            "queues": [
                {
                    "name": q.name,
                    "limit": dict(sorted(q.limit.items())),
                    "localQueues": list(q.local_queues),
                }
                for q in cluster.queues
                if not q.name.endswith("#quota")
            ],
            "topology": {
                "source": cluster.topology_source,
                "levels": [level.key for level in cluster.topology.levels],
            },
            "notes": list(snapshot.notes),
        },
    }


def _gang(gang: Gang) -> dict[str, Any]:
    return {
        "name": gang.key,
        "minMember": gang.min_member,
        **({"queue": gang.queue} if gang.queue else {}),
    }


def render_summary(summary: dict[str, Any]) -> str:
    found = summary["input"]
    lines = ["== Read =="]
    lines.append("read: " + (_counts(found["read"]) or "no object this tool models"))
    lines.append("ignored (kinds not modelled): " + (_counts(summary["ignored"]) or "none"))
    if found["rejected"]:
        lines.append(f"rejected: {len(found['rejected'])} file(s)/object(s), listed on stderr")
    pods = found["pods"]
    lines.append(
        f"found: {found['nodes']} nodes, {pods['bound']} bound pods, {pods['pending']} pending"
    )
    for item in found["synthesized"]:
        lines.append(f"  {item['pods']} pending pod(s) not yet created by {item['controller']}")
    for gang in found["gangs"]:
        queue = f" in queue {gang['queue']}" if "queue" in gang else ""
        lines.append(f"gang {gang['name']}: minMember {gang['minMember']}{queue}")
    for queue in found["queues"]:
        limits = ", ".join(f"{amount_text(k, v)} {k}" for k, v in queue["limit"].items())
        local = f" (LocalQueues {', '.join(queue['localQueues'])})" if queue["localQueues"] else ""
        lines.append(f"queue {queue['name']}: {limits or 'no limit'}{local}")
    topology = found["topology"]
    lines.append(f"topology from {topology['source']}: {' > '.join(topology['levels'])}")
    by_reason: dict[str, list[str]] = {}
    for item in summary["unsupported"]:
        by_reason.setdefault(item["reason"], []).append(item["object"])
    for reason, objects in sorted(by_reason.items()):
        lines.append(f"unsupported: {reason} ({len(objects)} object(s), e.g. {objects[0]})")
    lines += [f"note: {note}" for note in found["notes"]]
    return "\n".join(lines) + "\n\n"


def _counts(items: list[dict[str, Any]]) -> str:
    return ", ".join(f"{item['count']} {item['kind']}" for item in items)
