"""The joint evaluation: scheduler, naive and joint autoscaler side by side.

What lives here: ``evaluation`` (the immutable ``Evaluation`` and its
schemaVersion 1 JSON), ``classes`` (why naive and joint disagree),
``fragmentation`` and ``heatmap`` (figures per node and domain), ``report``
(text and YAML renderings for the CLI and recommendations).

Who may import it: the shell (recommender's services, adapters and CLI,
bench, tests). It imports the autoscaler and scheduler packages; nothing in
the engine imports it.
"""
