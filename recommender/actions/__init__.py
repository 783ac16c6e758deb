"""What to apply, as the action the cluster's own autoscaler takes (pure).

``report`` (the evaluation's cards and their actions: ``actions_for``, ``report_json``,
``report_text``) chooses, per recommendation, among:

- ``provisioning``: cluster-autoscaler ProvisioningRequests, each with its PodTemplate;
- ``cloud_commands``: the gcloud / aws / eksctl / az command that resizes a managed
  pool, and the one that restores its bounds;
- ``karpenter``: a NodePool's ``spec.limits`` raised only where the plan needs it;
- ``reservation``: what makes the pods land in a reservation (never a size change);
- ``placement``: where a card's nodes must land, and what places them there.

Imports: ``topology.model`` and ``recommender.engine``; no Django.
"""
