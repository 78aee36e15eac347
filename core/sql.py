"""Running hand-written SQL: the triggers the apps install after every migrate."""

from collections.abc import Callable

from django.db import OperationalError, transaction


def statements_execute(statements: list[str], *, connection) -> None:
    """Execute the statements in order on the connection, all or none."""
    with transaction.atomic(using=connection.alias), connection.cursor() as cursor:
        for sql in statements:
            cursor.execute(sql)


def triggers_install(
    connection,
    *,
    what: str,
    tables,
    postgres: Callable[[], list[str]],
    sqlite: Callable[[], list[str]],
) -> bool:
    """(Re)create the triggers of `what` (idempotent) from the statements for the connection's
    vendor; return False when one of `tables` is not there yet."""
    if connection.vendor not in ("postgresql", "sqlite"):
        raise NotImplementedError(f"{what} triggers: no support for {connection.vendor}")
    if not set(tables) <= set(connection.introspection.table_names()):
        return False
    statements_execute(
        postgres() if connection.vendor == "postgresql" else sqlite(), connection=connection
    )
    return True


def tables_empty(cursor, tables) -> None:
    """Empty the tables inside the current transaction: TRUNCATE on PostgreSQL (DELETE when
    deferred constraint checks are pending in it), DELETE elsewhere."""
    if cursor.db.vendor == "postgresql":
        try:
            with transaction.atomic(using=cursor.db.alias):
                cursor.execute(f"TRUNCATE {', '.join(tables)}")
            return
        except OperationalError:  # deferred constraint checks pending in this transaction
            pass
    for table in tables:
        cursor.execute(f"DELETE FROM {table}")


def sqlite_row_trigger(
    name: str, table: str, event: str, when: str, statements: list[str]
) -> list[str]:
    """Return the statements (re)creating SQLite trigger `name`: after `event` on `table`, for
    each row (passing `when`, if given), run `statements` in order."""
    when_sql = f" WHEN {when}" if when else ""
    body = ";\n".join(statements)
    return [
        f"DROP TRIGGER IF EXISTS {name}",
        (
            f"CREATE TRIGGER {name} AFTER {event} ON {table} FOR EACH ROW{when_sql}\n"
            f"BEGIN\n{body};\nEND"
        ),
    ]


def aggregate_tune(cursor, *, work_mem_mb: int | None = None) -> None:
    """For a big aggregate in this transaction, on PostgreSQL: JIT off (compiling it costs more
    than it saves) and, if given, `work_mem_mb` of memory per sort or hash (groups that spill to
    disk sort there instead of hashing in memory). Nothing elsewhere."""
    if cursor.db.vendor == "postgresql":
        cursor.execute("SET LOCAL jit = off")
        if work_mem_mb:
            cursor.execute(f"SET LOCAL work_mem = '{int(work_mem_mb)}MB'")
