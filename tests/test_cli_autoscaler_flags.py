"""``manage.py evaluate --autoscaler-args/--autoscaler-priorities`` end to end."""

import json
from pathlib import Path

from tests.conftest import environment_without_services, run_manage

SCENARIO = Path(__file__).resolve().parent / "scenarios" / "topology-block.yaml"
AT = "2026-12-02T00:00:00Z"


def _evaluate(*extra: str, environment: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
    return run_manage(
        "evaluate",
        str(SCENARIO),
        "--format",
        "json",
        "--at",
        AT,
        *extra,
        environment=environment or environment_without_services(),
    )


def test_it_runs_the_naive_side_with_the_flags_given_and_records_them() -> None:
    # by default cluster-autoscaler buys 2 h100 nodes (160/h stranded, test_cli_evaluate);
    # the snapshot already has more than 1 node, so --max-nodes-total=1 leaves no room
    # (orchestrator.go GetCappedNewNodeCount): nothing bought, nothing stranded
    result = _evaluate("--autoscaler-args=--max-nodes-total=1 --scan-interval=10s")
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["cost"]["naivePerHour"] == 0.0
    assert document["autoscalerFlags"]["inEffect"] == {"--max-nodes-total": 1}
    assert document["autoscalerFlags"]["ignored"] == ["--scan-interval"]


def test_the_setting_gives_the_flags_when_the_option_does_not() -> None:
    environment = {
        **environment_without_services(),
        "CLUSTER_AUTOSCALER_ARGS": "--max-nodes-total=1",
    }
    document = json.loads(_evaluate(environment=environment).stdout)
    assert document["autoscalerFlags"]["args"] == ["--max-nodes-total=1"]


def test_it_exits_2_naming_the_flag_cluster_autoscaler_refuses() -> None:
    result = _evaluate("--autoscaler-args=--expander=cheapest")
    assert result.returncode == 2
    assert "--autoscaler-args: --expander: expander 'cheapest' not supported" in result.stderr
    unknown = _evaluate("--autoscaler-args=--max-nodes=3")
    assert unknown.returncode == 2
    assert "--max-nodes: unknown cluster-autoscaler flag" in unknown.stderr


def test_it_reads_the_priority_configmap_and_names_it_when_bad(tmp_path: Path) -> None:
    good = tmp_path / "priorities.yaml"
    good.write_text("50:\n  - ^h100\n")
    result = _evaluate(
        "--autoscaler-args=--expander=priority", "--autoscaler-priorities", str(good)
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["autoscalerFlags"]["priorities"] == {"50": ["^h100"]}
    bad = tmp_path / "bad.yaml"
    bad.write_text("50: h100\n")
    refused = _evaluate("--autoscaler-priorities", str(bad))
    assert refused.returncode == 2
    assert "cluster-autoscaler-priority-expander: data.priorities: 50: not a list" in refused.stderr
