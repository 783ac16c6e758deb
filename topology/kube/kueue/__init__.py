"""Kueue: ResourceFlavors (``flavors``) and queues with their quotas (``quotas``,
also Volcano and KAI queues): work that waits for quota, not for nodes.

Imports: ``topology.model`` and ``topology.kube`` helpers.
"""
