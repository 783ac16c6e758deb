"""Settings for capacityweb, read from the environment through one typed reader.

Zero-config default (nothing set): DEBUG on, SQLite in var/, an in-process
channel layer, Celery on the in-memory broker with the worker and beat embedded
in the dev process. Set DATABASE_URL / REDIS_URL for Postgres and Redis; then
workers and beat run as separate processes. Every variable is listed, with its
meaning, in .env.example.
"""

import ipaddress
from datetime import timedelta
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import environ
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = BASE_DIR / "var"
STATIC_ROOT = VAR_DIR / "static"
STATIC_ROOT.mkdir(parents=True, exist_ok=True)

INSECURE_DEV_SECRET_KEY = "django-insecure-capacityweb-dev-only-never-use-in-production"

env = environ.Env()
environ.Env.read_env(BASE_DIR / ".env", overwrite=False)

DEBUG = env.bool("DEBUG", default=True)
SECRET_KEY = env.str("SECRET_KEY", default=INSECURE_DEV_SECRET_KEY)
if not DEBUG and SECRET_KEY == INSECURE_DEV_SECRET_KEY:
    raise ImproperlyConfigured("SECRET_KEY must be set from the environment when DEBUG is off")

ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["127.0.0.1", "localhost", "[::1]"])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_celery_beat",
    "channels",
    "axes",
    "topology",
    "reservations",
    "recommender",
    "capacityweb",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    # Content-Security-Policy: scripts only from this host, no inline script, no framing
    "capacityweb.csp.ContentSecurityPolicyMiddleware",
    # Serves collected static files (Plotly bundle included) when no proxy does, e.g. in compose.
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Postgres down or unreachable: 503 with Retry-After, not a 500 (or a hang)
    "capacityweb.dbunavailable.DatabaseUnavailableMiddleware",
    # login lock-outs (AXES_* below): last, as django-axes requires
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "capacityweb.urls"
WSGI_APPLICATION = "capacityweb.wsgi.application"
ASGI_APPLICATION = "capacityweb.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "capacityweb.context_processors.currency",
                "capacityweb.context_processors.live_updates",
            ],
        },
    },
]

SQLITE_DEFAULT_URL = f"sqlite:///{VAR_DIR / 'db.sqlite3'}"
DATABASES = {
    # An empty DATABASE_URL (as compose passes an unset variable) means the default too.
    "default": env.db_url_config(env.str("DATABASE_URL", default="") or SQLITE_DEFAULT_URL),
}
DATABASES["default"]["CONN_MAX_AGE"] = env.int("CONN_MAX_AGE", default=0)
# Longest wait for a database connection, new (libpq connect_timeout) or from the pool:
# with Postgres down or unreachable a request answers 503 after this, not after the
# pool's 30 s default (capacityweb.dbunavailable).
DATABASE_CONNECT_TIMEOUT_SECONDS = env.int("DATABASE_CONNECT_TIMEOUT_SECONDS", default=3)
if DATABASES["default"]["ENGINE"].endswith("postgresql"):
    DATABASES["default"].setdefault("OPTIONS", {})["connect_timeout"] = (
        DATABASE_CONNECT_TIMEOUT_SECONDS
    )
# SQLite (`make run`) is written by several processes at once: the server with its embedded
# worker and beat, and `manage.py ingest` from a second shell. WAL lets pages read while one
# of them writes; a writer waits for the lock up to SQLITE_BUSY_TIMEOUT_SECONDS instead of
# failing at once; IMMEDIATE transactions take the write lock at BEGIN, so a transaction
# that read first never has to upgrade its lock, which SQLite refuses at once ("database is
# locked") when another writer holds it, whatever the timeout (docs/RELIABILITY.md).
SQLITE_BUSY_TIMEOUT_SECONDS = env.float("SQLITE_BUSY_TIMEOUT_SECONDS", default=30.0)
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {
            "timeout": SQLITE_BUSY_TIMEOUT_SECONDS,
            "transaction_mode": "IMMEDIATE",
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL",
        }
    )
