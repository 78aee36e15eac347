"""Running hand-written SQL: the triggers the apps install after every migrate."""

from django.db import transaction


def statements_execute(statements: list[str], *, connection) -> None:
    """Execute the statements in order on the connection, all or none."""
    with transaction.atomic(using=connection.alias), connection.cursor() as cursor:
        for sql in statements:
            cursor.execute(sql)
