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
- no action holds alternatives (``# or``): they are separate actions;
- a CronJob's patch for its next runs (``assert_next_runs_patch``): a strategic merge
  patch of ``spec.jobTemplate.spec.template.spec`` with the owner patch's fields;
- a reservation reconciliation's commands (``assert_reconciliation_runs``): each one kubectl
  accepts for its real target, in order (cordon, owners' patches, rollout waits and
  evictions, the undo as comments). An owner patch is a strategic merge patch of a kind
  whose pod template may change (apps/v1 Deployment, StatefulSet, ReplicaSet, core/v1
  ReplicationController: never a Job, whose template is immutable, nor a Pod) that sets
  only ``spec.template.spec`` nodeSelector, tolerations or the required node affinity,
  each valid as the API server validates it (``pkg/apis/core/validation``
  ``ValidateNodeSelectorTerm``, ``validateNodeSelectorRequirement``,
  ``validateNodeFieldSelectorRequirement``: a ``matchFields`` requirement names
  ``metadata.name`` with In/NotIn and exactly one value); ``kubectl rollout`` only for
  the kinds it supports (deployments, daemonsets, statefulsets); an eviction is a
  policy/v1 Eviction POSTed to the pod's ``eviction`` subresource.
"""

import json
import re
import shlex
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from tests.gcloud_checks import assert_gcloud_runs

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
    elif action["kind"] == "gcloud":
        assert_gcloud_runs(text)
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


PATCHED = {"deployment", "statefulset", "replicaset", "replicationcontroller"}
ROLLOUT = {"deployment", "statefulset", "daemonset"}  # kubectl rollout's kinds
LABEL_OPERATORS = {"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"}
EVICTION = re.compile(
    r"^echo '(?P<body>\{.*\})' \| kubectl create --raw "
    r"/api/v1/namespaces/(?P<ns>[^/]+)/pods/(?P<name>[^/]+)/eviction -f -$"
)


def assert_reconciliation_runs(actions: list[str]) -> None:
    """``actions``: one reconciliation's ``actions`` (JSON ``reconciliations[].actions``)."""
    commands = [a for a in actions if not a.startswith("#")]
    undo = [a for a in actions if a.startswith("# undo: ")]
    assert commands[0].startswith("kubectl cordon ")
    node = commands[0].split()[2]
    assert undo and undo[-1] == f"# undo: kubectl uncordon {node}"
    assert actions.index(undo[0]) > max(actions.index(c) for c in commands)
    patches = [c for c in commands if c.startswith("kubectl patch ")]
    replaced = [c for c in commands[1:] if c not in patches]
    assert all(actions.index(p) < actions.index(r) for p in patches for r in replaced)
    for command in patches:
        assert_owner_patch(command)
    for command in replaced:
        if command.startswith("kubectl rollout "):
            assert_rollout(command, "status")
        else:
            assert_eviction(command)
    for line in undo[:-1]:
        command = line.removeprefix("# undo: ")
        if command.startswith("kubectl rollout "):
            assert_rollout(command, "undo")
        else:
            assert_owner_patch(command, undo=True)


def assert_owner_patch(command: str, undo: bool = False) -> None:
    words = shlex.split(command)
    assert words[:2] == ["kubectl", "patch"] and words[2] in PATCHED, command
    assert "-n" in words and "--type=strategic" in words, command
    body = json.loads(words[words.index("-p") + 1])
    assert list(body) == ["spec"] and list(body["spec"]) == ["template"], body
    _assert_template_spec(body["spec"]["template"], undo)


def assert_next_runs_patch(command: str, undo: bool = False) -> None:
    """A CronJob's patch for its next runs: a strategic merge patch (batch/v1 CronJob
    is a built-in type) of ``spec.jobTemplate.spec.template.spec`` only, the Job
    template each run's Job is copied from (``pkg/controller/cronjob/utils.go``
    ``getJobFromTemplate2``), with the same fields as an owner patch."""
    words = shlex.split(command)
    assert words[:3] == ["kubectl", "patch", "cronjob"] and words[3], command
    assert "-n" in words and "--type=strategic" in words, command
    body = json.loads(words[words.index("-p") + 1])
    assert list(body) == ["spec"] and list(body["spec"]) == ["jobTemplate"], body
    job_template = body["spec"]["jobTemplate"]
    assert list(job_template) == ["spec"] and list(job_template["spec"]) == ["template"]
    _assert_template_spec(job_template["spec"]["template"], undo)


def _assert_template_spec(template: dict[str, Any], undo: bool) -> None:
    """A pod template's ``{"spec": ...}`` with only the fields that target nodes."""
    assert list(template) == ["spec"], template
    spec = template["spec"]
    assert spec and set(spec) <= {"nodeSelector", "tolerations", "affinity"}, spec
    for key, value in spec.get("nodeSelector", {}).items():
        assert key and (value is None if undo else isinstance(value, str)), (key, value)
    if "affinity" in spec:
        assert list(spec["affinity"]) == ["nodeAffinity"]
        (required,) = spec["affinity"]["nodeAffinity"].items()
        assert required[0] == "requiredDuringSchedulingIgnoredDuringExecution"
        if undo:
            assert required[1] is None
        else:
            _assert_node_selector(required[1])
    for toleration in spec.get("tolerations", []):
        assert toleration["operator"] in ("Equal", "Exists")
        assert toleration.get("effect", "") in ("", "NoSchedule", "NoExecute", "PreferNoSchedule")


def _assert_node_selector(selector: dict[str, Any]) -> None:
    terms = selector["nodeSelectorTerms"]
    assert terms and set(selector) == {"nodeSelectorTerms"}
    for term in terms:
        assert term and set(term) <= {"matchExpressions", "matchFields"}, term
        for requirement in term.get("matchExpressions", []):
            operator, values = requirement["operator"], requirement.get("values", [])
            assert operator in LABEL_OPERATORS and requirement["key"], requirement
            if operator in ("In", "NotIn"):
                assert values, requirement
            elif operator in ("Exists", "DoesNotExist"):
                assert not values, requirement
            else:
                assert len(values) == 1 and values[0].lstrip("-").isdigit(), requirement
        for requirement in term.get("matchFields", []):
            assert requirement["key"] == "metadata.name", requirement
            assert requirement["operator"] in ("In", "NotIn"), requirement
            assert len(requirement["values"]) == 1, requirement


def assert_rollout(command: str, verb: str) -> None:
    words = shlex.split(command)
    assert words[:3] == ["kubectl", "rollout", verb], command
    kind, _, name = words[3].partition("/")
    assert kind in ROLLOUT and name and "-n" in words, command


def assert_eviction(command: str) -> None:
    found = EVICTION.match(command)
    assert found, command
    body = json.loads(found["body"])
    assert (body["apiVersion"], body["kind"]) == ("policy/v1", "Eviction")
    assert body["metadata"] == {"name": found["name"], "namespace": found["ns"]}
