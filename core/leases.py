"""Leases on long work: a worker renews its row's `heartbeat_at` while it works, so a sweep can
tell work whose worker died (its lease expired) from work still under way (issue 27)."""

import threading
from contextlib import contextmanager
from datetime import datetime, timedelta

from django.conf import settings
from django.db import connections
from django.db.models import Q
from django.utils import timezone


def lease_s() -> float:
    """How long a heartbeat holds work for its worker (DOCKET_RUN_LEASE_S)."""
    return float(settings.DOCKET_RUN_LEASE_S)


def lease_expired_before(now: datetime | None = None) -> datetime:
    """Work whose last heartbeat is older than this has lost its worker."""
    return (now or timezone.now()) - timedelta(seconds=lease_s())


def lease_lost(expired: datetime, *, since: str) -> Q:
    """Work whose lease expired before `expired`; work that never beat (begun before leases
    existed, or whose worker died before its first beat) counts from its `since` field."""
    return Q(heartbeat_at__lt=expired) | Q(heartbeat_at__isnull=True, **{f"{since}__lt": expired})


@contextmanager
def heartbeat(queryset):
    """Renew `queryset`'s heartbeat_at every third of the lease while the block runs (in a thread:
    a judge or agent call that takes minutes still holds its lease). A short block never writes."""
    stop = threading.Event()

    def beat():
        try:
            while not stop.wait(lease_s() / 3):
                queryset.update(heartbeat_at=timezone.now())
        finally:
            connections.close_all()

    thread = threading.Thread(target=beat, name="heartbeat", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(5)
