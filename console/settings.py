"""Docket settings, read from the environment (see .env.example)."""

import ipaddress
import os
import sys
from datetime import timedelta
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured
from django.utils.csp import CSP

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("DOCKET_VAR_DIR", BASE_DIR / "var"))


def env_bool(name: str, default: bool = False) -> bool:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_int(name: str, default: int) -> int:
    value = os.environ.get(name)
    return int(value) if value not in (None, "") else default


def env_float(name: str, default: float) -> float:
    value = os.environ.get(name)
    return float(value) if value not in (None, "") else default


TESTING = "pytest" in sys.modules
DEBUG = env_bool("DJANGO_DEBUG", False)

SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY", "")
if not SECRET_KEY:
    if DEBUG or TESTING:
        SECRET_KEY = "insecure-docket-dev-key-only-for-make-run-and-tests"
    else:
        raise ImproperlyConfigured(
            "DJANGO_SECRET_KEY is not set. Set it in the environment "
            "(or set DJANGO_DEBUG=1 for local development)."
        )

ALLOWED_HOSTS = [
    h for h in os.environ.get("DJANGO_ALLOWED_HOSTS", "127.0.0.1,localhost").split(",") if h
]
CSRF_TRUSTED_ORIGINS = [
    o for o in os.environ.get("DJANGO_CSRF_TRUSTED_ORIGINS", "").split(",") if o
]

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "django_htmx",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",  # Swagger UI served from our own static files (no CDN, CSP-friendly)
    "axes",  # login lockout after repeated failures (DOCKET_LOGIN_FAILURE_LIMIT)
    # Docket's apps, lowest first: each may import only the apps listed before it, and their
    # ready() fill the registries of the lower ones in this order.
    "core",
    "evals",  # the migration history of the tables the apps below took over
    "evals.webhooks",
    "evals.catalog",
    "evals.ingest",  # traces pushed in: voice platforms' webhooks, OpenTelemetry (OTLP/HTTP)
    "evals.rules",
    "evals.judging",
    "evals.gating",
    "evals.conversation",
    "evals.classifiers",
    "evals.decisions",
    "evals.evalruns",
    "evals.trajectories",
    "evals.workbench",  # rule drafts judged before they ship, their verdicts kept apart
    "labeling",
    "console",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # Before sessions and auth: a NUL in a path, value, cookie or token never reaches a query.
    "core.middleware.BadInputMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django.middleware.csp.ContentSecurityPolicyMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "axes.middleware.AxesMiddleware",  # last, as django-axes asks
]

ROOT_URLCONF = "console.urls"
WSGI_APPLICATION = "console.wsgi.application"

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
                "django.template.context_processors.csp",
                "console.context_processors.roles",
            ],
        },
    },
]

if not os.environ.get("DATABASE_URL"):
    # A fresh clone has no var/: create it, or SQLite cannot open its file and migrate fails.
    VAR_DIR.mkdir(parents=True, exist_ok=True)
DATABASES = {
    "default": dj_database_url.parse(
        os.environ.get("DATABASE_URL") or f"sqlite:///{VAR_DIR / 'docket.sqlite3'}",
        conn_max_age=env_int("DATABASE_CONN_MAX_AGE", 0),
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # WAL and a busy timeout let the dev server and an eager judge run share the file.
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {"timeout": 20, "transaction_mode": "IMMEDIATE", "init_command": "PRAGMA journal_mode=WAL;"}
    )

if os.environ.get("DOCKET_TEST_DB_NAME"):
    # The name of the database the test runner creates (benchmarks point it at a scratch file).
    DATABASES["default"]["TEST"] = {"NAME": os.environ["DOCKET_TEST_DB_NAME"]}

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]

if TESTING:
    # Hashing is not under test; the default's million rounds would dominate the suite's time.
    PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "dashboard"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = os.environ.get("DOCKET_TIME_ZONE", "UTC")
USE_I18N = True
USE_TZ = True

