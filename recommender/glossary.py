"""The dashboard's terms, defined once: hover text on every page (``{% term %}``) and /help/.

Each definition says what the simulation means by the word, in a sentence or two; the
long form of each mechanism is docs/FIDELITY.md.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Term:
    key: str
    label: str
    text: str


TERMS: dict[str, Term] = {
    term.key: term
    for term in (
        Term(
            "naive",
            "naive autoscaler",
            "The modelled cluster-autoscaler: it counts each pending pod's requests against a "
            "node group's template, pod by pod, and buys nodes for what it believes fits, "
            "without the scheduler's topology, gang or device rules.",
        ),
        Term(
            "joint",
            "joint plan",
            "Scheduler and autoscaler simulated together on one hardware model: reuse idle "
            "reservations first, then the cheapest nodes where the whole workload can "
            "actually be placed (its gang, topology level and devices).",
        ),
        Term(
            "allocated",
            "allocated",
            "A GPU counted as allocated when any running pod holds a share or partition of "
            "it, in whole GPUs: a GPU a 0.2-GPU pod uses is allocated, never 0.8 free. The "
            "overview, the topology bars, the API's gpusAllocated and the CSVs count it so.",
        ),
        Term(
            "free",
            "free",
            "A GPU no pod holds any share of and no reservation covers, in whole GPUs. "
            "Unused shares of allocated GPUs are not free GPUs.",
        ),
        Term(
            "idle-reserved",
            "idle reserved",
            "A reserved GPU (covered by a reservation active now) that no pod holds any "
            "share of, in whole GPUs, plus the GPUs of reserved nodes paid for but not "
            "started (these have no cell on the heatmap, so the topology bars show fewer).",
        ),
        Term(
            "waste",
            "waste",
            "Money per hour paid for GPUs that do no work: idle reserved GPUs at their "
            "reservation's price plus the stranded nodes the naive autoscaler would buy.",
        ),
        Term(
            "naive-cost",
            "naive autoscaler's nodes",
            "Money per hour of every node the naive autoscaler would add for the pending "
            "workloads, useful or not.",
        ),
        Term(
            "joint-cost",
            "joint plan's nodes",
            "Money per hour of the nodes the joint plan would add (reservations reused first "
            "cost nothing extra).",
        ),
        Term(
            "stranded-cost",
            "stranded nodes",
            "Money per hour of the nodes the naive autoscaler would add that no pending pod "
            "can use: the part of the naive autoscaler's nodes that is waste.",
        ),
        Term(
            "stranded",
            "stranded",
            "GPUs the naive autoscaler would buy that no pending pod can use: the nodes land "
            "in the wrong domain, hold only part of a gang, or have the wrong device. "
            "You pay for them and the workload still waits.",
        ),
        Term(
            "agree",
            "agree",
            "The naive autoscaler and the joint plan take the same action for this workload. "
            "The naive action may still strand GPUs (bought for a gang that cannot start).",
        ),
        Term(
            "never-scales",
            "never-scales",
            "The naive autoscaler adds nothing for this workload (it believes it fits, rides "
            "on nodes bought for another, or that nothing helps) while the scheduler cannot "
            "place it: it would wait for ever.",
        ),
        Term(
            "topology",
            "topology",
            "The workload needs all its pods in one domain of a required level (block, rack); "
            "the naive autoscaler's nodes land where it cannot use them.",
        ),
        Term(
            "reservation",
            "reservation",
            "The naive autoscaler buys new nodes while reserved capacity the team already "
            "pays for (idle reserved nodes, or paid capacity not yet started) could run it.",
        ),
        Term(
            "partial-gang",
            "partial-gang",
            "The naive autoscaler buys nodes for some members of a gang; a gang starts only "
            "when all its members (minMember) fit, so it still cannot start.",
        ),
        Term(
            "sharing",
            "sharing",
            "The pods take GPU shares or MIG partitions: counting whole devices buys a "
            "different number of GPUs than the joint plan (over or under).",
        ),
        Term(
            "device-model",
            "device-model",
            "The naive autoscaler's template matched by GPU count, yet the scheduler rejects "
            "the pods on it: wrong GPU model, memory, or PCIe root of a device claim.",
        ),
        Term(
            "quota",
            "quota",
            "The workload waits for queue quota (Kueue, KAI): no node would start it before "
            "its queue admits it, and the naive autoscaler does not know that.",
        ),
        Term(
            "waiting",
            "waiting",
            "The pods carry a scheduling gate (or wait for quota admission): the scheduler "
            "does not try them yet, so no node would help until the gate is lifted.",
        ),
        Term(
            "preempts",
            "preempts",
            "Runs after preempting lower-priority pods: kube-scheduler's DefaultPreemption "
            "evicts them; no node is bought.",
        ),
        Term(
            "unsupported",
            "not modelled",
            "Something the simulation does not model (a field, filter or object kind). A "
            "workload depending on it is shown blocked as 'unsupported', never guessed to run.",
        ),
        Term(
            "model-gap",
            "model gap",
            "Our simulation says the workload runs now but the real kube-scheduler reported "
            "it Unschedulable (PodScheduled=False) after the snapshot's last change: a rule "
            "we do not model yet.",
        ),
        Term(
            "gang",
            "gang",
            "Pods that must start together (a PodGroup's minMember): the scheduler places "
            "all of them or none.",
        ),
    )
}


def definition(key: str) -> Term:
    """The term named ``key``; an unknown key is a programming error (KeyError)."""
    return TERMS[key]
