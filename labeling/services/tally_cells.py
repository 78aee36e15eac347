"""Tally cells: calibration's counts per rule version, judge, cell, agreement pair and outside
flag, summed from the verdict tally ahead of the page. The calibration table and API read these
few rows (about 1,500 at 50,000 calls) instead of every marked verdict's tally row, so they cost
the same however many verdicts were marked.

Database triggers on the tally keep them current in the same transaction as the write that
changed it (the tally is itself kept by triggers on marks, settlements and sample items, so
whoever writes those keeps these). On PostgreSQL they are statement triggers with transition
tables (one grouped insert per statement); on SQLite, row triggers.

As with the decision cells (evals.decisions.services.cells), the rows are deltas: a trigger only
appends (+1 and the weight for a tally row that arrives, -1 and minus the weight for one that
leaves), so two reviewers marking verdicts of the same rule version never wait on each other's
row, and a marks import holds no row a reviewer needs. The mark and settlement services fold the
rule versions they touched once they commit (`tally_cells_compact_on_commit`); the marks import
and the tally's rebuild fold them all. Folding deletes only committed rows it sees and writes
their sums back in the same transaction, so it is exact while others append. A cell whose count
sums to 0 is dropped (its weight sums are then rounding left over from adding and taking away).

`verdict_tally_rebuild` recomputes these with the tally, and its `--check` compares both with a
full recount.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.db import connection as default_connection
from django.db import transaction

from core.sql import empty_while_filled, rows_differing, sqlite_row_trigger, triggers_install
from labeling.models import TallyCell, VerdictTally

CELLS = TallyCell._meta.db_table
TALLY = VerdictTally._meta.db_table
KEY = "rule_version_id, judge_id, cell, pair, outside"
COLUMNS = f"{KEY}, n, w, w2"


def _grouped(rows: str, sign: str) -> str:
    """SELECT of cell deltas (sign '' or '-') for the tally rows `rows`."""
    return (
        f"SELECT {KEY}, {sign}count(*) AS n, {sign}sum(weight) AS w, "
        f"{sign}sum(weight * weight) AS w2 FROM {rows} GROUP BY {KEY}"
    )


def cells_select_sql() -> str:
    """SELECT of every cell from the tally: the full recount."""
    return _grouped(TALLY, "")


def _postgres_sql() -> list[str]:
    def fn(name: str, select: str) -> str:
        return (
            f"CREATE OR REPLACE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql AS $body$\n"
            f"BEGIN\nINSERT INTO {CELLS} ({COLUMNS}) {select};\nRETURN NULL;\nEND\n$body$"
        )

    updated = (
        f"SELECT {KEY}, sum(n), sum(w), sum(w2) FROM ("
        f"{_grouped('new_rows', '')} UNION ALL {_grouped('old_rows', '-')}"
        f") u GROUP BY {KEY} HAVING sum(n) <> 0 OR sum(w) <> 0 OR sum(w2) <> 0"
    )
    out = [
        fn("docket_tally_cells_on_ins", _grouped("new_rows", "") + f" ORDER BY {KEY}"),
        fn("docket_tally_cells_on_del", _grouped("old_rows", "-") + f" ORDER BY {KEY}"),
        fn("docket_tally_cells_on_upd", updated + f" ORDER BY {KEY}"),
    ]
    for event, name, func in (
        ("INSERT", "docket_tally_cells_ins", "docket_tally_cells_on_ins"),
        ("DELETE", "docket_tally_cells_del", "docket_tally_cells_on_del"),
        ("UPDATE", "docket_tally_cells_upd", "docket_tally_cells_on_upd"),
    ):
        tables = {"INSERT": "NEW TABLE AS new_rows", "DELETE": "OLD TABLE AS old_rows"}.get(
            event, "OLD TABLE AS old_rows NEW TABLE AS new_rows"
        )
        out += [
            f"DROP TRIGGER IF EXISTS {name} ON {TALLY}",
            (
                f"CREATE TRIGGER {name} AFTER {event} ON {TALLY} REFERENCING {tables} "
                f"FOR EACH STATEMENT EXECUTE FUNCTION {func}()"
            ),
        ]
    return out


def _sqlite_sql() -> list[str]:
    def one(row: str, sign: str) -> str:
        return (
            f"INSERT INTO {CELLS} ({COLUMNS}) VALUES ({row}.rule_version_id, {row}.judge_id, "
            f"{row}.cell, {row}.pair, {row}.outside, {sign}1, {sign}{row}.weight, "
            f"{sign}{row}.weight * {row}.weight)"
        )

    triggers = [
        ("docket_tally_cells_ins", "INSERT", [one("NEW", "")]),
        ("docket_tally_cells_del", "DELETE", [one("OLD", "-")]),
        ("docket_tally_cells_upd", "UPDATE", [one("OLD", "-"), one("NEW", "")]),
    ]
    return [
        sql
        for name, event, body in triggers
        for sql in sqlite_row_trigger(name, TALLY, event, "", body)
    ]


def tally_cells_triggers_install(*, connection=None) -> bool:
    """(Re)create the cells' triggers (idempotent); return False when the tables are not there."""
    return triggers_install(
        connection or default_connection,
        what="tally cells",
        tables=(TALLY, CELLS),
        postgres=_postgres_sql,
        sqlite=_sqlite_sql,
    )


