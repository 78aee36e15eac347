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


def empty_while_filled(table: str, source: str, *, connection) -> bool:
    """Whether the precomputed `table` holds no row while `source`, what it counts, has some
    (rows made before the table): the cue to rebuild it after migrate."""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT EXISTS (SELECT 1 FROM {table})")
        if cursor.fetchone()[0]:
            return False
        cursor.execute(f"SELECT EXISTS (SELECT 1 FROM {source})")
        return bool(cursor.fetchone()[0])


def rows_differing(fresh: str, stored: str, key: str, *, connection) -> set[tuple]:
    """The `key` columns of rows in one of the SELECTs `fresh` (a full recount) and `stored` (the
    precomputed rows, the same columns) and not the other: empty when they agree."""
    differ: set[tuple] = set()
    with connection.cursor() as cursor:
        for a, b in ((fresh, stored), (stored, fresh)):
            cursor.execute(
                f"SELECT {key} FROM (SELECT * FROM ({a}) a EXCEPT SELECT * FROM ({b}) b) d"
            )
            differ.update(cursor.fetchall())
    return differ


def statement_trigger(table: str, event: str, name: str, function: str, body: str) -> list[str]:
    """Return the statements (re)creating PostgreSQL trigger `name` and its `function`: after each
    `event` statement on `table`, run the SQL `body` over the statement's rows (transition tables
    new_rows for INSERT and UPDATE, old_rows for DELETE and UPDATE)."""
    tables = {"INSERT": "NEW TABLE AS new_rows", "DELETE": "OLD TABLE AS old_rows"}.get(
        event, "OLD TABLE AS old_rows NEW TABLE AS new_rows"
    )
    return [
        (
            f"CREATE OR REPLACE FUNCTION {function}() RETURNS trigger LANGUAGE plpgsql AS $body$\n"
            f"BEGIN\n{body};\nRETURN NULL;\nEND\n$body$"
        ),
        f"DROP TRIGGER IF EXISTS {name} ON {table}",
        (
            f"CREATE TRIGGER {name} AFTER {event} ON {table} REFERENCING {tables} "
            f"FOR EACH STATEMENT EXECUTE FUNCTION {function}()"
        ),
    ]
