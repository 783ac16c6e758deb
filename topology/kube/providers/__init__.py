"""Cloud provider conventions: GKE's GPU node labels (``gke``), the bundled on-demand
price table (``prices``, ``topology/data/prices.yaml``), and reservations from the
clouds' own exports (``cloud_reservations``).

Imports: ``topology.model`` and ``topology.kube`` helpers.
"""
