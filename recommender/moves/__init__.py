"""Move instead of buy, the Django side of ``recommender.engine.moves``: the deferred
answer worked out by a worker and stored per evaluation (``reports``), its API and CSV
(``api``) and its ``/metrics`` gauges (``metrics``).
"""
