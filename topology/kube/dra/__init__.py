"""Dynamic Resource Allocation (``resource.k8s.io``): ResourceSlices (``slices``,
also device-plugin GPUs where no slice exists), ResourceClaims, templates and
DeviceClasses (``claims``), a claim's status (``status``), the supported CEL subset
(``cel``), and extended resources backed by DRA (``extended``).

Imports: ``topology.model`` and ``topology.kube`` helpers.
"""
