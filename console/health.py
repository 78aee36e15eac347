"""What a load balancer or an operator asks of a server: can it reach its database and broker?"""

from django.conf import settings
from django.db import connection

HEALTH_TIMEOUT_S = 2.0
OK = "ok"


def _failed(exc: Exception) -> str:
    # The kind of error only: a driver's message can name hosts, users or a URL with its password.
    return f"failed: {type(exc).__name__}"


def database_check() -> str:
    """Return "ok" when a query answers, else "failed: <kind of error>"."""
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except Exception as exc:  # noqa: BLE001  (any failure is the answer, not a 500)
        return _failed(exc)
    return OK


def broker_check() -> str:
    """Return "ok" when the Celery broker accepts a connection, "not configured" without one
    (tasks then run in the web process), else "failed: <kind of error>"."""
    if not settings.CELERY_BROKER_URL:
        return "not configured"
    from kombu import Connection

    try:
        with Connection(
            settings.CELERY_BROKER_URL,
            connect_timeout=HEALTH_TIMEOUT_S,
            transport_options={
                "socket_connect_timeout": HEALTH_TIMEOUT_S,
                "socket_timeout": HEALTH_TIMEOUT_S,
            },
        ) as conn:
            conn.ensure_connection(max_retries=1, interval_start=0, timeout=HEALTH_TIMEOUT_S)
    except Exception as exc:  # noqa: BLE001
        return _failed(exc)
    return OK


def health() -> tuple[bool, dict[str, str]]:
    """Return whether the server can work, and each dependency's state."""
    state = {"database": database_check(), "broker": broker_check()}
    return not any(v.startswith("failed") for v in state.values()), state
