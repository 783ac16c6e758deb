"""cluster-autoscaler's command line and priority ConfigMap (caflags), and the
decisions a non-default flag changes. Every figure is worked out by hand from the
upstream code named in each test."""

from pathlib import Path

import pytest

from recommender.engine.autoscaler.caflags import parse_flags, parse_priorities, split_args
from recommender.engine.autoscaler.flags import CaSettings
from recommender.engine.autoscaler.flagtable import READ_DEFAULTS
from recommender.engine.evaluate.evaluation import evaluate
from tests.builders import make_group
from tests.engine.test_cluster_autoscaler import AT, GI, MACHINE, ML_POD, naive
from topology.ingest.files import read_objects
from topology.kube.parse import parse_objects
from topology.model.hardware import Cluster

# --- parsing: pflag over config/flags/flags.go ---------------------------------------


def test_the_flags_users_give_set_the_settings() -> None:
    flags = parse_flags(
        split_args(
            "./cluster-autoscaler --expander=priority,least-waste --max-nodes-total=200 "
            "--balance-similar-node-groups --gpu-total=nvidia-l4:0:64 --cores-total=0:320000 "
            "--memory-total=0:6400000 --expendable-pods-priority-cutoff=-20 "
            "--balancing-ignore-label=foo --balancing-ignore-label bar"
        )
    )
    settings = flags.settings
    assert settings.expanders == ("priority", "least-waste")
    assert settings.max_nodes_total == 200
    assert settings.balance_similar_node_groups is True
    assert settings.max_gpus_total == {"nvidia-l4": 64}
    assert settings.gpu_label == "cloud.google.com/gke-accelerator"  # gce: the default
    assert settings.max_cores_total == 320000
    # flags.go createAutoscalingOptions: memory in GiB times units.GiB
    assert settings.max_memory_total_bytes == 6400000 * GI
    assert settings.expendable_pods_priority_cutoff == -20
    assert settings.balancing_ignore_labels == ("foo", "bar")  # MultiStringFlag appends
    # upstream's default limits are not shown as in effect
    assert "--cores-total" not in flags.in_effect
    assert flags.in_effect["--max-nodes-total"] == 200


