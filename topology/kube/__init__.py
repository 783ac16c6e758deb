"""Pure readers of Kubernetes objects (dicts, as the API serves them) → the model.

Where to look:

- ``parse``: ``parse_objects``, the dispatch of every kind to its reader, and the
  assembly of one Snapshot; ``fields`` (typed, error-naming field access, the one
  project error type ``KubeError``), ``names``, ``parsecache`` (what the last parse
  read of each Node and Pod), ``summary`` (read, found, ignored, unsupported);
- ``core/``: Nodes, Pods (requests, affinity, status, owner, volumes, admission),
  PodDisruptionBudgets, DaemonSets, the controllers that still want pods (Jobs,
  Deployments, StatefulSets, JobSet, LeaderWorkerSet, Volcano Jobs), topology levels;
- one module or package per integration: ``dra/`` (ResourceSlices, claims, CEL,
  extended resources), ``kueue/`` (ResourceFlavors, queues and quotas),
  ``karpenter``, ``kai`` (KAI's GPU-sharing annotations), ``gangs`` (PodGroups and
  Workloads), ``training`` (Kubeflow training jobs), ``autoscaler/``
  (cluster-autoscaler's status ConfigMap, ProvisioningRequests, Events),
  ``providers/`` (GKE, EKS, AKS conventions: GPU labels, prices, cloud reservation
  exports), ``discovery`` (node groups found from all of these), ``project``
  (capacityweb.io kinds).

Each reader names the upstream source it follows. A new integration is a module (or
package) here plus its entry in ``parse``'s dispatch and, for the live source, in
``topology.ingest.kubekinds``.

Imports: ``topology.model`` and each other; no Django, no I/O, no clock.
"""
