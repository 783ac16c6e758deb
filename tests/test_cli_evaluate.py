"""``manage.py evaluate`` end to end, in a fresh interpreter (as a user runs it)."""

import json
from pathlib import Path

from tests.conftest import environment_without_services, run_manage

SCENARIO = Path(__file__).resolve().parent / "scenarios" / "topology-block.yaml"
AT = "2026-12-02T00:00:00Z"


def test_it_prints_the_json_contract_for_a_scenario() -> None:
    result = run_manage(
        "evaluate",
        str(SCENARIO),
        "--format",
        "json",
        "--at",
        AT,
        environment=environment_without_services(),
    )
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["schemaVersion"] == 1
    # 2 naive nodes x 80/h, neither used by the gang (see topology-block.expected.yaml)
    assert document["cost"]["strandedPerHour"] == 160.0
    assert [w["name"] for w in document["workloads"]] == ["ml/train"]


def test_it_prints_a_text_report_with_the_yaml_to_apply() -> None:
    result = run_manage(
        "evaluate", str(SCENARIO), "--at", AT, environment=environment_without_services()
    )
    assert result.returncode == 0, result.stderr
    assert "ml/train (gang, 2 pods, 16 GPUs): runs after scale-up" in result.stdout
    assert "stranded $160.00/h (16 GPUs nobody uses)" in result.stdout
    # the h100 group has 4 nodes (a1, a2, c1, c2); the plan adds 2 in block b1
    node_group_patch = (
        "    kind: NodeGroup\n    metadata:\n      name: h100\n    spec:\n      minSize: 6\n"
    )
    assert node_group_patch in result.stdout
    # h100 places new nodes in blocks b1 and b3 (its placements): a minSize raise does not
    # choose the block, so the card says so and offers what does
    assert (
        "    # the new nodes must land in cloud.google.com/gce-topology-block=b1, but h100 adds "
        "nodes in cloud.google.com/gce-topology-block = b1, b3:\n" in result.stdout
    )
    provisioning_request = (
        "    kind: ProvisioningRequest\n    metadata:\n      name: train\n      namespace: ml\n"
        "    spec:\n      provisioningClassName: best-effort-atomic-scale-up.autoscaling.x-k8s.io\n"
        "      podSets:\n      - count: 2\n        podTemplateRef:\n          name: train\n"
    )
    assert provisioning_request in result.stdout
    assert "targetSize" not in result.stdout


def test_it_writes_every_money_figure_in_the_currency_setting() -> None:
    """CURRENCY=CHF (no symbol): the engine's reasons, its report and the actions' report
    all write ``160.00 CHF/h`` (topology.model.money), none a dollar figure."""
    result = run_manage(
        "evaluate",
        str(SCENARIO),
        "--at",
        AT,
        environment=environment_without_services(CURRENCY="CHF"),
    )
    assert result.returncode == 0, result.stderr
    # joint: 2 new h100 nodes in block b1 at 80/h each (topology-block.expected.yaml)
    block = "cloud.google.com/gce-topology-block=b1"
    assert f"    plan: add 2 node(s) of group h100 in {block} for 160.00 CHF/h" in result.stdout
    assert "naive spend 160.00 CHF/h, of which stranded 160.00 CHF/h" in result.stdout
    assert "in all: 160.00 CHF/h" in result.stdout
    assert "$" not in result.stdout


def test_it_exits_2_naming_file_object_field_and_reason_on_bad_input(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "apiVersion: capacityweb.io/v1alpha1\nkind: NodeGroup\nmetadata: {name: g}\n"
        "spec: {minSize: 3, maxSize: 1, pricePerNodeHour: 1.0,"
        " template: {allocatable: {cpu: '1'}}}\n"
    )
    result = run_manage(
        "evaluate", str(bad), "--at", AT, environment=environment_without_services()
    )
    assert result.returncode == 2
    assert f"{bad}: NodeGroup/g: spec.maxSize: must be >= minSize (3), got 1" in result.stderr
    assert "Traceback" not in result.stderr