def test_pflag_syntax_value_forms_and_normalised_names() -> None:
    flags = parse_flags(
        ["--max_nodes_total", "7", "-v", "4", "--balance-similar-node-groups=false", "extra"]
    )
    assert flags.settings.max_nodes_total == 7  # WordSepNormalizeFunc: _ is -
    assert flags.settings.balance_similar_node_groups is False
    assert "--v" in flags.ignored
    assert any(i.startswith("extra") for i in flags.ignored)  # left over, ignored
    # a plain flag given twice: the last value wins
    assert parse_flags(["--max-nodes-total=3", "--max-nodes-total=5"]).settings.max_nodes_total == 5


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--no-such-flag=1"], "--no-such-flag: unknown cluster-autoscaler flag"),
        (["--max-nodes-total=ten"], "--max-nodes-total: 'ten' is not an integer"),
        (["--balance-similar-node-groups=yes"], "not a boolean"),
        (["--scan-interval=10"], "--scan-interval: '10' is not a duration"),
        (["--max-nodes-total"], "--max-nodes-total: flag needs an argument"),
        (["--cores-total=320000"], "--cores-total: '320000' is not <min>:<max>"),
        (["--memory-total=10:5"], "--memory-total: max must be greater or equal to min"),
        (["--gpu-total=nvidia-l4:64"], "--gpu-total: 'nvidia-l4:64' is not <gpu_type>:<min>:<max>"),
        (["--gpu-total=nvidia-l4:8:4"], "min is greater than max"),
        (["--expander=cheapest"], "--expander: expander 'cheapest' not supported"),
        (["--expander=price,price"], "specified more than once"),
        (["--expander=random,price"], "comes after random"),
        (["-expander=price"], "unknown shorthand flag"),
    ],
)
def test_what_the_binary_refuses_is_a_value_error_naming_the_flag(
    args: list[str], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        parse_flags(args)


def test_flags_without_effect_on_a_snapshot_are_ignored_and_listed() -> None:
    flags = parse_flags(
        ["--scan-interval=10s", "--scale-down-unneeded-time=5m", "--max-node-provision-time=15m"]
    )
    assert flags.ignored == (
        "--scan-interval",
        "--scale-down-unneeded-time",
        "--max-node-provision-time",
    )
    assert flags.unsupported == ()


def test_scale_up_flags_the_model_does_not_follow_are_unsupported_unless_at_default() -> None:
    flags = parse_flags(
        [
            "--max-nodes-per-scaleup=10",
            "--new-pod-scale-up-delay=30s",
            "--expander=least-waste,grpc",
        ]
    )
    fields = [u.field for u in flags.unsupported]
    # --new-pod-scale-up-delay is modelled now (young.py: filterOutYoungPods)
    assert fields == ["--expander", "--max-nodes-per-scaleup"]
    assert flags.settings.new_pod_scale_up_delay_seconds == 30
    assert flags.settings.expanders == ("least-waste",)  # grpc dropped, said so
    at_default = parse_flags(["--max-nodes-per-scaleup=1000", "--new-pod-scale-up-delay=0m"])
    assert at_default.unsupported == ()
    assert at_default.ignored == ("--max-nodes-per-scaleup",)


def test_gpu_limits_on_a_provider_whose_gpu_label_is_unknown_are_unsupported() -> None:
    flags = parse_flags(["--cloud-provider=clusterapi", "--gpu-total=a100:0:8"])
    assert flags.settings.max_gpus_total == {}
    assert [u.field for u in flags.unsupported] == ["--gpu-total"]
    aws = parse_flags(["--cloud-provider=aws", "--gpu-total=nvidia-tesla-v100:0:8"])
    assert aws.settings.gpu_label == "k8s.amazonaws.com/accelerator"


# --- the priority expander's ConfigMap (expander/priority/priority.go) ---------------


def test_the_priority_configmap_is_a_map_of_priority_to_regexes() -> None:
    text = "10:\n  - .*-spot-.*\n50:\n  - ^h100-.*\n"
    assert parse_priorities(text) == {10: (".*-spot-.*",), 50: ("^h100-.*",)}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty"),
        ("10: spot", "10: not a list of regexes"),
        ("high:\n  - a", "key 'high' is not an integer priority"),
        ("10:\n  - '(unclosed'", "regex '\\(unclosed'"),
    ],
)
def test_a_bad_priority_configmap_names_the_configmap_and_the_reason(
    text: str, message: str
) -> None:
    with pytest.raises(ValueError, match=f"cluster-autoscaler-priority-expander.*{message}"):
        parse_priorities(text)


# --- decisions a non-default flag changes ------------------------------------------


def test_max_nodes_total_caps_the_scale_up() -> None:
    # one full 8-cpu node exists; 4 pending pods of 8 cpu need 4 new 8-cpu nodes.
    # orchestrator.go GetCappedNewNodeCount: --max-nodes-total=3 leaves 3 - 1 = 2.
    g = make_group("g", MACHINE.named("t").allocatable(8, "32Gi").build()).price(1.0).build()
    pods = (
        ML_POD.named("busy").requests(8).on("n0").build(),
        *(ML_POD.named(f"p{i}").requests(8, "1Gi").build() for i in range(4)),
    )
    cluster = Cluster(
        "c",
        nodes=(MACHINE.named("n0").allocatable(8, "32Gi").build(),),
        pods=pods,
        node_groups=(g,),
    )
    assert sum(a.count for a in naive(cluster).additions) == 4
    capped = naive(cluster, parse_flags(["--max-nodes-total=3"]).settings)
    assert sum(a.count for a in capped.additions) == 2


def _two_groups() -> Cluster:
    # 2 pending pods of (4 cpu, 16Gi): "big" (16 cpu, 64Gi, $2/h) takes both on 1 node,
    # "small" (8 cpu, 32Gi, $2.5/h) too, exactly full.
    big = (
        make_group("big", MACHINE.named("big-t").allocatable(16, "64Gi").build()).price(2.0).build()
    )
    small = (
        make_group("small", MACHINE.named("small-t").allocatable(8, "32Gi").build())
        .price(2.5)
        .build()
    )
    pods = (
        ML_POD.named("p0").requests(4, "16Gi").build(),
        ML_POD.named("p1").requests(4, "16Gi").build(),
    )
    return Cluster("c", pods=pods, node_groups=(big, small))


