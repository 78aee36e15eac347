"""Tables of counts kept as delta rows (the decision cells, the verdict counts): database triggers
only append rows (+n for what arrives under a key, -n for what leaves it) and a key's count is the
sum of its rows. Appending takes no lock on a row another transaction wrote, so concurrent writers
(judge workers, imports, reviewers) never wait for each other there; counting into one row per key
would. The writers that make most rows fold them after their commit (`DeltaTable.fold_on_commit`);
rows other writers leave are folded by the next fold. Folding deletes only committed rows it sees,
so it is exact while others append.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from django.db import connection as default_connection
from django.db import connections, transaction

from core.sql import empty_while_filled, rows_differing, triggers_install

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class DeltaTable:
    what: str  # "verdict counts": its name in logs
    table: str
    key: str  # the columns a count is kept per: "rule_version_id, judge_id, agent_version_id"
    sums: str  # the columns summed: "n" or "n, flagged, errored"
    source: str  # the table counted: a database with its rows and no counts is rebuilt
    locks: str  # the tables a rebuild holds still
    recount: Callable[[], str]  # SELECT of every count from the source: the full recount
    trigger_tables: tuple[str, ...]
    postgres: Callable[[], list[str]]  # the statements (re)creating the triggers
    sqlite: Callable[[], list[str]]
    # When a key still counts (a HAVING condition); by default while some sum is not 0. Sums of
    # floats added and taken away leave rounding behind, so their tables say "sum(n) <> 0".
    live: str = ""
    inexact: str = ""  # float sums ("w, w2"): `differences` compares them to 6 decimals
    fold_default: Callable[[], int] = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        # One callable per table, so a transaction asks for its fold once (fold_on_commit).
        object.__setattr__(self, "fold_default", functools.partial(self.fold))

    @property
    def _summed(self) -> str:
        return ", ".join(f"sum({c})" for c in self.sums.split(", "))

    @property
    def _nonzero(self) -> str:
        return self.live or " OR ".join(f"sum({c}) <> 0" for c in self.sums.split(", "))

    def triggers_install(self, *, connection=None) -> bool:
        """(Re)create the triggers (idempotent); return False when the tables are not there."""
        return triggers_install(
            connection or default_connection,
            what=self.what,
            tables=self.trigger_tables,
            postgres=self.postgres,
            sqlite=self.sqlite,
        )

    def rebuild(self, *, connection=None) -> int:
        """Replace every row with the full recount; return the rows written. Holds the tables it
        counts still while it runs (PostgreSQL: SHARE lock), so no write slips between."""
        connection = connection or default_connection
        columns = f"{self.key}, {self.sums}"
        with transaction.atomic(using=connection.alias), connection.cursor() as cursor:
            if connection.vendor == "postgresql":
                cursor.execute("SET LOCAL jit = off")
                cursor.execute(f"LOCK TABLE {self.locks} IN SHARE MODE")
            cursor.execute(f"DELETE FROM {self.table}")
            cursor.execute(f"INSERT INTO {self.table} ({columns}) {self.recount()}")
            n = cursor.rowcount
        logger.info(f"{self.what.replace(' ', '_')}_rebuilt", extra={"rows": n})
        return n

    def rebuild_if_empty(self, *, connection=None) -> int | None:
        """Rebuild when no row exists while the source has some (rows made before the table);
        return the rows written, or None when nothing was needed."""
        connection = connection or default_connection
        if not empty_while_filled(self.table, self.source, connection=connection):
            return None
        return self.rebuild(connection=connection)

    def after_migrate(self, sender, using, **kwargs) -> None:
        """post_migrate receiver: put the triggers back (SQLite drops them when it rebuilds a
        table) and count a source whose rows came before them."""
        connection = connections[using]
        if connection.vendor in ("postgresql", "sqlite") and self.triggers_install(
            connection=connection
        ):
            self.rebuild_if_empty(connection=connection)

    def differences(self, *, connection=None) -> int:
        """Return how many keys' sums differ from the full recount (0 when all agree)."""
        sums = self.sums.split(", ")
        stored = (
            f"SELECT {self.key}, {', '.join(f'sum({c}) AS {c}' for c in sums)} "
            f"FROM {self.table} GROUP BY {self.key} HAVING {self._nonzero}"
        )
        fresh = self.recount()
        if self.inexact:
            inexact = self.inexact.split(", ")
            columns = ", ".join(
                f"ROUND(CAST({c} AS NUMERIC), 6)" if c in inexact else c for c in sums
            )
            fresh, stored = (f"SELECT {self.key}, {columns} FROM ({q}) x" for q in (fresh, stored))
        connection = connection or default_connection
        return len(rows_differing(fresh, stored, self.key, connection=connection))

    def fold(self, *, connection=None) -> int:
        """Fold the delta rows of every key that has more than one into one row (dropping keys
        whose sums are all 0); return the rows written. Exact while others append: it deletes
        only the committed rows it sees and writes their sums back in the same transaction."""
        connection = connection or default_connection
        key, table, columns = self.key, self.table, f"{self.key}, {self.sums}"
        with transaction.atomic(using=connection.alias), connection.cursor() as cursor:
            if connection.vendor == "postgresql":
                repeated = f"SELECT {key} FROM {table} GROUP BY {key} HAVING count(*) > 1"
                cursor.execute(
                    f"WITH gone AS (DELETE FROM {table} WHERE ({key}) IN ({repeated}) "
                    f"RETURNING {columns}) INSERT INTO {table} ({columns}) "
                    f"SELECT {key}, {self._summed} FROM gone GROUP BY {key} "
                    f"HAVING {self._nonzero}"
                )
                return cursor.rowcount
            # One writer at a time: sum, clear, write back.
            cursor.execute(
                f"SELECT {key}, {self._summed} FROM {table} GROUP BY {key} HAVING {self._nonzero}"
            )
            rows = cursor.fetchall()
            cursor.execute(f"DELETE FROM {table}")
            marks = ", ".join(["%s"] * len(columns.split(", ")))
            cursor.executemany(f"INSERT INTO {table} ({columns}) VALUES ({marks})", rows)
            return len(rows)

    def fold_on_commit(self, *, connection=None) -> None:
        """Fold once the current transaction commits (once however often it is asked), or now
        outside a transaction."""
        connection = connection or default_connection
        if not connection.in_atomic_block:
            self.fold(connection=connection)
        elif not any(f is self.fold_default for _, f, _ in connection.run_on_commit):
            transaction.on_commit(self.fold_default, using=connection.alias)
