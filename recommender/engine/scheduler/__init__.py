"""The scheduler simulation: where would pending work land? (kube-scheduler's framework)

What lives here: the working state over the hardware model (``records``,
``state``: what is free where, copy-on-write), device choice (``allocate``:
GPU counts, shares, partitions, DRA claims), the demand (``workloads``: pods
and gangs; ``demand``: what a pod weighs in physical GPUs, and what a node
advertises, as the device plugin counts it), the Filter rules (``filters``,
registered with their kind), the Score rules and policies (``scores``, ``fgd``), failure reasons
(``diagnosis``), the placement algorithm (``placement``, per-pod choice in
``pick``, retries in ``requeue``, preemption in ``preemption``, ``window`` and
``bindings``) and what keeps it fast without changing a decision (``memo``,
``caches``), and the trace replay's first-fit binding (``first_fit``).

Who may import it: the autoscaler and evaluate packages of the engine, and
the shell (topology, recommender, bench, tests). It imports nothing of
theirs: no autoscaler, no evaluation, no Django.
"""