def test_price_weighs_unfitness_to_the_preferred_node_not_price_alone() -> None:
    # waste.go: big (16-8)/16 + (64-32)/64 = 1.0, small 0 + 0 = 0 -> small.
    # price.go: $/h per helped pod big 2/2 = 1.0, small 2.5/2 = 1.25 (cheaper: big), but
    # times the unfitness to the preferred node of an empty cluster (preferred.go: 1
    # core): big 16/1 = 16 -> 16.0, small 8/1 = 8 -> 10.0: small.
    cluster = _two_groups()
    least_waste = naive(cluster)
    assert [a.node_group for a in least_waste.additions] == ["small"]
    price = naive(cluster, parse_flags(["--expander=price"]).settings)
    assert [a.node_group for a in price.additions] == ["small"]


def test_the_priority_configmap_picks_the_group() -> None:
    # priority.go: the highest priority whose regex matches (anywhere) the group name
    flags = parse_flags(["--expander=priority,least-waste"]).with_priorities(
        parse_priorities("10:\n  - sma\n50:\n  - ^bi\n")
    )
    plan = naive(_two_groups(), flags.settings)
    assert [a.node_group for a in plan.additions] == ["big"]


def test_a_lower_expendable_cutoff_makes_a_low_priority_pod_scale_up() -> None:
    # filter_out_expendable.go: priority < cutoff is expendable. -15 < -10 (default):
    # no scale-up; with --expendable-pods-priority-cutoff=-20, -15 is not, 1 node.
    g = make_group("g", MACHINE.named("t").allocatable(8, "32Gi").build()).price(1.0).build()
    cluster = Cluster(
        "c", pods=(ML_POD.named("low").requests(4, "1Gi").priority(-15).build(),), node_groups=(g,)
    )
    assert naive(cluster).additions == ()
    assert "expendable" in naive(cluster).outcomes["ml/low"].reasons[0]
    lowered = naive(cluster, parse_flags(["--expendable-pods-priority-cutoff=-20"]).settings)
    assert sum(a.count for a in lowered.additions) == 1


def test_balance_similar_node_groups_splits_the_nodes() -> None:
    # two groups with the same template (labels equal but hostname): 4 pods of 8 cpu
    # need 4 nodes of 8 cpu. Without balancing all 4 go to the one group the expander
    # picks; balancing_processor.go BalanceScaleUpBetweenGroups gives one at a time to
    # the smallest group: 2 and 2.
    a = make_group("a", MACHINE.named("a-t").allocatable(8, "32Gi").build()).price(1.0).build()
    b = make_group("b", MACHINE.named("b-t").allocatable(8, "32Gi").build()).price(1.0).build()
    cluster = Cluster(
        "c",
        pods=tuple(ML_POD.named(f"p{i}").requests(8, "1Gi").build() for i in range(4)),
        node_groups=(a, b),
    )
    assert list(_per_group(naive(cluster)).values()) == [4]
    balanced = naive(cluster, parse_flags(["--balance-similar-node-groups"]).settings)
    assert _per_group(balanced) == {"a": 2, "b": 2}


def _per_group(plan) -> dict[str, int]:  # type: ignore[no-untyped-def]
    counts: dict[str, int] = {}
    for addition in plan.additions:
        counts[addition.node_group] = counts.get(addition.node_group, 0) + addition.count
    return counts


# --- the evaluation records the flags ----------------------------------------------


def test_the_evaluation_records_the_flags_in_effect_and_lists_the_unsupported() -> None:
    flags = parse_flags(["--max-nodes-total=1", "--max-nodes-per-scaleup=10", "--v=2"])
    result = evaluate(_two_groups(), at=AT, ca_flags=flags).to_json()
    recorded = result["autoscalerFlags"]
    assert recorded["inEffect"] == {"--max-nodes-total": 1}
    assert recorded["ignored"] == ["--v"]
    assert {
        "object": "cluster-autoscaler",
        "field": "--max-nodes-per-scaleup",
        "reason": "10: caps the nodes of one scale-up",
    } in result["unsupported"]
    assert evaluate(_two_groups(), at=AT).to_json()["autoscalerFlags"]["args"] == []


def test_a_profile_that_reads_no_ca_flags_says_so() -> None:
    flags = parse_flags(["--max-nodes-total=1"])
    result = evaluate(_two_groups(), at=AT, autoscaler="karpenter", ca_flags=flags).to_json()
    assert result["autoscalerFlags"] is None
    assert result["unsupported"][-1]["reason"] == (
        "cluster-autoscaler flags given, but the karpenter profile reads none"
    )


