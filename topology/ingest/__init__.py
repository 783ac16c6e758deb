"""Where snapshots come from, and what each source answers.

::

    sources.source_from_settings ─► KubeSource (kubesource: list, then watch, every
                                    │           kind of kubekinds; kubewatch keeps the
                                    │           watches open; kubeslim trims objects)
                                    ├► FilesSource (files: exported JSON/YAML, openb CSV)
                                    └► a registered kind (the trace replay,
                                       ``recommender.replay``)
                                    ═► SourceRead (sourceread) ─► topology.kube.parse

``trace`` reads the Alibaba openb trace into the model; ``replayspecs`` what a
replay adds (gangs, teams).

Imports: ``topology.model``, ``topology.kube`` and the ``kubernetes`` client; no
Django. Storing what a source read is ``topology.services``' job.
"""
