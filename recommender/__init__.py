"""Recommender: the joint scheduler + autoscaler evaluation and its live views.

What lives here: ``engine/`` (pure: placement, scale-up, diagnosis, evaluate),
the stored evaluation (models Evaluation, Recommendation, WorkloadVerdict,
EvaluatedNode), ``services.store_evaluation`` and the evaluate task, the
selectors (evaluations, the cached heatmap payload), ``events`` (the only sender
to channel groups), consumers and routing, the shared cluster page context and
the pending/recommendations pages, the evaluations/recommendations/
pending-workloads/nodes API, the ``ingest`` and ``replay`` commands (ingest,
then evaluate in-process), and ``signals.evaluation_stored`` for the rows the
apps above derive from an evaluation.

Middle layer: it imports ``topology`` (and the pure ``reservations.idle`` from
its engine), never ``reservations`` or ``capacityweb``'s pages. ``reservations``
and ``capacityweb`` may import it.
"""