def test_it_exits_2_on_an_unparseable_at_timestamp() -> None:
    result = run_manage(
        "evaluate", str(SCENARIO), "--at", "yesterday", environment=environment_without_services()
    )
    assert result.returncode == 2
    assert "--at: not an RFC 3339 timestamp: 'yesterday'" in result.stderr
    assert "Traceback" not in result.stderr


def test_it_exits_2_on_a_missing_file(tmp_path: Path) -> None:
    result = run_manage(
        "evaluate", str(tmp_path / "nope.yaml"), environment=environment_without_services()
    )
    assert result.returncode == 2
    assert "Traceback" not in result.stderr


DISCOVERED = Path(__file__).resolve().parent / "engine" / "fixtures" / "discovered-gke-cluster.yaml"


def test_it_reports_discovered_groups_and_actions_without_capacityweb_objects() -> None:
    result = run_manage(
        "evaluate",
        str(DISCOVERED),
        "--format",
        "json",
        "--at",
        AT,
        environment=environment_without_services(CURRENCY="USD"),
    )
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["currency"] == "USD"
    groups = {g["name"]: g for g in document["nodeGroups"]}
    assert groups["a2-pool"]["source"] == (
        "cluster-autoscaler status ConfigMap + GKE node pool label"
    )
    assert groups["a2-pool"]["pricePerNodeHour"] == 29.38708
    (rec,) = document["recommendations"]
    assert [a["kind"] for a in rec["actions"]] == ["ProvisioningRequest", "gcloud", "gcloud"]


def test_another_currency_drops_the_usd_price_table_and_says_so() -> None:
    result = run_manage(
        "evaluate",
        str(DISCOVERED),
        "--at",
        AT,
        environment=environment_without_services(CURRENCY="EUR"),
    )
    assert result.returncode == 0, result.stderr
    assert "== Node groups (money in EUR per hour) ==" in result.stdout
    assert "* a2-pool: 2 nodes (min 0, max 4), price unknown;" in result.stdout


def test_it_exits_2_with_nothing_to_evaluate_on_empty_input(tmp_path: Path) -> None:
    empty = tmp_path / "empty.yaml"
    empty.write_text("# an export that came out empty\n")
    result = run_manage(
        "evaluate", str(empty), "--at", AT, environment=environment_without_services()
    )
    assert result.returncode == 2
    assert f"{empty}: nothing to evaluate" in result.stderr
    assert "nothing is pending" not in result.stdout


def test_it_lists_ignored_kinds_and_unsupported_fields_in_json_and_text(tmp_path: Path) -> None:
    snapshot = tmp_path / "snapshot.yaml"
    snapshot.write_text(
        SCENARIO.read_text()
        + "\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: ml}\n"
        "---\napiVersion: v1\nkind: Pod\nmetadata: {name: web, namespace: ml}\n"
        "spec:\n  containers: [{name: c}]\n"
        "  volumes: [{name: v, ephemeral: {volumeClaimTemplate: {spec: {}}}}]\n"
        "status: {phase: Pending}\n"
    )
    environment = environment_without_services()
    result = run_manage(
        "evaluate", str(snapshot), "--format", "json", "--at", AT, environment=environment
    )
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["ignored"] == [{"kind": "ConfigMap", "apiVersion": "v1", "count": 1}]
    assert document["unsupported"] == [
        {
            "object": "Pod/ml/web",
            "field": "spec.volumes[0].ephemeral",
            "reason": "generic ephemeral volume (VolumeBinding) is not modelled",
        }
    ]
    text = run_manage("evaluate", str(snapshot), "--at", AT, environment=environment).stdout
    assert "== Not modelled ==\n* ignored 1 x ConfigMap (v1)\n" in text
    assert "ml/web (pod, 1 pods, 0 GPUs): blocked" in text