STATIC_URL = "/static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "django.contrib.staticfiles.storage.StaticFilesStorage"
            if DEBUG or TESTING
            else "whitenoise.storage.CompressedManifestStaticFilesStorage"
        )
    },
    # Files uploaded on the import page, kept until their import is done (or a week): with
    # Celery workers on other machines, DOCKET_IMPORT_DIR must be a folder they all share (or
    # point this storage at an object store).
    "imports": {
        "BACKEND": "django.core.files.storage.FileSystemStorage",
        "OPTIONS": {"location": os.environ.get("DOCKET_IMPORT_DIR") or str(VAR_DIR / "imports")},
    },
}
# Recordings are large and seeked with range requests; serve them without the manifest.
WHITENOISE_USE_FINDERS = DEBUG or TESTING
WHITENOISE_AUTOREFRESH = DEBUG

# Security: strict by default, relaxed only for local development.
SESSION_COOKIE_SECURE = not DEBUG and not TESTING
CSRF_COOKIE_SECURE = not DEBUG and not TESTING
SECURE_HSTS_SECONDS = 0 if DEBUG or TESTING else env_int("DJANGO_HSTS_SECONDS", 31536000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = not DEBUG
# Preloading commits the whole registered domain to HTTPS in every browser; that is the domain
# owner's decision, not the console's: off unless asked for (check --deploy's W021 silenced).
SECURE_HSTS_PRELOAD = env_bool("DJANGO_HSTS_PRELOAD", False)
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
# Plain HTTP is redirected to HTTPS outside development. DJANGO_SSL_REDIRECT=0 with
# DJANGO_BEHIND_PROXY=1 says a proxy in front already redirects (check --deploy's W008 silenced
# then, as the operator decided); without a proxy named, W008 stays a warning.
SECURE_SSL_REDIRECT = env_bool("DJANGO_SSL_REDIRECT", not DEBUG and not TESTING)
# A load balancer asks for the health over plain HTTP, past the redirect.
SECURE_REDIRECT_EXEMPT = [r"^healthz$"]
SILENCED_SYSTEM_CHECKS = [
    *([] if SECURE_HSTS_PRELOAD else ["security.W021"]),
    *(["security.W008"] if not SECURE_SSL_REDIRECT and env_bool("DJANGO_BEHIND_PROXY") else []),
]
SECURE_PROXY_SSL_HEADER = (
    ("HTTP_X_FORWARDED_PROTO", "https") if env_bool("DJANGO_BEHIND_PROXY") else None
)
X_FRAME_OPTIONS = "DENY"
SECURE_CSP = {
    "default-src": [CSP.SELF],
    "script-src": [CSP.SELF],
    "style-src": [CSP.SELF],
    "img-src": [CSP.SELF, "data:"],
    "media-src": [CSP.SELF, "https:", "http:"],
    "connect-src": [CSP.SELF],
    "object-src": [CSP.NONE],
    "base-uri": [CSP.SELF],
    "frame-ancestors": [CSP.NONE],
    "form-action": [CSP.SELF],
}

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        # `Token KEY` checked against stored digests (core.tokens); bad tokens counted (429)
        "core.api.throttling.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
        "core.api.throttling.AnonymousThrottle",  # last: throttles what no class authenticated
    ],
    "DEFAULT_THROTTLE_CLASSES": ["core.api.throttling.UserRateThrottle"],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    # JSON only, bounded (core.parsing); the import endpoints add JSON Lines and YAML.
    "DEFAULT_PARSER_CLASSES": ["core.api.parsers.JSONParser"],
    "DEFAULT_SCHEMA_CLASS": "core.api.schema.AutoSchema",
    "DEFAULT_PAGINATION_CLASS": "core.api.pagination.LimitOffsetPagination",
    "PAGE_SIZE": 100,
    "EXCEPTION_HANDLER": "core.api.errors.exception_handler",
}
# The largest API page; a larger ?limit= is clamped to it.
DOCKET_API_MAX_LIMIT = env_int("DOCKET_API_MAX_LIMIT", 1000)
# /api/schema/ and /api/docs/ need a login unless this is set.
DOCKET_API_DOCS_PUBLIC = env_bool("DOCKET_API_DOCS_PUBLIC", False)
SPECTACULAR_SETTINGS = {
    "TITLE": "Docket API",
    "DESCRIPTION": "Import transcripts, rules and verdicts; review, calibrate and gate.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    # group the docs by resource (rules, transcripts, ...), not "v1"
    "SCHEMA_PATH_PREFIX": r"/api/v1/",
    # The schema's security schemes; AnonymousThrottle only throttles, it authenticates no one.
    "AUTHENTICATION_WHITELIST": [
        "core.api.throttling.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # Several models have a `status`; name each choice set after its model.
    "ENUM_NAME_OVERRIDES": {
        "RuleStatusEnum": "evals.rules.models.Rule.Status",
        "RuleVersionStatusEnum": "evals.rules.models.RuleVersion.Status",
        "IssueRowStatusEnum": "labeling.models.IssueRow.Status",
        "JudgeRunStatusEnum": "evals.judging.models.JudgeRun.Status",
        "GateRunStatusEnum": "evals.gating.models.GateRun.Status",
        "EvalRunStatusEnum": "evals.evalruns.models.EvalRun.Status",
    },
}

# Celery: eager in-process without a broker, real workers with one.
CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL", "")
CELERY_TASK_ALWAYS_EAGER = not CELERY_BROKER_URL
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_RESULT_BACKEND = os.environ.get("CELERY_RESULT_BACKEND", "") or None
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_SOFT_TIME_LIMIT = env_int("CELERY_TASK_SOFT_TIME_LIMIT", 300)
CELERY_TASK_TIME_LIMIT = env_int("CELERY_TASK_TIME_LIMIT", 360)
CELERY_TASK_ACKS_LATE = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TIMEZONE = TIME_ZONE
CELERY_BEAT_SCHEDULE: dict = {}

# The daily sample and the review queue (issue 3).
DOCKET_SAMPLE_SIZE = env_int("DOCKET_SAMPLE_SIZE", 85)
DOCKET_SAMPLE_WINDOW_HOURS = env_int("DOCKET_SAMPLE_WINDOW_HOURS", 24)
DOCKET_SAMPLE_HOUR = env_int("DOCKET_SAMPLE_HOUR", 6)
DOCKET_SAMPLE_JUDGE_SHARE = env_float("DOCKET_SAMPLE_JUDGE_SHARE", 0.3)
DOCKET_REVIEWS_PER_CALL = env_int("DOCKET_REVIEWS_PER_CALL", 1)
DOCKET_LEASE_MINUTES = env_int("DOCKET_LEASE_MINUTES", 45)
from celery.schedules import crontab

CELERY_BEAT_SCHEDULE["daily-sample"] = {
    "task": "labeling.tasks.daily_sample_make_task",
    "schedule": crontab(hour=DOCKET_SAMPLE_HOUR, minute=0),
}

# Work survives a dead worker (docs/operations.md): a run's worker renews its lease
# (heartbeat_at) every third of DOCKET_RUN_LEASE_S seconds; every DOCKET_RECOVER_INTERVAL_S
# seconds the sweep (`manage.py recover_runs` by hand) queues again the work whose lease expired,
# and ends as failed a run recovered DOCKET_RUN_MAX_RECOVERIES times without moving on.
DOCKET_RUN_LEASE_S = env_int("DOCKET_RUN_LEASE_S", 120)
DOCKET_RUN_MAX_RECOVERIES = env_int("DOCKET_RUN_MAX_RECOVERIES", 3)
DOCKET_RECOVER_INTERVAL_S = env_int("DOCKET_RECOVER_INTERVAL_S", 60)
CELERY_BEAT_SCHEDULE["recover-runs"] = {
    "task": "console.tasks.runs_recover_task",
    "schedule": float(DOCKET_RECOVER_INTERVAL_S),
}

# Structured logs: one key=value line per event, never transcript text.
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"kv": {"()": "console.logging.KeyValueFormatter"}},
    "handlers": {"stderr": {"class": "logging.StreamHandler", "formatter": "kv"}},
    "root": {"handlers": ["stderr"], "level": os.environ.get("DOCKET_LOG_LEVEL", "INFO")},
    "loggers": {"django.db.backends": {"level": "WARNING"}, "axes": {"level": "WARNING"}},
}