# A connection pool per web process (Postgres only; compose's web service turns it on).
# Without a pool each request pays a new connection and its password exchange, more than
# most views cost (docs/BENCHMARKS.md, "HTTP"): the request threads (WEB_THREADS) take
# connections from it and give them back after each request. Requires CONN_MAX_AGE=0.
# Off for Celery workers (forked).
DATABASE_POOL = env.bool("DATABASE_POOL", default=False) and DATABASES["default"][
    "ENGINE"
].endswith("postgresql")
if DATABASE_POOL:
    DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {
        "min_size": 1,
        "max_size": env.int("DATABASE_POOL_SIZE", default=8),
        "timeout": DATABASE_CONNECT_TIMEOUT_SECONDS,
    }
    # Django then has the pool check each connection it hands out (one empty round trip):
    # one Postgres closed (a restart, an idle timeout) is replaced instead of failing a request.
    DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# django-axes first (it refuses a locked-out account or address before any password is
# checked), then capacityweb's (the user in one plain query); Django's for sessions made
# before it.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "capacityweb.api.authentication.ModelBackend",
    "django.contrib.auth.backends.ModelBackend",
]

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/accounts/login/"

# Login brute force (django-axes, on /accounts/login/, /admin/login/ and every other
# authenticate() with a request): LOGIN_FAILURE_LIMIT failed sign-ins for one account
# (from anywhere), or from one address (for any accounts), lock that account or that
# address out for LOGIN_LOCKOUT_MINUTES; a failure while locked out starts the wait
# again. The address is REMOTE_ADDR only (axes' default: forwarded headers can be
# forged). The lock-out is said on the sign-in page, answered 429
# (capacityweb.lockout). `manage.py axes_reset` lifts every lock-out.
AXES_FAILURE_LIMIT = env.int("LOGIN_FAILURE_LIMIT", default=10)
AXES_COOLOFF_TIME = timedelta(minutes=env.int("LOGIN_LOCKOUT_MINUTES", default=15))
AXES_LOCKOUT_PARAMETERS = ["username", "ip_address"]
AXES_LOCKOUT_CALLABLE = "capacityweb.lockout.locked_out"
AXES_VERBOSE = False  # no banner on every manage.py command; attempts are in the admin

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]

# --- Redis: Celery broker + results, channel layer ---------------------------
REDIS_URL = env.str("REDIS_URL", default="")
EMBEDDED_WORKER = env.bool("EMBEDDED_WORKER", default=not REDIS_URL)

if REDIS_URL:
    CELERY_BROKER_URL = REDIS_URL
    CELERY_RESULT_BACKEND = REDIS_URL
    # acks_late tasks of a killed worker come back after the visibility timeout
    # (Redis default: 1 h). Ingest and evaluation are idempotent and take seconds,
    # so a short timeout gets a crashed ingest retried soon; keep it above the
    # longest task or the task runs twice (harmlessly, but twice).
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "visibility_timeout": env.int("CELERY_VISIBILITY_TIMEOUT_SECONDS", default=900)
    }
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            # socket_timeout None: redis-py 8 defaults to 5 s, which kills every idle
            # consumer's blocking receive (close 1011); see docs/RELIABILITY.md.
            "CONFIG": {"hosts": [{"address": REDIS_URL, "socket_timeout": None}]},
        },
    }
else:
    CELERY_BROKER_URL = "memory://"
    CELERY_RESULT_BACKEND = "cache+memory://"
    # The in-process queues are polled; poll often so the dashboard feels immediate.
    CELERY_BROKER_TRANSPORT_OPTIONS = {"polling_interval": 0.1}
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}

# --- Caches ----------------------------------------------------------------------
# "default" holds the API throttle counters, sessions (cached_db), the idle report, the
# overview cards and each evaluation's default heatmap view; with Redis it is shared by
# every web worker (otherwise each worker would allow the whole rate). It uses REDIS_URL's
# server with the next database number (CACHE_URL to choose), so clearing it never
# touches the Celery queues or channel groups. Heatmap payloads, which never change once
# an evaluation is stored, are also kept in each web process (HEATMAP_LOCAL_BYTES).
CACHE_URL = env.str("CACHE_URL", default="")
if not CACHE_URL and REDIS_URL:
    _redis = urlsplit(REDIS_URL)
    _redis_db = int(_redis.path.strip("/") or 0)
    CACHE_URL = urlunsplit(_redis._replace(path=f"/{_redis_db + 1}"))
