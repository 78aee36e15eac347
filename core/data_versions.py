"""Per-kind data versions: a figure cached over calls, verdicts, ratings, ... is keyed by the
versions of the kinds it reads, so it is invalidated by what changed and nothing else (importing
marks leaves the verdict counts cached; importing verdicts leaves the call filters' values).

An app registers its kinds (`data_kind_register("verdicts", "evals_verdict")`) in its
AppConfig.ready(); after every migrate a trigger on each table bumps its kind on any write,
whoever writes (a service, a COPY, the admin, a cascade, a test's factory), as the verdict tally's
triggers do. On PostgreSQL the version is a sequence bumped once per statement: nextval takes no
lock, so concurrent writers never wait on each other. A sequence moves before its transaction
commits, so a figure read meanwhile would be cached under the new version; the long writers (the
importers) call `data_changed` too, which bumps again once they commit. SQLite (one writer at a
time) keeps the versions as rows of core_dataversion, bumped per row.
"""

from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db import connection, transaction

from core.models import DataVersion
from core.sql import statements_execute

KINDS: dict[str, list[str]] = {}  # kind -> its tables


def data_kind_register(kind: str, table: str) -> None:
    """Say that writes to `table` change the data of `kind` (one kind may have many tables)."""
    tables = KINDS.setdefault(kind, [])
    if table not in tables:
        tables.append(table)


def _sequence(kind: str) -> str:
    return f"docket_data_version_{kind}"


def _bump(kinds: tuple[str, ...]) -> None:
    with connection.cursor() as cursor:
        for kind in kinds:
            if connection.vendor == "postgresql":
                cursor.execute("SELECT nextval(%s)", [_sequence(kind)])
            else:
                DataVersion.objects.get_or_create(name=kind)
                cursor.execute(
                    f"UPDATE {DataVersion._meta.db_table} SET version = version + 1 "
                    "WHERE name = %s",
                    [kind],
                )


def data_changed(*kinds: str) -> None:
    """Bump each kind once the current transaction commits (at once outside one)."""
    transaction.on_commit(lambda: _bump(kinds))


def data_versions(*kinds: str) -> str:
    """Return the versions of these kinds of data as one cache-key part ("calls3-verdicts7")."""
    if connection.vendor == "postgresql":
        # pg_sequences, not the sequences themselves: one not made yet reads as 0, not an error.
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT sequencename, COALESCE(last_value, 0) FROM pg_sequences "
                "WHERE schemaname = current_schema() AND sequencename = ANY(%s)",
                [[_sequence(k) for k in kinds]],
            )
            have = {name.removeprefix(_sequence("")): v for name, v in cursor.fetchall()}
    else:
        have = dict(DataVersion.objects.filter(name__in=kinds).values_list("name", "version"))
    return "-".join(f"{k}{have.get(k, 0)}" for k in kinds)


def figures_cached(
    name: str, compute: Callable[[], Any], *, reads: tuple[str, ...] = ("calls", "verdicts")
) -> Any:
    """Return compute(), reused for up to DOCKET_FIGURES_CACHE_SECONDS while the kinds of data
    it reads (core.data_versions) are unchanged: writing marks or ratings leaves verdict figures
    cached, writing verdicts leaves the call filters' values.

    Aggregates over every verdict cost a full scan (about 0.6 s at 2.5 million verdicts). 0 turns
    the cache off (the default under tests).
    """
    ttl = getattr(
        settings, "DOCKET_FIGURES_CACHE_SECONDS", 0 if getattr(settings, "TESTING", False) else 60
    )
    if not ttl:
        return compute()
    key = f"docket:figures:{name}:{data_versions(*reads)}"
    value = cache.get(key)
    if value is None:
        value = compute()
        cache.set(key, value, ttl)
    return value


def _postgres_sql() -> list[str]:
    out = [
        """CREATE OR REPLACE FUNCTION docket_data_version_bump() RETURNS trigger
LANGUAGE plpgsql AS $body$
BEGIN
    PERFORM nextval('docket_data_version_' || TG_ARGV[0]);
    RETURN NULL;
END
$body$"""
    ]
    for kind, tables in KINDS.items():
        out.append(f"CREATE SEQUENCE IF NOT EXISTS {_sequence(kind)}")
        for table in tables:
            out += [
                f"DROP TRIGGER IF EXISTS docket_data_version ON {table}",
                (
                    "CREATE TRIGGER docket_data_version AFTER INSERT OR UPDATE OR DELETE OR "
                    f"TRUNCATE ON {table} FOR EACH STATEMENT "
                    f"EXECUTE FUNCTION docket_data_version_bump('{kind}')"
                ),
            ]
    return out


def _sqlite_sql() -> list[str]:
    table = DataVersion._meta.db_table
    out = []
    for kind, tables in KINDS.items():
        out.append(f"INSERT OR IGNORE INTO {table} (name, version) VALUES ('{kind}', 0)")
        for t in tables:
            for event in ("INSERT", "UPDATE", "DELETE"):
                name = f"docket_data_version_{t}_{event.lower()}"
                out += [
                    f"DROP TRIGGER IF EXISTS {name}",
                    (
                        f"CREATE TRIGGER {name} AFTER {event} ON {t} FOR EACH ROW BEGIN "
                        f"UPDATE {table} SET version = version + 1 WHERE name = '{kind}'; END"
                    ),
                ]
    return out


def data_version_triggers_install(*, using=None) -> bool:
    """(Re)create the triggers of every registered table (idempotent); False when a table (or
    core_dataversion) is not there yet."""
    from django.db import connections

    conn = connections[using or "default"]
    if conn.vendor not in ("postgresql", "sqlite"):
        return False
    needed = {DataVersion._meta.db_table, *(t for ts in KINDS.values() for t in ts)}
    if not needed <= set(conn.introspection.table_names()):
        return False
    statements_execute(
        _postgres_sql() if conn.vendor == "postgresql" else _sqlite_sql(), connection=conn
    )
    return True
