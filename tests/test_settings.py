"""Settings: zero-config defaults, service URLs, production hardening, documented variables.

Each test reads settings in a fresh interpreter, because settings are read
once per process from the environment.
"""

import json
import re
import secrets

from tests.conftest import REPO_ROOT, environment_without_services, run_manage, run_python

PRINT_SETTINGS = """
import json, django
django.setup()
from django.conf import settings
print(json.dumps({
    "engine": settings.DATABASES["default"]["ENGINE"],
    "database_name": str(settings.DATABASES["default"]["NAME"]),
    "broker": settings.CELERY_BROKER_URL,
    "result_backend": settings.CELERY_RESULT_BACKEND,
    "channel_layer": settings.CHANNEL_LAYERS["default"]["BACKEND"],
    "embedded_worker": settings.EMBEDDED_WORKER,
    "debug": settings.DEBUG,
    "first_app": settings.INSTALLED_APPS[0],
    "cache": settings.CACHES["default"]["BACKEND"].rsplit(".", 1)[-1],
    "cache_location": settings.CACHES["default"].get("LOCATION", ""),
    "pool": settings.DATABASES["default"].get("OPTIONS", {}).get("pool"),
    "connect_timeout": settings.DATABASES["default"].get("OPTIONS", {}).get("connect_timeout"),
}))
"""

POSTGRES_URL = "postgres://capacityweb:secret@127.0.0.1:5432/capacityweb"
REDIS_URL = "redis://127.0.0.1:6379/0"


def settings_under(**environment: str) -> dict[str, object]:
    result = run_python(PRINT_SETTINGS, environment_without_services(**environment))
    assert result.returncode == 0, result.stderr
    loaded: dict[str, object] = json.loads(result.stdout.strip().splitlines()[-1])
    return loaded


def production_environment() -> dict[str, str]:
    return environment_without_services(
        DEBUG="False",
        SECRET_KEY=secrets.token_urlsafe(50),
        ALLOWED_HOSTS="example.com",
        DASHBOARD_BASE_URL="https://example.com",
    )


def test_it_defaults_to_sqlite_in_var() -> None:
    loaded = settings_under()
    assert loaded["engine"] == "django.db.backends.sqlite3"
    assert str(loaded["database_name"]).endswith("var/db.sqlite3")


def test_it_defaults_to_in_process_broker_layer_and_embedded_worker() -> None:
    loaded = settings_under()
    assert loaded["broker"] == "memory://"
    assert loaded["channel_layer"] == "channels.layers.InMemoryChannelLayer"
    assert loaded["embedded_worker"] is True


def test_it_uses_postgres_with_psycopg_when_database_url_is_set() -> None:
    loaded = settings_under(DATABASE_URL=POSTGRES_URL)
    assert loaded["engine"] == "django.db.backends.postgresql"
    assert loaded["database_name"] == "capacityweb"


def test_it_uses_redis_and_no_embedded_worker_when_redis_url_is_set() -> None:
    loaded = settings_under(REDIS_URL=REDIS_URL)
    assert loaded["broker"] == REDIS_URL
    assert loaded["result_backend"] == REDIS_URL
    assert loaded["channel_layer"] == "channels_redis.core.RedisChannelLayer"
    assert loaded["embedded_worker"] is False


def test_it_installs_daphne_first_so_runserver_speaks_asgi() -> None:
    assert settings_under()["first_app"] == "daphne"


def test_it_passes_the_deployment_checklist_in_production() -> None:
    result = run_manage("check", "--deploy", environment=production_environment())
    assert result.returncode == 0, result.stderr
    assert "System check identified no issues" in result.stdout, result.stdout + result.stderr


def test_it_warns_in_production_that_digest_links_are_paths_without_a_base_url() -> None:
    environment = production_environment()
    environment.pop("DASHBOARD_BASE_URL")
    result = run_manage("check", environment=environment)
    assert result.returncode == 0, result.stderr
    output = result.stdout + result.stderr
    assert "(reservations.W001) DASHBOARD_BASE_URL is not set: links in digest emails" in output


def test_it_refuses_the_insecure_default_secret_in_production() -> None:
    environment = environment_without_services(DEBUG="False", ALLOWED_HOSTS="example.com")
    environment.pop("SECRET_KEY", None)
    result = run_manage("check", environment=environment)
    assert result.returncode != 0
    assert "SECRET_KEY must be set" in result.stderr


def test_it_keeps_the_throttle_cache_in_redis_beside_broker_and_channel_layer() -> None:
    loaded = settings_under(REDIS_URL=REDIS_URL)
    assert loaded["cache"] == "SharedRedisCache"
    assert loaded["cache_location"] == "redis://127.0.0.1:6379/1"


def test_it_keeps_the_cache_in_process_memory_without_redis() -> None:
    assert settings_under()["cache"] == "LocMemCache"


def test_it_pools_postgres_connections_when_asked() -> None:
    assert settings_under(DATABASE_URL=POSTGRES_URL)["pool"] is None
    pooled = settings_under(DATABASE_URL=POSTGRES_URL, DATABASE_POOL="true")["pool"]
    assert pooled == {"min_size": 1, "max_size": 8, "timeout": 3}
    assert settings_under(DATABASE_POOL="true")["pool"] is None  # SQLite has no pool


def test_it_bounds_the_wait_for_a_postgres_connection() -> None:
    assert settings_under(DATABASE_URL=POSTGRES_URL)["connect_timeout"] == 3
    pooled = settings_under(
        DATABASE_URL=POSTGRES_URL, DATABASE_POOL="true", DATABASE_CONNECT_TIMEOUT_SECONDS="5"
    )
    assert (pooled["connect_timeout"], pooled["pool"]["timeout"]) == (5, 5)


def test_it_documents_every_environment_variable_in_env_example() -> None:
    settings_source = (REPO_ROOT / "capacityweb" / "settings.py").read_text()
    read_variables = set(re.findall(r'env\.[a-z_]+\(\s*"([A-Z_]+)"', settings_source))
    example = (REPO_ROOT / ".env.example").read_text()
    documented = set(re.findall(r"^(?:# )?([A-Z_]+)=", example, flags=re.MULTILINE))
    assert read_variables, "no env reads found in settings.py"
    assert read_variables - documented == set()


def test_it_refuses_a_webhook_allowed_network_that_is_not_a_cidr() -> None:
    result = run_python(
        PRINT_SETTINGS, environment_without_services(WEBHOOK_ALLOWED_NETWORKS="10.0.0.0/33")
    )

    assert result.returncode != 0
    assert "WEBHOOK_ALLOWED_NETWORKS: '10.0.0.0/33' does not appear to be" in result.stderr