def test_it_records_the_autoscaler_profile_and_refuses_an_unknown_one() -> None:
    chosen = run_manage(
        "evaluate",
        str(SCENARIO),
        "--format",
        "json",
        "--at",
        AT,
        "--autoscaler",
        "cluster-autoscaler:1.36",
        environment=environment_without_services(),
    )
    assert chosen.returncode == 0, chosen.stderr
    assert json.loads(chosen.stdout)["autoscalerProfile"] == "cluster-autoscaler:1.36"
    unknown = run_manage(
        "evaluate",
        str(SCENARIO),
        "--autoscaler",
        "ca-1.0",
        environment=environment_without_services(),
    )
    assert unknown.returncode == 2
    assert "unknown profile 'ca-1.0'" in unknown.stderr
    valid = "cluster-autoscaler, cluster-autoscaler:1.34, cluster-autoscaler:1.35, "
    assert f"valid profiles: {valid}cluster-autoscaler:1.36, karpenter" in unknown.stderr


def test_it_evaluates_under_the_scheduler_profile_given_and_records_it() -> None:
    what_if = SCENARIO.parent / "profile-fgd-what-if.yaml"
    runs = {
        profile: run_manage(
            "evaluate",
            str(what_if),
            "--format",
            "json",
            "--at",
            AT,
            *(("--scheduler-profile", profile) if profile else ()),
            environment=environment_without_services(),
        )
        for profile in ("", "fgd")
    }
    assert all(r.returncode == 0 for r in runs.values()), [r.stderr for r in runs.values()]
    default, fgd = (json.loads(runs[p].stdout) for p in ("", "fgd"))
    # see profile-fgd-what-if.expected.yaml: kube-default leaves train/c pending
    assert default["schedulerProfile"] == "kube-default"
    assert default["whatIf"]["extraGpusPlaced"] == 8
    assert fgd["schedulerProfile"] == "fgd"
    assert fgd["whatIf"] is None
    verdicts = {w["name"]: w["verdict"] for w in fgd["workloads"]}
    assert verdicts["train/c"] == "runs_now"


def test_it_exits_2_naming_the_valid_profiles_on_an_unknown_one() -> None:
    result = run_manage(
        "evaluate",
        str(SCENARIO),
        "--scheduler-profile",
        "bestfit",
        environment=environment_without_services(),
    )
    assert result.returncode == 2
    assert "--scheduler-profile" in result.stderr
    assert "valid: kube-default, most-allocated, fgd" in result.stderr
    assert "Traceback" not in result.stderr


def test_it_adds_the_extended_resource_toleration_when_told(tmp_path: Path) -> None:
    """--extended-resource-toleration on: a manifest pod asking nvidia.com/gpu gets
    the admission's Exists/NoSchedule toleration (plugin/pkg/admission/
    extendedresourcetoleration) and runs on a node tainted nvidia.com/gpu (no GKE
    labels, so "auto" would leave it blocked by the taint)."""
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(
        "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
        "spec: {taints: [{key: nvidia.com/gpu, value: present, effect: NoSchedule}]}\n"
        "status: {allocatable: {cpu: '8', memory: 64Gi, pods: '110', nvidia.com/gpu: '1'}}\n"
        "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ml}\n"
        "spec: {containers: [{name: c, resources: {limits: {nvidia.com/gpu: '1'}}}]}\n"
    )
    verdicts = {}
    for mode in ("auto", "on"):
        result = run_manage(
            "evaluate",
            str(cluster),
            "--format",
            "json",
            "--at",
            AT,
            "--extended-resource-toleration",
            mode,
            environment=environment_without_services(),
        )
        assert result.returncode == 0, result.stderr
        verdicts[mode] = json.loads(result.stdout)["workloads"][0]["verdict"]
    assert verdicts == {"auto": "blocked", "on": "runs_now"}


def test_it_prints_each_phases_cpu_seconds_apart_with_timings() -> None:
    arguments = ("evaluate", str(SCENARIO), "--format", "json", "--at", AT)
    environment = environment_without_services()
    timed = run_manage(*arguments, "--timings", environment=environment)
    assert timed.returncode == 0, timed.stderr
    phases = [line.split(" ")[1] for line in timed.stderr.splitlines()]
    assert phases == [
        "start-up",
        "read",
        "critical",
        "deferred",
        "deferred",
        "deferred",
        "deferred",
        "deferred",
        "report",
        "total",
    ]
    assert timed.stdout == run_manage(*arguments, environment=environment).stdout