def tally_cells_rebuild_sql() -> list[str]:
    """Statements recomputing every cell from the tally (inside the tally's rebuild)."""
    return [f"DELETE FROM {CELLS}", f"INSERT INTO {CELLS} ({COLUMNS}) {cells_select_sql()}"]


def tally_cells_rebuild_if_empty(*, connection=None) -> bool:
    """Count the cells of a database whose tally came before them; return whether it did."""
    connection = connection or default_connection
    if not empty_while_filled(CELLS, TALLY, connection=connection):
        return False
    with transaction.atomic(using=connection.alias), connection.cursor() as cursor:
        for sql in tally_cells_rebuild_sql():
            cursor.execute(sql)
    return True


def tally_cells_differences(*, connection=None) -> int:
    """Return how many cells differ from a full recount of the tally (0 when all agree); the
    weight sums are compared to 6 decimals (added in another order, they may differ in the last
    bits)."""

    def rounded(select: str) -> str:
        return (
            f"SELECT {KEY}, n, ROUND(CAST(w AS NUMERIC), 6), ROUND(CAST(w2 AS NUMERIC), 6) "
            f"FROM ({select}) x"
        )

    fresh = cells_select_sql()
    stored = f"SELECT {KEY}, sum(n) AS n, sum(w) AS w, sum(w2) AS w2 FROM {CELLS} GROUP BY {KEY} "
    stored += "HAVING sum(n) <> 0"
    differ = rows_differing(
        rounded(fresh), rounded(stored), KEY, connection=connection or default_connection
    )
    return len(differ)


def tally_cells_compact(rule_version_ids: Iterable[int] | None = None, *, connection=None) -> int:
    """Fold the cells' delta rows (of these rule versions; every one when None) into one row per
    cell, dropping cells that count 0; return the rows written."""
    connection = connection or default_connection
    where, params = "", []
    if rule_version_ids is not None:
        ids = sorted(set(rule_version_ids))
        if not ids:
            return 0
        where = f"WHERE rule_version_id IN ({', '.join(['%s'] * len(ids))})"
        params = ids
    fold = f"SELECT {KEY}, sum(n), sum(w), sum(w2) FROM gone GROUP BY {KEY} HAVING sum(n) <> 0"
    with transaction.atomic(using=connection.alias), connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(
                f"WITH gone AS (DELETE FROM {CELLS} {where} RETURNING {COLUMNS}) "
                f"INSERT INTO {CELLS} ({COLUMNS}) {fold}",
                params,
            )
            return cursor.rowcount
        # SQLite: one writer at a time: sum, clear, write back
        cursor.execute(
            f"SELECT {KEY}, sum(n), sum(w), sum(w2) FROM {CELLS} {where} GROUP BY {KEY} "
            "HAVING sum(n) <> 0",
            params,
        )
        rows = cursor.fetchall()
        cursor.execute(f"DELETE FROM {CELLS} {where}", params)
        cursor.executemany(
            f"INSERT INTO {CELLS} ({COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)", rows
        )
        return len(rows)


def tally_cells_compact_on_commit(*, verdict_ids: Iterable[int] | None = None) -> None:
    """Fold the cells of these verdicts' rule versions (every cell when None) once the current
    transaction commits."""
    ids = None if verdict_ids is None else sorted(set(verdict_ids))

    def fold():
        if ids is None:
            tally_cells_compact()
            return
        from evals.judging.models import Verdict

        versions = set()
        for part in range(0, len(ids), 5000):
            versions.update(
                Verdict.objects.filter(pk__in=ids[part : part + 5000])
                .values_list("rule_version_id", flat=True)
                .distinct()
            )
        tally_cells_compact(versions)

    transaction.on_commit(fold)