HEATMAP_CACHE_SECONDS = env.int("HEATMAP_CACHE_SECONDS", default=3600)  # in the shared cache
# Heatmap payloads each web process keeps in memory (recommender.selectors.LOCAL_PAYLOADS).
HEATMAP_LOCAL_BYTES = env.int("HEATMAP_LOCAL_BYTES", default=256 * 1024 * 1024)
CACHES = {
    "default": (
        {"BACKEND": "capacityweb.cache.SharedRedisCache", "LOCATION": CACHE_URL}
        if CACHE_URL
        else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
    ),
}

# Sessions are read from the cache (Redis when set) and written through to the database, so
# a page view costs a cache read, not a query; a cache miss falls back to the database.
SESSION_ENGINE = "django.contrib.sessions.backends.cached_db"

CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BEAT_SCHEDULER = "django_celery_beat.schedulers:DatabaseScheduler"
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TIMEZONE = TIME_ZONE
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# Two queues: "celery" (ingest, evaluations, digests) and "what-if" (the workload page's
# what-if, recommender.whatif.service), so a what-if never waits behind a long evaluation on a
# worker started with `-Q what-if`. A worker started without -Q consumes both (make run's
# embedded worker, the tests' worker).
CELERY_TASK_DEFAULT_QUEUE = "celery"
CELERY_TASK_QUEUES = {"celery": {}, "what-if": {}}
CELERY_TASK_ROUTES = {"recommender.tasks.answer_what_if": {"queue": "what-if"}}

# --- Email -------------------------------------------------------------------
vars().update(env.email_url("EMAIL_URL", default="consolemail://"))
DEFAULT_FROM_EMAIL = env.str("DEFAULT_FROM_EMAIL", default="capacityweb@localhost")
SERVER_EMAIL = DEFAULT_FROM_EMAIL

