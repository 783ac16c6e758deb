"""Queues and quotas: work that waits for quota, not for nodes.

``flavors`` (Kueue ResourceFlavors: what admission into a flavor adds to a pod set),
``queues`` (Kueue ClusterQueues and LocalQueues, Volcano and KAI queues as read, and
which queue a pod is in), ``quotas`` (who waits for quota in them, cohorts included).

Imports: ``topology.model`` and ``topology.kube`` helpers.
"""