def test_the_text_report_shows_the_non_default_flags() -> None:
    from recommender.engine.evaluate.report import render_text

    flags = parse_flags(["--expander=price", "--scan-interval=10s"])
    cluster = _two_groups()
    text = render_text(evaluate(cluster, at=AT, ca_flags=flags), cluster.node_groups)
    assert "with --expander=price\n" in text
    assert (
        "* cluster-autoscaler flags ignored (no effect on a scale-up from one snapshot): "
        "--scan-interval\n" in text
    )


def test_the_dra_flag_is_unsupported_where_it_differs_from_the_versions_model() -> None:
    # 1.34 is modelled with --enable-dynamic-resource-allocation false (its default),
    # 1.35 and 1.36 with true (config/flags/flags.go; docs/dra_support.md)
    on = parse_flags(["--enable-dynamic-resource-allocation=true"])
    off = parse_flags(["--enable-dynamic-resource-allocation=false"])

    def fields(flags, profile):  # type: ignore[no-untyped-def]
        result = evaluate(_two_groups(), at=AT, autoscaler=profile, ca_flags=flags).to_json()
        return [u["field"] for u in result["unsupported"]]

    assert fields(on, "cluster-autoscaler:1.34") == ["--enable-dynamic-resource-allocation"]
    assert fields(off, "cluster-autoscaler:1.34") == []
    assert fields(on, "cluster-autoscaler") == []
    assert fields(off, "cluster-autoscaler:1.35") == ["--enable-dynamic-resource-allocation"]


# --- --enable-provisioning-requests: upstream default false ---------------------------


def _provisioning_scenario():  # type: ignore[no-untyped-def]
    path = Path(__file__).resolve().parents[1] / "scenarios" / "ca-provisioning-atomic.yaml"
    return parse_objects(read_objects(path), cluster_name="t").cluster


def test_without_the_flag_provisioning_request_pods_scale_up_as_ordinary_pods() -> None:
    # main.go: the ProvisioningRequest pods filter and the wrapper orchestrator are
    # installed only with --enable-provisioning-requests (flags.go default false); the
    # gang's 2 x 8-GPU members are then plain pods: group h100 (max 1 node of 8 GPUs)
    # gets 1 node for one member, the gang still cannot start, 8 GPUs stranded
    evaluation = evaluate(_provisioning_scenario(), at=AT)
    (workload,) = evaluation.workloads
    assert dict(workload.naive.add_nodes) == {"h100": 1}
    assert workload.naive.stranded_gpus == 8
    assert any("--enable-provisioning-requests" in n for n in workload.naive.notes)


def test_with_the_flag_the_atomic_request_buys_nothing() -> None:
    flags = parse_flags(["--enable-provisioning-requests"])
    assert flags.settings.provisioning_requests is True
    assert flags.in_effect["--enable-provisioning-requests"] is True
    evaluation = evaluate(_provisioning_scenario(), at=AT, ca_flags=flags)
    (workload,) = evaluation.workloads
    # allOrNothing: 1 node could hold 1 of the 2 members: no option, nothing bought
    assert dict(workload.naive.add_nodes) == {}


@pytest.mark.parametrize("version", ["1.34", "1.35", "1.36"])
@pytest.mark.parametrize(("flag", "default", "attribute"), READ_DEFAULTS)
def test_each_read_flag_defaults_as_upstreams_flags_go(
    version: str, flag: str, default: str, attribute: str
) -> None:
    # flagtable.READ_DEFAULTS cites config/flags/flags.go: the model's settings without
    # the flag equal its settings with upstream's default given explicitly
    given = parse_flags([f"--{flag}={default}"]).settings
    assert getattr(CaSettings(version=version), attribute) == getattr(given, attribute)
    assert parse_flags([f"--{flag}={default}"]).unsupported == ()


def test_provisioning_requests_are_off_by_default() -> None:
    # flags.go: fs.BoolVar(&p.o.ProvisioningRequestEnabled, "enable-provisioning-requests",
    # false, ...)
    assert dict((f, d) for f, d, _ in READ_DEFAULTS)["enable-provisioning-requests"] == "false"
    assert CaSettings().provisioning_requests is False
