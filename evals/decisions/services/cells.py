"""Decision cells: how many decisions share a kind version, agent version, choice, reviewers'
answer and gap bin. The decision accuracy page and API read these few rows instead of every
decision, so they cost the same at any number of calls.

Database triggers keep the counts current in the same transaction as the write that changed
them, whoever wrote it: the transcript importer's COPY of decisions and its deletes of rewritten
ones, a label's truth update (`decision_label_set`, `decision_labels_bulk`), a call deleted or
moved to another agent version by a replace import, the admin, a test's `objects.create`. On
PostgreSQL they are statement triggers with transition tables (one grouped insert per statement,
so a COPY of a million decisions adds one aggregate); on SQLite, row triggers.

The rows are deltas: a trigger only appends (+n for decisions that arrive in a cell, -n for those
that leave it) and a cell's count is the sum of its rows. Appending takes no lock on a row another
transaction wrote, so a reviewer's label never waits for an import of the same agent version that
is still running (an import is one transaction); counting into one row per cell would. The
writers that make most rows (the importer, the label services) fold them after their commit
(`decision_cells_compact`: one row per cell again); rows other writers leave are folded by the
next one. Folding deletes only committed rows it sees, so it is exact while others append.

The triggers are (re)installed after every `migrate` (evals.decisions.apps).
`decision_cells_rebuild` recomputes every row (a repair tool); `--check` counts the cells that
differ from a full recount.
"""

from __future__ import annotations

import logging

from django.db import connection as default_connection
from django.db import transaction

from core.sql import (
    deltas_fold,
    empty_while_filled,
    on_commit_once,
    plpgsql_trigger_function,
    postgres_statement_trigger,
    rows_differing,
    sqlite_row_trigger,
    triggers_install,
)
from evals.decisions.models import DecisionCell

logger = logging.getLogger(__name__)

CELLS = DecisionCell._meta.db_table
KEY = "kind_version_id, agent_version_id, choice, truth, gap_bin"
COLUMNS = f"{KEY}, n"
TRIGGER_TABLES = ("evals_decision", "evals_transcript", CELLS)

# Gap histogram bins (ms): below 0 is an overlap, then every 200 ms to 1.6 s, then longer.
GAP_EDGES = [0, 200, 400, 600, 800, 1000, 1200, 1400, 1600, 2000, 3000]


def gap_bin_sql(column: str) -> str:
    """SQL for the gap's bin: how many of GAP_EDGES it is at or above (metrics.histogram's bin);
    -1 when there is no gap."""
    whens = " ".join(f"WHEN {column} < {edge} THEN {i}" for i, edge in enumerate(GAP_EDGES))
    return f"CASE WHEN {column} IS NULL THEN -1 {whens} ELSE {len(GAP_EDGES)} END"


def _upsert(select: str) -> str:
    return f"INSERT INTO {CELLS} ({COLUMNS}) {select}"


def _grouped(rows: str, sign: str, agent: str = "t.agent_version_id") -> str:
    """SELECT of cell deltas (sign: '' or '-') for decisions `rows` (alias d) joined to their
    call (alias t)."""
    return (
        f"SELECT d.kind_version_id, {agent} AS agent_version_id, d.choice, d.truth, "
        f"{gap_bin_sql('d.gap_ms')} AS gap_bin, {sign}count(*) AS n FROM {rows} "
        "JOIN evals_transcript t ON t.id = d.transcript_id WHERE true GROUP BY 1, 2, 3, 4, 5"
    )


def cells_select_sql() -> str:
    """SELECT of every cell from the decisions: the full recount."""
    return _grouped("evals_decision d", "")


def _postgres_sql() -> list[str]:
    changed = (
        "(SELECT o.id, o.agent_version_id AS old_av, n.agent_version_id AS new_av "
        "FROM old_rows o JOIN new_rows n ON n.id = o.id "
        "WHERE o.agent_version_id <> n.agent_version_id) m"
    )
    moved = (
        "SELECT k, a, c, tr, b, sum(n) FROM ("
        f"SELECT d.kind_version_id k, m.new_av a, d.choice c, d.truth tr, "
        f"{gap_bin_sql('d.gap_ms')} b, 1 n FROM {changed} "
        "JOIN evals_decision d ON d.transcript_id = m.id "
        "UNION ALL "
        f"SELECT d.kind_version_id, m.old_av, d.choice, d.truth, {gap_bin_sql('d.gap_ms')}, -1 "
        f"FROM {changed} JOIN evals_decision d ON d.transcript_id = m.id"
        ") x WHERE true GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5"
    )
    updated = (
        f"SELECT {KEY}, sum(n) FROM ("
        f"SELECT d.kind_version_id, t.agent_version_id, d.choice, d.truth, "
        f"{gap_bin_sql('d.gap_ms')} AS gap_bin, 1 AS n FROM new_rows d "
        "JOIN evals_transcript t ON t.id = d.transcript_id UNION ALL "
        f"SELECT d.kind_version_id, t.agent_version_id, d.choice, d.truth, "
        f"{gap_bin_sql('d.gap_ms')}, -1 FROM old_rows d "
        "JOIN evals_transcript t ON t.id = d.transcript_id"
        ") u WHERE true GROUP BY 1, 2, 3, 4, 5 HAVING sum(n) <> 0 ORDER BY 1, 2, 3, 4, 5"
    )
    out = [
        plpgsql_trigger_function(
            "docket_cells_on_decision_ins",
            _upsert(_grouped("new_rows d", "") + " ORDER BY 1, 2, 3, 4, 5"),
        ),
        plpgsql_trigger_function(
            "docket_cells_on_decision_del",
            _upsert(_grouped("old_rows d", "-") + " ORDER BY 1, 2, 3, 4, 5"),
        ),
        plpgsql_trigger_function("docket_cells_on_decision_upd", _upsert(updated)),
        plpgsql_trigger_function("docket_cells_on_transcript_upd", _upsert(moved)),
    ]
    for table, event, name, func in (
        ("evals_decision", "INSERT", "docket_cells_ins", "docket_cells_on_decision_ins"),
        ("evals_decision", "DELETE", "docket_cells_del", "docket_cells_on_decision_del"),
        ("evals_decision", "UPDATE", "docket_cells_upd", "docket_cells_on_decision_upd"),
        ("evals_transcript", "UPDATE", "docket_cells_upd", "docket_cells_on_transcript_upd"),
    ):
        out += postgres_statement_trigger(name, table, event, func)
    return out


