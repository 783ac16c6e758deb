"""The gcloud checks (tests/gcloud_checks.py) pass the GKE commands the actions emit and
refuse the commands gcloud would refuse; worked from the GKE how-tos the checks name."""

import pytest

from recommender.actions.cloud_commands import PoolResize, grow, restore
from tests.gcloud_checks import assert_gcloud_runs

# a GKE pool cluster-autoscaler grows: 3..10 nodes now 5, one card wants 8
AUTOSCALED = PoolResize("gke", "gpu-pool", 3, 10, 5, 8, autoscaled=True)
# a pool without autoscaling: resized, per zone
FIXED = PoolResize("gke", "gpu-pool", 5, 5, 5, 8, autoscaled=False)


def test_the_grow_and_restore_of_an_autoscaled_pool_pass():
    assert_gcloud_runs(grow(AUTOSCALED))
    assert_gcloud_runs(restore(AUTOSCALED))
    # the grow raises the minimum to the wanted 8 (max stays 10), the restore puts 3..10
    assert "--total-min-nodes 8 --total-max-nodes 10" in grow(AUTOSCALED)
    assert "--total-min-nodes 3 --total-max-nodes 10" in restore(AUTOSCALED)


def test_the_resize_of_a_pool_without_autoscaling_passes():
    assert_gcloud_runs(grow(FIXED))
    assert_gcloud_runs(restore(FIXED))


POOL = "gcloud container node-pools update gpu-pool --cluster c --location us-central1"


@pytest.mark.parametrize(
    ("command", "said"),
    [
        (f"{POOL} --enable-autoscaling --total-min-nodes 2 --max-nodes 4", "mutually exclusive"),
        (f"{POOL} --enable-autoscaling --total-min-nodes 5 --total-max-nodes 4", "above max"),
        (f"{POOL} --total-min-nodes 1 --total-max-nodes 4", "without --enable-autoscaling"),
        (f"{POOL} --enable-autoscaling --total-max-nodes 4", "both"),
        (f"{POOL} --enable-autoscaling --total-min-nodes -1 --total-max-nodes 4", "whole number"),
        (f"{POOL} --nodes 4", "not a flag"),
        ("gcloud container node-pools update gpu-pool --cluster c --enable-autoscaling", "one of"),
        ("gcloud container clusters resize c --location l --node-pool p --num-nodes x", "whole"),
        ("gcloud container clusters resize c --location l --num-nodes 3", "--node-pool"),
        ("gcloud compute instances list", "not a gcloud container command"),
    ],
)
def test_a_command_gcloud_refuses_fails(command, said):
    with pytest.raises(AssertionError, match=said):
        assert_gcloud_runs(command)
