"""The model edits a what-if and the relaxations make: on a copy, or refused naming the field."""

from dataclasses import replace

import pytest

from recommender.engine.evaluate.edits import (
    RAISE_MAX,
    TOPOLOGY,
    Edit,
    EditError,
    apply,
    edit_from,
)
from tests.builders import make_group
from tests.engine.test_placement import H100, gang_cluster
from topology.model.hardware import Cluster


def _with_group() -> Cluster:
    group = (
        make_group("pool", H100.named("template").build())
        .selector({"pool": "x"})
        .size(0, 2)
        .price(1.0)
        .placement({"b": "b1"}, max_new_nodes=1)
        .build()
    )
    return replace(gang_cluster(members=2, gpus_each=4), node_groups=(group,))


def test_it_refuses_an_unknown_kind_naming_the_field() -> None:
    with pytest.raises(EditError) as error:
        edit_from({"kind": "more-gpus"})
    assert error.value.field == "kind"


def test_it_refuses_a_raise_of_nothing_naming_the_amount() -> None:
    with pytest.raises(EditError) as error:
        edit_from({"kind": RAISE_MAX, "target": "pool", "amount": "0"})
    assert (error.value.field, error.value.reason) == (
        "amount",
        "must be at least 1 to raise a max size",
    )


def test_it_raises_the_max_size_and_every_domain_slot() -> None:
    edited = apply(_with_group(), "team-a/job", Edit(RAISE_MAX, "pool", 3))
    group = edited.node_groups[0]
    assert (group.max_size, group.placements[0].max_new_nodes) == (5, 4)


def test_it_leaves_the_cluster_given_as_it_was() -> None:
    cluster = _with_group()
    apply(cluster, "team-a/job", Edit(RAISE_MAX, "pool", 3))
    assert cluster.node_groups[0].max_size == 2


def test_it_reads_a_topology_level_by_its_name() -> None:
    edited = apply(_with_group(), "team-a/job", Edit(TOPOLOGY, "host"))
    pending = [p.required_topology for p in edited.pods if p.node_name is None]
    assert pending == ["kubernetes.io/hostname", "kubernetes.io/hostname"]
    assert edited.gangs[0].required_topology == "kubernetes.io/hostname"


def test_it_refuses_an_unknown_group_naming_the_known_ones() -> None:
    with pytest.raises(EditError) as error:
        apply(_with_group(), "team-a/job", Edit(RAISE_MAX, "h100", 1))
    assert str(error.value) == "target: no node group 'h100' (known: pool)"
