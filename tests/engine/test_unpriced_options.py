"""The joint plan never prefers a node group because its price is unknown.

An unpriced group counts as 0/h in the plans' sums (it reads "price unknown"), so the
cheapest-option search took it over any priced group. cluster-autoscaler's price
expander (``expander/price/price.go`` ``BestOption``) skips an option whose
``NodePrice`` fails ("Failed to calculate node price ... continue"): a priced option
always wins over an unpriced one. When every option is unpriced, the joint plan orders
them as the default expander does without a price: least-waste
(``expander/waste/waste.go``: unused CPU plus unused memory fraction of the new nodes),
then fewest nodes, then group name.
"""

from tests.builders.objects import GPU, node_group_object, pod_object
from tests.engine.test_actions import evaluated, sourced

POD_CPU, POD_MEMORY = "16", "64Gi"


JOB = pod_object("ml", "job").requests({GPU: "8"}, cpu=POD_CPU, memory=POD_MEMORY)


def group(name, *, price=None, cpu="96", memory="768Gi"):
    """An 8-GPU group of 0 to 4 nodes, selected by its pool label; unpriced unless said."""
    allocatable = {"cpu": cpu, "memory": memory, "pods": "110", GPU: "8"}
    found = node_group_object(name).selector({"pool": name}).size(0, 4)
    found = found.template({"pool": name}, allocatable)
    return (found if price is None else found.price(price)).dict()


def joint_choice(*groups):
    _snapshot, evaluation = evaluated(sourced(*groups, JOB.dict()))
    (workload,) = evaluation.workloads
    return dict(workload.joint.add_nodes), workload.joint.reasons


def test_it_buys_the_priced_group_over_an_unpriced_one_that_sorts_first():
    # a-spot: no price (0 in the sums, first by name); b-h100: 40/h. One 8-GPU node of
    # either runs the pod: the priced one is chosen, the unknown price never wins.
    add_nodes, _reasons = joint_choice(group("a-spot"), group("b-h100", price=40.0))

    assert add_nodes == {"b-h100": 1}


def test_it_orders_unpriced_groups_by_least_waste_when_none_has_a_price():
    # pod: 16 CPU, 64Gi. a-big (208 CPU, 1800Gi): waste 192/208 + 1736/1800 = 1.887;
    # b-small (32 CPU, 256Gi): 16/32 + 192/256 = 1.25. least-waste picks b-small,
    # although a-big comes first by name (the order a price of 0 left them in).
    add_nodes, _reasons = joint_choice(
        group("a-big", cpu="208", memory="1800Gi"), group("b-small", cpu="32", memory="256Gi")
    )

    assert add_nodes == {"b-small": 1}


def test_it_says_why_an_unpriced_group_was_chosen():
    _add_nodes, reasons = joint_choice(
        group("a-big", cpu="208", memory="1800Gi"), group("b-small", cpu="32", memory="256Gi")
    )

    assert reasons[0] == (
        "add 1 node(s) of group b-small (price unknown; no priced option runs it, "
        "so chosen as the least-waste expander would)"
    )
