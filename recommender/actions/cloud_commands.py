"""The cloud CLI commands that resize a managed node pool, and the ones that undo them.

Each command carries every argument its CLI requires, so it can be pasted as it is
(the cluster, location and resource group are variables: they are not in a snapshot):

    eksctl  eksctl scale nodegroup --cluster --name --nodes --nodes-min --nodes-max (a
         self-managed node group eksctl created: its nodes carry only the label
         alpha.eksctl.io/nodegroup-name; the same min <= desired <= max rule)
    eks  aws eks update-nodegroup-config --cluster-name --nodegroup-name
             --scaling-config minSize=,maxSize=,desiredSize=
         EKS API NodegroupScalingConfig: minSize <= desiredSize <= maxSize, so a raised
         minSize always comes with the desiredSize it implies (the group's desired size
         below a new minSize is rejected: "Minimum capacity N can't be greater than
         desired size M");
    gke  gcloud container node-pools update NAME --cluster --location --enable-autoscaling
             --total-min-nodes --total-max-nodes      (autoscaled pool)
         gcloud container clusters resize CLUSTER --location --node-pool --num-nodes
    aks  az aks nodepool update --resource-group --cluster-name --name
             --update-cluster-autoscaler --min-count --max-count   (autoscaled pool)
         az aks nodepool scale --resource-group --cluster-name --name --node-count

A raised minimum alone does not add a node under cluster-autoscaler: upstream scales
a group up to its minimum only with ``--enforce-node-group-min-size`` (default false,
kubernetes/autoscaler ``cluster-autoscaler/config/flags/flags.go``). So under
cluster-autoscaler the EKS grow step sets the size itself (``desiredSize``) and raises
the minimum so the autoscaler does not remove the nodes before the pods land. GKE's
``clusters resize --num-nodes`` counts nodes per zone of a regional pool (pasting the
pool's total there would buy one total per zone) and AKS refuses a manual scale of an
autoscaled pool, so for those the raised minimum is the lever, with a comment saying
when it adds nodes (the ProvisioningRequest is the alternative that always does).

Every grow has its ``restore``: the previous bounds (and size, where the grow set it),
to run once the work is done.

Pure: no Django, no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass

CLUSTER_VARIABLE = "$CLUSTER"  # the cloud's name of the cluster: not in the snapshot
LOCATION_VARIABLE = "$LOCATION"  # the GKE cluster's region or zone: not in the snapshot either
RESOURCE_GROUP_VARIABLE = "$RESOURCE_GROUP"  # the AKS cluster's resource group
ENFORCE_MIN_NOTE = (
    "# cluster-autoscaler grows a pool to a raised minimum only when it runs with "
    "--enforce-node-group-min-size=true (upstream default false)"
)


@dataclass(frozen=True, slots=True)
class PoolResize:
    """One managed pool's bounds and size now, and the size one card wants."""

    pool_kind: str  # gke | eks | eksctl | aks
    pool: str
    min_size: int
    max_size: int
    size: int  # now (registered members, or the autoscaler's target when larger)
    wanted: int
    autoscaled: bool  # cluster-autoscaler manages the pool

    @property
    def top(self) -> int:
        return max(self.wanted, self.max_size)


def grow(resize: PoolResize) -> str:
    """The command(s) that take the pool to ``wanted`` nodes."""
    low = resize.wanted if resize.autoscaled else resize.min_size
    if resize.pool_kind == "eksctl":
        return _eksctl(resize, low, resize.top, resize.wanted)
    if resize.pool_kind == "eks":
        return _eks(resize, low, resize.top, resize.wanted)
    if resize.pool_kind == "gke":
        if not resize.autoscaled:
            return _gke_resize(resize, resize.wanted)
        return ENFORCE_MIN_NOTE + "\n" + _gke_bounds(resize, low, resize.top)
    if resize.autoscaled:
        return ENFORCE_MIN_NOTE + "\n" + _aks_bounds(resize, low, resize.top)
    return _aks_scale(resize, resize.wanted)


def restore(resize: PoolResize) -> str:
    """The command(s) that put the pool's previous bounds back (and its size, where the
    grow step set it and nothing else will bring it back)."""
    if resize.pool_kind == "eksctl":
        sets_size = not resize.autoscaled or resize.wanted > resize.max_size
        return _eksctl(resize, resize.min_size, resize.max_size, resize.size if sets_size else None)
    if resize.pool_kind == "eks":
        # a lowered maxSize below the size reached needs the size with it
        sets_size = not resize.autoscaled or resize.wanted > resize.max_size
        return _eks(resize, resize.min_size, resize.max_size, resize.size if sets_size else None)
    if resize.pool_kind == "gke":
        if not resize.autoscaled:
            return _gke_resize(resize, resize.size)
        return _gke_bounds(resize, resize.min_size, resize.max_size)
    if resize.autoscaled:
        return _aks_bounds(resize, resize.min_size, resize.max_size)
    return _aks_scale(resize, resize.size)


def _eks(resize: PoolResize, low: int, high: int, desired: int | None) -> str:
    size = f",desiredSize={desired}" if desired is not None else ""
    return (
        f"aws eks update-nodegroup-config --cluster-name {CLUSTER_VARIABLE} "
        f"--nodegroup-name {resize.pool} --scaling-config minSize={low},maxSize={high}{size}\n"
    )


def _eksctl(resize: PoolResize, low: int, high: int, desired: int | None) -> str:
    size = f" --nodes {desired}" if desired is not None else ""
    return (
        f"eksctl scale nodegroup --cluster {CLUSTER_VARIABLE} --name {resize.pool}{size} "
        f"--nodes-min {low} --nodes-max {high}\n"
    )


def _gke_bounds(resize: PoolResize, low: int, high: int) -> str:
    return (
        f"gcloud container node-pools update {resize.pool} --cluster {CLUSTER_VARIABLE} "
        f"--location {LOCATION_VARIABLE} --enable-autoscaling "
        f"--total-min-nodes {low} --total-max-nodes {high}\n"
    )


def _gke_resize(resize: PoolResize, nodes: int) -> str:
    return (
        f"gcloud container clusters resize {CLUSTER_VARIABLE} --location "
        f"{LOCATION_VARIABLE} --node-pool {resize.pool} --num-nodes {nodes}"
        "  # per zone in a regional cluster\n"
    )


def _aks_bounds(resize: PoolResize, low: int, high: int) -> str:
    return (
        f"az aks nodepool update --resource-group {RESOURCE_GROUP_VARIABLE} --cluster-name "
        f"{CLUSTER_VARIABLE} --name {resize.pool} --update-cluster-autoscaler "
        f"--min-count {low} --max-count {high}\n"
    )


def _aks_scale(resize: PoolResize, nodes: int) -> str:
    return (
        f"az aks nodepool scale --resource-group {RESOURCE_GROUP_VARIABLE} --cluster-name "
        f"{CLUSTER_VARIABLE} --name {resize.pool} --node-count {nodes}\n"
    )
