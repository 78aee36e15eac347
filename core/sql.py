"""Running hand-written SQL: the triggers the apps install after every migrate."""

from django.db import transaction


def statements_execute(statements: list[str], *, connection) -> None:
    """Execute the statements in order on the connection, all or none."""
    with transaction.atomic(using=connection.alias), connection.cursor() as cursor:
        for sql in statements:
            cursor.execute(sql)


def aggregate_tune(cursor, *, work_mem_mb: int | None = None) -> None:
    """For a big aggregate in this transaction, on PostgreSQL: JIT off (compiling it costs more
    than it saves) and, if given, `work_mem_mb` of memory per sort or hash (groups that spill to
    disk sort there instead of hashing in memory). Nothing elsewhere."""
    if cursor.db.vendor == "postgresql":
        cursor.execute("SET LOCAL jit = off")
        if work_mem_mb:
            cursor.execute(f"SET LOCAL work_mem = '{int(work_mem_mb)}MB'")
