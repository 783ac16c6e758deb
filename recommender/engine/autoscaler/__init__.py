"""The autoscaler simulation: what should be added so that pending work runs?

What lives here: ``plan`` (verdicts, plans, node additions: the words both
modes share), one module per modelled autoscaler (``cluster_autoscaler``: the
naive, count-based one, as its code does it; ``karpenter``: Karpenter's
provisioner), ours (``joint``: the planner,
``options``: slots and the option search, ``mixed``: nodes from several
slots, ``explain``: why no option helps) and ``scale_up``, which picks the
mode. Money figures come from ``recommender.engine.costs``.

Who may import it: ``recommender.engine.evaluate`` and the shell (bench,
tests). It imports the scheduler package (every "would it run?" is a call to
the same ``place_one``), never the evaluation.
"""
