"""Move instead of buy: which running pods to move so that blocked work runs now.

::

    drainability  may this pod be evicted and recreated elsewhere? cluster-autoscaler's
                  drain rules (simulator/drainability/rules), one function each, plus
                  the move's own: a controller recreates it, at or below a priority,
                  not a member of a running gang
    search        per blocked workload: the fewest GPUs, then pods, to move so that it
                  runs now and every moved pod lands elsewhere, verified by placement
    reconcile     running pods on on-demand nodes that fit in idle capacity their own
                  team reserved: the emptied node's price saved
    scaledown     when the autoscaler removes the emptied node: cluster-autoscaler's
                  scale-down flags from its command line, else its defaults (not read)
    report        ``moves_for(cluster, evaluation)``: the plans beside the buy plan,
                  priced, with the kubectl actions and their undo

Layer: above ``autoscaler`` and ``scheduler`` (it runs the scheduler simulation and
reads the plan's verdicts), below ``evaluate``, which may call it; it never imports
``evaluate`` (``report`` reads the evaluation through a Protocol). Pure: no Django,
no I/O, no clock.
"""
