"""Core Kubernetes objects: Nodes, Pods and what the default scheduler reads of them
(requests, affinity, preferred terms, status, owner, volumes, admission defaults,
disruption budgets), DaemonSets, the built-in and batch controllers that still want
pods, and topology levels defined by existing objects.

Imports: ``topology.model``, ``topology.kube`` helpers and integrations (DRA for
node devices, KAI for pod shares, training jobs for controllers).
"""
