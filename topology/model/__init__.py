"""The one hardware model both control loops read, and its pure helpers.

``hardware`` (Cluster, Node, Pod, NodeGroup, Reservation, Snapshot; it re-exports
``devices``, ``terms``, ``podstate`` and ``autoscalerstate``), ``mig`` (MIG profile
tables), ``quantity`` (Kubernetes quantities, exactly), ``money`` (one format per
currency), ``serialize`` (Cluster ⇄ JSON-ready dict).

Imports: the standard library and each other only; no Kubernetes object is read
here (that is ``topology.kube``), no Django, no I/O, no clock.
"""
