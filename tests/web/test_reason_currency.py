"""The reasons an evaluation stores write money in settings.CURRENCY, as the pages do
(issue 43 item 8): the engine is given the setting by ``services.engine_inputs``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.web.fixtures import ingest_and_evaluate
from topology.ingest.files import read_objects

# a capacityweb.io NodeGroup h100 at pricePerNodeHour 80 (priced in any currency, unlike
# the bundled USD table); the joint plan adds 2 nodes in block b1 for ml/train
SCENARIO = Path(__file__).resolve().parents[1] / "scenarios" / "topology-block.yaml"
BUY = "add 2 node(s) of group h100 in cloud.google.com/gce-topology-block=b1 for "


def _reasons(evaluation: Any) -> list[str]:
    (train,) = (w for w in evaluation.result["workloads"] if w["name"] == "ml/train")
    return train["reasons"]


def test_a_stored_reason_is_in_the_currency_setting(cluster: Any, settings: Any) -> None:
    settings.CURRENCY = "EUR"
    evaluation = ingest_and_evaluate(cluster, list(read_objects(SCENARIO)))
    assert BUY + "€160.00/h" in _reasons(evaluation)  # 2 x 80
    assert evaluation.result["currency"] == "EUR"


def test_the_default_setting_writes_dollars(cluster: Any) -> None:
    evaluation = ingest_and_evaluate(cluster, list(read_objects(SCENARIO)))
    assert BUY + "$160.00/h" in _reasons(evaluation)
