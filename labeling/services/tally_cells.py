"""Tally cells: calibration's counts per rule version, judge, cell, agreement pair and outside
flag, summed from the verdict tally ahead of the page. The calibration table and API read these
few rows (about 1,500 at 50,000 calls) instead of every marked verdict's tally row, so they cost
the same however many verdicts were marked.

Database triggers on the tally keep them current in the same transaction as the write that
changed it (the tally is itself kept by triggers on marks, settlements and sample items, so
whoever writes those keeps these). On PostgreSQL they are statement triggers with transition
tables (one grouped insert per statement); on SQLite, row triggers.

The rows are deltas (core.deltas): a trigger only appends (+1 and the weight for a tally row that
arrives, -1 and minus the weight for one that leaves), so two reviewers marking verdicts of the
same rule version never wait on each other's row, and a marks import holds no row a reviewer
needs. The mark and settlement services fold them once they commit
(`tally_cells_compact_on_commit`: only the cells with more than one row). A cell whose count sums
to 0 is dropped (its weight sums are then rounding left over from adding and taking away), and
`--check` compares the weight sums to 6 decimals.

`verdict_tally_rebuild` recomputes these with the tally, and its `--check` compares both with a
full recount.
"""

from __future__ import annotations

from core.deltas import DeltaTable
from core.sql import sqlite_row_trigger, statement_trigger
from labeling.models import TallyCell, VerdictTally

CELLS = TallyCell._meta.db_table
TALLY = VerdictTally._meta.db_table
KEY = "rule_version_id, judge_id, cell, pair, outside"
SUMS = "n, w, w2"
COLUMNS = f"{KEY}, {SUMS}"


def _insert(select: str) -> str:
    return f"INSERT INTO {CELLS} ({COLUMNS}) {select}"


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
    updated = (
        f"SELECT {KEY}, sum(n), sum(w), sum(w2) FROM ("
        f"{_grouped('new_rows', '')} UNION ALL {_grouped('old_rows', '-')}"
        f") u GROUP BY {KEY} HAVING sum(n) <> 0 OR sum(w) <> 0 OR sum(w2) <> 0"
    )
    return [
        sql
        for event, name, body in (
            ("INSERT", "ins", _insert(_grouped("new_rows", ""))),
            ("DELETE", "del", _insert(_grouped("old_rows", "-"))),
            ("UPDATE", "upd", _insert(updated)),
        )
        for sql in statement_trigger(
            TALLY, event, f"docket_tally_cells_{name}", f"docket_tally_cells_on_{name}", body
        )
    ]


def _sqlite_sql() -> list[str]:
    def one(row: str, sign: str) -> str:
        return _insert(
            f"VALUES ({row}.rule_version_id, {row}.judge_id, {row}.cell, {row}.pair, "
            f"{row}.outside, {sign}1, {sign}{row}.weight, {sign}{row}.weight * {row}.weight)"
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


TALLY_CELLS = DeltaTable(
    what="tally cells",
    table=CELLS,
    key=KEY,
    sums=SUMS,
    source=TALLY,
    locks="labeling_mark, labeling_settlement",
    recount=cells_select_sql,
    trigger_tables=(TALLY, CELLS),
    postgres=_postgres_sql,
    sqlite=_sqlite_sql,
    live="sum(n) <> 0",
    inexact="w, w2",
)
tally_cells_triggers_install = TALLY_CELLS.triggers_install
tally_cells_differences = TALLY_CELLS.differences
tally_cells_compact = TALLY_CELLS.fold
tally_cells_compact_on_commit = TALLY_CELLS.fold_on_commit
