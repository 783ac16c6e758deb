"""The pure engine: plain Python over frozen dataclasses, no Django, no I/O, no clock.

Packages by meaning, each importing only the ones below it (import-linter
contracts ``engine-layers`` and ``engine-acyclic`` in ``.importlinter``)::

    evaluate    the joint evaluation: verdicts, disagreement classes, reports
       │
    autoscaler  plan types, cluster-autoscaler (naive), joint planner
       │
    scheduler   state, filters, scores, placement
       │
    costs       money per hour (a leaf: imports nothing of the engine)

Who may import the engine: the shell (topology's sources, recommender's
services and adapters, bench, tests). Outside itself the engine imports only
``topology.model.hardware`` and the pure helpers of ``topology`` (``mig``), and
``reservations.idle``; the ``pure-core`` contract holds them all to no Django.
"""
