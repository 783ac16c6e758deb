"""``manage.py evaluate --moves`` end to end, in a fresh interpreter, on a small hand-made
export (tests/web/move_cluster.yaml; its header works the answer out): team-b/train-0
needs 8 GPUs, two 8-GPU nodes each run a 4-GPU ReplicaSet pod, h100 adds a node for
40/h. Moving one web pod onto the other node frees its node: recommended, avoids 40/h.
"""

import json
import re
from pathlib import Path

from tests.action_checks import assert_next_runs_patch, assert_reconciliation_runs
from tests.conftest import environment_without_services, run_manage

EXPORT = Path(__file__).resolve().parent / "web" / "move_cluster.yaml"
# its header works the answer out: od-1 (30/h) emptied into team-a's reservation, the
# Deployment's template patched; od-2 kept by the Job's pod (a Job's pod is never moved)
RECONCILE = Path(__file__).resolve().parent / "web" / "reconcile_cluster.yaml"
AT = "2026-12-02T00:00:00Z"


def evaluate(*arguments: str, export: Path = EXPORT) -> str:
    result = run_manage(
        "evaluate", str(export), "--at", AT, *arguments, environment=environment_without_services()
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


def test_it_patches_the_deployment_before_replacing_its_pod_and_keeps_the_jobs_pod() -> None:
    moves = json.loads(evaluate("--moves", "--format", "json", export=RECONCILE))["moves"]
    (found,) = moves["reconciliations"]
    assert (found["node"], found["savedPerHour"], found["reservations"]) == (
        "od-1",
        30.0,
        ["team-a-h100"],
    )
    (deployment,) = found["ownerPatches"]
    assert (deployment["owner"], deployment["pods"], deployment["how"]) == (
        "Deployment/team-a/web",
        ["team-a/web-5d8f-a"],
        "rollout",
    )
    assert deployment["fields"] == {"nodeSelector": {"pool": "reserved"}}
    actions = found["actions"]
    assert_reconciliation_runs(actions)
    assert actions.index(deployment["patch"]) < actions.index(
        "kubectl rollout status deployment/web -n team-a --timeout=15m"
    )
    assert not any("/eviction" in a for a in actions)  # the rollout replaces web
    (refusal,) = moves["reconciliationRefusals"]
    assert refusal["node"] == "od-2"
    assert refusal["reason"].startswith("kept by Job team-a/train's pod team-a/train-x: ")
    assert moves["reconciliationSavedPerHour"] == 30.0  # od-2's 30/h is not counted
    # the Job's next runs: its CronJob's jobTemplate (the header works the patch out)
    (runs,) = refusal["nextRuns"]
    assert runs["cronJob"] == "CronJob/team-a/nightly" and refusal["reservations"] == [
        "team-a-h100"
    ]
    assert runs["patch"] == (
        'kubectl patch cronjob nightly -n team-a --type=strategic -p \'{"spec": '
        '{"jobTemplate": {"spec": {"template": {"spec": {"nodeSelector": {"pool": '
        '"reserved"}}}}}}}\''
    )
    assert_next_runs_patch(runs["patch"])
    assert_next_runs_patch(runs["undo"], undo=True)


def test_it_prints_the_owner_patch_before_the_rollout_in_the_text_report() -> None:
    text = evaluate("--moves", export=RECONCILE).split("Reservation reconciliation\n", 1)[1]
    assert "od-1: move 1 pod(s) into team-a-h100, saves $30.00/h" in text
    assert "od-2: not offered: kept by Job team-a/train's pod team-a/train-x: " in text
    assert "next runs of CronJob/team-a/nightly (its Job/team-a/train)" in text
    assert "$ kubectl patch cronjob nightly -n team-a --type=strategic" in text
    patch = "kubectl patch deployment web -n team-a --type=strategic"
    rollout = "kubectl rollout status deployment/web -n team-a"
    assert text.index("kubectl cordon od-1") < text.index(patch) < text.index(rollout)
    assert text.index(rollout) < text.index("# undo: kubectl rollout undo deployment/web")