def _sqlite_sql() -> list[str]:
    def one(row: str, sign: str) -> str:
        return _upsert(
            f"SELECT {row}.kind_version_id, t.agent_version_id, {row}.choice, {row}.truth, "
            f"{gap_bin_sql(f'{row}.gap_ms')}, {sign}1 FROM evals_transcript t "
            f"WHERE t.id = {row}.transcript_id"
        )

    def moved(agent: str, sign: str) -> str:
        return _upsert(
            f"SELECT d.kind_version_id, {agent}, d.choice, d.truth, {gap_bin_sql('d.gap_ms')}, "
            f"{sign}count(*) FROM evals_decision d WHERE d.transcript_id = NEW.id "
            "GROUP BY 1, 2, 3, 4, 5"
        )

    triggers = [
        ("docket_cells_ins", "INSERT", "evals_decision", "", [one("NEW", "")]),
        ("docket_cells_del", "DELETE", "evals_decision", "", [one("OLD", "-")]),
        (
            "docket_cells_upd",
            "UPDATE OF kind_version_id, transcript_id, choice, truth, gap_ms",
            "evals_decision",
            "",
            [one("OLD", "-"), one("NEW", "")],
        ),
        (
            "docket_cells_moved",
            "UPDATE OF agent_version_id",
            "evals_transcript",
            "OLD.agent_version_id IS NOT NEW.agent_version_id",
            [moved("OLD.agent_version_id", "-"), moved("NEW.agent_version_id", "")],
        ),
    ]
    return [
        sql
        for name, event, table, when, body in triggers
        for sql in sqlite_row_trigger(name, table, event, when, body)
    ]


def cells_triggers_install(*, connection=None) -> bool:
    """(Re)create the cells' triggers (idempotent); return False when the tables are not there."""
    return triggers_install(
        connection or default_connection,
        what="decision cells",
        tables=TRIGGER_TABLES,
        postgres=_postgres_sql,
        sqlite=_sqlite_sql,
    )


def decision_cells_rebuild(*, connection=None) -> int:
    """Recompute every cell from the decisions; return how many cells there are. Holds decisions
    and calls still while it runs (PostgreSQL: SHARE lock), so no write slips between."""
    connection = connection or default_connection
    with transaction.atomic(using=connection.alias), connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SET LOCAL jit = off")
            cursor.execute("LOCK TABLE evals_decision, evals_transcript IN SHARE MODE")
        cursor.execute(f"DELETE FROM {CELLS}")
        cursor.execute(f"INSERT INTO {CELLS} ({COLUMNS}) {cells_select_sql()}")
        n = cursor.rowcount
    logger.info("decision_cells_rebuilt", extra={"cells": n})
    return n


def decision_cells_rebuild_if_empty(*, connection=None) -> int | None:
    """Rebuild when no cell exists while decisions do (decisions made before the cells table);
    return the rebuilt count, or None when nothing was needed."""
    connection = connection or default_connection
    if not empty_while_filled(CELLS, "evals_decision", connection=connection):
        return None
    return decision_cells_rebuild(connection=connection)


def decision_cells_differences(*, connection=None) -> int:
    """Return how many cells differ from a full recount of the decisions (0 when all agree)."""
    stored = f"SELECT {KEY}, sum(n) FROM {CELLS} GROUP BY {KEY} HAVING sum(n) <> 0"
    differ = rows_differing(
        cells_select_sql(), stored, KEY, connection=connection or default_connection
    )
    return len(differ)


def decision_cells_compact(*, connection=None) -> int:
    """Fold the cells' delta rows into one row per cell (dropping cells that sum to 0); return
    the rows left. Exact while others append (core.sql.deltas_fold)."""
    return deltas_fold(CELLS, KEY, ("n",), connection=connection or default_connection)


def decision_cells_compact_on_commit(*, connection=None) -> None:
    """Fold the cells once the current transaction commits (once however often it is asked)."""
    on_commit_once(_compact_default, connection=connection or default_connection)


def _compact_default() -> None:
    decision_cells_compact()