# The judge runner (issue: judge runner) and the review loop read these.
JUDGE_BASE_URL = os.environ.get("JUDGE_BASE_URL", "")
JUDGE_MODEL = os.environ.get("JUDGE_MODEL", "gpt-4o-mini")
JUDGE_API_KEY = os.environ.get("JUDGE_API_KEY", "")
JUDGE_TIMEOUT_S = env_float("JUDGE_TIMEOUT_S", 60.0)
JUDGE_MAX_RETRIES = env_int("JUDGE_MAX_RETRIES", 2)
# USD per 1,000 tokens (in, out) per judge model;
# JUDGE_PRICE_IN/OUT_PER_1K set the configured model's price.
JUDGE_PRICES: dict[str, tuple[float, float]] = {
    "gpt-4o-mini": (0.00015, 0.0006),
    "gpt-4o": (0.0025, 0.01),
    "gpt-4.1-mini": (0.0004, 0.0016),
    "gpt-4.1-nano": (0.0001, 0.0004),
    "gpt-4.1": (0.002, 0.008),
}
if os.environ.get("JUDGE_PRICE_IN_PER_1K") or os.environ.get("JUDGE_PRICE_OUT_PER_1K"):
    JUDGE_PRICES[JUDGE_MODEL] = (
        env_float("JUDGE_PRICE_IN_PER_1K", 0.0),
        env_float("JUDGE_PRICE_OUT_PER_1K", 0.0),
    )
