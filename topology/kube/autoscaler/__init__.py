"""What the autoscalers say of themselves: cluster-autoscaler's status ConfigMap
(``status``), ProvisioningRequests (``provreq``), and the Events cluster-autoscaler
and Karpenter record (``events``).

Imports: ``topology.model`` and ``topology.kube`` helpers.
"""
