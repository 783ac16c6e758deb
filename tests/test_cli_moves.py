"""``manage.py evaluate --moves`` end to end, in a fresh interpreter, on a small hand-made
export (tests/web/move_cluster.yaml; its header works the answer out): team-b/train-0
needs 8 GPUs, two 8-GPU nodes each run a 4-GPU ReplicaSet pod, h100 adds a node for
40/h. Moving one web pod onto the other node frees its node: recommended, avoids 40/h.
"""

import json
import re
from pathlib import Path

from tests.conftest import environment_without_services, run_manage

EXPORT = Path(__file__).resolve().parent / "web" / "move_cluster.yaml"
AT = "2026-12-02T00:00:00Z"


def evaluate(*arguments: str) -> str:
    result = run_manage(
        "evaluate", str(EXPORT), "--at", AT, *arguments, environment=environment_without_services()
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_it_adds_the_verified_move_beside_the_buy_plan_to_the_json() -> None:
    moves = json.loads(evaluate("--moves", "--format", "json"))["moves"]
    (plan,) = moves["plans"]
    assert plan["workload"] == "team-b/train-0" and plan["recommend"] == "move"
    assert plan["buy"] == {
        "verdict": "runs_after_scale_up",
        "addNodes": {"h100": 1},
        "costPerHour": 40.0,
        "startupSeconds": 300.0,
    }
    move = plan["move"]
    (moved,) = move["moves"]
    assert moved["pod"] in ("team-a/web-1", "team-a/web-2")
    assert moved["controller"] == "ReplicaSet/team-a/web-5d8f"
    assert {moved["from"], moved["to"]} == {"gpu-1", "gpu-2"}
    assert move["freedNodes"] == [moved["from"]]
    assert move["bindings"] == {"team-b/train-0": moved["from"]}
    assert (move["podsRestarted"], move["gpusDisrupted"], move["avoidedPerHour"]) == (1, 4, 40.0)
    assert moves["reconciliations"] == [] and moves["notSearched"] == []


def test_it_leaves_the_json_without_moves_unless_asked() -> None:
    assert "moves" not in json.loads(evaluate("--format", "json"))


def test_it_prints_the_move_and_its_commands_in_the_text_report() -> None:
    text = evaluate("--moves").split("Move instead of buy\n", 1)[1]
    assert "team-b/train-0 (8 GPUs): buy h100 x1 ($40.00/h, nodes start in 300s)" in text
    assert re.search(
        r"move: 1 pod\(s\), 4 GPUs disrupted, .*avoids \$40\.00/h; recommend move", text
    )
    node = re.search(r"team-a/web-\d: (gpu-\d) -> gpu-\d", text).group(1)
    assert f"$ kubectl taint nodes {node} capacityweb.io/move-for=team-b.train-0:NoSchedule" in text
    assert "/eviction -f -" in text
    assert f"$ kubectl taint nodes {node} capacityweb.io/move-for-" in text
