"""``manage.py evaluate`` on each folder of data/k8s-examples says what it read.

No folder may give "nothing is pending" with exit 0 while objects were read:
the output names the kinds read, the workloads found (pods synthesized from
their controllers included), the kinds ignored and what was rejected. The
figures below are counted by hand from the YAML files of each folder.
"""

import json
from pathlib import Path

import pytest

from tests.conftest import environment_without_services, run_manage

EXAMPLES = Path(__file__).resolve().parents[1] / "data" / "k8s-examples"
AT = "2026-12-04T00:00:00Z"


def evaluated(folder: str, output: str = "json"):
    path = EXAMPLES / folder
    if not path.is_dir():
        pytest.fail(f"data not found at {path}: the clone is incomplete")
    return run_manage(
        "evaluate", str(path), "--format", output, "--at", AT,
        environment=environment_without_services(),
    )  # fmt: skip


def counts(items):
    """``{"Kind (apiVersion)": count}`` from either shape: the evaluation's ``ignored``
    (kind and apiVersion apart) or the input summary's (one "Kind (apiVersion)")."""
    return {
        f"{item['kind']} ({item['apiVersion']})" if "apiVersion" in item else item["kind"]: item[
            "count"
        ]
        for item in items
    }


def test_it_reports_every_gang_format_of_the_gangs_folder() -> None:
    result = evaluated("gangs")
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    found = document["input"]
    assert counts(document["ignored"]) == {
        "HyperNode ()": 6,  # design-doc shape: no apiVersion, no metadata
    }
    assert counts(found["read"])["ResourceFlavor (kueue.x-k8s.io/v1beta2)"] == 1
    assert counts(found["read"])["Job (batch/v1)"] == 3
    assert counts(found["read"])["JobSet (jobset.x-k8s.io/v1alpha2)"] == 1
    assert {s["controller"]: s["pods"] for s in found["synthesized"]} == {
        "Job/default/job-1": 100,
        "Job/default/network-topology-job": 8,
        "Job/default/tas-sample-preferred0": 40,
        "Job/default/tas-sample-required0": 10,
        "JobSet/default/jobset-tas-sliced": 8,
        "ReplicaSet/default/nginx": 6,
        "Workload/team-a/sample-job": 3,
    }
    assert found["pods"] == {"bound": 0, "pending": 177}  # 175 synthesized + 2 Kueue pods
    verdicts = {w["name"]: w["verdict"] for w in document["workloads"]}
    assert verdicts["default/jobset-tas-sliced"] == "waiting"  # LocalQueue user-queue undefined
    assert verdicts["team-a/sample-job"] == "waiting"
    assert verdicts["default/tas-sample-required0"] == "blocked"  # admitted; no node exists
    assert found["topology"]["source"] == "Topology/default (kueue.x-k8s.io)"
    reasons = {u["reason"] for u in document["unsupported"]}
    assert "Volcano networkTopology (HyperNode tiers) not supported" in reasons


def test_it_prints_the_read_section_before_the_text_report() -> None:
    result = evaluated("gangs", "text")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("== Read ==\n")
    assert "  100 pending pod(s) not yet created by Job/default/job-1\n" in result.stdout
    assert "ignored (kinds not modelled): 6 HyperNode ()\n" in result.stdout
    assert "nothing is pending" not in result.stdout


def test_it_reports_the_nodegroups_folder_with_discovered_karpenter_groups() -> None:
    result = evaluated("nodegroups")
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    # NodePools are modelled (discovered groups), the kwok config is read and said
    # to be not modelled, Kueue's ProvisioningRequestConfig gives its check's class:
    # none is an ignored kind any more
    assert counts(document["ignored"]) == {"NodeOverlay (karpenter.sh/v1alpha1)": 1}
    objects = {u["object"] for u in document["unsupported"]}
    assert "KwokProviderConfig/kwok-provider-config" in objects
    # sample-job-: parallelism 3 of 1 GPU each (tolerating nvidia.com/gpu:NoSchedule),
    # within cluster-queue's 9 GPUs; NodePool gpu allows p3.8xlarge (4 V100) with the
    # same taint: one such node would hold all 3 pods. But the folder's
    # ProvisioningRequestConfig asks with check-capacity.autoscaling.x-k8s.io, which
    # never scales up (cluster-autoscaler checkcapacity/provisioningclass.go), and
    # Karpenter acts on no ProvisioningRequest: Kueue keeps the job waiting
    (workload,) = document["workloads"]
    assert (workload["name"], workload["pods"], workload["gpus"]) == ("default/sample-job-0", 3, 3)
    assert workload["verdict"] == "waiting"
    (reason,) = workload["reasons"]
    assert "check-capacity.autoscaling.x-k8s.io" in reason
    assert "add 1 node(s) of group gpu-p3.8xlarge" in reason
    assert "launched by Karpenter" in reason and "best-effort-atomic" not in reason
    # AdmissionCheck sample-prov runs kueue.x-k8s.io/provisioning-request: modelled (Kueue
    # creates the workload's ProvisioningRequest), so no "not modelled" note for it
    assert not any("admission check" in n for n in document["input"]["notes"])


def test_it_reports_the_nodes_folder_rejected_file_and_ignored_kind() -> None:
    result = evaluated("nodes", "text")
    assert result.returncode == 2
    assert "gfd-readme-kubectl-get-nodes-a100-dgx2h.yaml: not valid YAML" in result.stderr
    assert "read: no object this tool models\n" in result.stdout
    assert "ignored (kinds not modelled): 1 Cluster (kind.x-k8s.io/v1alpha4)\n" in result.stdout
    assert "rejected: 1 file(s)/object(s), listed on stderr\n" in result.stdout


def test_it_reports_the_dra_folder_with_its_deployments_replicas() -> None:
    result = evaluated("dra")
    assert result.returncode == 2  # 9 fragments and broken objects, each named on stderr
    document = json.loads(result.stdout)
    found = document["input"]
    assert len(found["rejected"]) == 9
    assert counts(document["ignored"]) == {}  # Namespaces are read (namespaceSelector)
    assert {s["controller"]: s["pods"] for s in found["synthesized"]} == {
        "Deployment/gpu-test4/pod": 4,
        "Deployment/gpu-test6/pod": 4,
    }
    assert found["pods"] == {"bound": 0, "pending": 12}  # 4 Pods + 2 x 4 replicas
    gpu_test4 = next(
        s for s in found["synthesized"] if s["controller"] == "Deployment/gpu-test4/pod"
    )
    assert gpu_test4["podNames"] == [f"gpu-test4/pod-pending-{i}" for i in range(4)]
