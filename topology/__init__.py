"""Topology: the hardware model of a GPU cluster and everything that fills it.

What lives here: the pure model and parsers (``hardware``, ``kube``, ``trace``,
``mig``, ``dra``, ``cel``, ``quantity``), the sources (live API, files, trace
replay), the ingest (models Cluster/Snapshot/NodeGroup, ``services``, ``tasks``),
``selectors`` over clusters and snapshots, ``charts`` (heatmap figures), the
clusters/snapshots/node-groups API and ``signals``: how it tells the apps above
it that a snapshot was ingested, and asks them for the configuration they store.

Bottom layer: it imports no other app (``.importlinter``, app-layers; its one
exception is replay binding pods through the pure engine). ``recommender``,
``reservations`` and ``capacityweb`` may import it.
"""