# --- capacityweb ---------------------------------------------------------------
DASHBOARD_BASE_URL = env.str("DASHBOARD_BASE_URL", default="")
SNAPSHOT_RETENTION_DAYS = env.int("SNAPSHOT_RETENTION_DAYS", default=30)
# An evaluation running longer is stopped and recorded as failed, naming the limit
# (recommender.timelimit, in every pool); the hard limit kills a prefork worker's child
# that ignores the soft one (Celery sends the hard limit in each task message: give the
# web and the workers the same value). Keep both under CELERY_VISIBILITY_TIMEOUT_SECONDS.
EVALUATION_SOFT_TIME_LIMIT_SECONDS = env.float("EVALUATION_SOFT_TIME_LIMIT_SECONDS", default=300)
EVALUATION_TIME_LIMIT_SECONDS = env.float("EVALUATION_TIME_LIMIT_SECONDS", default=360)
# An evaluation that meets a database or broker error is retried after 2, 4, 8 ... seconds
# (at most EVALUATION_RETRY_MAX_SECONDS apart), EVALUATION_MAX_RETRIES times.
EVALUATION_MAX_RETRIES = env.int("EVALUATION_MAX_RETRIES", default=8)
EVALUATION_RETRY_MAX_SECONDS = env.int("EVALUATION_RETRY_MAX_SECONDS", default=120)
# The what-if (recommender.whatif.service): each answered within WHAT_IF_SECONDS of being asked,
# time waiting in the queue included, else it fails naming the limit; a user has at most
# one running and one waiting (a third is a 429), and when WHAT_IF_QUEUE_MAX what-ifs of
# all users are waiting or running, the next is a 503 (both with Retry-After).
WHAT_IF_SECONDS = env.float("WHAT_IF_SECONDS", default=20.0)
WHAT_IF_QUEUE_MAX = env.int("WHAT_IF_QUEUE_MAX", default=32)
MAX_SNAPSHOT_BYTES = env.int("MAX_SNAPSHOT_BYTES", default=64 * 1024 * 1024)
MAX_SNAPSHOT_OBJECTS = env.int("MAX_SNAPSHOT_OBJECTS", default=200_000)
# Retries of an unreachable source (topology.ingest.kubeapi.Backoff within one read, then
# topology.follow between reads): base · 2^n seconds with jitter, capped.
INGEST_RETRY_BASE_SECONDS = env.float("INGEST_RETRY_BASE_SECONDS", default=0.5)
INGEST_RETRY_CAP_SECONDS = env.float("INGEST_RETRY_CAP_SECONDS", default=60.0)
# `ingest --follow` keeps each kind's watch open, re-opened after INGEST_WATCH_MIN_SECONDS
# times 1 to 2 (client-go's informers: 5 min), and reads INGEST_DEBOUNCE_SECONDS after the
# first change it sees (so a burst of events makes one snapshot), not after --interval.
INGEST_WATCH_MIN_SECONDS = env.float("INGEST_WATCH_MIN_SECONDS", default=300.0)
INGEST_DEBOUNCE_SECONDS = env.float("INGEST_DEBOUNCE_SECONDS", default=1.0)
# ISO 4217 code of every money figure (reports, API, pages). The bundled price table
# (topology/data/prices.yaml) is in USD: with another currency, discovered groups are
# priced only by a NodeGroup's pricePerNodeHour.
CURRENCY = env.str("CURRENCY", default="USD")
# Allocated but idle (reservations/utilisation/dcgm.py): a GPU a pod holds counts as idle when
# its engine activity stays below UTILISATION_IDLE_BELOW_PERCENT for at least
# UTILISATION_IDLE_FOR_SECONDS; measured from Prometheus at UTILISATION_STEP_SECONDS
# resolution over at most UTILISATION_WINDOW_SECONDS per run (the beat runs every 15 min).
UTILISATION_IDLE_BELOW_PERCENT = env.float("UTILISATION_IDLE_BELOW_PERCENT", default=5.0)
UTILISATION_IDLE_FOR_SECONDS = env.int("UTILISATION_IDLE_FOR_SECONDS", default=3600)
UTILISATION_STEP_SECONDS = env.int("UTILISATION_STEP_SECONDS", default=60)
UTILISATION_WINDOW_SECONDS = env.int("UTILISATION_WINDOW_SECONDS", default=6 * 3600)
# IANA zone the pages read and show date inputs in (the reservations range), unless the
# page's ?tz= names another. Stored times stay UTC.
DASHBOARD_TIME_ZONE = env.str("DASHBOARD_TIME_ZONE", default="UTC")
# /metrics (capacityweb/metrics.py): served to a request with "Authorization: Bearer
# METRICS_TOKEN" (when set) or from these networks (REMOTE_ADDR; default loopback only).
METRICS_TOKEN = env.str("METRICS_TOKEN", default="")
METRICS_ALLOWED_NETWORKS = env.list("METRICS_ALLOWED_NETWORKS", default=["127.0.0.1/8", "::1/128"])
# Digest webhooks post only to public addresses (reservations.webhook_guard); these networks
# (CIDRs) are admitted too, for deliberate internal receivers (e.g. a chat bridge on the
# private network). Default none: loopback, link-local, private, multicast, reserved and
# unspecified addresses are refused when the URL is saved and again at every send.
WEBHOOK_ALLOWED_NETWORKS = env.list("WEBHOOK_ALLOWED_NETWORKS", default=[])
for _network in WEBHOOK_ALLOWED_NETWORKS:
    try:
        ipaddress.ip_network(_network, strict=False)
    except ValueError as _error:
        raise ImproperlyConfigured(f"WEBHOOK_ALLOWED_NETWORKS: {_error}") from None
