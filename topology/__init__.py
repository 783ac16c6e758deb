"""Topology: the hardware model of a GPU cluster and everything that fills it.

::

    model/    the one hardware model: frozen dataclasses and pure helpers
       ▲      (hardware, devices, terms, podstate, mig, quantity, money, serialize)
    kube/     pure readers of Kubernetes objects → the model, one module or package
       ▲      per integration (core objects, DRA, Kueue, Karpenter, KAI, gangs,
       │      training jobs, the autoscaler's own objects, provider conventions)
    ingest/   where objects come from: list/watch of the API (kubesource, kubewatch),
       ▲      exported files, the openb trace, what a source answers (sourceread)
    Django    at this level: models, services (writes), selectors (reads), tasks,
              follow (``ingest --follow``), adapters, api, admin, filters, signals,
              charts (heatmap figures)

Each layer imports only those below it (``.importlinter``: topology-layers); model,
kube and ingest import no Django (pure-core). Bottom app: topology imports no other
app; ``recommender``, ``reservations`` and ``capacityweb`` may import it. The trace
replay, which binds pods through the engine, lives above it (``recommender.replay``)
and registers its source kind with ``topology.ingest.sources``.
"""