# A judge run stops making calls once it has spent this much (0: no cap).
JUDGE_COST_CAP_USD = env_float("JUDGE_COST_CAP_USD", 10.0)
# A judge run stops making calls after this many failed in a row (a circuit breaker; 0: never).
JUDGE_BREAKER_FAILURES = env_int("JUDGE_BREAKER_FAILURES", 5)
# Celery rate limit for judge calls per worker process (e.g. "120/m"; empty: none).
JUDGE_RATE_LIMIT = os.environ.get("JUDGE_RATE_LIMIT", "")
# How the answer's schema is sent: json_schema (enforced by OpenAI, vLLM, llama.cpp), json_object,
# or none (for servers that reject json_schema; the schema then goes in the prompt). Answers are
# validated either way.
JUDGE_RESPONSE_FORMAT = os.environ.get("JUDGE_RESPONSE_FORMAT", "json_schema")
if JUDGE_RESPONSE_FORMAT not in ("json_schema", "json_object", "none"):
    raise ImproperlyConfigured("JUDGE_RESPONSE_FORMAT must be json_schema, json_object or none")

# Runtime turn classifiers (issue 11): injection guard, scope drift, frustration attribution.
# They call the judge's server (or their own) with a fast model; every call has this budget in
# seconds, and any error or timeout answers "no finding" (fail-open).
DOCKET_CLASSIFIER_BASE_URL = os.environ.get("DOCKET_CLASSIFIER_BASE_URL", JUDGE_BASE_URL)
DOCKET_CLASSIFIER_API_KEY = os.environ.get("DOCKET_CLASSIFIER_API_KEY", JUDGE_API_KEY)
DOCKET_CLASSIFIER_MODEL = os.environ.get("DOCKET_CLASSIFIER_MODEL", JUDGE_MODEL)
DOCKET_CLASSIFIER_TIMEOUT_S = env_float("DOCKET_CLASSIFIER_TIMEOUT_S", 2.0)
# The injection guard's LLM second pass (the pattern layer always runs).
DOCKET_INJECTION_LLM_CHECK_ENABLED = env_bool("DOCKET_INJECTION_LLM_CHECK_ENABLED", False)
# Eval runs (issue 12): the agent under test (an OpenAI-compatible chat-completions server that
# gets the agent version's instructions and tools), rows scored at once, the cost cap of a run
# (agent and judge calls; 0: none), and the pass-rate drop (percentage points) CI flags.
EVAL_AGENT_BASE_URL = os.environ.get("EVAL_AGENT_BASE_URL", "")
EVAL_AGENT_MODEL = os.environ.get("EVAL_AGENT_MODEL", "gpt-4o-mini")
EVAL_AGENT_API_KEY = os.environ.get("EVAL_AGENT_API_KEY", "")
EVAL_CONCURRENCY = env_int("EVAL_CONCURRENCY", 5)
EVAL_COST_CAP_USD = env_float("EVAL_COST_CAP_USD", 10.0)
EVAL_MAX_DROP = env_float("EVAL_MAX_DROP", 5.0)
# Seconds one eval run may take in a Celery worker (one task runs the whole run).
EVAL_RUN_TIME_LIMIT_S = env_int("EVAL_RUN_TIME_LIMIT_S", 4 * 3600)

