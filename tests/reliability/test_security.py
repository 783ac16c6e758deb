"""Security properties that do not belong to one app: CSRF on every POST form, no secrets
in the repository, read-only cluster RBAC. (check --deploy, WebSocket origin/auth,
auto-escaping and throttles are pinned where they live; docs/RELIABILITY.md lists them.)"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import REPO_ROOT

PASSWORD = "csrf-probe-password-1"
FORBIDDEN = 403

# Documented development defaults and placeholders (README, .env.example, compose, CI, tests).
DOCUMENTED_DEV_SECRETS = {
    "capacityweb",
    "capacityweb-demo",
    "postgres",
    "password",
    "PASSWORD",
    "secret",
}
SECRET_PATTERNS = {
    "private key": re.compile(r"-----BEGIN (?:RSA |EC |OPENSSH |DSA |ENCRYPTED )?PRIVATE KEY-----"),
    "AWS access key": re.compile(r"\bAKIA[0-9A-Z]{16}\b"),
    "GitHub token": re.compile(r"\bgh[pousr]_[A-Za-z0-9]{36,}\b"),
    "Slack token": re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}\b"),
    "Google API key": re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b"),
    "bearer token": re.compile(r"\bBearer\s+[A-Za-z0-9._~+/-]{40,}"),
}
URL_PASSWORD = re.compile(r"[a-z][a-z0-9+]*://[^/\s:@'\"]+:([^@\s'\"/]+)@")
ASSIGNED_SECRET = re.compile(
    r"(?i)\b(?:password|passwd|secret_key|api_key|token)\b\s*[:=]\s*['\"]([^'\"\s]{8,})['\"]"
)


def tracked_text_files() -> list[Path]:
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=REPO_ROOT, capture_output=True, check=True
    ).stdout
    files = [REPO_ROOT / name for name in listed.decode().split("\0") if name]
    return [f for f in files if f.is_file() and f.suffix not in (".png", ".ico", ".gz")]


def secret_findings(path: Path) -> list[str]:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        return []
    findings = [name for name, pattern in SECRET_PATTERNS.items() if pattern.search(text)]
    is_test = "tests" in path.relative_to(REPO_ROOT).parts
    for match in URL_PASSWORD.finditer(text):
        if match.group(1) not in DOCUMENTED_DEV_SECRETS and not match.group(1).startswith("$"):
            findings.append(f"password in URL {match.group(0)!r}")
    if not is_test:  # tests create throwaway users with literal passwords on purpose
        for match in ASSIGNED_SECRET.finditer(text):
            value = match.group(1)
            if value not in DOCUMENTED_DEV_SECRETS and not value.startswith(("$", "{", "<")):
                findings.append(f"assigned secret {match.group(0)!r}")
    return findings


def test_it_finds_no_private_keys_tokens_or_passwords_in_tracked_files() -> None:
    findings = {
        str(path.relative_to(REPO_ROOT)): found
        for path in tracked_text_files()
        if (found := secret_findings(path))
    }
    assert findings == {}


def test_it_recognises_a_planted_private_key_and_token(tmp_path: Path) -> None:
    planted = REPO_ROOT / "var" / "planted-secret-probe.txt"
    planted.parent.mkdir(exist_ok=True)
    key_header = "-----BEGIN " + "RSA PRIVATE KEY-----"
    planted.write_text(f"{key_header}\ntoken = 'ghp_{'a' * 36}'\n")
    try:
        assert set(secret_findings(planted)) >= {"private key", "GitHub token"}
    finally:
        planted.unlink()


# --- read-only RBAC --------------------------------------------------------------------


def deployed_roles(kind: str) -> list[dict[str, Any]]:
    roles = []
    for path in sorted((REPO_ROOT / "deploy").glob("*.yaml")):
        documents = yaml.safe_load_all(path.read_text())
        roles += [d for d in documents if d and d.get("kind") == kind]
    return roles


def resources_the_kube_source_reads() -> set[tuple[str, str]]:
    """(apiGroup, resource) of every kind the kube source lists in all namespaces
    (topology.ingest.kubekinds; the local list/watch server of tests/ingest checks each path)."""
    from topology.ingest.kubekinds import DEFAULT_KINDS

    return {(kind.group, kind.plural) for kind in DEFAULT_KINDS if not kind.namespace}


def test_it_grants_the_cluster_reader_only_get_list_and_watch() -> None:
    roles = deployed_roles("ClusterRole") + deployed_roles("Role")
    assert len(roles) == 2, "deploy/*.yaml: one ClusterRole and one Role expected"
    verbs = {verb for role in roles for rule in role["rules"] for verb in rule["verbs"]}
    assert verbs == {"get", "list", "watch"}


def test_it_grants_exactly_the_resources_the_kube_source_reads() -> None:
    granted = {
        (group, resource)
        for role in deployed_roles("ClusterRole")
        for rule in role["rules"]
        for group in rule["apiGroups"]
        for resource in rule["resources"]
    }
    assert granted == resources_the_kube_source_reads()
    assert ("", "configmaps") not in granted  # no cluster-wide ConfigMap (or Secret) access
    assert not any(resource == "secrets" for _group, resource in granted)


def test_it_reads_only_the_autoscaler_status_configmap() -> None:
    from topology.ingest.kubekinds import DEFAULT_KINDS

    (config_map,) = [k for k in DEFAULT_KINDS if k.namespace]
    (role,) = deployed_roles("Role")
    assert role["metadata"]["namespace"] == config_map.namespace == "kube-system"
    assert role["rules"] == [
        {
            "apiGroups": [""],
            "resources": ["configmaps"],
            "resourceNames": [config_map.name],
            "verbs": ["get", "list", "watch"],
        }
    ]
    assert config_map.name == "cluster-autoscaler-status"
    (binding,) = deployed_roles("RoleBinding")
    assert binding["metadata"]["namespace"] == "kube-system"
    assert binding["roleRef"]["name"] == role["metadata"]["name"]
    assert binding["subjects"] == deployed_roles("ClusterRoleBinding")[0]["subjects"]


# --- CSRF --------------------------------------------------------------------------------


@pytest.fixture
def csrf_client(db: None) -> Any:
    from django.contrib.auth.models import User
    from django.test import Client

    User.objects.create_user("csrf-probe", password=PASSWORD, is_staff=True, is_superuser=True)
    return Client(enforce_csrf_checks=True)


def csrf_token(client: Any, url: str) -> str:
    client.get(url)
    return client.cookies["csrftoken"].value


@pytest.mark.parametrize("url", ["/accounts/login/", "/admin/login/"])
def test_it_refuses_a_login_post_without_a_csrf_token(csrf_client: Any, url: str) -> None:
    response = csrf_client.post(url, {"username": "csrf-probe", "password": PASSWORD})
    assert response.status_code == FORBIDDEN


def test_it_accepts_the_same_login_post_with_its_token(csrf_client: Any) -> None:
    token = csrf_token(csrf_client, "/accounts/login/")
    data = {"username": "csrf-probe", "password": PASSWORD, "csrfmiddlewaretoken": token}
    response = csrf_client.post("/accounts/login/", data)
    assert response.status_code == 302


def test_it_refuses_a_logout_post_without_a_csrf_token(csrf_client: Any) -> None:
    from django.contrib.auth.models import User

    csrf_client.force_login(User.objects.get(username="csrf-probe"))
    assert csrf_client.post("/accounts/logout/").status_code == FORBIDDEN
    assert "_auth_user_id" in csrf_client.session


def test_it_refuses_a_session_authenticated_api_write_without_a_csrf_token(
    csrf_client: Any,
) -> None:
    from django.contrib.auth.models import User

    from topology.models import Cluster

    cluster = Cluster.objects.create(name="csrf-probe", source_kind="files")
    csrf_client.force_login(User.objects.get(username="csrf-probe"))
    response = csrf_client.post(f"/api/v1/clusters/{cluster.pk}/ingest/")
    assert response.status_code == FORBIDDEN
    assert "CSRF" in response.json()["detail"]
