"""What every action shown to apply must pass, on the CLI and the dashboard alike (issue 43):
one self-contained thing to paste, checked against the schema or contract it is written for
(the same checks as tests/engine/test_safe_actions.py).

- ProvisioningRequest: each request valid under the upstream CRD's openAPIV3Schema
  (kubernetes/autoscaler ``apis/config/crd/autoscaling.x-k8s.io_provisioningrequests.yaml``,
  copied in data/upstream-examples), and the PodTemplate each ``podSets[].podTemplateRef``
  names in the same action and namespace (core/v1: containers with a name and an image;
  its pods consume this very request, ``provisioningrequest/pods/pods.go``);
- NodeGroup: one capacityweb.io NodeGroup document with a size and nothing else;
- Reservation: the owner's pod-template fields only (nodeSelector, tolerations), never a
  size;
- no action holds alternatives (``# or``): they are separate actions.
"""

from pathlib import Path
from typing import Any

import jsonschema
import yaml

PR_CRD = (
    Path("kubernetes+autoscaler")
    / "cluster-autoscaler/apis/config/crd/autoscaling.x-k8s.io_provisioningrequests.yaml"
)
CONSUME = "autoscaling.x-k8s.io/consume-provisioning-request"


def provisioning_request_schema(data: Path) -> dict[str, Any]:
    crd = yaml.safe_load((data / "upstream-examples" / PR_CRD).read_text())
    (served,) = [v for v in crd["spec"]["versions"] if v["name"] == "v1"]
    return served["schema"]["openAPIV3Schema"]


def assert_applies_as_is(action: dict[str, str], schema: dict[str, Any]) -> None:
    """``action``: ``{"kind", "role", "text"}`` as ``recommender.actions.report`` gives it."""
    text = action["text"]
    assert "# or" not in text.lower(), text
    if action["kind"] == "ProvisioningRequest":
        _assert_requests(text, schema)
    elif action["kind"] == "NodeGroup":
        (document,) = [d for d in yaml.safe_load_all(text) if d]
        assert document["apiVersion"] == "capacityweb.io/v1alpha1"
        assert document["kind"] == "NodeGroup"
        assert set(document["spec"]) <= {"minSize", "maxSize"}
    elif action["kind"] == "Reservation":
        assert "minSize" not in text and "resize" not in text
        body = yaml.safe_load(text)
        assert body is None or set(body["spec"]) <= {"nodeSelector", "tolerations"}


def _assert_requests(text: str, schema: dict[str, Any]) -> None:
    documents = [d for d in yaml.safe_load_all(text) if d]
    templates = {
        (d["metadata"]["namespace"], d["metadata"]["name"]): d
        for d in documents
        if d["kind"] == "PodTemplate"
    }
    requests = [d for d in documents if d["kind"] == "ProvisioningRequest"]
    assert requests and len(requests) + len(templates) == len(documents)
    for body in requests:
        jsonschema.validate(body, schema)
        namespace = body["metadata"]["namespace"]
        for pod_set in body["spec"]["podSets"]:
            template = templates[(namespace, pod_set["podTemplateRef"]["name"])]
            containers = template["template"]["spec"]["containers"]
            assert containers and all(c["name"] and c["image"] for c in containers)
            annotations = template["template"]["metadata"]["annotations"]
            assert annotations[CONSUME] == body["metadata"]["name"]