# Most addresses one digest subscription sends to (its recipients).
DIGEST_MAX_RECIPIENTS = env.int("DIGEST_MAX_RECIPIENTS", default=50)
# which autoscaler the report's "naive" side models (recommender.engine.autoscaler.profiles);
# `manage.py evaluate --autoscaler NAME` overrides it for one run
AUTOSCALER_PROFILE = env.str("AUTOSCALER_PROFILE", default="cluster-autoscaler")
# The cluster-autoscaler's command line (its Deployment's args, shell-split), e.g.
# "--expander=price --max-nodes-total=200" (a cluster's autoscaler_args overrides it;
# `manage.py evaluate --autoscaler-args` for one run); blank: upstream's defaults
CLUSTER_AUTOSCALER_ARGS = env.str("CLUSTER_AUTOSCALER_ARGS", default="")
# The scheduler scoring profile evaluations simulate (a cluster's scheduler_profile
# overrides it): kube-default (an unconfigured kube-scheduler), most-allocated, fgd.
SCHEDULER_PROFILE = env.str("SCHEDULER_PROFILE", default="kube-default")
DEMO_PASSWORD = env.str("DEMO_PASSWORD", default="capacityweb-demo")
# Seconds a live page waits without a message before asking its socket for the latest
# evaluation (one small query): changes that publish nowhere this server listens, such as
# `manage.py ingest` from a second shell beside `make run`'s in-process channel layer,
# reach open pages within this time.
LIVE_POLL_SECONDS = env.int("LIVE_POLL_SECONDS", default=30)
# Hours of history the demo cluster keeps (its snapshot a minute is ~11 MB with its
# evaluation: 2 h is ~1.4 GB of `make run`'s SQLite file at most).
DEMO_RETENTION_HOURS = env.float("DEMO_RETENTION_HOURS", default=2.0)
# Worker processes of `manage.py serve` (the production web tier; Uvicorn's own variable).
WEB_CONCURRENCY = env.int("WEB_CONCURRENCY", default=2)
# Threads per web process that run Django's middleware and views (capacityweb.handlers).
WEB_THREADS = env.int("WEB_THREADS", default=4)

# --- REST API ----------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.SessionAuthentication",
        "capacityweb.api.authentication.TokenAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    # JSON bodies nested deeper than capacityweb.api.parsers.MAX_JSON_DEPTH are a 400, not a 500
    "DEFAULT_PARSER_CLASSES": [
        "capacityweb.api.parsers.DepthLimitedJSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "PAGE_SIZE": 50,
    "DEFAULT_FILTER_BACKENDS": ["django_filters.rest_framework.DjangoFilterBackend"],
    "DEFAULT_THROTTLE_CLASSES": ["capacityweb.api.throttling.CountingScopedRateThrottle"],
    "DEFAULT_THROTTLE_RATES": {
        "writes": env.str("THROTTLE_RATE_WRITES", default="120/minute"),
        "reports": env.str("THROTTLE_RATE_REPORTS", default="60/minute"),
        # test digests sent now (API test-email and the page's button), per user
        "test-sends": env.str("THROTTLE_RATE_TEST_SENDS", default="5/hour"),
    },
}
# Service accounts no rate applies to (capacityweb.api.throttling), e.g. a schema fuzzer.
THROTTLE_EXEMPT_USERNAMES = env.list("THROTTLE_EXEMPT_USERNAMES", default=[])
SPECTACULAR_SETTINGS = {
    "TITLE": "capacityweb API",
    "DESCRIPTION": "Why GPU jobs are Pending and what the autoscaler should add.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    # Swagger UI and ReDoc from the installed sidecar package (static files), not a CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # Request bodies as their own components, so required strings carry minLength: 1
    "COMPONENT_SPLIT_REQUEST": True,
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "capacityweb.api.schema_errors.add_error_responses",
    ],
}

# --- Production hardening (effective when DEBUG is off) ------------------------
SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=not DEBUG)
SESSION_COOKIE_SECURE = env.bool("SESSION_COOKIE_SECURE", default=not DEBUG)
CSRF_COOKIE_SECURE = env.bool("CSRF_COOKIE_SECURE", default=not DEBUG)
SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=0 if DEBUG else 31_536_000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env.bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", default=not DEBUG)
SECURE_HSTS_PRELOAD = env.bool("SECURE_HSTS_PRELOAD", default=not DEBUG)
if env.bool("SECURE_PROXY_SSL_HEADER", default=False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="INFO")},
}
