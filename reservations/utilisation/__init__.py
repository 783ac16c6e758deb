"""Allocated but idle: GPU utilisation from DCGM series, through Prometheus.

``timelines`` (pure: DCGM series → per-GPU timelines and their idle runs), ``dcgm``
(pure: timelines joined to the model and priced → report), ``prometheus`` (the range
query client), ``demo`` (pure: the demo's series), ``charts`` (pure: figures); then
Django: ``services`` (fetch and store), ``selectors`` (reads), ``api``, ``views``,
``admin``, ``digest`` (the digest's section), ``metrics``.

Imports: ``topology`` and ``reservations.idle``; the pure modules no Django.
"""