# Calibration and promotion (issue 4): what a rule version needs before a lead may gate it.
DOCKET_MIN_MARKS = env_int("DOCKET_MIN_MARKS", 200)
DOCKET_PRECISION_FLOOR = env_float("DOCKET_PRECISION_FLOOR", 0.80)
DOCKET_RECALL_FLOOR = env_float("DOCKET_RECALL_FLOOR", 0.70)
DOCKET_SAFETY_PRECISION_FLOOR = env_float("DOCKET_SAFETY_PRECISION_FLOOR", 0.85)
DOCKET_SAFETY_RECALL_FLOOR = env_float("DOCKET_SAFETY_RECALL_FLOOR", 0.90)
# The rule workbench: marked calls a draft is judged on unless asked otherwise, and at most.
DOCKET_WORKBENCH_CALLS = env_int("DOCKET_WORKBENCH_CALLS", 300)
DOCKET_WORKBENCH_MAX_CALLS = env_int("DOCKET_WORKBENCH_MAX_CALLS", 5000)

# A gate run over HTTP with a real broker waits this long for the judge to fill in missing verdicts.
GATE_JUDGE_WAIT_S = env_float("GATE_JUDGE_WAIT_S", 900.0)
# Seconds between two looks at a gate run's judge run (the worker task, the CLI, the page's poll).
GATE_POLL_S = env_float("GATE_POLL_S", 2.0)

# Limits on what imports and API bodies may hold (issue 10): each error names its setting.
# An import body over HTTP (transcripts, verdicts), and a JSON array of transcripts parsed whole.
DOCKET_IMPORT_MAX_BYTES = env_int("DOCKET_IMPORT_MAX_BYTES", 1024**3)
# One JSON Lines record.
DOCKET_IMPORT_MAX_LINE_BYTES = env_int("DOCKET_IMPORT_MAX_LINE_BYTES", 16 * 1024**2)
# Turns in one transcript.
DOCKET_IMPORT_MAX_TURNS = env_int("DOCKET_IMPORT_MAX_TURNS", 10_000)
# A rules or gates file (YAML or JSON), parsed whole.
DOCKET_CONFIG_MAX_BYTES = env_int("DOCKET_CONFIG_MAX_BYTES", 1024**2)
# Seconds an import from the page may run in a Celery worker (it imports nothing past them).
DOCKET_IMPORT_TIME_LIMIT_S = env_int("DOCKET_IMPORT_TIME_LIMIT_S", 3600)
# Any other request body (Django's setting; JSON bodies are held whole).
DATA_UPLOAD_MAX_MEMORY_SIZE = env_int("DJANGO_DATA_UPLOAD_MAX_MEMORY_SIZE", 2_621_440)

# Abuse (issue 10). Logins: django-axes locks a username from one address after this many
# failures, for this many minutes (429 with the login page's explanation).
DOCKET_LOGIN_FAILURE_LIMIT = env_int("DOCKET_LOGIN_FAILURE_LIMIT", 10)
DOCKET_LOGIN_COOLOFF_MINUTES = env_int("DOCKET_LOGIN_COOLOFF_MINUTES", 15)
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = DOCKET_LOGIN_FAILURE_LIMIT
AXES_COOLOFF_TIME = timedelta(minutes=DOCKET_LOGIN_COOLOFF_MINUTES)
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_CALLABLE = "console.views.login_locked"
AXES_CLIENT_IP_CALLABLE = "core.api.throttling.client_ip"
# The API (rates as DRF writes them, e.g. "10/min"; empty: no limit), per address for requests
# with a bad token or none, per user for everyone logged in. Counted in the default cache.
DOCKET_API_BAD_TOKEN_RATE = os.environ.get("DOCKET_API_BAD_TOKEN_RATE", "10/min")
DOCKET_API_ANON_RATE = os.environ.get("DOCKET_API_ANON_RATE", "120/min")
DOCKET_API_USER_RATE = os.environ.get("DOCKET_API_USER_RATE", "3000/min")
# An API token's "last used" is written at most once in this many seconds (not on every request).
DOCKET_API_TOKEN_TOUCH_S = env_int("DOCKET_API_TOKEN_TOUCH_S", 60)
DOCKET_BEHIND_PROXY = env_bool("DJANGO_BEHIND_PROXY")
# Throttle counts must be shared by every server process: a Redis URL in production.
if os.environ.get("DOCKET_CACHE_URL"):
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": os.environ["DOCKET_CACHE_URL"],
        }
    }

# Webhooks (issue 12): seconds a receiver has to answer, attempts per delivery (the first and the
# retries), and the first retry's delay in seconds (doubling each time, at most an hour).
# DOCKET_PUBLIC_URL prefixes the links in webhook bodies (e.g. https://docket.example.com).
DOCKET_WEBHOOK_TIMEOUT_S = env_float("DOCKET_WEBHOOK_TIMEOUT_S", 5.0)
DOCKET_WEBHOOK_MAX_ATTEMPTS = env_int("DOCKET_WEBHOOK_MAX_ATTEMPTS", 6)
DOCKET_WEBHOOK_BACKOFF_S = env_float("DOCKET_WEBHOOK_BACKOFF_S", 10.0)
DOCKET_PUBLIC_URL = os.environ.get("DOCKET_PUBLIC_URL", "").rstrip("/")
# Webhooks go to public addresses only (core.egress); these networks (comma-separated, e.g.
# "10.20.0.0/16" for a receiver on the private network, "127.0.0.1/32" in tests) are let through.
DOCKET_EGRESS_ALLOW_NETWORKS = [
    n.strip() for n in os.environ.get("DOCKET_EGRESS_ALLOW_NETWORKS", "").split(",") if n.strip()
]
for _network in DOCKET_EGRESS_ALLOW_NETWORKS:
    ipaddress.ip_network(_network, strict=False)  # a typo stops the start, not the first webhook

# Trajectory axes (issue 12): a trajectory passes tool correctness at this share of its points,
# faithfulness at this share of supported claims; an axes report is flagged (exit 1) when an axis's
# pass rate drops more than DOCKET_AXES_MAX_DROP (absolute: 0.05 = five points) below the agent's
# last green report.
DOCKET_AXES_TOOL_PASS = env_float("DOCKET_AXES_TOOL_PASS", 1.0)
DOCKET_AXES_FAITHFULNESS_PASS = env_float("DOCKET_AXES_FAITHFULNESS_PASS", 1.0)
DOCKET_AXES_MAX_DROP = env_float("DOCKET_AXES_MAX_DROP", 0.05)
